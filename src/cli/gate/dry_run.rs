//! `patchgate gate --dry-run`: what would run, in order, and why, as the core plans it;
//! nothing runs. Every run is said on a line of its own, `  run: LABEL: COMMAND`, under the
//! label a real gate's runner gives it (and says on stderr when it ends).

use std::collections::HashSet;

use super::super::error::CliResult;
use super::super::output;
use super::super::runner::{batched, receipted};
use super::gather::Gathered;
use super::{GateArgs, Planner, jobs};
use crate::core::gate::{
    BuildFacts, CanaryFacts, Facts, GateRuleName, NextStep, PropertyRuns, Reproof, Rerun, Step,
    SuiteFacts, WorkItem, WorkKind, step_name,
};
use crate::core::ladder::{T1, T2};
use crate::core::runs::Receipt;
use crate::exit::Exit;

/// `--dry-run`: what would run, in order, and why (as the core plans it); nothing runs. The
/// plan unfolds as a gate's would: the steps known before anything runs (the reading among
/// them), then the core's work items, each said once under the label (and with the command)
/// the runner would give it, then taken to end as hoped ([`hope`]) and the core asked again:
/// the build, the canary and the property runs, the re-proof, the suite, the tests the patch
/// adds.
pub(super) fn dry_run(args: &GateArgs, g: &Gathered, planner: &Planner<'_>) -> CliResult {
    let mut facts = g.facts.clone();
    let mut plan = planner.next(&facts)?;
    let mut out = format!(
        "patchgate gate --dry-run: base {}, head {}, config {} (from the base)\n",
        args.base.as_deref().unwrap_or_default(),
        g.head,
        args.at.config
    );
    // The steps known before anything runs (the reading of the patch's code is one: it has
    // been read); the later ones are the plan below.
    for step in &plan.steps {
        if matches!(
            step,
            Step::Merge { .. }
                | Step::Seal { .. }
                | Step::Debt { .. }
                | Step::Guard { .. }
                | Step::Binary { .. }
                | Step::Scope { .. }
                | Step::TestAware { .. }
        ) {
            let (name, summary) = step_name(step);
            out.push_str(&format!("  {name}: {summary}\n"));
        }
    }
    let p = &g.config.properties;
    let mut suite = g.config.suite.command.join(" ");
    if let Some(o) = g.watched.unread() {
        // Issue 52: the suite's run is the observed one; the patch mutants follow it.
        let files = g.watched.files.len();
        suite.push_str(&format!(
            "\n    (observed: pytest with probes on the changed lines, {} watched{}; changes {}, branches {})",
            match files {
                1 => "1 changed code file".to_owned(),
                n => format!("{n} changed code files"),
            },
            match g.watched.config.map_or(0, |c| c.mutants) {
                0 => String::new(),
                n => format!(
                    "; then up to {n} patch mutants of the changed lines a test runs, each against those tests, once {T1} and {T2} pass"
                ),
            },
            <&str>::from(o.changes),
            <&str>::from(o.branches)
        ));
    }
    let first = plan.clone();
    // The plan as it unfolds: each answer's items said (each once; one that may start ahead
    // where it is first named), then taken to end as hoped, and the core asked again, until
    // it has nothing more to run, or only what follows a failure (a replay, a re-run).
    let mut said: HashSet<String> = HashSet::new();
    let mut property_runs = false;
    let jobs = args.jobs();
    for _ in 0..MAX_ASKS {
        let now: Vec<WorkItem> = plan
            .work
            .iter()
            .filter(|w| !w.speculative)
            .cloned()
            .collect();
        if now.is_empty() {
            // Nothing runs (a build aside): why.
            if said.iter().all(|id| id == "build") {
                match plan.next {
                    NextStep::Decide if plan.rule != GateRuleName::Route => {
                        out.push_str(&format!(
                            "  stops here: {} reason={} (gate rule {}); nothing more would run\n",
                            plan.disposition.as_str(),
                            plan.reason.as_str(),
                            <&str>::from(plan.rule)
                        ));
                    }
                    NextStep::Decide => {
                        out.push_str(&format!(
                        "  {T1}: no voting property is in locality: the quorum would be empty (ESCALATE), and the suite would not run\n"
                    ));
                        let unobserved = plan.steps.iter().find_map(|s| match s {
                            Step::Properties { unobserved, .. } if !unobserved.is_empty() => {
                                Some(unobserved)
                            }
                            _ => None,
                        });
                        if let Some(files) = unobserved {
                            out.push_str(&format!(
                            "  warning: no strong property observes {}: add one whose `locality` covers them (then `patchgate admit ID --mutant REF --write`), or list them under `inert` if no property could (docs)\n",
                            files.join(", ")
                        ));
                        }
                    }
                    _ => {}
                }
            }
            break;
        }
        let runs: Vec<&WorkItem> = plan
            .work
            .iter()
            .filter(|w| matches!(w.kind, WorkKind::Canary | WorkKind::PropertyRuns))
            .collect();
        let ids = runs.iter().filter(|w| w.property.is_some()).count();
        if !runs.is_empty() {
            property_runs |= ids > 0;
            out.push_str(&format!(
                "  {T1}: {ids} properties, {} runs each (timeout {} s){}\n",
                p.runs,
                p.timeout_s,
                if runs.iter().any(|w| w.kind == WorkKind::Canary) {
                    "; the canary first, which must fail, with its failure in its receipt"
                } else {
                    ""
                }
            ));
        }
        for item in plan.work.iter().filter(|w| said.insert(w.id.clone())) {
            match item.kind {
                WorkKind::Build => {
                    if let Some(build) = &g.config.build {
                        out.push_str(&format!(
                            "  run: build: {} (timeout {} s){}\n",
                            build.command.join(" "),
                            build.timeout_s,
                            match (&g.cache, build.cache.is_empty()) {
                                (Some(c), _) => format!(
                                    "; from the build cache of tree {} (`patchgate warm`)",
                                    c.tree.get(..12).unwrap_or(&c.tree)
                                ),
                                (None, false) => {
                                    "; no build cache yet (`patchgate warm` on the base keeps one)"
                                        .to_owned()
                                }
                                (None, true) => String::new(),
                            }
                        ));
                    }
                }
                WorkKind::Suite if !item.holds.is_empty() => out.push_str(&format!(
                    "  run: {T2}: now, whole, as run 1 of the properties it holds (their cases in its receipt; the property command runs the others): {suite}\n"
                )),
                WorkKind::Suite if item.speculative => {
                    let when = match jobs {
                        1 => format!("then, if {T1} passes"),
                        _ => format!(
                            "started at the same time in its own copy (--jobs {jobs}), used only if {T1} passes"
                        ),
                    };
                    out.push_str(&format!("  run: {T2}: {when}: {suite}\n"));
                }
                WorkKind::Suite => {
                    if !property_runs {
                        out.push_str(&format!("  {T1}: skipped (scope hit)\n"));
                    }
                    out.push_str(&format!("  run: {T2}: {suite}\n"));
                }
                // The runner's own jobs, from its own code: the canary's twin made as it
                // would be (in the copy, removed again) and each run labelled as the runner
                // labels it; said once, at the first of them.
                WorkKind::Canary | WorkKind::PropertyRuns => {
                    if runs.first().is_some_and(|w| w.id == item.id) {
                        let jobs::RunsStep { twin, ride, work } = jobs::of_items(g, &runs)?;
                        for job in work {
                            let (label, argv, _) = job.command(&g.config, ride.as_ref())?;
                            out.push_str(&format!("  run: {label}: {}\n", argv.join(" ")));
                            if jobs::recording(g, &job, &argv).is_some() {
                                out.push_str("    (observed: it records the changed functions' calls, made again outside the tests and on the base: [replay])\n");
                            }
                        }
                        if let Some(t) = &twin {
                            out.push_str(&format!(
                                "    (the canary is the turned twin of {}, its assertions turned, under a name drawn per gate)\n",
                                t.of
                            ));
                        }
                    }
                }
                WorkKind::Reproof => {
                    let id = item.property.as_deref().unwrap_or_default();
                    let when = match item.speculative {
                        true => "once the runs pass (started beside them with --jobs over 1)",
                        false => "once the runs pass",
                    };
                    for label in super::reproof::planned_runs(g, id)? {
                        out.push_str(&format!("  run: {label}: {when}; it must fail\n"));
                    }
                }
                WorkKind::AddedTests => {
                    if let Some((label, argv, _)) = super::suite::added_command(g) {
                        out.push_str(&format!("  run: {label}: {}\n", argv.join(" ")));
                    }
                }
                // They follow a failure: never hoped for.
                WorkKind::Replay | WorkKind::Rerun => {}
                // Made from the observed run's coverage: never in a plan before it ran.
                WorkKind::PatchMutant => {}
            }
        }
        if !now.iter().all(|w| hope(g, &mut facts, w)) {
            break;
        }
        plan = planner.next(&facts)?;
    }
    let plan = first;
    if g.config.require_admission {
        let unproven: Vec<&str> = plan
            .steps
            .iter()
            .filter_map(|s| match s {
                Step::Properties { properties, .. } => Some(properties),
                _ => None,
            })
            .flatten()
            .filter(|p| p.unproven && p.in_locality)
            .map(|p| p.id.as_str())
            .collect();
        if !unproven.is_empty() {
            out.push_str(&format!(
                "  admission is required: {} in locality without a proof would vote as weak: {}\n",
                unproven.len(),
                unproven.join(", ")
            ));
        }
    }
    output::stdout(&out)?;
    Ok(Exit::Go)
}

/// The most answers a dry run unfolds (each asks for something new).
const MAX_ASKS: usize = 32;

/// Adds to `facts` what `item` would report had it ended as hoped: a build that builds, a
/// canary that fails as it must, property runs and a suite that pass, a re-proof that catches
/// its mutant, added tests that pass; each with a receipt where the command leaves one. False
/// for what only follows a failure (a replay, a re-run): the unfolding stops there.
fn hope(g: &Gathered, facts: &mut Facts, item: &WorkItem) -> bool {
    let receipt = |failed: u64| Receipt {
        executed: 1,
        failed,
        skipped: 0,
        disagrees: None,
    };
    let p = &g.config.properties;
    let suite_receipt = receipted(&g.config.suite.command).then(|| Some(receipt(0)));
    match item.kind {
        WorkKind::Build => {
            facts.build = Some(BuildFacts {
                exit_code: Some(0),
                catch_exit_codes: g.config.build.as_ref().map(|b| b.catch.clone()),
                tail: String::new(),
            });
        }
        WorkKind::Canary => {
            facts.canary = Some(CanaryFacts {
                exit_code: Some(1),
                catch_exit_codes: g.config.canary.as_ref().map(|c| c.catch.clone()),
                receipt: Some(receipt(1)),
                ..CanaryFacts::default()
            });
        }
        WorkKind::PropertyRuns => {
            let Some(id) = item.property.clone() else {
                return false;
            };
            let from = item.from_run.unwrap_or(1);
            let runs = vec![Some(0); usize::from(p.runs)];
            facts
                .property_runs
                .get_or_insert_default()
                .insert(id.clone(), PropertyRuns { runs });
            if receipted(&p.command) {
                facts
                    .property_receipts
                    .get_or_insert_default()
                    .insert(id.clone(), vec![Some(receipt(0)); usize::from(p.runs)]);
            }
            if from > 1 {
                facts.suite_runs.push(id);
            }
            facts.batched = batched(&p.command);
        }
        WorkKind::Suite => {
            facts.fixture_suite = Some(SuiteFacts {
                exit_code: Some(0),
                failed_tests: Some(Vec::new()),
                catch_exit_codes: Some(g.config.suite.catch.clone()),
                receipt: suite_receipt,
                ..SuiteFacts::default()
            });
        }
        WorkKind::AddedTests => {
            if let Some(s) = facts.fixture_suite.as_mut() {
                s.added = Some(Rerun {
                    exit_code: Some(0),
                    failed_tests: Some(Vec::new()),
                    report_disagrees: None,
                    receipt: suite_receipt,
                });
            }
        }
        WorkKind::Reproof => {
            let Some(id) = item.property.clone() else {
                return false;
            };
            facts.reproof.push(Reproof {
                property: id,
                applied: true,
                turned: false,
                exit_code: Some(1),
                receipt: receipted(&p.command).then(|| Some(receipt(1))),
                note: None,
            });
        }
        WorkKind::Replay | WorkKind::Rerun | WorkKind::PatchMutant => return false,
    }
    true
}
