//! Ctrl-C for commands that must clean up before they exit (`patchgate admit` removes its
//! worktrees): SIGINT, SIGTERM and SIGHUP only set a flag, which the running step polls; the
//! command then unwinds through its guards and exits 130.

use std::sync::Arc;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, Ordering};

use super::error::CliError;
use crate::exit::Exit;

static FLAG: OnceLock<Arc<AtomicBool>> = OnceLock::new();

/// Catches SIGINT, SIGTERM and SIGHUP from now on: they set the flag instead of killing the
/// process. Idempotent.
pub fn catch() -> Result<(), CliError> {
    let flag = FLAG.get_or_init(|| Arc::new(AtomicBool::new(false)));
    for signal in [
        signal_hook::consts::SIGINT,
        signal_hook::consts::SIGTERM,
        signal_hook::consts::SIGHUP,
    ] {
        signal_hook::flag::register(signal, Arc::clone(flag))
            .map_err(|e| CliError::software(format!("cannot catch signal {signal}: {e}")))?;
    }
    Ok(())
}

/// Whether a caught signal arrived.
pub fn requested() -> bool {
    FLAG.get().is_some_and(|f| f.load(Ordering::SeqCst))
}

/// `Err` (exit 130) once a caught signal arrived.
pub fn check() -> Result<(), CliError> {
    if requested() {
        return Err(CliError::new(
            Exit::Interrupted,
            "interrupted: stopped and cleaned up, no decision made",
        ));
    }
    Ok(())
}
