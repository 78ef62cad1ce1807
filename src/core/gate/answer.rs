//! The gate's decision and its answer: disposition, rule, reason, the steps reached.

use super::request::FailingCase;
use super::request::GateRequest;
use super::request::Judged;
use super::request::SandboxBackend;
use super::steps::Step;
use crate::core::quorum::Reason;
use crate::core::route::Attribution;
use crate::core::route::Disposition;
use crate::core::route::Verdict;
use crate::core::route::Verdicts;
use crate::core::runs::ReceiptGap;
use serde::Deserialize;
use serde::Serialize;
use utoipa::ToSchema;
crate::core::words! {
    "SCREAMING_SNAKE_CASE";
    /// What the merge bot does with the patch: the router's three, and the queue stop.
    pub enum GateDisposition {
        MergeOk,
        Block,
        Escalate,
        /// Freeze debt is over the cap: no patch merges until ledger rows are retired.
        StopQueue,
    }
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

crate::core::words! {
    "kebab-case";
    /// The gate rule that decided.
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
        /// The shards' facts do not make one gate (issue 53).
        Shards,
    }
}

crate::core::words! {
    "kebab-case";
    /// Why: a gate rule's reason, or the router's attribution.
    pub enum GateReason {
        MergeConflict,
        SealMismatch,
        DebtOverCap,
        GuardedInputEdited,
        BinaryAdded,
        TestAwareCode,
        /// The patch changes what a comparison means (CONTRACT.md section 14.2).
        EqualityOverload,
        /// The patch compares against a literal the base's tests pin (section 14.2).
        TestInputInCode,
        /// A changed code file the reader could not read as the interpreter will (section 15.2).
        UnreadCode,
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
        /// Re-proofs were asked and none of them could run (CONTRACT.md section 11.10).
        CheckerUnproven,
    }
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

crate::core::words! {
    "kebab-case";
    /// What, precisely, a human must look at (every ESCALATE answer carries one beside its
    /// `reason`): the "What to do next" of the report is written for it. A gate rule's reason is
    /// its own cause; the router's two (`inadmissible-evidence`, `evidence-gap`) are split by the
    /// first step, in pipeline order, whose verdict is neither a pass nor a failure.
    pub enum Cause {
        MergeConflict,
        SealMismatch,
        GuardedInputEdited,
        BinaryAdded,
        TestAwareCode,
        EqualityOverload,
        TestInputInCode,
        UnreadCode,
        ModifiedDuringRun,
        /// The build step neither built nor failed to build (a timeout, a crash, a missing tool).
        BuildBroken,
        /// The canary did not fail.
        CheckerNeutered,
        /// An admitted property passed with its mutant applied.
        CheckerCannotFail,
        /// Re-proofs were asked and none could run.
        CheckerUnproven,
        /// t0: the patch changes test-adjacent files.
        ScopeHit,
        /// No strong property observes a changed file (an empty quorum, files named).
        UnobservedFiles,
        /// No strong property votes, though the changed files are observed (frozen, or weak for
        /// want of admission).
        EmptyQuorum,
        /// The patch brings a property that is in its own locality.
        NewProperty,
        /// A property passed and failed on the same tree (split exits).
        FlakyProperty,
        /// No check ran any of the patch's changed code lines, or nothing could tell which did
        /// (issue 52).
        UnobservedChange,
        /// A branch the patch adds runs under no check (`[observe] branches = "required"`).
        UnobservedBranch,
        /// The patch answers otherwise than the base on inputs near the checks' and on none of
        /// the checks' own (issue 66, CONTRACT.md 16.3).
        UnobservedDifference,
        /// The patch answers otherwise than the base only at the exact inputs the checks pass
        /// (CONTRACT.md 16.3).
        SpecialCase,
        /// The checks ran changed behaviour and none of them tells the base from the patch;
        /// no test the patch adds fails on the base (CONTRACT.md 16.3).
        UnassertedDifference,
        /// Every failure of the suite is a test the patch changes, run as the base has it: a
        /// declared behaviour change (issue 65).
        ChangedTestFails,
        /// A run's exit is not a catch, or it timed out or was killed.
        BrokenHarness,
        /// A property's runs are not all there.
        MissingResults,
        /// A report disagrees with itself (declared failures it does not list, say).
        ReportDisagrees,
        /// A run wrote no report at its fresh path.
        NoReceipt,
        /// A run's report lists no test that ran.
        NothingRan,
        /// A run exited 0 with a skipped case in its report.
        SkippedTests,
        /// The exit code and the report disagree (a catch with no failure listed, exit 0 with one).
        ExitDisagrees,
        /// Census tests that passed on the base did not run.
        VanishedTests,
        /// A frozen test covers a changed file.
        FrozenCoversPatch,
        /// A gate did not run at all.
        GateMissing,
        /// A shard of a split gate is missing, unfinished, edited or foreign (issue 53).
        ShardGap,
        /// (On a BLOCK.) A recorded call into a changed function answered differently in a plain
        /// program than under the tests: the suite's pass is not what the code does (issue 66,
        /// CONTRACT.md 16.2).
        BehavesUnderTest,
    }
}

impl Cause {
    pub fn as_str(self) -> &'static str {
        self.into()
    }

    fn of_gap(gap: ReceiptGap) -> Cause {
        match gap {
            ReceiptGap::NoReceipt => Cause::NoReceipt,
            ReceiptGap::NothingRan => Cause::NothingRan,
            ReceiptGap::Skipped => Cause::SkippedTests,
            ReceiptGap::NoFailureListed | ReceiptGap::FailureListed => Cause::ExitDisagrees,
            ReceiptGap::ReportDisagrees => Cause::ReportDisagrees,
        }
    }
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

    /// Its cause, on an escalation (see [`Cause`]); on a BLOCK, only when the code answered
    /// differently outside the tests (CONTRACT.md 16.2: `behaves-under-test`).
    pub fn cause(&self) -> Option<Cause> {
        if self.disposition == GateDisposition::Block {
            // (The suite passed, and the behaviour step made it a failure.)
            let suite_passed = self.steps.iter().any(|s| {
                matches!(
                    s,
                    Step::Fixtures {
                        verdict: Verdict::Pass,
                        ..
                    }
                )
            });
            let turned = self.steps.iter().any(|s| {
                matches!(
                    s,
                    Step::Behavior {
                        verdict: Verdict::Fail,
                        found: Some(super::behavior::BehaviorFinding::BehavesUnderTest),
                        ..
                    }
                )
            });
            return (suite_passed && turned).then_some(Cause::BehavesUnderTest);
        }
        if self.disposition != GateDisposition::Escalate {
            return None;
        }
        Some(match self.reason {
            GateReason::MergeConflict => Cause::MergeConflict,
            GateReason::SealMismatch => Cause::SealMismatch,
            GateReason::GuardedInputEdited => Cause::GuardedInputEdited,
            GateReason::BinaryAdded => Cause::BinaryAdded,
            GateReason::TestAwareCode => Cause::TestAwareCode,
            GateReason::EqualityOverload => Cause::EqualityOverload,
            GateReason::TestInputInCode => Cause::TestInputInCode,
            GateReason::UnreadCode => Cause::UnreadCode,
            GateReason::ModifiedDuringRun => Cause::ModifiedDuringRun,
            GateReason::HarnessError => Cause::BuildBroken,
            GateReason::CheckerUnproven => Cause::CheckerUnproven,
            GateReason::EvidenceGap if self.rule == GateRuleName::Shards => Cause::ShardGap,
            GateReason::CheckerNeutered
                if self
                    .steps
                    .iter()
                    .any(|s| matches!(s, Step::Canary { failed: false, .. })) =>
            {
                Cause::CheckerNeutered
            }
            GateReason::CheckerNeutered => Cause::CheckerCannotFail,
            _ => routed_cause(&self.steps),
        })
    }
}

/// The router's escalation, by the first step whose verdict is neither a pass nor a failure.
fn routed_cause(steps: &[Step]) -> Cause {
    let open = |v: &Verdict| matches!(v, Verdict::Unknown | Verdict::Missing);
    for step in steps {
        match step {
            Step::Scope { scope_hits, .. } if !scope_hits.is_empty() => return Cause::ScopeHit,
            Step::Properties {
                verdict,
                reason,
                unvouched,
                unobserved,
                ..
            } if open(verdict) => {
                // A run its receipt does not vouch for is said first: it is what made the
                // runs look split or broken.
                let first_gap = unvouched.first().map(|u| u.gap);
                return match reason {
                    _ if !unobserved.is_empty() => Cause::UnobservedFiles,
                    Some(Reason::EmptyQuorum) => Cause::EmptyQuorum,
                    Some(Reason::SelfIntroducedPredicate) => Cause::NewProperty,
                    _ if first_gap.is_some() => {
                        first_gap.map_or(Cause::BrokenHarness, Cause::of_gap)
                    }
                    Some(Reason::SplitExits) => Cause::FlakyProperty,
                    Some(Reason::MissingResults) => Cause::MissingResults,
                    None if *verdict == Verdict::Missing => Cause::GateMissing,
                    _ => Cause::BrokenHarness,
                };
            }
            Step::Observe {
                verdict,
                unobserved: Some(u),
                ..
            } if open(verdict) => {
                return match u {
                    super::observe::Unobserved::Change => Cause::UnobservedChange,
                    super::observe::Unobserved::Branch => Cause::UnobservedBranch,
                };
            }
            Step::Fixtures {
                ran,
                verdict,
                exit_code,
                failed_tests,
                gap,
                vanished_count,
                disagrees,
                changed_tests,
                ..
            } if open(verdict) => {
                return match () {
                    () if !ran || *verdict == Verdict::Missing => Cause::GateMissing,
                    () if !changed_tests.is_empty() => Cause::ChangedTestFails,
                    () if disagrees.is_some() => Cause::ReportDisagrees,
                    () if gap.is_some() => gap.map_or(Cause::BrokenHarness, Cause::of_gap),
                    () if *vanished_count > 0 => Cause::VanishedTests,
                    () if *exit_code == Some(0) && !failed_tests.is_empty() => Cause::ExitDisagrees,
                    () => Cause::BrokenHarness,
                };
            }
            Step::Behavior {
                verdict,
                found: Some(found),
                ..
            } if open(verdict) => {
                use super::behavior::BehaviorFinding as F;
                match found {
                    F::UnobservedDifference => return Cause::UnobservedDifference,
                    F::SpecialCase => return Cause::SpecialCase,
                    F::UnassertedDifference => return Cause::UnassertedDifference,
                    F::BehavesUnderTest => {}
                }
            }
            Step::Freeze { verdict, .. } if open(verdict) => return Cause::FrozenCoversPatch,
            _ => {}
        }
    }
    Cause::GateMissing
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
    /// On an escalation, what precisely a human must look at (beside the contract's `reason`);
    /// on a BLOCK, `behaves-under-test` only (CONTRACT.md 16.2).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cause: Option<Cause>,
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
    /// The merge queue's group judged, when the head is one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub merge_group: Option<super::request::MergeGroup>,
    /// How the runs were isolated (when the facts say): `off` means the code under test ran
    /// with the runner's user and files.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sandbox: Option<SandboxBackend>,
    /// The sealed room the runs had (CONTRACT.md section 13), as the runner said.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub room: Option<super::request::RoomFacts>,
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
            cause: self.cause(),
            exit_code: self.exit_code(),
            decision_id,
            evidence: self.evidence,
            steps: self.steps.clone(),
            judged: request.judged.clone(),
            merge_group: request.merge_group.clone(),
            sandbox: request.sandbox,
            room: request.room.clone(),
            failures: request.failures.clone(),
            timings_ms: request.timings_ms.clone(),
        }
    }
}
