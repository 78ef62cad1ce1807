//! `patchgate ladder run`: the runner. Each tier in its own process group with its timeout,
//! in the gate's sealed room on the head's committed tree (never the worktree: what a tier
//! runs is the code under test), one ledger row appended per tier reached, stopping at the
//! first tier that does not pass.

use super::*;
use crate::cli::runner::Place;

pub(super) fn run(args: RunArgs) -> CliResult {
    // Ctrl-C kills the running tier's whole group and exits 130: no tier outlives the run.
    crate::cli::interrupt::catch()?;
    crate::cli::sandbox::harden_runner();
    let config = load_config(args.config.as_deref())?;
    let raw = git_changed(&args.base, &args.head)?;
    let files = to_paths(&raw)?;
    let patch = git(&[
        "rev-parse",
        "--verify",
        &format!("{}^{{commit}}", args.head),
    ])
    .map(|o| String::from_utf8_lossy(&o).trim().to_owned())
    .unwrap_or_else(|_| args.head.clone());
    let tiers: Vec<(String, bool)> = config
        .tiers
        .iter()
        .map(|t| (t.name.clone(), t.skip_on_scope_hit))
        .collect();
    let plan = ladder::plan(&files, &config.scope, &tiers);
    output::error(&format!("ladder plan: {}", plan.plan.join(" -> ")));
    let tree = git(&["rev-parse", "--verify", &format!("{}^{{tree}}", args.head)])
        .map(|o| String::from_utf8_lossy(&o).trim().to_owned())?;
    let mut sandbox = config.sandbox.clone();
    sandbox.programs = config
        .tiers
        .iter()
        .filter_map(|t| t.command.first().cloned())
        .collect();
    let room = super::super::runner::open_room(&sandbox, &tree, None)?;
    let mut ledger = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&args.ledger)
        .map_err(|e| {
            CliError::data(format!(
                "cannot open the ledger {}: {e}",
                args.ledger.display()
            ))
        })?;
    for name in &plan.plan {
        let Some(tier) = config.tiers.iter().find(|t| &t.name == name) else {
            continue;
        };
        output::error(&format!("{name}: running {}", tier.command.join(" ")));
        // Checked when the config was read.
        let limit = timeout(tier.timeout_s).map_err(CliError::data)?;
        let Ran {
            run, how, seconds, ..
        } = Run::new(name, &tier.command, limit, Place::Room(&room))
            .quiet()
            .start()?
            .ran()?;
        let verdict = TierVerdict::of_run(run, &tier.catch);
        let row = serde_json::to_string(&crate::core::ladder::TierRow {
            patch: patch.clone(),
            tier: name.clone(),
            verdict,
            seconds,
            files: Some(files.iter().map(|f| f.as_str().to_owned()).collect()),
            exit_code: run.map(i32::from),
        })
        .unwrap_or_default();
        writeln!(ledger, "{row}")
            .and_then(|()| ledger.flush())
            .map_err(|e| CliError::software(format!("cannot append to the ledger: {e}")))?;
        output::error(&format!(
            "{name}: {} ({how}, {seconds:.1} s)",
            verdict.as_str()
        ));
        match verdict {
            TierVerdict::Pass => {}
            TierVerdict::Caught => return Ok(Exit::PatchWrong),
            TierVerdict::Error => return Ok(Exit::HumanMustLook),
        }
    }
    Ok(Exit::Go)
}
