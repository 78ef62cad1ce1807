//! The OpenAPI document, generated from the handlers and types with utoipa: this only
//! aggregates (info, tags, the schemas each handler module declares beside itself); the paths
//! come from the endpoint declaration. The committed copy in `openapi/openapi.json` is checked
//! against this by a test.

use utoipa::OpenApi;

use crate::core::answer::{RouteAnswer, ScopedFreezeAnswer, TableRow};
use crate::core::problem::{FieldError, Problem};
use crate::core::route::{Attribution, Disposition, RuleName, Verdict, Verdicts};

use super::schema::{
    CatchCodeDoc, CheckNameDoc, CommitDoc, ExitCodeDoc, RepoPathDoc, RouteBatchDoc, Sha256Doc,
    TestIdDoc,
};

#[derive(OpenApi)]
#[openapi(
    info(
        title = "patchgate",
        description = "Decides whether a code patch may merge. Only a go is 2xx: 200 go (exit 0), \
409 the patch is wrong (exit 1), 424 a human must look (exit 2), 423 the queue is stopped (exit 3). \
Errors are RFC 9457 problem documents."
    ),
    components(schemas(
        RepoPathDoc, ExitCodeDoc, CatchCodeDoc, Sha256Doc, CommitDoc, CheckNameDoc, RouteBatchDoc, TestIdDoc,
        super::route::RouteRequestDoc, super::route::FrozenTestDoc, RouteAnswer, ScopedFreezeAnswer, TableRow, Verdicts,
        Verdict, Disposition, Attribution, RuleName, Problem, FieldError,
        super::route::BatchItem, super::route::BatchDecided, super::route::BatchRejected,
        super::ops::Health,
        super::quorum::QuorumRequestDoc, super::quorum::CatalogDoc, super::quorum::PropertyDoc, super::quorum::ResultDoc, super::quorum::LedgerRowDoc, super::quorum::LedgerStateDoc, super::quorum::SealDoc,
        crate::core::quorum::QuorumAnswer, crate::core::quorum::PropertyReport, crate::core::freeze_ledger::Debt,
        crate::core::seal::SealCheckAnswer, crate::core::quorum::Outcome, crate::core::quorum::Reason,
        crate::core::quorum::Vote, crate::core::runs::RunState, crate::core::catalog::Strength,
        super::admit::AdmitRequestDoc, super::admit::TreeSealsDoc, super::admit::AdmissionRecordDoc,
        crate::core::admit::AdmitAnswer, crate::core::admit::AdmissionRecord, crate::core::admit::TreeSealsAnswer,
        crate::core::admit::AdmitOutcome, crate::core::admit::AdmitReason, crate::core::admit::CheckKind,
        super::seal::SealRequestDoc, super::seal::SealFileDoc, super::seal::ExpectedManifestDoc, crate::core::seal::SealAnswer, crate::core::seal::Excluded, crate::core::seal::DriftAnswer,
        super::ladder::PlanRequestDoc, super::ladder::DecisionLineDoc, super::ladder::ReviewedEndpointDoc, super::ladder::ReviewBodyDoc, super::ladder::FreezeRequestDoc, super::ladder::CalibrationRowDoc, super::ladder::FixChangedDoc,
        crate::core::ladder::Plan, crate::core::ladder::Report, crate::core::ladder::TierReport,
        crate::core::ladder::TierRow, crate::core::ladder::TierVerdict, crate::core::ladder::FreezeAnswer,
        crate::core::ladder::Review, crate::core::ladder::CalibrationClass,
        crate::core::gate::Facts, crate::core::gate::Judged, crate::core::gate::SuspiciousLine, super::gate::GateCatalogDoc, super::gate::GatePropertyDoc, crate::core::gate::SuiteFacts, crate::core::gate::Rerun, crate::core::runs::Receipt, crate::core::gate::FailingCase, crate::core::gate::IntegrityFinding, crate::core::gate::BuildFacts, crate::core::gate::CanaryFacts, crate::core::gate::CanaryPart, crate::core::gate::Reproof, crate::core::gate::Timings, crate::core::gate::Configured, crate::core::gate::SandboxBackend, crate::core::gate::ObserveFacts, crate::core::gate::ObservedLine, crate::core::gate::UntakenBranch, crate::core::gate::ObserveRule, crate::core::gate::Unobserved, crate::core::gate::PatchMutantFacts, crate::core::gate::MutantOperator, crate::core::gate::MutantState,
        crate::core::gate::GateAnswer, crate::core::gate::GateDisposition, crate::core::gate::GateRuleName,
        crate::core::gate::GateReason, crate::core::gate::Step, crate::core::gate::GuardHit, crate::core::gate::OpenRow,
        crate::core::gate::GateRuleRow, crate::core::gate::GateNext, crate::core::gate::NextStep, crate::core::gate::WorkItem, crate::core::gate::WorkKind, crate::core::gate::WorkTree,
        super::checks::ChecksRequestDoc, super::checks::GatesDoc, super::checks::CheckRunsDoc, super::checks::CheckRunDoc,
        super::checks::CombinedStatusDoc, super::checks::StatusDoc,
        crate::core::checks::ChecksAnswer, crate::core::checks::ChecksDisposition, crate::core::checks::ChecksGates,
        crate::core::checks::GateChecks, crate::core::checks::CheckRead, crate::core::checks::CheckSource,
        crate::core::checks::CheckVerdict, crate::core::checks::Ignored,
    )),
    tags(
        (name = "router", description = "The precedence router"),
        (name = "gate", description = "The patch gate: seal, debt, guard, then the router over the three derived verdicts"),
        (name = "quorum", description = "The strong-property quorum on sealed fixtures"),
        (name = "admission", description = "A check earns its vote with a two-commit proof: it fails on a patch that deletes its invariant and passes on the base, on the same sealed fixtures"),
        (name = "seal", description = "The fixture seal, byte-identical to the coreutils pipeline"),
        (name = "ladder", description = "The gate ladder: plan, yield report, freeze eligibility, review, calibration"),
        (name = "operations", description = "Health, readiness, metrics, this document, the page for people (`GET /`); open without a token"),
        (name = "reference", description = "The static decision tables (`/route/table`, `/gate/rules`); open without a token"),
    )
)]
pub struct ApiDoc;

/// The document as pretty JSON with a trailing newline, exactly as committed: the info,
/// schemas and tags of [`ApiDoc`], and the paths of every declared endpoint
/// ([`super::endpoints`]).
pub fn document_json() -> String {
    let mut doc = super::endpoints().into_openapi();
    doc.info.version = env!("CARGO_PKG_VERSION").to_owned();
    let mut value = serde_json::to_value(&doc).unwrap_or_default();
    refine(&mut value);
    let mut s = serde_json::to_string_pretty(&value).unwrap_or_else(|_| "{}".to_owned());
    s.push('\n');
    s
}

/// Adds to the schema of `T` (found by the type's own name, so renaming the type cannot
/// silently skip a refinement) what its derive cannot say.
fn refine_schema<T: utoipa::ToSchema>(
    schemas: &mut serde_json::Map<String, serde_json::Value>,
    refine: impl FnOnce(&mut serde_json::Map<String, serde_json::Value>),
) {
    if let Some(schema) = schemas
        .get_mut(T::name().as_ref())
        .and_then(serde_json::Value::as_object_mut)
    {
        refine(schema);
    }
}

/// What the derive cannot say, added to the generated document: fields that exclude or need
/// each other, lists without repeats, a log that must contain a decision.
fn refine(doc: &mut serde_json::Value) {
    use serde_json::json;
    let Some(schemas) = doc
        .pointer_mut("/components/schemas")
        .and_then(serde_json::Value::as_object_mut)
    else {
        return;
    };
    refine_schema::<super::route::RouteRequestDoc>(schemas, |route| {
        // The freeze verdict is given, or derived from `changed_files` + `frozen_tests`.
        route.insert(
            "not".into(),
            json!({"required": ["flaky_freeze", "frozen_tests"]}),
        );
        route.insert(
            "dependentRequired".into(),
            json!({"changed_files": ["frozen_tests"], "frozen_tests": ["changed_files"]}),
        );
    });
    refine_schema::<super::checks::GatesDoc>(schemas, |gates| {
        // A check listed twice in one gate is refused.
        for list in gates
            .get_mut("properties")
            .and_then(serde_json::Value::as_object_mut)
            .into_iter()
            .flat_map(|p| p.values_mut())
            .filter_map(serde_json::Value::as_object_mut)
        {
            list.insert("uniqueItems".into(), json!(true));
        }
    });
    refine_schema::<super::ladder::ReviewBodyDoc>(schemas, |log| {
        // Any line may be there (the log holds other events); at least one must be a router
        // decision.
        log.remove("minItems");
        log.insert("items".into(), json!({}));
        log.insert(
            "contains".into(),
            json!({"$ref": "#/components/schemas/DecisionLineDoc"}),
        );
    });
    refine_schema::<super::quorum::LedgerRowDoc>(schemas, |row| {
        // A frozen property, or a frozen test with the code it covers.
        row.insert(
            "oneOf".into(),
            json!([
                {"required": ["property_id"], "not": {"anyOf": [{"required": ["test_id"]}, {"required": ["covers"]}]}},
                {"required": ["test_id", "covers"], "not": {"required": ["property_id"]}}
            ]),
        );
    });
}
