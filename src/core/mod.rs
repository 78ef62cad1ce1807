//! The pure decision core: no I/O, no clock, no randomness, no HTTP.
//!
//! Everything here takes values and returns values, so the server, the CLI and the tests all
//! reach the same decision through the same code. Identifiers that need randomness (decision
//! ids) are made at the edge and handed in.

// The core fails closed and never panics: these lints keep it honest outside its tests.
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

pub mod answer;
pub mod checks;
pub mod digest;
pub mod evidence;
pub mod fields;
pub mod gate;
pub mod json;
pub mod json_out;
pub mod ladder;
pub mod path;
pub mod problem;
pub mod quorum;
pub mod route;
pub mod seal;

/// The tracing target of decision-log lines (what `/review` reads back).
pub const DECISION_TARGET: &str = "patchgate::decision";
