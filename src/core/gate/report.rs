//! The gate's answer for people: one line (`Accept: text/plain`, the CLI's stdout), and a
//! Markdown report for a pull-request comment or a CI job summary (`Accept: text/markdown`,
//! `--markdown-out`). Both are read from the answer, so the server and the CLI print the same.

use std::fmt::Write as _;

use super::answer::{GateAnswer, GateDisposition};
use super::request::FailingCase;
use super::steps::Step;
use crate::core::quorum::Vote;

use super::report_text::{MAX_LISTED, code, list, prose, summary_prose};

/// `ESCALATE reason=guarded-input-edited\n`.
pub fn text_line(answer: &GateAnswer) -> String {
    format!(
        "{} reason={}\n",
        answer.disposition.as_str(),
        answer.reason.as_str()
    )
}

/// A failed test on one line: its id, and the first line of its failing case when a report
/// gave one (section 11.8), clipped to 160 characters (the whole case is under "Failing
/// cases").
fn with_case(id: &str, failures: &[FailingCase]) -> String {
    let first = failures
        .iter()
        .find(|f| f.id == id)
        .and_then(|f| f.message.lines().map(str::trim).find(|l| !l.is_empty()));
    match first {
        Some(line) => {
            let clipped: String = line.chars().take(160).collect();
            let more = if clipped.len() < line.len() {
                "…"
            } else {
                ""
            };
            format!("{} — {}{more}", code(id), prose(&clipped))
        }
        None => code(id),
    }
}

fn mark(d: GateDisposition) -> &'static str {
    match d {
        GateDisposition::MergeOk => "✅",
        GateDisposition::Block => "❌",
        GateDisposition::Escalate => "⚠️",
        GateDisposition::StopQueue => "⛔",
    }
}

/// The Markdown report: headline, evidence table, each step, the quorum table, discarded
/// frozen failures, and what to do next.
pub fn markdown(answer: &GateAnswer) -> String {
    markdown_as(answer, false)
}

/// [`markdown`]; in shadow mode (`shadow`) headed by what enforcing would do, the exit 0.
pub fn markdown_as(answer: &GateAnswer, shadow: bool) -> String {
    let mut out = String::with_capacity(4096);
    if shadow {
        let _ = writeln!(
            out,
            "## patchgate (shadow mode): would {} (exit {} when enforced; exit 0 now)\n",
            answer.disposition.as_str(),
            answer.exit_code
        );
    } else {
        let _ = writeln!(
            out,
            "## {} patchgate: {} (exit {})\n",
            mark(answer.disposition),
            answer.disposition.as_str(),
            answer.exit_code
        );
    }
    let _ = writeln!(
        out,
        "**Reason:** `{}` · **rule:** `{}`{} · decision `{}`\n",
        answer.reason.as_str(),
        <&str>::from(answer.rule),
        answer
            .patch_id
            .as_deref()
            .map(|p| format!(" · patch {}", code(p)))
            .unwrap_or_default(),
        prose(&answer.decision_id)
    );
    if let Some(g) = &answer.merge_group {
        let queue = match g.queue {
            super::request::MergeQueue::GithubMergeGroup => "merge group",
            super::request::MergeQueue::GitlabMergeTrain => "merge train",
        };
        let held = if g.pull_requests.is_empty() {
            String::new()
        } else {
            let list: Vec<String> = g.pull_requests.iter().map(|n| format!("#{n}")).collect();
            format!(", holding {}", list.join(", "))
        };
        let _ = writeln!(
            out,
            "Judged a {queue}: {}{held}; its head already holds the base and the patches ahead, so its tree is what lands.\n",
            code(&g.group_ref)
        );
    }
    if let Some(j) = &answer.judged {
        let _ = writeln!(
            out,
            "Judged: the merge of head `{}` into base `{}` (tree `{}`).\n",
            j.head, j.base, j.tree
        );
    }
    if !answer.timings_ms.is_empty() {
        let parts: Vec<String> = super::shape::TIMING_STEPS
            .iter()
            .filter_map(|k| {
                let ms = answer.timings_ms.get(*k)?;
                Some(format!("{k} {:.1} s", *ms as f64 / 1000.0))
            })
            .collect();
        let _ = writeln!(out, "Time: {}.\n", parts.join(" · "));
    }
    if answer.sandbox == Some(super::request::SandboxBackend::Off) {
        out.push_str("**sandbox: off** — the code under test ran with the runner's user and files (`[sandbox] mode = \"off\"`): it could reach the runner and the machine.\n\n");
    }
    if let Some(room) = &answer.room {
        let _ = writeln!(
            out,
            "Sealed room: the runs saw {}{}; uid `{}`; caps {} MiB memory ({}), {} processes ({}), {} MiB written ({}).\n",
            room.saw
                .iter()
                .map(|p| code(p))
                .collect::<Vec<_>>()
                .join(", "),
            if room.masked.is_empty() {
                String::new()
            } else {
                format!(
                    " (masked: {})",
                    room.masked
                        .iter()
                        .map(|p| code(p))
                        .collect::<Vec<_>>()
                        .join(", ")
                )
            },
            <&str>::from(room.uid),
            room.memory_mib,
            code(&room.held_by.memory),
            room.pids,
            code(&room.held_by.pids),
            room.disk_mib,
            code(&room.held_by.disk),
        );
        for o in &room.over {
            let _ = writeln!(
                out,
                "**Ended by the room:** {} went {}: it counts as no run (`null`).\n",
                code(&o.run),
                room.said(o.limit)
            );
        }
    }

    if let Some(ev) = &answer.evidence {
        out.push_str("| gate | verdict |\n|---|---|\n");
        for (gate, v) in [
            ("property_check", ev.property_check),
            ("fixture_check", ev.fixture_check),
            ("flaky_freeze", ev.flaky_freeze),
        ] {
            let _ = writeln!(out, "| `{gate}` | `{}` |", v.as_str());
        }
        out.push('\n');
    } else if answer.rule == super::answer::GateRuleName::Shards {
        out.push_str("The shards' facts do not make one gate: nothing they saw was decided on, and no evidence was routed.\n\n");
    } else {
        out.push_str("A gate rule decided before the router: no test ran past it, and no evidence was routed.\n\n");
    }

    out.push_str("### Steps\n\n");
    for (i, step) in answer.steps.iter().enumerate() {
        let (name, summary) = step_name(step);
        let _ = writeln!(out, "{}. **{name}**: {}", i + 1, summary_prose(summary));
    }
    out.push('\n');

    for step in &answer.steps {
        step_detail(&mut out, step, &answer.failures);
    }
    if !answer.failures.is_empty() {
        out.push_str(
            "### Failing cases

As each report gave them (clipped to 2 KiB):

",
        );
        for f in &answer.failures {
            let _ = writeln!(
                out,
                "#### {}

{}
",
                code(&f.id),
                fenced(&f.message)
            );
        }
    }

    out.push_str("### What to do next\n\n");
    out.push_str(&super::report_next::next(answer));
    out
}

/// A step's name for people (`t1 properties`), and its one-sentence summary.
pub fn step_name(step: &Step) -> (&'static str, &str) {
    match step {
        Step::Shards { summary, .. } => ("shards", summary),
        Step::Seal { summary, .. } => ("seal", summary),
        Step::Debt { summary, .. } => ("debt", summary),
        Step::Guard { summary, .. } => ("guard", summary),
        Step::Binary { summary, .. } => ("binary", summary),
        Step::Merge { summary, .. } => ("merge", summary),
        Step::TestAware { summary, .. } => ("test-aware", summary),
        Step::Integrity { summary, .. } => ("integrity", summary),
        Step::Build { summary, .. } => ("build", summary),
        Step::Canary { summary, .. } => ("canary", summary),
        Step::Reproof { summary, .. } => ("re-proof", summary),
        Step::Scope { summary, .. } => ("t0 scope", summary),
        Step::Properties { summary, .. } => ("t1 properties", summary),
        Step::Observe { summary, .. } => ("observe", summary),
        Step::Behavior { summary, .. } => ("behavior", summary),
        Step::Fixtures { summary, .. } => ("t2 fixture suite", summary),
        Step::Freeze { summary, .. } => ("freeze", summary),
        Step::Router { summary, .. } => ("router", summary),
    }
}

/// A fenced code block showing `text` as it is: the fence is longer than any run of backticks
/// inside.
fn fenced(text: &str) -> String {
    let mut longest = 0;
    let mut run = 0;
    for c in text.chars() {
        run = if c == '`' { run + 1 } else { 0 };
        longest = longest.max(run);
    }
    let fence = "`".repeat((longest + 1).max(3));
    let body = crate::core::text::visible(text);
    format!("{fence}text\n{}\n{fence}", body.trim_end())
}

fn step_detail(out: &mut String, step: &Step, failures: &[FailingCase]) {
    match step {
        Step::Shards { gaps, .. } if !gaps.is_empty() => {
            out.push_str("### The shards do not make one gate\n\n");
            list(out, gaps.iter().map(|g| prose(g)));
            out.push('\n');
        }
        Step::Integrity { findings, .. } if !findings.is_empty() => {
            out.push_str(
                "### Changed during a run

",
            );
            for f in findings {
                let _ = writeln!(
                    out,
                    "{} {}:\n",
                    prose(&f.run),
                    super::recorded::what_it_did(f)
                );
                let files: Vec<String> =
                    f.files.iter().chain(&f.created).map(|x| code(x)).collect();
                list(out, files.into_iter());
            }
            out.push('\n');
        }
        Step::Build { tail, .. } if !tail.is_empty() => {
            let _ = writeln!(out, "### Build output (last lines)\n\n{}\n", fenced(tail));
        }
        Step::Seal {
            actual,
            expected,
            matches: false,
            ..
        } => {
            let _ = writeln!(
                out,
                "### Seal\n\n- expected (base): `{expected}`\n- actual (worktree): `{actual}`\n"
            );
        }
        Step::Guard { hits, .. } if !hits.is_empty() => {
            out.push_str("### Guarded inputs edited\n\n");
            list(
                out,
                hits.iter().map(|h| {
                    let by = match &h.property {
                        Some(p) => format!("the source of property {}", code(p)),
                        None => format!("guarded path {}", code(&h.guarded_by)),
                    };
                    format!("{} ({by})", code(&h.file))
                }),
            );
            out.push('\n');
        }
        Step::Scope {
            scope_hits,
            from_base,
            added,
            ..
        } if !(scope_hits.is_empty() && from_base.is_empty() && added.is_empty()) => {
            if !scope_hits.is_empty() {
                out.push_str("### Scope hits (test-adjacent files)\n\n");
                list(out, scope_hits.iter().map(|s| code(s)));
                out.push('\n');
            }
            if !from_base.is_empty() {
                out.push_str("### Test files run as the base has them (the patch's edits to them were not run)\n\n");
                list(out, from_base.iter().map(|s| code(s)));
                out.push('\n');
            }
            if !added.is_empty() {
                out.push_str("### Test files the patch adds (run in a process of their own: they can only block)\n\n");
                list(out, added.iter().map(|s| code(s)));
                out.push('\n');
            }
        }
        Step::Properties {
            properties,
            receipts,
            unvouched,
            ..
        } => {
            let shown: Vec<_> = properties.iter().filter(|p| p.in_locality).collect();
            let others = properties.len() - shown.len();
            out.push_str("### Quorum\n\n");
            if shown.is_empty() {
                out.push_str("No catalog property observes the changed files.\n");
            } else {
                out.push_str("| property | strength | state | vote |\n|---|---|---|---|\n");
                for p in shown.iter().take(MAX_LISTED) {
                    let _ = writeln!(
                        out,
                        "| {} | {} | `{}` | **{}** |",
                        code(&p.id),
                        if p.unproven {
                            "strong, *unproven*"
                        } else {
                            p.strength.as_str()
                        },
                        p.state.as_str(),
                        p.vote.as_str()
                    );
                }
                if shown.len() > MAX_LISTED {
                    let _ = writeln!(
                        out,
                        "| … and {} more in locality | | | |",
                        shown.len() - MAX_LISTED
                    );
                }
                if shown.iter().any(|p| p.vote == Vote::Excluded) {
                    out.push_str("\nAn *excluded* property is frozen: it did not vote, and it did not pass.\n");
                }
            }
            let _ = writeln!(
                out,
                "\n{} not in locality.\n",
                super::steps::plural(others, "other property is", "other properties are")
            );
            if *receipts == Some(super::steps::Receipts::Off) {
                out.push_str("**receipts: off** — the property command has no `{junit}`: its exit codes were read as they are, with no report to vouch for them.\n\n");
            }
            if !unvouched.is_empty() {
                out.push_str("#### Runs without a receipt\n\nEach counted as `null` (a run nobody can vouch for):\n\n");
                list(
                    out,
                    unvouched.iter().map(|u| {
                        format!(
                            "{} run {}: {} — `{}`{}",
                            code(&u.property),
                            u.run,
                            u.exit_code
                                .map_or("killed".to_owned(), |c| format!("exit {c}")),
                            u.gap.as_str(),
                            u.disagrees
                                .as_deref()
                                .map(|d| format!(": {}", prose(d)))
                                .unwrap_or_default()
                        )
                    }),
                );
                out.push('\n');
            }
            let unproven: Vec<_> = properties.iter().filter(|p| p.unproven).collect();
            if !unproven.is_empty() {
                out.push_str("### Unproven strong properties\n\n");
                out.push_str("Admission is required, and these strong properties have no two-commit proof for this patch (no `admitted` in the catalog, or their mutant does not apply to this tree, the re-proof above says why): each votes as weak, so it may reject a patch but never fills the quorum. Prove one with `patchgate admit ID --mutant REF --write` (a commit that deletes its invariant), then commit the catalog.\n\n");
                list(
                    out,
                    unproven.iter().map(|p| {
                        if p.in_locality {
                            format!("{} (in locality)", code(&p.id))
                        } else {
                            code(&p.id)
                        }
                    }),
                );
                out.push('\n');
            }
        }
        Step::Fixtures {
            failed_tests,
            discarded,
            receipts,
            vanished,
            vanished_count,
            disagrees,
            changed_tests,
            ..
        } => {
            if *receipts == Some(super::steps::Receipts::Off) {
                out.push_str("**receipts: off** — the suite command has no `{junit}`: its exit code was read as it is.\n\n");
            }
            if let Some(why) = disagrees {
                let _ = writeln!(
                    out,
                    "### The suite's report disagrees with itself\n\n{}: nothing in it is read as a pass or a failure.\n",
                    prose(why)
                );
            }
            if !vanished.is_empty() {
                let _ = writeln!(
                    out,
                    "### Census tests that did not run\n\n{vanished_count} test(s) passed on the base and are absent from this run's report, or skipped:\n"
                );
                list(out, vanished.iter().map(|t| code(t)));
                out.push('\n');
            }
            if !failed_tests.is_empty() {
                out.push_str("### Failed tests\n\n");
                list(out, failed_tests.iter().map(|t| with_case(t, failures)));
                out.push('\n');
            }
            if !changed_tests.is_empty() {
                out.push_str("### Changed tests that fail as the base has them\n\nThe patch changes each of these tests; the base's version ran and failed. A human decides whether the behaviour change is wanted.\n\n");
                for t in changed_tests {
                    let _ = writeln!(
                        out,
                        "#### {}\n\nThe base has:\n\n{}\n\nThe patch has:\n\n{}\n",
                        code(&t.id),
                        fenced(&t.base),
                        fenced(&t.patch)
                    );
                }
            }
            if !discarded.is_empty() {
                out.push_str("### Discarded frozen failures\n\nThese tests failed, and an open ledger row freezes each of them: their failures do not count.\n\n");
                list(out, discarded.iter().map(|t| code(t)));
                out.push('\n');
            }
        }
        Step::Observe {
            facts: Some(facts), ..
        } => observe_detail(out, facts),
        Step::Behavior {
            facts: Some(facts), ..
        } => behavior_detail(out, facts),
        Step::Freeze { matched, .. } if !matched.is_empty() => {
            out.push_str("### Frozen tests covering this patch\n\n");
            list(out, matched.iter().map(|t| code(t)));
            out.push('\n');
        }
        Step::Merge { conflicts, .. } if !conflicts.is_empty() => {
            out.push_str("#### Conflicting files\n\n");
            list(out, conflicts.iter().map(|c| code(c)));
            out.push('\n');
        }
        Step::TestAware {
            lines,
            count,
            unread,
            ..
        } if !lines.is_empty() || !unread.is_empty() => {
            if !unread.is_empty() {
                out.push_str("#### Code files the reader could not read\n\n");
                list(
                    out,
                    unread.iter().map(|u| {
                        let mut item = format!("{}: {}", code(&u.file), u.reason.says());
                        if let Some(d) = &u.detail {
                            let _ = write!(item, " ({})", code(d));
                        }
                        item
                    }),
                );
                out.push('\n');
            }
            if !lines.is_empty() {
                out.push_str("#### Code a reviewer would flag\n\n");
                list(
                    out,
                    lines.iter().map(|l| {
                        let class: &str = l.class.into();
                        let mut item = format!(
                            "{}:{} rule {} ({class}): {}",
                            code(&l.file),
                            l.line,
                            code(&l.rule),
                            code(&l.code)
                        );
                        if let Some(p) = &l.pattern {
                            let _ = write!(item, ", matches {}", code(p));
                        }
                        if let Some(at) = &l.seen_in {
                            let _ = write!(item, ", pinned by the tests at {}", code(at));
                        }
                        item
                    }),
                );
                if *count > lines.len() {
                    let _ = writeln!(out, "- … and {} more", count - lines.len());
                }
                out.push('\n');
            }
        }
        Step::Binary { binaries, .. } if !binaries.is_empty() => {
            out.push_str("#### Compiled or binary files\n\n");
            list(out, binaries.iter().map(|c| code(c)));
            out.push('\n');
        }
        _ => {}
    }
}

/// The inputs on which the patch answers otherwise than the base, then the calls that
/// answered differently outside the tests, as a reader would check them by hand: the call, the
/// input, what each version (or the tests and a plain program) answered (issue 66).
fn behavior_detail(out: &mut String, b: &super::behavior::BehaviorFacts) {
    use super::behavior::CallState;
    let differing: Vec<(
        &super::behavior::ReplayedCall,
        &super::base_facts::Difference,
    )> = b
        .against_base
        .iter()
        .filter_map(|r| Some((b.calls.get(usize::try_from(r.call).ok()?)?, r)))
        .flat_map(|(c, r)| r.differences.iter().map(move |d| (c, d)))
        .take(20)
        .collect();
    if !differing.is_empty() {
        out.push_str("### Inputs on which the patch answers otherwise than the base

Each recorded call, and its neighbours (one argument varied by its kind), was made twice in a plain program on the base's tree and on the patch's:

");
        list(
            out,
            differing.into_iter().map(|(c, d)| {
                format!(
                    "{} with {}{}: the base {}, the patch {}",
                    code(&format!("{}:{} {}", c.file, c.line, c.function)),
                    code(&c.arguments),
                    d.input.as_ref().map_or_else(
                        || " (as recorded)".to_owned(),
                        |i| format!(", {} = {}", code(i), code(&d.arguments))
                    ),
                    code(&d.base.shown),
                    code(&d.patch.shown)
                )
            }),
        );
        out.push('\n');
    }
    let shown = |state: CallState| b.calls.iter().filter(move |c| c.state() == state);
    for (state, head) in [
        (
            CallState::BehavesUnderTest,
            "### Calls that answer differently outside the tests

Each was made by a check, then made again twice in a plain program (a fresh interpreter, no test runner, its own working directory): both plain answers agree with each other, not with the one the check saw.

",
        ),
        (
            CallState::Nondeterministic,
            "### Calls whose plain replays disagree with each other (nondeterministic, not counted)

",
        ),
    ] {
        if shown(state).next().is_none() {
            continue;
        }
        out.push_str(head);
        list(
            out,
            shown(state).take(20).collect::<Vec<_>>().into_iter().map(|c| {
                format!(
                    "{} with {} (by {}): under the tests {}, in a plain program {} and {}",
                    code(&format!("{}:{} {}", c.file, c.line, c.function)),
                    code(&c.arguments),
                    code(&c.check),
                    code(&c.recorded.shown),
                    code(c.plain_shown(0)),
                    code(c.plain_shown(1))
                )
            }),
        );
        out.push('\n');
    }
}

/// The report's part: the branches no check takes first, then the changed lines no check
/// runs, then which checks ran the others.
fn observe_detail(out: &mut String, o: &super::observe::ObserveFacts) {
    use super::observe::{
        MutantOperator, MutantState, ObservedLine, PatchMutantFacts, UntakenBranch,
    };
    use std::fmt::Write as _;
    if !o.untaken.is_empty() {
        out.push_str("### Branches the patch adds that no check takes\n\n");
        let dead: Vec<&UntakenBranch> = o.dead_branches().collect();
        let mut branches: Vec<&UntakenBranch> = o.untaken.iter().collect();
        branches.sort_by_key(|b| !dead.contains(b));
        list(
            out,
            branches.into_iter().map(|b| {
                format!(
                    "this branch of {} runs under no check (to {}){}",
                    code(&format!("{}:{}", b.file, b.line)),
                    b.to.map_or_else(|| "the function's exit".to_owned(), |t| format!("line {t}")),
                    match dead.contains(&b) {
                        true => ", and its condition can be removed and no check notices",
                        false => "",
                    }
                )
            }),
        );
        out.push('\n');
    }
    let mut survived: Vec<&PatchMutantFacts> = o
        .mutants
        .iter()
        .filter(|m| m.state == MutantState::Survived)
        .collect();
    // A condition that can be removed first: the patch's own guard no check needs.
    survived.sort_by_key(|m| m.operator != MutantOperator::ConditionTrue);
    if !survived.is_empty() {
        let _ = writeln!(
            out,
            "### Patch mutants no check kills

{} of {} patch mutants killed; these survived, each run against the checks that ran its line:
",
            o.killed(),
            o.mutants.len()
        );
        list(
            out,
            survived.iter().map(|m| {
                let says = match m.operator {
                    MutantOperator::ConditionTrue => {
                        "this condition can be removed and no check notices"
                    }
                    _ => "no check notices",
                };
                let checks: Vec<String> = m.checks.iter().map(|c| code(c)).collect();
                format!(
                    "{} ({}): {} — {says}; ran {}",
                    code(&format!("{}:{}", m.file, m.line)),
                    <&str>::from(m.operator),
                    code(&m.code),
                    checks.join(", ")
                )
            }),
        );
        out.push('\n');
    }
    let (unrun, run): (Vec<&ObservedLine>, Vec<&ObservedLine>) =
        o.lines.iter().partition(|l| l.checks.is_empty());
    if !unrun.is_empty() {
        out.push_str("### Changed code lines no check runs\n\n");
        list(
            out,
            unrun
                .iter()
                .map(|l| code(&format!("{}:{}", l.file, l.line))),
        );
        out.push('\n');
    }
    if !run.is_empty() {
        let _ = writeln!(
            out,
            "### Which checks ran the change\n\n{} of {} changed code lines ran under a check:\n",
            o.run_count, o.line_count
        );
        list(
            out,
            run.iter().map(|l| {
                let checks: Vec<String> = l.checks.iter().map(|c| code(c)).collect();
                format!(
                    "{}: {}",
                    code(&format!("{}:{}", l.file, l.line)),
                    checks.join(", ")
                )
            }),
        );
        out.push('\n');
    }
}
