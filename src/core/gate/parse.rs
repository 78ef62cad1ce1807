//! Validation of a `/gate` body: the quorum's fields ([`parse_quorum_fields`]), plus
//! `guarded` and `fixture_suite`.

use serde_json::Value;

use super::parse_steps::*;
use super::request::{
    Configured, GateRequest, SandboxBackend, SuspicionClass, SuspiciousLine, UnreadFile,
    UnreadReason,
};
use crate::core::catalog::CatalogKind;
use crate::core::fields::{self, Errors, object};
use crate::core::problem::pointer_key;
use crate::core::quorum::parse_quorum_fields;

/// The fields of a `/gate` body.
pub const GATE_FIELDS: [&str; 32] = [
    "patch_id",
    "changed_files",
    "guarded",
    "inert",
    "seal",
    "catalog",
    "ledger",
    "debt_cap",
    "property_runs",
    "catch_exit_codes",
    "fixture_suite",
    "require_admission",
    "binaries",
    "judged",
    "merge_group",
    "merge_conflicts",
    "sandbox",
    "shadows",
    "suspicious",
    "unread",
    "property_receipts",
    "batched",
    "suite_runs",
    "failures",
    "integrity",
    "build",
    "canary",
    "reproof",
    "left_behind",
    "timings_ms",
    "configured",
    "room",
];
/// The fields of `room`.
pub const ROOM_FIELDS: [&str; 8] = [
    "saw",
    "masked",
    "uid",
    "memory_mib",
    "pids",
    "disk_mib",
    "held_by",
    "over",
];
/// The caps `room.held_by` names.
pub const ROOM_CAPS: [&str; 3] = ["memory", "pids", "disk"];
/// The fields of an entry of `room.over`.
pub const OVER_FIELDS: [&str; 2] = ["run", "limit"];
/// The fields of `configured`.
pub const CONFIGURED_FIELDS: [&str; 7] = [
    "properties_in_suite",
    "build",
    "canary",
    "reprove",
    "deselect",
    "seed",
    "mutant_files",
];
/// The runner's phases a request may time (`timings_ms`), in pipeline order.
pub const TIMING_STEPS: [&str; 8] = [
    "gather",
    "build",
    "canary",
    "properties",
    "reproof",
    "suite",
    "rerun",
    "total",
];
/// The fields of a re-proof.
pub const REPROOF_FIELDS: [&str; 6] = [
    "property",
    "applied",
    "turned",
    "exit_code",
    "receipt",
    "note",
];
/// The fields of `canary`.
pub const CANARY_FIELDS: [&str; 5] = [
    "exit_code",
    "catch_exit_codes",
    "receipt",
    "in_runs",
    "twin_of",
];
/// The fields of the canary's part of a batched property run.
pub const CANARY_PART_FIELDS: [&str; 2] = ["exit_code", "receipt"];
/// The fields of a failing case.
pub const FAILURE_FIELDS: [&str; 2] = ["id", "message"];
/// Most properties `suite_runs` lists.
pub const MAX_PROPERTY_CASES: usize = 1000;
/// Most re-proofs a request carries (section 11.5): the plan asks for no more.
pub const MAX_REPROOFS: usize = 100;
/// Most failing cases a request carries (section 11.8).
pub const MAX_FAILURES: usize = 20;
/// Longest failing case message, in bytes (section 11.8).
pub const MAX_FAILURE_BYTES: usize = 2048;
/// The fields of an integrity finding.
pub const INTEGRITY_FIELDS: [&str; 4] = ["run", "files", "count", "seal_changed"];
/// The fields of `build`.
pub const BUILD_FIELDS: [&str; 3] = ["exit_code", "catch_exit_codes", "tail"];
/// Longest build tail, in bytes.
pub const MAX_TAIL_BYTES: usize = 4096;
/// The fields of a `suspicious` line.
pub const SUSPICIOUS_FIELDS: [&str; 7] = [
    "file", "line", "rule", "class", "code", "pattern", "seen_in",
];
/// The fields of `merge_group`.
/// The fields of an `unread` entry.
pub const UNREAD_FIELDS: [&str; 3] = ["file", "reason", "detail"];
/// At most this many unread files are listed.
pub const MAX_UNREAD: usize = 100;
pub const MERGE_GROUP_FIELDS: [&str; 3] = ["queue", "ref", "pull_requests"];
/// The largest pull request number (GitHub's and GitLab's are 32-bit signed integers).
pub const MAX_PULL_REQUEST: u64 = i32::MAX as u64;
/// Most pull requests a merge group names.
pub const MAX_GROUP_PULL_REQUESTS: usize = 1000;
/// The fields of `judged`.
pub const JUDGED_FIELDS: [&str; 3] = ["base", "head", "tree"];
/// The fields of `fixture_suite`.
pub const SUITE_FIELDS: [&str; 8] = [
    "exit_code",
    "failed_tests",
    "report_disagrees",
    "catch_exit_codes",
    "rerun",
    "receipt",
    "vanished",
    "vanished_count",
];
/// The fields of `fixture_suite.rerun`.
pub const RERUN_FIELDS: [&str; 4] = ["exit_code", "failed_tests", "report_disagrees", "receipt"];
/// Longest failed-test id a request may name (a parametrised test's id can be long).
pub const MAX_TEST_ID_CHARS: usize = 4096;

/// A failed test's id as the runner reports it: a longer one than a request may hold is cut to
/// fit and marked with `…`. It still counts as a failure, and it can never match a frozen test
/// (a ledger `test_id` holds at most 256 characters): the runner never refuses its own report.
pub fn fit_test_id(id: String) -> String {
    match id.char_indices().nth(MAX_TEST_ID_CHARS - 1) {
        Some((end, _)) if id.chars().count() > MAX_TEST_ID_CHARS => {
            let mut cut = id[..end].to_owned();
            cut.push('…');
            cut
        }
        _ => id,
    }
}

/// `text` cut to at most `max` bytes on a character boundary, marked with `…` when cut.
pub fn clip_failure(text: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_owned();
    }
    let mut end = max.saturating_sub('…'.len_utf8());
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &text[..end])
}

/// Validates a `/gate` document, reporting every invalid field: the quorum's fields, plus
/// `guarded` and `fixture_suite`.
pub fn parse_gate_request(value: &Value) -> Result<GateRequest, Errors> {
    let mut e = Errors::default();
    let Some(doc) = object(value, "", "the gate request", &GATE_FIELDS, &mut e) else {
        return Err(e);
    };
    let quorum = parse_quorum_fields(&doc, CatalogKind::Gate, "property_runs", &mut e);
    let guarded = doc
        .get("guarded")
        .and_then(|v| fields::paths(v, "/guarded", false, &mut e))
        .unwrap_or_default();
    let inert = doc
        .get("inert")
        .and_then(|v| fields::paths(v, "/inert", false, &mut e))
        .unwrap_or_default();
    let binaries = doc
        .get("binaries")
        .and_then(|v| fields::paths(v, "/binaries", false, &mut e))
        .unwrap_or_default();
    let merge_conflicts = doc
        .get("merge_conflicts")
        .and_then(|v| fields::paths(v, "/merge_conflicts", false, &mut e))
        .unwrap_or_default();
    let judged = doc.get("judged").and_then(|v| parse_judged(v, &mut e));
    let merge_group = doc
        .get("merge_group")
        .and_then(|v| parse_merge_group(v, &mut e));
    let suspicious = match doc.get("suspicious") {
        Some(list) => fields::array(list, "/suspicious", "`suspicious`", &mut e, |x, p, e| {
            let hit = object(x, &p, "a suspicious line", &SUSPICIOUS_FIELDS, e)?;
            let file = hit
                .required("file", e)
                .and_then(|v| fields::path(v, &hit.pointer("file"), e));
            let line = hit.required("line", e).and_then(|v| {
                fields::uint(v, &hit.pointer("line"), "line", u64::from(u32::MAX), e)
            });
            let rule = hit.req_string("rule", 64, e);
            let class = hit.req_enum::<SuspicionClass>("class", e);
            let code = hit
                .required("code", e)
                .and_then(|v| fields::string(v, &hit.pointer("code"), "code", 1024, e));
            let pattern = match hit.get("pattern") {
                Some(_) => hit.req_string("pattern", 1024, e).map(Some),
                None => Some(None),
            };
            let seen_in = match hit.get("seen_in") {
                Some(_) => hit.req_string("seen_in", 1024, e).map(Some),
                None => Some(None),
            };
            Some(SuspiciousLine {
                file: file?.as_str().to_owned(),
                line: line?,
                rule: rule?,
                class: class?,
                code: code?,
                pattern: pattern?,
                seen_in: seen_in?,
            })
        })
        .unwrap_or_default(),
        None => Vec::new(),
    };
    let unread = match doc.get("unread") {
        Some(v) if v.as_array().is_some_and(|a| a.len() > MAX_UNREAD) => {
            e.push(
                "/unread",
                format!("at most {MAX_UNREAD} unread files are listed"),
            );
            Vec::new()
        }
        Some(list) => fields::array(list, "/unread", "`unread`", &mut e, |x, p, e| {
            let file = object(x, &p, "an unread file", &UNREAD_FIELDS, e)?;
            let path = file
                .required("file", e)
                .and_then(|v| fields::path(v, &file.pointer("file"), e));
            let reason = file.req_enum::<UnreadReason>("reason", e);
            let detail = match file.get("detail") {
                Some(_) => file.req_string("detail", 200, e).map(Some),
                None => Some(None),
            };
            Some(UnreadFile {
                file: path?.as_str().to_owned(),
                reason: reason?,
                detail: detail?,
            })
        })
        .unwrap_or_default(),
        None => Vec::new(),
    };
    let shadows = doc
        .get("shadows")
        .and_then(|v| fields::paths(v, "/shadows", false, &mut e))
        .unwrap_or_default();
    let sandbox = match doc.get("sandbox") {
        Some(_) => doc.req_enum::<SandboxBackend>("sandbox", &mut e),
        None => None,
    };
    let fixture_suite = doc
        .get("fixture_suite")
        .and_then(|v| parse_suite(v, &mut e));
    let property_receipts = doc
        .get("property_receipts")
        .and_then(|v| parse_property_receipts(v, &mut e));
    let batched = doc.opt_bool("batched", &mut e).unwrap_or(false);
    let suite_runs = match doc.get("suite_runs") {
        None => Vec::new(),
        Some(v) if v.as_array().is_some_and(|a| a.len() > MAX_PROPERTY_CASES) => {
            e.push(
                "/suite_runs",
                format!("at most {MAX_PROPERTY_CASES} properties are listed"),
            );
            Vec::new()
        }
        Some(v) => fields::array(v, "/suite_runs", "`suite_runs`", &mut e, |x, p, e| {
            fields::string(x, &p, "a property id", 256, e)
        })
        .unwrap_or_default(),
    };
    if batched && doc.get("property_receipts").is_none() && doc.get("property_runs").is_some() {
        e.push(
            "/batched",
            "batched runs need `property_receipts`: a property's outcome in a batch is its own test cases'",
        );
    }
    let failures = match doc.get("failures") {
        Some(v) => parse_failures(v, &mut e).unwrap_or_default(),
        None => Vec::new(),
    };
    let integrity = match doc.get("integrity") {
        Some(v) => {
            fields::array(v, "/integrity", "`integrity`", &mut e, parse_finding).unwrap_or_default()
        }
        None => Vec::new(),
    };
    let build = doc.get("build").and_then(|v| parse_build(v, &mut e));
    let canary = doc.get("canary").and_then(|v| parse_canary(v, &mut e));
    let left_behind = doc
        .opt_uint("left_behind", u64::from(u32::MAX), &mut e)
        .unwrap_or(0);
    let timings_ms = match doc.get("timings_ms") {
        Some(v) => object(v, "/timings_ms", "`timings_ms`", &TIMING_STEPS, &mut e)
            .map(|t| {
                TIMING_STEPS
                    .iter()
                    .filter_map(|k| {
                        let ms = t.opt_uint(k, u64::from(u32::MAX), &mut e)?;
                        Some(((*k).to_owned(), ms))
                    })
                    .collect()
            })
            .unwrap_or_default(),
        None => std::collections::BTreeMap::new(),
    };
    let reproof = match doc.get("reproof") {
        Some(v) => {
            let n = v.as_array().map_or(0, Vec::len);
            if n > MAX_REPROOFS {
                e.push(
                    "/reproof",
                    format!("`reproof` holds {n} entries; at most {MAX_REPROOFS}"),
                );
                Vec::new()
            } else {
                fields::array(v, "/reproof", "`reproof`", &mut e, parse_reproof).unwrap_or_default()
            }
        }
        None => Vec::new(),
    };
    let room = doc.get("room").and_then(|v| parse_room(v, &mut e));
    let configured = doc.get("configured").and_then(|v| {
        let c = object(v, "/configured", "`configured`", &CONFIGURED_FIELDS, &mut e)?;
        let build = c.opt_bool("build", &mut e);
        let canary = c.opt_bool("canary", &mut e);
        let reprove = c.opt_uint("reprove", 100, &mut e);
        let deselect = c.opt_bool("deselect", &mut e);
        let properties_in_suite = c.opt_bool("properties_in_suite", &mut e);
        let seed = c.opt_uint("seed", u64::from(u32::MAX), &mut e);
        let mutant_files = c
            .get("mutant_files")
            .and_then(|v| parse_mutant_files(v, &mut e))
            .unwrap_or_default();
        Some(Configured {
            mutant_files,
            build: build.unwrap_or(false),
            canary: canary.unwrap_or(false),
            reprove: reprove.and_then(|n| u8::try_from(n).ok()).unwrap_or(0),
            deselect: deselect.unwrap_or(true),
            properties_in_suite: properties_in_suite.unwrap_or(false),
            seed: seed.unwrap_or(0),
        })
    });
    let suite_ok = doc.get("fixture_suite").is_none() || fixture_suite.is_some();
    if let (Some(q), Some(receipts)) = (&quorum, &property_receipts) {
        for (id, runs) in &q.results {
            let given = receipts.get(id).map_or(0, Vec::len);
            if given != runs.len() {
                e.push(
                    pointer_key("/property_receipts", id),
                    format!(
                        "{given} receipts for {id:?}, which has {} runs: one receipt (or null) per run",
                        runs.len()
                    ),
                );
            }
        }
        for id in receipts.keys() {
            if !q.results.contains_key(id) {
                e.push(
                    pointer_key("/property_receipts", id),
                    format!("receipts for {id:?}, which has no runs in `property_runs`"),
                );
            }
        }
    }
    match quorum {
        Some(q) if e.is_empty() && suite_ok => Ok(GateRequest {
            patch_id: q.patch_id,
            changed_files: q.changed_files,
            guarded,
            inert,
            seal: q.seal,
            catalog: q.catalog,
            ledger: q.ledger,
            debt_cap: q.debt_cap,
            property_runs: q.results,
            catch_exit_codes: q.catch_exit_codes,
            fixture_suite,
            require_admission: q.require_admission,
            binaries,
            judged,
            merge_group,
            merge_conflicts,
            sandbox,
            shadows,
            suspicious,
            unread,
            property_receipts,
            batched,
            suite_runs,
            failures,
            integrity,
            build,
            canary,
            reproof,
            left_behind,
            timings_ms,
            configured,
            room,
        }),
        _ => Err(e),
    }
}
