//! The one error type of the command line: what stops a command before (or instead of) its
//! decision, with the exit code it means and one line for stderr. It is printed in one place
//! ([`CliError::report`]); a command's `run` turns it into its exit code.

use crate::core::problem::Problem;
use crate::exit::Exit;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CliError {
    pub exit: Exit,
    pub message: String,
    /// The invalid fields, one line each, when the input was refused field by field.
    pub fields: Vec<String>,
}

impl CliError {
    pub fn new(exit: Exit, message: impl Into<String>) -> Self {
        Self {
            exit,
            message: message.into(),
            fields: Vec::new(),
        }
    }

    /// 65 for a problem document (from the core, or from a server): its detail, and each
    /// invalid field on its own line.
    pub fn problem(exit: Exit, message: impl Into<String>, problem: &Problem) -> Self {
        Self {
            fields: problem
                .errors
                .iter()
                .map(|e| {
                    let at = if e.pointer.is_empty() {
                        "(document)"
                    } else {
                        e.pointer.as_str()
                    };
                    format!("  {at}: {}", e.detail)
                })
                .collect(),
            ..Self::new(exit, message)
        }
    }

    /// 64: the command line was wrong.
    pub fn usage(message: impl Into<String>) -> Self {
        Self::new(Exit::Usage, message)
    }

    /// 65: the input data was wrong.
    pub fn data(message: impl Into<String>) -> Self {
        Self::new(Exit::DataErr, message)
    }

    /// 69: the server is unreachable or answered something that is not a decision.
    pub fn unavailable(message: impl Into<String>) -> Self {
        Self::new(Exit::Unavailable, message)
    }

    /// 70: patchgate could not do its own part (a runtime, a write to stdout or a file).
    pub fn software(message: impl Into<String>) -> Self {
        Self::new(Exit::Software, message)
    }

    /// Prints the line (and the invalid fields) on stderr and gives the exit code.
    pub fn report(self) -> Exit {
        say(&self.message);
        for line in &self.fields {
            say(line);
        }
        self.exit
    }
}

/// A command's outcome: its exit code, or the error that stopped it.
pub type CliResult = Result<Exit, CliError>;

/// The exit code of a command's outcome, its error printed.
pub fn finish(result: CliResult) -> Exit {
    result.unwrap_or_else(CliError::report)
}

/// Writes `patchgate: message` as one line on stderr.
pub fn say(message: &str) {
    use std::io::Write;
    // A file name or a test id in it is the patch's text (CONTRACT.md section 15.4).
    let message = crate::core::text::visible(message);
    let _ = writeln!(std::io::stderr().lock(), "patchgate: {message}");
}
