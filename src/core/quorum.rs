//! The strong-property quorum on sealed fixtures (CONTRACT.md section 2).
//!
//! A patch merges only when every strong property in its locality passes twice on sealed
//! fixtures. A frozen property is *excluded*, never passed; an empty strong quorum is a
//! rejection; too many open freezes stop the whole queue. The seven outcome rules are data
//! ([`RULES`]), first match wins, like the router's ladder.

use std::collections::{HashMap, HashSet};

use serde::{Deserialize, Serialize};
use serde_json::Value;
use strum::{IntoStaticStr, VariantArray};
use utoipa::ToSchema;

use super::admit::{AdmissionRecord, parse_record};
use super::digest::Digest;
use super::fields::{self, Errors, kind_of, object};
use super::path::{PrefixTrie, RepoPath};
use super::problem::{pointer_key, quoted};

pub use super::fields::MAX_ID_CHARS;
/// The server's default debt cap.
pub const DEFAULT_DEBT_CAP: u64 = 5;

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
pub enum Strength {
    /// Checks an invariant the patch can actually break; only these fill the quorum.
    Strong,
    /// Checks structure; may reject, never fills a quorum.
    Weak,
}

impl Strength {
    pub fn as_str(self) -> &'static str {
        self.into()
    }
}

/// A catalog row.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Property {
    pub id: String,
    pub strength: Strength,
    /// Path prefixes this property observes (whole segments).
    pub locality: Vec<RepoPath>,
    /// The fixture directory it may read.
    pub fixtures: Option<RepoPath>,
    /// Added by this very patch: it may not vote on it.
    pub introduced: bool,
    /// The paths (files or directories) that implement the property; the patch gate guards
    /// them like the catalog (`/gate` only).
    pub source: Vec<RepoPath>,
    /// Its two-commit proof (CONTRACT.md section 10), when it was admitted.
    pub admitted: Option<AdmissionRecord>,
}

/// What one property's runs say.
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
#[serde(rename_all = "kebab-case")]
#[strum(serialize_all = "kebab-case")]
pub enum RunState {
    /// All runs exited 0.
    Pass,
    /// Every run was a catch (an exit code in `catch_exit_codes`): a stable failure.
    Fail,
    /// Every run ended the same way but not with a pass or a catch (pytest's 2–5, a crash
    /// code), or every run was killed: the harness is broken, not the patch.
    Error,
    /// The runs disagree: the failure did not reproduce.
    Flake,
    /// In locality, but no result was given.
    Missing,
    /// Not in locality and no result was given.
    NotRun,
}

impl RunState {
    pub fn as_str(self) -> &'static str {
        self.into()
    }
}

/// The catch codes when a request names none: pytest's (a failed test exits 1).
pub const DEFAULT_CATCH_EXIT_CODES: [u8; 1] = [1];

/// Classifies one property's runs (an exit code, or `None` for a run killed by its timeout or
/// a signal), with the ladder's verdict model: only a catch is a failure. Every run 0 → pass;
/// every run a catch → fail; every run the same otherwise (pytest's 2–5, a crash code) or
/// every run killed → error; anything else → flake; no runs → missing.
pub fn classify(runs: &[Option<u8>], catch: &[u8]) -> RunState {
    let is_catch = |r: &Option<u8>| r.is_some_and(|c| catch.contains(&c));
    match runs.split_first() {
        None => RunState::Missing,
        Some(_) if runs.iter().all(|r| *r == Some(0)) => RunState::Pass,
        Some(_) if runs.iter().all(is_catch) => RunState::Fail,
        Some((first, rest)) if rest.iter().all(|r| r == first) => RunState::Error,
        Some(_) => RunState::Flake,
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, IntoStaticStr, VariantArray)]
#[strum(serialize_all = "lowercase")]
pub enum LedgerState {
    Open,
    Closed,
}

/// What a ledger row freezes: a property of the catalog, or a test of the fixture suite (with
/// the path prefixes of the code it covers, as in scoped freeze).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Frozen {
    Property(String),
    Test { id: String, covers: Vec<RepoPath> },
}

/// A freeze-ledger row.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LedgerRow {
    pub frozen: Frozen,
    pub state: LedgerState,
    pub seal: Option<Digest>,
    pub reason: Option<String>,
    pub opened_against_commit: Option<String>,
    pub retire_by_commit_count: Option<u64>,
    pub commits_since_open: Option<u64>,
    pub owner: Option<String>,
}

impl LedgerRow {
    /// The frozen property, for a property row.
    pub fn property_id(&self) -> Option<&str> {
        match &self.frozen {
            Frozen::Property(id) => Some(id),
            Frozen::Test { .. } => None,
        }
    }

    /// An open row whose commit budget is spent counts once more toward debt.
    pub fn budget_spent(&self) -> bool {
        self.state == LedgerState::Open
            && matches!((self.commits_since_open, self.retire_by_commit_count), (Some(n), Some(budget)) if n >= budget)
    }
}

/// The fixture seal computed now, and the one committed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SealCheck {
    pub actual: Digest,
    pub expected: Digest,
}

/// A validated `/quorum` request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QuorumRequest {
    pub patch_id: Option<String>,
    pub changed_files: Vec<RepoPath>,
    pub catalog: Vec<Property>,
    /// Runs by property id (ids are known catalog ids): an exit code, or `None` for a run
    /// killed by its timeout or a signal.
    pub results: HashMap<String, Vec<Option<u8>>>,
    /// The exit codes that are a catch (a stable failure); never 0.
    pub catch_exit_codes: Vec<u8>,
    pub ledger: Vec<LedgerRow>,
    pub seal: SealCheck,
    /// `None`: the server's (or CLI's) default.
    pub debt_cap: Option<u64>,
    /// A strong row without an `admitted` proof votes as weak (CONTRACT.md section 10).
    pub require_admission: bool,
}

/// How a property takes part in this patch's quorum.
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
#[serde(rename_all = "kebab-case")]
#[strum(serialize_all = "kebab-case")]
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

/// Freeze debt: distinct open properties, plus one for each open row whose budget is spent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct Debt {
    /// Distinct properties with an open ledger row.
    pub open: u64,
    /// Open rows whose commit budget is spent.
    pub spent: u64,
    /// `open + spent`: what is held against the cap.
    pub counted: u64,
    /// The queue stops when `counted` exceeds this.
    pub cap: u64,
}

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
#[serde(rename_all = "snake_case")]
#[strum(serialize_all = "snake_case")]
pub enum Outcome {
    Promote,
    Reject,
    Hold,
    FixtureFault,
    StopQueue,
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
#[serde(rename_all = "kebab-case")]
#[strum(serialize_all = "kebab-case")]
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
    /// A property this patch introduces is in locality (frozen or not).
    pub introduced_in_locality: bool,
    /// Strong properties that vote.
    pub strong_voters: usize,
    pub voting_fail: bool,
    pub voting_flake: bool,
    pub voting_error: bool,
    pub voting_missing: bool,
}

/// One outcome rule.
#[derive(Debug, Clone, Copy)]
pub struct Rule {
    /// The row number in the contract's table (rule 6 has two rows: split, then missing).
    pub number: u8,
    pub when: fn(&Facts) -> bool,
    pub outcome: Outcome,
    pub reason: Reason,
}

/// The outcome table. Ordered, first match wins.
pub const RULES: [Rule; 9] = [
    Rule {
        number: 1,
        when: |f| !f.seal_matches,
        outcome: Outcome::FixtureFault,
        reason: Reason::SealMismatch,
    },
    Rule {
        number: 2,
        when: |f| f.debt.counted > f.debt.cap,
        outcome: Outcome::StopQueue,
        reason: Reason::DebtOverCap,
    },
    Rule {
        number: 3,
        when: |f| f.introduced_in_locality,
        outcome: Outcome::Reject,
        reason: Reason::SelfIntroducedPredicate,
    },
    Rule {
        number: 4,
        when: |f| f.strong_voters == 0,
        outcome: Outcome::Reject,
        reason: Reason::EmptyQuorum,
    },
    Rule {
        number: 5,
        when: |f| f.voting_fail,
        outcome: Outcome::Reject,
        reason: Reason::StableFailure,
    },
    Rule {
        number: 6,
        when: |f| f.voting_flake,
        outcome: Outcome::Hold,
        reason: Reason::SplitExits,
    },
    Rule {
        number: 6,
        when: |f| f.voting_error,
        outcome: Outcome::Hold,
        reason: Reason::HarnessError,
    },
    Rule {
        number: 6,
        when: |f| f.voting_missing,
        outcome: Outcome::Hold,
        reason: Reason::MissingResults,
    },
    Rule {
        number: 7,
        when: |_| true,
        outcome: Outcome::Promote,
        reason: Reason::QuorumHeld,
    },
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

/// Computes debt from the ledger.
pub fn debt(ledger: &[LedgerRow], cap: u64) -> Debt {
    // Distinct frozen properties and tests (a property and a test may share an id).
    let open: HashSet<&Frozen> = ledger
        .iter()
        .filter(|r| r.state == LedgerState::Open)
        .map(|r| &r.frozen)
        .collect();
    let spent = ledger.iter().filter(|r| r.budget_spent()).count() as u64;
    let open = open.len() as u64;
    Debt {
        open,
        spent,
        counted: open + spent,
        cap,
    }
}

/// How the catalog votes on one patch: every property's report, and what the outcome rules
/// read from them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ballot {
    pub properties: Vec<PropertyReport>,
    pub introduced_in_locality: bool,
    pub strong_voters: usize,
    pub voting_fail: bool,
    pub voting_flake: bool,
    pub voting_error: bool,
    pub voting_missing: bool,
}

/// Tallies the catalog's votes on `changed_files`. Pure; linear in its input.
pub fn ballot(
    changed_files: &[RepoPath],
    catalog: &[Property],
    results: &HashMap<String, Vec<Option<u8>>>,
    catch_exit_codes: &[u8],
    ledger: &[LedgerRow],
    require_admission: bool,
) -> Ballot {
    let trie = PrefixTrie::new(changed_files);
    // Test rows never change a vote; they count toward debt only.
    let frozen: HashSet<&str> = ledger
        .iter()
        .filter(|r| r.state == LedgerState::Open)
        .filter_map(LedgerRow::property_id)
        .collect();
    let mut b = Ballot {
        properties: Vec::with_capacity(catalog.len()),
        introduced_in_locality: false,
        strong_voters: 0,
        voting_fail: false,
        voting_flake: false,
        voting_error: false,
        voting_missing: false,
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
            b.introduced_in_locality = true;
            Vote::Introduced
        } else if frozen.contains(p.id.as_str()) {
            Vote::Excluded
        } else {
            if p.strength == Strength::Strong && !unproven {
                b.strong_voters += 1;
            }
            match state {
                RunState::Fail => b.voting_fail = true,
                RunState::Flake => b.voting_flake = true,
                RunState::Error => b.voting_error = true,
                RunState::Missing | RunState::NotRun => b.voting_missing = true,
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
            introduced_in_locality: self.introduced_in_locality,
            strong_voters: self.strong_voters,
            voting_fail: self.voting_fail,
            voting_flake: self.voting_flake,
            voting_error: self.voting_error,
            voting_missing: self.voting_missing,
        }
    }
}

/// The first outcome rule numbered `from` or later that matches: (outcome, reason, rule).
/// The last rule always matches; were it ever not to, this fails closed with a hold.
pub fn first_rule(facts: &Facts, from: u8) -> (Outcome, Reason, u8) {
    RULES
        .iter()
        .filter(|r| r.number >= from)
        .find(|r| (r.when)(facts))
        .map_or((Outcome::Hold, Reason::MissingResults, 6), |r| {
            (r.outcome, r.reason, r.number)
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

/// The seal check as answered.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct SealCheckAnswer {
    pub actual: String,
    pub expected: String,
    #[serde(rename = "match")]
    pub matches: bool,
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

const REQUEST_FIELDS: [&str; 9] = [
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
/// Which catalog a request carries: `/quorum`'s (rows may say `introduced`) or the patch
/// gate's, read from the base commit (rows may name their `source`; `introduced` is refused:
/// a patch that changes the catalog is caught by the guard instead).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CatalogKind {
    Quorum,
    Gate,
}

impl CatalogKind {
    fn fields(self) -> &'static [&'static str] {
        match self {
            CatalogKind::Quorum => &[
                "id",
                "strength",
                "locality",
                "fixtures",
                "introduced",
                "admitted",
            ],
            CatalogKind::Gate => &[
                "id", "strength", "locality", "fixtures", "source", "admitted",
            ],
        }
    }
}
const LEDGER_FIELDS: [&str; 10] = [
    "property_id",
    "test_id",
    "covers",
    "state",
    "seal",
    "reason",
    "opened_against_commit",
    "retire_by_commit_count",
    "commits_since_open",
    "owner",
];
/// Longest free-text field (reason, owner), in characters.
const MAX_TEXT_CHARS: usize = 4096;

/// Validates a `/quorum` document, reporting every invalid field.
pub fn parse_request(value: &Value) -> Result<QuorumRequest, Errors> {
    let mut e = Errors::default();
    let Some(doc) = object(value, "", "the quorum request", &REQUEST_FIELDS, &mut e) else {
        return Err(e);
    };
    let patch_id = doc.opt_string("patch_id", MAX_ID_CHARS, &mut e);
    let changed_files = doc
        .required("changed_files", &mut e)
        .and_then(|v| fields::paths(v, "/changed_files", false, &mut e))
        .unwrap_or_default();
    // Read first: an admission record in the catalog is read with these codes.
    let catch_exit_codes = request_catch_codes(&doc, &mut e);
    let (catalog, ids) = doc
        .required("catalog", &mut e)
        .map(|v| parse_catalog(v, CatalogKind::Quorum, &catch_exit_codes, &mut e))
        .unwrap_or_default();
    // Every id the catalog names, even on a row that is invalid otherwise: a result for it is
    // not also reported as unknown.
    let known: HashSet<&str> = ids.iter().map(String::as_str).collect();
    let results = doc
        .get("results")
        .map(|v| parse_results(v, "/results", &known, &mut e))
        .unwrap_or_default();
    let ledger = doc
        .get("ledger")
        .map(|v| parse_ledger(v, &mut e))
        .unwrap_or_default();
    let seal = doc
        .required("seal", &mut e)
        .and_then(|v| parse_seal(v, &mut e));
    let debt_cap = doc.opt_uint("debt_cap", u64::from(u32::MAX), &mut e);
    let require_admission = doc.opt_bool("require_admission", &mut e).unwrap_or(false);
    match seal {
        Some(seal) if e.is_empty() => Ok(QuorumRequest {
            patch_id,
            changed_files,
            catalog,
            results,
            catch_exit_codes,
            ledger,
            seal,
            debt_cap,
            require_admission,
        }),
        _ => Err(e),
    }
}

/// Validates a catalog (`{"properties": [...]}`); also gives every id it names, even on rows
/// that are invalid otherwise. An `admitted` record is read with `catch`, the request's catch
/// codes.
pub fn parse_catalog(
    v: &Value,
    kind: CatalogKind,
    catch: &[u8],
    e: &mut Errors,
) -> (Vec<Property>, HashSet<String>) {
    let Some(catalog) = object(v, "/catalog", "the catalog", &["properties"], e) else {
        return Default::default();
    };
    let Some(props) = catalog.required("properties", e) else {
        return Default::default();
    };
    let mut seen: HashMap<String, String> = HashMap::new();
    let props = fields::array(
        props,
        "/catalog/properties",
        "`properties`",
        e,
        |item, at, e| {
            let row = object(item, &at, "a catalog property", kind.fields(), e)?;
            let id = row.req_string("id", MAX_ID_CHARS, e);
            let strength = row.req_enum::<Strength>("strength", e);
            let locality = row
                .required("locality", e)
                .and_then(|l| fields::paths(l, &row.pointer("locality"), true, e));
            let fixtures = row
                .get("fixtures")
                .and_then(|f| fields::path(f, &row.pointer("fixtures"), e));
            let introduced = row.opt_bool("introduced", e).unwrap_or(false);
            let source = row
                .get("source")
                .and_then(|s| fields::paths(s, &row.pointer("source"), false, e))
                .unwrap_or_default();
            let admitted = row
                .get("admitted")
                .and_then(|a| parse_record(a, &row.pointer("admitted"), catch, e));
            let id = id?;
            if let Some(first) = seen.get(&id) {
                e.push(
                    row.pointer("id"),
                    format!("duplicate property id {:?} (first at {first})", id),
                );
                return None;
            }
            seen.insert(id.clone(), row.pointer("id"));
            Some(Property {
                id,
                strength: strength?,
                locality: locality?,
                fixtures,
                introduced,
                source,
                admitted,
            })
        },
    )
    .unwrap_or_default();
    (props, seen.into_keys().collect())
}

/// A request's top-level `catch_exit_codes`, or the default (pytest's `[1]`).
pub fn request_catch_codes(doc: &fields::Obj<'_>, e: &mut Errors) -> Vec<u8> {
    doc.get("catch_exit_codes")
        .map(|v| parse_catch_codes(v, "/catch_exit_codes", e))
        .unwrap_or_else(|| DEFAULT_CATCH_EXIT_CODES.to_vec())
}

/// `catch_exit_codes`: a non-empty list of exit codes 1..=255 (0 is a pass, never a catch).
pub fn parse_catch_codes(v: &Value, at: &str, e: &mut Errors) -> Vec<u8> {
    let codes = fields::array(v, at, "`catch_exit_codes`", e, |x, p, e| {
        match crate::core::fields::whole_u64(x).map(u8::try_from) {
            Some(Ok(code)) if code > 0 => Some(code),
            _ => {
                e.push(
                    p,
                    format!("{x} is not a catch code; a catch is an exit code from 1 to 255 (0 is a pass)"),
                );
                None
            }
        }
    })
    .unwrap_or_default();
    if v.as_array().is_some_and(Vec::is_empty) {
        e.push(
            at,
            "must list at least one exit code (pytest's is 1, cargo test's 101)",
        );
    }
    // A set: at most 255 codes, however long the list sent, so classifying a run stays cheap.
    let mut codes = codes;
    codes.sort_unstable();
    codes.dedup();
    codes
}

/// Validates runs by property id (`results` in `/quorum`, `property_runs` in `/gate`).
pub fn parse_results(
    v: &Value,
    base: &str,
    known: &HashSet<&str>,
    e: &mut Errors,
) -> HashMap<String, Vec<Option<u8>>> {
    let Some(map) = v.as_object() else {
        e.push(
            base,
            format!(
                "`{}` must be an object of property id → {{\"runs\": [...]}}, not {}",
                base.trim_start_matches('/'),
                kind_of(v)
            ),
        );
        return HashMap::new();
    };
    let mut out = HashMap::new();
    for (id, result) in map {
        if e.is_full() {
            break;
        }
        let at = pointer_key(base, id);
        if !known.contains(id.as_str()) {
            e.push(
                at.clone(),
                format!("a result for {id:?}, which is not in the catalog"),
            );
        }
        let Some(obj) = object(result, &at, "a result", &["runs"], e) else {
            continue;
        };
        let Some(runs) = obj.required("runs", e) else {
            continue;
        };
        if let Some(codes) = parse_runs(runs, &obj.pointer("runs"), "`runs`", e) {
            out.insert(id.clone(), codes);
        }
    }
    out
}

/// Validates one check's runs: 2 to 10, each an exit code 0..=255 or `null` (a run killed by
/// its timeout or a signal). `None` when any is invalid (each is reported).
pub fn parse_runs(v: &Value, at: &str, what: &str, e: &mut Errors) -> Option<Vec<Option<u8>>> {
    let codes = fields::array(v, at, what, e, |x, p, e| {
        if x.is_null() {
            // Killed by its timeout or a signal: no exit code.
            return Some(None);
        }
        match crate::core::fields::whole_u64(x).map(u8::try_from) {
            Some(Ok(code)) => Some(Some(code)),
            _ => {
                e.push(
                    p,
                    format!(
                        "{x} is not an exit code; a run is an integer from 0 to 255, or null when it was killed"
                    ),
                );
                None
            }
        }
    })?;
    let given = v.as_array().map_or(0, Vec::len);
    if !(2..=10).contains(&given) {
        e.push(
            at,
            format!("{what} holds {given} exit codes; it must hold 2 to 10"),
        );
        return None;
    }
    (codes.len() == given).then_some(codes)
}

fn is_commit(s: &str) -> bool {
    (4..=64).contains(&s.len()) && s.bytes().all(|b| b.is_ascii_hexdigit())
}

/// Validates a freeze ledger (at most one open row per property, and per test).
pub fn parse_ledger(v: &Value, e: &mut Errors) -> Vec<LedgerRow> {
    let mut open_at: HashMap<Frozen, String> = HashMap::new();
    fields::array(v, "/ledger", "`ledger`", e, |item, at, e| {
        let row = object(item, &at, "a ledger row", &LEDGER_FIELDS, e)?;
        // Exactly one of `property_id` (a frozen property) or `test_id` (a frozen test, which
        // then needs `covers`).
        let frozen = match (row.get("property_id"), row.get("test_id")) {
            (Some(_), None) => {
                if row.get("covers").is_some() {
                    e.push(
                        row.pointer("covers"),
                        "`covers` belongs to a test row (`test_id`), not to a property row",
                    );
                }
                row.req_string("property_id", MAX_ID_CHARS, e)
                    .map(Frozen::Property)
            }
            (None, Some(_)) => {
                let id = row.req_string("test_id", MAX_ID_CHARS, e);
                let covers = row.required("covers", e).and_then(|c| {
                    fields::paths(c, &row.pointer("covers"), true, e)
                });
                match (id, covers) {
                    (Some(id), Some(covers)) => Some(Frozen::Test { id, covers }),
                    _ => None,
                }
            }
            (Some(_), Some(_)) => {
                e.push(
                    at.clone(),
                    "a ledger row freezes a property (`property_id`) or a test (`test_id`), not both",
                );
                None
            }
            (None, None) => {
                e.push(
                    row.pointer("property_id"),
                    "`property_id` (a frozen property) or `test_id` (a frozen test) is required",
                );
                None
            }
        };
        let state = row.req_enum::<LedgerState>("state", e);
        let seal = row.opt_string("seal", 64, e).and_then(|s| match Digest::parse_hex(&s) {
            Ok(d) => Some(d),
            Err(err) => {
                e.push(row.pointer("seal"), format!("`seal` {err}"));
                None
            }
        });
        let reason = row.opt_string("reason", MAX_TEXT_CHARS, e);
        let opened_against_commit = row.opt_string("opened_against_commit", 64, e);
        if let Some(c) = &opened_against_commit
            && !is_commit(c)
        {
            e.push(row.pointer("opened_against_commit"), "`opened_against_commit` must be a git commit id (4 to 64 hex digits)");
        }
        let retire_by_commit_count = row.opt_uint("retire_by_commit_count", u64::from(u32::MAX), e);
        let commits_since_open = row.opt_uint("commits_since_open", u64::from(u32::MAX), e);
        let owner = row.opt_string("owner", MAX_TEXT_CHARS, e);
        let (frozen, state) = (frozen?, state?);
        if state == LedgerState::Open {
            if let Some(first) = open_at.get(&frozen) {
                let (what, id) = match &frozen {
                    Frozen::Property(id) => ("a property", id),
                    Frozen::Test { id, .. } => ("a test", id),
                };
                e.push(at.clone(), format!("a second open row for {} (the first is {first}); {what} is frozen once", quoted(id)));
                return None;
            }
            open_at.insert(frozen.clone(), at.clone());
        }
        Some(LedgerRow {
            frozen,
            state,
            seal,
            reason,
            opened_against_commit,
            retire_by_commit_count,
            commits_since_open,
            owner,
        })
    })
    .unwrap_or_default()
}

/// Validates `{"actual", "expected"}`, two 64-hex digests.
pub fn parse_seal(v: &Value, e: &mut Errors) -> Option<SealCheck> {
    let obj = object(v, "/seal", "the seal", &["actual", "expected"], e)?;
    let actual = parse_seal_digest(&obj, "actual", e);
    let expected = parse_seal_digest(&obj, "expected", e);
    Some(SealCheck {
        actual: actual?,
        expected: expected?,
    })
}

/// A required 64-hex digest at `key` of `obj`.
pub fn parse_seal_digest(obj: &fields::Obj<'_>, key: &str, e: &mut Errors) -> Option<Digest> {
    let s = obj.req_string(key, 64, e)?;
    match Digest::parse_hex(&s) {
        Ok(d) => Some(d),
        Err(err) => {
            e.push(obj.pointer(key), format!("`{key}` {err}"));
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classification_follows_the_contract() {
        // CONTRACT.md section 2, by hand: `None` is a run killed by its timeout or a signal.
        let pytest = [1u8];
        let cargo = [101u8];
        type Case<'a> = (&'a [Option<u8>], &'a [u8], RunState);
        let cases: [Case; 14] = [
            (&[Some(0), Some(0)], &pytest, RunState::Pass),
            (&[Some(0); 10], &pytest, RunState::Pass),
            (&[Some(1), Some(1)], &pytest, RunState::Fail),
            (&[Some(101), Some(101)], &cargo, RunState::Fail),
            // A Rust repository's failing `cargo test` read with pytest's codes: not a catch.
            (&[Some(101), Some(101)], &pytest, RunState::Error),
            // pytest exit 5, "no tests collected": the harness, never a rejection.
            (&[Some(5), Some(5), Some(5)], &pytest, RunState::Error),
            (&[Some(3), Some(3)], &pytest, RunState::Error),
            (&[None, None], &pytest, RunState::Error),
            (&[Some(0), Some(1)], &pytest, RunState::Flake),
            (&[Some(1), Some(0)], &pytest, RunState::Flake),
            (&[Some(1), Some(2)], &pytest, RunState::Flake),
            (&[Some(0), None], &pytest, RunState::Flake),
            (&[Some(0), Some(0), Some(1)], &pytest, RunState::Flake),
            (&[], &pytest, RunState::Missing),
        ];
        for (runs, catch, want) in cases {
            assert_eq!(
                classify(runs, catch),
                want,
                "{runs:?} with catches {catch:?}"
            );
        }
        // Two different catch codes are still every run a catch.
        assert_eq!(classify(&[Some(1), Some(2)], &[1, 2]), RunState::Fail);
    }
}
