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
    /// 75 (sysexits' EX_TEMPFAIL): not yet — checks are still running; ask again later. Never
    /// a go, never a block, never an escalation.
    TryLater,
    /// 64: the command line was wrong.
    Usage,
    /// 65: the input data was wrong (bad evidence).
    DataErr,
    /// 69: the server is unreachable, answered 5xx, or answered something unexpected.
    Unavailable,
    /// 70: a bug in patchgate.
    Software,
    /// 128 + the signal: stopped by Ctrl-C (SIGINT, 130), SIGTERM (143) or SIGHUP (129)
    /// after ending every process it started; no decision was made.
    Interrupted(u8),
}

/// The decisions and their HTTP twins, one table read both ways: only a go is 2xx. `PENDING`
/// (`/route/checks` while a check still runs) is 425 Too Early and 75.
const DECISIONS: [(Exit, u16); 5] = [
    (Exit::Go, 200),
    (Exit::PatchWrong, 409),
    (Exit::HumanMustLook, 424),
    (Exit::QueueStopped, 423),
    (Exit::TryLater, 425),
];

impl Exit {
    /// The HTTP status a decision is answered with (`None`: not a decision).
    pub fn http_status(self) -> Option<u16> {
        DECISIONS
            .iter()
            .find(|(exit, _)| *exit == self)
            .map(|(_, status)| *status)
    }

    /// The decision an HTTP status stands for, when it stands for one.
    pub fn from_http_status(status: u16) -> Option<Exit> {
        DECISIONS
            .iter()
            .find(|(_, s)| *s == status)
            .map(|(exit, _)| *exit)
    }

    pub fn code(self) -> u8 {
        match self {
            Exit::Go => 0,
            Exit::PatchWrong => 1,
            Exit::HumanMustLook => 2,
            Exit::QueueStopped => 3,
            Exit::TryLater => 75,
            Exit::Usage => 64,
            Exit::DataErr => 65,
            Exit::Unavailable => 69,
            Exit::Software => 70,
            Exit::Interrupted(signal) => 128u8.saturating_add(signal),
        }
    }

    /// The decision exit codes, 0..=3 and 75; anything else is not a decision.
    pub fn from_decision(code: u8) -> Option<Exit> {
        DECISIONS
            .iter()
            .map(|(exit, _)| *exit)
            .find(|exit| exit.code() == code)
    }
}

impl Termination for Exit {
    fn report(self) -> ExitCode {
        ExitCode::from(self.code())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// CONTRACT.md sections 0 and 9, by hand: 0 go 200, 1 the patch is wrong 409, 2 a human must
    /// look 424, 3 the queue is stopped 423, 75 not yet (PENDING) 425; nothing else is one.
    #[test]
    fn exit_codes_and_statuses_are_twins() {
        let table = [(0u8, 200u16), (1, 409), (2, 424), (3, 423), (75, 425)];
        for (code, status) in table {
            let exit = Exit::from_decision(code).unwrap_or(Exit::Software);
            assert_eq!(exit.code(), code);
            assert_eq!(exit.http_status(), Some(status));
            assert_eq!(Exit::from_http_status(status), Some(exit));
        }
        for code in [4u8, 64, 65, 69, 70, 255] {
            assert_eq!(Exit::from_decision(code), None, "{code}");
        }
        for status in [201u16, 204, 400, 401, 404, 422, 500, 503] {
            assert_eq!(Exit::from_http_status(status), None, "{status}");
        }
        for exit in [
            Exit::Usage,
            Exit::DataErr,
            Exit::Unavailable,
            Exit::Software,
        ] {
            assert_eq!(exit.http_status(), None);
        }
    }
}
