//! What the runner does next: the gate's plan. Every step of the gate is one row of [`PLAN`],
//! first due row wins, like the gate's rules: the runner executes the step the core names and
//! reports what it saw; it never knows which step follows which (CONTRACT.md section 8.2).

use super::answer::GateDisposition;
use super::answer::GateReason;
use super::answer::GateRuleName;
use super::candidates::next_reproof;
use super::candidates::reproof_ahead;
use super::request::Configured;
use super::request::GateRequest;
use super::rules::decide_gate;
use super::steps::Step;
use super::verdicts::frozen_tests;
use super::work::{NextStep, StepWork, WorkItem, work_for};
use crate::core::quorum;
use crate::core::route::Verdict;
use crate::core::runs::counted;
use serde::Deserialize;
use serde::Serialize;
use std::collections::HashSet;
use utoipa::ToSchema;

/// The `/gate/next` answer: what to run next, and what the gate would answer on the facts
/// gathered so far (the answer to expect when `next` is `decide`). Not a decision: no
/// `decision_id`, nothing logged.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct GateNext {
    pub next: NextStep,
    /// The row of the core's plan that chose `next` (1-based).
    #[serde(default)]
    pub plan_row: u8,
    /// What to run now, item by item: the only field the runner reads to know what to run.
    /// The fields below up to `suite_first` say the same, by step.
    #[serde(default)]
    pub work: Vec<WorkItem>,
    /// With `runs`: the properties to run, in catalog order (in locality, voting, not yet
    /// run); empty otherwise.
    pub property_ids: Vec<String>,
    /// With `runs`: run the canary too (before any property run counts, section 11.5).
    #[serde(default)]
    pub canary: bool,
    /// With `replay`: the properties whose runs split, to run once more (section 15.5).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub replay: Vec<String>,
    /// With `reproof`: the admitted property to re-prove.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reprove: Option<String>,
    /// With `rerun`: the frozen tests to leave out; empty otherwise.
    #[serde(default)]
    pub deselect: Vec<String>,
    /// The suite may start now in its own copy of the tree, beside this step: it will be
    /// needed unless a run decides first, and nothing this step does can change its evidence.
    #[serde(default)]
    pub suite_beside: bool,
    /// With `runs`: the admitted property the plan will ask to re-prove once these runs pass
    /// (the same draw). The runner may start that re-proof now, beside the runs, in a copy of
    /// its own (it needs nothing they do), and report it only when `reproof` names it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reproof_ahead: Option<String>,
    /// With `runs`: the suite is the first run of the properties it holds (the base's suite
    /// runs their cases, `configured.properties_in_suite`; CONTRACT.md section 15.3): run it
    /// now (beside, `suite_beside`), the property command for runs 2 and on, and report each
    /// property's cases in the suite's receipt as its run 1 (`suite_runs`) with the suite.
    #[serde(default)]
    pub suite_first: bool,
    /// What the runner says to people now (each line once).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub say: Vec<String>,
    pub disposition: GateDisposition,
    pub rule: GateRuleName,
    pub reason: GateReason,
    /// The steps reached on these facts.
    pub steps: Vec<Step>,
}

/// What the plan's rows read, computed once from the facts and the decision on them.
pub struct Planning<'a> {
    request: &'a GateRequest,
    configured: Configured,
    /// A gate rule (not the router) decided on these facts.
    decided: bool,
    /// The decision is `unread-code` and a build step is configured that has not run: the
    /// build goes first (a file that does not build is BLOCK `does-not-build`).
    await_build: bool,
    /// In-locality voting properties that have not run, in catalog order.
    unrun: Vec<String>,
    /// The suite has not run, and t1 passed or did not apply.
    suite_due: bool,
    /// The frozen tests to leave out of a re-run, when one is due.
    rerun: Option<Vec<String>>,
    /// The next admitted property to re-prove, when one is due.
    reprove: Option<String>,
    /// The properties whose runs split and were not replayed (section 15.5).
    replay: Vec<String>,
    /// The pending patch mutants (issue 52), when the rest of the gate passed: they are the
    /// only thing left that could stop a merge.
    mutants: Vec<u32>,
    /// This gate runs the canary and the added tests: one machine does, and of a split gate's
    /// shards the one the split gave them (issue 67).
    checker: bool,
}

impl Planning<'_> {
    /// A run of the code under test is still ahead (properties, or the suite).
    fn work_ahead(&self) -> bool {
        !self.unrun.is_empty() || self.suite_due
    }
}

/// One row of the plan: the step, when it is due (in the contract's words), and the test.
pub struct PlanRow {
    pub step: NextStep,
    pub says: &'static str,
    pub due: fn(&Planning<'_>) -> bool,
}

/// The gate's steps in order; the first due row is the next step.
pub const PLAN: [PlanRow; 10] = [
    PlanRow {
        step: NextStep::Decide,
        says: "a gate rule decided on the facts so far: nothing more runs",
        due: |p| p.decided,
    },
    PlanRow {
        step: NextStep::Build,
        says: "a build step is configured and has not run, and a run of the code is ahead (or an unread code file waits for it)",
        due: |p| {
            p.configured.build && p.request.build.is_none() && (p.work_ahead() || p.await_build)
        },
    },
    PlanRow {
        step: NextStep::Runs,
        says: "in-locality properties have not run (of a split gate, those the split gave this shard); or the canary is configured, has not run, this gate runs it, and a run of the code is ahead",
        due: |p| {
            !p.unrun.is_empty()
                || (p.configured.canary
                    && p.checker
                    && p.request.canary.is_none()
                    && p.work_ahead())
        },
    },
    PlanRow {
        step: NextStep::Replay,
        says: "a property's runs split (a catch and a pass) and it was not replayed: its failing examples are tried again before it is called a flake",
        due: |p| !p.replay.is_empty(),
    },
    PlanRow {
        step: NextStep::Reproof,
        says: "t1 passed on its runs, and fewer re-proofs ran than `reprove` asks while an admitted property that ran is left",
        due: |p| p.reprove.is_some(),
    },
    PlanRow {
        step: NextStep::Suite,
        says: "the suite has not run, and t1 passed (of a split gate, on the properties the split gave this shard) or did not apply, or no locality names the changed code and the observed run may stand in",
        due: |p| p.suite_due,
    },
    PlanRow {
        step: NextStep::AddedTests,
        says: "the suite ran, and the test files the patch adds did not, and this gate runs them (of a split gate, the shard the split gave them): they run in a room of their own",
        due: |p| {
            !p.request.added_tests.is_empty()
                && p.checker
                && p.request
                    .fixture_suite
                    .as_ref()
                    .is_some_and(|s| s.added.is_none())
        },
    },
    PlanRow {
        step: NextStep::Rerun,
        says: "only open frozen tests failed the suite, it was not re-run, and the runner can leave tests out (`configured.deselect`)",
        due: |p| p.rerun.is_some() && p.configured.deselect,
    },
    PlanRow {
        step: NextStep::PatchMutants,
        says: "the observed run listed patch mutants that have not run, and t1 (of a split gate, on this shard's properties; or the observed run standing in for it) and the suite passed: whether a check kills them is all that is left",
        due: |p| !p.mutants.is_empty(),
    },
    PlanRow {
        step: NextStep::Decide,
        says: "every fact the decision needs is in",
        due: |_| true,
    },
];

/// What the gate needs next. Pure: the runner asks this (or a server's `POST /gate/next`)
/// before each step, so a local and a remote gate run the same steps.
pub fn next_step(request: &GateRequest, default_cap: u64) -> GateNext {
    let decision = decide_gate(request, default_cap);
    // Reading hits wait for the runs (CONTRACT.md section 15.5): the plan goes by what the
    // runs decide.
    let planned = super::rules::decision_for_plan(request, default_cap);
    let t1 = planned.steps.iter().find_map(|s| match s {
        Step::Properties {
            ran,
            verdict,
            properties,
            summary,
            observed_instead,
            ..
        } => Some((*ran, *verdict, properties, summary, *observed_instead)),
        _ => None,
    });
    // No locality names the changed code, and the observed run may stand in (issue 65): the
    // suite and the patch mutants run as they would after a t1 pass.
    let waiting = t1.is_some_and(|t| t.4 == Some(super::observe::ObservedInstead::Pending));
    // A split gate's shard (issues 53, 67) runs its share of the suite and the properties and
    // checker the split gave it: none of its steps waits for what another shard runs.
    let shard = request.shard.as_ref();
    let mine = |id: &str| shard.is_none_or(|s| s.runs_property(id));
    let unrun: Vec<String> = t1
        .filter(|(ran, ..)| *ran)
        .map(|(_, _, properties, ..)| {
            properties
                .iter()
                .filter(|p| p.in_locality && p.vote == quorum::Vote::No && mine(&p.id))
                .filter(|p| !request.property_runs.contains_key(&p.id))
                .map(|p| p.id.clone())
                .collect()
        })
        .unwrap_or_default();
    // t1 ran and passed on its runs (the suite may have run already, as run 1); of a split
    // gate, no in-locality property of this shard's votes against.
    let t1_passed = t1.is_some_and(|(ran, verdict, properties, ..)| {
        ran && match shard {
            None => verdict == Verdict::Pass,
            Some(_) => !properties
                .iter()
                .any(|p| p.in_locality && p.vote == quorum::Vote::No && mine(&p.id)),
        }
    });
    // t1 skipped on a scope hit, did not apply, or passed: the suite runs.
    let suite_due = request.fixture_suite.is_none()
        && (waiting || t1.is_none_or(|(ran, ..)| !ran) || t1_passed);
    let configured = request.configured.clone().unwrap_or_default();
    let await_build =
        planned.reason == GateReason::UnreadCode && configured.build && request.build.is_none();
    let replay: Vec<String> = t1
        .filter(|(ran, ..)| *ran)
        .map(|(_, _, properties, ..)| super::verdicts::replay_due(request, properties))
        .unwrap_or_default()
        .into_iter()
        .filter(|id| mine(id))
        .collect();
    // The patch mutants run last, and only when the rest passed (they can only turn a pass
    // into unknown).
    let passed = |name: &str| {
        planned.steps.iter().any(|s| match s {
            Step::Properties { verdict, .. } if name == "t1" => *verdict == Verdict::Pass,
            Step::Fixtures { verdict, .. } if name == "t2" => *verdict == Verdict::Pass,
            _ => false,
        })
    };
    let mutants: Vec<u32> = match &request.observe {
        Some(o)
            if (waiting
                || passed("t1")
                || (shard.is_some() && (t1_passed || t1.is_none_or(|(ran, ..)| !ran))))
                && passed("t2")
                && rerun_due(request).is_none() =>
        {
            o.pending()
                .filter_map(|(n, _)| u32::try_from(n).ok())
                .collect()
        }
        _ => Vec::new(),
    };
    let planning = Planning {
        request,
        replay,
        mutants,
        decided: planned.rule != GateRuleName::Route && !await_build,
        await_build,
        checker: shard.is_none_or(super::shard_facts::ShardFacts::runs_checker),
        reprove: (t1_passed && unrun.is_empty())
            .then(|| next_reproof(request, &configured))
            .flatten(),
        configured,
        rerun: rerun_due(request),
        unrun,
        suite_due,
    };
    // The last row is always due; were it ever not to be, decide.
    let (next, number) = PLAN
        .iter()
        .zip(1u8..)
        .find(|(row, _)| (row.due)(&planning))
        .map_or((NextStep::Decide, 0), |(row, n)| (row.step, n));
    let mut say = Vec::new();
    if let Some((_, _, _, summary, _)) =
        t1.filter(|_| !matches!(next, NextStep::Build | NextStep::Runs))
    {
        say.push(format!("{}: {summary}", crate::core::ladder::T1));
    }
    if next == NextStep::Decide && planning.rerun.is_some() && !planning.configured.deselect {
        say.push(format!(
            "{}: only frozen tests failed, but the base's config has no `[suite] deselect` to re-run the suite without them: nothing is discarded",
            crate::core::ladder::T2
        ));
    }
    // The suite is the first run of the properties it holds (section 15.3): it runs now, with
    // their other runs, and nothing is left out of it on the strength of a run that looked
    // different.
    let suite_first = next == NextStep::Runs
        // A shard holds the cases of the properties the split gave it (issues 64, 67): its
        // share is their run 1.
        && planning.configured.properties_in_suite
        && request.fixture_suite.is_none()
        && !planning.unrun.is_empty();
    let suite_beside =
        matches!(next, NextStep::Runs | NextStep::Reproof) && request.fixture_suite.is_none();
    if suite_first {
        say.push(format!(
            "{}: the suite runs the property cases too, so it is their run 1 (their cases in its receipt), and the property command runs the others",
            crate::core::ladder::T1
        ));
    }
    let reproof_ahead = (next == NextStep::Runs && !planning.unrun.is_empty())
        .then(|| reproof_ahead(request, &planning.configured, &planning.unrun))
        .flatten();
    let canary = next == NextStep::Runs
        && planning.checker
        && planning.configured.canary
        && request.canary.is_none()
        && planning.work_ahead();
    let work = work_for(&StepWork {
        next,
        built: request.build.is_some(),
        canary,
        property_ids: match next {
            NextStep::Runs => &planning.unrun,
            _ => &[],
        },
        suite_first,
        suite_beside,
        reproof_ahead: reproof_ahead.as_deref(),
        replay: match next {
            NextStep::Replay => &planning.replay,
            _ => &[],
        },
        reprove: planning
            .reprove
            .as_deref()
            .filter(|_| next == NextStep::Reproof),
        deselect: planning
            .rerun
            .as_deref()
            .filter(|_| next == NextStep::Rerun),
        mutants: match next {
            NextStep::PatchMutants => &planning.mutants,
            _ => &[],
        },
    });
    GateNext {
        next,
        plan_row: number,
        work,
        property_ids: match next {
            NextStep::Runs => planning.unrun.clone(),
            _ => Vec::new(),
        },
        canary,
        replay: match next {
            NextStep::Replay => planning.replay.clone(),
            _ => Vec::new(),
        },
        reprove: planning
            .reprove
            .clone()
            .filter(|_| next == NextStep::Reproof),
        deselect: match (next, &planning.rerun) {
            (NextStep::Rerun, Some(frozen)) => frozen.clone(),
            _ => Vec::new(),
        },
        // Speculative: the suite is needed once t1 passes, unless a run decides first.
        suite_beside,
        reproof_ahead,
        suite_first,
        say,
        disposition: decision.disposition,
        rule: decision.rule,
        reason: decision.reason,
        steps: decision.steps,
    }
}

/// The frozen tests to leave out of a re-run, when the suite failed with a catch, its report
/// blames only open frozen tests, and it was not re-run yet (section 12.4).
fn rerun_due(request: &GateRequest) -> Option<Vec<String>> {
    let suite = request.fixture_suite.as_ref()?;
    let listed = suite.failed_tests.as_deref()?;
    let catch = suite
        .exit_code
        .is_some_and(|c| c != 0 && suite.catch_exit_codes.contains(c));
    let vouched = suite.receipt.as_ref().is_none_or(|r| {
        counted(suite.exit_code, r.as_ref(), &suite.catch_exit_codes, true)
            .1
            .is_none()
    });
    if suite.rerun.is_some()
        || suite.report_disagrees.is_some()
        || !vouched
        || suite.vanished_count > 0
        || !catch
        || listed.is_empty()
    {
        return None;
    }
    let frozen: HashSet<String> = frozen_tests(request).into_iter().map(|t| t.id).collect();
    listed
        .iter()
        .all(|id| frozen.contains(id))
        .then(|| listed.to_vec())
}
