//! The evidence rule for freezing a flaky test.

use super::*;

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
