//! Validation of a `/gate` body: the quorum's field readers, plus `guarded`, `property_runs`
//! and `fixture_suite`.

use std::collections::HashSet;

use serde_json::Value;

use super::{FixtureSuite, GateRequest};
use crate::core::catalog::{CatalogKind, parse_catalog};
use crate::core::fields::{self, Errors, MAX_ID_CHARS, object};
use crate::core::freeze_ledger::parse_ledger;
use crate::core::runs::{CatchCodes, parse_catch_codes, parse_results, request_catch_codes};
use crate::core::seal::parse_seal;

/// The fields of a `/gate` body.
pub const GATE_FIELDS: [&str; 11] = [
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
];
const SUITE_FIELDS: [&str; 3] = ["exit_code", "failed_tests", "catch_exit_codes"];
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

/// Validates a `/gate` document, reporting every invalid field.
pub fn parse_gate_request(value: &Value) -> Result<GateRequest, Errors> {
    let mut e = Errors::default();
    let Some(doc) = object(value, "", "the gate request", &GATE_FIELDS, &mut e) else {
        return Err(e);
    };
    let patch_id = doc.opt_string("patch_id", MAX_ID_CHARS, &mut e);
    let changed_files = doc
        .required("changed_files", &mut e)
        .and_then(|v| fields::paths(v, "/changed_files", false, &mut e))
        .unwrap_or_default();
    let guarded = doc
        .get("guarded")
        .and_then(|v| fields::paths(v, "/guarded", false, &mut e))
        .unwrap_or_default();
    let seal = doc
        .required("seal", &mut e)
        .and_then(|v| parse_seal(v, &mut e));
    // Read first: an admission record in the catalog is read with these codes.
    let catch_exit_codes = request_catch_codes(&doc, &mut e);
    let (catalog, ids) = doc
        .required("catalog", &mut e)
        .map(|v| parse_catalog(v, CatalogKind::Gate, catch_exit_codes.as_ref(), &mut e))
        .unwrap_or_default();
    let known: HashSet<&str> = ids.iter().map(String::as_str).collect();
    let ledger = doc
        .get("ledger")
        .map(|v| parse_ledger(v, &mut e))
        .unwrap_or_default();
    let debt_cap = doc.opt_uint("debt_cap", u64::from(u32::MAX), &mut e);
    let property_runs = doc
        .get("property_runs")
        .map(|v| parse_results(v, "/property_runs", &known, &mut e))
        .unwrap_or_default();
    let require_admission = doc.opt_bool("require_admission", &mut e).unwrap_or(false);
    let fixture_suite = doc
        .get("fixture_suite")
        .and_then(|v| parse_suite(v, &mut e));
    let suite_ok = doc.get("fixture_suite").is_none() || fixture_suite.is_some();
    match (seal, catch_exit_codes) {
        (Some(seal), Some(catch_exit_codes)) if e.is_empty() && suite_ok => Ok(GateRequest {
            patch_id,
            changed_files,
            guarded,
            seal,
            catalog,
            ledger,
            debt_cap,
            property_runs,
            catch_exit_codes,
            fixture_suite,
            require_admission,
        }),
        _ => Err(e),
    }
}

fn parse_suite(v: &Value, e: &mut Errors) -> Option<FixtureSuite> {
    let at = "/fixture_suite";
    let suite = object(v, at, "`fixture_suite`", &SUITE_FIELDS, e)?;
    let exit_code = match suite.required("exit_code", e)? {
        Value::Null => None,
        x => match fields::whole_u64(x).map(u8::try_from) {
            Some(Ok(c)) => Some(c),
            _ => {
                e.push(
                    suite.pointer("exit_code"),
                    format!(
                        "{x} is not an exit code; `exit_code` is an integer from 0 to 255, or null when the suite was killed"
                    ),
                );
                return None;
            }
        },
    };
    let failed_tests = match suite.get("failed_tests") {
        None => None,
        Some(list) => Some(fields::array(
            list,
            &suite.pointer("failed_tests"),
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
    let catch_exit_codes = match suite.get("catch_exit_codes") {
        Some(c) => parse_catch_codes(c, &suite.pointer("catch_exit_codes"), e)?,
        None => CatchCodes::default(),
    };
    Some(FixtureSuite {
        exit_code,
        failed_tests,
        catch_exit_codes,
    })
}
