//! The OpenAPI document, generated from the handlers and types with utoipa: this only
//! aggregates (info, tags, the schemas each handler module declares beside itself); the paths
//! come from the endpoint declaration. The committed copy in `openapi/openapi.json` is checked
//! against this by a test.

use utoipa::OpenApi;

use crate::core::answer::{RouteAnswer, ScopedFreezeAnswer, TableRow};
use crate::core::problem::{FieldError, Problem};
use crate::core::route::{Attribution, Disposition, RuleName, Verdict, Verdicts};

#[derive(OpenApi)]
#[openapi(
    info(
        title = "patchgate",
        description = "Decides whether a code patch may merge. Only a go is 2xx: 200 go (exit 0), \
409 the patch is wrong (exit 1), 424 a human must look (exit 2), 423 the queue is stopped (exit 3). \
Errors are RFC 9457 problem documents."
    ),
    components(schemas(
        super::route::RouteRequestDoc, super::route::FrozenTestDoc, RouteAnswer, ScopedFreezeAnswer, TableRow, Verdicts,
        Verdict, Disposition, Attribution, RuleName, Problem, FieldError,
        super::route::BatchItem, super::route::BatchDecided, super::route::BatchRejected,
        super::ops::Health,
        super::quorum::QuorumRequestDoc, super::quorum::CatalogDoc, super::quorum::PropertyDoc, super::quorum::ResultDoc, super::quorum::LedgerRowDoc, super::quorum::LedgerStateDoc, super::quorum::SealDoc,
        crate::core::quorum::QuorumAnswer, crate::core::quorum::PropertyReport, crate::core::quorum::Debt,
        crate::core::quorum::SealCheckAnswer, crate::core::quorum::Outcome, crate::core::quorum::Reason,
        crate::core::quorum::Vote, crate::core::quorum::RunState, crate::core::quorum::Strength,
        super::seal::SealRequestDoc, super::seal::SealFileDoc, crate::core::seal::SealAnswer, crate::core::seal::Excluded, crate::core::seal::DriftAnswer,
        super::ladder::PlanRequestDoc, super::ladder::FreezeRequestDoc, super::ladder::CalibrationRowDoc, super::ladder::FixChangedDoc,
        crate::core::ladder::Plan, crate::core::ladder::Report, crate::core::ladder::TierReport,
        crate::core::ladder::LedgerRow, crate::core::ladder::TierVerdict, crate::core::ladder::FreezeAnswer,
        crate::core::ladder::Review, crate::core::ladder::CalibrationClass,
        super::gate::GateRequestDoc, super::gate::GateCatalogDoc, super::gate::GatePropertyDoc, super::gate::FixtureSuiteDoc,
        crate::core::gate::GateAnswer, crate::core::gate::GateDisposition, crate::core::gate::GateRuleName,
        crate::core::gate::GateReason, crate::core::gate::Step, crate::core::gate::GuardHit, crate::core::gate::OpenRow,
        crate::core::gate::GateRuleRow,
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
    let mut s = doc.to_pretty_json().unwrap_or_else(|_| "{}".to_owned());
    s.push('\n');
    s
}
