//! `POST /quorum`: a thin handler over the core's quorum.

use axum::extract::State;
use axum::response::Response;
use serde::Deserialize;
use utoipa::ToSchema;

use super::AppState;
use super::decide::decide;
use super::extract::{Accept, JsonBytes};
use crate::core::problem::Problem;
use crate::core::quorum::{QuorumAnswer, QuorumDecision};

/// Decide whether a patch's strong-property quorum holds on sealed fixtures.
///
/// Outcome, first match wins: seal mismatch → `fixture_fault` (424); debt over the cap →
/// `stop_queue` (423, for every patch); an introduced property that would vote, an empty strong
/// quorum, or a stable failure → `reject` (409); a split run or a missing result → `hold` (424);
/// otherwise `promote` (200). A frozen property is reported `excluded`, never passed.
#[utoipa::path(
    post,
    path = "/quorum",
    tag = "quorum",
    request_body(content = QuorumRequestDoc, content_type = "application/json"),
    responses(
        (status = 200, description = "promote (exit 0)", body = QuorumAnswer),
        (status = 409, description = "reject (exit 1): self-introduced-predicate, empty-quorum or stable-failure", body = QuorumAnswer),
        (status = 423, description = "stop_queue (exit 3): freeze debt is over the cap", body = QuorumAnswer),
        (status = 424, description = "hold or fixture_fault (exit 2): a human must look", body = QuorumAnswer),
        super::error::DecisionProblems,
    )
)]
pub async fn quorum(
    State(state): State<AppState>,
    accept: Accept,
    JsonBytes(body, _slot): JsonBytes,
) -> Result<Response, Problem> {
    decide::<QuorumDecision>(state, &accept, body).await
}

// ---------------------------------------------------------------------------------------------
// The request document, for the OpenAPI document (what the strict parser in core accepts)

/// The quorum request. Unknown fields are refused (422).
#[expect(
    dead_code,
    reason = "a schema for the OpenAPI document: the strict parser in core reads the body, never these fields"
)]
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct QuorumRequestDoc {
    /// Echoed in the answer; at most 256 characters.
    #[schema(nullable = false, max_length = 256)]
    patch_id: Option<String>,
    /// Repo-relative paths the patch changes.
    changed_files: Vec<super::schema::RepoPathDoc>,
    catalog: CatalogDoc,
    /// Exit codes of each property's runs, by catalog id.
    #[schema(nullable = false)]
    results: Option<std::collections::BTreeMap<String, ResultDoc>>,
    /// The freeze ledger.
    #[schema(nullable = false)]
    ledger: Option<Vec<LedgerRowDoc>>,
    seal: SealDoc,
    /// The freeze-debt cap; the server's setting (default 5) when absent.
    #[schema(nullable = false, minimum = 0, maximum = 4294967295_u64)]
    debt_cap: Option<u64>,
    /// The exit codes that are a catch (a stable failure), 1-255; default `[1]` (pytest's);
    /// a Rust repository sends `[101]` (`cargo test`'s). Any other code every run shares is
    /// an `error` (the harness, not the patch).
    #[schema(nullable = false, min_items = 1)]
    catch_exit_codes: Option<Vec<super::schema::CatchCodeDoc>>,
    /// When true, a strong row without `admitted` votes as weak (it may reject, it never fills
    /// the quorum) and is reported `unproven`. Default false.
    #[schema(nullable = false)]
    require_admission: Option<bool>,
}

/// The property catalog.
#[expect(
    dead_code,
    reason = "a schema for the OpenAPI document: the strict parser in core reads the body, never these fields"
)]
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CatalogDoc {
    properties: Vec<PropertyDoc>,
}

/// A catalog row. Ids are unique.
#[expect(
    dead_code,
    reason = "a schema for the OpenAPI document: the strict parser in core reads the body, never these fields"
)]
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct PropertyDoc {
    #[schema(min_length = 1, max_length = 256)]
    id: String,
    strength: crate::core::catalog::Strength,
    /// Non-empty list of path prefixes this property observes (whole segments).
    #[schema(min_items = 1)]
    locality: Vec<super::schema::RepoPathDoc>,
    /// The fixture directory it reads.
    #[schema(nullable = false)]
    fixtures: Option<super::schema::RepoPathDoc>,
    /// True when this patch adds the property: it may not vote on it.
    #[schema(nullable = false)]
    introduced: Option<bool>,
    /// Its two-commit proof, as `/admit` answered it.
    #[schema(nullable = false)]
    admitted: Option<super::admit::AdmissionRecordDoc>,
}

/// One property's runs.
#[expect(
    dead_code,
    reason = "a schema for the OpenAPI document: the strict parser in core reads the body, never these fields"
)]
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ResultDoc {
    /// 2 to 10 runs: each an exit code (0-255), or null for a run killed by its timeout or a
    /// signal.
    #[schema(min_items = 2, max_items = 10)]
    runs: Vec<Option<super::schema::ExitCodeDoc>>,
}

/// A freeze-ledger row: a frozen property or a frozen test. At most one open row per property
/// (or per test).
#[expect(
    dead_code,
    reason = "a schema for the OpenAPI document: the strict parser in core reads the body, never these fields"
)]
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct LedgerRowDoc {
    /// The frozen property (give this or `test_id`, not both).
    #[schema(nullable = false, min_length = 1, max_length = 256)]
    property_id: Option<String>,
    /// A frozen test of the fixture suite (give this or `property_id`, not both); it never
    /// changes a vote, and counts toward debt.
    #[schema(nullable = false, min_length = 1, max_length = 256)]
    test_id: Option<String>,
    /// With `test_id`: the path prefixes of the code the frozen test covers (non-empty).
    #[schema(nullable = false, min_items = 1)]
    covers: Option<Vec<super::schema::RepoPathDoc>>,
    state: LedgerStateDoc,
    /// The fixture seal when the freeze was opened (64 hex digits).
    #[schema(nullable = false)]
    seal: Option<super::schema::Sha256Doc>,
    #[schema(nullable = false)]
    reason: Option<String>,
    /// Git commit id (4 to 64 hex digits).
    #[schema(nullable = false)]
    opened_against_commit: Option<super::schema::CommitDoc>,
    #[schema(nullable = false, minimum = 0, maximum = 4294967295_u64)]
    retire_by_commit_count: Option<u64>,
    #[schema(nullable = false, minimum = 0, maximum = 4294967295_u64)]
    commits_since_open: Option<u64>,
    #[schema(nullable = false)]
    owner: Option<String>,
}

#[derive(Deserialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum LedgerStateDoc {
    Open,
    Closed,
}

/// The fixture seal computed now and the committed one (64 hex digits each).
#[expect(
    dead_code,
    reason = "a schema for the OpenAPI document: the strict parser in core reads the body, never these fields"
)]
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct SealDoc {
    actual: super::schema::Sha256Doc,
    expected: super::schema::Sha256Doc,
}
