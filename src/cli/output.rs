//! Printing for the CLI: a closed pipe (`patchgate route x | head -0`) is not an error, and
//! errors are one line on stderr, with their whole cause chain.

use std::io::Write;

pub fn stdout(text: &str) {
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(text.as_bytes());
    let _ = out.flush();
}

pub fn error(message: &str) {
    let _ = writeln!(std::io::stderr().lock(), "patchgate: {message}");
}

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
