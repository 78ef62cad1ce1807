//! The yield report: per tier, runs, catches, median and total seconds, catches per second.

use super::*;

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
        Some(t) => Err(Problem::invalid(vec![
            crate::core::problem::FieldError::new(
                "",
                format!(
                    "the `seconds` of tier `{}` add up past the largest number a report can carry",
                    t.tier
                ),
            ),
        ])),
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
    pub fn add(&mut self, row: &TierRow) -> bool {
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

pub fn report(rows: &[TierRow]) -> Report {
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
            // A total too small to divide by (a subnormal number of seconds) has no yield a
            // number can carry: null, as for no time, and the note says why.
            let yield_per_s = if is_scope_tier(&tier) || total_s <= 0.0 {
                None
            } else {
                Some(t.caught as f64 / total_s).filter(|y| y.is_finite())
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
        } else if t.yield_per_s.is_none() {
            notes.push(format!(
                "{}: {:e} s is too little time to divide by, so no yield.",
                t.tier, t.total_s
            ));
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
