//! The gate ladder (the second article) and the review of the router (the first article's
//! steps 4-6): scope routing before expensive suites, exit codes read honestly (only 1 is a
//! catch), yield per second, the evidence rule for freezing a flaky test, and the reviews of
//! the decision log and of attributions. Pure: the CLI runs the tiers; this only judges.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use strum::{IntoStaticStr, VariantArray};
use utoipa::ToSchema;

use super::fields::{self, Errors, kind_of, object};
use super::json::ArrayRead;
use super::path::RepoPath;
use super::problem::{Problem, pointer_index};
use super::route::{Attribution, Disposition};

/// The name of the article's scope tier.
pub const SCOPE_TIER: &str = "t0-scope";
pub const T1: &str = "t1-properties";
pub const T2: &str = "t2-fixtures";

/// What makes a path test-adjacent: whole segments, never substrings.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ScopeMarkers {
    /// A directory segment with one of these names (`tests/`, `pkg/fixtures/`).
    pub dirs: Vec<String>,
    /// A basename equal to one of these (`conftest.py`).
    pub files: Vec<String>,
    /// A basename starting with one of these (`test_a.py`).
    pub prefixes: Vec<String>,
}

impl Default for ScopeMarkers {
    fn default() -> Self {
        Self {
            dirs: vec!["tests".into(), "fixtures".into()],
            files: vec!["conftest.py".into(), "pytest.ini".into(), "tox.ini".into()],
            prefixes: vec!["test_".into()],
        }
    }
}

impl ScopeMarkers {
    /// Whether `path` is test-adjacent.
    pub fn is_test_adjacent(&self, path: &RepoPath) -> bool {
        let segments: Vec<&str> = path.segments().collect();
        let Some((base, dirs)) = segments.split_last() else {
            return false;
        };
        dirs.iter().any(|d| self.dirs.iter().any(|m| m == d))
            || self.files.iter().any(|f| f == base)
            || self.prefixes.iter().any(|p| base.starts_with(p.as_str()))
    }
}

/// The plan for a diff: the tiers to run, in order, and the paths that hit the scope.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct Plan {
    pub plan: Vec<String>,
    pub scope_hits: Vec<String>,
}

/// A scope hit sends the patch straight to the fixture tier: the properties' oracle may have
/// moved with the code. The scope tier routes; it never catches.
pub fn plan(files: &[RepoPath], markers: &ScopeMarkers, tiers: &[(String, bool)]) -> Plan {
    let scope_hits: Vec<String> = files
        .iter()
        .filter(|f| markers.is_test_adjacent(f))
        .map(|f| f.as_str().to_owned())
        .collect();
    let hit = !scope_hits.is_empty();
    let plan = tiers
        .iter()
        .filter(|(_, skip_on_hit)| !(hit && *skip_on_hit))
        .map(|(n, _)| n.clone())
        .collect();
    Plan { plan, scope_hits }
}

/// The article's tiers: (name, skipped on a scope hit).
pub fn default_tiers() -> Vec<(String, bool)> {
    vec![(T1.to_owned(), true), (T2.to_owned(), false)]
}

/// What one tier run says.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Hash,
    Serialize,
    Deserialize,
    ToSchema,
    IntoStaticStr,
    VariantArray,
)]
#[serde(rename_all = "lowercase")]
#[strum(serialize_all = "lowercase")]
pub enum TierVerdict {
    Pass,
    /// Exit code exactly 1: the tier caught the patch.
    Caught,
    /// Any other exit, a signal, or a timeout: the harness is broken, not the patch.
    Error,
}

impl TierVerdict {
    pub fn as_str(self) -> &'static str {
        self.into()
    }

    /// Only exit code 1 is a catch; pytest's 2, 3, 4 and 5 are not.
    pub fn of_exit(code: Option<i32>, timed_out: bool) -> Self {
        match (timed_out, code) {
            (false, Some(0)) => TierVerdict::Pass,
            (false, Some(1)) => TierVerdict::Caught,
            _ => TierVerdict::Error,
        }
    }
}

/// One ledger row: a tier a patch reached.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct LedgerRow {
    pub patch: String,
    pub tier: String,
    pub verdict: TierVerdict,
    pub seconds: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub files: Option<Vec<String>>,
    /// The tier command's exit code (null when it timed out or died of a signal).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i32>,
}

const ROW_FIELDS: [&str; 6] = ["patch", "tier", "verdict", "seconds", "files", "exit_code"];

/// Validates one ledger row at `at`.
pub fn parse_row(v: &Value, at: &str, e: &mut Errors) -> Option<LedgerRow> {
    let row = object(v, at, "a ledger row", &ROW_FIELDS, e)?;
    let patch = row.req_string("patch", fields::MAX_ID_CHARS, e);
    let tier = row.req_string("tier", fields::MAX_ID_CHARS, e);
    let verdict = row.req_enum::<TierVerdict>("verdict", e);
    let seconds = match row.required("seconds", e) {
        Some(Value::Number(n)) => match n.as_f64() {
            Some(s) if s.is_finite() && s >= 0.0 => Some(s),
            _ => {
                e.push(
                    row.pointer("seconds"),
                    "`seconds` must be a non-negative number",
                );
                None
            }
        },
        Some(other) => {
            e.push(
                row.pointer("seconds"),
                format!("`seconds` must be a number, not {}", kind_of(other)),
            );
            None
        }
        None => None,
    };
    let files = row
        .get("files")
        .and_then(|f| fields::paths(f, &row.pointer("files"), false, e));
    let exit_code = match row.get("exit_code") {
        None | Some(Value::Null) => None,
        Some(v) => match v.as_i64().and_then(|n| i32::try_from(n).ok()) {
            Some(n) => Some(n),
            None => {
                e.push(
                    row.pointer("exit_code"),
                    "`exit_code` must be an integer or null",
                );
                None
            }
        },
    };
    Some(LedgerRow {
        patch: patch?,
        tier: tier?,
        verdict: verdict?,
        seconds: seconds?,
        files: files.map(|f| f.into_iter().map(|p| p.as_str().to_owned()).collect()),
        exit_code,
    })
}

/// Why a body of rows was refused: bad JSON-array syntax (a 400), or bad rows (a 422).
#[derive(Debug)]
pub enum RowsError {
    Malformed(String),
    Invalid(Errors),
}

impl From<RowsError> for Problem {
    fn from(e: RowsError) -> Self {
        match e {
            RowsError::Malformed(detail) => Problem::malformed(detail),
            RowsError::Invalid(errors) => Problem::invalid(errors),
        }
    }
}

/// Parses a ledger body: a JSON array, or NDJSON (one row a line; blank lines skipped). A
/// malformed line is named by its number.
pub fn parse_ledger(body: &[u8], ndjson: bool) -> Result<Vec<LedgerRow>, RowsError> {
    parse_rows(body, ndjson, parse_row)
}

/// Parses JSON-array or NDJSON rows with `row`, naming NDJSON lines by number.
pub fn parse_rows<T>(
    body: &[u8],
    ndjson: bool,
    row: impl Fn(&Value, &str, &mut Errors) -> Option<T>,
) -> Result<Vec<T>, RowsError> {
    let mut out = Vec::new();
    for_each_row(body, ndjson, row, |r| {
        out.push(r);
        true
    })?;
    Ok(out)
}

/// Parses JSON-array or NDJSON rows with `row` and hands each valid one to `sink` (which
/// returns `false` to stop), while no row has been refused. Rows are read one at a time (a
/// large array never exists as one tree), and reading stops once the error list is full: the
/// answer is a 422 by then, and reading on would only spend.
pub fn for_each_row<T>(
    body: &[u8],
    ndjson: bool,
    row: impl Fn(&Value, &str, &mut Errors) -> Option<T>,
    mut sink: impl FnMut(T) -> bool,
) -> Result<(), RowsError> {
    let mut e = Errors::default();
    let mut more = true;
    if ndjson {
        for (i, line) in body.split(|b| *b == b'\n').enumerate() {
            if e.is_full() || !more {
                break;
            }
            let n = i + 1;
            if line.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            let at = format!("/{n}");
            match super::json::strict_value(line) {
                Ok(v) => {
                    let before = e.kept_mut().len();
                    if let Some(r) = row(&v, &at, &mut e)
                        && e.is_empty()
                    {
                        more = sink(r);
                    }
                    for err in e.kept_mut().iter_mut().skip(before) {
                        err.detail = format!("line {n}: {}", err.detail);
                    }
                }
                Err(err) if err.is_data() => e.push(at, format!("line {n}: {err}")),
                Err(err) => e.push(at, format!("line {n} is not valid JSON: {err}")),
            }
        }
    } else {
        let read = super::json::for_each_element(body, |i, v| {
            if let Some(r) = row(&v, &pointer_index("", i), &mut e)
                && e.is_empty()
            {
                more = sink(r);
            }
            more && !e.is_full()
        });
        match read {
            Ok(ArrayRead::Array) => {}
            Ok(ArrayRead::NotArray(kind)) => {
                e.push("", format!("the rows must be an array, not {kind}"));
            }
            Err(err) if err.is_data() => e.push("", err.to_string()),
            Err(err) => return Err(RowsError::Malformed(format!("not valid JSON: {err}"))),
        }
    }
    if e.is_empty() {
        Ok(())
    } else {
        Err(RowsError::Invalid(e))
    }
}

/// Python's `statistics.median`: the middle value, or the mean of the two middle values.
pub fn median(values: &[f64]) -> Option<f64> {
    let mut v: Vec<f64> = values.to_vec();
    v.sort_by(f64::total_cmp);
    let n = v.len();
    match n {
        0 => None,
        _ if n % 2 == 1 => v.get(n / 2).copied(),
        _ => Some((v.get(n / 2 - 1)? + v.get(n / 2)?) / 2.0),
    }
}

/// One tier's line of the report.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct TierReport {
    pub tier: String,
    pub runs: u64,
    pub passes: u64,
    pub caught: u64,
    pub errors: u64,
    pub median_s: f64,
    pub total_s: f64,
    /// `caught / total_s`; null when no time was recorded, and always for a scope tier.
    pub yield_per_s: Option<f64>,
}

/// The yield report.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct Report {
    /// One line per tier, in tier-name order.
    pub tiers: Vec<TierReport>,
    /// Plain-language reading of the figures.
    pub notes: Vec<String>,
}

/// Refuses a report whose figures overflowed (rows whose seconds add up past the largest
/// `f64`): JSON cannot carry an infinity, and a `null` where a number is promised would be
/// silently reinterpreted by every reader.
pub fn check_report(report: &Report) -> Result<(), Problem> {
    let overflowed = report.tiers.iter().find(|t| {
        !t.median_s.is_finite()
            || !t.total_s.is_finite()
            || t.yield_per_s.is_some_and(|y| !y.is_finite())
    });
    match overflowed {
        None => Ok(()),
        Some(t) => Err(Problem::invalid(vec![super::problem::FieldError::new(
            "",
            format!(
                "the `seconds` of tier `{}` add up past the largest number a report can carry",
                t.tier
            ),
        )])),
    }
}

/// A scope tier routes and never catches: `t0-scope`, or any name ending in `-scope`.
pub fn is_scope_tier(name: &str) -> bool {
    name == SCOPE_TIER || name.ends_with("-scope")
}

/// Most distinct tiers one report covers: a ladder has a handful, and a report's size follows
/// its tiers.
pub const MAX_TIERS: usize = 1000;

/// One tier's figures, gathered row by row.
#[derive(Debug, Default)]
struct TierTally {
    passes: u64,
    caught: u64,
    errors: u64,
    seconds: Vec<f64>,
}

/// A report gathered one row at a time, so a large ledger is never held as rows: a tier costs
/// its counts and 8 bytes a run (for the median).
#[derive(Debug, Default)]
pub struct ReportTally {
    tiers: BTreeMap<String, TierTally>,
    rows: u64,
}

impl ReportTally {
    /// Counts one row; `false` when it names a tier past [`MAX_TIERS`].
    pub fn add(&mut self, row: &LedgerRow) -> bool {
        if !self.tiers.contains_key(&row.tier) && self.tiers.len() >= MAX_TIERS {
            return false;
        }
        let t = self.tiers.entry(row.tier.clone()).or_default();
        match row.verdict {
            TierVerdict::Pass => t.passes += 1,
            TierVerdict::Caught => t.caught += 1,
            TierVerdict::Error => t.errors += 1,
        }
        t.seconds.push(row.seconds);
        self.rows += 1;
        true
    }

    pub fn finish(self) -> Report {
        finish_report(self)
    }
}

/// Parses a ledger body straight into a report, row by row (400 or 422 on failure; a ledger
/// with more than [`MAX_TIERS`] tiers is a 422).
pub fn report_of_ledger(body: &[u8], ndjson: bool) -> Result<Report, RowsError> {
    let mut tally = ReportTally::default();
    let mut too_many = false;
    for_each_row(body, ndjson, parse_row, |row| {
        if !tally.add(&row) {
            too_many = true;
        }
        !too_many
    })?;
    if too_many {
        let mut e = Errors::default();
        e.push(
            "",
            format!(
                "the ledger names more than {MAX_TIERS} tiers; a report covers at most {MAX_TIERS}"
            ),
        );
        return Err(RowsError::Invalid(e));
    }
    Ok(tally.finish())
}

pub fn report(rows: &[LedgerRow]) -> Report {
    let mut tally = ReportTally::default();
    for r in rows {
        tally.add(r);
    }
    tally.finish()
}

fn finish_report(tally: ReportTally) -> Report {
    let empty = tally.rows == 0;
    let tiers: Vec<TierReport> = tally
        .tiers
        .into_iter()
        .map(|(tier, t)| {
            let total_s: f64 = t.seconds.iter().sum();
            let yield_per_s = if is_scope_tier(&tier) || total_s <= 0.0 {
                None
            } else {
                Some(t.caught as f64 / total_s)
            };
            TierReport {
                runs: t.seconds.len() as u64,
                passes: t.passes,
                caught: t.caught,
                errors: t.errors,
                median_s: median(&t.seconds).unwrap_or(0.0),
                total_s,
                yield_per_s,
                tier,
            }
        })
        .collect();
    let mut notes = Vec::new();
    for t in &tiers {
        if is_scope_tier(&t.tier) {
            notes.push(format!(
                "{}: a scope tier routes; it never catches, so it has no yield.",
                t.tier
            ));
            continue;
        }
        if t.errors > 0 {
            notes.push(format!(
                "{}: {} of {} runs errored. A tier that errors means a broken harness, not a wrong patch: fix the harness before reading its yield.",
                t.tier, t.errors, t.runs
            ));
        }
        if t.total_s <= 0.0 {
            notes.push(format!("{}: no time recorded, so no yield.", t.tier));
        } else if t.caught == 0 {
            notes.push(format!(
                "{}: caught nothing in {} runs ({:.1} s): it is buying a contract check, not bug detection.",
                t.tier, t.runs, t.total_s
            ));
        }
    }
    let yielding: Vec<&TierReport> = tiers
        .iter()
        .filter(|t| t.yield_per_s.is_some_and(|y| y > 0.0))
        .collect();
    if let [first, .., last] = yielding.as_slice() {
        if let (Some(a), Some(b)) = (first.yield_per_s, last.yield_per_s) {
            notes.push(format!(
                "The readable signal is the ratio between tiers: {} catches {:.3}/s, {} {:.3}/s ({:.1}x).",
                first.tier,
                a,
                last.tier,
                b,
                a / b
            ));
        }
    } else if tiers.iter().filter(|t| !is_scope_tier(&t.tier)).count() > 1 {
        notes.push("The readable signal is the ratio between tiers; fewer than two tiers caught anything, so there is no ratio yet.".into());
    }
    if empty {
        notes.push("The ledger is empty: nothing to report yet.".into());
    }
    Report { tiers, notes }
}

// ---------------------------------------------------------------------------------------------
// Freeze eligibility

#[derive(Debug, Clone, PartialEq)]
pub struct FreezeRequest {
    /// Pass/fail history of the test, oldest first.
    pub outcomes: Vec<bool>,
    pub caught_seeded_bug: bool,
    pub min_runs: u64,
    pub min_flip_rate: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct FreezeAnswer {
    pub eligible: bool,
    pub reason: String,
    /// Flips between consecutive outcomes / (runs - 1); null with fewer than two runs.
    pub flip_rate: Option<f64>,
    pub runs: u64,
    pub flips: u64,
    /// 0 eligible; 1 not eligible.
    pub exit_code: u8,
}

/// The evidence rule: enough history, actually flaky, and sensitive (it caught a seeded bug).
pub fn freeze_eligibility(r: &FreezeRequest) -> FreezeAnswer {
    let runs = r.outcomes.len() as u64;
    let flips = r
        .outcomes
        .windows(2)
        .filter(|w| w.first() != w.get(1))
        .count() as u64;
    let flip_rate = if runs >= 2 {
        Some(flips as f64 / (runs - 1) as f64)
    } else {
        None
    };
    let (eligible, reason) = if runs < r.min_runs {
        (false, "insufficient history; keep observing".to_owned())
    } else {
        let rate = flip_rate.unwrap_or(0.0);
        if rate < r.min_flip_rate {
            (false, format!("not actually flaky ({rate:.3})"))
        } else if !r.caught_seeded_bug {
            (
                false,
                "no sensitivity evidence; rewrite or delete".to_owned(),
            )
        } else {
            (true, format!("freeze with expiry, flip_rate={rate:.3}"))
        }
    };
    FreezeAnswer {
        eligible,
        reason,
        flip_rate,
        runs,
        flips,
        exit_code: u8::from(!eligible),
    }
}

pub fn parse_freeze(v: &Value) -> Result<FreezeRequest, Errors> {
    let mut e = Errors::default();
    let Some(doc) = object(
        v,
        "",
        "the freeze request",
        &["outcomes", "caught_seeded_bug", "min_runs", "min_flip_rate"],
        &mut e,
    ) else {
        return Err(e);
    };
    let outcomes = doc.required("outcomes", &mut e).and_then(|o| {
        fields::array(o, "/outcomes", "`outcomes`", &mut e, |x, at, e| match x {
            Value::Bool(b) => Some(*b),
            other => {
                e.push(
                    at,
                    format!(
                        "an outcome is true (passed) or false (failed), not {}",
                        kind_of(other)
                    ),
                );
                None
            }
        })
    });
    let caught = match doc.required("caught_seeded_bug", &mut e) {
        Some(Value::Bool(b)) => Some(*b),
        Some(other) => {
            e.push(
                "/caught_seeded_bug",
                format!(
                    "`caught_seeded_bug` must be true or false, not {}",
                    kind_of(other)
                ),
            );
            None
        }
        None => None,
    };
    let min_runs = doc
        .opt_uint("min_runs", 1_000_000_000, &mut e)
        .unwrap_or(20);
    if min_runs < 2 && doc.get("min_runs").is_some() {
        e.push(
            "/min_runs",
            format!("`min_runs` is {min_runs}; a flip rate needs at least 2 runs"),
        );
    }
    let min_flip_rate = match doc.get("min_flip_rate") {
        None => Some(0.02),
        Some(v) => match v.as_f64() {
            Some(r) if (0.0..=1.0).contains(&r) => Some(r),
            _ => {
                e.push(
                    "/min_flip_rate",
                    "`min_flip_rate` must be a number from 0 to 1",
                );
                None
            }
        },
    };
    match (outcomes, caught, min_flip_rate) {
        (Some(outcomes), Some(caught_seeded_bug), Some(min_flip_rate)) if e.is_empty() => {
            Ok(FreezeRequest {
                outcomes,
                caught_seeded_bug,
                min_runs,
                min_flip_rate,
            })
        }
        _ => Err(e),
    }
}

// ---------------------------------------------------------------------------------------------
// Reviewing the ladder: the decision log

/// Escalating on inadmissible evidence this often means the freeze set is too broad.
pub const INADMISSIBLE_WARNING_SHARE: f64 = 0.40;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct Review {
    /// Router decisions read.
    pub decisions: u64,
    /// Log lines that are not router decisions (other events, quorum and seal decisions).
    pub skipped_lines: u64,
    pub by_disposition: BTreeMap<String, u64>,
    pub by_attribution: BTreeMap<String, u64>,
    /// ESCALATE / decisions (null with no decisions).
    pub escalation_rate: Option<f64>,
    /// Decisions escalated on `inadmissible-evidence` / decisions.
    pub inadmissible_share: Option<f64>,
    /// Set at 40% or more: the freeze set is too broad, not the router.
    pub warning: Option<String>,
}

/// Reviews decision-log lines (NDJSON as the service writes them). A line that is not JSON is
/// a 422 naming its number; JSON lines that are not router decisions are counted and skipped.
pub fn review(body: &[u8]) -> Result<Review, Errors> {
    let mut errors = Errors::default();
    let mut r = Review {
        decisions: 0,
        skipped_lines: 0,
        by_disposition: BTreeMap::new(),
        by_attribution: BTreeMap::new(),
        escalation_rate: None,
        inadmissible_share: None,
        warning: None,
    };
    let mut inadmissible = 0u64;
    for (i, line) in body.split(|b| *b == b'\n').enumerate() {
        // Past the error cap the answer is a 422 whatever follows.
        if errors.is_full() {
            break;
        }
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        let v: Value = match super::json::strict_value(line) {
            Ok(v) => v,
            Err(e) => {
                errors.push(
                    format!("/{}", i + 1),
                    format!("line {} is not valid JSON: {e}", i + 1),
                );
                continue;
            }
        };
        let is_route = v.get("target").and_then(Value::as_str)
            == Some(crate::core::DECISION_TARGET)
            && matches!(
                v.get("endpoint").and_then(Value::as_str),
                Some("route" | "route/batch")
            );
        // Only the router's own words count: a line with other words is not one of its
        // decisions (and the answer's tables stay as small as the router's vocabulary).
        let (Some(d), Some(a)) = (
            v.get("disposition")
                .and_then(|d| Disposition::deserialize(d).ok()),
            v.get("attribution")
                .and_then(|a| Attribution::deserialize(a).ok()),
        ) else {
            r.skipped_lines += 1;
            continue;
        };
        if !is_route {
            r.skipped_lines += 1;
            continue;
        }
        r.decisions += 1;
        *r.by_disposition.entry(d.as_str().to_owned()).or_default() += 1;
        *r.by_attribution.entry(a.as_str().to_owned()).or_default() += 1;
        if d == Disposition::Escalate && a == Attribution::InadmissibleEvidence {
            inadmissible += 1;
        }
    }
    if !errors.is_empty() {
        return Err(errors);
    }
    if r.decisions > 0 {
        let n = r.decisions as f64;
        let escalated = r.by_disposition.get("ESCALATE").copied().unwrap_or(0) as f64;
        r.escalation_rate = Some(escalated / n);
        let share = inadmissible as f64 / n;
        r.inadmissible_share = Some(share);
        if share >= INADMISSIBLE_WARNING_SHARE {
            r.warning = Some(format!(
                "{:.1}% of patches escalated on inadmissible-evidence: the freeze set is too broad, not the router",
                share * 100.0
            ));
        }
    }
    Ok(r)
}

// ---------------------------------------------------------------------------------------------
// Calibrating attributions

#[derive(Debug, Clone, Copy, PartialEq, Eq, IntoStaticStr, VariantArray)]
#[strum(serialize_all = "lowercase")]
pub enum FixChanged {
    Production,
    Check,
    Both,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CalibrationRow {
    pub attribution: String,
    pub fix_files: Vec<RepoPath>,
    pub fix_changed: FixChanged,
}

/// Per attribution class: how many, and where the eventual fixes landed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct CalibrationClass {
    pub attribution: String,
    pub count: u64,
    /// Share of fixes that changed production code only.
    pub production: f64,
    /// Share of fixes that changed the check only.
    pub check: f64,
    /// Share of fixes that changed both.
    pub both: f64,
}

pub fn parse_calibration_row(v: &Value, at: &str, e: &mut Errors) -> Option<CalibrationRow> {
    let row = object(
        v,
        at,
        "a calibration row",
        &["attribution", "fix_files", "fix_changed"],
        e,
    )?;
    let attribution = row.req_enum::<Attribution>("attribution", e);
    let fix_files = row
        .required("fix_files", e)
        .and_then(|f| fields::paths(f, &row.pointer("fix_files"), false, e));
    let fix_changed = row.req_enum::<FixChanged>("fix_changed", e);
    Some(CalibrationRow {
        attribution: attribution?.as_str().to_owned(),
        fix_files: fix_files?,
        fix_changed: fix_changed?,
    })
}

/// The share of fixes by where they landed, per attribution class (in name order).
pub fn calibrate(rows: &[CalibrationRow]) -> Vec<CalibrationClass> {
    let mut by: BTreeMap<&str, [u64; 3]> = BTreeMap::new();
    for r in rows {
        let slot = by.entry(r.attribution.as_str()).or_default();
        let i = match r.fix_changed {
            FixChanged::Production => 0,
            FixChanged::Check => 1,
            FixChanged::Both => 2,
        };
        if let Some(c) = slot.get_mut(i) {
            *c += 1;
        }
    }
    by.into_iter()
        .map(|(a, [p, c, b])| {
            let n = (p + c + b) as f64;
            CalibrationClass {
                attribution: a.to_owned(),
                count: p + c + b,
                production: p as f64 / n,
                check: c as f64 / n,
                both: b as f64 / n,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_exit_code_one_is_a_catch() {
        assert_eq!(TierVerdict::of_exit(Some(0), false), TierVerdict::Pass);
        assert_eq!(TierVerdict::of_exit(Some(1), false), TierVerdict::Caught);
        for code in [2, 3, 4, 5, 127, -1] {
            assert_eq!(
                TierVerdict::of_exit(Some(code), false),
                TierVerdict::Error,
                "{code}"
            );
        }
        assert_eq!(TierVerdict::of_exit(None, false), TierVerdict::Error);
        assert_eq!(TierVerdict::of_exit(Some(0), true), TierVerdict::Error);
        assert_eq!(TierVerdict::of_exit(Some(1), true), TierVerdict::Error);
    }

    #[test]
    fn median_is_pythons() {
        assert_eq!(median(&[]), None);
        assert_eq!(median(&[3.0]), Some(3.0));
        assert_eq!(median(&[5.0, 1.0, 3.0]), Some(3.0));
        assert_eq!(median(&[4.0, 1.0, 3.0, 2.0]), Some(2.5));
    }
}
