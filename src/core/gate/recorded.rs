//! The steps the gate rules record (CONTRACT.md section 8.2): what each step saw and
//! concluded, as the answer's `steps` says it.

use super::reads::{Built, RuleFacts};
use super::request::ReproofOutcome;
use super::request::SuspicionClass;
use super::request::{GateRequest, IntegrityFinding};
use super::steps::OpenRow;
use super::steps::Step;
use super::steps::plural;
use crate::core::freeze_ledger::FreezeRow;
use crate::core::freeze_ledger::Frozen;
use crate::core::freeze_ledger::LedgerState;

/// The ledger's open rows, as the debt step lists them.
pub(super) fn open_rows(ledger: &[FreezeRow]) -> Vec<OpenRow> {
    let mut rows: Vec<OpenRow> = ledger
        .iter()
        .filter(|r| r.state == LedgerState::Open)
        .map(|r| {
            let (kind, id) = match &r.frozen {
                Frozen::Property(id) => ("property", id.clone()),
                Frozen::Test { id, .. } => ("test", id.clone()),
            };
            OpenRow {
                kind: kind.to_owned(),
                id,
                commits_since_open: r.commits_since_open,
                retire_by_commit_count: r.retire_by_commit_count,
                budget_spent: r.budget_spent(),
                owner: r.owner.clone(),
            }
        })
        .collect();
    // Spent budgets first: they are the rows to retire first (stable otherwise).
    rows.sort_by_key(|r| !r.budget_spent);
    rows
}

pub(super) fn seal_step(request: &GateRequest, facts: &RuleFacts) -> Step {
    Step::Seal {
        actual: request.seal.actual.to_hex(),
        expected: request.seal.expected.to_hex(),
        matches: facts.seal_matches,
        summary: if facts.seal_matches {
            "the fixtures match the base commit's expected seal".to_owned()
        } else {
            "the fixtures do not match the base commit's expected seal: a fixture was edited, added or removed".to_owned()
        },
    }
}

pub(super) fn debt_step(request: &GateRequest, facts: &RuleFacts) -> Step {
    let debt = facts.debt;
    let over_cap = debt.counted > debt.cap;
    Step::Debt {
        open: debt.open,
        spent: debt.spent,
        counted: debt.counted,
        cap: debt.cap,
        over_cap,
        open_rows: open_rows(&request.ledger),
        summary: format!(
            "freeze debt {} ({} open, {} with a spent budget) against a cap of {}{}",
            debt.counted,
            debt.open,
            debt.spent,
            debt.cap,
            if over_cap {
                ": the queue stops until ledger rows are retired"
            } else {
                ""
            }
        ),
    }
}

pub(super) fn guard_step(request: &GateRequest, facts: &RuleFacts) -> Step {
    let hits = &facts.guard_hits;
    Step::Guard {
        guarded: request
            .guarded
            .iter()
            .map(|g| g.as_str().to_owned())
            .collect(),
        sources: facts.sources.clone(),
        summary: if hits.is_empty() {
            "the patch edits no guarded input".to_owned()
        } else {
            format!(
                "the patch edits {}: a patch is never judged by rules it brought along",
                plural(hits.len(), "guarded input", "guarded inputs")
            )
        },
        hits: hits.clone(),
    }
}

pub(super) fn merge_step(request: &GateRequest, facts: &RuleFacts) -> Step {
    Step::Merge {
        judged: request.judged.clone(),
        conflicts: facts.conflicts.clone(),
        summary: match (&request.judged, facts.conflicts.len()) {
            (_, 0) if request.judged.is_some() => {
                "the head merges cleanly into the base: the merged tree is judged".to_owned()
            }
            (_, 0) => "the facts do not say which tree was judged".to_owned(),
            (_, n) => format!(
                "the head does not merge cleanly into the base ({}): rebase or merge the base into the patch, resolve them, and gate again",
                plural(n, "conflicting file", "conflicting files")
            ),
        },
    }
}

pub(super) fn test_aware_step(_: &GateRequest, facts: &RuleFacts) -> Step {
    let count = facts.suspicious.len();
    let class = |c: SuspicionClass| facts.suspicious.iter().filter(|s| s.class == c).count();
    let said: Vec<String> = [
        (SuspicionClass::Probe, "asks whether it is under test"),
        (SuspicionClass::Overload, "changes what a comparison means"),
        (
            SuspicionClass::SpecialCase,
            "compares against a literal the base's tests pin",
        ),
    ]
    .into_iter()
    .filter(|(c, _)| class(*c) > 0)
    .map(|(c, what)| format!("{what} ({})", plural(class(c), "hit", "hits")))
    .collect();
    Step::TestAware {
        lines: facts.suspicious.iter().take(100).cloned().collect(),
        count,
        unread: facts.unread.iter().take(100).cloned().collect(),
        summary: if !facts.unread.is_empty() && count == 0 {
            format!(
                "{} could not be read as the interpreter will: what it does under test is unknown",
                plural(
                    facts.unread.len(),
                    "changed code file",
                    "changed code files"
                )
            )
        } else if count == 0 {
            "the code the patch adds (not its tests) neither asks whether it is under test, nor changes what a comparison means, nor compares against the tests' inputs".to_owned()
        } else {
            format!(
                "the code the patch adds (not its tests), read by its syntax, {}: such code can be right under test and wrong in production, which no run can see (the runs still happen: a failure they show answers BLOCK){}",
                said.join("; "),
                match facts.unread.len() {
                    0 => String::new(),
                    n => format!(
                        "; and {} could not be read",
                        plural(n, "changed code file", "changed code files")
                    ),
                }
            )
        },
    }
}

pub(super) fn integrity_step(request: &GateRequest, _: &RuleFacts) -> Option<Step> {
    let ran = request.build.is_some()
        || request.left_behind > 0
        || request.canary.is_some()
        || !request.reproof.is_empty()
        || !request.property_runs.is_empty()
        || request.fixture_suite.is_some();
    if !ran && request.integrity.is_empty() {
        return None;
    }
    let findings = request.integrity.clone();
    let left = match request.left_behind {
        0 => String::new(),
        n => format!(
            "; {} left behind by runs, killed before any report was read",
            plural(
                usize::try_from(n).unwrap_or(usize::MAX),
                "process",
                "processes"
            )
        ),
    };
    Some(Step::Integrity {
        left_behind: request.left_behind,
        summary: match findings.first() {
            None => format!("no run changed a tracked file or the fixtures{left}"),
            Some(f) => format!(
                "{} {}: evidence from a tree the code under test rewrote proves nothing, and nothing later ran",
                f.run,
                what_it_did(f)
            ),
        },
        findings,
    })
}

/// What a run did to the copy, in words: the tracked files it changed, the files it created
/// outside the scratch directories (the first named), the fixtures' seal.
pub(super) fn what_it_did(f: &IntegrityFinding) -> String {
    let count = |n: u64| usize::try_from(n).unwrap_or(usize::MAX);
    let mut parts = Vec::new();
    if f.count > 0 {
        parts.push(format!(
            "changed {}",
            plural(count(f.count), "tracked file", "tracked files")
        ));
    }
    if f.created_count > 0 {
        parts.push(format!(
            "created {} outside the scratch directories{}",
            plural(count(f.created_count), "file", "files"),
            f.created
                .first()
                .map(|c| format!(" ({c} first)"))
                .unwrap_or_default()
        ));
    }
    if f.seal_changed {
        parts.push("changed the fixtures' seal".to_owned());
    }
    parts.join(" and ")
}

pub(super) fn build_step(request: &GateRequest, facts: &RuleFacts) -> Option<Step> {
    let build = request.build.as_ref()?;
    Some(Step::Build {
        exit_code: build.exit_code,
        tail: build.tail.clone(),
        summary: match facts.build {
            Built::Built | Built::NotRun => "the judged tree builds".to_owned(),
            Built::DoesNotBuild => format!(
                "the judged tree does not build (exit {}): the patch is wrong, whatever any property says",
                build.exit_code.unwrap_or_default()
            ),
            Built::Broken => format!(
                "the build step {}: a broken harness, not a verdict on the patch",
                match (
                    build.exit_code,
                    request
                        .room
                        .as_ref()
                        .and_then(|r| r.over("build").map(|l| r.said(l)))
                ) {
                    (Some(c), _) => format!("exited {c}, which is not a catch"),
                    (None, Some(over)) => format!("was ended by its room, {over}"),
                    (None, None) => "was killed (timeout or signal)".to_owned(),
                }
            ),
        },
    })
}

pub(super) fn canary_step(request: &GateRequest, _: &RuleFacts) -> Option<Step> {
    let canary = request.canary.as_ref()?;
    let sang = canary.sang();
    let rode = !canary.in_runs.is_empty();
    // The canary as the turned twin of a property (section 15.3), named.
    let name = match &canary.twin_of {
        Some(of) => format!("the canary (the turned twin of {of})"),
        None => "the canary".to_owned(),
    };
    Some(Step::Canary {
        exit_code: canary.exit_code,
        receipt: canary.receipt.clone(),
        failed: sang,
        summary: match (sang, rode) {
            (true, false) => {
                "the canary still fails, with its failure listed: the checker can fail".to_owned()
            }
            (true, true) => format!(
                "{name} still fails in each of the {} property runs it rode in, with its failure listed: the checker can fail",
                canary.in_runs.len()
            ),
            (false, true) => format!(
                "{name}, which fails in the base, did not fail as it must here ({}): something in this tree switches the checker off, and no pass from it counts",
                canary.why_not().unwrap_or_default()
            ),
            (false, false) => format!(
                "the canary, which fails in the base, {} here: something in this tree switches the checker off, and no pass from it counts",
                match (canary.exit_code, &canary.receipt) {
                    (None, _) => "was killed".to_owned(),
                    (Some(0), _) => "exited 0".to_owned(),
                    (Some(c), None) => format!("exited {c} without a report"),
                    (Some(c), Some(r)) if r.failed == 0 => {
                        format!("exited {c} but its report lists no failure")
                    }
                    (Some(c), Some(_)) => format!("exited {c}, which is not a catch"),
                }
            ),
        },
    })
}

pub(super) fn reproof_step(request: &GateRequest, facts: &RuleFacts) -> Option<Step> {
    if request.reproof.is_empty() {
        return None;
    }
    let tried = request.reproof.clone();
    let mut passed = Vec::new();
    let mut caught = Vec::new();
    let mut void = Vec::new();
    for r in &tried {
        match r.outcome(&request.catch_exit_codes) {
            ReproofOutcome::Passed => passed.push(r.property.as_str()),
            ReproofOutcome::Caught => caught.push(r.property.as_str()),
            ReproofOutcome::Void(why) => void.push(format!("{} ({why})", r.property)),
        }
    }
    let not_run = match void.len() {
        0 => String::new(),
        _ => format!("; not run: {}", void.join(", ")),
    };
    // `reprove = N` asks for N that ran: say when fewer did (section 11.10).
    let asked = request
        .configured
        .as_ref()
        .map_or(0, |c| usize::from(c.reprove));
    let short = if asked > passed.len() + caught.len() && !caught.is_empty() {
        format!(
            "; {asked} asked, {} ran (no other admitted property that ran on this patch is left to try)",
            passed.len() + caught.len()
        )
    } else {
        String::new()
    };
    // How the re-proofs that ran changed the check: their assertions turned, or (a compiled
    // test) their admission mutant applied.
    let turned = request
        .reproof
        .iter()
        .filter(|r| r.applied)
        .all(|r| r.turned);
    Some(Step::Reproof {
        summary: if facts.reproof_passed {
            format!(
                "{} passed on this tree with {}: here it can no longer fail, so its pass proves nothing",
                passed.join(", "),
                if turned {
                    "its assertions turned (the judged code unchanged, each assertion asking for a value that agrees with anything)"
                } else {
                    "its admission mutant applied"
                }
            )
        } else if caught.is_empty() {
            format!(
                "no re-proof could run: {}; nothing shows the checker can still fail on this tree",
                void.join(", ")
            )
        } else {
            match turned {
                true => format!(
                    "{} failed with {} assertions turned, as {} must on the judged code: the checker can still fail here{not_run}{short}",
                    caught.join(", "),
                    if caught.len() == 1 { "its" } else { "their" },
                    if caught.len() == 1 { "it" } else { "they" }
                ),
                false => format!(
                    "{} caught {} mutant: the checker can still fail here{not_run}{short}",
                    caught.join(", "),
                    if caught.len() == 1 { "its" } else { "their" }
                ),
            }
        },
        tried,
    })
}

pub(super) fn binary_step(_: &GateRequest, facts: &RuleFacts) -> Step {
    Step::Binary {
        binaries: facts.binaries.clone(),
        summary: if facts.binaries.is_empty() {
            "the patch adds no compiled or binary file".to_owned()
        } else {
            format!(
                "the patch adds {}: code no review can read, which a test might load instead of the source",
                plural(
                    facts.binaries.len(),
                    "compiled or binary file",
                    "compiled or binary files"
                )
            )
        },
    }
}
