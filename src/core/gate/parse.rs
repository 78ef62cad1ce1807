//! Validation of a `/gate` body: the quorum's fields ([`parse_quorum_fields`]), plus
//! `guarded` and `fixture_suite`.

use serde_json::Value;
use std::collections::HashMap;

use super::parse_steps::*;
use super::request::{
    Configured, GateRequest, SandboxBackend, SuspicionClass, SuspiciousLine, UnreadFile,
    UnreadReason,
};
use super::shape::*;
use crate::core::catalog::CatalogKind;
use crate::core::fields::{self, Errors, object};
use crate::core::problem::pointer_key;
use crate::core::quorum::parse_quorum_fields;

/// The list of repository paths at `key` (absent: none).
fn path_list(doc: &fields::Obj<'_>, key: &str, e: &mut Errors) -> Vec<crate::core::path::RepoPath> {
    doc.get(key)
        .and_then(|v| fields::paths(v, &format!("/{key}"), false, e))
        .unwrap_or_default()
}

/// Validates a `/gate` document, reporting every invalid field: the quorum's fields, plus
/// `guarded` and `fixture_suite`.
pub fn parse_gate_request(value: &Value) -> Result<GateRequest, Errors> {
    let mut e = Errors::default();
    let Some(doc) = object(value, "", "the gate request", &GATE_FIELDS, &mut e) else {
        return Err(e);
    };
    let quorum = parse_quorum_fields(&doc, CatalogKind::Gate, "property_runs", &mut e);
    let guarded = path_list(&doc, "guarded", &mut e);
    let inert = path_list(&doc, "inert", &mut e);
    let binaries = path_list(&doc, "binaries", &mut e);
    let merge_conflicts = path_list(&doc, "merge_conflicts", &mut e);
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
    let shadows = path_list(&doc, "shadows", &mut e);
    let tests_from_base = path_list(&doc, "tests_from_base", &mut e);
    let added_tests = path_list(&doc, "added_tests", &mut e);
    let metadata_only = path_list(&doc, "metadata_only", &mut e);
    let test_lines_from_base = path_list(&doc, "test_lines_from_base", &mut e);
    let test_lines_mixed = path_list(&doc, "test_lines_mixed", &mut e);
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
    let replays = match doc.get("replays") {
        None => Vec::new(),
        Some(v) if v.as_array().is_some_and(|a| a.len() > MAX_PROPERTY_CASES) => {
            e.push(
                "/replays",
                format!("at most {MAX_PROPERTY_CASES} replays: one per property"),
            );
            Vec::new()
        }
        Some(v) => {
            fields::array(v, "/replays", "`replays`", &mut e, parse_replay).unwrap_or_default()
        }
    };
    let admitted_sources = match doc.get("admitted_sources") {
        None => HashMap::new(),
        Some(v) => match v.as_object() {
            Some(o) if o.len() > MAX_PROPERTY_CASES => {
                e.push(
                    "/admitted_sources",
                    format!("at most {MAX_PROPERTY_CASES} properties are listed"),
                );
                HashMap::new()
            }
            Some(o) => o
                .iter()
                .filter_map(|(id, d)| {
                    let at = pointer_key("/admitted_sources", id);
                    let hex = d.as_str().filter(|h| {
                        h.len() == 64 && h.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
                    });
                    match hex {
                        Some(h) if id.len() <= 256 => Some((id.clone(), h.to_owned())),
                        _ => {
                            e.push(at, "a source digest is 64 lowercase hex digits, by property id (at most 256 characters)");
                            None
                        }
                    }
                })
                .collect(),
            None => {
                e.push("/admitted_sources", "`admitted_sources` is an object: property id → 64 hex digits");
                HashMap::new()
            }
        },
    };
    let room = doc.get("room").and_then(|v| parse_room(v, &mut e));
    let observe = doc
        .get("observe")
        .and_then(|v| super::observe::parse_observe(v, &mut e));
    let behavior = doc
        .get("behavior")
        .and_then(|v| super::behavior::parse_behavior(v, &mut e));
    let shard = doc
        .get("shard")
        .and_then(|v| super::shard_facts::parse_shard(v, &mut e));
    let shards = doc
        .get("shards")
        .and_then(|v| super::shard_facts::parse_shards(v, &mut e));
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
            tests_from_base,
            added_tests,
            metadata_only,
            test_lines_from_base,
            test_lines_mixed,
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
            replays,
            admitted_sources,
            left_behind,
            timings_ms,
            configured,
            room,
            observe,
            behavior,
            shard,
            shards,
        }),
        _ => Err(e),
    }
}
