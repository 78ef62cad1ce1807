//! Admission (CONTRACT.md section 10): a check earns its vote with a two-commit proof. It must
//! fail on a patch that deletes its invariant (the mutant) and pass on the unmodified tree (the
//! base), both on the same sealed fixtures. A check that still passes with its invariant deleted
//! is a tautology and stays out of the catalog.
//!
//! The six rules are data ([`RULES`]), first match wins, like the router's and the quorum's.
//! Runs are classified with section 2's model ([`runs::classify`]): only a catch is a
//! failure.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use utoipa::ToSchema;

use super::digest::Digest;
use super::fields::{Errors, MAX_ID_CHARS, object};
use super::rules;
use super::runs::{self, CatchCodes, RunOutcome, RunState, parse_runs, request_catch_codes};
use super::seal::parse_seal_digest;

crate::core::words! {
    /// What is being admitted: a catalog property, or a test of the fixture suite (whose proof is
    /// the freeze rule's "caught a seeded bug").
    pub enum CheckKind {
        Property,
        Test,
    }
}

impl CheckKind {
    pub fn as_str(self) -> &'static str {
        self.into()
    }
}

crate::core::words! {
    pub enum AdmitOutcome {
        /// The proof holds: the check may vote.
        Admitted,
        /// The check is wrong: it fails on the base, or passes with its invariant deleted.
        Rejected,
        /// No proof either way: a human must look (different fixtures, unstable runs, a broken
        /// harness).
        Inconclusive,
    }
}

impl AdmitOutcome {
    pub fn as_str(self) -> &'static str {
        self.into()
    }

    /// 0 admitted; 1 rejected; 2 inconclusive.
    pub fn exit_code(self) -> u8 {
        match self {
            AdmitOutcome::Admitted => 0,
            AdmitOutcome::Rejected => 1,
            AdmitOutcome::Inconclusive => 2,
        }
    }
}

crate::core::words! {
    "kebab-case";
    pub enum AdmitReason {
        /// The two trees' fixtures differ: the proof must hold on the same fixtures.
        SealDiffers,
        /// The check fails on the unmodified tree.
        FailsOnBase,
        /// The base runs disagree.
        UnstableOnBase,
        /// Every run of one side ended the same way but not with a pass or a catch (pytest's 5,
        /// "no tests collected"), or every run was killed.
        HarnessError,
        /// It passes with the invariant deleted.
        Tautology,
        /// The mutant runs disagree.
        UnstableOnMutant,
        /// Passes on the base, fails on the mutant, same fixtures.
        TwoCommitProof,
    }
}

impl AdmitReason {
    pub fn as_str(self) -> &'static str {
        self.into()
    }
}

/// What the rules read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AdmitFacts {
    pub seal_matches: bool,
    pub base: RunState,
    pub mutant: RunState,
}

/// One admission rule: its (outcome, reason). Rules 3 and 5 have two rows each.
pub type AdmitRule = rules::Rule<AdmitFacts, (AdmitOutcome, AdmitReason)>;

/// The admission table (CONTRACT.md section 10). Ordered, first match wins.
pub const RULES: [AdmitRule; 8] = [
    rules::rule(
        1,
        |f| !f.seal_matches,
        (AdmitOutcome::Inconclusive, AdmitReason::SealDiffers),
    ),
    rules::rule(
        2,
        |f| f.base == RunState::Fail,
        (AdmitOutcome::Rejected, AdmitReason::FailsOnBase),
    ),
    rules::rule(
        3,
        |f| f.base == RunState::Flake,
        (AdmitOutcome::Inconclusive, AdmitReason::UnstableOnBase),
    ),
    rules::rule(
        3,
        |f| f.base == RunState::Error,
        (AdmitOutcome::Inconclusive, AdmitReason::HarnessError),
    ),
    rules::rule(
        4,
        |f| f.mutant == RunState::Pass,
        (AdmitOutcome::Rejected, AdmitReason::Tautology),
    ),
    rules::rule(
        5,
        |f| f.mutant == RunState::Flake,
        (AdmitOutcome::Inconclusive, AdmitReason::UnstableOnMutant),
    ),
    rules::rule(
        5,
        |f| f.mutant == RunState::Error,
        (AdmitOutcome::Inconclusive, AdmitReason::HarnessError),
    ),
    rules::rule(
        6,
        |f| f.base == RunState::Pass && f.mutant == RunState::Fail,
        (AdmitOutcome::Admitted, AdmitReason::TwoCommitProof),
    ),
];

/// The first rule that matches: (outcome, reason, rule). Rule 6 matches whatever rules 1-5
/// leave (runs are never empty); were it ever not to, this fails closed as inconclusive.
pub fn first_rule(facts: &AdmitFacts) -> (AdmitOutcome, AdmitReason, u8) {
    rules::first_match(&RULES, facts, 1).map_or(
        (AdmitOutcome::Inconclusive, AdmitReason::HarnessError, 6),
        |r| (r.then.0, r.then.1, r.number),
    )
}

/// The fixtures seal of each tree.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TreeSeals {
    pub base: Digest,
    pub mutant: Digest,
}

/// A validated `/admit` request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AdmitRequest {
    pub check_id: String,
    pub kind: CheckKind,
    pub seal: TreeSeals,
    pub base_runs: Vec<RunOutcome>,
    pub mutant_runs: Vec<RunOutcome>,
    pub catch_exit_codes: CatchCodes,
    /// The mutant's commit id, or a label for it.
    pub mutant: String,
    /// The digest of the check's source on the base (64 hex digits), when the caller gives
    /// it: recorded, so a later change to the source is seen (issue 50).
    pub source: Option<String>,
}

/// What admission writes into the catalog row as `admitted`: the proof, so a reader can see
/// what the check was proven against.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct AdmissionRecord {
    /// The fixtures seal both trees had (64 hex digits).
    pub seal: String,
    /// The mutant's commit id or label.
    pub mutant: String,
    pub base_runs: Vec<RunOutcome>,
    pub mutant_runs: Vec<RunOutcome>,
    /// The digest of the property's source (its catalog `source` files on the base, as git
    /// lists them) when it was proven: a row whose source changed since votes as unadmitted
    /// until admitted again (issue 50). Absent in records written before.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false, min_length = 64, max_length = 64)]
    pub source: Option<String>,
}

/// The decision.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AdmitDecision {
    pub facts: AdmitFacts,
    pub outcome: AdmitOutcome,
    pub reason: AdmitReason,
    pub rule: u8,
}

/// Decides. Pure and deterministic.
pub fn decide(request: &AdmitRequest) -> AdmitDecision {
    let facts = AdmitFacts {
        seal_matches: request.seal.base == request.seal.mutant,
        base: runs::classify(&request.base_runs, &request.catch_exit_codes),
        mutant: runs::classify(&request.mutant_runs, &request.catch_exit_codes),
    };
    let (outcome, reason, rule) = first_rule(&facts);
    AdmitDecision {
        facts,
        outcome,
        reason,
        rule,
    }
}

/// The two seals as answered.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct TreeSealsAnswer {
    pub base: String,
    pub mutant: String,
    #[serde(rename = "match")]
    pub matches: bool,
}

/// The `/admit` answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct AdmitAnswer {
    pub check_id: String,
    pub kind: CheckKind,
    /// The mutant's commit id or label, as sent.
    pub mutant: String,
    pub outcome: AdmitOutcome,
    pub reason: AdmitReason,
    /// The row of the admission table that matched (1-6).
    pub rule: u8,
    /// 0 admitted; 1 rejected; 2 inconclusive.
    pub exit_code: u8,
    pub decision_id: String,
    /// The base runs, classified with section 2's model.
    pub base_state: RunState,
    /// The mutant runs, classified the same way.
    pub mutant_state: RunState,
    pub seal: TreeSealsAnswer,
    /// On admission only: the object to commit into the catalog row as `admitted`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub record: Option<AdmissionRecord>,
}

impl AdmitDecision {
    pub fn answer(&self, request: &AdmitRequest, decision_id: String) -> AdmitAnswer {
        let record = (self.outcome == AdmitOutcome::Admitted).then(|| AdmissionRecord {
            seal: request.seal.base.to_hex(),
            mutant: request.mutant.clone(),
            base_runs: request.base_runs.clone(),
            mutant_runs: request.mutant_runs.clone(),
            source: request.source.clone(),
        });
        AdmitAnswer {
            check_id: request.check_id.clone(),
            kind: request.kind,
            mutant: request.mutant.clone(),
            outcome: self.outcome,
            reason: self.reason,
            rule: self.rule,
            exit_code: self.outcome.exit_code(),
            decision_id,
            base_state: self.facts.base,
            mutant_state: self.facts.mutant,
            seal: TreeSealsAnswer {
                base: request.seal.base.to_hex(),
                mutant: request.seal.mutant.to_hex(),
                matches: self.facts.seal_matches,
            },
            record,
        }
    }
}

impl super::decision::Decision for AdmitDecision {
    const ENDPOINT: &'static str = "admit";
    type Request = AdmitRequest;
    type Answer = AdmitAnswer;

    fn parse(body: &[u8]) -> Result<AdmitRequest, super::problem::Problem> {
        super::decision::json_body(body, parse_request)
    }

    fn decide(request: &AdmitRequest, _: &super::decision::Defaults) -> Self {
        decide(request)
    }

    fn exit_code(&self) -> u8 {
        self.outcome.exit_code()
    }

    fn label(&self) -> &'static str {
        self.outcome.as_str()
    }

    fn log_fields<'a>(&'a self, request: &'a AdmitRequest) -> super::decision::LogFields<'a> {
        use super::decision::{Field, log_key};
        super::decision::LogFields::of([
            (log_key!("check_id"), Field::Str(&request.check_id)),
            (log_key!("kind"), Field::Plain(request.kind.as_str())),
            (log_key!("mutant"), Field::Str(&request.mutant)),
            (log_key!("outcome"), Field::Plain(self.outcome.as_str())),
            (log_key!("reason"), Field::Plain(self.reason.as_str())),
            (log_key!("rule"), u64::from(self.rule).into()),
            (log_key!("exit_code"), self.outcome.exit_code().into()),
            (
                log_key!("base_state"),
                Field::Plain(self.facts.base.as_str()),
            ),
            (
                log_key!("mutant_state"),
                Field::Plain(self.facts.mutant.as_str()),
            ),
            (log_key!("seal_match"), self.facts.seal_matches.into()),
        ])
    }

    fn answer(&self, request: &AdmitRequest, decision_id: String) -> AdmitAnswer {
        AdmitDecision::answer(self, request, decision_id)
    }

    fn answer_exit_code(answer: &AdmitAnswer) -> u8 {
        answer.exit_code
    }

    fn line(answer: &AdmitAnswer) -> String {
        format!(
            "{} reason={} {}={} base={} mutant={}\n",
            answer.outcome.as_str(),
            answer.reason.as_str(),
            answer.kind.as_str(),
            answer.check_id,
            answer.base_state.as_str(),
            answer.mutant_state.as_str()
        )
    }
}

// ---------------------------------------------------------------------------------------------
// Validation

/// The fields of a request body.
pub const REQUEST_FIELDS: [&str; 8] = [
    "check_id",
    "kind",
    "seal",
    "base_runs",
    "mutant_runs",
    "catch_exit_codes",
    "mutant",
    "source",
];
/// The fields of an admission record.
pub const RECORD_FIELDS: [&str; 5] = ["seal", "mutant", "base_runs", "mutant_runs", "source"];

/// An optional source digest at `key`: 64 hex digits.
fn source_digest(
    obj: &crate::core::fields::Obj<'_>,
    key: &str,
    e: &mut Errors,
) -> Option<Option<String>> {
    match obj.get(key) {
        None => Some(None),
        Some(_) => parse_seal_digest(obj, key, e).map(|d| Some(d.to_hex())),
    }
}

/// Validates a `/admit` document, reporting every invalid field.
pub fn parse_request(value: &Value) -> Result<AdmitRequest, Errors> {
    let mut e = Errors::default();
    let Some(doc) = object(value, "", "the admission request", &REQUEST_FIELDS, &mut e) else {
        return Err(e);
    };
    let check_id = doc.req_string("check_id", MAX_ID_CHARS, &mut e);
    let kind = doc.req_enum::<CheckKind>("kind", &mut e);
    let seal = doc.required("seal", &mut e).and_then(|v| {
        let seal = object(v, "/seal", "the seal", &["base", "mutant"], &mut e)?;
        let base = parse_seal_digest(&seal, "base", &mut e);
        let mutant = parse_seal_digest(&seal, "mutant", &mut e);
        Some(TreeSeals {
            base: base?,
            mutant: mutant?,
        })
    });
    let mut runs = |key: &str| {
        doc.required(key, &mut e)
            .and_then(|v| parse_runs(v, &doc.pointer(key), &format!("`{key}`"), &mut e))
    };
    let base_runs = runs("base_runs");
    let mutant_runs = runs("mutant_runs");
    let catch_exit_codes = request_catch_codes(&doc, &mut e);
    let mutant = doc.req_string("mutant", MAX_ID_CHARS, &mut e);
    let source = source_digest(&doc, "source", &mut e);
    match (
        check_id,
        kind,
        seal,
        base_runs,
        mutant_runs,
        mutant,
        catch_exit_codes,
    ) {
        (
            Some(check_id),
            Some(kind),
            Some(seal),
            Some(base_runs),
            Some(mutant_runs),
            Some(mutant),
            Some(catch_exit_codes),
        ) if e.is_empty() => Ok(AdmitRequest {
            check_id,
            kind,
            seal,
            base_runs,
            mutant_runs,
            catch_exit_codes,
            mutant,
            source: source.flatten(),
        }),
        _ => Err(e),
    }
}

/// Validates a catalog row's `admitted` record at `at`: its shape, and that it is a proof (its
/// runs, read with `catch`, pass on the base and fail on the mutant). A record that proves
/// nothing is refused rather than trusted: nothing given is silently reinterpreted.
pub fn parse_record(
    v: &Value,
    at: &str,
    catch: Option<&CatchCodes>,
    e: &mut Errors,
) -> Option<AdmissionRecord> {
    let row = object(v, at, "an admission record", &RECORD_FIELDS, e)?;
    let seal = parse_seal_digest(&row, "seal", e);
    let mutant = row.req_string("mutant", MAX_ID_CHARS, e);
    let base_runs = row
        .required("base_runs", e)
        .and_then(|r| parse_runs(r, &row.pointer("base_runs"), "`base_runs`", e));
    let mutant_runs = row
        .required("mutant_runs", e)
        .and_then(|r| parse_runs(r, &row.pointer("mutant_runs"), "`mutant_runs`", e));
    let source = source_digest(&row, "source", e);
    let (seal, mutant, base_runs, mutant_runs, source) =
        (seal?, mutant?, base_runs?, mutant_runs?, source?);
    // The request's catch codes are invalid (reported there): no proof can be read.
    let catch = catch?;
    let facts = AdmitFacts {
        seal_matches: true,
        base: runs::classify(&base_runs, catch),
        mutant: runs::classify(&mutant_runs, catch),
    };
    let (outcome, reason, _) = first_rule(&facts);
    if outcome != AdmitOutcome::Admitted {
        e.push(
            at,
            format!(
                "this record is not a two-commit proof: its runs are {} on the base and {} on the mutant ({}); run `patchgate admit` again",
                facts.base.as_str(),
                facts.mutant.as_str(),
                reason.as_str()
            ),
        );
        return None;
    }
    Some(AdmissionRecord {
        seal: seal.to_hex(),
        mutant,
        base_runs,
        mutant_runs,
        source,
    })
}

#[cfg(test)]
mod tests {
    fn codes(c: &[u8]) -> CatchCodes {
        CatchCodes::new(c.iter().copied()).unwrap_or_else(|e| panic!("{e}"))
    }

    use super::*;

    /// CONTRACT.md section 10's table, by hand: (base runs, mutant runs, same seal) → outcome,
    /// reason, rule, exit.
    #[test]
    fn the_table_by_hand() {
        use AdmitOutcome::*;
        use AdmitReason::*;
        type Row<'a> = (
            &'a [Option<u8>],
            &'a [Option<u8>],
            bool,
            AdmitOutcome,
            AdmitReason,
            u8,
            u8,
        );
        let (p, f, flake, five, killed) = (
            &[Some(0), Some(0)][..],
            &[Some(1), Some(1)][..],
            &[Some(0), Some(1)][..],
            &[Some(5), Some(5)][..],
            &[None, None][..],
        );
        let rows: [Row; 12] = [
            // 1: different fixtures beat everything, even a perfect proof.
            (p, f, false, Inconclusive, SealDiffers, 1, 2),
            (f, p, false, Inconclusive, SealDiffers, 1, 2),
            // 2: fails on the base, whatever the mutant did.
            (f, f, true, Rejected, FailsOnBase, 2, 1),
            (f, p, true, Rejected, FailsOnBase, 2, 1),
            // 3.
            (flake, f, true, Inconclusive, UnstableOnBase, 3, 2),
            (five, f, true, Inconclusive, HarnessError, 3, 2),
            (killed, p, true, Inconclusive, HarnessError, 3, 2),
            // 4: the invariant deleted and it still passes.
            (p, p, true, Rejected, Tautology, 4, 1),
            // 5.
            (p, flake, true, Inconclusive, UnstableOnMutant, 5, 2),
            (p, five, true, Inconclusive, HarnessError, 5, 2),
            (p, killed, true, Inconclusive, HarnessError, 5, 2),
            // 6.
            (p, f, true, Admitted, TwoCommitProof, 6, 0),
        ];
        let a = Digest::parse_hex(&"a".repeat(64)).unwrap();
        let b = Digest::parse_hex(&"b".repeat(64)).unwrap();
        for (base, mutant, same, outcome, reason, rule, exit) in rows {
            let request = AdmitRequest {
                check_id: "order".into(),
                kind: CheckKind::Property,
                seal: TreeSeals {
                    base: a,
                    mutant: if same { a } else { b },
                },
                base_runs: base.to_vec(),
                mutant_runs: mutant.to_vec(),
                catch_exit_codes: CatchCodes::default(),
                mutant: "deadbeef".into(),
                source: None,
            };
            let d = decide(&request);
            let case = format!("{base:?} / {mutant:?} same seal {same}");
            assert_eq!(
                (d.outcome, d.reason, d.rule),
                (outcome, reason, rule),
                "{case}"
            );
            let answer = d.answer(&request, "id".into());
            assert_eq!(answer.exit_code, exit, "{case}");
            assert_eq!(answer.record.is_some(), outcome == Admitted, "{case}");
        }
    }

    #[test]
    fn a_record_that_proves_nothing_is_refused() {
        let seal = "c".repeat(64);
        let ok = serde_json::json!({"seal": seal, "mutant": "m1", "base_runs": [0, 0], "mutant_runs": [101, 101]});
        let mut e = Errors::default();
        assert!(
            parse_record(&ok, "/a", Some(&codes(&[101])), &mut e).is_some(),
            "{e:?}"
        );
        // Read with pytest's catch code, 101 is not a catch: the record proves nothing.
        let mut e = Errors::default();
        assert!(parse_record(&ok, "/a", Some(&codes(&[1])), &mut e).is_none());
        assert!(format!("{e:?}").contains("harness-error"), "{e:?}");
        // Invalid catch codes are reported where they stand, not once more per record.
        let mut e = Errors::default();
        assert!(parse_record(&ok, "/a", None, &mut e).is_none());
        assert!(e.is_empty(), "{e:?}");
        let tautology = serde_json::json!({"seal": seal, "mutant": "m1", "base_runs": [0, 0], "mutant_runs": [0, 0]});
        let mut e = Errors::default();
        assert!(parse_record(&tautology, "/a", Some(&codes(&[1])), &mut e).is_none());
        assert!(format!("{e:?}").contains("tautology"), "{e:?}");
    }
}
