//! Ctrl-C for commands that must clean up before they exit (CONTRACT.md section 11.4): SIGINT,
//! SIGTERM and SIGHUP only record which signal came, which the running step polls; the command
//! then kills what it started, unwinds through its guards and exits 128 + the signal (130 for
//! Ctrl-C, 143 for SIGTERM).

use std::sync::Arc;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicUsize, Ordering};

use super::error::CliError;
use crate::exit::Exit;

/// The caught signal's number, 0 until one arrives.
static SIGNAL: OnceLock<Arc<AtomicUsize>> = OnceLock::new();

/// Catches SIGINT, SIGTERM and SIGHUP from now on: they record the signal instead of killing
/// the process. Idempotent.
pub fn catch() -> Result<(), CliError> {
    let caught = SIGNAL.get_or_init(|| Arc::new(AtomicUsize::new(0)));
    for signal in [
        signal_hook::consts::SIGINT,
        signal_hook::consts::SIGTERM,
        signal_hook::consts::SIGHUP,
    ] {
        let number = usize::try_from(signal).unwrap_or(0);
        signal_hook::flag::register_usize(signal, Arc::clone(caught), number)
            .map_err(|e| CliError::software(format!("cannot catch signal {signal}: {e}")))?;
    }
    Ok(())
}

/// The caught signal, once one arrived.
fn caught() -> Option<u8> {
    let n = SIGNAL.get()?.load(Ordering::SeqCst);
    (n != 0).then(|| u8::try_from(n).unwrap_or(u8::MAX))
}

/// Whether a caught signal arrived.
pub fn requested() -> bool {
    caught().is_some()
}

/// `Err` (exit 128 + the signal) once a caught signal arrived.
pub fn check() -> Result<(), CliError> {
    match caught() {
        Some(signal) => Err(CliError::new(
            Exit::Interrupted(signal),
            format!(
                "interrupted by signal {signal}: every process it started was ended, no decision made"
            ),
        )),
        None => Ok(()),
    }
}
