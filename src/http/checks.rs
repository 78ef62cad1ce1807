//! `POST /route/checks`: a thin handler over the core's reading of a forge's checks.

use axum::extract::State;
use axum::response::Response;
use serde::Deserialize;
use utoipa::ToSchema;

use super::AppState;
use super::decide::decide;
use super::extract::{Accept, JsonBytes};
use crate::core::checks::{ChecksAnswer, ChecksOutcome};
use crate::core::problem::Problem;

/// Route a forge's check results: GitHub's list-check-runs and combined-status responses,
/// verbatim, and which checks make up each gate.
///
/// One check: `success` → pass; `failure` → fail; `neutral`, `skipped`, `cancelled`,
/// `timed_out`, `action_required`, `stale`, `startup_failure` → unknown (a skipped job is
/// never a pass); status `error` → unknown; not completed or `pending` → pending. One gate:
/// any check absent → missing; else any fail → fail; else any unknown → unknown; else pass.
/// Runs for another `head_sha` are ignored; of one name only the latest counts. While a check
/// is pending: 425 `PENDING` with `Retry-After` — unless a gate already failed and none is
/// missing, which is decided now. Otherwise the router decides: 200 MERGE_OK, 409 BLOCK, 424
/// ESCALATE, with the checks read per gate.
#[utoipa::path(
    post,
    path = "/route/checks",
    tag = "router",
    request_body(content = ChecksRequestDoc, content_type = "application/json"),
    responses(
        (status = 200, description = "MERGE_OK (exit 0)",
            content((ChecksAnswer = "application/json"), (String = "text/plain"))),
        (status = 409, description = "BLOCK (exit 1): the patch is wrong",
            content((ChecksAnswer = "application/json"), (String = "text/plain"))),
        (status = 424, description = "ESCALATE (exit 2): a human must look",
            content((ChecksAnswer = "application/json"), (String = "text/plain"))),
        (status = 425, description = "PENDING (exit 75): a check still runs; ask again after `Retry-After` seconds",
            content((ChecksAnswer = "application/json"), (String = "text/plain")),
            headers(("Retry-After" = u32, description = "Seconds to wait before asking again"))),
        super::error::DecisionProblems,
    )
)]
pub async fn route_checks(
    State(state): State<AppState>,
    accept: Accept,
    JsonBytes(body, _slot): JsonBytes,
) -> Result<Response, Problem> {
    decide::<ChecksOutcome>(state, &accept, body).await
}

// ---------------------------------------------------------------------------------------------
// The request document, for the OpenAPI document (what the parser in core accepts)

/// A forge's check results and which checks make up each gate. Unknown fields are refused
/// (422) everywhere but inside `check_runs` and `statuses`, which are the forge's documents,
/// verbatim: there, fields the router does not read are ignored.
#[expect(
    dead_code,
    reason = "a schema for the OpenAPI document: the strict parser in core reads the body, never these fields"
)]
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ChecksRequestDoc {
    /// Echoed in the answer; at most 256 characters.
    #[schema(nullable = false, max_length = 256)]
    patch_id: Option<String>,
    /// The pull request's head commit: runs for another commit are stale.
    head_sha: super::schema::CommitDoc,
    gates: GatesDoc,
    /// GitHub's list-check-runs response, verbatim.
    #[schema(nullable = false)]
    check_runs: Option<CheckRunsDoc>,
    /// GitHub's combined-status response, verbatim.
    #[schema(nullable = false)]
    statuses: Option<CombinedStatusDoc>,
}

/// Each gate's check names (a check run's `name` or a status's `context`); at least one each.
#[expect(
    dead_code,
    reason = "a schema for the OpenAPI document: the strict parser in core reads the body, never these fields"
)]
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct GatesDoc {
    #[schema(min_items = 1)]
    property_check: Vec<super::schema::CheckNameDoc>,
    #[schema(min_items = 1)]
    fixture_check: Vec<super::schema::CheckNameDoc>,
    #[schema(min_items = 1)]
    flaky_freeze: Vec<super::schema::CheckNameDoc>,
}

/// GitHub's list-check-runs response (other fields are ignored).
#[expect(
    dead_code,
    reason = "a schema for the OpenAPI document: the strict parser in core reads the body, never these fields"
)]
#[derive(Deserialize, ToSchema)]
pub struct CheckRunsDoc {
    #[schema(nullable = false, minimum = 0, maximum = 9223372036854775807_u64)]
    total_count: Option<u64>,
    check_runs: Vec<CheckRunDoc>,
}

/// A check run (other fields — `app`, `output`, `pull_requests`... — are ignored).
#[expect(
    dead_code,
    reason = "a schema for the OpenAPI document: the strict parser in core reads the body, never these fields"
)]
#[derive(Deserialize, ToSchema)]
pub struct CheckRunDoc {
    #[schema(minimum = 0, maximum = 9223372036854775807_u64)]
    id: u64,
    #[schema(min_length = 1, max_length = 4096)]
    name: String,
    /// Compared with the request's `head_sha` (another commit's run is stale).
    #[schema(min_length = 1, max_length = 64)]
    head_sha: String,
    /// `queued`, `in_progress`, `completed`...
    #[schema(min_length = 1, max_length = 4096)]
    status: String,
    /// Set once completed: `success`, `failure`, `neutral`, `skipped`, `cancelled`...
    conclusion: Option<String>,
    html_url: Option<String>,
}

/// GitHub's combined-status response (other fields are ignored).
#[expect(
    dead_code,
    reason = "a schema for the OpenAPI document: the strict parser in core reads the body, never these fields"
)]
#[derive(Deserialize, ToSchema)]
pub struct CombinedStatusDoc {
    /// The commit the statuses are for: another than `head_sha` makes them stale.
    #[schema(nullable = false)]
    sha: Option<super::schema::CommitDoc>,
    statuses: Vec<StatusDoc>,
}

/// A commit status (other fields are ignored).
#[expect(
    dead_code,
    reason = "a schema for the OpenAPI document: the strict parser in core reads the body, never these fields"
)]
#[derive(Deserialize, ToSchema)]
pub struct StatusDoc {
    #[schema(min_length = 1, max_length = 4096)]
    context: String,
    /// `success`, `failure`, `error` or `pending`.
    #[schema(min_length = 1, max_length = 4096)]
    state: String,
    updated_at: Option<String>,
    target_url: Option<String>,
}
