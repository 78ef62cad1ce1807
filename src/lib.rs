//! patchgate decides whether a code patch may merge. It adjudicates gate verdicts instead of
//! averaging them, and its exit code is its API: 0 go, 1 the patch is wrong, 2 a human must
//! look, 3 the queue is stopped.
//!
//! - [`core`]: pure decisions, no I/O.
//! - [`http`]: the axum service (`patchgate serve`).
//! - [`cli`]: the command line, deciding locally or through [`client`] against a server.

// Fails closed and never panics, in every part: a panic in the core is no decision, in the
// service a 500, in the command line exit 101. These lints hold outside tests.
#![cfg_attr(
    not(test),
    deny(
        clippy::unwrap_used,
        clippy::expect_used,
        clippy::panic,
        clippy::indexing_slicing,
        clippy::todo
    )
)]

pub mod cli;
pub mod client;
pub mod core;
pub mod exit;
pub mod http;
pub mod ids;
pub mod telemetry;
pub mod tree;
