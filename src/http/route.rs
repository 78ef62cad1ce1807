//! `/route`, `/route/batch`, `/route/table`: thin handlers over the core's ladder.

use axum::Json;
use axum::extract::State;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::AppState;
use super::budget::run_cpu;
use super::decide::decide;
use super::extract::{Accept, JsonBytes};
use super::layers::with_request_id;
use super::status_for_exit;
use crate::core::answer::{RouteAnswer, RouteOutcome, TableRow, route_table as table_rows};
use crate::core::decision::{Decision, Defaults};
use crate::core::evidence::{BatchDoc, RouteRequest, validate};
use crate::core::json::parse_json_as;
use crate::core::problem::{FieldError, MAX_ERRORS, Problem};
use crate::core::route::Verdict;
use crate::ids::new_decision_id;
use crate::telemetry::log_decision_of;

use super::schema::MAX_BATCH;

/// One `/route/batch` document decided, logged and counted as the batch's.
fn decide_in_batch(state: &AppState, request: &RouteRequest) -> (RouteOutcome, String) {
    const ENDPOINT: &str = "route/batch";
    let outcome = RouteOutcome::decide(request, &Defaults::default());
    let decision_id = new_decision_id();
    with_request_id(|request_id| {
        log_decision_of(ENDPOINT, request_id, &decision_id, request, &outcome);
    });
    state.metrics().record_decision(ENDPOINT, outcome.label());
    (outcome, decision_id)
}

/// A JSON answer with `status`, serialised into a buffer sized for a typical answer.
pub fn json_response<T: Serialize>(status: StatusCode, value: &T) -> Response {
    let mut buf = Vec::with_capacity(512);
    match serde_json::to_writer(&mut buf, value) {
        Ok(()) => {
            let mut res = (status, buf).into_response();
            res.headers_mut().insert(
                header::CONTENT_TYPE,
                HeaderValue::from_static("application/json"),
            );
            res
        }
        Err(e) => {
            tracing::error!(error = %e, "cannot serialise an answer");
            Problem::new(500, "internal", "an internal error occurred").into_response()
        }
    }
}

/// Decide one patch from its three gate verdicts.
///
/// The status is the exit code's twin: 200 MERGE_OK, 409 BLOCK, 424 ESCALATE. With
/// `Accept: text/plain` the body is the one line `DISPOSITION attribution=...`.
#[utoipa::path(
    post,
    path = "/route",
    tag = "router",
    request_body(content = RouteRequestDoc, content_type = "application/json"),
    responses(
        (status = 200, description = "MERGE_OK (exit 0)",
            content((RouteAnswer = "application/json"), (String = "text/plain"))),
        (status = 409, description = "BLOCK (exit 1): the patch is wrong",
            content((RouteAnswer = "application/json"), (String = "text/plain"))),
        (status = 424, description = "ESCALATE (exit 2): a human must look",
            content((RouteAnswer = "application/json"), (String = "text/plain"))),
        super::error::DecisionProblems,
    )
)]
pub async fn route(
    State(state): State<AppState>,
    accept: Accept,
    JsonBytes(body, _slot): JsonBytes,
) -> Result<Response, Problem> {
    decide::<RouteOutcome>(state, &accept, body).await
}

/// One slot of a batch answer: a decision with the status it would have had alone, or the
/// problem that kept this document from being decided.
#[derive(Debug, Serialize, ToSchema)]
#[serde(untagged)]
pub enum BatchItem {
    Decided(BatchDecided),
    Rejected(BatchRejected),
}

/// A decided document: the `/route` answer plus its status.
#[derive(Debug, Serialize, ToSchema)]
pub struct BatchDecided {
    #[serde(flatten)]
    pub answer: RouteAnswer,
    /// The HTTP status this document would have had alone (200, 409 or 424).
    pub status: u16,
}

/// A document that could not be decided.
#[derive(Debug, Serialize, ToSchema)]
pub struct BatchRejected {
    /// Position of the document in the request array.
    pub index: usize,
    /// The status this document would have had alone (422).
    pub status: u16,
    pub error: Problem,
}

/// Decide many patches in one call (up to 10,000 documents).
///
/// Answers 200 with one slot per document, in order; a bad document is reported in its own
/// slot and the others are still decided. Each slot's `status` is the one it would have had
/// alone, so a batch answer is never read as a go for any patch on its own.
#[utoipa::path(
    post,
    path = "/route/batch",
    tag = "router",
    request_body(content = super::schema::RouteBatchDoc, content_type = "application/json"),
    responses(
        (status = 200, description = "One slot per document, in order", body = Vec<BatchItem>),
        (status = 400, description = "Malformed JSON or empty body", body = Problem, content_type = "application/problem+json"),
        (status = 413, description = "Body over the limit", body = Problem, content_type = "application/problem+json"),
        (status = 415, description = "Not application/json", body = Problem, content_type = "application/problem+json"),
        (status = 422, description = "Not an array, or more than 10,000 documents", body = Problem, content_type = "application/problem+json"),
    )
)]
pub async fn route_batch(
    State(state): State<AppState>,
    JsonBytes(body, _slot): JsonBytes,
) -> Result<Response, Problem> {
    let worker = state.clone();
    run_cpu(&state, body.len(), move || batch_answer(&worker, &body)).await?
}

fn batch_answer(state: &AppState, body: &[u8]) -> Result<Response, Problem> {
    let documents = match parse_json_as::<BatchDoc>(body)? {
        BatchDoc::Docs(docs) => docs,
        BatchDoc::NotArray(kind) => {
            return Err(Problem::invalid(vec![FieldError::new(
                "",
                format!("a batch must be a JSON array of evidence documents, not {kind}"),
            )]));
        }
    };
    if documents.len() > MAX_BATCH {
        return Err(Problem::invalid(vec![FieldError::new(
            "",
            format!(
                "a batch holds at most {MAX_BATCH} documents; this one has {}",
                documents.len()
            ),
        )]));
    }
    // The field errors listed across all slots share one cap, so a batch of bad documents
    // answers in a bounded size; a slot past it keeps its detail and its count.
    let mut listed = 0usize;
    let items: Vec<BatchItem> = documents
        .into_iter()
        .enumerate()
        .map(|(index, doc)| match validate(doc) {
            Ok(request) => {
                let (outcome, decision_id) = decide_in_batch(state, &request);
                let status = status_for_exit(outcome.decision.exit_code()).as_u16();
                BatchItem::Decided(BatchDecided {
                    answer: outcome.answer(decision_id),
                    status,
                })
            }
            // Pointers stay relative to the document, as `/route` alone would give them.
            Err(errors) => {
                let mut error = Problem::invalid(errors);
                if listed + error.errors.len() > MAX_ERRORS {
                    let found = error.total_errors.unwrap_or(error.errors.len());
                    error.errors.clear();
                    error.truncated = true;
                    error.total_errors = Some(found);
                }
                listed += error.errors.len();
                BatchItem::Rejected(BatchRejected {
                    index,
                    status: error.status,
                    error,
                })
            }
        })
        .collect();
    Ok(json_response(StatusCode::OK, &items))
}

/// All 64 verdict combinations with their decisions, in a fixed order (property outermost,
/// then fixture, then the freeze gate; each pass, fail, unknown, missing), from the same
/// ladder `/route` runs.
#[utoipa::path(
    get,
    path = "/route/table",
    tags = ["router", "reference"],
    responses((status = 200, description = "The 64 rows", body = Vec<TableRow>))
)]
pub async fn route_table() -> Json<Vec<TableRow>> {
    Json(table_rows())
}

// ---------------------------------------------------------------------------------------------
// The request document, for the OpenAPI document (what the strict parser in core accepts)

/// The router's evidence document. An absent gate field means `missing`. Instead of
/// `flaky_freeze`, a request may carry `changed_files` and `frozen_tests`: the freeze gate is
/// then `unknown` when a frozen test covers a changed file (whole path segments), else `pass`.
/// Unknown fields are refused (422), so a typo never turns into `missing`.
#[expect(
    dead_code,
    reason = "a schema for the OpenAPI document: the strict parser in core reads the body, never these fields"
)]
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct RouteRequestDoc {
    /// Echoed in the answer; at most 256 characters.
    #[schema(nullable = false, max_length = 256, example = "pr-1841")]
    patch_id: Option<String>,
    #[schema(nullable = false)]
    property_check: Option<Verdict>,
    #[schema(nullable = false)]
    fixture_check: Option<Verdict>,
    #[schema(nullable = false)]
    flaky_freeze: Option<Verdict>,
    /// Repo-relative paths the patch changes (scoped-freeze form; needs `frozen_tests`).
    #[schema(nullable = false)]
    changed_files: Option<Vec<super::schema::RepoPathDoc>>,
    /// Frozen tests and the code they cover (scoped-freeze form; needs `changed_files`).
    #[schema(nullable = false)]
    frozen_tests: Option<Vec<FrozenTestDoc>>,
}

/// A frozen test and the path prefixes (whole segments) of the code it covers.
#[expect(
    dead_code,
    reason = "a schema for the OpenAPI document: the strict parser in core reads the body, never these fields"
)]
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct FrozenTestDoc {
    /// Unique within the request.
    #[schema(min_length = 1, max_length = 256)]
    id: String,
    /// Non-empty list of repo-relative path prefixes.
    #[schema(min_items = 1)]
    covers: Vec<super::schema::RepoPathDoc>,
}
