//! patchgate decides whether a code patch may merge. It adjudicates gate verdicts instead of
//! averaging them, and its exit code is its API: 0 go, 1 the patch is wrong, 2 a human must
//! look, 3 the queue is stopped.
//!
//! - [`core`]: pure decisions, no I/O.
//! - [`http`]: the axum service (`patchgate serve`).
//! - [`cli`]: the command line, deciding locally or through [`client`] against a server.

pub mod cli;
pub mod client;
pub mod core;
pub mod exit;
pub mod http;
pub mod ids;
pub mod telemetry;
pub mod tree;
