//! The patch gate (CONTRACT.md section 8.1): one verdict for one patch, composed from the
//! pieces — seal, debt, guard, then the router over three derived verdicts (t0 scope, t1
//! property quorum, t2 fixture suite, scoped freeze). Facts in, decision out: the runner (the
//! CLI) gathers the facts, this decides, and the answer's `steps` say what each step saw and
//! concluded.
//!
//! The gate's own rules are data ([`GATE_RULES`]), first match wins, like the router's ladder
//! and the quorum's rules; the last of them hands over to the router.

mod parse;
mod report;

use std::collections::{HashMap, HashSet};

use serde::{Deserialize, Serialize};
use strum::{IntoStaticStr, VariantArray};
use utoipa::ToSchema;

use super::catalog::Property;
use super::evidence::{FrozenTest, derive_freeze};
use super::freeze_ledger::{self, Debt, FreezeRow, Frozen, LedgerState};
use super::ladder::{ScopeMarkers, TierVerdict};
use super::path::{PrefixTrie, RepoPath};
use super::quorum::{self, Outcome, PropertyReport, Reason};
use super::route::{self, Attribution, Disposition, RuleName, Verdict, Verdicts};
use super::rules;
use super::runs::{CatchCodes, Receipt, ReceiptGap, RunOutcome, counted, in_batch};
use super::seal::SealCheck;

pub use parse::{
    BUILD_FIELDS, CANARY_FIELDS, FAILURE_FIELDS, GATE_FIELDS, INTEGRITY_FIELDS, JUDGED_FIELDS,
    MAX_FAILURE_BYTES, MAX_FAILURES, MAX_TEST_ID_CHARS, REPROOF_FIELDS, RERUN_FIELDS, SUITE_FIELDS,
    SUSPICIOUS_FIELDS, TIMING_STEPS, clip_failure, fit_test_id, parse_gate_request,
};
pub use report::{markdown, step_name, text_line};

/// What the fixture suite (the t2 tier) did, as the runner saw it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FixtureSuite {
    /// `None`: killed by its timeout or a signal.
    pub exit_code: Option<u8>,
    /// Ids of the failed or errored test cases, as read from a JUnit XML report
    /// (`classname::name`); `None` when no report was read.
    pub failed_tests: Option<Vec<String>>,
    /// How the report disagrees with itself (a failure outside any test case, counts that
    /// disagree with the cases listed), when it does (section 11.1).
    pub report_disagrees: Option<String>,
    /// The exit codes that are a catch for the suite (default `[1]`).
    pub catch_exit_codes: CatchCodes,
    /// The suite run again with the frozen tests it failed left out (section 12.4): `None`
    /// when it was not.
    pub rerun: Option<Rerun>,
    /// Its receipt (section 11.1): `None` when its command has no `{junit}` (receipts off),
    /// `Some(None)` when no report was read.
    pub receipt: Option<Option<Receipt>>,
    /// Census tests (section 11.2) that passed on the base and did not run on the head (absent
    /// from its report, or skipped): at most 100 listed.
    pub vanished: Vec<String>,
    /// How many vanished, all of them.
    pub vanished_count: u64,
}

/// The suite's re-run without the frozen tests that failed (CONTRACT.md section 12.4): the
/// frozen failures are discarded only when it passes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rerun {
    /// `None`: killed by its timeout or a signal.
    pub exit_code: Option<u8>,
    /// Failed test ids its report lists; `None` when no report was read.
    pub failed_tests: Option<Vec<String>>,
    /// How its report disagrees with itself, when it does.
    pub report_disagrees: Option<String>,
    /// Its receipt, as the suite's.
    pub receipt: Option<Option<Receipt>>,
}

impl Rerun {
    /// It passed: exit 0, its report (when read) lists no failure and agrees with itself, and
    /// (receipts on) its receipt vouches for the exit.
    pub fn passed(&self) -> bool {
        self.exit_code == Some(0)
            && self.failed_tests.as_ref().is_none_or(Vec::is_empty)
            && self.report_disagrees.is_none()
            && self.receipt.as_ref().is_none_or(|r| {
                counted(Some(0), r.as_ref(), &CatchCodes::default(), true)
                    .1
                    .is_none()
            })
    }
}

/// A failed test or property as its report gave it (CONTRACT.md section 11.8): the falsifying
/// example, the minimal input, the assertion. The runner clips each message to 2 KiB and sends
/// at most 20.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct FailingCase {
    /// The test id (`classname::name`), or the property id.
    pub id: String,
    pub message: String,
}

/// Something a run changed that it may not (CONTRACT.md section 11.3).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct IntegrityFinding {
    /// The run, as the runner labels it (`t1 order.total run 2/2`).
    pub run: String,
    /// Tracked files it changed, deleted or changed the mode of (at most 100).
    pub files: Vec<String>,
    /// How many, all of them.
    pub count: u64,
    /// Whether the fixtures' seal changed.
    pub seal_changed: bool,
}

/// The build step (CONTRACT.md section 11.8), run once before any property.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BuildRun {
    /// `None`: killed by its timeout or a signal.
    pub exit_code: Option<u8>,
    /// The exit codes that mean the code does not build (`[build] catch`; default `[1]`).
    pub catch_exit_codes: CatchCodes,
    /// Its last lines of output.
    pub tail: String,
}

/// A validated `/gate` request: the facts one patch's gate gathered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GateRequest {
    pub patch_id: Option<String>,
    pub changed_files: Vec<RepoPath>,
    /// Paths (files or directories) the patch may not edit: the base commit's config,
    /// catalog, ledger, expected seal and whatever else the base config names.
    pub guarded: Vec<RepoPath>,
    /// Paths (files or directories) no property could observe (docs, say): a patch that
    /// changes only these, and that no property observes, skips the property tier.
    pub inert: Vec<RepoPath>,
    pub seal: SealCheck,
    /// The base commit's catalog (never `introduced`; rows may name their `source`).
    pub catalog: Vec<Property>,
    /// The base commit's freeze ledger.
    pub ledger: Vec<FreezeRow>,
    pub debt_cap: Option<u64>,
    /// Runs by property id, as `/quorum`'s `results`.
    pub property_runs: HashMap<String, Vec<RunOutcome>>,
    /// Catch codes for the property runs.
    pub catch_exit_codes: CatchCodes,
    /// `None`: the suite did not run.
    pub fixture_suite: Option<FixtureSuite>,
    /// A strong row without an `admitted` proof votes as weak (CONTRACT.md section 10).
    pub require_admission: bool,
    /// Changed files the runner saw to be binary (git reads their content as binary) or to be
    /// made executable; compiled files are also known by their names (section 12.3).
    pub binaries: Vec<RepoPath>,
    /// What was judged (section 12.1): the base and head commits and the tree of their merge;
    /// `None` when the facts do not say.
    pub judged: Option<Judged>,
    /// The files the merge of the head into the base conflicts on (section 12.1).
    pub merge_conflicts: Vec<RepoPath>,
    /// How the runs were isolated (section 12.2); `None` when the facts do not say.
    pub sandbox: Option<SandboxBackend>,
    /// Changed files the runner saw to shadow a module of the test toolchain: a module under
    /// a test `pythonpath` directory named like a standard or installed one (section 12.3).
    pub shadows: Vec<RepoPath>,
    /// Lines the patch adds that match a `[suspicious]` pattern: code that may behave
    /// differently under test (section 11.6).
    pub suspicious: Vec<SuspiciousLine>,
    /// Each property run's receipt, by property id, in run order (section 11.1): `None` when
    /// the property command has no `{junit}` (receipts off).
    pub property_receipts: Option<HashMap<String, Vec<Option<Receipt>>>>,
    /// The property runs were batched (`{ids}`): each run's exit code is its batch's, and a
    /// property's outcome in it is its own test cases' ([`in_batch`]).
    pub batched: bool,
    /// The failing cases the reports gave (section 11.8).
    pub failures: Vec<FailingCase>,
    /// What runs changed that they may not (section 11.3).
    pub integrity: Vec<IntegrityFinding>,
    /// The build step, when one ran (section 11.8).
    pub build: Option<BuildRun>,
    /// The canary's run on the judged tree, when one ran (section 11.5).
    pub canary: Option<CanaryRun>,
    /// The re-proofs tried (section 11.5): admitted properties run on the judged tree with
    /// their admission mutant applied.
    pub reproof: Vec<Reproof>,
    /// Processes the runs left behind, each killed before its report was read (section 11.4).
    pub left_behind: u64,
    /// Where the runner's time went, by phase ([`TIMING_STEPS`]), in milliseconds: echoed in
    /// the answer and the report, never a decision.
    pub timings_ms: std::collections::BTreeMap<String, u64>,
}

/// One re-proof (CONTRACT.md section 11.5): an admitted property run on the judged tree with
/// its admission mutant applied. It must catch the mutant; a pass means the property can no
/// longer fail there.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct Reproof {
    pub property: String,
    /// Whether the mutant's diff applied to the judged tree (when not, nothing ran).
    pub applied: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<u8>,
    /// Its receipt (absent: receipts off, or nothing ran; `null`: no report read).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub receipt: Option<Option<Receipt>>,
    /// Why it proves nothing either way, when it does not (the diff did not apply, an error).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

impl Reproof {
    /// The property passed with its mutant applied: it can no longer fail here.
    pub fn passed(&self, catch: &CatchCodes) -> bool {
        if !self.applied {
            return false;
        }
        let run = match &self.receipt {
            Some(r) => counted(self.exit_code, r.as_ref(), catch, false).0,
            None => self.exit_code,
        };
        run == Some(0)
    }
}

/// The canary's run (CONTRACT.md section 11.5): a check that fails in the base must still
/// fail here, with its failure listed in its receipt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CanaryRun {
    /// `None`: killed by its timeout or a signal.
    pub exit_code: Option<u8>,
    pub catch_exit_codes: CatchCodes,
    /// Its receipt (`None`: no report read).
    pub receipt: Option<Receipt>,
}

impl CanaryRun {
    /// Whether it still failed as a canary must: a catch its receipt vouches for.
    pub fn sang(&self) -> bool {
        let (run, gap) = counted(
            self.exit_code,
            self.receipt.as_ref(),
            &self.catch_exit_codes,
            false,
        );
        gap.is_none() && self.catch_exit_codes.caught(run)
    }
}

/// A line the patch adds that matches a `[suspicious]` pattern (CONTRACT.md section 11.6).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct SuspiciousLine {
    pub file: String,
    /// 1-based, in the judged tree.
    pub line: u64,
    /// The pattern it matches.
    pub pattern: String,
}

/// The commit and tree ids of what was judged: the base, the head, and the tree that would
/// land (the merge of the head into the base).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct Judged {
    pub base: String,
    pub head: String,
    pub tree: String,
}

/// How the runs were isolated from the runner and the machine (CONTRACT.md section 12.2).
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Hash,
    Serialize,
    Deserialize,
    ToSchema,
    IntoStaticStr,
    VariantArray,
)]
#[serde(rename_all = "kebab-case")]
#[strum(serialize_all = "kebab-case")]
pub enum SandboxBackend {
    /// bubblewrap: new PID, IPC and network namespaces, everything but the copy read-only.
    Bubblewrap,
    /// No sandbox (`[sandbox] mode = "off"`): the runs had the runner's user and files.
    Off,
}

/// What the merge bot does with the patch: the router's three, and the queue stop.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Hash,
    Serialize,
    Deserialize,
    ToSchema,
    IntoStaticStr,
    VariantArray,
)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
#[strum(serialize_all = "SCREAMING_SNAKE_CASE")]
pub enum GateDisposition {
    MergeOk,
    Block,
    Escalate,
    /// Freeze debt is over the cap: no patch merges until ledger rows are retired.
    StopQueue,
}

impl GateDisposition {
    pub fn as_str(self) -> &'static str {
        self.into()
    }

    /// 0 go; 1 the patch is wrong; 2 a human must look; 3 the queue is stopped.
    pub fn exit_code(self) -> u8 {
        match self {
            GateDisposition::MergeOk => 0,
            GateDisposition::Block => 1,
            GateDisposition::Escalate => 2,
            GateDisposition::StopQueue => 3,
        }
    }
}

impl From<Disposition> for GateDisposition {
    fn from(d: Disposition) -> Self {
        match d {
            Disposition::MergeOk => GateDisposition::MergeOk,
            Disposition::Block => GateDisposition::Block,
            Disposition::Escalate => GateDisposition::Escalate,
        }
    }
}

/// The gate rule that decided.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Hash,
    Serialize,
    Deserialize,
    ToSchema,
    IntoStaticStr,
    VariantArray,
)]
#[serde(rename_all = "kebab-case")]
#[strum(serialize_all = "kebab-case")]
pub enum GateRuleName {
    Merge,
    FixtureFault,
    Debt,
    Guard,
    Binary,
    TestAware,
    Integrity,
    Build,
    Route,
}

/// Why: a gate rule's reason, or the router's attribution.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Hash,
    Serialize,
    Deserialize,
    ToSchema,
    IntoStaticStr,
    VariantArray,
)]
#[serde(rename_all = "kebab-case")]
#[strum(serialize_all = "kebab-case")]
pub enum GateReason {
    MergeConflict,
    SealMismatch,
    DebtOverCap,
    GuardedInputEdited,
    BinaryAdded,
    TestAwareCode,
    ModifiedDuringRun,
    DoesNotBuild,
    HarnessError,
    CheckerNeutered,
    EvidenceGap,
    BehaviorAndInvariant,
    ConcreteBehavior,
    InvariantOrOverSpecifiedProperty,
    FrozenTestFailure,
    InadmissibleEvidence,
    AllGatesHeld,
}

impl GateReason {
    pub fn as_str(self) -> &'static str {
        self.into()
    }
}

impl From<Attribution> for GateReason {
    fn from(a: Attribution) -> Self {
        match a {
            Attribution::EvidenceGap => GateReason::EvidenceGap,
            Attribution::BehaviorAndInvariant => GateReason::BehaviorAndInvariant,
            Attribution::ConcreteBehavior => GateReason::ConcreteBehavior,
            Attribution::InvariantOrOverSpecifiedProperty => {
                GateReason::InvariantOrOverSpecifiedProperty
            }
            Attribution::FrozenTestFailure => GateReason::FrozenTestFailure,
            Attribution::InadmissibleEvidence => GateReason::InadmissibleEvidence,
            Attribution::AllGatesHeld => GateReason::AllGatesHeld,
        }
    }
}

/// What the gate rules read, computed once from the request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GateFacts {
    /// The files the merge conflicts on.
    pub conflicts: Vec<String>,
    pub seal_matches: bool,
    pub debt: Debt,
    /// Every property source (from the catalog), guarded like it.
    pub sources: Vec<String>,
    /// Changed files that are, or lie under, a guarded path or a property's source.
    pub guard_hits: Vec<GuardHit>,
    /// Changed files that are compiled or binary, or made executable.
    pub binaries: Vec<String>,
    /// Suspicious added lines in files that are not test-adjacent.
    pub suspicious: Vec<SuspiciousLine>,
    /// What runs changed that they may not.
    pub modified: bool,
    /// How the build step ended.
    pub build: Built,
    /// The canary ran and did not fail as it must.
    pub neutered: bool,
    /// An admitted property passed with its mutant applied.
    pub reproof_passed: bool,
}

/// How the build step ended (CONTRACT.md section 11.8).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Built {
    /// No build step ran (none configured, or not reached yet).
    NotRun,
    /// Exit 0.
    Built,
    /// A catch exit: the code does not build.
    DoesNotBuild,
    /// Any other exit, or killed: the harness, not the patch.
    Broken,
}

impl GateFacts {
    pub fn of(request: &GateRequest, default_cap: u64) -> Self {
        let (sources, guard_hits) = guard_hits(request);
        Self {
            conflicts: request
                .merge_conflicts
                .iter()
                .map(|p| p.as_str().to_owned())
                .collect(),
            seal_matches: request.seal.actual == request.seal.expected,
            debt: freeze_ledger::debt(&request.ledger, request.debt_cap.unwrap_or(default_cap)),
            sources,
            guard_hits,
            binaries: binaries(request),
            suspicious: {
                let markers = ScopeMarkers::default();
                request
                    .suspicious
                    .iter()
                    .filter(|s| {
                        RepoPath::parse(&s.file).is_ok_and(|p| !markers.is_test_adjacent(&p))
                    })
                    .cloned()
                    .collect()
            },
            modified: !request.integrity.is_empty(),
            neutered: request.canary.as_ref().is_some_and(|c| !c.sang()),
            reproof_passed: request
                .reproof
                .iter()
                .any(|r| r.passed(&request.catch_exit_codes)),
            build: match &request.build {
                None => Built::NotRun,
                Some(b) if b.exit_code == Some(0) => Built::Built,
                Some(b) if b.catch_exit_codes.caught(b.exit_code) => Built::DoesNotBuild,
                Some(_) => Built::Broken,
            },
        }
    }
}

/// Whether a path names a compiled or binary file (CONTRACT.md section 12.3): bytecode, a
/// bytecode cache, a shared library, a wheel, an object or an executable format.
pub fn is_compiled_name(path: &RepoPath) -> bool {
    const ENDINGS: [&str; 12] = [
        ".pyc", ".pyo", ".pyd", ".so", ".dylib", ".dll", ".exe", ".whl", ".o", ".a", ".class",
        ".jar",
    ];
    path.segments().any(|s| s == "__pycache__")
        || path
            .segments()
            .last()
            .is_some_and(|base| ENDINGS.iter().any(|e| base.ends_with(e)) || base.contains(".so."))
}

/// The changed files that are compiled or binary: by name, or as the runner saw them.
fn binaries(request: &GateRequest) -> Vec<String> {
    let seen: HashSet<&RepoPath> = request.binaries.iter().collect();
    let mut out: Vec<String> = request
        .changed_files
        .iter()
        .filter(|f| is_compiled_name(f) || seen.contains(f))
        .map(|f| f.as_str().to_owned())
        .collect();
    out.dedup();
    out
}

/// What a gate rule concludes: a fixed disposition and reason, or the router's.
#[derive(Debug, Clone, Copy)]
pub enum Conclusion {
    Fixed(GateDisposition, GateReason),
    Router,
}

/// What a gate rule records and concludes.
#[derive(Debug, Clone, Copy)]
pub struct GateThen {
    pub name: GateRuleName,
    /// When it matches, in the contract's words.
    pub says: &'static str,
    /// The step this rule records in `steps` when the pipeline reaches it, when it has
    /// something to say (the router's rule records the router's own steps).
    pub step: Option<fn(&GateRequest, &GateFacts) -> Option<Step>>,
    pub conclusion: Conclusion,
}

/// One gate rule.
pub type GateRule = rules::Rule<GateFacts, GateThen>;

/// The gate's rules. Ordered, first match wins; the last hands over to the router. Each rule
/// records its step before it is tried, so the answer's `steps` are the steps reached.
pub const GATE_RULES: [GateRule; 12] = [
    GateRule {
        number: 1,
        when: |f| !f.conflicts.is_empty(),
        then: GateThen {
            name: GateRuleName::Merge,
            says: "the head does not merge cleanly into the base",
            step: Some(|r, f| Some(merge_step(r, f))),
            conclusion: Conclusion::Fixed(GateDisposition::Escalate, GateReason::MergeConflict),
        },
    },
    GateRule {
        number: 2,
        when: |f| !f.seal_matches,
        then: GateThen {
            name: GateRuleName::FixtureFault,
            says: "seal.actual != seal.expected",
            step: Some(|r, f| Some(seal_step(r, f))),
            conclusion: Conclusion::Fixed(GateDisposition::Escalate, GateReason::SealMismatch),
        },
    },
    GateRule {
        number: 3,
        when: |f| f.debt.counted > f.debt.cap,
        then: GateThen {
            name: GateRuleName::Debt,
            says: "freeze debt > cap",
            step: Some(|r, f| Some(debt_step(r, f))),
            conclusion: Conclusion::Fixed(GateDisposition::StopQueue, GateReason::DebtOverCap),
        },
    },
    GateRule {
        number: 4,
        when: |f| !f.guard_hits.is_empty(),
        then: GateThen {
            name: GateRuleName::Guard,
            says: "a changed file is, or lies under, a guarded path or a catalog row's source",
            step: Some(|r, f| Some(guard_step(r, f))),
            conclusion: Conclusion::Fixed(
                GateDisposition::Escalate,
                GateReason::GuardedInputEdited,
            ),
        },
    },
    GateRule {
        number: 5,
        when: |f| !f.binaries.is_empty(),
        then: GateThen {
            name: GateRuleName::Binary,
            says: "a changed file is compiled or binary, or made executable",
            step: Some(|r, f| Some(binary_step(r, f))),
            conclusion: Conclusion::Fixed(GateDisposition::Escalate, GateReason::BinaryAdded),
        },
    },
    GateRule {
        number: 6,
        when: |f| !f.suspicious.is_empty(),
        then: GateThen {
            name: GateRuleName::TestAware,
            says: "a line the patch adds to a file that is not test-adjacent matches a [suspicious] pattern",
            step: Some(|r, f| Some(test_aware_step(r, f))),
            conclusion: Conclusion::Fixed(GateDisposition::Escalate, GateReason::TestAwareCode),
        },
    },
    GateRule {
        number: 7,
        when: |f| f.modified,
        then: GateThen {
            name: GateRuleName::Integrity,
            says: "a run changed a tracked file (content, mode, or deleted it) or the fixtures' seal",
            step: Some(integrity_step),
            conclusion: Conclusion::Fixed(GateDisposition::Escalate, GateReason::ModifiedDuringRun),
        },
    },
    GateRule {
        number: 8,
        when: |f| f.build == Built::DoesNotBuild,
        then: GateThen {
            name: GateRuleName::Build,
            says: "the build step exited with a catch ([build] catch)",
            step: Some(build_step),
            conclusion: Conclusion::Fixed(GateDisposition::Block, GateReason::DoesNotBuild),
        },
    },
    GateRule {
        number: 9,
        when: |f| f.build == Built::Broken,
        then: GateThen {
            name: GateRuleName::Build,
            says: "the build step exited with anything but 0 or a catch, or timed out",
            step: None,
            conclusion: Conclusion::Fixed(GateDisposition::Escalate, GateReason::HarnessError),
        },
    },
    GateRule {
        number: 10,
        when: |f| f.neutered,
        then: GateThen {
            name: GateRuleName::Integrity,
            says: "the canary, a check that fails in the base, did not fail with a receipt listing its failure",
            step: Some(canary_step),
            conclusion: Conclusion::Fixed(GateDisposition::Escalate, GateReason::CheckerNeutered),
        },
    },
    GateRule {
        number: 11,
        when: |f| f.reproof_passed,
        then: GateThen {
            name: GateRuleName::Integrity,
            says: "an admitted property passed on the judged tree with its admission mutant applied",
            step: Some(reproof_step),
            conclusion: Conclusion::Fixed(GateDisposition::Escalate, GateReason::CheckerNeutered),
        },
    },
    GateRule {
        number: 12,
        when: |_| true,
        then: GateThen {
            name: GateRuleName::Route,
            says: "otherwise: the router over t0 scope, t1 properties, t2 fixture suite and the scoped freeze",
            step: None,
            conclusion: Conclusion::Router,
        },
    },
];

/// One row of `GET /gate/rules`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct GateRuleRow {
    pub number: u8,
    pub rule: GateRuleName,
    pub when: String,
    /// `null` for `route`: the router's disposition.
    pub disposition: Option<GateDisposition>,
    /// `null` for `route`: the router's attribution.
    pub reason: Option<GateReason>,
    /// The exit codes this rule can give.
    pub exit_codes: Vec<u8>,
}

/// The gate's rules as `GET /gate/rules` lists them, from [`GATE_RULES`].
pub fn rule_rows() -> Vec<GateRuleRow> {
    GATE_RULES
        .iter()
        .map(|r| {
            let (disposition, reason, exit_codes) = match r.then.conclusion {
                Conclusion::Fixed(d, why) => (Some(d), Some(why), vec![d.exit_code()]),
                Conclusion::Router => (None, None, vec![0, 1, 2]),
            };
            GateRuleRow {
                number: r.number,
                rule: r.then.name,
                when: r.then.says.to_owned(),
                disposition,
                reason,
                exit_codes,
            }
        })
        .collect()
}

// ---------------------------------------------------------------------------------------------
// Steps: what each step saw and concluded

/// A guarded path the patch edits.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct GuardHit {
    /// The changed file.
    pub file: String,
    /// The guarded path (or property source) it is, or lies under.
    pub guarded_by: String,
    /// The catalog property whose `source` this is, when it is one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub property: Option<String>,
}

/// An open ledger row, as the debt step reports it (the rows to retire first).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct OpenRow {
    /// `property` or `test`.
    pub kind: String,
    pub id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub commits_since_open: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retire_by_commit_count: Option<u64>,
    /// Its commit budget is spent: it counts twice.
    pub budget_spent: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub owner: Option<String>,
}

/// One step of the pipeline, in order: what it saw, and what it concluded (`summary`, one
/// plain sentence). Only the steps reached are listed: a gate rule that decides stops the
/// pipeline.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(tag = "step", rename_all = "kebab-case")]
pub enum Step {
    /// What is judged: the merge of the head into the base (section 12.1).
    Merge {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        judged: Option<Judged>,
        /// The files the merge conflicts on.
        conflicts: Vec<String>,
        summary: String,
    },
    /// The fixture seal computed in the worktree against the base's expected seal.
    Seal {
        actual: String,
        expected: String,
        #[serde(rename = "match")]
        matches: bool,
        summary: String,
    },
    /// Freeze debt from the base's ledger.
    Debt {
        open: u64,
        spent: u64,
        counted: u64,
        cap: u64,
        over_cap: bool,
        /// Every open row, spent budgets first.
        open_rows: Vec<OpenRow>,
        summary: String,
    },
    /// Guarded inputs the patch edits.
    Guard {
        guarded: Vec<String>,
        /// Property sources (from the catalog), guarded like it.
        sources: Vec<String>,
        hits: Vec<GuardHit>,
        summary: String,
    },
    /// Compiled or binary files the patch changes (or makes executable): code no review can
    /// read, which the tests might run instead of the source.
    Binary {
        binaries: Vec<String>,
        summary: String,
    },
    /// Lines the patch adds to code (not to tests) that may behave differently under test.
    TestAware {
        /// At most 100 are listed; `count` is all of them.
        lines: Vec<SuspiciousLine>,
        count: usize,
        summary: String,
    },
    /// What the runs changed that they may not (section 11.3): listed once anything ran.
    Integrity {
        findings: Vec<IntegrityFinding>,
        /// Processes the runs left behind, each killed (section 11.4).
        #[serde(default, skip_serializing_if = "is_zero")]
        left_behind: u64,
        summary: String,
    },
    /// The build step (section 11.8), when one ran.
    Build {
        exit_code: Option<u8>,
        /// Its last lines of output.
        tail: String,
        summary: String,
    },
    /// The canary (section 11.5), when one ran: `failed` is whether it still failed as it
    /// must.
    Canary {
        exit_code: Option<u8>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        receipt: Option<Receipt>,
        failed: bool,
        summary: String,
    },
    /// The re-proofs (section 11.5), when any was tried.
    Reproof {
        tried: Vec<Reproof>,
        summary: String,
    },
    /// t0: test-adjacent changed files.
    Scope {
        scope_hits: Vec<String>,
        summary: String,
    },
    /// t1: the strong-property quorum (rules 3-7 of section 2).
    Properties {
        /// False on a scope hit: the property tier cannot vouch for the patch.
        ran: bool,
        /// The routed `property_check`.
        verdict: Verdict,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        tier: Option<TierVerdict>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        outcome: Option<Outcome>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        reason: Option<Reason>,
        /// The quorum's rule number (3-7).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        quorum_rule: Option<u8>,
        /// Every catalog property, in catalog order (its runs as counted: a run its receipt
        /// does not vouch for is `null`).
        properties: Vec<PropertyReport>,
        /// Whether the runs had receipts (section 11.1): absent when nothing ran.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        receipts: Option<Receipts>,
        /// The runs whose receipt does not vouch for their exit code, counted as `null`.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        unvouched: Vec<Unvouched>,
        /// On an empty quorum: the changed files no strong property observes (and that are
        /// not inert), the first 10.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        unobserved: Vec<String>,
        summary: String,
    },
    /// t2: the fixture suite.
    Fixtures {
        ran: bool,
        /// The routed `fixture_check`.
        verdict: Verdict,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        tier: Option<TierVerdict>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        exit_code: Option<u8>,
        /// Failed tests that count (not frozen).
        failed_tests: Vec<String>,
        /// Failed tests discarded because an open ledger row freezes them.
        discarded: Vec<String>,
        /// Whether the suite had a receipt (section 11.1): absent when it did not run.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        receipts: Option<Receipts>,
        /// Why its receipt does not vouch for its exit code, when it does not.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        gap: Option<ReceiptGap>,
        /// Census tests that passed on the base and did not run here (at most 100).
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        vanished: Vec<String>,
        #[serde(default, skip_serializing_if = "is_zero")]
        vanished_count: u64,
        summary: String,
    },
    /// The scoped freeze from the ledger's open test rows.
    Freeze {
        /// The routed `flaky_freeze`.
        verdict: Verdict,
        /// Frozen tests that cover a changed file.
        matched: Vec<String>,
        summary: String,
    },
    /// The router over the three verdicts.
    Router {
        rule: RuleName,
        disposition: Disposition,
        attribution: Attribution,
        summary: String,
    },
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// Whether a check's runs had receipts (CONTRACT.md section 11.1).
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Hash,
    Serialize,
    Deserialize,
    ToSchema,
    IntoStaticStr,
    VariantArray,
)]
#[serde(rename_all = "kebab-case")]
#[strum(serialize_all = "kebab-case")]
pub enum Receipts {
    /// The command writes a JUnit report to `{junit}`: a run counts only with it.
    On,
    /// No `{junit}` in the command: exit codes are read as they are.
    Off,
}

/// A property run its receipt does not vouch for: counted as `null`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct Unvouched {
    pub property: String,
    /// 1-based.
    pub run: u32,
    /// The exit code it gave.
    pub exit_code: Option<u8>,
    pub gap: ReceiptGap,
}

/// The gate's decision.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GateDecision {
    pub disposition: GateDisposition,
    pub rule: GateRuleName,
    pub reason: GateReason,
    /// The three routed verdicts; `None` when a gate rule decided first.
    pub evidence: Option<Verdicts>,
    pub steps: Vec<Step>,
}

impl GateDecision {
    pub fn exit_code(&self) -> u8 {
        self.disposition.exit_code()
    }
}

/// The `/gate` answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct GateAnswer {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub patch_id: Option<String>,
    pub disposition: GateDisposition,
    /// The gate rule that decided: `fixture-fault`, `debt`, `guard` or `route`.
    pub rule: GateRuleName,
    /// The gate rule's reason, or (rule `route`) the router's attribution.
    pub reason: GateReason,
    /// 0 MERGE_OK, 1 BLOCK, 2 ESCALATE, 3 STOP_QUEUE.
    pub exit_code: u8,
    pub decision_id: String,
    /// The three routed verdicts (a `/route` body a merge bot can replay); absent when a gate
    /// rule decided first.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub evidence: Option<Verdicts>,
    /// Each step reached, in pipeline order.
    pub steps: Vec<Step>,
    /// What was judged: the base, head and merged tree ids (when the facts say).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub judged: Option<Judged>,
    /// How the runs were isolated (when the facts say): `off` means the code under test ran
    /// with the runner's user and files.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sandbox: Option<SandboxBackend>,
    /// The failing cases the reports gave (section 11.8): at most 20, each clipped to 2 KiB.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub failures: Vec<FailingCase>,
    /// Where the runner's time went, by phase, in milliseconds (when the facts say).
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub timings_ms: std::collections::BTreeMap<String, u64>,
}

impl GateDecision {
    pub fn answer(&self, request: &GateRequest, decision_id: String) -> GateAnswer {
        GateAnswer {
            patch_id: request.patch_id.clone(),
            disposition: self.disposition,
            rule: self.rule,
            reason: self.reason,
            exit_code: self.exit_code(),
            decision_id,
            evidence: self.evidence,
            steps: self.steps.clone(),
            judged: request.judged.clone(),
            sandbox: request.sandbox,
            failures: request.failures.clone(),
            timings_ms: request.timings_ms.clone(),
        }
    }
}

fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

fn open_rows(ledger: &[FreezeRow]) -> Vec<OpenRow> {
    let mut rows: Vec<OpenRow> = ledger
        .iter()
        .filter(|r| r.state == LedgerState::Open)
        .map(|r| {
            let (kind, id) = match &r.frozen {
                Frozen::Property(id) => ("property", id.clone()),
                Frozen::Test { id, .. } => ("test", id.clone()),
            };
            OpenRow {
                kind: kind.to_owned(),
                id,
                commits_since_open: r.commits_since_open,
                retire_by_commit_count: r.retire_by_commit_count,
                budget_spent: r.budget_spent(),
                owner: r.owner.clone(),
            }
        })
        .collect();
    // Spent budgets first: they are the rows to retire first (stable otherwise).
    rows.sort_by_key(|r| !r.budget_spent);
    rows
}

/// Changed files that are, or lie under, a guarded path or a property's source: one walk down
/// each changed file (linear in the input).
fn guard_hits(request: &GateRequest) -> (Vec<String>, Vec<GuardHit>) {
    // Guards, then every source, with the property that names it.
    let mut prefixes: Vec<RepoPath> = request.guarded.clone();
    let mut owner: Vec<Option<&str>> = vec![None; prefixes.len()];
    let mut sources = Vec::new();
    for p in &request.catalog {
        for s in &p.source {
            prefixes.push(s.clone());
            owner.push(Some(p.id.as_str()));
            sources.push(s.as_str().to_owned());
        }
    }
    let trie = PrefixTrie::new(&prefixes);
    let hits = request
        .changed_files
        .iter()
        .filter_map(|f| {
            let i = trie.prefix_of(f)?;
            Some(GuardHit {
                file: f.as_str().to_owned(),
                guarded_by: prefixes.get(i)?.as_str().to_owned(),
                property: owner.get(i).copied().flatten().map(str::to_owned),
            })
        })
        .collect();
    (sources, hits)
}

fn seal_step(request: &GateRequest, facts: &GateFacts) -> Step {
    Step::Seal {
        actual: request.seal.actual.to_hex(),
        expected: request.seal.expected.to_hex(),
        matches: facts.seal_matches,
        summary: if facts.seal_matches {
            "the fixtures match the base commit's expected seal".to_owned()
        } else {
            "the fixtures do not match the base commit's expected seal: a fixture was edited, added or removed".to_owned()
        },
    }
}

fn debt_step(request: &GateRequest, facts: &GateFacts) -> Step {
    let debt = facts.debt;
    let over_cap = debt.counted > debt.cap;
    Step::Debt {
        open: debt.open,
        spent: debt.spent,
        counted: debt.counted,
        cap: debt.cap,
        over_cap,
        open_rows: open_rows(&request.ledger),
        summary: format!(
            "freeze debt {} ({} open, {} with a spent budget) against a cap of {}{}",
            debt.counted,
            debt.open,
            debt.spent,
            debt.cap,
            if over_cap {
                ": the queue stops until ledger rows are retired"
            } else {
                ""
            }
        ),
    }
}

fn guard_step(request: &GateRequest, facts: &GateFacts) -> Step {
    let hits = &facts.guard_hits;
    Step::Guard {
        guarded: request
            .guarded
            .iter()
            .map(|g| g.as_str().to_owned())
            .collect(),
        sources: facts.sources.clone(),
        summary: if hits.is_empty() {
            "the patch edits no guarded input".to_owned()
        } else {
            format!(
                "the patch edits {}: a patch is never judged by rules it brought along",
                plural(hits.len(), "guarded input", "guarded inputs")
            )
        },
        hits: hits.clone(),
    }
}

fn merge_step(request: &GateRequest, facts: &GateFacts) -> Step {
    Step::Merge {
        judged: request.judged.clone(),
        conflicts: facts.conflicts.clone(),
        summary: match (&request.judged, facts.conflicts.len()) {
            (_, 0) if request.judged.is_some() => {
                "the head merges cleanly into the base: the merged tree is judged".to_owned()
            }
            (_, 0) => "the facts do not say which tree was judged".to_owned(),
            (_, n) => format!(
                "the head does not merge cleanly into the base ({}): rebase or merge the base into the patch, resolve them, and gate again",
                plural(n, "conflicting file", "conflicting files")
            ),
        },
    }
}

fn test_aware_step(_: &GateRequest, facts: &GateFacts) -> Step {
    let count = facts.suspicious.len();
    Step::TestAware {
        lines: facts.suspicious.iter().take(100).cloned().collect(),
        count,
        summary: if count == 0 {
            "no line the patch adds to code looks for a test runner".to_owned()
        } else {
            format!(
                "{} the patch adds to code (not to tests) {} a test runner, or the way out of one: code that behaves differently under test is the one attack no run can see",
                plural(count, "line", "lines"),
                if count == 1 { "names" } else { "name" }
            )
        },
    }
}

fn integrity_step(request: &GateRequest, _: &GateFacts) -> Option<Step> {
    let ran = request.build.is_some()
        || request.left_behind > 0
        || request.canary.is_some()
        || !request.reproof.is_empty()
        || !request.property_runs.is_empty()
        || request.fixture_suite.is_some();
    if !ran && request.integrity.is_empty() {
        return None;
    }
    let findings = request.integrity.clone();
    let left = match request.left_behind {
        0 => String::new(),
        n => format!(
            "; {} left behind by runs, killed before any report was read",
            plural(
                usize::try_from(n).unwrap_or(usize::MAX),
                "process",
                "processes"
            )
        ),
    };
    Some(Step::Integrity {
        left_behind: request.left_behind,
        summary: match findings.first() {
            None => format!("no run changed a tracked file or the fixtures{left}"),
            Some(f) => format!(
                "{} changed {}{}: evidence from a tree the code under test rewrote proves nothing, and nothing later ran",
                f.run,
                plural(
                    usize::try_from(f.count).unwrap_or(usize::MAX),
                    "tracked file",
                    "tracked files"
                ),
                if f.seal_changed {
                    " and the fixtures' seal"
                } else {
                    ""
                }
            ),
        },
        findings,
    })
}

fn build_step(request: &GateRequest, facts: &GateFacts) -> Option<Step> {
    let build = request.build.as_ref()?;
    Some(Step::Build {
        exit_code: build.exit_code,
        tail: build.tail.clone(),
        summary: match facts.build {
            Built::Built | Built::NotRun => "the judged tree builds".to_owned(),
            Built::DoesNotBuild => format!(
                "the judged tree does not build (exit {}): the patch is wrong, whatever any property says",
                build.exit_code.unwrap_or_default()
            ),
            Built::Broken => format!(
                "the build step {}: a broken harness, not a verdict on the patch",
                build
                    .exit_code
                    .map_or("was killed (timeout or signal)".to_owned(), |c| format!(
                        "exited {c}, which is not a catch"
                    ))
            ),
        },
    })
}

fn canary_step(request: &GateRequest, _: &GateFacts) -> Option<Step> {
    let canary = request.canary.as_ref()?;
    let sang = canary.sang();
    Some(Step::Canary {
        exit_code: canary.exit_code,
        receipt: canary.receipt.clone(),
        failed: sang,
        summary: if sang {
            "the canary still fails, with its failure listed: the checker can fail".to_owned()
        } else {
            format!(
                "the canary, which fails in the base, {} here: something in this tree switches the checker off, and no pass from it counts",
                match (canary.exit_code, &canary.receipt) {
                    (None, _) => "was killed".to_owned(),
                    (Some(0), _) => "exited 0".to_owned(),
                    (Some(c), None) => format!("exited {c} without a report"),
                    (Some(c), Some(r)) if r.failed == 0 => {
                        format!("exited {c} but its report lists no failure")
                    }
                    (Some(c), Some(_)) => format!("exited {c}, which is not a catch"),
                }
            )
        },
    })
}

fn reproof_step(request: &GateRequest, facts: &GateFacts) -> Option<Step> {
    if request.reproof.is_empty() {
        return None;
    }
    let tried = request.reproof.clone();
    let passed: Vec<&str> = tried
        .iter()
        .filter(|r| r.passed(&request.catch_exit_codes))
        .map(|r| r.property.as_str())
        .collect();
    Some(Step::Reproof {
        summary: if facts.reproof_passed {
            format!(
                "{} passed on this tree with its admission mutant applied: here it can no longer fail, so its pass proves nothing",
                passed.join(", ")
            )
        } else {
            format!(
                "{} tried with {} mutant applied: none passed",
                plural(tried.len(), "admitted property", "admitted properties"),
                if tried.len() == 1 { "its" } else { "their" }
            )
        },
        tried,
    })
}

fn binary_step(_: &GateRequest, facts: &GateFacts) -> Step {
    Step::Binary {
        binaries: facts.binaries.clone(),
        summary: if facts.binaries.is_empty() {
            "the patch adds no compiled or binary file".to_owned()
        } else {
            format!(
                "the patch adds {}: code no review can read, which a test might load instead of the source",
                plural(
                    facts.binaries.len(),
                    "compiled or binary file",
                    "compiled or binary files"
                )
            )
        },
    }
}

/// Decides. Pure and deterministic: the same facts always get the same decision. The rules
/// are tried in order, each recording its step first; the first that matches concludes.
pub fn decide_gate(request: &GateRequest, default_cap: u64) -> GateDecision {
    let facts = GateFacts::of(request, default_cap);
    let mut steps = Vec::with_capacity(8);
    for rule in &GATE_RULES {
        if let Some(step) = rule.then.step.and_then(|step| step(request, &facts)) {
            steps.push(step);
        }
        if !(rule.when)(&facts) {
            continue;
        }
        return match rule.then.conclusion {
            Conclusion::Fixed(disposition, reason) => GateDecision {
                disposition,
                rule: rule.then.name,
                reason,
                evidence: None,
                steps,
            },
            Conclusion::Router => routed(request, facts.debt, steps),
        };
    }
    // The last rule always matches; were it ever not to, fail closed on the router (which
    // itself fails closed).
    routed(request, facts.debt, steps)
}

/// The last rule: the router over the three derived verdicts, after the steps so far.
fn routed(request: &GateRequest, debt: Debt, mut steps: Vec<Step>) -> GateDecision {
    let (evidence, route_steps) = route_verdicts(request, debt);
    steps.extend(route_steps);
    let decision = route::route(&evidence);
    steps.push(Step::Router {
        rule: decision.rule,
        disposition: decision.disposition,
        attribution: decision.attribution,
        summary: format!(
            "router rule {} over property_check={}, fixture_check={}, flaky_freeze={}",
            decision.rule.as_str(),
            evidence.property_check,
            evidence.fixture_check,
            evidence.flaky_freeze
        ),
    });
    GateDecision {
        disposition: decision.disposition.into(),
        rule: GateRuleName::Route,
        reason: decision.attribution.into(),
        evidence: Some(evidence),
        steps,
    }
}

/// The changed files no strong property's locality covers and no `inert` path covers,
/// sorted, at most 10 (a path may be 4 KiB; the answer stays small): what an empty quorum
/// leaves unobserved.
fn unobserved(request: &GateRequest) -> Vec<String> {
    let strong: Vec<&RepoPath> = request
        .catalog
        .iter()
        .filter(|p| p.strength == crate::core::catalog::Strength::Strong)
        .flat_map(|p| &p.locality)
        .collect();
    let mut out: Vec<String> = request
        .changed_files
        .iter()
        .filter(|f| !strong.iter().any(|p| p.covers(f)))
        .filter(|f| !request.inert.iter().any(|p| p.covers(f)))
        .map(|f| f.as_str().to_owned())
        .collect();
    out.sort();
    out.truncate(10);
    out
}

/// The three verdicts the last rule routes, and the steps that derived them (scope, properties,
/// fixtures, freeze).
fn route_verdicts(request: &GateRequest, debt: Debt) -> (Verdicts, Vec<Step>) {
    let mut steps = Vec::with_capacity(4);
    // t0 scope.
    let markers = ScopeMarkers::default();
    let shadows: HashSet<&RepoPath> = request.shadows.iter().collect();
    let scope_hits: Vec<String> = request
        .changed_files
        .iter()
        .filter(|f| markers.is_scope_hit(f) || shadows.contains(f))
        .map(|f| f.as_str().to_owned())
        .collect();
    let scope_hit = !scope_hits.is_empty();
    steps.push(Step::Scope {
        summary: if scope_hit {
            format!(
                "{} test-adjacent or part of the test toolchain: the property tier cannot vouch for this patch and is skipped",
                plural(scope_hits.len(), "changed file is", "changed files are")
            )
        } else {
            "no changed file is test-adjacent or part of the test toolchain: the property tier runs".to_owned()
        },
        scope_hits,
    });

    // t1 properties, each run counted with its receipt.
    let (runs, unvouched) = counted_runs(request);
    let receipts =
        (!request.property_runs.is_empty()).then_some(if request.property_receipts.is_some() {
            Receipts::On
        } else {
            Receipts::Off
        });
    let ballot = quorum::ballot(
        &request.changed_files,
        &request.catalog,
        &runs,
        &request.catch_exit_codes,
        &request.ledger,
        request.require_admission,
    );
    // Every changed file inert, and no property observes any of them: the tier does not
    // apply, and the suite decides.
    let inert_only = !request.changed_files.is_empty()
        && request
            .changed_files
            .iter()
            .all(|f| request.inert.iter().any(|p| p.covers(f)))
        && !ballot.properties.iter().any(|p| p.in_locality);
    let property_check = if scope_hit || inert_only {
        let verdict = if scope_hit {
            Verdict::Unknown
        } else {
            Verdict::Pass
        };
        steps.push(Step::Properties {
            ran: false,
            verdict,
            tier: None,
            outcome: None,
            reason: None,
            quorum_rule: None,
            properties: ballot.properties,
            receipts: None,
            unvouched: Vec::new(),
            unobserved: Vec::new(),
            summary: if scope_hit {
                "skipped on a scope hit: property_check is unknown".to_owned()
            } else {
                format!(
                    "does not apply: {} inert (`inert` in the config) and no property observes them; property_check is pass and the suite decides",
                    plural(request.changed_files.len(), "changed file is", "changed files are")
                )
            },
        });
        verdict
    } else {
        // Gate rules 1 and 2 were the quorum's rules 1 and 2.
        let (outcome, reason, number) = quorum::first_rule(&ballot.facts(true, debt), 3);
        let (verdict, tier) = match (outcome, reason) {
            (Outcome::Promote, _) => (Verdict::Pass, TierVerdict::Pass),
            (_, Reason::StableFailure) => (Verdict::Fail, TierVerdict::Caught),
            (_, Reason::MissingResults) => (Verdict::Missing, TierVerdict::Error),
            _ => (Verdict::Unknown, TierVerdict::Error),
        };
        let unproven = ballot
            .properties
            .iter()
            .filter(|p| p.unproven && matches!(p.vote, quorum::Vote::Yes | quorum::Vote::No))
            .count();
        let unobserved = if reason == Reason::EmptyQuorum {
            unobserved(request)
        } else {
            Vec::new()
        };
        let summary = format!(
            "quorum {} ({}): property_check is {verdict}{}{}",
            outcome.as_str(),
            reason.as_str(),
            if unproven == 0 {
                String::new()
            } else {
                format!(
                    "; {} without an admission proof voted as weak",
                    plural(unproven, "strong property", "strong properties")
                )
            },
            match (receipts, unvouched.len()) {
                (Some(Receipts::Off), _) =>
                    "; receipts: off (exit codes read as they are)".to_owned(),
                (_, 0) => String::new(),
                (_, n) => format!(
                    "; {} without a receipt that vouches for it counted as null",
                    plural(n, "run", "runs")
                ),
            }
        );
        steps.push(Step::Properties {
            ran: true,
            verdict,
            tier: Some(tier),
            outcome: Some(outcome),
            reason: Some(reason),
            quorum_rule: Some(number),
            properties: ballot.properties,
            receipts,
            unvouched,
            summary: match unobserved.len() {
                0 => summary,
                _ => format!(
                    "{summary}; changed files no strong property observes: see `unobserved`"
                ),
            },
            unobserved,
        });
        verdict
    };

    // t2 fixture suite.
    let frozen_tests = frozen_tests(request);
    let fixtures = fixture_step(
        request.fixture_suite.as_ref(),
        !scope_hit && property_check != Verdict::Pass,
        &frozen_tests,
    );
    let fixture_check = match &fixtures {
        Step::Fixtures { verdict, .. } => *verdict,
        _ => Verdict::Missing,
    };
    steps.push(fixtures);

    // The scoped freeze.
    let freeze = derive_freeze(&request.changed_files, &frozen_tests);
    steps.push(Step::Freeze {
        verdict: freeze.derived,
        summary: if freeze.matched.is_empty() {
            "no frozen test covers a changed file: the freeze is irrelevant to this patch"
                .to_owned()
        } else {
            format!(
                "{} a changed file: its verdict on this patch is unknown",
                plural(
                    freeze.matched.len(),
                    "frozen test covers",
                    "frozen tests cover"
                )
            )
        },
        matched: freeze.matched,
    });
    let verdicts = Verdicts {
        property_check,
        fixture_check,
        flaky_freeze: freeze.derived,
    };
    (verdicts, steps)
}

/// The property runs as they count (CONTRACT.md section 11.1): with receipts on, a run its
/// receipt does not vouch for is `null`, and listed.
fn counted_runs(request: &GateRequest) -> (HashMap<String, Vec<RunOutcome>>, Vec<Unvouched>) {
    let Some(receipts) = &request.property_receipts else {
        return (request.property_runs.clone(), Vec::new());
    };
    let mut unvouched = Vec::new();
    // Batched: whether run n of the batch listed a failure in some property's cases.
    let most = request
        .property_runs
        .values()
        .map(Vec::len)
        .max()
        .unwrap_or(0);
    let failed_in: Vec<bool> = (0..most)
        .map(|i| {
            receipts.values().any(|r| {
                r.get(i)
                    .and_then(Option::as_ref)
                    .is_some_and(|r| r.failed > 0)
            })
        })
        .collect();
    let mut ids: Vec<(&String, &Vec<RunOutcome>)> = request.property_runs.iter().collect();
    ids.sort_by_key(|(id, _)| *id);
    let runs = ids
        .into_iter()
        .map(|(id, given)| {
            let theirs = receipts.get(id);
            let runs = given
                .iter()
                .enumerate()
                .map(|(i, run)| {
                    let receipt = theirs.and_then(|r| r.get(i)).and_then(Option::as_ref);
                    let own = if request.batched {
                        in_batch(
                            *run,
                            receipt,
                            &request.catch_exit_codes,
                            failed_in.get(i).copied().unwrap_or(false),
                        )
                    } else {
                        *run
                    };
                    let (run_counted, gap) =
                        counted(own, receipt, &request.catch_exit_codes, false);
                    if let Some(gap) = gap {
                        unvouched.push(Unvouched {
                            property: id.clone(),
                            run: u32::try_from(i + 1).unwrap_or(u32::MAX),
                            exit_code: *run,
                            gap,
                        });
                    }
                    run_counted
                })
                .collect();
            (id.clone(), runs)
        })
        .collect();
    (runs, unvouched)
}

/// The ledger's open frozen tests.
fn frozen_tests(request: &GateRequest) -> Vec<FrozenTest> {
    request
        .ledger
        .iter()
        .filter(|r| r.state == LedgerState::Open)
        .filter_map(|r| match &r.frozen {
            Frozen::Test { id, covers } => Some(FrozenTest {
                id: id.clone(),
                covers: covers.clone(),
            }),
            Frozen::Property(_) => None,
        })
        .collect()
}

/// The t2 step: `fixture_check` from the suite's exit code, its failed tests and the frozen
/// tests. `t1_stopped`: t1 ran and was not a pass, so an absent suite was skipped, not lost.
fn fixture_step(
    suite: Option<&FixtureSuite>,
    t1_stopped: bool,
    frozen_tests: &[FrozenTest],
) -> Step {
    let Some(suite) = suite else {
        let (verdict, summary) = if t1_stopped {
            (
                Verdict::Unknown,
                "not run: the ladder stops at the first tier that does not pass",
            )
        } else {
            (
                Verdict::Missing,
                "the fixture suite did not run although nothing stopped it: its verdict is missing",
            )
        };
        return Step::Fixtures {
            ran: false,
            verdict,
            tier: None,
            exit_code: None,
            failed_tests: Vec::new(),
            discarded: Vec::new(),
            receipts: None,
            gap: None,
            vanished: Vec::new(),
            vanished_count: 0,
            summary: summary.to_owned(),
        };
    };
    let frozen: HashSet<&str> = frozen_tests.iter().map(|t| t.id.as_str()).collect();
    let listed = suite.failed_tests.as_deref().unwrap_or_default();
    let (mut discarded, mut failed): (Vec<String>, Vec<String>) = listed
        .iter()
        .cloned()
        .partition(|id| frozen.contains(id.as_str()));
    let is_catch = |c: u8| suite.catch_exit_codes.contains(c);
    // The suite's skips are the census's to judge (section 11.2), not each run's.
    let gap = suite
        .receipt
        .as_ref()
        .and_then(|r| counted(suite.exit_code, r.as_ref(), &suite.catch_exit_codes, true).1);
    let (verdict, tier, summary) = match suite.exit_code {
        // A report that disagrees with itself is read as neither a pass nor a failure
        // (section 11.1): nothing in it is discarded either.
        _ if suite.report_disagrees.is_some() => {
            failed = listed.to_vec();
            discarded.clear();
            (
                Verdict::Unknown,
                TierVerdict::Error,
                format!(
                    "the suite's report disagrees with itself ({}): no verdict, and no failure is discarded",
                    suite.report_disagrees.as_deref().unwrap_or_default()
                ),
            )
        }
        // No receipt vouches for the exit code: neither a pass nor a failure.
        _ if gap.is_some() => {
            failed = listed.to_vec();
            discarded.clear();
            (
                Verdict::Unknown,
                TierVerdict::Error,
                format!(
                    "the suite {} but its receipt does not vouch for it ({}): no verdict",
                    suite
                        .exit_code
                        .map_or("was killed".to_owned(), |c| format!("exited {c}")),
                    gap.map(ReceiptGap::as_str).unwrap_or_default()
                ),
            )
        }
        // Tests the base ran did not run: whatever else the suite says, it did not say it
        // about the tests the base has.
        _ if suite.vanished_count > 0 => {
            failed = listed.to_vec();
            discarded.clear();
            (
                Verdict::Unknown,
                TierVerdict::Error,
                format!(
                    "{} that passed on the base did not run here (absent from the report, or skipped): no verdict",
                    plural(
                        usize::try_from(suite.vanished_count).unwrap_or(usize::MAX),
                        "census test",
                        "census tests"
                    )
                ),
            )
        }
        Some(0) if listed.is_empty() => (
            Verdict::Pass,
            TierVerdict::Pass,
            if suite.receipt.is_none() {
                "the fixture suite passed (receipts: off: its exit code read as it is)".to_owned()
            } else {
                "the fixture suite passed, with a receipt".to_owned()
            },
        ),
        // The exit code and the report disagree: neither is read as the other.
        Some(0) => (
            Verdict::Unknown,
            TierVerdict::Error,
            format!(
                "the suite exited 0 but its report lists {}: the evidence disagrees with itself",
                plural(listed.len(), "failed test", "failed tests")
            ),
        ),
        Some(c) if is_catch(c) && !listed.is_empty() && failed.is_empty() => match &suite.rerun {
            Some(rerun) if rerun.passed() => (
                Verdict::Pass,
                TierVerdict::Caught,
                format!(
                    "every failure is a frozen test ({} discarded), and the suite re-run without them passed: fixture_check is pass",
                    discarded.len()
                ),
            ),
            Some(rerun) => {
                failed = std::mem::take(&mut discarded);
                (
                    Verdict::Fail,
                    TierVerdict::Caught,
                    format!(
                        "the report blames only frozen tests, but the suite re-run without them did not pass ({}): the failures count",
                        rerun
                            .exit_code
                            .map_or("killed".to_owned(), |c| format!("exit {c}"))
                    ),
                )
            }
            None => {
                failed = std::mem::take(&mut discarded);
                (
                    Verdict::Fail,
                    TierVerdict::Caught,
                    "the report blames only frozen tests, but no re-run without them was reported (`[suite] deselect`): nothing is discarded, the failures count".to_owned(),
                )
            }
        },
        Some(c) if is_catch(c) => (
            Verdict::Fail,
            TierVerdict::Caught,
            if failed.is_empty() {
                format!("the fixture suite failed (exit {c})")
            } else {
                format!(
                    "the fixture suite failed (exit {c}): {}",
                    plural(failed.len(), "failed test counts", "failed tests count")
                )
            },
        ),
        Some(c) => (
            Verdict::Unknown,
            TierVerdict::Error,
            format!("the suite exited {c}, which is not a catch: a broken harness, not a verdict"),
        ),
        None => (
            Verdict::Unknown,
            TierVerdict::Error,
            "the suite was killed (timeout or signal): no verdict".to_owned(),
        ),
    };
    Step::Fixtures {
        ran: true,
        verdict,
        tier: Some(tier),
        exit_code: suite.exit_code,
        failed_tests: failed,
        discarded,
        receipts: Some(if suite.receipt.is_some() {
            Receipts::On
        } else {
            Receipts::Off
        }),
        gap,
        vanished: suite.vanished.clone(),
        vanished_count: suite.vanished_count,
        summary,
    }
}

// ---------------------------------------------------------------------------------------------
// What the runner does next

/// What the gate needs next, given the facts gathered so far. The runner only executes this and
/// reports what it saw; it never re-derives a decision (CONTRACT.md section 8.2's order: the
/// properties, unless a scope hit; then the suite, unless t1 did not pass).
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Hash,
    Serialize,
    Deserialize,
    ToSchema,
    IntoStaticStr,
    VariantArray,
)]
#[serde(rename_all = "snake_case")]
#[strum(serialize_all = "snake_case")]
pub enum NextStep {
    /// Run `property_ids`, each `runs` times, and report them as `property_runs`.
    Runs,
    /// Run the fixture suite and report it as `fixture_suite`.
    Suite,
    /// Run the suite again with the tests in `deselect` left out (the frozen tests it
    /// failed), and report it as `fixture_suite.rerun` (section 12.4).
    Rerun,
    /// Every fact the decision needs is in: decide (`POST /gate`).
    Decide,
}

/// The `/gate/next` answer: what to run next, and what the gate would answer on the facts
/// gathered so far (the answer to expect when `next` is `decide`). Not a decision: no
/// `decision_id`, nothing logged.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct GateNext {
    pub next: NextStep,
    /// With `runs`: the properties to run, in catalog order (in locality, voting, not yet
    /// run); empty otherwise.
    pub property_ids: Vec<String>,
    /// With `rerun`: the frozen tests to leave out; empty otherwise.
    #[serde(default)]
    pub deselect: Vec<String>,
    pub disposition: GateDisposition,
    pub rule: GateRuleName,
    pub reason: GateReason,
    /// The steps reached on these facts.
    pub steps: Vec<Step>,
}

/// What the gate needs next. Pure: the runner asks this (or a server's `POST /gate/next`)
/// before each step, so a local and a remote gate run the same steps.
pub fn next_step(request: &GateRequest, default_cap: u64) -> GateNext {
    let decision = decide_gate(request, default_cap);
    let mut deselect = Vec::new();
    let (next, property_ids) = if decision.rule != GateRuleName::Route {
        (NextStep::Decide, Vec::new())
    } else {
        let t1 = decision.steps.iter().find_map(|s| match s {
            Step::Properties {
                ran,
                verdict,
                properties,
                ..
            } => Some((*ran, *verdict, properties)),
            _ => None,
        });
        let unrun: Vec<String> = t1
            .filter(|(ran, _, _)| *ran)
            .map(|(_, _, properties)| {
                properties
                    .iter()
                    .filter(|p| p.in_locality && p.vote == quorum::Vote::No)
                    .filter(|p| !request.property_runs.contains_key(&p.id))
                    .map(|p| p.id.clone())
                    .collect()
            })
            .unwrap_or_default();
        // t1 skipped on a scope hit, or passed: the suite runs.
        let suite_due = request.fixture_suite.is_none()
            && t1.is_none_or(|(ran, verdict, _)| !ran || verdict == Verdict::Pass);
        if !unrun.is_empty() {
            (NextStep::Runs, unrun)
        } else if suite_due {
            (NextStep::Suite, Vec::new())
        } else if let Some(frozen) = rerun_due(request) {
            deselect = frozen;
            (NextStep::Rerun, Vec::new())
        } else {
            (NextStep::Decide, Vec::new())
        }
    };
    GateNext {
        next,
        property_ids,
        deselect,
        disposition: decision.disposition,
        rule: decision.rule,
        reason: decision.reason,
        steps: decision.steps,
    }
}

/// The frozen tests to leave out of a re-run, when the suite failed with a catch, its report
/// blames only open frozen tests, and it was not re-run yet (section 12.4).
fn rerun_due(request: &GateRequest) -> Option<Vec<String>> {
    let suite = request.fixture_suite.as_ref()?;
    let listed = suite.failed_tests.as_deref()?;
    let catch = suite
        .exit_code
        .is_some_and(|c| c != 0 && suite.catch_exit_codes.contains(c));
    let vouched = suite.receipt.as_ref().is_none_or(|r| {
        counted(suite.exit_code, r.as_ref(), &suite.catch_exit_codes, true)
            .1
            .is_none()
    });
    if suite.rerun.is_some()
        || suite.report_disagrees.is_some()
        || !vouched
        || suite.vanished_count > 0
        || !catch
        || listed.is_empty()
    {
        return None;
    }
    let frozen: HashSet<String> = frozen_tests(request).into_iter().map(|t| t.id).collect();
    listed
        .iter()
        .all(|id| frozen.contains(id))
        .then(|| listed.to_vec())
}

impl super::decision::Decision for GateDecision {
    const ENDPOINT: &'static str = "gate";
    const MARKDOWN: bool = true;
    type Request = GateRequest;
    type Answer = GateAnswer;

    fn parse(body: &[u8]) -> Result<GateRequest, super::problem::Problem> {
        super::decision::json_body(body, parse_gate_request)
    }

    fn decide(request: &GateRequest, defaults: &super::decision::Defaults) -> Self {
        decide_gate(request, defaults.debt_cap)
    }

    fn exit_code(&self) -> u8 {
        self.disposition.exit_code()
    }

    fn label(&self) -> &'static str {
        self.disposition.as_str()
    }

    /// A decision the router made also carries its verdicts and `attribution`, so `/review`
    /// counts it with the router's own.
    fn log_fields<'a>(&'a self, request: &'a GateRequest) -> super::decision::LogFields<'a> {
        use super::decision::{Field, log_key};
        let verdict = |pick: fn(&Verdicts) -> Verdict| {
            self.evidence
                .as_ref()
                .map_or(Field::Absent, |v| Field::Plain(pick(v).as_str()))
        };
        super::decision::LogFields::of([
            (log_key!("patch_id"), request.patch_id.as_deref().into()),
            (log_key!("rule"), Field::Plain(<&str>::from(self.rule))),
            (
                log_key!("disposition"),
                Field::Plain(self.disposition.as_str()),
            ),
            (log_key!("reason"), Field::Plain(self.reason.as_str())),
            (
                log_key!("attribution"),
                self.evidence
                    .map_or(Field::Absent, |_| Field::Plain(self.reason.as_str())),
            ),
            (log_key!("property_check"), verdict(|v| v.property_check)),
            (log_key!("fixture_check"), verdict(|v| v.fixture_check)),
            (log_key!("flaky_freeze"), verdict(|v| v.flaky_freeze)),
            (log_key!("exit_code"), self.exit_code().into()),
            (
                log_key!("changed_files"),
                (request.changed_files.len() as u64).into(),
            ),
        ])
    }

    fn answer(&self, request: &GateRequest, decision_id: String) -> GateAnswer {
        GateDecision::answer(self, request, decision_id)
    }

    fn answer_exit_code(answer: &GateAnswer) -> u8 {
        answer.exit_code
    }

    fn line(answer: &GateAnswer) -> String {
        text_line(answer)
    }

    fn markdown(answer: &GateAnswer) -> String {
        markdown(answer)
    }
}
