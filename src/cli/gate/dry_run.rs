//! `patchgate gate --dry-run`: what would run, in order, and why, as the core plans it;
//! nothing runs. Every run is said on a line of its own, `  run: LABEL: COMMAND`, under the
//! label a real gate's runner gives it (and says on stderr when it ends).

use super::super::error::CliResult;
use super::super::output;
use super::gather::Gathered;
use super::{GateArgs, Planner, jobs};
use crate::core::gate::{BuildFacts, GateRuleName, NextStep, Step, step_name};
use crate::core::ladder::{T1, T2};
use crate::exit::Exit;

/// `--dry-run`: what would run, in order, and why (as the core plans it); nothing runs. The
/// plan unfolds as a gate's would: the steps known before anything runs (the reading among
/// them), then the core asked again as if each run passed: the build, then the runs it plans
/// (each labelled, and with the command, that the runner would give it), the re-proof and the
/// suite.
pub(super) fn dry_run(args: &GateArgs, g: &Gathered, planner: &Planner<'_>) -> CliResult {
    let mut facts = g.facts.clone();
    let mut plan = planner.next(&facts)?;
    let mut out = format!(
        "patchgate gate --dry-run: base {}, head {}, config {} (from the base)\n",
        args.base.as_deref().unwrap_or_default(),
        g.head,
        args.config
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
    let suite = g.config.suite.command.join(" ");
    // A build the plan asks for first: said, and taken to pass so the plan goes on.
    if let (NextStep::Build, Some(build)) = (plan.next, &g.config.build) {
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
                    "; no build cache yet (`patchgate warm` on the base keeps one)".to_owned()
                }
                (None, true) => String::new(),
            }
        ));
        facts.build = Some(BuildFacts {
            exit_code: Some(0),
            catch_exit_codes: Some(build.catch.clone()),
            tail: String::new(),
        });
        plan = planner.next(&facts)?;
    }
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
                Step::Properties { unobserved, .. } if !unobserved.is_empty() => Some(unobserved),
                _ => None,
            });
            if let Some(files) = unobserved {
                out.push_str(&format!(
                    "  warning: no strong property observes {}: add one whose `locality` covers them (then `patchgate admit ID --mutant REF --write`), or list them under `inert` if no property could (docs)\n",
                    files.join(", ")
                ));
            }
        }
        NextStep::Runs => {
            out.push_str(&format!(
                "  {T1}: {} properties, {} runs each (timeout {} s){}\n",
                plan.property_ids.len(),
                p.runs,
                p.timeout_s,
                if plan.canary {
                    "; the canary first, which must fail, with its failure in its receipt"
                } else {
                    ""
                }
            ));
            let jobs = args.jobs();
            if plan.suite_first {
                out.push_str(&format!(
                    "  run: {T2}: now, whole, as run 1 of the properties it holds (their cases in its receipt; the property command runs the others): {suite}\n"
                ));
            }
            // The runner's own jobs, from its own code: the canary's twin made as it would
            // be (in the copy, removed again) and each run labelled as the runner labels it.
            let jobs::RunsStep { twin, ride, work } = jobs::of_plan(g, &plan)?;
            for job in work {
                let (label, argv, _) = job.command(&g.config, ride.as_ref())?;
                out.push_str(&format!("  run: {label}: {}\n", argv.join(" ")));
            }
            if let Some(t) = &twin {
                out.push_str(&format!(
                    "    (the canary is the turned twin of {}, its assertions turned, under a name drawn per gate)\n",
                    t.of
                ));
            }
            drop(twin);
            if let Some(id) = &plan.reproof_ahead {
                for label in super::reproof::planned_runs(g, id)? {
                    out.push_str(&format!(
                        "  run: {label}: once the runs pass (started beside them with --jobs over 1); it must fail\n"
                    ));
                }
            }
            if !plan.suite_first {
                let when = match jobs {
                    1 => format!("then, if {T1} passes"),
                    _ => format!(
                        "started at the same time in its own copy (--jobs {jobs}), used only if {T1} passes"
                    ),
                };
                out.push_str(&format!("  run: {T2}: {when}: {suite}\n"));
            }
        }
        NextStep::Suite => out.push_str(&format!(
            "  {T1}: skipped (scope hit)\n  run: {T2}: {suite}\n"
        )),
        NextStep::Rerun => out.push_str(&format!(
            "  run: {T2}: re-run without {}\n",
            plan.deselect.join(", ")
        )),
        NextStep::Build | NextStep::Replay | NextStep::Reproof => {}
    }
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
