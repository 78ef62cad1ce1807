//! What each step saw and concluded ([`Step`]): one plain sentence each, in pipeline order.

use super::request::ChangedTest;
use super::request::IntegrityFinding;
use super::request::Judged;
use super::request::Reproof;
use super::request::SuspiciousLine;
use super::request::UnreadFile;
use crate::core::ladder::TierVerdict;
use crate::core::quorum::Outcome;
use crate::core::quorum::PropertyReport;
use crate::core::quorum::Reason;
use crate::core::route::Attribution;
use crate::core::route::Disposition;
use crate::core::route::RuleName;
use crate::core::route::Verdict;
use crate::core::runs::Receipt;
use crate::core::runs::ReceiptGap;
use serde::Deserialize;
use serde::Serialize;
use utoipa::ToSchema;

// ---------------------------------------------------------------------------------------------
// Steps: what each step saw and concluded

/// A guarded path the patch edits.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct GuardHit {
    /// The changed file.
    pub file: String,
    /// The guarded path (or property source) it is, or lies under.
    pub guarded_by: String,
    /// The catalog property whose `source` this is, when it is one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub property: Option<String>,
}

/// An open ledger row, as the debt step reports it (the rows to retire first).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct OpenRow {
    /// `property` or `test`.
    pub kind: String,
    pub id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub commits_since_open: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retire_by_commit_count: Option<u64>,
    /// Its commit budget is spent: it counts twice.
    pub budget_spent: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub owner: Option<String>,
}

/// One step of the pipeline, in order: what it saw, and what it concluded (`summary`, one
/// plain sentence). Only the steps reached are listed: a gate rule that decides stops the
/// pipeline.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(tag = "step", rename_all = "kebab-case")]
pub enum Step {
    /// The shards combined (issue 53): the gate was split over `total` CI jobs; any gap
    /// (a shard missing, given twice, unfinished, edited, or of another head, config, split
    /// or version) and nothing else is decided.
    Shards {
        total: u32,
        /// The shards whose facts are in, by index.
        combined: Vec<u32>,
        /// What is wrong with them, each naming the shard.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        gaps: Vec<String>,
        summary: String,
    },
    /// What is judged: the merge of the head into the base (section 12.1).
    Merge {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        judged: Option<Judged>,
        /// The files the merge conflicts on.
        conflicts: Vec<String>,
        summary: String,
    },
    /// The fixture seal computed in the worktree against the base's expected seal.
    Seal {
        actual: String,
        expected: String,
        #[serde(rename = "match")]
        matches: bool,
        summary: String,
    },
    /// Freeze debt from the base's ledger.
    Debt {
        open: u64,
        spent: u64,
        counted: u64,
        cap: u64,
        over_cap: bool,
        /// Every open row, spent budgets first.
        open_rows: Vec<OpenRow>,
        summary: String,
    },
    /// Guarded inputs the patch edits.
    Guard {
        guarded: Vec<String>,
        /// Property sources (from the catalog), guarded like it.
        sources: Vec<String>,
        hits: Vec<GuardHit>,
        summary: String,
    },
    /// Compiled or binary files the patch changes (or makes executable): code no review can
    /// read, which the tests might run instead of the source.
    Binary {
        binaries: Vec<String>,
        summary: String,
    },
    /// What the reading of the patch's code (not its tests) flagged: code that may behave
    /// differently under test, change what a comparison means, or special-case the tests'
    /// inputs (CONTRACT.md section 14).
    TestAware {
        /// At most 100 are listed, by class (the deciding class first); `count` is all of them.
        lines: Vec<SuspiciousLine>,
        count: usize,
        /// Changed code files the reader could not read as the interpreter will (at most
        /// 100): each escalates `unread-code` (section 15.2).
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        unread: Vec<UnreadFile>,
        summary: String,
    },
    /// What the runs changed that they may not (section 11.3): listed once anything ran.
    Integrity {
        findings: Vec<IntegrityFinding>,
        /// Processes the runs left behind, each killed (section 11.4).
        #[serde(default, skip_serializing_if = "is_zero")]
        left_behind: u64,
        summary: String,
    },
    /// The build step (section 11.8), when one ran.
    Build {
        exit_code: Option<u8>,
        /// Its last lines of output.
        tail: String,
        summary: String,
    },
    /// The canary (section 11.5), when one ran: `failed` is whether it still failed as it
    /// must.
    Canary {
        exit_code: Option<u8>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        receipt: Option<Receipt>,
        failed: bool,
        summary: String,
    },
    /// The re-proofs (section 11.5), when any was tried.
    Reproof {
        tried: Vec<Reproof>,
        summary: String,
    },
    /// t0: test-adjacent changed files.
    Scope {
        scope_hits: Vec<String>,
        /// Changed test files run as the base has them: the patch's edits to them are
        /// reported, not run (issue 50).
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        from_base: Vec<String>,
        /// Test files the patch adds, run in a process of their own: they can only block.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        added: Vec<String>,
        summary: String,
    },
    /// t1: the strong-property quorum (rules 3-7 of section 2).
    Properties {
        /// False on a scope hit: the property tier cannot vouch for the patch.
        ran: bool,
        /// The routed `property_check`.
        verdict: Verdict,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        tier: Option<TierVerdict>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        outcome: Option<Outcome>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        reason: Option<Reason>,
        /// The quorum's rule number (3-7).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        quorum_rule: Option<u8>,
        /// Every catalog property, in catalog order (its runs as counted: a run its receipt
        /// does not vouch for is `null`).
        properties: Vec<PropertyReport>,
        /// Whether the runs had receipts (section 11.1): absent when nothing ran.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        receipts: Option<Receipts>,
        /// The runs whose receipt does not vouch for their exit code, counted as `null`.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        unvouched: Vec<Unvouched>,
        /// On an empty quorum: the changed files no strong property observes (and that are
        /// not inert), the first 10.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        unobserved: Vec<String>,
        /// When no property's locality names any changed code file and `[observe]` is on:
        /// whether the observed run stands in (issue 65).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        observed_instead: Option<super::observe::ObservedInstead>,
        summary: String,
    },
    /// Whether the checks ran the patch's changed code lines and took the branches it adds
    /// (issue 52), after the quorum: a pass it finds unobserved becomes unknown.
    Observe {
        /// False: no observe rule is on (`[observe]` in the base config).
        on: bool,
        /// `property_check` after this step.
        verdict: Verdict,
        /// What made it unknown, when something did.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        unobserved: Option<super::observe::Unobserved>,
        /// The facts it read: each changed code line with the checks that ran it, and the
        /// branches no check took.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        facts: Option<super::observe::ObserveFacts>,
        summary: String,
    },
    /// The changed code's recorded calls made again in a plain program (issue 66; CONTRACT.md
    /// 16.2), after the suite whose observed run recorded them: with `[replay]
    /// behaves_under_test = "required"`, a call that answers differently under the tests makes
    /// a passing suite a failure.
    Behavior {
        /// False: `[replay]` is off (or nothing was recorded).
        on: bool,
        /// `fixture_check` after this step.
        verdict: Verdict,
        /// What it found, when it found something.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        found: Option<super::behavior::BehaviorFinding>,
        /// The facts it read: each recorded call, its recorded result and the two plain ones.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        facts: Option<super::behavior::BehaviorFacts>,
        summary: String,
    },
    /// t2: the fixture suite.
    Fixtures {
        ran: bool,
        /// The routed `fixture_check`.
        verdict: Verdict,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        tier: Option<TierVerdict>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        exit_code: Option<u8>,
        /// Failed tests that count (not frozen).
        failed_tests: Vec<String>,
        /// Failed tests discarded because an open ledger row freezes them.
        discarded: Vec<String>,
        /// Whether the suite had a receipt (section 11.1): absent when it did not run.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        receipts: Option<Receipts>,
        /// Why its receipt does not vouch for its exit code, when it does not.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        gap: Option<ReceiptGap>,
        /// Census tests that passed on the base and did not run here (at most 100).
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        vanished: Vec<String>,
        #[serde(default, skip_serializing_if = "is_zero")]
        vanished_count: u64,
        /// How its report disagrees with itself, when it does (section 11.9).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        disagrees: Option<String>,
        /// When every counted failure is a test the patch changes (issue 65): each, with the
        /// base's lines and the patch's side by side. A human decides.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        changed_tests: Vec<ChangedTest>,
        summary: String,
    },
    /// The scoped freeze from the ledger's open test rows.
    Freeze {
        /// The routed `flaky_freeze`.
        verdict: Verdict,
        /// Frozen tests that cover a changed file.
        matched: Vec<String>,
        summary: String,
    },
    /// The router over the three verdicts.
    Router {
        rule: RuleName,
        disposition: Disposition,
        attribution: Attribution,
        summary: String,
    },
}

pub(super) fn is_zero(n: &u64) -> bool {
    *n == 0
}

crate::core::words! {
    "kebab-case";
    /// Whether a check's runs had receipts (CONTRACT.md section 11.1).
    pub enum Receipts {
        /// The command writes a JUnit report to `{junit}`: a run counts only with it.
        On,
        /// No `{junit}` in the command: exit codes are read as they are.
        Off,
    }
}

/// A property run its receipt does not vouch for: counted as `null`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct Unvouched {
    pub property: String,
    /// 1-based.
    pub run: u32,
    /// The exit code it gave.
    pub exit_code: Option<u8>,
    pub gap: ReceiptGap,
    /// How its report disagrees with itself, when that is the gap (section 11.9).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub disagrees: Option<String>,
}
pub(super) fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}
