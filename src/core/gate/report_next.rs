//! The report's "What to do next": what the reader does, by disposition, and what a human
//! checks first, by the cause of an escalation.

use std::fmt::Write as _;

use super::answer::{Cause, GateAnswer, GateDisposition};
use super::report_text::{code, list, prose};
use super::steps::Step;

/// The changed files t1 found no strong property observing (an empty quorum).
fn unobserved(answer: &GateAnswer) -> &[String] {
    answer
        .steps
        .iter()
        .find_map(|s| match s {
            Step::Properties { unobserved, .. } => Some(unobserved.as_slice()),
            _ => None,
        })
        .unwrap_or(&[])
}

/// What the reader does next, by disposition.
/// What a human checks first, for each cause of an escalation.
fn what_to_check(cause: Cause) -> &'static str {
    match cause {
        Cause::SealMismatch => {
            "why the fixtures differ from the base commit's expected seal. A fixture changed in the same patch as the code it judges is the classic way to hide a bug; a legitimate fixture change lands on its own, reviewed, with its new expected seal."
        }
        Cause::MergeConflict => {
            "the conflicting files listed above. The patch does not merge cleanly into the base, so there is no tree that would land to judge: bring the base into the patch, resolve the conflicts, and gate again."
        }
        Cause::TestAwareCode => {
            "the lines listed above: code that asks whether a test runner is loaded (or leaves the process early) can be correct under test and wrong in production, which no run can see. If the line is honest (a test helper in the package, say), a human merges it; moving test code into test files keeps it out of this rule."
        }
        Cause::UnreadCode => {
            "the files listed above: the reader could not read them as the interpreter will (a symbolic link among the code, a file over the read limit, another encoding than UTF-8, a file the parser cannot parse, code under an extension the reader does not parse), so what they do under test is unknown. Make the file plain UTF-8 source the reader parses (a link replaced by the file, a long file split) and gate again; a human may merge what they have read."
        }
        Cause::EqualityOverload => {
            "the code listed above: the patch changes what a comparison means (a comparison or hash method, a subclass of a built-in value type, a hand-written `PartialEq`/`Ord`/`Hash`). An assertion compares through it, so such code can make every check agree. If the comparison is the patch's purpose, a human reviews it and merges; otherwise derive it, or leave the comparison as it was."
        }
        Cause::TestInputInCode => {
            "the literals listed above: code the patch adds compares against a value the base's tests or fixtures pin, which is how code is written to pass the tests rather than to be right. If the value is a real constant of the domain, a human merges it (or `[suspicious] allow` names the rule for that file)."
        }
        Cause::ModifiedDuringRun => {
            "the files listed above: a run of the code under test changed files it had no business writing (tracked files, the fixtures). Whatever the runs said afterwards proves nothing. Find the code that writes them."
        }
        Cause::CheckerNeutered => {
            "the canary above: a check that fails in the base did not fail in this tree. Something the patch brings (at import time, in a plugin, in the test configuration) switches the checker off or makes failures pass, and no pass from this tree can be trusted. Find what the patch does under test."
        }
        Cause::CheckerCannotFail => {
            "the re-proof above: a property that caught its admission mutant on the base passed on this tree with its assertions turned (each asking for a value that agrees with anything) or its mutant applied, so here it can no longer fail. Look for what the patch changes in what the property compares or how failures are reported (an `__eq__` or `PartialEq` that always agrees, a failure turned into a pass or a skip, a stubbed oracle, a widened tolerance)."
        }
        Cause::CheckerUnproven => {
            "the re-proof above: none of the re-proofs asked could run (a mutant that does not apply to this tree, a timeout, a report that shows nothing ran), so nothing shows the checker can still fail here. When the patch rewrote the lines a mutant touches, admit the property again on the new code (`patchgate admit ID --mutant REF --write`)."
        }
        Cause::BuildBroken => {
            "the build step above: it neither built nor failed to build (a timeout, a crash, a missing tool). That is the harness, not the patch."
        }
        Cause::BinaryAdded => {
            "the compiled or binary files listed above. No review can read them, and a test may load them instead of the source: build them in CI from reviewed source instead of committing them."
        }
        Cause::GuardedInputEdited => {
            "the guarded files listed above. The patch edits the rules that judge it (config, catalog, ledger, expected seal or a property's source); a human reviews that change on its own before the gate can trust it."
        }
        Cause::ScopeHit => {
            "the files the t0 scope step lists: the patch changes the test toolchain (test configuration, a package manifest beyond its description, a module that shadows the toolchain, fixtures), so the property tier cannot vouch for it. Review those changes; they land on their own, reviewed, before the code they judge. (Test files the base holds run as the base has them, and test files the patch adds run apart: neither is a scope hit where the config has `[suite] added`.)"
        }
        Cause::UnobservedFiles | Cause::EmptyQuorum => {
            "the quorum table above: no strong property votes on this patch (each is frozen, out of locality, or weak for want of an `admitted` record under `require_admission`). Admit the strong properties that observe these files (`patchgate admit ID --mutant REF --write`), or retire the freezes."
        }
        Cause::NewProperty => {
            "the property the patch itself brings, in its own locality: a check written with the code it judges proves nothing about it. Land the property on its own first."
        }
        Cause::FlakyProperty => {
            "the property whose runs split (one pass, one failure) on the same tree, and whose failing examples, replayed, passed: either the code under test is nondeterministic or the property is flaky. The failing case above may still be a real bug: run the property on the base (the same seal) as many times; only if the same split shows there, freeze it in the ledger, with an owner, until fixed."
        }
        Cause::UnobservedChange => {
            "the observe step above: the checks passed, and none of them ran the lines the patch changes (or the observed run's report could not be read: did the suite exit before pytest returned?), so their pass says nothing of this change. Add a test or a property that runs the changed lines (and fails if they are wrong), or review the change by hand."
        }
        Cause::UnobservedBranch => {
            "the branches listed above: the patch adds them and no check takes them, so nothing shows they are right. A branch for inputs the checks never generate (another type, another length, one pinned value) is how a patch is right only for the tests: add a case or a property that takes it."
        }
        Cause::ChangedTestFails => {
            "the changed tests listed above, the base's lines beside the patch's: each failed as the base has it, and the patch changes it, so the patch declares a behaviour change. A human decides whether the behaviour change is wanted; if it is, the test's new version lands with the code, reviewed (a failure of a test the patch did not touch would have blocked)."
        }
        Cause::BrokenHarness => {
            "the run whose exit is not a catch (or that timed out or was killed), in the steps above: a broken harness is neither a pass nor a failure. Run the command by hand on the judged tree; raise its `timeout_s` if it was too short."
        }
        Cause::MissingResults => {
            "the property whose runs are not all there: a run that did not happen is not a pass."
        }
        Cause::ReportDisagrees => {
            "the report's disagreement named above: it declares failures or errors it does not list (the forged-count attack), or has a failure outside any test case. A report that contradicts itself is evidence of nothing; find what in the patch writes or rewrites the report."
        }
        Cause::NoReceipt => {
            "the runs that left no report at their `{junit}` path: a run nobody can vouch for counts as nothing. Something exited before the report was written (an exit under test, a crashed harness), or the command does not write `{junit}`."
        }
        Cause::NothingRan => {
            "the runs whose report lists no test that ran: the test command selected nothing (a renamed test, a `case` pattern that names nothing, a collection error), or something in the patch stopped the tests from running."
        }
        Cause::SkippedTests => {
            "the skipped cases in the report: a property that is skipped is not a pass. Look for a skip marker, an `importorskip` or a condition the patch added."
        }
        Cause::ExitDisagrees => {
            "the run whose exit code and report disagree (a failure exit with no failure listed, or exit 0 with one): one of them was forced. Look for an exit under test or a hook that rewrites results."
        }
        Cause::VanishedTests => {
            "the census tests listed above: they passed on the base and did not run here (deleted, renamed, skipped, or the suite stopped early). If the patch removed or renamed them on purpose, refresh the census on the base (`patchgate census --write`) in a reviewed commit; a census written before tests were named by their binary (libtest, CONTRACT.md 11.9) is refreshed the same way. Ids that hold the clock or a random value change on every run: `census --write` runs the suite twice and names them; pin them first."
        }
        Cause::FrozenCoversPatch => {
            "the frozen tests that cover the changed files: the check that would judge this patch is frozen, so nothing judges it. Fix and unfreeze the test, or review the patch by hand."
        }
        Cause::ShardGap => {
            "the shards named above: every shard of the split gate must finish on the same head, base config, split and version, and its facts must reach the combine job as it wrote them. Re-run the missing or failed shard jobs (or the whole gate); facts from another run, or edited, are never combined."
        }
        Cause::BehavesUnderTest => {
            "the call named in the behavior step: made again in a plain program (no test runner, a fresh interpreter, its own working directory), it answered differently than under the tests. Look for code that asks how it is run (warnings filters, logging handlers, relative paths, loaded modules, the environment)."
        }
        Cause::UnobservedDifference => {
            "the input named in the behavior step: near the checks' own inputs (another sequence kind, a length or number the patch's own literals draw), the patch answers otherwise than the base, and on every input the checks pass it answers as the base does. If the new answer is meant, add a test that shows it; if not, the patch is right only where it is looked at."
        }
        Cause::SpecialCase => {
            "the recorded call named in the behavior step: the patch answers otherwise than the base on exactly the input a check passes and on none of its neighbours. Look for code that recognises that input (its value, its length, a table or data file that holds it): a fix must hold for the inputs around it too."
        }
        Cause::UnassertedDifference => {
            "the recorded call named in the behavior step: the checks ran the changed behaviour, the patch answers otherwise than the base on it, and no check tells the two apart (no test the patch adds fails on the base). Look for an assertion that does not look, an engine switched off, or a behaviour change that needs a test of its own."
        }
        Cause::GateMissing => {
            "which gate never ran (a `missing` verdict above) and why: a gate that did not run is not a pass."
        }
    }
}

pub(super) fn next(answer: &GateAnswer) -> String {
    let mut out = String::new();
    match answer.disposition {
        GateDisposition::MergeOk => {
            out.push_str("Nothing: every gate held. The merge bot may merge.\n");
        }
        GateDisposition::Block => {
            let first = match answer.reason.as_str() {
                "concrete-behavior" if answer.cause == Some(Cause::BehavesUnderTest) => {
                    "the call named in the behavior step above: the changed code answers one way under the tests and another in a plain program, so the suite's pass is not what it does"
                }
                "concrete-behavior" => {
                    "the failed tests of the fixture suite above: the patch broke a concrete case"
                }
                "invariant-or-over-specified-property" => {
                    "the property whose vote is `no` in the quorum table: either the patch broke the invariant, or the property over-specifies"
                }
                "behavior-and-invariant" => {
                    "both the failed tests and the failing property: the patch broke behaviour and an invariant"
                }
                "frozen-test-failure" => "the frozen tests named above",
                "does-not-build" => "the build output above: the code does not compile",
                _ => "the steps above",
            };
            let _ = writeln!(
                out,
                "The patch is wrong. Look first at {first}. Fix the code, not the check: a patch that edits the check, the fixtures or the catalog escalates."
            );
        }
        GateDisposition::Escalate if !unobserved(answer).is_empty() => {
            let files = unobserved(answer);
            let _ = writeln!(
                out,
                "A human must look: no strong property observes {}, so nothing vouches for the patch. (`patchgate quorum` alone calls an empty quorum a reject, exit 1; the gate escalates, exit 2: a change nothing observes is unjudged, not wrong.) Review it; then, so the next such patch is gated, add a strong property whose `locality` covers these files to the catalog and prove it (`patchgate admit ID --mutant REF --write`), or, if no property could observe them (docs, say), list them under `inert` in patchgate.toml.\n",
                if files.len() == 1 {
                    "the changed file"
                } else {
                    "these changed files"
                }
            );
            list(&mut out, files.iter().map(|f| code(f)));
        }
        GateDisposition::Escalate => {
            let what = answer.cause.map_or("the steps above.", what_to_check);
            let _ = writeln!(
                out,
                "A human must look (cause `{}`): check {what}",
                answer.cause.map_or("unknown", Cause::as_str)
            );
        }
        GateDisposition::StopQueue => {
            out.push_str("The whole queue is stopped: freeze debt is over the cap. Retire ledger rows (fix or delete the frozen checks, then close their rows) until the debt is at or under the cap. Rows to retire first:\n\n");
            if let Some(Step::Debt { open_rows, .. }) =
                answer.steps.iter().find(|s| matches!(s, Step::Debt { .. }))
            {
                list(
                    &mut out,
                    open_rows.iter().map(|r| {
                        format!(
                            "{} {}{}{}",
                            r.kind,
                            code(&r.id),
                            if r.budget_spent {
                                " — commit budget spent (counts twice)"
                            } else {
                                ""
                            },
                            r.owner
                                .as_deref()
                                .map(|o| format!(", owner {}", prose(o)))
                                .unwrap_or_default()
                        )
                    }),
                );
            }
        }
    }
    out
}
