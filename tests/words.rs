//! Words ↔ enums: each enum's words come from one derive (strum, with the same rename rule as
//! serde), and this checks both agree on every variant, and that the words are the contract's
//! (written here by hand from CONTRACT.md).

use patchgate::core::admit::{AdmitOutcome, AdmitReason, CheckKind};
use patchgate::core::catalog::Strength;
use patchgate::core::checks::{CheckVerdict, ChecksDisposition};
use patchgate::core::freeze_ledger::LedgerState;
use patchgate::core::gate::{
    GateDisposition, GateReason, GateRuleName, NextStep, SandboxBackend, WorkKind, WorkTree,
};
use patchgate::core::ladder::{FixChanged, TierVerdict};
use patchgate::core::quorum::{Outcome, Reason, Vote};
use patchgate::core::route::{Attribution, Disposition, RuleName, Verdict};
use patchgate::core::runs::RunState;
use serde::Serialize;
use strum::VariantArray;

/// Every variant's word, as strum gives it, after checking serde writes the same.
fn words<T>() -> Vec<&'static str>
where
    T: VariantArray + Serialize + Copy + Into<&'static str>,
{
    T::VARIANTS
        .iter()
        .map(|v| {
            let word: &'static str = (*v).into();
            assert_eq!(
                serde_json::to_value(v).unwrap_or_default(),
                serde_json::Value::from(word)
            );
            word
        })
        .collect()
}

/// Every variant's word, for an enum that is only ever written as a word (no serde).
fn plain_words<T>() -> Vec<&'static str>
where
    T: VariantArray + Copy + Into<&'static str>,
{
    T::VARIANTS.iter().map(|v| (*v).into()).collect()
}

#[test]
fn the_enums_speak_the_contracts_words() {
    assert_eq!(words::<Verdict>(), ["pass", "fail", "unknown", "missing"]);
    assert_eq!(words::<Disposition>(), ["MERGE_OK", "BLOCK", "ESCALATE"]);
    assert_eq!(
        words::<Attribution>(),
        [
            "evidence-gap",
            "behavior-and-invariant",
            "concrete-behavior",
            "invariant-or-over-specified-property",
            "frozen-test-failure",
            "inadmissible-evidence",
            "all-gates-held"
        ]
    );
    assert_eq!(
        words::<RuleName>(),
        ["evidence-gap", "fail-absorbs", "inadmissible", "all-held"]
    );
    assert_eq!(words::<Strength>(), ["strong", "weak"]);
    // The quorum (section 2), every word of each enum exactly.
    assert_eq!(
        words::<Outcome>(),
        ["promote", "reject", "hold", "fixture_fault", "stop_queue"]
    );
    assert_eq!(
        words::<Vote>(),
        ["yes", "no", "excluded", "introduced", "not-in-locality"]
    );
    assert_eq!(
        words::<RunState>(),
        // `skipped`: the patch gate's only (issue 50), a property a scope hit kept from running.
        [
            "pass", "fail", "error", "flake", "missing", "not-run", "skipped"
        ]
    );
    assert_eq!(
        words::<Reason>(),
        [
            "seal-mismatch",
            "debt-over-cap",
            "self-introduced-predicate",
            "empty-quorum",
            "stable-failure",
            "split-exits",
            "harness-error",
            "missing-results",
            "quorum-held"
        ]
    );
    assert_eq!(plain_words::<LedgerState>(), ["open", "closed"]);
    assert_eq!(plain_words::<FixChanged>(), ["production", "check", "both"]);
    // Admission (section 10).
    assert_eq!(
        words::<AdmitOutcome>(),
        ["admitted", "rejected", "inconclusive"]
    );
    assert_eq!(
        words::<AdmitReason>(),
        [
            "seal-differs",
            "fails-on-base",
            "unstable-on-base",
            "harness-error",
            "tautology",
            "unstable-on-mutant",
            "two-commit-proof"
        ]
    );
    assert_eq!(words::<CheckKind>(), ["property", "test"]);
    assert_eq!(words::<TierVerdict>(), ["pass", "caught", "error"]);
    // The patch gate (section 8.1).
    assert_eq!(
        words::<GateDisposition>(),
        ["MERGE_OK", "BLOCK", "ESCALATE", "STOP_QUEUE"]
    );
    assert_eq!(
        words::<GateRuleName>(),
        [
            "merge",
            "fixture-fault",
            "debt",
            "guard",
            "binary",
            "test-aware",
            "integrity",
            "build",
            "route",
            // Issue 53: the shards' facts do not make one gate.
            "shards"
        ]
    );
    // CONTRACT.md 14.2: the reading rules' classes, in the order they decide.
    assert_eq!(
        words::<patchgate::core::gate::SuspicionClass>(),
        ["probe", "overload", "special-case"]
    );
    // Issue 38: where a class points, and why a decision gives no calibration row.
    assert_eq!(
        words::<patchgate::core::ladder::Pointed>(),
        ["production", "check"]
    );
    assert_eq!(
        words::<patchgate::core::ladder::NotCalibrated>(),
        [
            "never-merged",
            "no-patch-id",
            "no-commits",
            "merged-unchanged",
            "commits-not-found",
            "no-fix-files"
        ]
    );
    // CONTRACT.md 15.2: why a changed code file is unread.
    assert_eq!(
        words::<patchgate::core::gate::UnreadReason>(),
        [
            "symbolic-link",
            "over-read-limit",
            "not-utf-8",
            "coding-cookie",
            "unparsed",
            "ambiguous-indentation",
            "skipped-extension"
        ]
    );
    // Issue 39: the merge queues a group comes from.
    assert_eq!(
        words::<patchgate::core::gate::MergeQueue>(),
        ["github-merge-group", "gitlab-merge-train"]
    );
    let reasons = words::<GateReason>();
    assert_eq!(
        reasons,
        [
            "merge-conflict",
            "seal-mismatch",
            "debt-over-cap",
            "guarded-input-edited",
            "binary-added",
            "test-aware-code",
            // CONTRACT.md 14.4: the reading's other two classes.
            "equality-overload",
            "test-input-in-code",
            // CONTRACT.md 15.2: a changed code file the reader could not read.
            "unread-code",
            "modified-during-run",
            "does-not-build",
            "harness-error",
            "checker-neutered",
            "evidence-gap",
            "behavior-and-invariant",
            "concrete-behavior",
            "invariant-or-over-specified-property",
            "frozen-test-failure",
            "inadmissible-evidence",
            "all-gates-held",
            // CONTRACT.md 11.10: re-proofs asked, none could run.
            "checker-unproven"
        ]
    );
    // Issue 35: what precisely a human must look at, on every escalation.
    assert_eq!(
        words::<patchgate::core::gate::Cause>(),
        [
            "merge-conflict",
            "seal-mismatch",
            "guarded-input-edited",
            "binary-added",
            "test-aware-code",
            "equality-overload",
            "test-input-in-code",
            "unread-code",
            "modified-during-run",
            "build-broken",
            "checker-neutered",
            "checker-cannot-fail",
            "checker-unproven",
            "scope-hit",
            "unobserved-files",
            "empty-quorum",
            "new-property",
            "flaky-property",
            "unobserved-change",
            "unobserved-branch",
            "unobserved-difference",
            "special-case",
            "unasserted-difference",
            "changed-test-fails",
            "broken-harness",
            "missing-results",
            "report-disagrees",
            "no-receipt",
            "nothing-ran",
            "skipped-tests",
            "exit-disagrees",
            "vanished-tests",
            "frozen-covers-patch",
            "gate-missing",
            // Issue 53: a shard missing, unfinished, edited or foreign.
            "shard-gap",
            // Issue 66 (CONTRACT.md 16.2), on a BLOCK: the code answers differently outside
            // the tests.
            "behaves-under-test"
        ]
    );
    // What the runner does next (`POST /gate/next`): every step of the plan (issue 34 added
    // the build and the re-proof, which the runner used to schedule itself; issue 50 the
    // replay of a split, CONTRACT.md section 15.5; issue 51 the added tests as a step of
    // their own).
    assert_eq!(
        words::<NextStep>(),
        [
            "build",
            "runs",
            "replay",
            "reproof",
            "suite",
            "added_tests",
            "rerun",
            "patch_mutants",
            "decide"
        ]
    );
    // Issue 51: the plan's work items, by kind and by the tree each runs on.
    assert_eq!(
        words::<WorkKind>(),
        [
            "build",
            "canary",
            "property_runs",
            "replay",
            "reproof",
            "suite",
            "added_tests",
            "rerun",
            "patch_mutant"
        ]
    );
    assert_eq!(
        words::<WorkTree>(),
        [
            "judged",
            "mutant",
            "where_it_failed",
            "suite_room",
            "with_added_tests",
            "patch_mutant"
        ]
    );
    // Issue 52: what an observe rule does, and what it found unobserved.
    assert_eq!(
        words::<patchgate::core::gate::ObserveRule>(),
        ["off", "listed", "required"]
    );
    assert_eq!(
        words::<patchgate::core::gate::Unobserved>(),
        ["change", "branch"]
    );
    assert_eq!(
        words::<patchgate::core::gate::MutantOperator>(),
        [
            "condition-true",
            "swap-comparison",
            "swap-arithmetic",
            "return-constant",
            "shift-integer",
            "delete-statement"
        ]
    );
    assert_eq!(
        words::<patchgate::core::gate::MutantState>(),
        ["pending", "killed", "survived", "void"]
    );
    // How the runs were isolated (section 12.2).
    assert_eq!(words::<SandboxBackend>(), ["bubblewrap", "off"]);
    // The cap a run went over, and whose uid the runs were (section 13.2, 13.3).
    assert_eq!(
        words::<patchgate::core::gate::Limit>(),
        ["over-memory", "over-pids", "over-disk"]
    );
    assert_eq!(words::<patchgate::core::gate::RoomUid>(), ["own", "runner"]);
    // Why a receipt does not vouch for a run (section 11.1).
    assert_eq!(
        words::<patchgate::core::runs::ReceiptGap>(),
        [
            "no-receipt",
            "nothing-ran",
            "skipped",
            "no-failure-listed",
            "failure-listed",
            "report-disagrees"
        ]
    );
    assert_eq!(words::<patchgate::core::gate::Receipts>(), ["on", "off"]);
    // Forge checks (section 9).
    assert_eq!(
        words::<CheckVerdict>(),
        ["pass", "fail", "unknown", "pending"]
    );
    assert_eq!(
        words::<ChecksDisposition>(),
        ["MERGE_OK", "BLOCK", "ESCALATE", "PENDING"]
    );
    // Every router attribution is a gate reason, word for word.
    for a in words::<Attribution>() {
        assert!(reasons.contains(&a), "{a}");
    }
    // Reading a word back goes through the same derive.
    for v in Verdict::VARIANTS {
        assert_eq!(Verdict::from_word(v.as_str()), Some(*v));
    }
    assert_eq!(Verdict::from_word("PASS"), None);
    assert_eq!(Verdict::from_word("passed"), None);
}
