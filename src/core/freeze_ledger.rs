//! The freeze ledger (CONTRACT.md section 2): which properties and tests are frozen, and the
//! freeze debt they add up to. Distinct from the ladder's tier ledger (`core::ladder::rows`).

use std::collections::{HashMap, HashSet};

use serde::{Deserialize, Serialize};
use serde_json::Value;
use strum::{IntoStaticStr, VariantArray};
use utoipa::ToSchema;

use super::digest::Digest;
use super::fields::{self, Errors, MAX_ID_CHARS, object};
use super::path::RepoPath;
use super::problem::quoted;

/// The server's default debt cap.
pub const DEFAULT_DEBT_CAP: u64 = 5;

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
pub struct FreezeRow {
    pub frozen: Frozen,
    pub state: LedgerState,
    pub seal: Option<Digest>,
    pub reason: Option<String>,
    pub opened_against_commit: Option<String>,
    pub retire_by_commit_count: Option<u64>,
    pub commits_since_open: Option<u64>,
    pub owner: Option<String>,
}

impl FreezeRow {
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

/// Computes debt from the ledger.
pub fn debt(ledger: &[FreezeRow], cap: u64) -> Debt {
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

/// The fields of a freeze-ledger row.
pub const LEDGER_FIELDS: [&str; 10] = [
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

fn is_commit(s: &str) -> bool {
    (4..=64).contains(&s.len()) && s.bytes().all(|b| b.is_ascii_hexdigit())
}

/// Validates a freeze ledger (at most one open row per property, and per test).
pub fn parse_ledger(v: &Value, e: &mut Errors) -> Vec<FreezeRow> {
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
        Some(FreezeRow {
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

/// A row as the ledger file holds it, the form [`parse_ledger`] reads back to the same row.
#[derive(Serialize)]
struct RowAsWritten<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    property_id: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    test_id: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    covers: Option<Vec<&'a str>>,
    state: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    seal: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    reason: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    opened_against_commit: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    retire_by_commit_count: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    commits_since_open: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    owner: Option<&'a str>,
}

/// A row is written as the ledger file holds it (the facts' `ledger`, `/quorum`'s): read
/// once by [`parse_ledger`], the runner carries the typed rows and never edits a document.
impl Serialize for FreezeRow {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let (property_id, test_id, covers) = match &self.frozen {
            Frozen::Property(id) => (Some(id.as_str()), None, None),
            Frozen::Test { id, covers } => (
                None,
                Some(id.as_str()),
                Some(covers.iter().map(RepoPath::as_str).collect()),
            ),
        };
        RowAsWritten {
            property_id,
            test_id,
            covers,
            state: self.state.into(),
            seal: self.seal.as_ref().map(Digest::to_hex),
            reason: self.reason.as_deref(),
            opened_against_commit: self.opened_against_commit.as_deref(),
            retire_by_commit_count: self.retire_by_commit_count,
            commits_since_open: self.commits_since_open,
            owner: self.owner.as_deref(),
        }
        .serialize(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A row written is the row read: every field, a property row and a test row (written by
    /// hand as a ledger file holds them).
    #[test]
    fn a_row_written_reads_back_the_same() {
        let file = serde_json::json!([
            {"property_id": "p.one", "state": "open", "seal": "ab".repeat(32),
             "reason": "flaky on CI", "opened_against_commit": "abc123",
             "retire_by_commit_count": 10, "commits_since_open": 3, "owner": "team-a"},
            {"test_id": "t::x", "covers": ["src/a", "src/b.py"], "state": "closed"}
        ]);
        let mut e = Errors::default();
        let rows = parse_ledger(&file, &mut e);
        assert!(e.is_empty(), "{e:?}");
        assert_eq!(rows.len(), 2);
        let written = serde_json::to_value(&rows).unwrap();
        assert_eq!(written, file);
        let again = parse_ledger(&written, &mut e);
        assert!(e.is_empty(), "{e:?}");
        assert_eq!(again, rows);
    }
}
