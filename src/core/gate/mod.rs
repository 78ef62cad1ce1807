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
use super::runs::{CatchCodes, RunOutcome};
use super::seal::SealCheck;

pub use parse::{
    GATE_FIELDS, JUDGED_FIELDS, MAX_TEST_ID_CHARS, RERUN_FIELDS, SUITE_FIELDS, SUSPICIOUS_FIELDS,
    fit_test_id, parse_gate_request,
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
}

impl Rerun {
    /// It passed: exit 0, and its report (when read) lists no failure and agrees with itself.
    pub fn passed(&self) -> bool {
        self.exit_code == Some(0)
            && self.failed_tests.as_ref().is_none_or(Vec::is_empty)
            && self.report_disagrees.is_none()
    }
}

/// A validated `/gate` request: the facts one patch's gate gathered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GateRequest {
    pub patch_id: Option<String>,
    pub changed_files: Vec<RepoPath>,
    /// Paths (files or directories) the patch may not edit: the base commit's config,
    /// catalog, ledger, expected seal and whatever else the base config names.
    pub guarded: Vec<RepoPath>,
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
    /// The step this rule records in `steps` when the pipeline reaches it (the router's rule
    /// records the router's own steps).
    pub step: Option<fn(&GateRequest, &GateFacts) -> Step>,
    pub conclusion: Conclusion,
}

/// One gate rule.
pub type GateRule = rules::Rule<GateFacts, GateThen>;

/// The gate's rules. Ordered, first match wins; the last hands over to the router. Each rule
/// records its step before it is tried, so the answer's `steps` are the steps reached.
pub const GATE_RULES: [GateRule; 7] = [
    GateRule {
        number: 1,
        when: |f| !f.conflicts.is_empty(),
        then: GateThen {
            name: GateRuleName::Merge,
            says: "the head does not merge cleanly into the base",
            step: Some(merge_step),
            conclusion: Conclusion::Fixed(GateDisposition::Escalate, GateReason::MergeConflict),
        },
    },
    GateRule {
        number: 2,
        when: |f| !f.seal_matches,
        then: GateThen {
            name: GateRuleName::FixtureFault,
            says: "seal.actual != seal.expected",
            step: Some(seal_step),
            conclusion: Conclusion::Fixed(GateDisposition::Escalate, GateReason::SealMismatch),
        },
    },
    GateRule {
        number: 3,
        when: |f| f.debt.counted > f.debt.cap,
        then: GateThen {
            name: GateRuleName::Debt,
            says: "freeze debt > cap",
            step: Some(debt_step),
            conclusion: Conclusion::Fixed(GateDisposition::StopQueue, GateReason::DebtOverCap),
        },
    },
    GateRule {
        number: 4,
        when: |f| !f.guard_hits.is_empty(),
        then: GateThen {
            name: GateRuleName::Guard,
            says: "a changed file is, or lies under, a guarded path or a catalog row's source",
            step: Some(guard_step),
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
            step: Some(binary_step),
            conclusion: Conclusion::Fixed(GateDisposition::Escalate, GateReason::BinaryAdded),
        },
    },
    GateRule {
        number: 6,
        when: |f| !f.suspicious.is_empty(),
        then: GateThen {
            name: GateRuleName::TestAware,
            says: "a line the patch adds to a file that is not test-adjacent matches a [suspicious] pattern",
            step: Some(test_aware_step),
            conclusion: Conclusion::Fixed(GateDisposition::Escalate, GateReason::TestAwareCode),
        },
    },
    GateRule {
        number: 7,
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
        /// Every catalog property, in catalog order.
        properties: Vec<PropertyReport>,
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
        if let Some(step) = rule.then.step {
            steps.push(step(request, &facts));
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

    // t1 properties.
    let ballot = quorum::ballot(
        &request.changed_files,
        &request.catalog,
        &request.property_runs,
        &request.catch_exit_codes,
        &request.ledger,
        request.require_admission,
    );
    let property_check = if scope_hit {
        steps.push(Step::Properties {
            ran: false,
            verdict: Verdict::Unknown,
            tier: None,
            outcome: None,
            reason: None,
            quorum_rule: None,
            properties: ballot.properties,
            summary: "skipped on a scope hit: property_check is unknown".to_owned(),
        });
        Verdict::Unknown
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
        steps.push(Step::Properties {
            ran: true,
            verdict,
            tier: Some(tier),
            outcome: Some(outcome),
            reason: Some(reason),
            quorum_rule: Some(number),
            properties: ballot.properties,
            summary: format!(
                "quorum {} ({}): property_check is {verdict}{}",
                outcome.as_str(),
                reason.as_str(),
                if unproven == 0 {
                    String::new()
                } else {
                    format!(
                        "; {} without an admission proof voted as weak",
                        plural(unproven, "strong property", "strong properties")
                    )
                }
            ),
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
        Some(0) if listed.is_empty() => (
            Verdict::Pass,
            TierVerdict::Pass,
            "the fixture suite passed".to_owned(),
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
    if suite.rerun.is_some() || suite.report_disagrees.is_some() || !catch || listed.is_empty() {
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
