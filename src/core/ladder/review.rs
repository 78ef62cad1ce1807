//! Reviewing the router: its decision log, and where the fixes for its attributions landed.

use std::borrow::Cow;

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

/// The decision-log endpoints whose lines are router decisions.
const ROUTER_ENDPOINTS: [&str; 4] = ["route", "route/batch", "route/checks", "gate"];

/// What the review reads of a decision-log line; any other field is skipped unread.
#[derive(Deserialize)]
struct LogLine<'a> {
    #[serde(borrow, default)]
    target: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    endpoint: Option<Cow<'a, str>>,
    #[serde(default)]
    disposition: Option<Disposition>,
    #[serde(default)]
    attribution: Option<Attribution>,
}

/// The fewest bytes a router decision's line can have: an object with the four fields read,
/// each at its shortest value, written compactly. Escapes, spaces and other fields only
/// lengthen a line, so a shorter line cannot be a decision.
fn shortest_decision_line() -> usize {
    fn shortest<'a>(words: impl Iterator<Item = &'a str>) -> usize {
        words.map(str::len).min().unwrap_or(0)
    }
    let value = |key: &str, len: usize| key.len() + len + 6; // "key":"value" and a separator
    1 + value("target", crate::core::DECISION_TARGET.len())
        + value("endpoint", shortest(ROUTER_ENDPOINTS.into_iter()))
        + value(
            "disposition",
            shortest(Disposition::VARIANTS.iter().map(|d| d.as_str())),
        )
        + value(
            "attribution",
            shortest(Attribution::VARIANTS.iter().map(|a| a.as_str())),
        )
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
    let shortest = shortest_decision_line();
    for line in body.split(|b| *b == b'\n') {
        // Skipped unread: a line that is not an object, or too short to be a decision (a log's
        // start-up lines, or 64 MiB of junk, cost no parse each).
        let Some(start) = line.iter().position(|b| !matches!(b, b' ' | b'\t' | b'\r')) else {
            continue;
        };
        if line.get(start) != Some(&b'{') || line.len() - start < shortest {
            r.skipped_lines += 1;
            continue;
        }
        // Only the router's own words count: a line with other words is not one of its
        // decisions (and the answer's tables stay as small as the router's vocabulary).
        let decision = crate::core::json::read_log_line::<LogLine>(line).and_then(|l| {
            let is_route = l.target.as_deref() == Some(crate::core::DECISION_TARGET)
                && l.endpoint.is_some_and(|e| ROUTER_ENDPOINTS.contains(&&*e));
            is_route
                .then_some(l.disposition.zip(l.attribution))
                .flatten()
        });
        let Some((d, a)) = decision else {
            r.skipped_lines += 1;
            continue;
        };
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
