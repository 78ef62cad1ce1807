//! Validation of a `/gate` body: the quorum's fields ([`parse_quorum_fields`]), plus
//! `guarded` and `fixture_suite`.

use serde_json::Value;

use super::{FixtureSuite, GateRequest, Judged, Rerun, SandboxBackend, SuspiciousLine};
use crate::core::catalog::CatalogKind;
use crate::core::fields::{self, Errors, object};
use crate::core::quorum::parse_quorum_fields;
use crate::core::runs::{CatchCodes, parse_catch_codes};

/// The fields of a `/gate` body.
pub const GATE_FIELDS: [&str; 17] = [
    "patch_id",
    "changed_files",
    "guarded",
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
    "merge_conflicts",
    "sandbox",
    "shadows",
    "suspicious",
];
/// The fields of a `suspicious` line.
pub const SUSPICIOUS_FIELDS: [&str; 3] = ["file", "line", "pattern"];
/// The fields of `judged`.
pub const JUDGED_FIELDS: [&str; 3] = ["base", "head", "tree"];
/// The fields of `fixture_suite`.
pub const SUITE_FIELDS: [&str; 5] = [
    "exit_code",
    "failed_tests",
    "report_disagrees",
    "catch_exit_codes",
    "rerun",
];
/// The fields of `fixture_suite.rerun`.
pub const RERUN_FIELDS: [&str; 3] = ["exit_code", "failed_tests", "report_disagrees"];
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
    let binaries = doc
        .get("binaries")
        .and_then(|v| fields::paths(v, "/binaries", false, &mut e))
        .unwrap_or_default();
    let merge_conflicts = doc
        .get("merge_conflicts")
        .and_then(|v| fields::paths(v, "/merge_conflicts", false, &mut e))
        .unwrap_or_default();
    let judged = doc.get("judged").and_then(|v| parse_judged(v, &mut e));
    let suspicious = match doc.get("suspicious") {
        Some(list) => fields::array(list, "/suspicious", "`suspicious`", &mut e, |x, p, e| {
            let hit = object(x, &p, "a suspicious line", &SUSPICIOUS_FIELDS, e)?;
            let file = hit
                .required("file", e)
                .and_then(|v| fields::path(v, &hit.pointer("file"), e));
            let line = hit.required("line", e).and_then(|v| {
                fields::uint(v, &hit.pointer("line"), "line", u64::from(u32::MAX), e)
            });
            let pattern = hit.req_string("pattern", 1024, e);
            Some(SuspiciousLine {
                file: file?.as_str().to_owned(),
                line: line?,
                pattern: pattern?,
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
    let suite_ok = doc.get("fixture_suite").is_none() || fixture_suite.is_some();
    match quorum {
        Some(q) if e.is_empty() && suite_ok => Ok(GateRequest {
            patch_id: q.patch_id,
            changed_files: q.changed_files,
            guarded,
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
            merge_conflicts,
            sandbox,
            shadows,
            suspicious,
        }),
        _ => Err(e),
    }
}

fn parse_suite(v: &Value, e: &mut Errors) -> Option<FixtureSuite> {
    let at = "/fixture_suite";
    let suite = object(v, at, "`fixture_suite`", &SUITE_FIELDS, e)?;
    let (exit_code, failed_tests, report_disagrees) = parse_run(&suite, "the suite", e)?;
    let catch_exit_codes = match suite.get("catch_exit_codes") {
        Some(c) => parse_catch_codes(c, &suite.pointer("catch_exit_codes"), e)?,
        None => CatchCodes::default(),
    };
    let rerun = match suite.get("rerun") {
        Some(r) => {
            let rerun = object(r, &suite.pointer("rerun"), "`rerun`", &RERUN_FIELDS, e)?;
            let (exit_code, failed_tests, report_disagrees) = parse_run(&rerun, "the re-run", e)?;
            Some(Rerun {
                exit_code,
                failed_tests,
                report_disagrees,
            })
        }
        None => None,
    };
    Some(FixtureSuite {
        exit_code,
        failed_tests,
        report_disagrees,
        catch_exit_codes,
        rerun,
    })
}

/// A suite run: its `exit_code` (null when killed), and optional `failed_tests` and
/// `report_disagrees`.
type SuiteRun = (Option<u8>, Option<Vec<String>>, Option<String>);

/// A suite run's fields (see [`SuiteRun`]).
fn parse_run(run: &fields::Obj<'_>, what: &str, e: &mut Errors) -> Option<SuiteRun> {
    let exit_code = match run.required("exit_code", e)? {
        Value::Null => None,
        x => match fields::whole_u64(x).map(u8::try_from) {
            Some(Ok(c)) => Some(c),
            _ => {
                e.push(
                    run.pointer("exit_code"),
                    format!(
                        "{x} is not an exit code; `exit_code` is an integer from 0 to 255, or null when {what} was killed"
                    ),
                );
                return None;
            }
        },
    };
    let failed_tests = match run.get("failed_tests") {
        None => None,
        Some(list) => Some(fields::array(
            list,
            &run.pointer("failed_tests"),
            "`failed_tests`",
            e,
            |x, p, e| {
                let id = fields::string(x, &p, "a failed test id", MAX_TEST_ID_CHARS, e)?;
                if id.is_empty() {
                    e.push(p, "a failed test id must not be empty");
                    return None;
                }
                Some(id)
            },
        )?),
    };
    let report_disagrees = run.opt_string("report_disagrees", MAX_TEST_ID_CHARS, e);
    Some((exit_code, failed_tests, report_disagrees))
}

/// `judged`: three git object ids (40 or 64 hex digits).
fn parse_judged(v: &Value, e: &mut Errors) -> Option<Judged> {
    let judged = object(v, "/judged", "`judged`", &JUDGED_FIELDS, e)?;
    let mut id = |key: &str| -> Option<String> {
        let s = judged.req_string(key, 64, e)?;
        if (s.len() == 40 || s.len() == 64) && s.bytes().all(|b| b.is_ascii_hexdigit()) {
            Some(s)
        } else {
            e.push(
                judged.pointer(key),
                format!("`{key}` is {s:?}; it must be a git object id (40 or 64 hex digits)"),
            );
            None
        }
    };
    let (base, head, tree) = (id("base"), id("head"), id("tree"));
    Some(Judged {
        base: base?,
        head: head?,
        tree: tree?,
    })
}
