//! Reviewing the router: its decision log, and where the fixes for its attributions landed.

use super::*;

// ---------------------------------------------------------------------------------------------
// Reviewing the ladder: the decision log

/// Escalating on inadmissible evidence this often means the freeze set is too broad.
pub const INADMISSIBLE_WARNING_SHARE: f64 = 0.40;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct Review {
    /// Router decisions read.
    pub decisions: u64,
    /// Lines that are not router decisions: other events, quorum and seal decisions, and lines
    /// that are not JSON at all (a log file also holds start-up lines).
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

/// Reviews decision-log lines (NDJSON as the service writes them): lines that are not router
/// decisions — other events, other endpoints' decisions, lines that are not JSON — are counted
/// and skipped, so the service's own log file can be read as it is. An input with no router
/// decision at all is refused (422): it is not a decision log.
pub fn review(body: &[u8]) -> Result<Review, Errors> {
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
    for line in body.split(|b| *b == b'\n') {
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        let Ok(v) = crate::core::json::strict_value(line) else {
            r.skipped_lines += 1;
            continue;
        };
        let is_route = v.get("target").and_then(Value::as_str)
            == Some(crate::core::DECISION_TARGET)
            && matches!(
                v.get("endpoint").and_then(Value::as_str),
                Some("route" | "route/batch" | "route/checks" | "gate")
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
    if r.decisions == 0 {
        let mut errors = Errors::default();
        errors.push(
            "",
            format!(
                "no line is a router decision ({} lines skipped): give the decision log (`patchgate serve` writes one JSON line per decision, target `patchgate::decision`)",
                r.skipped_lines
            ),
        );
        return Err(errors);
    }
    {
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
