//! The gate's answer for people: one line (`Accept: text/plain`, the CLI's stdout), and a
//! Markdown report for a pull-request comment or a CI job summary (`Accept: text/markdown`,
//! `--markdown-out`). Both are read from the answer, so the server and the CLI print the same.

use std::fmt::Write as _;

use super::answer::{Cause, GateAnswer, GateDisposition};
use super::request::FailingCase;
use super::steps::Step;
use crate::core::quorum::Vote;

/// Longest list the report prints in full; the rest is counted.
const MAX_LISTED: usize = 50;

/// `ESCALATE reason=guarded-input-edited\n`.
pub fn text_line(answer: &GateAnswer) -> String {
    format!(
        "{} reason={}\n",
        answer.disposition.as_str(),
        answer.reason.as_str()
    )
}

/// A Markdown code span that shows `s` as it is: control characters escaped, `|` escaped for
/// table cells, and a fence longer than any run of backticks inside.
fn code(s: &str) -> String {
    let mut shown = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '|' => shown.push_str("\\|"),
            '\n' | '\t' => shown.extend(c.escape_default()),
            c => shown.push_str(&crate::core::text::visible(c.encode_utf8(&mut [0; 4]))),
        }
    }
    let mut longest = 0;
    let mut run = 0;
    for c in shown.chars() {
        run = if c == '`' { run + 1 } else { 0 };
        longest = longest.max(run);
    }
    let fence = "`".repeat(longest + 1);
    let pad = if longest > 0 { " " } else { "" };
    format!("{fence}{pad}{shown}{pad}{fence}")
}

/// Plain text for Markdown prose: characters Markdown would read as markup are escaped.
fn prose(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if matches!(
            c,
            '\\' | '`' | '*' | '_' | '[' | ']' | '<' | '>' | '|' | '#'
        ) {
            out.push('\\');
        }
        match c {
            '\n' | '\t' => out.extend(c.escape_default()),
            c => out.push_str(&crate::core::text::visible(c.encode_utf8(&mut [0; 4]))),
        }
    }
    out
}

/// A step's summary for Markdown: its own code spans (a pair of backticks, as the summaries
/// write `[suite] deselect`) shown as code, the rest as [`prose`]; an unpaired backtick is
/// escaped.
fn summary_prose(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 8);
    let mut rest = s;
    while let Some(open) = rest.find('`') {
        let after = &rest[open + 1..];
        let Some(close) = after.find('`').filter(|&c| c > 0) else {
            break;
        };
        out.push_str(&prose(&rest[..open]));
        out.push_str(&code(&after[..close]));
        rest = &after[close + 1..];
    }
    out.push_str(&prose(rest));
    out
}

fn list(out: &mut String, items: impl ExactSizeIterator<Item = String>) {
    let n = items.len();
    for item in items.take(MAX_LISTED) {
        let _ = writeln!(out, "- {item}");
    }
    if n > MAX_LISTED {
        let _ = writeln!(out, "- … and {} more", n - MAX_LISTED);
    }
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
    out.push_str(&next(answer));
    out
}

/// A step's name for people (`t1 properties`), and its one-sentence summary.
pub fn step_name(step: &Step) -> (&'static str, &str) {
    match step {
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
        Step::Integrity { findings, .. } if !findings.is_empty() => {
            out.push_str(
                "### Changed during a run

",
            );
            for f in findings {
                let _ = writeln!(
                    out,
                    "{} changed {} tracked file(s){}:\n",
                    prose(&f.run),
                    f.count,
                    if f.seal_changed {
                        " and the fixtures' seal"
                    } else {
                        ""
                    }
                );
                list(out, f.files.iter().map(|x| code(x)));
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
            if !discarded.is_empty() {
                out.push_str("### Discarded frozen failures\n\nThese tests failed, and an open ledger row freezes each of them: their failures do not count.\n\n");
                list(out, discarded.iter().map(|t| code(t)));
                out.push('\n');
            }
        }
        Step::Observe {
            facts: Some(facts), ..
        } => observe_detail(out, facts),
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
        Cause::GateMissing => {
            "which gate never ran (a `missing` verdict above) and why: a gate that did not run is not a pass."
        }
    }
}

fn next(answer: &GateAnswer) -> String {
    let mut out = String::new();
    match answer.disposition {
        GateDisposition::MergeOk => {
            out.push_str("Nothing: every gate held. The merge bot may merge.\n");
        }
        GateDisposition::Block => {
            let first = match answer.reason.as_str() {
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
