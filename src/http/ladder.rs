//! The ladder's stateless endpoints: plan, report, freeze eligibility, review, calibrate.

use axum::Json;
use axum::extract::State;
use serde::Deserialize;
use utoipa::ToSchema;

use super::AppState;
use super::budget::run_cpu;
use super::extract::{JsonBytes, Rows};
use crate::core::fields::{self, Errors, object};
use crate::core::json::parse_json;
use crate::core::ladder::{
    self, CalibrationClass, FreezeAnswer, Plan, Report, Review, ScopeMarkers, default_tiers,
};
use crate::core::problem::Problem;
use crate::core::route::Attribution;

/// Plan the ladder for a diff: a test-adjacent path (a `tests` or `fixtures` directory
/// segment; `conftest.py`, `pytest.ini`, `tox.ini`; a basename starting `test_`) sends it
/// straight to `t2-fixtures`; otherwise `t1-properties` then `t2-fixtures`.
#[utoipa::path(post, path = "/ladder/plan", tag = "ladder",
    request_body(content = PlanRequestDoc, content_type = "application/json"),
    responses(
        (status = 200, description = "The tiers to run, in order, and the scope hits", body = Plan),
        super::error::JsonBodyProblems,
        (status = 422, description = "Invalid; `errors` names each field", body = Problem, content_type = "application/problem+json"),
    ))]
pub async fn plan(
    State(state): State<AppState>,
    JsonBytes(body, _slot): JsonBytes,
) -> Result<Json<Plan>, Problem> {
    run_cpu(&state, body.len(), move || plan_answer(&body)).await?
}

fn plan_answer(body: &[u8]) -> Result<Json<Plan>, Problem> {
    let value = parse_json(body)?;
    let mut e = Errors::default();
    let files = object(&value, "", "the plan request", &["changed_files"], &mut e)
        .and_then(|doc| doc.required("changed_files", &mut e))
        .and_then(|v| fields::paths(v, "/changed_files", false, &mut e));
    match files {
        Some(files) if e.is_empty() => Ok(Json(ladder::plan(
            &files,
            &ScopeMarkers::default(),
            &default_tiers(),
        ))),
        _ => Err(Problem::invalid(e)),
    }
}

/// The yield report of a ladder ledger (a JSON array, or NDJSON as `application/x-ndjson` or
/// `text/plain`): per tier (in name order) runs, passes, caught,
/// errors, median seconds (as Python's `statistics.median`), total seconds, and catches per
/// second (null for a scope tier or a zero total), with plain-language notes.
#[utoipa::path(post, path = "/ladder/report", tag = "ladder",
    request_body(content(
        (Vec<ladder::TierRow> = "application/json"),
        (Vec<ladder::TierRow> = "application/x-ndjson"),
    )),
    responses(
        (status = 200, description = "The report", body = Report),
        (status = 400, description = "Malformed JSON array", body = Problem, content_type = "application/problem+json"),
        (status = 413, description = "Body over the limit", body = Problem, content_type = "application/problem+json"),
        (status = 415, description = "Neither JSON nor NDJSON", body = Problem, content_type = "application/problem+json"),
        (status = 422, description = "A bad row; for NDJSON the detail names the line", body = Problem, content_type = "application/problem+json"),
    ))]
pub async fn report(State(state): State<AppState>, rows: Rows) -> Result<Json<Report>, Problem> {
    let Rows { body, ndjson, slot } = rows;
    let report = run_cpu(&state, body.len(), move || {
        ladder::report_of_ledger(&body, ndjson)
    })
    .await??;
    drop(slot);
    ladder::check_report(&report)?;
    Ok(Json(report))
}

/// Whether a flaky test may be frozen: at least `min_runs` outcomes, a flip rate of at least
/// `min_flip_rate`, and a seeded bug it caught. Answered 200 either way; `eligible` and
/// `exit_code` (0 eligible, 1 not) carry the verdict.
#[utoipa::path(post, path = "/freeze/eligibility", tag = "ladder",
    request_body(content = FreezeRequestDoc, content_type = "application/json"),
    responses(
        (status = 200, description = "The verdict", body = FreezeAnswer),
        super::error::JsonBodyProblems,
        (status = 422, description = "Invalid (`min_runs` below 2...); `errors` names each field", body = Problem, content_type = "application/problem+json"),
    ))]
pub async fn freeze(
    State(state): State<AppState>,
    JsonBytes(body, _slot): JsonBytes,
) -> Result<Json<FreezeAnswer>, Problem> {
    run_cpu(&state, body.len(), move || {
        let value = parse_json(&body)?;
        let request = ladder::parse_freeze(&value).map_err(Problem::invalid)?;
        Ok(Json(ladder::freeze_eligibility(&request)))
    })
    .await?
}

/// Review the router from its decision log (NDJSON, as the service writes it, as
/// `application/x-ndjson` or `text/plain`): counts by
/// disposition and attribution, the escalation rate, and the share escalated on
/// `inadmissible-evidence`, with a warning at 40% or more.
#[utoipa::path(post, path = "/review", tag = "ladder",
    request_body(content((ReviewBodyDoc = "application/x-ndjson"))),
    responses(
        (status = 200, description = "The review", body = Review),
        (status = 413, description = "Body over the limit", body = Problem, content_type = "application/problem+json"),
        (status = 415, description = "Not NDJSON", body = Problem, content_type = "application/problem+json"),
        (status = 422, description = "A line that is not JSON (the detail names it)", body = Problem, content_type = "application/problem+json"),
    ))]
pub async fn review(State(state): State<AppState>, rows: Rows) -> Result<Json<Review>, Problem> {
    if !rows.ndjson {
        return Err(Problem::new(
            415,
            "unsupported-media-type",
            "send the decision log as NDJSON (`application/x-ndjson`), as the service writes it",
        ));
    }
    let Rows { body, slot, .. } = rows;
    let review = run_cpu(&state, body.len(), move || ladder::review(&body)).await?;
    drop(slot);
    review.map(Json).map_err(Problem::invalid)
}

/// Calibrate attributions from where the eventual fixes landed: per attribution class, the
/// count and the shares of fixes in production code, in the check, and in both.
#[utoipa::path(post, path = "/calibrate", tag = "ladder",
    request_body(content(
        (Vec<CalibrationRowDoc> = "application/json"),
        (Vec<CalibrationRowDoc> = "application/x-ndjson"),
    )),
    responses(
        (status = 200, description = "One line per attribution class, in name order", body = Vec<CalibrationClass>),
        (status = 400, description = "Malformed JSON array", body = Problem, content_type = "application/problem+json"),
        (status = 413, description = "Body over the limit", body = Problem, content_type = "application/problem+json"),
        (status = 415, description = "Neither JSON nor NDJSON", body = Problem, content_type = "application/problem+json"),
        (status = 422, description = "A bad row; for NDJSON the detail names the line", body = Problem, content_type = "application/problem+json"),
    ))]
pub async fn calibrate(
    State(state): State<AppState>,
    rows: Rows,
) -> Result<Json<Vec<CalibrationClass>>, Problem> {
    let Rows { body, ndjson, slot } = rows;
    let classes = run_cpu(&state, body.len(), move || {
        ladder::parse_rows(&body, ndjson, ladder::parse_calibration_row)
            .map(|rows| ladder::calibrate(&rows))
    })
    .await??;
    drop(slot);
    Ok(Json(classes))
}

// ---------------------------------------------------------------------------------------------
// The request document, for the OpenAPI document (what the strict parser in core accepts)

/// The diff to plan for.
#[expect(
    dead_code,
    reason = "a schema for the OpenAPI document: the strict parser in core reads the body, never these fields"
)]
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct PlanRequestDoc {
    /// Repo-relative paths the patch changes.
    changed_files: Vec<super::schema::RepoPathDoc>,
}

/// A flaky test's history and the evidence rule's thresholds.
#[expect(
    dead_code,
    reason = "a schema for the OpenAPI document: the strict parser in core reads the body, never these fields"
)]
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct FreezeRequestDoc {
    /// Pass (true) / fail (false) outcomes, oldest first.
    outcomes: Vec<bool>,
    /// Whether the test caught a deliberately seeded bug.
    caught_seeded_bug: bool,
    /// Default 20; at least 2.
    #[schema(nullable = false, minimum = 2, maximum = 1000000000_u64)]
    min_runs: Option<u64>,
    /// Default 0.02.
    #[schema(nullable = false, minimum = 0, maximum = 1)]
    min_flip_rate: Option<f64>,
}

/// A decision-log line as `/review` reads it: the router's decisions (`/route`, `/route/batch`,
/// `/route/checks`, and `/gate` decisions the router made). Every other field of the line (the
/// service writes many) is read past; lines that are not router decisions are skipped and
/// counted.
#[expect(
    dead_code,
    reason = "a schema for the OpenAPI document: the strict parser in core reads the body, never these fields"
)]
#[derive(Deserialize, ToSchema)]
pub struct DecisionLineDoc {
    #[schema(pattern = "^patchgate::decision$")]
    target: String,
    endpoint: ReviewedEndpointDoc,
    disposition: crate::core::route::Disposition,
    attribution: Attribution,
}

/// The endpoints whose decisions the router made.
#[derive(Deserialize, ToSchema)]
pub enum ReviewedEndpointDoc {
    #[serde(rename = "route")]
    Route,
    #[serde(rename = "route/batch")]
    RouteBatch,
    #[serde(rename = "route/checks")]
    RouteChecks,
    #[serde(rename = "gate")]
    Gate,
}

crate::core::value_schema!(
    /// A decision log: at least one line must be a router decision (a log without one is a
    /// 422).
    ReviewBodyDoc as "DecisionLog",
    || utoipa::openapi::schema::ArrayBuilder::new()
        .description(Some(
            "The decision log, one JSON line per decision (shown here as the array of its lines); at least one line must be a router decision.",
        ))
        .items(utoipa::openapi::Ref::from_schema_name("DecisionLineDoc"))
        .min_items(Some(1)),
    uses DecisionLineDoc
);

/// Where a BLOCK's eventual fix landed.
#[expect(
    dead_code,
    reason = "a schema for the OpenAPI document: the strict parser in core reads the body, never these fields"
)]
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CalibrationRowDoc {
    /// The router's attribution, or the gate's reason when a gate rule decided.
    attribution: crate::core::gate::GateReason,
    fix_files: Vec<super::schema::RepoPathDoc>,
    fix_changed: FixChangedDoc,
    /// The decision the row came from (`patchgate calibrate --log --rows-out` writes it).
    #[serde(default)]
    #[schema(min_length = 1, max_length = 128, nullable = false)]
    decision_id: Option<String>,
}

#[derive(Deserialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum FixChangedDoc {
    Production,
    Check,
    Both,
}
