//! Rewriting the patch's code for a run, apart from reading it (`super::reading`): the turned
//! twins of a check (its assertions turned to hold for anything), the patch mutants of the
//! changed lines, and the Rust probes of the observed run. Each parses with the reader's
//! parsers and writes a new text; none decides anything.

pub mod patch_mutants;
pub mod rust_probes;
pub mod rust_schemata;
pub mod turned_twin;
