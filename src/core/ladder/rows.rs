//! The ladder's ledger rows and the one reader of row bodies (a JSON array or NDJSON), read
//! one row at a time and stopped at the error cap.

use super::*;
use crate::core::runs::{CatchCodes, RunOutcome};

crate::core::words! {
    /// What one tier run says.
    pub enum TierVerdict {
        Pass,
        /// Exit code exactly 1: the tier caught the patch.
        Caught,
        /// Any other exit, a signal, or a timeout: the harness is broken, not the patch.
        Error,
    }
}

impl TierVerdict {
    pub fn as_str(self) -> &'static str {
        self.into()
    }

    /// One run's verdict. Only a catch is a failure: an exit code in `catch` (pytest's `[1]`
    /// by default; its 2, 3, 4 and 5 are not; `cargo test`'s is 101). 0 passes; anything
    /// else, a timeout or a signal (no exit code) is an error of the harness.
    pub fn of_run(run: RunOutcome, catch: &CatchCodes) -> Self {
        match run {
            Some(0) => TierVerdict::Pass,
            r if catch.caught(r) => TierVerdict::Caught,
            _ => TierVerdict::Error,
        }
    }
}

/// One ledger row: a tier a patch reached.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct TierRow {
    #[schema(min_length = 1, max_length = 256)]
    pub patch: String,
    #[schema(min_length = 1, max_length = 256)]
    pub tier: String,
    pub verdict: TierVerdict,
    #[schema(minimum = 0, maximum = 1000000000)]
    pub seconds: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false, value_type = Option<Vec<crate::core::path::RepoPathDoc>>)]
    pub files: Option<Vec<String>>,
    /// The tier command's exit code (null when it timed out or died of a signal).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i32>,
}

/// The longest a tier run may have taken, in seconds (31 years): more is not a measurement,
/// and a report's totals stay finite whatever a ledger holds.
pub const MAX_SECONDS: f64 = 1e9;

/// The fields of a tier-ledger row.
pub const ROW_FIELDS: [&str; 6] = ["patch", "tier", "verdict", "seconds", "files", "exit_code"];

/// Validates one ledger row at `at`.
pub fn parse_row(v: &Value, at: &str, e: &mut Errors) -> Option<TierRow> {
    let row = object(v, at, "a ledger row", &ROW_FIELDS, e)?;
    let patch = row.req_string("patch", fields::MAX_ID_CHARS, e);
    let tier = row.req_string("tier", fields::MAX_ID_CHARS, e);
    let verdict = row.req_enum::<TierVerdict>("verdict", e);
    let seconds = match row.required("seconds", e) {
        Some(Value::Number(n)) => match n.as_f64() {
            Some(s) if (0.0..=MAX_SECONDS).contains(&s) => Some(s),
            _ => {
                e.push(
                    row.pointer("seconds"),
                    "`seconds` must be a number from 0 to 1e9 (31 years)",
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
        Some(v) => match fields::whole(v).and_then(|n| i32::try_from(n).ok()) {
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
    Some(TierRow {
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
pub fn parse_ledger(body: &[u8], ndjson: bool) -> Result<Vec<TierRow>, RowsError> {
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
            match crate::core::json::strict_value(line) {
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
        let read = crate::core::json::for_each_element(body, |i, v| {
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
