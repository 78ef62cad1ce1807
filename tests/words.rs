//! Words ↔ enums: each enum's words come from one derive (strum, with the same rename rule as
//! serde), and this checks both agree on every variant, and that the words are the contract's
//! (written here by hand from CONTRACT.md).

use patchgate::core::catalog::Strength;
use patchgate::core::checks::{CheckVerdict, ChecksDisposition};
use patchgate::core::gate::{GateDisposition, GateReason, GateRuleName};
use patchgate::core::ladder::TierVerdict;
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
    let mut outcomes = words::<Outcome>();
    outcomes.sort_unstable();
    assert_eq!(
        outcomes,
        ["fixture_fault", "hold", "promote", "reject", "stop_queue"]
    );
    let mut votes = words::<Vote>();
    votes.sort_unstable();
    assert_eq!(
        votes,
        ["excluded", "introduced", "no", "not-in-locality", "yes"]
    );
    for state in ["pass", "fail", "flake", "missing", "not-run"] {
        assert!(words::<RunState>().contains(&state), "{state}");
    }
    assert!(words::<Reason>().contains(&"quorum-held"));
    assert_eq!(words::<TierVerdict>(), ["pass", "caught", "error"]);
    // The patch gate (section 8.1).
    assert_eq!(
        words::<GateDisposition>(),
        ["MERGE_OK", "BLOCK", "ESCALATE", "STOP_QUEUE"]
    );
    assert_eq!(
        words::<GateRuleName>(),
        ["fixture-fault", "debt", "guard", "route"]
    );
    let reasons = words::<GateReason>();
    for r in ["seal-mismatch", "debt-over-cap", "guarded-input-edited"] {
        assert!(reasons.contains(&r), "{r}");
    }
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
