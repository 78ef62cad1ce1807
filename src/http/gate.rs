//! `POST /gate` and `GET /gate/rules`: thin handlers over the core's patch gate.

use axum::Json;
use axum::extract::State;
use axum::http::HeaderMap;
use axum::response::Response;
use serde::Deserialize;
use utoipa::ToSchema;

use super::AppState;
use super::budget::run_cpu;
use super::decide::decide;
use super::extract::JsonBytes;
use super::quorum::{LedgerRowDoc, ResultDoc, SealDoc};
use super::route::json_response;
use crate::core::gate::{
    GateAnswer, GateDecision, GateNext, GateRuleRow, next_step, parse_gate_request, rule_rows,
};
use crate::core::json::parse_json;
use crate::core::problem::Problem;

/// Decide one patch from the facts its gate gathered.
///
/// Rules, first match wins: the head does not merge cleanly into the base (`merge_conflicts`
/// non-empty) → ESCALATE `merge-conflict` (424); the seal does not match the base's expected seal → ESCALATE
/// `seal-mismatch` (424); freeze debt over the cap → STOP_QUEUE `debt-over-cap` (423); a
/// changed file is, or lies under, a guarded path or a property's `source` → ESCALATE
/// `guarded-input-edited` (424); a changed file is compiled or binary (by its name, or listed
/// in `binaries`) → ESCALATE `binary-added` (424); a `suspicious` line in a file that is not
/// test-adjacent → ESCALATE `test-aware-code` (424); otherwise the router over the three derived verdicts (t0
/// scope, t1 quorum, t2 fixture suite with frozen failures discarded, scoped freeze): 200
/// MERGE_OK, 409 BLOCK, 424 ESCALATE. `steps` says what each step saw and concluded. With
/// `Accept: text/plain` the body is one line (`ESCALATE reason=guarded-input-edited`); with
/// `Accept: text/markdown` a report for a pull-request comment or a CI job summary.
#[utoipa::path(
    post,
    path = "/gate",
    tag = "gate",
    request_body(content = GateRequestDoc, content_type = "application/json"),
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
    headers: HeaderMap,
    JsonBytes(body, _slot): JsonBytes,
) -> Result<Response, Problem> {
    decide::<GateDecision>(state, &headers, body).await
}

/// Plan the patch gate's next step from the facts gathered so far (the same body as
/// `POST /gate`, with `property_runs` and `fixture_suite` left out until they are run).
///
/// `next` is `runs` (run `property_ids`, each the configured number of times, and send them
/// as `property_runs`), `suite` (run the fixture suite and send it as `fixture_suite`) or
/// `decide` (send everything to `POST /gate`). `disposition`, `rule`, `reason` and `steps`
/// are what the gate would answer on these facts alone. `patchgate gate --server` asks this
/// before each step, so the server's settings (its debt cap) decide what runs. Not a
/// decision: always 200, no `decision_id`, nothing logged.
#[utoipa::path(
    post,
    path = "/gate/next",
    tag = "gate",
    request_body(content = GateRequestDoc, content_type = "application/json"),
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
    responses((status = 200, description = "The five rules", body = Vec<GateRuleRow>))
)]
pub async fn gate_rules() -> Json<Vec<GateRuleRow>> {
    Json(rule_rows())
}

// ---------------------------------------------------------------------------------------------
// The request document, for the OpenAPI document (what the strict parser in core accepts)

/// The facts one patch's gate gathered. `catalog`, `ledger`, `guarded` and `seal.expected` are
/// the base commit's. Unknown fields are refused (422).
#[allow(dead_code)]
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct GateRequestDoc {
    /// Echoed in the answer; at most 256 characters.
    #[schema(nullable = false, max_length = 256)]
    patch_id: Option<String>,
    /// Repo-relative paths the patch changes (renames: both paths).
    changed_files: Vec<super::openapi::RepoPathDoc>,
    /// Paths (files or directories) the patch may not edit: the base's config, catalog,
    /// ledger, expected seal, and what else the base config names.
    #[schema(nullable = false)]
    guarded: Option<Vec<super::openapi::RepoPathDoc>>,
    /// Paths (files or directories) no property could observe (docs): a patch that changes
    /// only these, and that no property observes, skips the property tier; the suite decides.
    #[schema(nullable = false)]
    inert: Option<Vec<super::openapi::RepoPathDoc>>,
    seal: SealDoc,
    catalog: GateCatalogDoc,
    /// The base commit's freeze ledger.
    #[schema(nullable = false)]
    ledger: Option<Vec<LedgerRowDoc>>,
    /// The freeze-debt cap; the server's setting (default 5) when absent.
    #[schema(nullable = false, minimum = 0, maximum = 4294967295_u64)]
    debt_cap: Option<u64>,
    /// Exit codes of each property's runs, by catalog id (as `/quorum`'s `results`).
    #[schema(nullable = false)]
    property_runs: Option<std::collections::BTreeMap<String, ResultDoc>>,
    /// The exit codes that are a catch for the property runs, 1-255; default `[1]`.
    #[schema(nullable = false, min_items = 1)]
    catch_exit_codes: Option<Vec<super::openapi::CatchCodeDoc>>,
    /// Absent when the suite did not run.
    #[schema(nullable = false)]
    fixture_suite: Option<FixtureSuiteDoc>,
    /// When true, a strong row without `admitted` votes as weak (it may reject, it never fills
    /// the quorum) and is reported `unproven`. Default false.
    #[schema(nullable = false)]
    require_admission: Option<bool>,
    /// Changed files the runner saw to be binary or made executable (compiled files are
    /// also known by their names): any such file escalates `binary-added`.
    #[schema(nullable = false)]
    binaries: Option<Vec<super::openapi::RepoPathDoc>>,
    /// What was judged: the base and head commits and the tree of the head merged into the
    /// base (echoed in the answer).
    #[schema(nullable = false)]
    judged: Option<JudgedDoc>,
    /// The files the merge of the head into the base conflicts on: any → ESCALATE
    /// `merge-conflict`.
    #[schema(nullable = false)]
    merge_conflicts: Option<Vec<super::openapi::RepoPathDoc>>,
    /// How the runs were isolated (echoed in the answer): `bubblewrap`, or `off` when the code
    /// under test ran with the runner's user and files.
    #[schema(nullable = false)]
    sandbox: Option<crate::core::gate::SandboxBackend>,
    /// Changed files the runner saw to shadow a module of the test toolchain (a module under
    /// a test `pythonpath` directory named like a standard or installed one): each is a
    /// scope hit, like a root-level module.
    #[schema(nullable = false)]
    shadows: Option<Vec<super::openapi::RepoPathDoc>>,
    /// Lines the patch adds that match a `[suspicious]` pattern; any in a file that is not
    /// test-adjacent → ESCALATE `test-aware-code`.
    #[schema(nullable = false)]
    suspicious: Option<Vec<SuspiciousLineDoc>>,
    /// Each property run's receipt (CONTRACT.md section 11.1), by property id, one per run in
    /// `property_runs` (null: no report read). Absent: the property command has no `{junit}`
    /// (receipts off). A run counts only as its receipt shows it: exit 0 with an executed case
    /// and none failed or skipped, a catch with a failed case listed; otherwise `null`.
    #[schema(nullable = false)]
    property_receipts: Option<std::collections::BTreeMap<String, Vec<Option<ReceiptDoc>>>>,
    /// The property runs were batched (several properties in one process): each run's exit
    /// code is its batch's, and a property's outcome in it is its own test cases' in the
    /// receipt (a catch another property's cases explain is this one's pass). Needs
    /// `property_receipts`. Default false.
    #[schema(nullable = false)]
    batched: Option<bool>,
    /// The failing cases the reports gave (section 11.8): at most 20, each message at most
    /// 2,048 bytes; echoed in the answer and the Markdown report.
    #[schema(nullable = false, max_items = 20)]
    failures: Option<Vec<FailingCaseDoc>>,
    /// What runs changed that they may not (section 11.3): any → ESCALATE
    /// `modified-during-run`.
    #[schema(nullable = false)]
    integrity: Option<Vec<IntegrityFindingDoc>>,
    /// The build step (section 11.8), when one ran: a catch → BLOCK `does-not-build`; any
    /// other exit, or killed → ESCALATE `harness-error`.
    #[schema(nullable = false)]
    build: Option<BuildDoc>,
    /// The canary's run (section 11.5), when one ran: unless it exited with a catch and its
    /// receipt lists a failure → ESCALATE `checker-neutered`.
    #[schema(nullable = false)]
    canary: Option<CanaryDoc>,
    /// The re-proofs tried (section 11.5), at most 100: an admitted property that passed
    /// with its mutant applied → ESCALATE `checker-neutered`.
    #[schema(nullable = false, max_items = 100)]
    reproof: Option<Vec<ReproofDoc>>,
    /// Processes the runs left behind, each killed before its report was read (section
    /// 11.4); noted in the integrity step, never a verdict.
    #[schema(nullable = false, minimum = 0, maximum = 4294967295_u64)]
    left_behind: Option<u64>,
    /// Where the runner's time went, by phase, in milliseconds: echoed in the answer and the
    /// Markdown report, never a decision.
    #[schema(nullable = false)]
    timings_ms: Option<TimingsDoc>,
}

/// The runner's phases, each in milliseconds (0 to 4,294,967,295).
#[allow(dead_code)]
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct TimingsDoc {
    /// git, the base's inputs, the copy of the judged tree, the seal.
    #[schema(nullable = false, minimum = 0, maximum = 4294967295_u64)]
    gather: Option<u64>,
    #[schema(nullable = false, minimum = 0, maximum = 4294967295_u64)]
    build: Option<u64>,
    #[schema(nullable = false, minimum = 0, maximum = 4294967295_u64)]
    canary: Option<u64>,
    #[schema(nullable = false, minimum = 0, maximum = 4294967295_u64)]
    properties: Option<u64>,
    #[schema(nullable = false, minimum = 0, maximum = 4294967295_u64)]
    reproof: Option<u64>,
    #[schema(nullable = false, minimum = 0, maximum = 4294967295_u64)]
    suite: Option<u64>,
    #[schema(nullable = false, minimum = 0, maximum = 4294967295_u64)]
    rerun: Option<u64>,
    /// The whole gate, start to answer: less than the steps' sum when runs overlapped
    /// (`--jobs`).
    #[schema(nullable = false, minimum = 0, maximum = 4294967295_u64)]
    total: Option<u64>,
}

/// One re-proof: an admitted property run on the judged tree with its mutant applied.
#[allow(dead_code)]
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ReproofDoc {
    #[schema(min_length = 1, max_length = 256)]
    property: String,
    /// Whether the mutant applied (default false: nothing ran).
    #[schema(nullable = false)]
    applied: Option<bool>,
    /// 0-255, or null when the run was killed.
    exit_code: Option<super::openapi::ExitCodeDoc>,
    /// Its receipt; null when no report was read; absent with receipts off.
    #[schema(nullable = true)]
    receipt: Option<Option<ReceiptDoc>>,
    /// Why it proves nothing either way, when it does not.
    #[schema(nullable = false, max_length = 4096)]
    note: Option<String>,
}

/// The canary's run.
#[allow(dead_code)]
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CanaryDoc {
    /// 0-255, or null when the canary was killed by its timeout or a signal.
    #[schema(required = true)]
    exit_code: Option<super::openapi::ExitCodeDoc>,
    /// The exit codes that are a catch for it, 1-255; default `[1]`.
    #[schema(nullable = false, min_items = 1)]
    catch_exit_codes: Option<Vec<super::openapi::CatchCodeDoc>>,
    /// Its receipt; null when no report was read.
    #[schema(required = true, nullable = true)]
    receipt: Option<ReceiptDoc>,
}

/// A run's receipt: what its JUnit report lists.
#[allow(dead_code)]
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ReceiptDoc {
    /// Cases that ran (passed, failed or errored).
    #[schema(minimum = 0, maximum = 4294967295_u64)]
    executed: u64,
    /// Cases that failed or errored.
    #[schema(minimum = 0, maximum = 4294967295_u64)]
    failed: u64,
    /// Cases skipped.
    #[schema(minimum = 0, maximum = 4294967295_u64)]
    skipped: u64,
    /// How the report disagrees with itself, when it does.
    #[schema(nullable = false, max_length = 4096)]
    disagrees: Option<String>,
}

/// A failing case as its report gave it.
#[allow(dead_code)]
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct FailingCaseDoc {
    #[schema(min_length = 1, max_length = 4096)]
    id: String,
    #[schema(max_length = 2048)]
    message: String,
}

/// Something a run changed that it may not.
#[allow(dead_code)]
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct IntegrityFindingDoc {
    /// The run, as the runner labels it.
    #[schema(min_length = 1, max_length = 1024)]
    run: String,
    /// Tracked files it changed, deleted or changed the mode of (at most 100).
    #[schema(max_items = 100)]
    files: Vec<super::openapi::RepoPathDoc>,
    /// How many, all of them (at least the files listed; 0 only with `seal_changed`).
    #[schema(minimum = 0, maximum = 4294967295_u64)]
    count: u64,
    /// Whether the fixtures' seal changed. Default false.
    #[schema(nullable = false)]
    seal_changed: Option<bool>,
}

/// The build step.
#[allow(dead_code)]
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct BuildDoc {
    /// 0-255, or null when the build was killed by its timeout or a signal.
    #[schema(required = true)]
    exit_code: Option<super::openapi::ExitCodeDoc>,
    /// The exit codes that mean the code does not build, 1-255; default `[1]`.
    #[schema(nullable = false, min_items = 1)]
    catch_exit_codes: Option<Vec<super::openapi::CatchCodeDoc>>,
    /// Its last lines of output.
    #[schema(nullable = false, max_length = 4096)]
    tail: Option<String>,
}

/// A line the patch adds that matches a `[suspicious]` pattern.
#[allow(dead_code)]
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct SuspiciousLineDoc {
    file: super::openapi::RepoPathDoc,
    /// 1-based, in the judged tree.
    #[schema(minimum = 0, maximum = 4294967295_u64)]
    line: u64,
    /// The pattern it matches.
    #[schema(max_length = 1024)]
    pattern: String,
}

/// Git object ids (40 or 64 hex digits) of what was judged.
#[allow(dead_code)]
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct JudgedDoc {
    #[schema(pattern = "^([0-9a-fA-F]{40}|[0-9a-fA-F]{64})$")]
    base: String,
    #[schema(pattern = "^([0-9a-fA-F]{40}|[0-9a-fA-F]{64})$")]
    head: String,
    #[schema(pattern = "^([0-9a-fA-F]{40}|[0-9a-fA-F]{64})$")]
    tree: String,
}

/// The base commit's property catalog.
#[allow(dead_code)]
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct GateCatalogDoc {
    properties: Vec<GatePropertyDoc>,
}

/// A catalog row of the base commit (no `introduced`: a patch that changes the catalog is
/// caught by the guard).
#[allow(dead_code)]
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct GatePropertyDoc {
    #[schema(min_length = 1, max_length = 256)]
    id: String,
    strength: crate::core::catalog::Strength,
    /// Non-empty list of path prefixes this property observes (whole segments).
    #[schema(min_items = 1)]
    locality: Vec<super::openapi::RepoPathDoc>,
    /// The fixture directory it reads.
    #[schema(nullable = false)]
    fixtures: Option<super::openapi::RepoPathDoc>,
    /// The paths (files or directories) that implement the property: guarded like the catalog.
    #[schema(nullable = false)]
    source: Option<Vec<super::openapi::RepoPathDoc>>,
    /// Its two-commit proof, as `/admit` answered it.
    #[schema(nullable = false)]
    admitted: Option<super::admit::AdmissionRecordDoc>,
}

/// What the fixture suite did.
#[allow(dead_code)]
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct FixtureSuiteDoc {
    /// 0-255, or null when the suite was killed by its timeout or a signal.
    #[schema(required = true)]
    exit_code: Option<super::openapi::ExitCodeDoc>,
    /// Ids (`classname::name`) of the failed or errored test cases, read from the suite's
    /// JUnit XML report.
    #[schema(nullable = false)]
    failed_tests: Option<Vec<super::openapi::TestIdDoc>>,
    /// How the JUnit report disagrees with itself (a failure outside any test case, counts
    /// that disagree with the cases listed), when it does: `fixture_check` is then unknown.
    #[schema(nullable = false, max_length = 4096)]
    report_disagrees: Option<String>,
    /// The exit codes that are a catch for the suite, 1-255; default `[1]`.
    #[schema(nullable = false, min_items = 1)]
    catch_exit_codes: Option<Vec<super::openapi::CatchCodeDoc>>,
    /// The suite run again with the frozen tests it failed left out (CONTRACT.md section
    /// 12.4): failures only frozen tests explain are discarded only when it passed.
    #[schema(nullable = false)]
    rerun: Option<RerunDoc>,
    /// Its receipt (section 11.1): null when no report was read; absent when the suite
    /// command has no `{junit}` (receipts off). Without one that vouches for its exit code,
    /// `fixture_check` is unknown (its skips are allowed: the census judges them).
    #[schema(nullable = true)]
    receipt: Option<Option<ReceiptDoc>>,
    /// Census tests (section 11.2) that passed on the base and did not run here (at most
    /// 100): any → `fixture_check` unknown.
    #[schema(nullable = false, max_items = 100)]
    vanished: Option<Vec<super::openapi::TestIdDoc>>,
    /// How many vanished, all of them (default: the ids listed).
    #[schema(nullable = false, minimum = 0, maximum = 4294967295_u64)]
    vanished_count: Option<u64>,
}

/// The suite's re-run without the frozen tests that failed.
#[allow(dead_code)]
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct RerunDoc {
    /// 0-255, or null when the re-run was killed by its timeout or a signal.
    #[schema(required = true)]
    exit_code: Option<super::openapi::ExitCodeDoc>,
    /// Ids of the failed or errored test cases its report lists.
    #[schema(nullable = false)]
    failed_tests: Option<Vec<super::openapi::TestIdDoc>>,
    /// How its report disagrees with itself, when it does: the re-run did not pass.
    #[schema(nullable = false, max_length = 4096)]
    report_disagrees: Option<String>,
    /// Its receipt, as the suite's.
    #[schema(nullable = true)]
    receipt: Option<Option<ReceiptDoc>>,
}
