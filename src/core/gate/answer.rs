//! The gate's decision and its answer: disposition, rule, reason, the steps reached.

use super::request::FailingCase;
use super::request::GateRequest;
use super::request::Judged;
use super::request::SandboxBackend;
use super::steps::Step;
use crate::core::route::Attribution;
use crate::core::route::Disposition;
use crate::core::route::Verdicts;
use serde::Deserialize;
use serde::Serialize;
use strum::IntoStaticStr;
use strum::VariantArray;
use utoipa::ToSchema;
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
