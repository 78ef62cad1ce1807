//! The gate's own rules ([`GATE_RULES`]), first match wins, and `decide_gate`. What they read
//! is `reads.rs` ([`RuleFacts`]); the steps they record, `recorded.rs`.

use super::answer::GateDecision;
use super::answer::GateDisposition;
use super::answer::GateReason;
use super::answer::GateRuleName;
use super::request::GateRequest;
use super::request::SuspicionClass;
use super::steps::Step;
use super::verdicts::routed;
use serde::Deserialize;
use serde::Serialize;
use utoipa::ToSchema;

use super::reads::{Built, RuleFacts};
use super::recorded::{
    binary_step, build_step, canary_step, debt_step, guard_step, integrity_step, merge_step,
    reproof_step, seal_step, test_aware_step,
};

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
            says: "a run changed a tracked file (content, mode, or deleted it), created a file outside the scratch directories, or changed the fixtures' seal",
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
    // Shards first (issue 53): facts that are not one whole gate decide nothing else.
    let Some(shards) = super::combine::shards_step(request) else {
        return decide_whole(request, default_cap);
    };
    if let Some(gap) = super::combine::shards_gap(&shards) {
        return gap;
    }
    let mut decision = decide_whole(request, default_cap);
    decision.steps.insert(0, shards);
    decision
}

/// The decision on one whole gate's facts.
fn decide_whole(request: &GateRequest, default_cap: u64) -> GateDecision {
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
