//! The t2 step (CONTRACT.md section 12.4): `fixture_check` from the suite's run, its failed
//! tests, the frozen tests, the observed run's failures run plainly (issue 64) and the tests
//! the patch changes (issue 65).

use super::request::ChangedTest;
use super::request::FixtureSuite;
use super::steps::Receipts;
use super::steps::Step;
use super::steps::plural;
use crate::core::evidence::FrozenTest;
use crate::core::ladder::TierVerdict;
use crate::core::route::Verdict;
use crate::core::runs::ReceiptGap;
use crate::core::runs::counted;
use std::collections::HashSet;

/// The changed tests of `suite` when every one of `failed` (the counted failures, none
/// frozen) is one of them, else none: one failure of a test the patch did not touch and the
/// failure stands.
fn changed_only(suite: &FixtureSuite, failed: &[String]) -> Vec<ChangedTest> {
    let changed: HashSet<&str> = suite.changed_tests.iter().map(|t| t.id.as_str()).collect();
    match !failed.is_empty() && failed.iter().all(|id| changed.contains(id.as_str())) {
        true => suite
            .changed_tests
            .iter()
            .filter(|t| failed.contains(&t.id))
            .cloned()
            .collect(),
        false => Vec::new(),
    }
}

/// The observed run's `failed` failures, run again without the observer, passed: with a
/// receipt (receipts on) of at least as many tests as failed.
fn plain_passed(suite: &FixtureSuite, failed: usize) -> bool {
    suite.plain.as_ref().is_some_and(|p| {
        p.passed()
            && p.receipt.as_ref().is_none_or(|r| {
                r.as_ref()
                    .is_some_and(|r| r.executed >= u64::try_from(failed).unwrap_or(u64::MAX))
            })
    })
}

/// The t2 step: `fixture_check` from the suite's exit code, its failed tests and the frozen
/// tests. `t1_stopped`: t1 ran and was not a pass, so an absent suite was skipped, not lost.
pub(super) fn fixture_step(
    suite: Option<&FixtureSuite>,
    t1_stopped: bool,
    frozen_tests: &[FrozenTest],
    over: Option<String>,
) -> Step {
    let Some(suite) = suite else {
        let (verdict, summary) = if t1_stopped {
            (
                Verdict::Unknown,
                "not run: the ladder stops at the first tier that does not pass",
            )
        } else {
            (
                Verdict::Missing,
                "the fixture suite did not run although nothing stopped it: its verdict is missing",
            )
        };
        return Step::Fixtures {
            ran: false,
            verdict,
            tier: None,
            exit_code: None,
            failed_tests: Vec::new(),
            discarded: Vec::new(),
            receipts: None,
            gap: None,
            vanished: Vec::new(),
            vanished_count: 0,
            disagrees: None,
            changed_tests: Vec::new(),
            summary: summary.to_owned(),
        };
    };
    let frozen: HashSet<&str> = frozen_tests.iter().map(|t| t.id.as_str()).collect();
    let listed = suite.failed_tests.as_deref().unwrap_or_default();
    let (mut discarded, mut failed): (Vec<String>, Vec<String>) = listed
        .iter()
        .cloned()
        .partition(|id| frozen.contains(id.as_str()));
    let is_catch = |c: u8| suite.catch_exit_codes.contains(c);
    // Every counted failure a test the patch changes, the base's version run (issue 65).
    let declared: Vec<ChangedTest> = changed_only(suite, &failed);
    // The suite's skips are the census's to judge (section 11.2), not each run's.
    let gap = suite
        .receipt
        .as_ref()
        .and_then(|r| counted(suite.exit_code, r.as_ref(), &suite.catch_exit_codes, true).1);
    let (verdict, tier, summary) = match suite.exit_code {
        // A report that disagrees with itself is read as neither a pass nor a failure
        // (section 11.1): nothing in it is discarded either.
        _ if suite.report_disagrees.is_some() => {
            failed = listed.to_vec();
            discarded.clear();
            (
                Verdict::Unknown,
                TierVerdict::Error,
                format!(
                    "the suite's report disagrees with itself ({}): no verdict, and no failure is discarded",
                    suite.report_disagrees.as_deref().unwrap_or_default()
                ),
            )
        }
        // No receipt vouches for the exit code: neither a pass nor a failure.
        _ if gap.is_some() => {
            failed = listed.to_vec();
            discarded.clear();
            (
                Verdict::Unknown,
                TierVerdict::Error,
                format!(
                    "the suite {} but its receipt does not vouch for it ({}): no verdict",
                    suite
                        .exit_code
                        .map_or("was killed".to_owned(), |c| format!("exited {c}")),
                    gap.map(ReceiptGap::as_str).unwrap_or_default()
                ),
            )
        }
        // Tests that failed only under the observer (issue 64): run again without it, every
        // one passed. The observer's fault, or a run the code tells apart from a plain one:
        // never the patch's failure, and never a pass.
        Some(c) if is_catch(c) && !failed.is_empty() && plain_passed(suite, failed.len()) => (
            Verdict::Unknown,
            TierVerdict::Error,
            format!(
                "{} only in the observed run (exit {c}): run again without the observer, {} passed, so the observer failed {}, or the code told the runs apart: no verdict",
                plural(failed.len(), "test failed", "tests failed"),
                if failed.len() == 1 { "it" } else { "each" },
                if failed.len() == 1 { "it" } else { "them" },
            ),
        ),
        // Every failure is a test whose definition the patch changes, run as the base has it
        // (issue 65): the patch declares a behaviour change by editing the test. Not the
        // patch's failure, and not a pass: a human decides whether the change is wanted.
        Some(c) if is_catch(c) && !declared.is_empty() => (
            Verdict::Unknown,
            TierVerdict::Error,
            format!(
                "{} (exit {c}) as the base has {}, and the patch changes {} ({}): a declared behaviour change; a human decides whether the behaviour change is wanted",
                plural(failed.len(), "test failed", "tests failed"),
                if failed.len() == 1 { "it" } else { "them" },
                if failed.len() == 1 {
                    "that test"
                } else {
                    "each of those tests"
                },
                declared
                    .iter()
                    .take(3)
                    .map(|t| t.id.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        ),
        // A listed failure no freeze explains is absorbing (section 11.10): vanished census
        // tests (a fail-fast suite stops early) only stop a pass.
        Some(c) if is_catch(c) && !failed.is_empty() && suite.vanished_count > 0 => (
            Verdict::Fail,
            TierVerdict::Caught,
            format!(
                "the fixture suite failed (exit {c}): {}; {} that passed on the base did not run here, which could only have stopped a pass",
                plural(failed.len(), "failed test counts", "failed tests count"),
                plural(
                    usize::try_from(suite.vanished_count).unwrap_or(usize::MAX),
                    "census test",
                    "census tests"
                )
            ),
        ),
        // Tests the base ran did not run: whatever else the suite says, it did not say it
        // about the tests the base has.
        _ if suite.vanished_count > 0 => {
            failed = listed.to_vec();
            discarded.clear();
            (
                Verdict::Unknown,
                TierVerdict::Error,
                format!(
                    "{} that passed on the base did not run here (absent from the report, or skipped): no verdict",
                    plural(
                        usize::try_from(suite.vanished_count).unwrap_or(usize::MAX),
                        "census test",
                        "census tests"
                    )
                ),
            )
        }
        Some(0) if listed.is_empty() => (
            Verdict::Pass,
            TierVerdict::Pass,
            if suite.receipt.is_none() {
                "the fixture suite passed (receipts: off: its exit code read as it is)".to_owned()
            } else {
                "the fixture suite passed, with a receipt".to_owned()
            },
        ),
        // The exit code and the report disagree: neither is read as the other.
        Some(0) => (
            Verdict::Unknown,
            TierVerdict::Error,
            format!(
                "the suite exited 0 but its report lists {}: the evidence disagrees with itself",
                plural(listed.len(), "failed test", "failed tests")
            ),
        ),
        Some(c) if is_catch(c) && !listed.is_empty() && failed.is_empty() => match &suite.rerun {
            Some(rerun) if rerun.passed() => (
                Verdict::Pass,
                TierVerdict::Caught,
                format!(
                    "every failure is a frozen test ({} discarded), and the suite re-run without them passed: fixture_check is pass",
                    discarded.len()
                ),
            ),
            Some(rerun) => {
                failed = std::mem::take(&mut discarded);
                (
                    Verdict::Fail,
                    TierVerdict::Caught,
                    format!(
                        "the report blames only frozen tests, but the suite re-run without them did not pass ({}): the failures count",
                        rerun
                            .exit_code
                            .map_or("killed".to_owned(), |c| format!("exit {c}"))
                    ),
                )
            }
            None => {
                failed = std::mem::take(&mut discarded);
                (
                    Verdict::Fail,
                    TierVerdict::Caught,
                    "the report blames only frozen tests, but no re-run without them was reported (`[suite] deselect`): nothing is discarded, the failures count".to_owned(),
                )
            }
        },
        Some(c) if is_catch(c) => (
            Verdict::Fail,
            TierVerdict::Caught,
            if failed.is_empty() {
                format!("the fixture suite failed (exit {c})")
            } else {
                format!(
                    "the fixture suite failed (exit {c}): {}",
                    plural(failed.len(), "failed test counts", "failed tests count")
                )
            },
        ),
        Some(c) => (
            Verdict::Unknown,
            TierVerdict::Error,
            format!("the suite exited {c}, which is not a catch: a broken harness, not a verdict"),
        ),
        None => (
            Verdict::Unknown,
            TierVerdict::Error,
            match over {
                Some(over) => format!("the suite was ended by its room, {over}: no verdict"),
                None => "the suite was killed (timeout or signal): no verdict".to_owned(),
            },
        ),
    };
    Step::Fixtures {
        ran: true,
        verdict,
        tier: Some(tier),
        exit_code: suite.exit_code,
        failed_tests: failed,
        discarded,
        receipts: Some(if suite.receipt.is_some() {
            Receipts::On
        } else {
            Receipts::Off
        }),
        gap,
        vanished: suite.vanished.clone(),
        vanished_count: suite.vanished_count,
        disagrees: suite.report_disagrees.clone().or_else(|| {
            suite
                .receipt
                .as_ref()
                .and_then(|r| r.as_ref())
                .and_then(|r| r.disagrees.clone())
                .filter(|_| gap == Some(ReceiptGap::ReportDisagrees))
        }),
        changed_tests: match verdict {
            Verdict::Unknown => declared,
            _ => Vec::new(),
        },
        summary,
    }
}
