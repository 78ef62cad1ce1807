//! The facts one patch's gate gathered, as they travel: the body of `POST /gate` and
//! `POST /gate/next`, what `patchgate gate --facts` reads and `--facts-out` writes. One set of
//! types, declared once: the runner fills them as it runs, the OpenAPI document is derived
//! from them, and the strict reader ([`parse_gate_request`]) validates them into a
//! [`GateRequest`] (duplicate keys refused, errors capped, unknown fields 422), held equal to
//! these field for field by `tests/openapi.rs`.

use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::Value;
use utoipa::ToSchema;
use utoipa::openapi::schema::{ArrayBuilder, ObjectBuilder, Schema};
use utoipa::openapi::{Ref, RefOr};

use super::request::{
    CanaryPart, Configured, FailingCase, IntegrityFinding, Judged, MergeGroup, Replay, Reproof,
    Rerun, RoomFacts, SandboxBackend, SuspiciousLine, UnreadFile,
};
use crate::core::path::RepoPathDoc;
use crate::core::runs::{CatchCodeDoc, CatchCodes, ExitCodeDoc, Receipt, TestIdDoc};

/// The facts one patch's gate gathered. `catalog`, `ledger`, `guarded` and `seal.expected` are
/// the base commit's. Unknown fields are refused (422).
#[derive(Debug, Clone, Default, Serialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(as = GateRequestDoc)]
pub struct Facts {
    /// Echoed in the answer; at most 256 characters.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false, max_length = 256)]
    pub patch_id: Option<String>,
    /// Repo-relative paths the patch changes (renames: both paths).
    #[schema(value_type = Vec<RepoPathDoc>)]
    pub changed_files: Vec<String>,
    /// Paths (files or directories) the patch may not edit: the base's config, catalog,
    /// ledger, expected seal, and what else the base config names.
    #[serde(default)]
    #[schema(value_type = Vec<RepoPathDoc>)]
    pub guarded: Vec<String>,
    /// Paths (files or directories) no property could observe (docs): a patch that changes
    /// only these, and that no property observes, skips the property tier; the suite decides.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schema(value_type = Vec<RepoPathDoc>)]
    pub inert: Vec<String>,
    #[schema(schema_with = seal_schema)]
    pub seal: SealFacts,
    /// The base commit's property catalog: its rows, read once and written as its file holds
    /// them (the strict reader checks them again).
    #[schema(schema_with = catalog_schema)]
    pub catalog: crate::core::catalog::Catalog,
    /// The base commit's freeze ledger: its rows, read once and written as its file holds
    /// them.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(schema_with = ledger_schema)]
    pub ledger: Option<Vec<crate::core::freeze_ledger::FreezeRow>>,
    /// The freeze-debt cap; the server's setting (default 5) when absent.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false, minimum = 0, maximum = 4294967295_u64)]
    pub debt_cap: Option<u64>,
    /// Exit codes of each property's runs, by catalog id (as `/quorum`'s `results`).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(schema_with = results_schema)]
    pub property_runs: Option<BTreeMap<String, PropertyRuns>>,
    /// The exit codes that are a catch for the property runs, 1-255; default `[1]`.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<Vec<CatchCodeDoc>>, nullable = false, min_items = 1)]
    pub catch_exit_codes: Option<CatchCodes>,
    /// Absent when the suite did not run.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub fixture_suite: Option<SuiteFacts>,
    /// When true, a strong row without `admitted` votes as weak (it may reject, it never fills
    /// the quorum) and is reported `unproven`. Default false.
    #[serde(default)]
    pub require_admission: bool,
    /// Changed files the runner saw to be binary or made executable (compiled files are
    /// also known by their names): any such file escalates `binary-added`.
    #[serde(default)]
    #[schema(value_type = Vec<RepoPathDoc>)]
    pub binaries: Vec<String>,
    /// What was judged: the base and head commits and the tree of the head merged into the
    /// base (echoed in the answer).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub judged: Option<Judged>,
    /// The merge queue's group the head is (echoed in the answer and the report).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub merge_group: Option<MergeGroup>,
    /// The files the merge of the head into the base conflicts on: any → ESCALATE
    /// `merge-conflict`.
    #[serde(default)]
    #[schema(value_type = Vec<RepoPathDoc>)]
    pub merge_conflicts: Vec<String>,
    /// How the runs were isolated (echoed in the answer): `bubblewrap`, or `off` when the code
    /// under test ran with the runner's user and files.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub sandbox: Option<SandboxBackend>,
    /// Changed files the runner saw to shadow a module of the test toolchain (a module under
    /// a test `pythonpath` directory named like a standard or installed one): each is a
    /// scope hit, like a root-level module.
    #[serde(default)]
    #[schema(value_type = Vec<RepoPathDoc>)]
    pub shadows: Vec<String>,
    /// Changed test files that existed on the base, run as the base has them (issue 50: the
    /// base's tests judge; the patch's edits to them are reported, not run): no scope hit.
    /// Only test files (test-adjacent, not the test toolchain, not under `fixtures`) count.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schema(value_type = Vec<RepoPathDoc>)]
    pub tests_from_base: Vec<String>,
    /// Test files the patch adds, left out of the suite's run and run in a process of their
    /// own (`fixture_suite.added`): they can only block. No scope hit.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schema(value_type = Vec<RepoPathDoc>)]
    pub added_tests: Vec<String>,
    /// Changed `pyproject.toml`/`Cargo.toml`/`package.json` files the runner read by their
    /// tables and found to change only what describes the package (version, description,
    /// authors, links...), a `setup.cfg` whose only change is a version line, and Python
    /// modules whose only change is their `__version__` string (issue 65): no scope hit and no
    /// code a property need observe (issue 50). Any other change to them is.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schema(value_type = Vec<RepoPathDoc>)]
    pub metadata_only: Vec<String>,
    /// Changed source files whose test lines (Rust: `#[cfg(test)]` items, `#[test]`
    /// functions, doctests; Python: the examples of its docstrings) the runs saw as the base
    /// has them, the patch's code beside them (issue 50): reported, not a scope hit.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schema(value_type = Vec<RepoPathDoc>)]
    pub test_lines_from_base: Vec<String>,
    /// Changed source files whose test lines the runner could not split from their code (a
    /// hunk that mixes them, a docstring's examples removed with what they document): each is a
    /// scope hit.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schema(value_type = Vec<RepoPathDoc>)]
    pub test_lines_mixed: Vec<String>,
    /// What the reading of the patch's code flagged (CONTRACT.md sections 11.6, 14): each hit
    /// with file, line, rule, class and code. Any in a file that is not test-adjacent →
    /// ESCALATE, the first class among them naming the reason: `probe` → `test-aware-code`,
    /// `overload` → `equality-overload`, `special-case` → `test-input-in-code`.
    #[serde(default)]
    pub suspicious: Vec<SuspiciousLine>,
    /// Changed code files the reader could not read as the interpreter will (CONTRACT.md
    /// section 15.2: a symbolic link among the code, a file over the read limit, not UTF-8 or
    /// with another coding cookie, one the parser cannot parse...): any in a file that is not
    /// test-adjacent → ESCALATE `unread-code`, ranked before every class of hit (after the
    /// build step, when one is configured: a file that does not build is BLOCK
    /// `does-not-build`). At most 100.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schema(max_items = 100)]
    pub unread: Vec<UnreadFile>,
    /// Each property run's receipt (CONTRACT.md section 11.1), by property id, one per run in
    /// `property_runs` (null: no report read). Absent: the property command has no `{junit}`
    /// (receipts off). A run counts only as its receipt shows it: exit 0 with an executed case
    /// and none failed or skipped, a catch with a failed case listed; otherwise `null`.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub property_receipts: Option<BTreeMap<String, Vec<Option<Receipt>>>>,
    /// The property runs were batched (several properties in one process): each run's exit
    /// code is its batch's, and a property's outcome in it is its own test cases' in the
    /// receipt (a catch another property's cases explain is this one's pass). Needs
    /// `property_receipts`. Default false.
    #[serde(default, skip_serializing_if = "is_false")]
    pub batched: bool,
    /// The properties whose first run is the suite's own run of their cases
    /// (`configured.properties_in_suite`, CONTRACT.md section 15.3): that run's exit code is
    /// their cases' in the suite's report (0 all passed, a catch any failed, `null` none ran)
    /// and its receipt their cases' there; the property command ran the others. At most
    /// 1,000.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schema(max_items = 1000)]
    pub suite_runs: Vec<String>,
    /// The failing cases the reports gave (section 11.8): at most 20, each message at most
    /// 2,048 bytes; echoed in the answer and the Markdown report.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schema(max_items = 20)]
    pub failures: Vec<FailingCase>,
    /// What runs changed that they may not (section 11.3): any → ESCALATE
    /// `modified-during-run`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub integrity: Vec<IntegrityFinding>,
    /// The build step (section 11.8), when one ran: a catch → BLOCK `does-not-build`; any
    /// other exit, or killed → ESCALATE `harness-error`.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub build: Option<BuildFacts>,
    /// The canary's run (section 11.5), when one ran: unless it exited with a catch and its
    /// receipt lists a failure → ESCALATE `checker-neutered`.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub canary: Option<CanaryFacts>,
    /// The re-proofs tried (section 11.5), at most 100: an admitted property that passed
    /// with its mutant applied → ESCALATE `checker-neutered`; one that could not run is void
    /// (section 11.10).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schema(max_items = 100)]
    pub reproof: Vec<Reproof>,
    /// The replays (CONTRACT.md section 15.5), at most 1,000: a property whose runs split, run
    /// once more where its failure was found so its engine tries the failing examples it saved
    /// first. A catch its receipt vouches for is the property's `fail`; else the split stands
    /// (`flaky-property`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schema(max_items = 1000)]
    pub replays: Vec<Replay>,
    /// The digest of each admitted property's source files on the base (64 hex digits, by
    /// property id; at most 1,000), as the runner computed it the way admission records it: a
    /// catalog row whose `admitted.source` names another digest, or whose digest is not given
    /// here, votes as unadmitted until admitted again (issue 50).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub admitted_sources: BTreeMap<String, String>,
    /// Processes the runs left behind, each killed before its report was read (section
    /// 11.4); noted in the integrity step, never a verdict.
    #[serde(default, skip_serializing_if = "is_zero")]
    #[schema(minimum = 0, maximum = 4294967295_u64)]
    pub left_behind: u64,
    /// Where the runner's time went, by phase, in milliseconds: echoed in the answer and the
    /// Markdown report, never a decision.
    #[serde(default, skip_serializing_if = "Timings::is_empty")]
    #[schema(value_type = Timings)]
    pub timings_ms: Timings,
    /// The optional steps the runner can run (from the base's config): what the core's plan
    /// may ask for. Absent: no build, canary or re-proof is planned, and a re-run is.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub configured: Option<Configured>,
    /// The sealed room the runs had (CONTRACT.md section 13).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub room: Option<RoomFacts>,
    /// Which checks ran the patch's changed code lines, and the branches it adds no check
    /// took (issue 52; docs/design/observe.md): absent when `[observe]` is off.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub observe: Option<super::observe::ObserveFacts>,
    /// The changed code's recorded calls made again in a plain program (issue 66;
    /// docs/design/replay.md): absent when `[replay]` is off or nothing was observed.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub behavior: Option<super::behavior::BehaviorFacts>,
    /// This is one shard's facts (`patchgate gate --shard K/N`, issue 53): who it is, how the
    /// suite was split, and what it ran on. A shard's facts alone decide nothing: they
    /// ESCALATE `evidence-gap` until combined with the others (`--combine`).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub shard: Option<super::shard_facts::ShardFacts>,
    /// These facts are N shards' combined (`--combine`): the shards in, and what is wrong with
    /// them (any gap → ESCALATE `evidence-gap`).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub shards: Option<super::shard_facts::ShardsFacts>,
}

/// The body of `POST /gate`: one gate's facts, or the facts of the N shards of one split gate
/// to combine (issue 53).
#[derive(Debug, Clone, Serialize, ToSchema)]
#[serde(untagged)]
#[schema(as = GateBodyDoc)]
pub enum GateBody {
    Facts(Box<Facts>),
    Shards(ShardsBody),
}

/// The N shards' facts (each written by `patchgate gate --shard K/N --facts-out`), decided
/// once: a shard missing, given twice, unfinished, edited, or of another head, config, split
/// or version is ESCALATE `evidence-gap` (rule `shards`).
#[derive(Debug, Clone, Serialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(as = GateShardsDoc)]
pub struct ShardsBody {
    /// Each shard's facts, in any order (at most 256); facts that do not validate are refused
    /// (422, named by their pointer).
    #[schema(max_items = 256)]
    pub shards: Vec<Facts>,
    /// Shards' facts the caller could not read or validate (a file and why, at most 256, each
    /// at most 1,024 characters): each is a gap (`patchgate gate --combine` names its files
    /// here).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schema(max_items = 256)]
    pub unreadable: Vec<String>,
}

fn is_false(b: &bool) -> bool {
    !*b
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// The fixture seal computed on the judged tree, and the base's expected one (hex).
#[derive(Debug, Clone, Default, Serialize)]
pub struct SealFacts {
    pub actual: String,
    pub expected: String,
}

/// One property's runs (as `/quorum`'s `results`): each an exit code, or `null` when killed.
#[derive(Debug, Clone, Default, Serialize)]
pub struct PropertyRuns {
    pub runs: Vec<Option<u8>>,
}

/// What the fixture suite did.
#[derive(Debug, Clone, Default, Serialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(as = FixtureSuiteDoc)]
pub struct SuiteFacts {
    /// 0-255, or null when the suite was killed by its timeout or a signal.
    #[schema(value_type = Option<ExitCodeDoc>, required = true)]
    pub exit_code: Option<u8>,
    /// Ids (`classname::name`) of the failed or errored test cases, read from the suite's
    /// JUnit XML report.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<Vec<TestIdDoc>>, nullable = false)]
    pub failed_tests: Option<Vec<String>>,
    /// How the JUnit report disagrees with itself (a failure outside any test case, declared
    /// failures or errors that differ from the ones its cases list), when it does:
    /// `fixture_check` is then unknown.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false, max_length = 4096)]
    pub report_disagrees: Option<String>,
    /// The exit codes that are a catch for the suite, 1-255; default `[1]`.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<Vec<CatchCodeDoc>>, nullable = false, min_items = 1)]
    pub catch_exit_codes: Option<CatchCodes>,
    /// The suite run again with the frozen tests it failed left out (CONTRACT.md section
    /// 12.4): failures only frozen tests explain are discarded only when it passed.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub rerun: Option<Rerun>,
    /// The run of the test files the patch adds (`added_tests`), in a process of its own:
    /// a failure its receipt vouches for fails the suite; nothing else it shows passes
    /// anything.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub added: Option<Rerun>,
    /// The tests the observed run failed (the suite's first run under `[observe]`, frozen
    /// tests aside), run again without the observer (issue 64): when it passed, their
    /// failures are the observer's (or a run the code tells apart), never the patch's, and
    /// `fixture_check` is unknown.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub plain: Option<Rerun>,
    /// The failed tests whose definition the patch changes, each with the lines that differ
    /// (issue 65): the base's version ran and failed. When every counted failure is one, the
    /// patch declares a behaviour change: `fixture_check` is unknown (ESCALATE
    /// `changed-test-fails`), never a failure of the patch nor a pass. At most 20.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schema(max_items = 20)]
    pub changed_tests: Vec<super::request::ChangedTest>,
    /// Its receipt (section 11.1): null when no report was read; absent when the suite
    /// command has no `{junit}` (receipts off). Without one that vouches for its exit code,
    /// `fixture_check` is unknown (its skips are allowed: the census judges them).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<Receipt>, nullable = true)]
    pub receipt: Option<Option<Receipt>>,
    /// Census tests (section 11.2) that passed on the base and did not run here (at most
    /// 100): any → `fixture_check` unknown.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schema(value_type = Vec<TestIdDoc>, max_items = 100)]
    pub vanished: Vec<String>,
    /// How many vanished, all of them (default: the ids listed).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false, minimum = 0, maximum = 4294967295_u64)]
    pub vanished_count: Option<u64>,
}

/// The build step.
#[derive(Debug, Clone, Default, Serialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(as = BuildDoc)]
pub struct BuildFacts {
    /// 0-255, or null when the build was killed by its timeout or a signal.
    #[schema(value_type = Option<ExitCodeDoc>, required = true)]
    pub exit_code: Option<u8>,
    /// The exit codes that mean the code does not build, 1-255; default `[1]`.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<Vec<CatchCodeDoc>>, nullable = false, min_items = 1)]
    pub catch_exit_codes: Option<CatchCodes>,
    /// Its last lines of output.
    #[serde(default)]
    #[schema(max_length = 4096)]
    pub tail: String,
}

/// The canary's run.
#[derive(Debug, Clone, Default, Serialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(as = CanaryDoc)]
pub struct CanaryFacts {
    /// 0-255, or null when the canary was killed by its timeout or a signal.
    #[schema(value_type = Option<ExitCodeDoc>, required = true)]
    pub exit_code: Option<u8>,
    /// The exit codes that are a catch for it, 1-255; default `[1]`.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<Vec<CatchCodeDoc>>, nullable = false, min_items = 1)]
    pub catch_exit_codes: Option<CatchCodes>,
    /// Its receipt; null when no report was read.
    #[schema(required = true, nullable = true)]
    pub receipt: Option<Receipt>,
    /// It rode in the batched property runs (`[canary] in_batch`): its part of each, in run
    /// order (the first is `exit_code` and `receipt`); it must have failed in every one.
    /// Absent when it ran in a process of its own.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schema(max_items = 10)]
    pub in_runs: Vec<CanaryPart>,
    /// It was the turned twin of this property (its own test file, its assertions turned,
    /// under a name drawn per gate: CONTRACT.md section 15.3), riding in the property runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false, min_length = 1, max_length = 256)]
    pub twin_of: Option<String>,
}

/// Where the runner's time went: milliseconds by phase ([`Phase`], the names of
/// [`super::shape::TIMING_STEPS`]), each at most 4,294,967,295.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(transparent)]
pub struct Timings(pub BTreeMap<String, u64>);

/// A phase of the runner, as [`Timings`] counts it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, strum::IntoStaticStr, strum::VariantArray)]
#[strum(serialize_all = "snake_case")]
pub enum Phase {
    /// git, the base's inputs, the copy of the judged tree, the seal.
    Gather,
    Build,
    Canary,
    Properties,
    Reproof,
    Suite,
    Rerun,
    /// The patch mutants (issue 52).
    Mutants,
    /// The whole gate, start to answer: less than the steps' sum when runs overlapped
    /// (`--jobs`).
    Total,
}

impl Timings {
    fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Adds `seconds` to `phase` (rounded to milliseconds, at most `u32::MAX` in all).
    pub fn add(&mut self, phase: Phase, seconds: f64) {
        let ms = (seconds * 1000.0).round().clamp(0.0, f64::from(u32::MAX)) as u64;
        let slot = self.0.entry(<&str>::from(phase).to_owned()).or_insert(0);
        *slot = slot.saturating_add(ms).min(u64::from(u32::MAX));
    }

    /// The milliseconds `phase` took so far (0 when it has not run).
    pub fn of(&self, phase: Phase) -> u64 {
        self.0.get(<&str>::from(phase)).copied().unwrap_or(0)
    }
}

impl utoipa::PartialSchema for Timings {
    fn schema() -> RefOr<Schema> {
        use strum::VariantArray;
        let mut object = ObjectBuilder::new()
            .description(Some(
                "The runner's phases, each in milliseconds (0 to 4,294,967,295).",
            ))
            .additional_properties(Some(
                utoipa::openapi::schema::AdditionalProperties::FreeForm(false),
            ));
        for phase in Phase::VARIANTS {
            object = object.property(
                <&str>::from(*phase),
                ObjectBuilder::new()
                    .schema_type(utoipa::openapi::schema::Type::Integer)
                    .format(Some(utoipa::openapi::SchemaFormat::KnownFormat(
                        utoipa::openapi::KnownFormat::Int64,
                    )))
                    .minimum(Some(0))
                    .maximum(Some(u32::MAX)),
            );
        }
        RefOr::T(object.into())
    }
}

impl ToSchema for Timings {
    fn name() -> std::borrow::Cow<'static, str> {
        std::borrow::Cow::Borrowed("TimingsDoc")
    }
}

impl Facts {
    /// The document, as `POST /gate` takes it.
    pub fn to_value(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }
}

/// The schemas of the parts shared with `/quorum`, declared beside its handler: named here
/// by reference, so the core needs no type of the HTTP edge.
fn named(name: &str) -> RefOr<Schema> {
    RefOr::Ref(Ref::from_schema_name(name))
}

fn seal_schema() -> RefOr<Schema> {
    named("SealDoc")
}

fn catalog_schema() -> RefOr<Schema> {
    named("GateCatalogDoc")
}

fn ledger_schema() -> Schema {
    ArrayBuilder::new()
        .items(named("LedgerRowDoc"))
        .description(Some("The base commit's freeze ledger."))
        .into()
}

fn results_schema() -> Schema {
    ObjectBuilder::new()
        .additional_properties(Some(named("ResultDoc")))
        .description(Some(
            "Exit codes of each property's runs, by catalog id (as `/quorum`'s `results`).",
        ))
        .into()
}

#[cfg(test)]
mod tests {
    use super::Phase;

    /// The phases the runner times are the ones a request may carry, in the same order.
    #[test]
    fn the_phases_are_the_timing_steps() {
        use strum::VariantArray;
        let phases: Vec<&str> = Phase::VARIANTS.iter().map(|p| <&str>::from(*p)).collect();
        assert_eq!(phases, super::super::shape::TIMING_STEPS);
    }
}
