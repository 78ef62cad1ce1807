//! `POST /admit`: a thin handler over the core's admission rules.

use axum::extract::State;
use axum::response::Response;
use serde::Deserialize;
use utoipa::ToSchema;

use super::AppState;
use super::decide::decide;
use super::extract::{Accept, JsonBytes};
use crate::core::admit::{AdmitAnswer, AdmitDecision};
use crate::core::problem::Problem;

/// Decide whether a check earns its vote: a two-commit proof on the same sealed fixtures.
///
/// Rules, first match wins: the two trees' fixture seals differ → inconclusive `seal-differs`
/// (424); the base runs fail → rejected `fails-on-base` (409); the base runs are a flake or an
/// error → inconclusive `unstable-on-base` / `harness-error` (424); the mutant runs pass →
/// rejected `tautology` (409: it passes with its invariant deleted); the mutant runs are a
/// flake or an error → inconclusive `unstable-on-mutant` / `harness-error` (424); otherwise
/// admitted `two-commit-proof` (200), with the `record` to commit into the catalog row as
/// `admitted`. Runs are classified as in `/quorum`: only a catch is a failure.
#[utoipa::path(
    post,
    path = "/admit",
    tag = "admission",
    request_body(content = AdmitRequestDoc, content_type = "application/json"),
    responses(
        (status = 200, description = "admitted (exit 0): `record` is the proof to commit", body = AdmitAnswer),
        (status = 409, description = "rejected (exit 1): fails-on-base or tautology", body = AdmitAnswer),
        (status = 424, description = "inconclusive (exit 2): seal-differs, unstable-on-base, unstable-on-mutant or harness-error", body = AdmitAnswer),
        super::error::DecisionProblems,
    )
)]
pub async fn admit(
    State(state): State<AppState>,
    accept: Accept,
    JsonBytes(body, _slot): JsonBytes,
) -> Result<Response, Problem> {
    decide::<AdmitDecision>(state, &accept, body).await
}

// ---------------------------------------------------------------------------------------------
// The request document, for the OpenAPI document (what the strict parser in core accepts)

/// The admission request. Unknown fields are refused (422).
#[expect(
    dead_code,
    reason = "a schema for the OpenAPI document: the strict parser in core reads the body, never these fields"
)]
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct AdmitRequestDoc {
    /// The catalog property's id, or the test's (`classname::name`).
    #[schema(min_length = 1, max_length = 256)]
    check_id: String,
    kind: crate::core::admit::CheckKind,
    seal: TreeSealsDoc,
    /// The check's runs on the unmodified tree: 2 to 10, each an exit code (0-255) or null for
    /// a run killed by its timeout or a signal.
    #[schema(min_items = 2, max_items = 10)]
    base_runs: Vec<Option<super::schema::ExitCodeDoc>>,
    /// Its runs on the mutant (the invariant deleted, nothing else changed), the same way.
    #[schema(min_items = 2, max_items = 10)]
    mutant_runs: Vec<Option<super::schema::ExitCodeDoc>>,
    /// The exit codes that are a catch, 1-255; default `[1]` (pytest's).
    #[schema(nullable = false, min_items = 1)]
    catch_exit_codes: Option<Vec<super::schema::CatchCodeDoc>>,
    /// The mutant's commit id, or a label for it.
    #[schema(min_length = 1, max_length = 256)]
    mutant: String,
    /// The digest of the check's source on the base (64 hex digits), when the caller gives
    /// it: recorded in the admission record, so a later change to the source is seen.
    #[schema(nullable = false)]
    source: Option<super::schema::Sha256Doc>,
}

/// The fixtures seal of each tree (64 hex digits each).
#[expect(
    dead_code,
    reason = "a schema for the OpenAPI document: the strict parser in core reads the body, never these fields"
)]
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct TreeSealsDoc {
    base: super::schema::Sha256Doc,
    mutant: super::schema::Sha256Doc,
}

/// A catalog row's `admitted`: the record `/admit` answered on admission. It must be a proof
/// (base runs all 0, mutant runs all a catch, read with the request's `catch_exit_codes`), or
/// the request is refused (422).
#[expect(
    dead_code,
    reason = "a schema for the OpenAPI document: the strict parser in core reads the body, never these fields"
)]
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct AdmissionRecordDoc {
    /// The fixtures seal both trees had.
    seal: super::schema::Sha256Doc,
    /// The mutant's commit id or label.
    #[schema(min_length = 1, max_length = 256)]
    mutant: String,
    #[schema(min_items = 2, max_items = 10)]
    base_runs: Vec<Option<super::schema::ExitCodeDoc>>,
    #[schema(min_items = 2, max_items = 10)]
    mutant_runs: Vec<Option<super::schema::ExitCodeDoc>>,
    /// The digest of the property's source when it was proven (issue 50): a row whose source
    /// changed since votes as unadmitted until admitted again. Absent in older records.
    #[schema(nullable = false)]
    source: Option<super::schema::Sha256Doc>,
}
