//! Printing for the CLI: a closed pipe (`patchgate route x | head -0`) is not an error, and
//! errors are one line on stderr, with their whole cause chain.

use std::io::Write;

/// Writes to stdout. A closed pipe is not an error (the reader had what it wanted); any other
/// failure (a full disk) is, so a command never exits 0 on an answer that was not written.
pub fn stdout(text: &str) -> Result<(), super::error::CliError> {
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        Err(e) => Err(super::error::CliError::software(format!(
            "cannot write the answer to stdout: {e}"
        ))),
    }
}

/// One line on stderr, `patchgate: message` (written by the error module, which has no
/// other dependency here).
pub use super::error::say as error;

/// An error and its sources, joined with `: `.
pub fn chain(err: &dyn std::error::Error) -> String {
    let mut s = err.to_string();
    let mut source = err.source();
    while let Some(e) = source {
        let msg = e.to_string();
        if !s.contains(&msg) {
            s.push_str(": ");
            s.push_str(&msg);
        }
        source = e.source();
    }
    s
}
