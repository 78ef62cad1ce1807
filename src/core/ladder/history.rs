//! Calibration from history (the first article, steps 4 and 6): every BLOCK or ESCALATE
//! decision followed to the later MERGE_OK of the same patch, so the fix is the commits
//! between the two heads. Pure: the CLI reads the log and asks git; this pairs and counts.

use std::borrow::Cow;

use super::*;
use crate::core::gate::{GateDisposition, GateReason};

/// One decision as calibration reads it back: a decision-log line, or a kept answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Decided {
    pub decision_id: String,
    pub patch_id: Option<String>,
    pub disposition: GateDisposition,
    /// The router's attribution, else the gate's reason.
    pub class: GateReason,
    /// The commits judged (a gate decision has them; a `/route` one does not).
    pub head: Option<String>,
    pub base: Option<String>,
}

/// What a decision-log line or an answer holds that calibration reads; any other field is
/// skipped unread.
#[derive(Deserialize)]
struct Record<'a> {
    #[serde(borrow, default)]
    target: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    endpoint: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    decision_id: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    patch_id: Option<Cow<'a, str>>,
    #[serde(default)]
    disposition: Option<GateDisposition>,
    #[serde(default)]
    attribution: Option<GateReason>,
    #[serde(default)]
    reason: Option<GateReason>,
    #[serde(borrow, default)]
    head: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    base: Option<Cow<'a, str>>,
    /// A gate answer's `judged` (an answer, not a log line).
    #[serde(borrow, default)]
    judged: Option<Judged<'a>>,
}

#[derive(Deserialize)]
struct Judged<'a> {
    #[serde(borrow)]
    base: Cow<'a, str>,
    #[serde(borrow)]
    head: Cow<'a, str>,
}

impl Record<'_> {
    /// The decision, when the record is one with every field calibration needs, each a word
    /// of ours or a commit id (so the tables stay as small as the vocabulary).
    fn decided(self) -> Option<Decided> {
        let (head, base) = match self.judged {
            Some(j) => (Some(j.head), Some(j.base)),
            None => (self.head, self.base),
        };
        let commit = |c: Option<Cow<'_, str>>| match c {
            None => Some(None),
            Some(c) => fields::is_object_id(&c).then(|| Some(c.into_owned())),
        };
        let decision_id = self
            .decision_id
            .filter(|d| !d.is_empty() && d.len() <= 128)?;
        Some(Decided {
            decision_id: decision_id.into_owned(),
            patch_id: self
                .patch_id
                .filter(|p| !p.is_empty() && p.chars().count() <= 256)
                .map(Cow::into_owned),
            disposition: self.disposition?,
            class: self.attribution.or(self.reason)?,
            head: commit(head)?,
            base: commit(base)?,
        })
    }
}

/// The decision of one decision-log line (NDJSON as `patchgate serve` and `patchgate gate
/// --decision-log` write it): `None` for a line that is not a router or gate decision.
pub fn decided_from_log_line(line: &[u8]) -> Option<Decided> {
    let r = crate::core::json::read_log_line::<Record>(line)?;
    let ours = r.target.as_deref() == Some(crate::core::DECISION_TARGET)
        && r.endpoint
            .as_deref()
            .is_some_and(|e| ROUTER_ENDPOINTS.contains(&e));
    if !ours {
        return None;
    }
    r.decided()
}

/// The decision of one kept answer (`patchgate gate --json-out`, or a `/route` answer):
/// `None` when the document is not one.
pub fn decided_from_answer(document: &[u8]) -> Option<Decided> {
    let r = crate::core::json::read_log_line::<Record>(document)?;
    r.decided()
}

crate::core::words! {
    "kebab-case";
    /// Why a BLOCK or ESCALATE decision gives no calibration row: counted, never guessed.
    pub enum NotCalibrated {
        /// No later MERGE_OK of the same patch: it was abandoned, or is still open.
        NeverMerged,
        /// The decision names no patch, so no later decision is the same patch's.
        NoPatchId,
        /// The decision, or the merge, names no commit (a `/route` decision): git has nothing to
        /// follow.
        NoCommits,
        /// The same head merged later: nothing was fixed (a re-run, a changed base).
        MergedUnchanged,
        /// The commits are not in this repository (another clone, a force-push that was
        /// collected).
        CommitsNotFound,
        /// The commits between the heads change no file of the patch's own.
        NoFixFiles,
    }
}

impl NotCalibrated {
    pub fn as_str(self) -> &'static str {
        self.into()
    }
}

/// What became of one BLOCK or ESCALATE decision.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Followed<'a> {
    /// Merged later at another head: the fix is the commits from `blocked.head` to
    /// `merged.head` (not those the merge's base brought).
    Fixed {
        blocked: &'a Decided,
        merged: &'a Decided,
    },
    Not(&'a Decided, NotCalibrated),
}

/// Follows every BLOCK and ESCALATE decision (in log order) to the first later MERGE_OK of the
/// same patch. STOP_QUEUE stops the queue, not the patch, and is not followed. Linear: one
/// pass from the end keeps each patch's next merge.
pub fn follow(decisions: &[Decided]) -> Vec<Followed<'_>> {
    let mut next_merge: BTreeMap<&str, &Decided> = BTreeMap::new();
    let mut out = Vec::new();
    for d in decisions.iter().rev() {
        let Some(patch) = d.patch_id.as_deref() else {
            if matches!(
                d.disposition,
                GateDisposition::Block | GateDisposition::Escalate
            ) {
                out.push(Followed::Not(d, NotCalibrated::NoPatchId));
            }
            continue;
        };
        match d.disposition {
            GateDisposition::MergeOk => {
                next_merge.insert(patch, d);
            }
            GateDisposition::StopQueue => {}
            GateDisposition::Block | GateDisposition::Escalate => {
                out.push(match next_merge.get(patch) {
                    None => Followed::Not(d, NotCalibrated::NeverMerged),
                    Some(m) => match (&d.head, &m.head) {
                        (Some(from), Some(to)) if from == to => {
                            Followed::Not(d, NotCalibrated::MergedUnchanged)
                        }
                        (Some(_), Some(_)) => Followed::Fixed {
                            blocked: d,
                            merged: m,
                        },
                        _ => Followed::Not(d, NotCalibrated::NoCommits),
                    },
                });
            }
        }
    }
    out.reverse();
    out
}

/// One reason decisions were not calibrated, with how many and which.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct NotCalibratedCount {
    pub why: NotCalibrated,
    pub count: u64,
    /// The first 1,000, in log order.
    pub decision_ids: Vec<String>,
}

/// The calibration of a decision log against git.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct HistoryCalibration {
    /// BLOCK and ESCALATE decisions read.
    pub decisions: u64,
    /// Of them, followed to a fix (the rows of `classes`).
    pub calibrated: u64,
    /// Per class, as `POST /calibrate` answers for the rows.
    pub classes: Vec<CalibrationClass>,
    /// The others, per reason, in the reason order.
    pub not_calibrated: Vec<NotCalibratedCount>,
    /// Lines (or files) that are not router or gate decisions.
    pub skipped: u64,
}

/// The whole answer: the table (computed here, or by a server from the same rows) and the
/// decisions that gave no row.
pub fn history_calibration(
    classes: Vec<CalibrationClass>,
    calibrated: u64,
    not: &[(&Decided, NotCalibrated)],
    skipped: u64,
) -> HistoryCalibration {
    let mut by: BTreeMap<NotCalibrated, NotCalibratedCount> = BTreeMap::new();
    for (d, why) in not {
        let c = by.entry(*why).or_insert_with(|| NotCalibratedCount {
            why: *why,
            count: 0,
            decision_ids: Vec::new(),
        });
        c.count += 1;
        if c.decision_ids.len() < MAX_DECISION_IDS {
            c.decision_ids.push(d.decision_id.clone());
        }
    }
    HistoryCalibration {
        decisions: calibrated + not.len() as u64,
        calibrated,
        classes,
        not_calibrated: by.into_values().collect(),
        skipped,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn d(
        id: &str,
        patch: Option<&str>,
        disposition: GateDisposition,
        head: Option<&str>,
    ) -> Decided {
        Decided {
            decision_id: id.into(),
            patch_id: patch.map(Into::into),
            disposition,
            class: GateReason::ConcreteBehavior,
            head: head.map(|h| h.repeat(40)),
            base: None,
        }
    }

    /// Written by hand: which decisions reach which merge, and why the others do not.
    #[test]
    fn each_block_or_escalation_is_followed_to_its_patch_s_next_merge() {
        use GateDisposition::*;
        let log = [
            d("1", Some("pr-1"), Block, Some("a")),
            d("2", Some("pr-2"), Escalate, Some("b")),
            d("3", Some("pr-1"), Escalate, Some("c")),
            d("4", Some("pr-1"), MergeOk, Some("d")),
            d("5", Some("pr-2"), MergeOk, Some("b")),
            d("6", Some("pr-3"), Block, Some("e")),
            d("7", None, Block, Some("f")),
            d("8", Some("pr-4"), Block, None),
            d("9", Some("pr-4"), MergeOk, Some("g")),
            d("10", Some("pr-1"), Block, Some("h")),
            d("11", Some("pr-5"), StopQueue, Some("i")),
        ];
        let got: Vec<(String, Result<String, NotCalibrated>)> = follow(&log)
            .into_iter()
            .map(|f| match f {
                Followed::Fixed { blocked, merged } => {
                    (blocked.decision_id.clone(), Ok(merged.decision_id.clone()))
                }
                Followed::Not(d, why) => (d.decision_id.clone(), Err(why)),
            })
            .collect();
        let want: Vec<(String, Result<String, NotCalibrated>)> = [
            ("1", Ok("4")),
            ("2", Err(NotCalibrated::MergedUnchanged)),
            ("3", Ok("4")),
            ("6", Err(NotCalibrated::NeverMerged)),
            ("7", Err(NotCalibrated::NoPatchId)),
            ("8", Err(NotCalibrated::NoCommits)),
            // After pr-1's merge: nothing merged it again.
            ("10", Err(NotCalibrated::NeverMerged)),
        ]
        .into_iter()
        .map(|(a, b)| (a.to_owned(), b.map(str::to_owned)))
        .collect();
        assert_eq!(got, want);
    }

    #[test]
    fn a_record_is_read_only_with_our_words_and_commit_ids() {
        let sha = "a".repeat(40);
        let gate = format!(
            r#"{{"target":"patchgate::decision","endpoint":"gate","decision_id":"x","patch_id":"pr-1","disposition":"ESCALATE","reason":"test-aware-code","head":"{sha}","base":"{sha}"}}"#
        );
        let got = decided_from_log_line(gate.as_bytes()).expect("a gate decision");
        assert_eq!(got.class, GateReason::TestAwareCode);
        assert_eq!(got.head.as_deref(), Some(sha.as_str()));
        // The router's attribution is the class when there is one.
        let route = r#"{"target":"patchgate::decision","endpoint":"route","decision_id":"y","disposition":"BLOCK","attribution":"concrete-behavior"}"#;
        assert_eq!(
            decided_from_log_line(route.as_bytes()).map(|d| d.class),
            Some(GateReason::ConcreteBehavior)
        );
        for not in [
            // Another endpoint's decision, another target, a head that is not a commit, a
            // word that is not ours, no decision id.
            r#"{"target":"patchgate::decision","endpoint":"quorum","decision_id":"y","disposition":"BLOCK","attribution":"concrete-behavior"}"#.to_owned(),
            r#"{"target":"other","endpoint":"route","decision_id":"y","disposition":"BLOCK","attribution":"concrete-behavior"}"#.to_owned(),
            gate.replace(&sha, "HEAD"),
            gate.replace("test-aware-code", "made-up"),
            gate.replace(r#""decision_id":"x","#, ""),
        ] {
            assert_eq!(decided_from_log_line(not.as_bytes()), None, "{not}");
        }
        // A kept gate answer names its commits under `judged`.
        let answer = format!(
            r#"{{"patch_id":"pr-1","disposition":"BLOCK","rule":"route","reason":"concrete-behavior","decision_id":"z","judged":{{"base":"{sha}","head":"{sha}","tree":"{sha}"}},"steps":[]}}"#
        );
        let got = decided_from_answer(answer.as_bytes()).expect("an answer");
        assert_eq!((got.head.is_some(), got.base.is_some()), (true, true));
    }

    /// A hand count: three fixes of concrete-behavior (production, production, check: 2 of 3
    /// where it points), one of the both-naming class (no hit rate), one of a check class
    /// that changed both (a hit).
    #[test]
    fn the_hit_rate_is_the_share_of_fixes_where_the_class_points() {
        let row = |a: GateReason, c: FixChanged, id: &str| CalibrationRow {
            attribution: a,
            fix_files: vec![],
            fix_changed: c,
            decision_id: Some(id.into()),
        };
        use FixChanged::*;
        use GateReason as R;
        let rows = [
            row(R::ConcreteBehavior, Production, "1"),
            row(R::ConcreteBehavior, Check, "2"),
            row(R::InvariantOrOverSpecifiedProperty, Check, "3"),
            row(R::ConcreteBehavior, Production, "4"),
            row(R::GuardedInputEdited, Both, "5"),
        ];
        type Line = (String, u64, Option<Pointed>, Option<f64>, Vec<String>);
        let got: Vec<Line> = calibrate(&rows)
            .into_iter()
            .map(|c| {
                (
                    c.attribution,
                    c.count,
                    c.points_to,
                    c.hit_rate,
                    c.decision_ids,
                )
            })
            .collect();
        let ids = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(
            got,
            vec![
                (
                    "concrete-behavior".into(),
                    3,
                    Some(Pointed::Production),
                    Some(2.0 / 3.0),
                    ids(&["1", "2", "4"])
                ),
                (
                    "guarded-input-edited".into(),
                    1,
                    Some(Pointed::Check),
                    Some(1.0),
                    ids(&["5"])
                ),
                (
                    "invariant-or-over-specified-property".into(),
                    1,
                    None,
                    None,
                    ids(&["3"])
                ),
            ]
        );
    }
}
