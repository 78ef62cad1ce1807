//! What the observed Rust run is built with (issue 52's probes, issue 68's switches): the
//! state alone, held where the gathered gate can keep the build step's (`Gathered::
//! observed_build`); what it does is in the Rust observe step's module.

use std::collections::{BTreeMap, BTreeSet};

use crate::cli::rewriting::rust_probes::Site;
use crate::core::gate::MutantOperator;

/// The changed Rust files of one observed run, probed.
#[derive(Debug, Default)]
pub(super) struct RustProbes {
    /// The probe's name (a macro's and the environment variable's), drawn per gate.
    pub(super) name: String,
    /// Each file written: its judged text and its probed text.
    pub(super) written: Vec<(String, Vec<u8>, Vec<u8>)>,
    /// Every probe, by its number: the file and what it marks.
    pub(super) sites: Vec<(String, Site)>,
    /// Changed lines no probe can be put before, by file (a whole file that did not parse).
    pub(super) unprobed: BTreeMap<String, BTreeSet<u32>>,
    /// The patch mutants compiled in behind their switches (issue 68).
    pub(super) switches: Option<Switches>,
}

/// The patch mutants of the changed lines compiled into the observed run's build, each behind
/// a switch: one build for the observed run and every mutant's run (mutant schemata, issue 68;
/// `rust_schemata`).
#[derive(Debug, Default)]
pub(super) struct Switches {
    /// The variable the switches read (the macro's name), and the value every run but a
    /// mutant's carries: none of them on.
    pub(super) var: String,
    pub(super) none: u32,
    /// A value that turns none on either, drawn as the mutants' are: the decoy's (a killing
    /// run made again with no mutant on, `patch_mutant_runs::decoy`).
    pub(super) decoy: u32,
    /// Each switched mutant: its file, line and operator, and the value that turns it on.
    pub(super) mutants: Vec<(String, u32, MutantOperator, u32)>,
}
