//! The gate's own rules ([`GATE_RULES`]), first match wins, what they read ([`RuleFacts`]),
//! and the steps they record.

use super::answer::GateDecision;
use super::answer::GateDisposition;
use super::answer::GateReason;
use super::answer::GateRuleName;
use super::request::GateRequest;
use super::request::ReproofOutcome;
use super::request::SuspicionClass;
use super::request::SuspiciousLine;
use super::request::UnreadFile;
use super::steps::GuardHit;
use super::steps::OpenRow;
use super::steps::Step;
use super::steps::plural;
use super::verdicts::routed;
use crate::core::freeze_ledger;
use crate::core::freeze_ledger::Debt;
use crate::core::freeze_ledger::FreezeRow;
use crate::core::freeze_ledger::Frozen;
use crate::core::freeze_ledger::LedgerState;
use crate::core::ladder::ScopeMarkers;
use crate::core::path::PrefixTrie;
use crate::core::path::RepoPath;
use serde::Deserialize;
use serde::Serialize;
use std::collections::HashSet;
use utoipa::ToSchema;

/// What the gate rules read, computed once from the request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RuleFacts {
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
    /// Changed code files that are not test-adjacent and that the reader could not read
    /// (section 15.2).
    pub unread: Vec<UnreadFile>,
    /// What runs changed that they may not.
    pub modified: bool,
    /// How the build step ended.
    pub build: Built,
    /// The canary ran and did not fail as it must.
    pub neutered: bool,
    /// An admitted property passed with its mutant applied.
    pub reproof_passed: bool,
    /// Re-proofs were asked, none of them ran, and none is left to try (section 11.10).
    pub reproof_unproven: bool,
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

impl RuleFacts {
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
                let mut hits: Vec<SuspiciousLine> = request
                    .suspicious
                    .iter()
                    .filter(|s| RepoPath::parse(&s.file).is_ok_and(|p| suspicious_counts_in(&p)))
                    .cloned()
                    .collect();
                // The deciding class first (section 14.2: probe, overload, special case), each
                // class in the order the facts give.
                hits.sort_by_key(|s| s.class);
                hits
            },
            unread: request
                .unread
                .iter()
                .filter(|u| RepoPath::parse(&u.file).is_ok_and(|p| suspicious_counts_in(&p)))
                .cloned()
                .collect(),
            modified: !request.integrity.is_empty(),
            neutered: request.canary.as_ref().is_some_and(|c| !c.sang()),
            reproof_passed: request
                .reproof
                .iter()
                .any(|r| r.passed(&request.catch_exit_codes)),
            reproof_unproven: !request.reproof.is_empty()
                && request.reproof.iter().all(|r| {
                    matches!(
                        r.outcome(&request.catch_exit_codes),
                        ReproofOutcome::Void(_)
                    )
                })
                && request
                    .configured
                    .as_ref()
                    .is_none_or(|c| super::candidates::next_reproof(request, c).is_none()),
            build: match &request.build {
                None => Built::NotRun,
                Some(b) if b.exit_code == Some(0) => Built::Built,
                Some(b) if b.catch_exit_codes.caught(b.exit_code) => Built::DoesNotBuild,
                Some(_) => Built::Broken,
            },
        }
    }
}

/// Whether a `[suspicious]` line in `file` counts (CONTRACT.md section 11.6): only code that
/// is not test-adjacent (a test may well name its runner). The runner asks this too, so its
/// cap on the lines it reports is spent on lines that count.
pub fn suspicious_counts_in(file: &RepoPath) -> bool {
    !ScopeMarkers::default().is_test_adjacent(file)
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
pub(super) fn binaries(request: &GateRequest) -> Vec<String> {
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
    /// One disposition, the reason chosen from the facts among `reasons` (the first listed
    /// is the rule's own).
    Chosen {
        disposition: GateDisposition,
        reasons: &'static [GateReason],
        choose: fn(&RuleFacts) -> GateReason,
    },
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
    pub step: Option<fn(&GateRequest, &RuleFacts) -> Option<Step>>,
    pub conclusion: Conclusion,
}

/// One gate rule.
pub type GateRule = crate::core::rules::Rule<RuleFacts, GateThen>;

/// The gate's rules. Ordered, first match wins; the last hands over to the router. Each rule
/// records its step before it is tried, so the answer's `steps` are the steps reached.
pub const GATE_RULES: [GateRule; 13] = [
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
        // An unread file waits for the build step when one is configured (the plan runs it
        // first): code that does not build is BLOCK `does-not-build` (rule 8), not unread.
        when: |f| {
            !f.suspicious.is_empty() || (!f.unread.is_empty() && f.build != Built::DoesNotBuild)
        },
        then: GateThen {
            name: GateRuleName::TestAware,
            says: "a changed code file that is not test-adjacent could not be read as the interpreter will (unless it does not build), or the code the patch adds to one asks whether it is under test, changes what a comparison means, or compares against a literal the base's tests pin (a reading rule, or a [suspicious] pattern); with reading hits alone the runs still happen, and a failure they show answers BLOCK, naming the hits (section 15.5)",
            step: Some(|r, f| Some(test_aware_step(r, f))),
            conclusion: Conclusion::Chosen {
                disposition: GateDisposition::Escalate,
                reasons: &[
                    GateReason::TestAwareCode,
                    GateReason::UnreadCode,
                    GateReason::EqualityOverload,
                    GateReason::TestInputInCode,
                ],
                // Unread first (section 15.2), then the first class among the hits.
                choose: |f| {
                    if !f.unread.is_empty() && f.build != Built::DoesNotBuild {
                        GateReason::UnreadCode
                    } else {
                        reading_reason(f)
                    }
                },
            },
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
            says: "an admitted property passed on the judged tree with its assertions turned (section 15.3) or its admission mutant applied",
            step: Some(reproof_step),
            conclusion: Conclusion::Fixed(GateDisposition::Escalate, GateReason::CheckerNeutered),
        },
    },
    GateRule {
        number: 12,
        when: |f| f.reproof_unproven,
        then: GateThen {
            name: GateRuleName::Integrity,
            says: "re-proofs were asked and none of them could run (a mutant that does not apply, a timeout, a report that shows nothing ran)",
            step: None,
            conclusion: Conclusion::Fixed(GateDisposition::Escalate, GateReason::CheckerUnproven),
        },
    },
    GateRule {
        number: 13,
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
    /// `null` for `route`: the router's attribution. A rule with more than one reason lists
    /// the others in `also`.
    pub reason: Option<GateReason>,
    /// The rule's other reasons, chosen by the facts (`test-aware`: by the first class of its
    /// hits).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub also: Vec<GateReason>,
    /// The exit codes this rule can give.
    pub exit_codes: Vec<u8>,
}

/// The gate's rules as `GET /gate/rules` lists them, from [`GATE_RULES`].
pub fn rule_rows() -> Vec<GateRuleRow> {
    GATE_RULES
        .iter()
        .map(|r| {
            let (disposition, reasons, exit_codes) = match r.then.conclusion {
                Conclusion::Fixed(d, why) => (Some(d), vec![why], vec![d.exit_code()]),
                Conclusion::Chosen {
                    disposition,
                    reasons,
                    ..
                } => (
                    Some(disposition),
                    reasons.to_vec(),
                    vec![disposition.exit_code()],
                ),
                Conclusion::Router => (None, Vec::new(), vec![0, 1, 2]),
            };
            GateRuleRow {
                number: r.number,
                rule: r.then.name,
                when: r.then.says.to_owned(),
                disposition,
                reason: reasons.first().copied(),
                also: reasons.iter().skip(1).copied().collect(),
                exit_codes,
            }
        })
        .collect()
}

/// Decides. Pure and deterministic: the same facts always get the same decision. The rules
/// are tried in order, each recording its step first; the first that matches concludes.
pub fn decide_gate(request: &GateRequest, default_cap: u64) -> GateDecision {
    let facts = RuleFacts::of(request, default_cap);
    if !reading_waits(&facts) {
        return decide_on(request, facts);
    }
    // A reading hit does not stop the runs (CONTRACT.md section 15.5): a failure they show
    // answers BLOCK and names the hit too (the test-aware step lists it); without one, the
    // reading's ESCALATE stands, after the steps the runs reached.
    let reading = test_aware_step(request, &facts);
    let reason = reading_reason(&facts);
    let ran = decide_without_hits(request, facts);
    let steps = ran
        .steps
        .into_iter()
        .map(|s| match s {
            Step::TestAware { .. } => reading.clone(),
            other => other,
        })
        .collect();
    match ran.disposition {
        GateDisposition::Block => GateDecision { steps, ..ran },
        _ => GateDecision {
            disposition: GateDisposition::Escalate,
            rule: GateRuleName::TestAware,
            reason,
            evidence: None,
            steps,
        },
    }
}

/// Whether the facts hold reading hits (and no unread file, which decides first) that wait
/// for the runs (CONTRACT.md section 15.5).
fn reading_waits(facts: &RuleFacts) -> bool {
    !facts.suspicious.is_empty() && (facts.unread.is_empty() || facts.build == Built::DoesNotBuild)
}

/// The reading's reason: the first class among the hits (section 14.2).
fn reading_reason(facts: &RuleFacts) -> GateReason {
    match facts.suspicious.first().map(|s| s.class) {
        Some(SuspicionClass::Overload) => GateReason::EqualityOverload,
        Some(SuspicionClass::SpecialCase) => GateReason::TestInputInCode,
        Some(SuspicionClass::Probe) | None => GateReason::TestAwareCode,
    }
}

/// The decision the rules give with the reading's hits set aside: what the runs decide. The
/// plan runs what it needs (CONTRACT.md section 15.5).
pub(super) fn decide_without_hits(request: &GateRequest, mut facts: RuleFacts) -> GateDecision {
    facts.suspicious.clear();
    decide_on(request, facts)
}

/// What the plan goes by: the decision with the reading's hits set aside while they wait for
/// the runs (CONTRACT.md section 15.5), else the decision.
pub(super) fn decision_for_plan(request: &GateRequest, default_cap: u64) -> GateDecision {
    let facts = RuleFacts::of(request, default_cap);
    if reading_waits(&facts) {
        decide_without_hits(request, facts)
    } else {
        decide_on(request, facts)
    }
}

/// The rules tried in order on `facts`, each recording its step first.
fn decide_on(request: &GateRequest, facts: RuleFacts) -> GateDecision {
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
            Conclusion::Chosen {
                disposition,
                choose,
                ..
            } => GateDecision {
                disposition,
                rule: rule.then.name,
                reason: choose(&facts),
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

pub(super) fn open_rows(ledger: &[FreezeRow]) -> Vec<OpenRow> {
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
pub(super) fn guard_hits(request: &GateRequest) -> (Vec<String>, Vec<GuardHit>) {
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

pub(super) fn seal_step(request: &GateRequest, facts: &RuleFacts) -> Step {
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

pub(super) fn debt_step(request: &GateRequest, facts: &RuleFacts) -> Step {
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

pub(super) fn guard_step(request: &GateRequest, facts: &RuleFacts) -> Step {
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

pub(super) fn merge_step(request: &GateRequest, facts: &RuleFacts) -> Step {
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

pub(super) fn test_aware_step(_: &GateRequest, facts: &RuleFacts) -> Step {
    let count = facts.suspicious.len();
    let class = |c: SuspicionClass| facts.suspicious.iter().filter(|s| s.class == c).count();
    let said: Vec<String> = [
        (SuspicionClass::Probe, "asks whether it is under test"),
        (SuspicionClass::Overload, "changes what a comparison means"),
        (
            SuspicionClass::SpecialCase,
            "compares against a literal the base's tests pin",
        ),
    ]
    .into_iter()
    .filter(|(c, _)| class(*c) > 0)
    .map(|(c, what)| format!("{what} ({})", plural(class(c), "hit", "hits")))
    .collect();
    Step::TestAware {
        lines: facts.suspicious.iter().take(100).cloned().collect(),
        count,
        unread: facts.unread.iter().take(100).cloned().collect(),
        summary: if !facts.unread.is_empty() && count == 0 {
            format!(
                "{} could not be read as the interpreter will: what it does under test is unknown",
                plural(
                    facts.unread.len(),
                    "changed code file",
                    "changed code files"
                )
            )
        } else if count == 0 {
            "the code the patch adds (not its tests) neither asks whether it is under test, nor changes what a comparison means, nor compares against the tests' inputs".to_owned()
        } else {
            format!(
                "the code the patch adds (not its tests), read by its syntax, {}: such code can be right under test and wrong in production, which no run can see (the runs still happen: a failure they show answers BLOCK){}",
                said.join("; "),
                match facts.unread.len() {
                    0 => String::new(),
                    n => format!(
                        "; and {} could not be read",
                        plural(n, "changed code file", "changed code files")
                    ),
                }
            )
        },
    }
}

pub(super) fn integrity_step(request: &GateRequest, _: &RuleFacts) -> Option<Step> {
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

pub(super) fn build_step(request: &GateRequest, facts: &RuleFacts) -> Option<Step> {
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
                match (
                    build.exit_code,
                    request
                        .room
                        .as_ref()
                        .and_then(|r| r.over("build").map(|l| r.said(l)))
                ) {
                    (Some(c), _) => format!("exited {c}, which is not a catch"),
                    (None, Some(over)) => format!("was ended by its room, {over}"),
                    (None, None) => "was killed (timeout or signal)".to_owned(),
                }
            ),
        },
    })
}

pub(super) fn canary_step(request: &GateRequest, _: &RuleFacts) -> Option<Step> {
    let canary = request.canary.as_ref()?;
    let sang = canary.sang();
    let rode = !canary.in_runs.is_empty();
    // The canary as the turned twin of a property (section 15.3), named.
    let name = match &canary.twin_of {
        Some(of) => format!("the canary (the turned twin of {of})"),
        None => "the canary".to_owned(),
    };
    Some(Step::Canary {
        exit_code: canary.exit_code,
        receipt: canary.receipt.clone(),
        failed: sang,
        summary: match (sang, rode) {
            (true, false) => {
                "the canary still fails, with its failure listed: the checker can fail".to_owned()
            }
            (true, true) => format!(
                "{name} still fails in each of the {} property runs it rode in, with its failure listed: the checker can fail",
                canary.in_runs.len()
            ),
            (false, true) => format!(
                "{name}, which fails in the base, did not fail as it must here ({}): something in this tree switches the checker off, and no pass from it counts",
                canary.why_not().unwrap_or_default()
            ),
            (false, false) => format!(
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
            ),
        },
    })
}

pub(super) fn reproof_step(request: &GateRequest, facts: &RuleFacts) -> Option<Step> {
    if request.reproof.is_empty() {
        return None;
    }
    let tried = request.reproof.clone();
    let mut passed = Vec::new();
    let mut caught = Vec::new();
    let mut void = Vec::new();
    for r in &tried {
        match r.outcome(&request.catch_exit_codes) {
            ReproofOutcome::Passed => passed.push(r.property.as_str()),
            ReproofOutcome::Caught => caught.push(r.property.as_str()),
            ReproofOutcome::Void(why) => void.push(format!("{} ({why})", r.property)),
        }
    }
    let not_run = match void.len() {
        0 => String::new(),
        _ => format!("; not run: {}", void.join(", ")),
    };
    // `reprove = N` asks for N that ran: say when fewer did (section 11.10).
    let asked = request
        .configured
        .as_ref()
        .map_or(0, |c| usize::from(c.reprove));
    let short = if asked > passed.len() + caught.len() && !caught.is_empty() {
        format!(
            "; {asked} asked, {} ran (no other admitted property that ran on this patch is left to try)",
            passed.len() + caught.len()
        )
    } else {
        String::new()
    };
    // How the re-proofs that ran changed the check: their assertions turned, or (a compiled
    // test) their admission mutant applied.
    let turned = request
        .reproof
        .iter()
        .filter(|r| r.applied)
        .all(|r| r.turned);
    Some(Step::Reproof {
        summary: if facts.reproof_passed {
            format!(
                "{} passed on this tree with {}: here it can no longer fail, so its pass proves nothing",
                passed.join(", "),
                if turned {
                    "its assertions turned (the judged code unchanged, each assertion asking for a value that agrees with anything)"
                } else {
                    "its admission mutant applied"
                }
            )
        } else if caught.is_empty() {
            format!(
                "no re-proof could run: {}; nothing shows the checker can still fail on this tree",
                void.join(", ")
            )
        } else {
            match turned {
                true => format!(
                    "{} failed with {} assertions turned, as {} must on the judged code: the checker can still fail here{not_run}{short}",
                    caught.join(", "),
                    if caught.len() == 1 { "its" } else { "their" },
                    if caught.len() == 1 { "it" } else { "they" }
                ),
                false => format!(
                    "{} caught {} mutant: the checker can still fail here{not_run}{short}",
                    caught.join(", "),
                    if caught.len() == 1 { "its" } else { "their" }
                ),
            }
        },
        tried,
    })
}

pub(super) fn binary_step(_: &GateRequest, facts: &RuleFacts) -> Step {
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
