//! The strong-property quorum on sealed fixtures (CONTRACT.md section 2).
//!
//! A patch merges only when every strong property in its locality passes twice on sealed
//! fixtures. A frozen property is *excluded*, never passed; an empty strong quorum is a
//! rejection; too many open freezes stop the whole queue. The seven outcome rules are data
//! ([`RULES`]), first match wins, like the router's ladder.

use std::collections::{HashMap, HashSet};

use serde::{Deserialize, Serialize};
use serde_json::Value;
use utoipa::ToSchema;

use super::catalog::{CatalogKind, Property, Strength, parse_catalog};
use super::fields::{self, Errors, MAX_ID_CHARS, object};
use super::freeze_ledger::{Debt, FreezeRow, LedgerState, debt, parse_ledger};
use super::path::{PrefixTrie, RepoPath};
use super::rules;
use super::runs::{CatchCodes, RunOutcome, RunState, classify, parse_results, request_catch_codes};
use super::seal::{SealCheck, SealCheckAnswer, parse_seal};

/// A validated `/quorum` request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QuorumRequest {
    pub patch_id: Option<String>,
    pub changed_files: Vec<RepoPath>,
    pub catalog: Vec<Property>,
    /// Runs by property id (ids are known catalog ids): an exit code, or `None` for a run
    /// killed by its timeout or a signal.
    pub results: HashMap<String, Vec<RunOutcome>>,
    /// The exit codes that are a catch (a stable failure); never 0.
    pub catch_exit_codes: CatchCodes,
    pub ledger: Vec<FreezeRow>,
    pub seal: SealCheck,
    /// `None`: the server's (or CLI's) default.
    pub debt_cap: Option<u64>,
    /// A strong row without an `admitted` proof votes as weak (CONTRACT.md section 10).
    pub require_admission: bool,
}

crate::core::words! {
    "kebab-case";
    /// How a property takes part in this patch's quorum.
    pub enum Vote {
        /// Votes, and passed.
        Yes,
        /// Votes, and did not pass.
        No,
        /// Frozen (an open ledger row): left out of the vote. Never reported as passed.
        Excluded,
        /// Added by this patch: may not vote on it.
        Introduced,
        /// Observes none of the changed files.
        NotInLocality,
    }
}

impl Vote {
    pub fn as_str(self) -> &'static str {
        self.into()
    }
}

/// One catalog property as this decision saw it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct PropertyReport {
    pub id: String,
    /// The catalog's strength.
    pub strength: Strength,
    pub in_locality: bool,
    pub state: RunState,
    pub vote: Vote,
    /// A strong row without an admission proof while admission is required: it votes as
    /// weak (it may reject, it never fills the quorum). Present only then.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub unproven: bool,
}

crate::core::words! {
    "snake_case";
    pub enum Outcome {
        Promote,
        Reject,
        Hold,
        FixtureFault,
        StopQueue,
    }
}

impl Outcome {
    pub fn as_str(self) -> &'static str {
        self.into()
    }

    /// 0 go; 1 the patch is wrong; 2 a human must look; 3 the queue is stopped.
    pub fn exit_code(self) -> u8 {
        match self {
            Outcome::Promote => 0,
            Outcome::Reject => 1,
            Outcome::Hold | Outcome::FixtureFault => 2,
            Outcome::StopQueue => 3,
        }
    }
}

crate::core::words! {
    "kebab-case";
    pub enum Reason {
        SealMismatch,
        DebtOverCap,
        SelfIntroducedPredicate,
        EmptyQuorum,
        StableFailure,
        SplitExits,
        HarnessError,
        MissingResults,
        QuorumHeld,
    }
}

impl Reason {
    pub fn as_str(self) -> &'static str {
        self.into()
    }
}

/// What the rules read, computed once from the request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Facts {
    pub seal_matches: bool,
    pub debt: Debt,
    pub tally: Tally,
}

/// What the catalog's votes on a patch add up to.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Tally {
    /// A property this patch introduces is in locality (frozen or not).
    pub introduced_in_locality: bool,
    /// Strong properties that vote.
    pub strong_voters: usize,
    pub voting_fail: bool,
    pub voting_flake: bool,
    pub voting_error: bool,
    pub voting_missing: bool,
}

/// One outcome rule: its (outcome, reason). Rule 6 has three rows: split, error, missing.
pub type Rule = rules::Rule<Facts, (Outcome, Reason)>;

/// The outcome table. Ordered, first match wins.
pub const RULES: [Rule; 9] = [
    rules::rule(
        1,
        |f| !f.seal_matches,
        (Outcome::FixtureFault, Reason::SealMismatch),
    ),
    rules::rule(
        2,
        |f| f.debt.counted > f.debt.cap,
        (Outcome::StopQueue, Reason::DebtOverCap),
    ),
    rules::rule(
        3,
        |f| f.tally.introduced_in_locality,
        (Outcome::Reject, Reason::SelfIntroducedPredicate),
    ),
    rules::rule(
        4,
        |f| f.tally.strong_voters == 0,
        (Outcome::Reject, Reason::EmptyQuorum),
    ),
    rules::rule(
        5,
        |f| f.tally.voting_fail,
        (Outcome::Reject, Reason::StableFailure),
    ),
    rules::rule(
        6,
        |f| f.tally.voting_flake,
        (Outcome::Hold, Reason::SplitExits),
    ),
    rules::rule(
        6,
        |f| f.tally.voting_error,
        (Outcome::Hold, Reason::HarnessError),
    ),
    rules::rule(
        6,
        |f| f.tally.voting_missing,
        (Outcome::Hold, Reason::MissingResults),
    ),
    rules::rule(7, |_| true, (Outcome::Promote, Reason::QuorumHeld)),
];

/// The quorum's decision.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QuorumDecision {
    pub properties: Vec<PropertyReport>,
    pub debt: Debt,
    pub facts: Facts,
    pub outcome: Outcome,
    pub reason: Reason,
    pub rule: u8,
}

/// How the catalog votes on one patch: every property's report, and what the outcome rules
/// read from them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ballot {
    pub properties: Vec<PropertyReport>,
    pub tally: Tally,
}

/// Tallies the catalog's votes on `changed_files`. Pure; linear in its input.
pub fn ballot(
    changed_files: &[RepoPath],
    catalog: &[Property],
    results: &HashMap<String, Vec<RunOutcome>>,
    catch_exit_codes: &CatchCodes,
    ledger: &[FreezeRow],
    require_admission: bool,
) -> Ballot {
    let trie = PrefixTrie::new(changed_files);
    // Test rows never change a vote; they count toward debt only.
    let frozen: HashSet<&str> = ledger
        .iter()
        .filter(|r| r.state == LedgerState::Open)
        .filter_map(FreezeRow::property_id)
        .collect();
    let mut b = Ballot {
        properties: Vec::with_capacity(catalog.len()),
        tally: Tally::default(),
    };
    for p in catalog {
        let in_locality = trie.any_covered_by(&p.locality);
        // Without its proof a strong row votes as weak: it may reject, never fill the quorum.
        let unproven = require_admission && p.strength == Strength::Strong && p.admitted.is_none();
        let state = match results.get(&p.id) {
            Some(runs) => classify(runs, catch_exit_codes),
            None if in_locality => RunState::Missing,
            None => RunState::NotRun,
        };
        // An introduced property is checked before the freeze: a freeze row on a predicate
        // the patch itself adds must not launder it into an exclusion (opening a freeze
        // never turns a rejection into a promotion). CONTRACT.md section 2, rule 3.
        let vote = if !in_locality {
            Vote::NotInLocality
        } else if p.introduced {
            b.tally.introduced_in_locality = true;
            Vote::Introduced
        } else if frozen.contains(p.id.as_str()) {
            Vote::Excluded
        } else {
            if p.strength == Strength::Strong && !unproven {
                b.tally.strong_voters += 1;
            }
            match state {
                RunState::Fail => b.tally.voting_fail = true,
                RunState::Flake => b.tally.voting_flake = true,
                RunState::Error => b.tally.voting_error = true,
                RunState::Missing | RunState::NotRun | RunState::Skipped => {
                    b.tally.voting_missing = true
                }
                RunState::Pass => {}
            }
            if state == RunState::Pass {
                Vote::Yes
            } else {
                Vote::No
            }
        };
        b.properties.push(PropertyReport {
            id: p.id.clone(),
            strength: p.strength,
            in_locality,
            state,
            vote,
            unproven,
        });
    }
    b
}

impl Ballot {
    /// What the outcome rules read, with the seal and debt figures.
    pub fn facts(&self, seal_matches: bool, debt: Debt) -> Facts {
        Facts {
            seal_matches,
            debt,
            tally: self.tally,
        }
    }
}

/// The first outcome rule numbered `from` or later that matches: (outcome, reason, rule).
/// The last rule always matches; were it ever not to, this fails closed with a hold.
pub fn first_rule(facts: &Facts, from: u8) -> (Outcome, Reason, u8) {
    rules::first_match(&RULES, facts, from)
        .map_or((Outcome::Hold, Reason::MissingResults, 6), |r| {
            (r.then.0, r.then.1, r.number)
        })
}

/// Decides. Pure and deterministic.
pub fn decide(request: &QuorumRequest, default_cap: u64) -> QuorumDecision {
    let debt = debt(&request.ledger, request.debt_cap.unwrap_or(default_cap));
    let ballot = ballot(
        &request.changed_files,
        &request.catalog,
        &request.results,
        &request.catch_exit_codes,
        &request.ledger,
        request.require_admission,
    );
    let facts = ballot.facts(request.seal.actual == request.seal.expected, debt);
    let (outcome, reason, rule) = first_rule(&facts, 1);
    QuorumDecision {
        properties: ballot.properties,
        debt,
        facts,
        outcome,
        reason,
        rule,
    }
}

/// The `/quorum` answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct QuorumAnswer {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub patch_id: Option<String>,
    pub outcome: Outcome,
    pub reason: Reason,
    /// The row of the outcome table that matched (1-7).
    pub rule: u8,
    /// 0 promote; 1 reject; 2 hold or fixture_fault; 3 stop_queue.
    pub exit_code: u8,
    pub decision_id: String,
    /// Every catalog property, in catalog order.
    pub properties: Vec<PropertyReport>,
    pub debt: Debt,
    pub seal: SealCheckAnswer,
}

impl QuorumDecision {
    pub fn answer(&self, request: &QuorumRequest, decision_id: String) -> QuorumAnswer {
        QuorumAnswer {
            patch_id: request.patch_id.clone(),
            outcome: self.outcome,
            reason: self.reason,
            rule: self.rule,
            exit_code: self.outcome.exit_code(),
            decision_id,
            properties: self.properties.clone(),
            debt: self.debt,
            seal: SealCheckAnswer {
                actual: request.seal.actual.to_hex(),
                expected: request.seal.expected.to_hex(),
                matches: self.facts.seal_matches,
            },
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Validation

/// The fields of a request body.
pub const REQUEST_FIELDS: [&str; 9] = [
    "patch_id",
    "changed_files",
    "catalog",
    "results",
    "ledger",
    "seal",
    "debt_cap",
    "catch_exit_codes",
    "require_admission",
];

/// Reads what a `/quorum` body and a `/gate` body share (a `/gate` body holds a quorum
/// request): its catalog as `kind`, its runs under `runs_key` (`results` in `/quorum`,
/// `property_runs` in `/gate`). `None` when any is invalid (each is reported in `e`).
pub fn parse_quorum_fields(
    doc: &fields::Obj<'_>,
    kind: CatalogKind,
    runs_key: &str,
    e: &mut Errors,
) -> Option<QuorumRequest> {
    let patch_id = doc.opt_string("patch_id", MAX_ID_CHARS, e);
    let changed_files = doc
        .required("changed_files", e)
        .and_then(|v| fields::paths(v, "/changed_files", false, e))
        .unwrap_or_default();
    // Read first: an admission record in the catalog is read with these codes.
    let catch_exit_codes = request_catch_codes(doc, e);
    let (catalog, ids) = doc
        .required("catalog", e)
        .map(|v| parse_catalog(v, kind, catch_exit_codes.as_ref(), e))
        .unwrap_or_default();
    // Every id the catalog names, even on a row that is invalid otherwise: a result for it is
    // not also reported as unknown.
    let known: HashSet<&str> = ids.iter().map(String::as_str).collect();
    let runs = doc
        .get(runs_key)
        .map(|v| parse_results(v, &doc.pointer(runs_key), &known, e))
        .unwrap_or_default();
    let ledger = doc
        .get("ledger")
        .map(|v| parse_ledger(v, e))
        .unwrap_or_default();
    let seal = doc.required("seal", e).and_then(|v| parse_seal(v, e));
    let debt_cap = doc.opt_uint("debt_cap", u64::from(u32::MAX), e);
    let require_admission = doc.opt_bool("require_admission", e).unwrap_or(false);
    Some(QuorumRequest {
        patch_id,
        changed_files,
        catalog,
        results: runs,
        catch_exit_codes: catch_exit_codes?,
        ledger,
        seal: seal?,
        debt_cap,
        require_admission,
    })
}

/// Validates a `/quorum` document, reporting every invalid field.
pub fn parse_request(value: &Value) -> Result<QuorumRequest, Errors> {
    let mut e = Errors::default();
    let Some(doc) = object(value, "", "the quorum request", &REQUEST_FIELDS, &mut e) else {
        return Err(e);
    };
    match parse_quorum_fields(&doc, CatalogKind::Quorum, "results", &mut e) {
        Some(request) if e.is_empty() => Ok(request),
        _ => Err(e),
    }
}

impl super::decision::Decision for QuorumDecision {
    const ENDPOINT: &'static str = "quorum";
    type Request = QuorumRequest;
    type Answer = QuorumAnswer;

    fn parse(body: &[u8]) -> Result<QuorumRequest, super::problem::Problem> {
        super::decision::json_body(body, parse_request)
    }

    fn decide(request: &QuorumRequest, defaults: &super::decision::Defaults) -> Self {
        decide(request, defaults.debt_cap)
    }

    fn exit_code(&self) -> u8 {
        self.outcome.exit_code()
    }

    fn label(&self) -> &'static str {
        self.outcome.as_str()
    }

    fn log_fields<'a>(&'a self, request: &'a QuorumRequest) -> super::decision::LogFields<'a> {
        use super::decision::{Field, log_key};
        let count = |v: Vote| self.properties.iter().filter(|p| p.vote == v).count() as u64;
        super::decision::LogFields::of([
            (log_key!("patch_id"), request.patch_id.as_deref().into()),
            (log_key!("outcome"), Field::Plain(self.outcome.as_str())),
            (log_key!("reason"), Field::Plain(self.reason.as_str())),
            (log_key!("rule"), u64::from(self.rule).into()),
            (log_key!("exit_code"), self.outcome.exit_code().into()),
            (log_key!("votes_yes"), count(Vote::Yes).into()),
            (log_key!("votes_no"), count(Vote::No).into()),
            (log_key!("excluded"), count(Vote::Excluded).into()),
            (log_key!("debt_counted"), self.debt.counted.into()),
            (log_key!("debt_cap"), self.debt.cap.into()),
            (log_key!("seal_match"), self.facts.seal_matches.into()),
        ])
    }

    fn answer(&self, request: &QuorumRequest, decision_id: String) -> QuorumAnswer {
        QuorumDecision::answer(self, request, decision_id)
    }

    fn answer_exit_code(answer: &QuorumAnswer) -> u8 {
        answer.exit_code
    }

    fn line(answer: &QuorumAnswer) -> String {
        format!(
            "{} reason={}\n",
            answer.outcome.as_str(),
            answer.reason.as_str()
        )
    }
}
