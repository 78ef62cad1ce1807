//! `POST /gate` and `GET /gate/rules`: thin handlers over the core's patch gate.

use axum::Json;
use axum::extract::State;
use axum::response::Response;
use serde::Deserialize;
use utoipa::ToSchema;

use super::AppState;
use super::budget::run_cpu;
use super::decide::decide;
use super::extract::{Accept, JsonBytes};

use super::route::json_response;
use crate::core::gate::{
    GateAnswer, GateDecision, GateNext, GateRuleRow, next_step, parse_gate_request, rule_rows,
};
use crate::core::json::parse_json;
use crate::core::problem::Problem;

/// Decide one patch from the facts its gate gathered.
///
/// Rules, first match wins (`GET /gate/rules` lists them): (1) the head does not merge
/// cleanly into the base (`merge_conflicts` non-empty) → ESCALATE `merge-conflict` (424); (2)
/// the seal does not match the base's expected seal → ESCALATE `seal-mismatch` (424); (3)
/// freeze debt over the cap → STOP_QUEUE `debt-over-cap` (423); (4) a changed file is, or lies
/// under, a guarded path or a property's `source` → ESCALATE `guarded-input-edited` (424); (5)
/// a changed file is compiled or binary (by its name, or listed in `binaries`) → ESCALATE
/// `binary-added` (424); (6) a `suspicious` line in a file that is not test-adjacent →
/// ESCALATE `test-aware-code` (424); (7) a run changed a tracked file, created a file outside scratch or changed the fixtures' seal
/// (`integrity`) → ESCALATE `modified-during-run` (424); (8) the build step exited with a
/// catch → BLOCK `does-not-build` (409); (9) the build step exited otherwise, or was killed →
/// ESCALATE `harness-error` (424); (10) the canary did not fail with a receipt listing its
/// failure → ESCALATE `checker-neutered` (424); (11) an admitted property passed with its
/// admission mutant applied (`reproof`) → ESCALATE `checker-neutered` (424); (12) otherwise the
/// router over the three derived verdicts (t0 scope, t1 quorum with runs counted by their
/// receipts, t2 fixture suite with frozen failures discarded only when its re-run passed,
/// scoped freeze): 200 MERGE_OK, 409 BLOCK, 424 ESCALATE. `steps` says what each step saw and concluded. With
/// `Accept: text/plain` the body is one line (`ESCALATE reason=guarded-input-edited`); with
/// `Accept: text/markdown` a report for a pull-request comment or a CI job summary. A body
/// `{"shards": [...]}` holds the facts of the N shards of one split gate (`patchgate gate
/// --shard K/N`): they are checked (all there, each once, finished, unedited, one head, base
/// config, split and version; else ESCALATE `evidence-gap`, rule `shards`, 424) and decided
/// once; one shard's facts alone are ESCALATE `evidence-gap` too.
#[utoipa::path(
    post,
    path = "/gate",
    tag = "gate",
    request_body(content = crate::core::gate::GateBody, content_type = "application/json"),
    responses(
        (status = 200, description = "MERGE_OK (exit 0)",
            content((GateAnswer = "application/json"), (String = "text/plain"), (String = "text/markdown"))),
        (status = 409, description = "BLOCK (exit 1): the patch is wrong",
            content((GateAnswer = "application/json"), (String = "text/plain"), (String = "text/markdown"))),
        (status = 423, description = "STOP_QUEUE (exit 3): freeze debt is over the cap",
            content((GateAnswer = "application/json"), (String = "text/plain"), (String = "text/markdown"))),
        (status = 424, description = "ESCALATE (exit 2): a human must look",
            content((GateAnswer = "application/json"), (String = "text/plain"), (String = "text/markdown"))),
        super::error::DecisionProblems,
    )
)]
pub async fn gate(
    State(state): State<AppState>,
    accept: Accept,
    JsonBytes(body, _slot): JsonBytes,
) -> Result<Response, Problem> {
    decide::<GateDecision>(state, &accept, body).await
}

/// Plan the patch gate's next step from the facts gathered so far (the same body as
/// `POST /gate`, each step's facts left out until it ran; `configured` says which optional
/// steps the runner can run).
///
/// The plan's rows, first due wins: `decide` when a gate rule decided on the facts so far;
/// `build` (run the build step, send it as `build`); `runs` (run the canary when `canary`
/// is true, and `property_ids`, each the configured number of times; send them as `canary`,
/// `property_runs` and `property_receipts`); `reproof` (run the admitted property `reprove`
/// on a fresh copy with its admission mutant applied; add it to `reproof`); `suite` (run the
/// fixture suite, send it as `fixture_suite`); `rerun` (run it again without `deselect`, send
/// it as `fixture_suite.rerun`); `decide` (send everything to `POST /gate`). `work` lists the
/// step as work items, what a runner reads: each with its kind, the tree it runs on, the
/// items it waits for, and whether it is speculative (it may start now in a copy of its own,
/// and be dropped: the suite beside the runs, the re-proof the same draw names next);
/// `added_tests` (run the test files the patch adds, send them as `fixture_suite.added`) has
/// no field but its item. `say`: what to tell people now. `disposition`, `rule`, `reason` and `steps`
/// are what the gate would answer on these facts alone. `patchgate gate --server` asks this
/// before each step, so the server's settings (its debt cap) decide what runs. Not a
/// decision: always 200, no `decision_id`, nothing logged.
#[utoipa::path(
    post,
    path = "/gate/next",
    tag = "gate",
    request_body(content = crate::core::gate::Facts, content_type = "application/json"),
    responses(
        (status = 200, description = "The next step", body = GateNext),
        super::error::DecisionProblems,
    )
)]
pub async fn gate_next(
    State(state): State<AppState>,
    JsonBytes(body, _slot): JsonBytes,
) -> Result<Response, Problem> {
    let worker = state.clone();
    run_cpu(&state, body.len(), move || {
        let value = parse_json(&body)?;
        let request = parse_gate_request(&value).map_err(Problem::invalid)?;
        let plan = next_step(&request, worker.settings().debt_cap);
        Ok(json_response(axum::http::StatusCode::OK, &plan))
    })
    .await?
}

/// The gate's rules, in order (first match wins; the last hands over to the router, whose
/// ladder `GET /route/table` lists).
#[utoipa::path(
    get,
    path = "/gate/rules",
    tags = ["gate", "reference"],
    responses((status = 200, description = "The thirteen rules, in order", body = Vec<GateRuleRow>))
)]
pub async fn gate_rules() -> Json<Vec<GateRuleRow>> {
    Json(rule_rows())
}

// ---------------------------------------------------------------------------------------------
// The request document, for the OpenAPI document (what the strict parser in core accepts)

/// The base commit's property catalog.
#[expect(
    dead_code,
    reason = "a schema for the OpenAPI document: the strict parser in core reads the body, never these fields"
)]
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct GateCatalogDoc {
    properties: Vec<GatePropertyDoc>,
}

/// A catalog row of the base commit (no `introduced`: a patch that changes the catalog is
/// caught by the guard).
#[expect(
    dead_code,
    reason = "a schema for the OpenAPI document: the strict parser in core reads the body, never these fields"
)]
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct GatePropertyDoc {
    #[schema(min_length = 1, max_length = 256)]
    id: String,
    strength: crate::core::catalog::Strength,
    /// Non-empty list of path prefixes this property observes (whole segments).
    #[schema(min_items = 1)]
    locality: Vec<super::schema::RepoPathDoc>,
    /// The fixture directory it reads.
    #[schema(nullable = false)]
    fixtures: Option<super::schema::RepoPathDoc>,
    /// The paths (files or directories) that implement the property: guarded like the catalog.
    #[schema(nullable = false)]
    source: Option<Vec<super::schema::RepoPathDoc>>,
    /// Its two-commit proof, as `/admit` answered it.
    #[schema(nullable = false)]
    admitted: Option<super::admit::AdmissionRecordDoc>,
}
