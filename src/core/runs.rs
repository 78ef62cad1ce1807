//! One run model (CONTRACT.md section 2): what a check's runs say, read the same way by the
//! quorum, the patch gate, admission and the ladder. Only a catch is a failure; a run killed
//! by its timeout or a signal has no exit code.

use std::collections::{HashMap, HashSet};

use serde::{Deserialize, Serialize};
use serde_json::Value;
use utoipa::ToSchema;

use super::fields::{self, Errors, kind_of, object};
use super::problem::pointer_key;

crate::core::words! {
    "kebab-case";
    /// What one property's runs say.
    pub enum RunState {
        /// All runs exited 0.
        Pass,
        /// Every run was a catch (an exit code in `catch_exit_codes`): a stable failure.
        Fail,
        /// Every run ended the same way but not with a pass or a catch (pytest's 2–5, a crash
        /// code), or every run was killed: the harness is broken, not the patch.
        Error,
        /// The runs disagree: the failure did not reproduce.
        Flake,
        /// In locality, but no result was given.
        Missing,
        /// Not in locality and no result was given.
        NotRun,
        /// The patch gate only: in locality, not run, because the property tier was skipped (a
        /// scope hit: the properties step's summary and the scope step say why). Never `/quorum`'s.
        Skipped,
    }
}

impl RunState {
    pub fn as_str(self) -> &'static str {
        self.into()
    }
}

/// One run of a check: its exit code, or `None` when it was killed by its timeout or a signal
/// (or could not start). Every runner reports this, and every decision reads it.
pub type RunOutcome = Option<u8>;

/// The exit codes that are a catch (a failure the check found): a non-empty set of codes from
/// 1 to 255, checked once. 0 is a pass, never a catch.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct CatchCodes(Vec<u8>);

/// The catch codes when a request or config names none: pytest's (a failed test exits 1).
pub const DEFAULT_CATCH_EXIT_CODES: [u8; 1] = [1];

impl CatchCodes {
    /// The codes as a set (sorted, each once: at most 255 however long the list given), or why
    /// they are not catch codes.
    pub fn new(codes: impl IntoIterator<Item = u8>) -> Result<Self, &'static str> {
        let mut codes: Vec<u8> = codes.into_iter().collect();
        if codes.is_empty() {
            return Err("must list at least one exit code (pytest's is 1, cargo test's 101)");
        }
        if codes.contains(&0) {
            return Err("0 is a pass, never a catch: a catch is an exit code from 1 to 255");
        }
        codes.sort_unstable();
        codes.dedup();
        Ok(Self(codes))
    }

    /// Whether `code` is a catch.
    pub fn contains(&self, code: u8) -> bool {
        self.0.contains(&code)
    }

    /// Whether a run was a catch (a killed run never is).
    pub fn caught(&self, run: RunOutcome) -> bool {
        run.is_some_and(|c| self.contains(c))
    }

    pub fn as_slice(&self) -> &[u8] {
        &self.0
    }
}

impl Default for CatchCodes {
    fn default() -> Self {
        Self(DEFAULT_CATCH_EXIT_CODES.to_vec())
    }
}

impl Serialize for CatchCodes {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.0.serialize(s)
    }
}

impl<'de> Deserialize<'de> for CatchCodes {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let codes = Vec::<u8>::deserialize(d)?;
        CatchCodes::new(codes).map_err(serde::de::Error::custom)
    }
}

/// Classifies one check's runs with the ladder's verdict model: only a catch is a failure.
/// Every run 0 → pass; every run a catch → fail; every run the same otherwise (pytest's 2–5,
/// a crash code) or every run killed → error; anything else → flake; no runs → missing.
pub fn classify(runs: &[RunOutcome], catch: &CatchCodes) -> RunState {
    match runs.split_first() {
        None => RunState::Missing,
        Some(_) if runs.iter().all(|r| *r == Some(0)) => RunState::Pass,
        Some(_) if runs.iter().all(|r| catch.caught(*r)) => RunState::Fail,
        Some((first, rest)) if rest.iter().all(|r| r == first) => RunState::Error,
        Some(_) => RunState::Flake,
    }
}

/// What a run's JUnit report, its receipt (CONTRACT.md section 11.1), lists: the runner read
/// it from a fresh path after the run; the core decides what the run then counts as.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct Receipt {
    /// Test cases that ran (passed, failed or errored; not skipped).
    #[schema(minimum = 0, maximum = 4294967295_u64)]
    pub executed: u64,
    /// Test cases that failed or errored.
    #[schema(minimum = 0, maximum = 4294967295_u64)]
    pub failed: u64,
    /// Test cases skipped.
    #[schema(minimum = 0, maximum = 4294967295_u64)]
    pub skipped: u64,
    /// How the report disagrees with itself (a failure outside any test case, declared failures
    /// or errors that differ from the ones its cases list), when it does.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false, max_length = 4096)]
    pub disagrees: Option<String>,
}

/// The fields of a receipt.
pub const RECEIPT_FIELDS: [&str; 4] = ["executed", "failed", "skipped", "disagrees"];

crate::core::words! {
    "kebab-case";
    /// Why a run's receipt does not vouch for its exit code (CONTRACT.md section 11.1).
    pub enum ReceiptGap {
        /// No report was written at the fresh path, or it could not be read.
        NoReceipt,
        /// The report lists no executed test case.
        NothingRan,
        /// Exit 0, but the report lists a skipped case.
        Skipped,
        /// A catch exit, but the report lists no failed case.
        NoFailureListed,
        /// Exit 0, but the report lists a failed or errored case.
        FailureListed,
        /// The report disagrees with itself.
        ReportDisagrees,
    }
}

impl ReceiptGap {
    pub fn as_str(self) -> &'static str {
        self.into()
    }
}

/// Whether the test case `case_id` (`classname::name`, as a receipt lists it) is one of a
/// property's, whose cases `prefix` names (`[properties] case` with the id put in): the case
/// itself, or a case inside it (`prefix` then `::` or `.`: a module's tests, a class's, a
/// parametrized case's). `properties.test_sort` names neither `properties.test_sort_x::t`
/// nor `other.properties.test_sort::t`.
pub fn case_of(case_id: &str, prefix: &str) -> bool {
    case_id
        .strip_prefix(prefix)
        .is_some_and(|rest| rest.is_empty() || rest.starts_with("::") || rest.starts_with('.'))
}

/// A property's part of a batched run (several properties in one process, `{ids}`): the exit
/// code is the batch's, so a catch whose failure this property's own cases do not list, when
/// another property's cases in the same run do, is this property's exit 0 (which [`counted`]
/// then holds to its receipt: a case ran, none failed or skipped). A catch no property's cases
/// explain stays a catch, and [`counted`] makes it `null` (`no-failure-listed`).
pub fn in_batch(
    run: RunOutcome,
    receipt: Option<&Receipt>,
    catch: &CatchCodes,
    another_failed: bool,
) -> RunOutcome {
    match receipt {
        Some(r) if catch.caught(run) && r.failed == 0 && another_failed => Some(0),
        _ => run,
    }
}

/// What a run counts as, given its receipt (`None`: no report): exit 0 only with a report that
/// lists an executed case and no failure, error (or, unless `skips_allowed`, skip); a catch
/// only with a report that lists a failed case; otherwise `null`, with the gap. Any other exit
/// (a crash, a kill) is already no verdict and is kept as it is.
pub fn counted(
    run: RunOutcome,
    receipt: Option<&Receipt>,
    catch: &CatchCodes,
    skips_allowed: bool,
) -> (RunOutcome, Option<ReceiptGap>) {
    let pass = run == Some(0);
    if !pass && !catch.caught(run) {
        return (run, None);
    }
    let gap = match receipt {
        None => Some(ReceiptGap::NoReceipt),
        Some(r) if r.disagrees.is_some() => Some(ReceiptGap::ReportDisagrees),
        Some(r) if r.executed == 0 => Some(ReceiptGap::NothingRan),
        Some(r) if pass && r.failed > 0 => Some(ReceiptGap::FailureListed),
        Some(r) if pass && r.skipped > 0 && !skips_allowed => Some(ReceiptGap::Skipped),
        Some(r) if !pass && r.failed == 0 => Some(ReceiptGap::NoFailureListed),
        Some(_) => None,
    };
    match gap {
        Some(g) => (None, Some(g)),
        None => (run, None),
    }
}

/// A receipt, or `null` (no report read).
pub fn parse_receipt(v: &Value, at: &str, e: &mut Errors) -> Option<Option<Receipt>> {
    if v.is_null() {
        return Some(None);
    }
    let obj = object(v, at, "a receipt", &RECEIPT_FIELDS, e)?;
    let mut count = |key: &str| {
        obj.required(key, e)
            .and_then(|x| fields::uint(x, &obj.pointer(key), key, u64::from(u32::MAX), e))
    };
    let (executed, failed, skipped) = (count("executed"), count("failed"), count("skipped"));
    let disagrees = obj.opt_string("disagrees", 4096, e);
    Some(Some(Receipt {
        executed: executed?,
        failed: failed?,
        skipped: skipped?,
        disagrees,
    }))
}

/// A request's top-level `catch_exit_codes`, or the default (pytest's `[1]`); `None` when they
/// are invalid (reported in `e`).
pub fn request_catch_codes(doc: &fields::Obj<'_>, e: &mut Errors) -> Option<CatchCodes> {
    match doc.get("catch_exit_codes") {
        Some(v) => parse_catch_codes(v, "/catch_exit_codes", e),
        None => Some(CatchCodes::default()),
    }
}

/// `catch_exit_codes`: a non-empty list of exit codes 1..=255 (0 is a pass, never a catch).
pub fn parse_catch_codes(v: &Value, at: &str, e: &mut Errors) -> Option<CatchCodes> {
    let before = e.total();
    let codes = fields::array(
        v,
        at,
        "`catch_exit_codes`",
        e,
        |x, p, e| match fields::whole_u64(x).map(u8::try_from) {
            Some(Ok(code)) if code > 0 => Some(code),
            _ => {
                e.push(
                    p,
                    format!("{x} is not a catch code; a catch is an exit code from 1 to 255 (0 is a pass)"),
                );
                None
            }
        },
    )?;
    if e.total() != before {
        return None;
    }
    CatchCodes::new(codes).map_err(|why| e.push(at, why)).ok()
}

/// Validates runs by property id (`results` in `/quorum`, `property_runs` in `/gate`).
pub fn parse_results(
    v: &Value,
    base: &str,
    known: &HashSet<&str>,
    e: &mut Errors,
) -> HashMap<String, Vec<RunOutcome>> {
    let Some(map) = v.as_object() else {
        e.push(
            base,
            format!(
                "`{}` must be an object of property id → {{\"runs\": [...]}}, not {}",
                base.trim_start_matches('/'),
                kind_of(v)
            ),
        );
        return HashMap::new();
    };
    let mut out = HashMap::new();
    for (id, result) in map {
        if e.is_full() {
            break;
        }
        let at = pointer_key(base, id);
        if !known.contains(id.as_str()) {
            e.push(
                at.clone(),
                format!("a result for {id:?}, which is not in the catalog"),
            );
        }
        let Some(obj) = object(result, &at, "a result", &["runs"], e) else {
            continue;
        };
        let Some(runs) = obj.required("runs", e) else {
            continue;
        };
        if let Some(codes) = parse_runs(runs, &obj.pointer("runs"), "`runs`", e) {
            out.insert(id.clone(), codes);
        }
    }
    out
}

/// Validates one check's runs: 2 to 10, each an exit code 0..=255 or `null` (a run killed by
/// its timeout or a signal). `None` when any is invalid (each is reported).
pub fn parse_runs(v: &Value, at: &str, what: &str, e: &mut Errors) -> Option<Vec<RunOutcome>> {
    let codes = fields::array(v, at, what, e, |x, p, e| {
        if x.is_null() {
            // Killed by its timeout or a signal: no exit code.
            return Some(None);
        }
        match crate::core::fields::whole_u64(x).map(u8::try_from) {
            Some(Ok(code)) => Some(Some(code)),
            _ => {
                e.push(
                    p,
                    format!(
                        "{x} is not an exit code; a run is an integer from 0 to 255, or null when it was killed"
                    ),
                );
                None
            }
        }
    })?;
    let given = v.as_array().map_or(0, Vec::len);
    if !(2..=10).contains(&given) {
        e.push(
            at,
            format!("{what} holds {given} exit codes; it must hold 2 to 10"),
        );
        return None;
    }
    (codes.len() == given).then_some(codes)
}

// The schemas of an exit code, a catch code and a test id, for the OpenAPI document.
crate::core::value_schema!(
    /// A process exit code.
    ExitCodeDoc(u8) as "ExitCode",
    || utoipa::openapi::schema::ObjectBuilder::new()
        .schema_type(utoipa::openapi::schema::Type::Integer)
        .description(Some("A process exit code, 0-255."))
        .minimum(Some(0))
        .maximum(Some(255))
);

crate::core::value_schema!(
    /// An exit code that is a catch.
    CatchCodeDoc(u8) as "CatchCode",
    || utoipa::openapi::schema::ObjectBuilder::new()
        .schema_type(utoipa::openapi::schema::Type::Integer)
        .description(Some("An exit code that is a catch (a failure the check found), 1-255; 0 is a pass."))
        .minimum(Some(1))
        .maximum(Some(255))
);

crate::core::value_schema!(
    /// A test's id.
    TestIdDoc(String) as "TestId",
    || utoipa::openapi::schema::ObjectBuilder::new()
        .schema_type(utoipa::openapi::schema::Type::String)
        .description(Some("A test case's id (`classname::name`), 1 to 4096 characters."))
        .min_length(Some(1))
        .max_length(Some(4096))
);

#[cfg(test)]
mod tests {
    fn codes(c: &[u8]) -> CatchCodes {
        CatchCodes::new(c.iter().copied()).unwrap_or_else(|e| panic!("{e}"))
    }

    #[test]
    fn catch_codes_are_a_checked_set() {
        assert_eq!(codes(&[101, 1, 101]).as_slice(), &[1, 101]);
        assert!(CatchCodes::new([]).is_err());
        assert!(CatchCodes::new([0, 1]).is_err());
        assert_eq!(CatchCodes::default().as_slice(), &[1]);
        assert!(!codes(&[1]).caught(None));
        assert!(codes(&[1]).caught(Some(1)));
        assert!(!codes(&[1]).caught(Some(0)));
    }

    use super::*;

    #[test]
    fn a_run_counts_only_with_its_receipt() {
        // CONTRACT.md section 11.1, by hand.
        let r = |executed, failed, skipped| Receipt {
            executed,
            failed,
            skipped,
            disagrees: None,
        };
        let lying = Receipt {
            disagrees: Some("a <failure> outside any test case".into()),
            ..r(3, 0, 0)
        };
        let pytest = codes(&[1]);
        type Case<'a> = (
            RunOutcome,
            Option<&'a Receipt>,
            bool,
            RunOutcome,
            Option<ReceiptGap>,
        );
        let cases: [Case; 14] = [
            (Some(0), Some(&r(3, 0, 0)), false, Some(0), None),
            (Some(0), None, false, None, Some(ReceiptGap::NoReceipt)),
            (
                Some(0),
                Some(&r(0, 0, 0)),
                false,
                None,
                Some(ReceiptGap::NothingRan),
            ),
            (
                Some(0),
                Some(&r(0, 0, 4)),
                true,
                None,
                Some(ReceiptGap::NothingRan),
            ),
            (
                Some(0),
                Some(&r(3, 0, 1)),
                false,
                None,
                Some(ReceiptGap::Skipped),
            ),
            (Some(0), Some(&r(3, 0, 1)), true, Some(0), None),
            (
                Some(0),
                Some(&r(3, 1, 0)),
                false,
                None,
                Some(ReceiptGap::FailureListed),
            ),
            (
                Some(0),
                Some(&lying),
                false,
                None,
                Some(ReceiptGap::ReportDisagrees),
            ),
            (Some(1), Some(&r(3, 1, 0)), false, Some(1), None),
            (
                Some(1),
                Some(&r(3, 0, 0)),
                false,
                None,
                Some(ReceiptGap::NoFailureListed),
            ),
            (Some(1), None, false, None, Some(ReceiptGap::NoReceipt)),
            (Some(1), Some(&r(3, 1, 2)), false, Some(1), None),
            // Not a pass and not a catch: no verdict already, kept as it is.
            (Some(5), None, false, Some(5), None),
            (None, None, false, None, None),
        ];
        for (run, receipt, skips, want, gap) in cases {
            assert_eq!(
                counted(run, receipt, &pytest, skips),
                (want, gap),
                "{run:?} with {receipt:?}"
            );
        }
    }

    #[test]
    fn classification_follows_the_contract() {
        // CONTRACT.md section 2, by hand: `None` is a run killed by its timeout or a signal.
        let pytest = [1u8];
        let cargo = [101u8];
        type Case<'a> = (&'a [Option<u8>], &'a [u8], RunState);
        let cases: [Case; 14] = [
            (&[Some(0), Some(0)], &pytest, RunState::Pass),
            (&[Some(0); 10], &pytest, RunState::Pass),
            (&[Some(1), Some(1)], &pytest, RunState::Fail),
            (&[Some(101), Some(101)], &cargo, RunState::Fail),
            // A Rust repository's failing `cargo test` read with pytest's codes: not a catch.
            (&[Some(101), Some(101)], &pytest, RunState::Error),
            // pytest exit 5, "no tests collected": the harness, never a rejection.
            (&[Some(5), Some(5), Some(5)], &pytest, RunState::Error),
            (&[Some(3), Some(3)], &pytest, RunState::Error),
            (&[None, None], &pytest, RunState::Error),
            (&[Some(0), Some(1)], &pytest, RunState::Flake),
            (&[Some(1), Some(0)], &pytest, RunState::Flake),
            (&[Some(1), Some(2)], &pytest, RunState::Flake),
            (&[Some(0), None], &pytest, RunState::Flake),
            (&[Some(0), Some(0), Some(1)], &pytest, RunState::Flake),
            (&[], &pytest, RunState::Missing),
        ];
        for (runs, catch, want) in cases {
            assert_eq!(
                classify(runs, &codes(catch)),
                want,
                "{runs:?} with catches {catch:?}"
            );
        }
        // Two different catch codes are still every run a catch.
        assert_eq!(
            classify(&[Some(1), Some(2)], &codes(&[1, 2])),
            RunState::Fail
        );
    }
}

#[cfg(test)]
mod batch_tests {
    use super::*;

    #[test]
    fn a_property_s_cases_are_the_case_or_inside_it() {
        for (case, prefix, mine) in [
            (
                "properties.test_sort::test_it",
                "properties.test_sort",
                true,
            ),
            (
                "properties.test_sort::test_it[3]",
                "properties.test_sort",
                true,
            ),
            (
                "properties.test_sort.TestX::test_it",
                "properties.test_sort",
                true,
            ),
            (
                "integration::split_is_fair",
                "integration::split_is_fair",
                true,
            ),
            (
                "properties.test_sort_x::test_it",
                "properties.test_sort",
                false,
            ),
            (
                "other.properties.test_sort::t",
                "properties.test_sort",
                false,
            ),
            (
                "integration::split_is_fair_too",
                "integration::split_is_fair",
                false,
            ),
        ] {
            assert_eq!(case_of(case, prefix), mine, "{case} in {prefix}");
        }
    }

    #[test]
    fn a_catch_in_a_batch_is_the_property_s_only_when_its_cases_failed() {
        let catch = CatchCodes::default();
        let clean = Receipt {
            executed: 2,
            failed: 0,
            skipped: 0,
            disagrees: None,
        };
        let failed = Receipt {
            failed: 1,
            ..clean.clone()
        };
        for (run, receipt, another, counted_as) in [
            // Another property's failure explains the exit: this one passed.
            (Some(1), Some(&clean), true, Some(0)),
            // Nobody's failure explains it: a catch, which `counted` makes null.
            (Some(1), Some(&clean), false, Some(1)),
            (Some(1), Some(&failed), true, Some(1)),
            (Some(0), Some(&clean), false, Some(0)),
            (Some(2), Some(&clean), true, Some(2)),
            (None, Some(&clean), true, None),
            (Some(1), None, true, Some(1)),
        ] {
            assert_eq!(
                in_batch(run, receipt, &catch, another),
                counted_as,
                "{run:?} {receipt:?} {another}"
            );
        }
    }
}
