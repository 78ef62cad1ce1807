//! The OpenAPI document, generated from the handlers and types with utoipa. The committed
//! copy in `openapi/openapi.json` is checked against this by a test.

use serde::Deserialize;
use serde_json::Value;
use utoipa::{OpenApi, ToSchema};

use crate::core::answer::{RouteAnswer, ScopedFreezeAnswer, TableRow};
use crate::core::problem::{FieldError, Problem};
use crate::core::route::{Attribution, Disposition, RuleName, Verdict, Verdicts};

/// The router's evidence document. An absent gate field means `missing`. Instead of
/// `flaky_freeze`, a request may carry `changed_files` and `frozen_tests`: the freeze gate is
/// then `unknown` when a frozen test covers a changed file (whole path segments), else `pass`.
/// Unknown fields are refused (422), so a typo never turns into `missing`.
#[allow(dead_code)]
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
    changed_files: Option<Vec<String>>,
    /// Frozen tests and the code they cover (scoped-freeze form; needs `changed_files`).
    #[schema(nullable = false)]
    frozen_tests: Option<Vec<FrozenTestDoc>>,
}

/// A frozen test and the path prefixes (whole segments) of the code it covers.
#[allow(dead_code)]
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct FrozenTestDoc {
    /// Unique within the request.
    #[schema(min_length = 1, max_length = 256)]
    id: String,
    /// Non-empty list of repo-relative path prefixes.
    #[schema(min_items = 1)]
    covers: Vec<String>,
}

/// The quorum request. Unknown fields are refused (422).
#[allow(dead_code)]
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct QuorumRequestDoc {
    /// Echoed in the answer; at most 256 characters.
    #[schema(nullable = false, max_length = 256)]
    patch_id: Option<String>,
    /// Repo-relative paths the patch changes.
    changed_files: Vec<String>,
    catalog: CatalogDoc,
    /// Exit codes of each property's runs, by catalog id.
    #[schema(nullable = false)]
    results: Option<std::collections::BTreeMap<String, ResultDoc>>,
    /// The freeze ledger.
    #[schema(nullable = false)]
    ledger: Option<Vec<LedgerRowDoc>>,
    seal: SealDoc,
    /// The freeze-debt cap; the server's setting (default 5) when absent.
    #[schema(nullable = false, minimum = 0)]
    debt_cap: Option<u64>,
}

/// The property catalog.
#[allow(dead_code)]
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CatalogDoc {
    properties: Vec<PropertyDoc>,
}

/// A catalog row. Ids are unique.
#[allow(dead_code)]
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct PropertyDoc {
    #[schema(min_length = 1, max_length = 256)]
    id: String,
    strength: crate::core::quorum::Strength,
    /// Non-empty list of path prefixes this property observes (whole segments).
    #[schema(min_items = 1)]
    locality: Vec<String>,
    /// The fixture directory it reads.
    #[schema(nullable = false)]
    fixtures: Option<String>,
    /// True when this patch adds the property: it may not vote on it.
    #[schema(nullable = false)]
    introduced: Option<bool>,
}

/// One property's runs.
#[allow(dead_code)]
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ResultDoc {
    /// 2 to 10 exit codes (0-255).
    #[schema(min_items = 2, max_items = 10)]
    runs: Vec<u8>,
}

/// A freeze-ledger row. At most one open row per property.
#[allow(dead_code)]
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct LedgerRowDoc {
    property_id: String,
    state: LedgerStateDoc,
    /// The fixture seal when the freeze was opened (64 hex digits).
    #[schema(nullable = false, pattern = "^[0-9a-fA-F]{64}$")]
    seal: Option<String>,
    #[schema(nullable = false)]
    reason: Option<String>,
    /// Git commit id (4 to 64 hex digits).
    #[schema(nullable = false, pattern = "^[0-9a-fA-F]{4,64}$")]
    opened_against_commit: Option<String>,
    #[schema(nullable = false, minimum = 0)]
    retire_by_commit_count: Option<u64>,
    #[schema(nullable = false, minimum = 0)]
    commits_since_open: Option<u64>,
    #[schema(nullable = false)]
    owner: Option<String>,
}

#[allow(dead_code)]
#[derive(Deserialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum LedgerStateDoc {
    Open,
    Closed,
}

/// The fixture seal computed now and the committed one (64 hex digits each).
#[allow(dead_code)]
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct SealDoc {
    #[schema(pattern = "^[0-9a-fA-F]{64}$")]
    actual: String,
    #[schema(pattern = "^[0-9a-fA-F]{64}$")]
    expected: String,
}

/// A seal request as JSON: the tree's files (repo-relative paths, SHA-256 digests).
#[allow(dead_code)]
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct SealRequestDoc {
    files: Vec<SealFileDoc>,
    /// The expected seal (64 hex digits).
    #[schema(nullable = false, pattern = "^[0-9a-fA-F]{64}$")]
    expected: Option<String>,
    /// The expected files, to name what drifted: a list like `files`, or `sha256sum` text.
    #[schema(nullable = false, value_type = Object)]
    expected_manifest: Option<Value>,
}

/// One file of a tree.
#[allow(dead_code)]
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct SealFileDoc {
    path: String,
    #[schema(pattern = "^[0-9a-fA-F]{64}$")]
    sha256: String,
}

/// The diff to plan for.
#[allow(dead_code)]
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct PlanRequestDoc {
    /// Repo-relative paths the patch changes.
    changed_files: Vec<String>,
}

/// A flaky test's history and the evidence rule's thresholds.
#[allow(dead_code)]
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct FreezeRequestDoc {
    /// Pass (true) / fail (false) outcomes, oldest first.
    outcomes: Vec<bool>,
    /// Whether the test caught a deliberately seeded bug.
    caught_seeded_bug: bool,
    /// Default 20; at least 2.
    #[schema(nullable = false, minimum = 2)]
    min_runs: Option<u64>,
    /// Default 0.02.
    #[schema(nullable = false, minimum = 0, maximum = 1)]
    min_flip_rate: Option<f64>,
}

/// Where a BLOCK's eventual fix landed.
#[allow(dead_code)]
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CalibrationRowDoc {
    attribution: Attribution,
    fix_files: Vec<String>,
    fix_changed: FixChangedDoc,
}

#[allow(dead_code)]
#[derive(Deserialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum FixChangedDoc {
    Production,
    Check,
    Both,
}

#[derive(OpenApi)]
#[openapi(
    info(
        title = "patchgate",
        description = "Decides whether a code patch may merge. Only a go is 2xx: 200 go (exit 0), \
409 the patch is wrong (exit 1), 424 a human must look (exit 2), 423 the queue is stopped (exit 3). \
Errors are RFC 9457 problem documents."
    ),
    components(schemas(
        RouteRequestDoc, FrozenTestDoc, RouteAnswer, ScopedFreezeAnswer, TableRow, Verdicts,
        Verdict, Disposition, Attribution, RuleName, Problem, FieldError,
        super::route::BatchItem, super::route::BatchDecided, super::route::BatchRejected,
        super::ops::Health,
        QuorumRequestDoc, CatalogDoc, PropertyDoc, ResultDoc, LedgerRowDoc, LedgerStateDoc, SealDoc,
        crate::core::quorum::QuorumAnswer, crate::core::quorum::PropertyReport, crate::core::quorum::Debt,
        crate::core::quorum::SealCheckAnswer, crate::core::quorum::Outcome, crate::core::quorum::Reason,
        crate::core::quorum::Vote, crate::core::quorum::RunState, crate::core::quorum::Strength,
        SealRequestDoc, SealFileDoc, crate::core::seal::SealAnswer, crate::core::seal::Excluded, crate::core::seal::DriftAnswer,
        PlanRequestDoc, FreezeRequestDoc, CalibrationRowDoc, FixChangedDoc,
        crate::core::ladder::Plan, crate::core::ladder::Report, crate::core::ladder::TierReport,
        crate::core::ladder::LedgerRow, crate::core::ladder::TierVerdict, crate::core::ladder::FreezeAnswer,
        crate::core::ladder::Review, crate::core::ladder::CalibrationClass,
    )),
    tags(
        (name = "router", description = "The precedence router"),
        (name = "quorum", description = "The strong-property quorum on sealed fixtures"),
        (name = "seal", description = "The fixture seal, byte-identical to the coreutils pipeline"),
        (name = "ladder", description = "The gate ladder: plan, yield report, freeze eligibility, review, calibration"),
        (name = "operations", description = "Health, readiness, metrics, this document"),
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
