//! `patchgate ladder plan`: which tiers a diff runs, locally or from a server.

use super::*;

pub(super) fn plan(args: PlanArgs) -> CliResult {
    let raw = args.changed.resolve()?;
    let plan: Plan = if let Some(server) = &args.remote.server {
        if args.config.is_some() {
            return Err(CliError::usage(
                "--config applies to a local plan; a server plans with the article's tiers",
            ));
        }
        ask(
            &args.remote,
            server,
            "/ladder/plan",
            "application/json",
            serde_json::to_vec(&crate::cli::wire::PlanBody {
                changed_files: &raw,
            })
            .unwrap_or_default(),
        )?
    } else {
        let config = load_config(args.config.as_deref())?;
        let files = to_paths(&raw)?;
        let tiers: Vec<(String, bool)> = config
            .tiers
            .iter()
            .map(|t| (t.name.clone(), t.skip_on_scope_hit))
            .collect();
        ladder::plan(&files, &config.scope, &tiers)
    };
    if args.json {
        print_json(&plan)?;
    } else {
        let mut text = format!("plan: {}\n", plan.plan.join(" -> "));
        for hit in &plan.scope_hits {
            text.push_str(&format!("scope hit: {hit}\n"));
        }
        output::stdout(&text)?;
    }
    Ok(Exit::Go)
}
