//! Reviewing the router: its decision log, and where the fixes for its attributions landed.

use std::borrow::Cow;

use super::*;
use crate::core::gate::{GateDisposition, GateReason};

// ---------------------------------------------------------------------------------------------
// Reviewing the ladder: the decision log

/// Escalating on inadmissible evidence this often means the freeze set is too broad.
pub const INADMISSIBLE_WARNING_SHARE: f64 = 0.40;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct Review {
    /// Decisions read: the router's, and the patch gate's own rules' (a guard hit, a reading,
    /// a neutered canary... issue 50), each one decision.
    pub decisions: u64,
    /// Lines that are not decisions: other events, quorum and seal decisions, and lines that
    /// are not JSON at all (a log file also holds start-up lines).
    pub skipped_lines: u64,
    pub by_disposition: BTreeMap<String, u64>,
    /// The router's decisions by its attribution.
    pub by_attribution: BTreeMap<String, u64>,
    /// Every decision by its reason: the router's attribution, or the gate rule's reason.
    #[serde(default)]
    pub by_reason: BTreeMap<String, u64>,
    /// ESCALATE / decisions (null with no decisions).
    pub escalation_rate: Option<f64>,
    /// Decisions escalated on `inadmissible-evidence` / decisions.
    pub inadmissible_share: Option<f64>,
    /// Set at 40% or more: the freeze set is too broad, not the router.
    pub warning: Option<String>,
    /// The same counts per week (Monday to Sunday, UTC, by each line's `timestamp`), oldest
    /// first; decisions whose line has no timestamp are counted above only.
    #[serde(default)]
    pub by_week: Vec<ReviewWeek>,
}

/// One week of the decision log.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct ReviewWeek {
    /// The week's Monday (`YYYY-MM-DD`, UTC).
    pub week: String,
    pub decisions: u64,
    pub by_disposition: BTreeMap<String, u64>,
    pub by_attribution: BTreeMap<String, u64>,
    #[serde(default)]
    pub by_reason: BTreeMap<String, u64>,
    /// ESCALATE / decisions of the week (null for a week with only freeze-debt lines).
    pub escalation_rate: Option<f64>,
    pub inadmissible_share: Option<f64>,
    /// The freeze debt the week's last gate or quorum decision counted, and its cap.
    pub freeze_debt: Option<u64>,
    pub debt_cap: Option<u64>,
}

/// Most weeks a review lists (ten years): weeks a log names after its first 520 are counted
/// in the totals only.
pub const MAX_REVIEW_WEEKS: usize = 520;

/// The Monday (`YYYY-MM-DD`) of the week of an RFC 3339 timestamp's date (UTC), or `None`
/// when it does not start with a date.
pub fn week_of(timestamp: &str) -> Option<String> {
    let date = timestamp.get(..10)?;
    let b = date.as_bytes();
    if b.get(4) != Some(&b'-') || b.get(7) != Some(&b'-') {
        return None;
    }
    let num = |r: std::ops::Range<usize>| date.get(r)?.parse::<i64>().ok();
    let (y, m, d) = (num(0..4)?, num(5..7)?, num(8..10)?);
    if !(1..=12).contains(&m) || !(1..=31).contains(&d) {
        return None;
    }
    // Days since 1970-01-01 (Howard Hinnant's days_from_civil).
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    Some(monday_of(era * 146_097 + doe - 719_468))
}

/// The Monday of the week of a decision id's time: our ids are UUIDv7, whose first 48 bits
/// are the milliseconds since 1970 (a kept answer has no timestamp, its id has one).
pub fn week_of_decision_id(id: &str) -> Option<String> {
    let hex: String = id.chars().filter(|c| *c != '-').take(12).collect();
    let version = id.chars().filter(|c| *c != '-').nth(12);
    if hex.len() != 12 || version != Some('7') {
        return None;
    }
    let ms = i64::from_str_radix(&hex, 16).ok()?;
    Some(monday_of(ms.div_euclid(86_400_000)))
}

/// The Monday (`YYYY-MM-DD`) of the week of a day counted from 1970-01-01 (a Thursday).
fn monday_of(days: i64) -> String {
    let monday = days - (days + 3).rem_euclid(7);
    let (year, month, day) = crate::core::date::civil_from_days(monday);
    format!("{year:04}-{month:02}-{day:02}")
}

/// The decision-log endpoints whose lines are router decisions.
pub(super) const ROUTER_ENDPOINTS: [&str; 4] = ["route", "route/batch", "route/checks", "gate"];

/// What the review reads of a decision-log line; any other field is skipped unread.
#[derive(Deserialize)]
struct LogLine<'a> {
    #[serde(borrow, default)]
    timestamp: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    target: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    endpoint: Option<Cow<'a, str>>,
    /// A word of the router's or the gate's (`STOP_QUEUE`): read as a string, so a gate line
    /// the router's counts do not take still says its debt.
    #[serde(borrow, default)]
    disposition: Option<Cow<'a, str>>,
    #[serde(default)]
    attribution: Option<Attribution>,
    #[serde(default)]
    debt_counted: Option<u64>,
    #[serde(default)]
    debt_cap: Option<u64>,
    // A kept gate answer (`patchgate gate --json-out`), one per line:
    #[serde(borrow, default)]
    decision_id: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    reason: Option<Cow<'a, str>>,
    /// Present when the router decided (its `reason` is then the attribution).
    #[serde(default)]
    evidence: Option<serde::de::IgnoredAny>,
    #[serde(borrow, default)]
    steps: Option<Vec<AnswerStep<'a>>>,
}

/// What the review reads of an answer's step: the debt step's figures.
#[derive(Deserialize)]
struct AnswerStep<'a> {
    #[serde(borrow)]
    step: Cow<'a, str>,
    #[serde(default)]
    counted: Option<u64>,
    #[serde(default)]
    cap: Option<u64>,
}

/// A word of `T`'s, spelled as its variants are.
fn word<T: VariantArray + Copy + Into<&'static str>>(s: &str) -> Option<T> {
    T::VARIANTS.iter().copied().find(|v| (*v).into() == s)
}

/// What one line of a review's input says: a decision-log line of ours, or a kept gate
/// answer; `None` for anything else.
struct Reviewed {
    week: Option<String>,
    /// The router's decision (a gate answer's when the router decided it).
    decided: Option<(Disposition, Attribution)>,
    /// A gate rule's decision (not the router's): its disposition and reason.
    gate_rule: Option<(GateDisposition, GateReason)>,
    debt: Option<(u64, Option<u64>)>,
}

impl LogLine<'_> {
    fn reviewed(self) -> Option<Reviewed> {
        let disposition = self.disposition.as_deref().and_then(word::<Disposition>);
        if self.target.as_deref() == Some(crate::core::DECISION_TARGET) {
            let is_route = self
                .endpoint
                .as_deref()
                .is_some_and(|e| ROUTER_ENDPOINTS.contains(&e));
            let decided = is_route
                .then_some(disposition.zip(self.attribution))
                .flatten();
            let gate_rule = (self.endpoint.as_deref() == Some("gate") && decided.is_none())
                .then(|| self.gate_rule())
                .flatten();
            return Some(Reviewed {
                week: self.timestamp.as_deref().and_then(week_of),
                decided,
                gate_rule,
                debt: self.debt_counted.map(|d| (d, self.debt_cap)),
            });
        }
        // A gate answer: no target, a decision id, a disposition, steps.
        let (None, Some(id), Some(_), Some(steps)) = (
            &self.target,
            &self.decision_id,
            &self.disposition,
            &self.steps,
        ) else {
            return None;
        };
        let routed = self.evidence.is_some();
        let attribution = routed
            .then_some(self.reason.as_deref())
            .flatten()
            .and_then(word::<Attribution>);
        let gate_rule = (!routed).then(|| self.gate_rule()).flatten();
        Some(Reviewed {
            week: week_of_decision_id(id),
            gate_rule,
            decided: disposition.zip(attribution),
            debt: steps
                .iter()
                .find(|s| s.step == "debt")
                .and_then(|s| Some((s.counted?, s.cap))),
        })
    }
}

impl LogLine<'_> {
    /// A gate rule's disposition and reason, in the gate's words.
    fn gate_rule(&self) -> Option<(GateDisposition, GateReason)> {
        let d = self
            .disposition
            .as_deref()
            .and_then(word::<GateDisposition>)?;
        let r = self.reason.as_deref().and_then(word::<GateReason>)?;
        Some((d, r))
    }
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
        .min(value(
            "reason",
            shortest(GateReason::VARIANTS.iter().map(|r| r.as_str())),
        ))
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
        by_reason: BTreeMap::new(),
        escalation_rate: None,
        inadmissible_share: None,
        warning: None,
        by_week: Vec::new(),
    };
    let mut inadmissible = 0u64;
    // Each week, and how many of its decisions escalated on inadmissible evidence.
    let mut weeks: BTreeMap<String, (ReviewWeek, u64)> = BTreeMap::new();
    let new_week = |w: &String| ReviewWeek {
        week: w.clone(),
        decisions: 0,
        by_disposition: BTreeMap::new(),
        by_attribution: BTreeMap::new(),
        by_reason: BTreeMap::new(),
        escalation_rate: None,
        inadmissible_share: None,
        freeze_debt: None,
        debt_cap: None,
    };
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
        let Some(l) = crate::core::json::read_log_line::<LogLine>(line).and_then(LogLine::reviewed)
        else {
            r.skipped_lines += 1;
            continue;
        };
        let week = l.week.and_then(|w| {
            if weeks.len() < MAX_REVIEW_WEEKS || weeks.contains_key(&w) {
                Some(weeks.entry(w).or_insert_with_key(|w| (new_week(w), 0)))
            } else {
                None
            }
        });
        let Some((d, a)) = l.decided else {
            // A gate rule's decision (issue 50): a decision, by its disposition and reason.
            if let Some((d, reason)) = l.gate_rule {
                r.decisions += 1;
                *r.by_disposition.entry(d.as_str().to_owned()).or_default() += 1;
                *r.by_reason.entry(reason.as_str().to_owned()).or_default() += 1;
                if let Some((w, _)) = week {
                    w.decisions += 1;
                    *w.by_disposition.entry(d.as_str().to_owned()).or_default() += 1;
                    *w.by_reason.entry(reason.as_str().to_owned()).or_default() += 1;
                    if let Some((debt, cap)) = l.debt {
                        (w.freeze_debt, w.debt_cap) = (Some(debt), cap);
                    }
                }
                continue;
            }
            // A quorum line the counts do not take still says the debt.
            if let (Some((w, _)), Some((debt, cap))) = (week, l.debt) {
                (w.freeze_debt, w.debt_cap) = (Some(debt), cap);
            }
            r.skipped_lines += 1;
            continue;
        };
        r.decisions += 1;
        let escalated_inadmissible =
            d == Disposition::Escalate && a == Attribution::InadmissibleEvidence;
        *r.by_disposition.entry(d.as_str().to_owned()).or_default() += 1;
        *r.by_attribution.entry(a.as_str().to_owned()).or_default() += 1;
        *r.by_reason.entry(a.as_str().to_owned()).or_default() += 1;
        if escalated_inadmissible {
            inadmissible += 1;
        }
        if let Some((w, inadmissible)) = week {
            w.decisions += 1;
            *w.by_disposition.entry(d.as_str().to_owned()).or_default() += 1;
            *w.by_attribution.entry(a.as_str().to_owned()).or_default() += 1;
            *w.by_reason.entry(a.as_str().to_owned()).or_default() += 1;
            *inadmissible += u64::from(escalated_inadmissible);
            if let Some((debt, cap)) = l.debt {
                (w.freeze_debt, w.debt_cap) = (Some(debt), cap);
            }
        }
    }
    if r.decisions == 0 {
        let mut errors = Errors::default();
        errors.push(
            "",
            format!(
                "no line is a decision ({} lines skipped): give the decision log (`patchgate serve` writes one JSON line per decision, target `patchgate::decision`), or kept gate answers, one per line",
                r.skipped_lines
            ),
        );
        return Err(errors);
    }
    r.by_week = weeks
        .into_values()
        .map(|(mut w, inadmissible)| {
            if w.decisions > 0 {
                let n = w.decisions as f64;
                let escalated = w.by_disposition.get("ESCALATE").copied().unwrap_or(0);
                w.escalation_rate = Some(escalated as f64 / n);
                w.inadmissible_share = Some(inadmissible as f64 / n);
            }
            w
        })
        .collect();
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

impl FixChanged {
    /// What a fix changed, from whether it touched production code and check files (`None`:
    /// it touched neither).
    pub fn of(production: bool, check: bool) -> Option<Self> {
        match (production, check) {
            (true, true) => Some(Self::Both),
            (true, false) => Some(Self::Production),
            (false, true) => Some(Self::Check),
            (false, false) => None,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CalibrationRow {
    /// The class: the router's attribution, or the gate's reason when a gate rule decided.
    pub attribution: GateReason,
    pub fix_files: Vec<RepoPath>,
    pub fix_changed: FixChanged,
    /// The decision the row came from, when it came from a log.
    pub decision_id: Option<String>,
}

/// Where a class points its reader: the code, or the check that spoke (the first article:
/// "the share of fixes that landed where the attribution pointed").
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema, IntoStaticStr, VariantArray,
)]
#[serde(rename_all = "lowercase")]
#[strum(serialize_all = "lowercase")]
pub enum Pointed {
    Production,
    Check,
}

/// Where each class points, written by hand from what the class says. `None`: the class names
/// both (`invariant-or-over-specified-property`: the invariant is broken, or the property says
/// too much; its split is its calibration), or neither (a conflict, a run modified mid-way,
/// a merge), so it has no hit rate.
pub fn points_to(class: GateReason) -> Option<Pointed> {
    use GateReason as R;
    match class {
        // A check caught the code: the code is what the patch must change.
        R::BehaviorAndInvariant | R::ConcreteBehavior | R::DoesNotBuild => {
            Some(Pointed::Production)
        }
        // The code itself asks whether it is under test, or bends a comparison or an input.
        R::TestAwareCode | R::EqualityOverload | R::TestInputInCode | R::UnreadCode => {
            Some(Pointed::Production)
        }
        // The check is what spoke: a frozen test, a gate that never ran or could not say, an
        // edited rule, a broken harness, fixtures that no longer match their seal.
        R::FrozenTestFailure
        | R::EvidenceGap
        | R::InadmissibleEvidence
        | R::GuardedInputEdited
        | R::HarnessError
        | R::SealMismatch
        | R::DebtOverCap => Some(Pointed::Check),
        R::InvariantOrOverSpecifiedProperty
        | R::CheckerNeutered
        | R::CheckerUnproven
        | R::BinaryAdded
        | R::MergeConflict
        | R::ModifiedDuringRun
        | R::AllGatesHeld => None,
    }
}

/// Most decision ids a calibration line lists (its `count` counts them all).
pub const MAX_DECISION_IDS: usize = 1000;

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
    /// Where the class points (null: it names both, or neither).
    #[serde(default)]
    pub points_to: Option<Pointed>,
    /// Share of fixes that changed what the class points at (alone or with the other); null
    /// when it points nowhere.
    #[serde(default)]
    pub hit_rate: Option<f64>,
    /// The decisions the rows came from (rows that name one), in the order given; the first
    /// 1,000.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub decision_ids: Vec<String>,
}

pub fn parse_calibration_row(v: &Value, at: &str, e: &mut Errors) -> Option<CalibrationRow> {
    let row = object(
        v,
        at,
        "a calibration row",
        &["attribution", "fix_files", "fix_changed", "decision_id"],
        e,
    )?;
    let attribution = row.req_enum::<GateReason>("attribution", e);
    let fix_files = row
        .required("fix_files", e)
        .and_then(|f| fields::paths(f, &row.pointer("fix_files"), false, e));
    let fix_changed = row.req_enum::<FixChanged>("fix_changed", e);
    let decision_id = row.opt_string("decision_id", 128, e);
    if decision_id.as_deref() == Some("") {
        e.push(
            row.pointer("decision_id"),
            "`decision_id` must not be empty",
        );
    }
    Some(CalibrationRow {
        attribution: attribution?,
        fix_files: fix_files?,
        fix_changed: fix_changed?,
        decision_id,
    })
}

/// The share of fixes by where they landed, per attribution class (in name order), and how
/// often they landed where the class pointed.
pub fn calibrate(rows: &[CalibrationRow]) -> Vec<CalibrationClass> {
    let mut by: BTreeMap<&str, ([u64; 3], GateReason, Vec<String>)> = BTreeMap::new();
    for r in rows {
        let (slot, _, ids) = by
            .entry(r.attribution.as_str())
            .or_insert_with(|| ([0; 3], r.attribution, Vec::new()));
        let i = match r.fix_changed {
            FixChanged::Production => 0,
            FixChanged::Check => 1,
            FixChanged::Both => 2,
        };
        if let Some(c) = slot.get_mut(i) {
            *c += 1;
        }
        if let Some(id) = &r.decision_id
            && ids.len() < MAX_DECISION_IDS
        {
            ids.push(id.clone());
        }
    }
    by.into_iter()
        .map(|(a, ([p, c, b], class, decision_ids))| {
            let n = (p + c + b) as f64;
            let points_to = points_to(class);
            let hits = match points_to {
                Some(Pointed::Production) => Some(p + b),
                Some(Pointed::Check) => Some(c + b),
                None => None,
            };
            CalibrationClass {
                attribution: a.to_owned(),
                count: p + c + b,
                production: p as f64 / n,
                check: c as f64 / n,
                both: b as f64 / n,
                points_to,
                hit_rate: hits.map(|h| h as f64 / n),
                decision_ids,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Mondays written by hand from a calendar.
    #[test]
    fn a_week_is_named_by_its_monday() {
        for (timestamp, monday) in [
            ("2026-12-02T14:20:00.123456Z", Some("2026-11-30")),
            ("2026-11-30T00:00:00Z", Some("2026-11-30")),
            ("2026-12-06T23:59:59Z", Some("2026-11-30")),
            ("2027-01-01T08:00:00Z", Some("2026-12-28")),
            ("2024-03-01T08:00:00Z", Some("2024-02-26")),
            ("2000-01-01T08:00:00Z", Some("1999-12-27")),
            ("1970-01-01T00:00:00Z", Some("1969-12-29")),
            ("2026-13-01T00:00:00Z", None),
            ("yesterday", None),
            ("", None),
        ] {
            assert_eq!(week_of(timestamp).as_deref(), monday, "{timestamp}");
        }
        // A UUIDv7's time: 0x01a239336800 ms is 2026-12-03T00:00:00Z, a Thursday.
        for (id, monday) in [
            ("01a23933-6800-7abc-8000-000000000000", Some("2026-11-30")),
            // Not a v7 id: no time in it.
            ("01a23933-6800-4abc-8000-000000000000", None),
            ("d1", None),
        ] {
            assert_eq!(week_of_decision_id(id).as_deref(), monday, "{id}");
        }
    }

    /// Two weeks, counted by hand: the first has a BLOCK and an ESCALATE on inadmissible
    /// evidence and a quorum line with the debt; the second a MERGE_OK whose gate line says
    /// the debt. A line without a timestamp counts in the totals only.
    #[test]
    fn the_review_counts_each_week() {
        let line = |ts: &str, endpoint: &str, rest: &str| {
            let ts = if ts.is_empty() {
                String::new()
            } else {
                format!(r#""timestamp":"{ts}","#)
            };
            format!(
                r#"{{{ts}"target":"patchgate::decision","endpoint":"{endpoint}","decision_id":"x",{rest}}}"#
            )
        };
        let log = [
            line("2026-11-24T10:00:00Z", "route", r#""disposition":"BLOCK","attribution":"concrete-behavior""#),
            line("2026-11-25T10:00:00Z", "route", r#""disposition":"ESCALATE","attribution":"inadmissible-evidence""#),
            line("2026-11-26T10:00:00Z", "quorum", r#""outcome":"promote","debt_counted":3,"debt_cap":5"#),
            line("2026-12-01T10:00:00Z", "gate", r#""disposition":"MERGE_OK","attribution":"all-gates-held","debt_counted":4,"debt_cap":5"#),
            line("", "route", r#""disposition":"MERGE_OK","attribution":"all-gates-held""#),
            // A gate rule's decision in the log (issue 50): a decision, by its reason.
            line("2026-12-02T10:00:00Z", "gate", r#""rule":"guard","disposition":"ESCALATE","reason":"guarded-input-edited""#),
            // A kept gate answer, on one line: its week from its UUIDv7 id (0x01a239336800 ms
            // is 2026-12-03T00:00:00Z, a Thursday), the router's reason as its attribution, the
            // debt from its debt step.
            r#"{"patch_id":"pr-9","disposition":"BLOCK","rule":"route","reason":"concrete-behavior","exit_code":1,"decision_id":"01a23933-6800-7000-8000-000000000000","evidence":{"property_check":"pass","fixture_check":"fail","flaky_freeze":"pass"},"steps":[{"step":"debt","open":5,"spent":0,"counted":5,"cap":5,"over_cap":false,"open_rows":[],"summary":"s"}]}"#.to_owned(),
            // A gate rule's answer: not the router's, a decision all the same (issue 50); its
            // debt counts.
            r#"{"disposition":"STOP_QUEUE","rule":"debt","reason":"debt-over-cap","exit_code":3,"decision_id":"01a23933-6800-7000-8000-000000000001","steps":[{"step":"debt","open":6,"spent":0,"counted":6,"cap":5,"over_cap":true,"open_rows":[],"summary":"s"}]}"#.to_owned(),
        ]
        .join("\n");
        let r = review(log.as_bytes()).expect("a review");
        assert_eq!((r.decisions, r.skipped_lines), (7, 1));
        assert_eq!(r.by_disposition["ESCALATE"], 2);
        assert_eq!(r.by_disposition["STOP_QUEUE"], 1);
        assert_eq!(r.by_reason["guarded-input-edited"], 1);
        assert_eq!(r.by_reason["debt-over-cap"], 1);
        assert_eq!(r.by_reason["concrete-behavior"], 2);
        assert!(!r.by_attribution.contains_key("debt-over-cap"));
        assert_eq!(r.escalation_rate, Some(2.0 / 7.0));
        type Week<'a> = (&'a str, u64, Option<f64>, Option<f64>, Option<u64>);
        let weeks: Vec<Week> = r
            .by_week
            .iter()
            .map(|w| {
                (
                    w.week.as_str(),
                    w.decisions,
                    w.escalation_rate,
                    w.inadmissible_share,
                    w.freeze_debt,
                )
            })
            .collect();
        assert_eq!(
            weeks,
            [
                ("2026-11-23", 2, Some(0.5), Some(0.5), Some(3)),
                ("2026-11-30", 4, Some(0.25), Some(0.0), Some(6)),
            ]
        );
        assert_eq!(r.by_week[0].by_disposition["BLOCK"], 1);
        assert_eq!(r.by_week[1].debt_cap, Some(5));
        assert_eq!(r.by_week[1].by_disposition["BLOCK"], 1);
    }
}
