//! `patchgate gate --dry-run`: what would run, in order, and why, as the core plans it;
//! nothing runs.

use super::super::error::CliResult;
use super::super::output;
use super::super::runner::{batched, property_argv};
use super::gather::Gathered;
use super::{GateArgs, Planner};
use crate::core::gate::{GateRuleName, NextStep, Step, step_name};
use crate::core::ladder::{T1, T2};
use crate::exit::Exit;

/// `--dry-run`: what would run, in order, and why (as the core plans it); nothing runs.
pub(super) fn dry_run(args: &GateArgs, g: &Gathered, planner: &Planner<'_>) -> CliResult {
    // The work steps as the core plans them; the optional steps the config adds (the build,
    // the canary) are said from the config before them.
    let mut facts = g.facts.clone();
    facts.configured = None;
    let plan = &planner.next(&facts)?;
    let mut out = format!(
        "patchgate gate --dry-run: base {}, head {}, config {} (from the base)\n",
        args.base.as_deref().unwrap_or_default(),
        g.head,
        args.config
    );
    // The steps known before anything runs; the later ones are the plan below.
    for step in &plan.steps {
        if matches!(
            step,
            Step::Merge { .. }
                | Step::Seal { .. }
                | Step::Debt { .. }
                | Step::Guard { .. }
                | Step::Binary { .. }
                | Step::Scope { .. }
        ) {
            let (name, summary) = step_name(step);
            out.push_str(&format!("  {name}: {summary}\n"));
        }
    }
    let p = &g.config.properties;
    let suite = g.config.suite.command.join(" ");
    if matches!(plan.next, NextStep::Runs | NextStep::Suite) {
        if let Some(build) = &g.config.build {
            out.push_str(&format!(
                "  build: would run first, once (timeout {} s): {}{}\n",
                build.timeout_s,
                build.command.join(" "),
                match (&g.cache, build.cache.is_empty()) {
                    (Some(c), _) => format!(
                        "; from the build cache of tree {} (`patchgate warm`)",
                        &c.tree[..12]
                    ),
                    (None, false) => {
                        "; no build cache yet (`patchgate warm` on the base keeps one)".to_owned()
                    }
                    (None, true) => String::new(),
                }
            ));
        }
        if let Some(canary) = &g.config.canary {
            out.push_str(&match canary.twin {
                true => "  canary: the turned twin of a property that runs (its assertions turned, under a name drawn per gate), riding in each property run; it must fail, with its failure in the receipt\n".to_owned(),
                false => format!(
                    "  canary: would run next; it must fail, with its failure in its receipt: {}\n",
                    canary.command.join(" ")
                ),
            });
        }
    }
    match plan.next {
        NextStep::Decide if plan.rule != GateRuleName::Route => {
            out.push_str(&format!(
                "  stops here: {} reason={} (gate rule {}); nothing would run\n",
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
                "  {T1}: would run {} properties {} times each (timeout {} s):\n",
                plan.property_ids.len(),
                p.runs,
                p.timeout_s
            ));
            if batched(&p.command) {
                out.push_str(&format!(
                    "    {} (each run one process; each property's outcome from its own cases)\n",
                    property_argv(&p.command, &plan.property_ids).join(" ")
                ));
            } else {
                for id in &plan.property_ids {
                    out.push_str(&format!(
                        "    {}\n",
                        property_argv(&p.command, std::slice::from_ref(id)).join(" ")
                    ));
                }
            }
            let jobs = args.jobs();
            if plan.suite_first {
                out.push_str(&format!(
                    "  {T2}: runs now, whole, as run 1 of the properties it holds (their cases in its receipt; the property command runs the others): {suite}\n"
                ));
            } else if jobs > 1 {
                out.push_str(&format!(
                    "  {T2}: started at the same time in its own copy (--jobs {jobs}), used only if {T1} passes: {suite}\n"
                ));
            } else {
                out.push_str(&format!("  {T2}: then, if {T1} passes: {suite}\n"));
            }
        }
        NextStep::Suite => out.push_str(&format!(
            "  {T1}: skipped (scope hit)\n  {T2}: would run {suite}\n"
        )),
        NextStep::Rerun => out.push_str(&format!(
            "  {T2}: would re-run without {}\n",
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
