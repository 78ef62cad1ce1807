//! The base's tests judge; the tests a patch adds add evidence (issue 50). A changed test file
//! the base holds runs as the base has it (the patch's edits are reported, not run, as
//! SWE-bench's harness resets test files); a test file the patch adds runs in a process of its
//! own and can only block. Neither is a scope hit. What counts as a test file here is narrow:
//! test-adjacent by path, not part of the test toolchain (conftest, pytest/tox config,
//! `pyproject.toml`, `Cargo.toml`, `build.rs`... stay scope hits), not a module that shadows
//! the toolchain, and not under a `fixtures` directory (the seal judges fixtures). The facts
//! must name a file (`tests_from_base`, `added_tests`) for it to be judged apart: a runner
//! that does not say stays with the scope hit.

use super::request::GateRequest;
use super::steps::Step;
use super::steps::plural;
use crate::core::ladder::ScopeMarkers;
use crate::core::ladder::TierVerdict;
use crate::core::ladder::is_toolchain_file;
use crate::core::path::RepoPath;
use crate::core::route::Verdict;
use crate::core::runs::counted;
use std::collections::HashSet;

/// Whether a change to `path` may be judged apart from the scope: a test file, as above.
pub fn is_test_file(path: &RepoPath, markers: &ScopeMarkers) -> bool {
    markers.is_test_adjacent(path)
        && !is_toolchain_file(path)
        && !path.segments().any(|s| s == "fixtures")
}

/// Changed package manifests the facts say change only what describes the package, and
/// that are manifests by name (or Python and Rust files whose only change is their
/// `__version__` string or their plain comments, issue 65): no scope hit, and no code a
/// property need observe.
pub(super) fn described(request: &GateRequest) -> Vec<&RepoPath> {
    let changed: HashSet<&RepoPath> = request.changed_files.iter().collect();
    request
        .metadata_only
        .iter()
        .filter(|f| changed.contains(f))
        .filter(|f| {
            f.segments().last().is_some_and(|b| {
                matches!(
                    b,
                    "pyproject.toml" | "Cargo.toml" | "package.json" | "setup.cfg"
                ) || b.ends_with(".py")
                    || b.ends_with(".rs")
            })
        })
        .collect()
}

/// A file no interpreter or test runner loads (issue 65): a type stub (`*.pyi`, read by type
/// checkers only) or the `py.typed` marker. A change to one needs no property, and is no
/// scope hit; the reading still reads it.
pub(super) fn never_run(path: &RepoPath) -> bool {
    path.segments()
        .last()
        .is_some_and(|b| b.ends_with(".pyi") || b == "py.typed")
}

/// The changed files the facts say were judged apart and may be: those run as the base has
/// them, and those the patch adds.
pub(super) fn judged_apart<'r>(
    request: &'r GateRequest,
    markers: &ScopeMarkers,
) -> (Vec<&'r RepoPath>, Vec<&'r RepoPath>) {
    let shadows: HashSet<&RepoPath> = request.shadows.iter().collect();
    let changed: HashSet<&RepoPath> = request.changed_files.iter().collect();
    let keep =
        |f: &&RepoPath| changed.contains(f) && !shadows.contains(f) && is_test_file(f, markers);
    (
        request.tests_from_base.iter().filter(keep).collect(),
        request.added_tests.iter().filter(keep).collect(),
    )
}

/// What the scope step adds to its summary about the files judged apart: `tests` test files
/// run as the base has them, `in_file` source files whose test lines did, `added` test files
/// the patch adds run apart.
pub(super) fn said(tests: usize, in_file: usize, added: usize) -> String {
    let mut parts = Vec::new();
    if tests > 0 {
        parts.push(format!(
            "{} as the base has them: the patch's edits to them are reported, not run",
            plural(tests, "changed test file runs", "changed test files run")
        ));
    }
    if in_file > 0 {
        parts.push(format!(
            "the test lines of {} (test modules, test functions, doctests) run as the base has them",
            plural(in_file, "changed source file", "changed source files")
        ));
    }
    if added > 0 {
        parts.push(format!(
            "{} in a process of their own, and can only block",
            plural(
                added,
                "test file the patch adds runs",
                "test files the patch adds run"
            )
        ));
    }
    match parts.is_empty() {
        true => String::new(),
        false => format!(" ({})", parts.join("; ")),
    }
}

/// The fixture step with the run of the tests the patch adds folded in: a failure its receipt
/// vouches for fails it; a run that did not happen while the suite passed leaves it unknown;
/// anything else it showed passes nothing and is said.
pub(super) fn with_added(request: &GateRequest, added: usize, mut step: Step) -> Step {
    let Some(suite) = request.fixture_suite.as_ref() else {
        return step;
    };
    if added == 0 {
        return step;
    }
    let Step::Fixtures {
        ran: true,
        verdict,
        tier,
        failed_tests,
        summary,
        ..
    } = &mut step
    else {
        return step;
    };
    let files = plural(
        added,
        "test file the patch adds",
        "test files the patch adds",
    );
    let Some(run) = suite.added.as_ref() else {
        if *verdict == Verdict::Pass {
            *verdict = Verdict::Unknown;
            *tier = Some(TierVerdict::Error);
            summary.push_str(&format!(
                "; the {files} did not run (`fixture_suite.added` is absent): no verdict"
            ));
        }
        return step;
    };
    let listed = run.failed_tests.as_deref().unwrap_or_default();
    let vouched = run.receipt.as_ref().is_none_or(|r| {
        counted(run.exit_code, r.as_ref(), &suite.catch_exit_codes, true)
            .1
            .is_none()
    });
    let caught = run
        .exit_code
        .is_some_and(|c| c != 0 && suite.catch_exit_codes.contains(c));
    if caught && vouched && run.report_disagrees.is_none() && !listed.is_empty() {
        *verdict = Verdict::Fail;
        *tier = Some(TierVerdict::Caught);
        for id in listed {
            if !failed_tests.contains(id) {
                failed_tests.push(id.clone());
            }
        }
        summary.push_str(&format!(
            "; the {files}, run in a process of their own, failed: {}",
            plural(listed.len(), "failed test counts", "failed tests count")
        ));
    } else if run.passed() {
        summary.push_str(&format!(
            "; the {files}, run in a process of their own, passed (they can only block)"
        ));
    } else if caught
        && listed.is_empty()
        && run.report_disagrees.is_none()
        && run.receipt.as_ref().is_none_or(Option::is_none)
    {
        // Issue 64: the run failed as the runner saw it end (its exit a catch), and no report
        // could be read to say which test (receipts off, or one too large or broken to read):
        // evidence of a failure, never of nothing.
        *verdict = Verdict::Fail;
        *tier = Some(TierVerdict::Caught);
        summary.push_str(&format!(
            "; the {files}, run in a process of their own, failed (exit {}) and no report could be read to name the test: counted as a failure",
            run.exit_code.unwrap_or_default()
        ));
    } else {
        // Anything else that did not pass (killed, a broken harness, a report that disagrees
        // with its exit): nothing vouches for how they ended, so no pass either.
        if *verdict == Verdict::Pass {
            *verdict = Verdict::Unknown;
            *tier = Some(TierVerdict::Error);
        }
        summary.push_str(&format!(
            "; the {files}, run in a process of their own, did not pass and no receipt vouches for how they ended ({}): no verdict",
            run.exit_code
                .map_or("killed".to_owned(), |c| format!("exit {c}"))
        ));
    }
    step
}
