//! The documents the CLI writes for a reader of ours: the request bodies it sends a decision
//! (`/quorum`, `/admit`, the head of `/route/checks`, `/freeze/eligibility`, `/ladder/plan`, a
//! `/calibrate` row) and the evidence file `patchgate route` replays. Typed, each field named
//! once here; an optional field is left out, never `null`. What they hold is checked by the
//! core's strict readers on the other side, local or remote.

use serde::Serialize;
use serde_json::Value;

use crate::core::freeze_ledger::FreezeRow;
use crate::core::route::Verdicts;
use crate::core::runs::{CatchCodes, RunOutcome};

/// A `/quorum` request, built from the files a repository has.
#[derive(Serialize)]
pub struct QuorumBody<'a> {
    pub changed_files: &'a [String],
    /// The catalog and the results as their files hold them: the core reads them field by field.
    pub catalog: &'a Value,
    pub results: &'a Value,
    pub ledger: &'a [FreezeRow],
    pub seal: SealPair,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub patch_id: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub debt_cap: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub catch_exit_codes: Option<&'a [u8]>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub require_admission: Option<bool>,
}

/// The seal computed now and the committed one, as hex digests.
#[derive(Serialize)]
pub struct SealPair {
    pub actual: String,
    pub expected: String,
}

/// An `/admit` request: the two-commit proof's runs.
#[derive(Serialize)]
pub struct AdmitBody<'a> {
    pub check_id: &'a str,
    pub kind: &'a str,
    pub seal: TreeSeals,
    pub base_runs: &'a [RunOutcome],
    pub mutant_runs: &'a [RunOutcome],
    pub catch_exit_codes: &'a CatchCodes,
    pub mutant: &'a str,
    /// The digest of the property's source on the base.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
}

/// The fixtures seal of each of admission's trees.
#[derive(Serialize)]
pub struct TreeSeals {
    pub base: String,
    pub mutant: String,
}

/// The head of a `/route/checks` request; the forge's documents follow it as they were read.
#[derive(Serialize)]
pub struct ChecksHead<'a> {
    pub head_sha: &'a str,
    /// The gates' table as its file holds it (JSON or TOML).
    pub gates: &'a Value,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub patch_id: Option<&'a str>,
}

/// A `/freeze/eligibility` request.
#[derive(Serialize)]
pub struct FreezeBody<'a> {
    pub outcomes: &'a [bool],
    pub caught_seeded_bug: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub min_runs: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub min_flip_rate: Option<f64>,
}

/// A `/ladder/plan` request.
#[derive(Serialize)]
pub struct PlanBody<'a> {
    pub changed_files: &'a [String],
}

/// One row of `/calibrate`, as `patchgate ladder calibrate --rows-out` writes it.
#[derive(Serialize)]
pub struct CalibrationLine<'a> {
    pub attribution: &'a str,
    pub fix_files: Vec<&'a str>,
    pub fix_changed: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub decision_id: Option<&'a str>,
}

/// A `/gate` request of a gate split over shards (`--combine`): each shard's facts as its
/// file holds them, and each file that could not be read as one, with why.
#[derive(Serialize)]
pub struct CombinedShards {
    pub shards: Vec<Value>,
    pub unreadable: Vec<String>,
}

/// The evidence file (`--evidence-out`): the routed verdicts, replayable by `patchgate route`.
#[derive(Serialize)]
pub struct EvidenceFile<'a> {
    #[serde(flatten)]
    pub verdicts: &'a Verdicts,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub patch_id: Option<&'a str>,
}
