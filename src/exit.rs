//! The exit codes of the `patchgate` command: the decision's own (0–3) and the sysexits-style
//! ones for everything that is not a decision (64, 65, 69, 70). Nothing but a go is 0.

use std::process::{ExitCode, Termination};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    /// 0: the patch may go.
    Go,
    /// 1: the patch (or tree) is wrong.
    PatchWrong,
    /// 2: a human must look; never a soft pass.
    HumanMustLook,
    /// 3: the whole queue is stopped.
    QueueStopped,
    /// 64: the command line was wrong.
    Usage,
    /// 65: the input data was wrong (bad evidence).
    DataErr,
    /// 69: the server is unreachable, answered 5xx, or answered something unexpected.
    Unavailable,
    /// 70: a bug in patchgate.
    Software,
}

impl Exit {
    pub fn code(self) -> u8 {
        match self {
            Exit::Go => 0,
            Exit::PatchWrong => 1,
            Exit::HumanMustLook => 2,
            Exit::QueueStopped => 3,
            Exit::Usage => 64,
            Exit::DataErr => 65,
            Exit::Unavailable => 69,
            Exit::Software => 70,
        }
    }

    /// The decision exit codes, 0..=3; anything else is not a decision.
    pub fn from_decision(code: u8) -> Option<Exit> {
        match code {
            0 => Some(Exit::Go),
            1 => Some(Exit::PatchWrong),
            2 => Some(Exit::HumanMustLook),
            3 => Some(Exit::QueueStopped),
            _ => None,
        }
    }
}

impl Termination for Exit {
    fn report(self) -> ExitCode {
        ExitCode::from(self.code())
    }
}
