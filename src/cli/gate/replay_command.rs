//! `patchgate replay` (issue 66; CONTRACT.md 16; docs/design/replay.md): the gate's steps on one
//! patch with `[observe]` and `[replay]` on and every replay rule `listed`, then the whole table
//! — each recorded call, its plain replays, the base's answers and what each rule would say.
//! Nothing is decided: an adopter reads it before choosing which rule to require.

use clap::Args;

use super::super::error::CliResult;
use super::super::output;
use super::{GateArgs, Planner, drive, gather};
use crate::exit::Exit;

#[derive(Debug, Args)]
pub struct ReplayArgs {
    /// (The base's config is read as the gate reads it; its `[replay]` rules are taken as
    /// `listed`, its `calls` and `neighbours` kept; `[observe]` is turned on if it is off.)
    #[command(flatten)]
    pub patch: super::super::reading::command::PatchArgs,
    /// How many runs may be under way at once (default: the number of cores).
    #[arg(long, short = 'j')]
    pub jobs: Option<std::num::NonZeroU8>,
    /// Print the behaviour facts as JSON (the `behavior` field of `POST /gate`'s body),
    /// `null` when nothing was recorded.
    #[arg(long)]
    pub json: bool,
}

pub fn run(args: ReplayArgs) -> CliResult {
    super::super::interrupt::catch()?;
    super::super::sandbox::harden_runner();
    let gate = GateArgs {
        base: Some(args.patch.base),
        at: args.patch.at,
        tier_ledger: None,
        evidence_out: None,
        json_out: None,
        markdown_out: None,
        dry_run: false,
        patch_id: None,
        merge_group: None,
        merge_train: None,
        pull_requests: Vec::new(),
        json: false,
        jobs: args.jobs,
        facts_out: None,
        shadow: false,
        decision_log: None,
        facts: None,
        shard: None,
        combine: Vec::new(),
        remote: super::super::RemoteArgs {
            server: None,
            token: None,
            timeout: std::time::Duration::from_secs(30),
        },
        listing: true,
    };
    let planner = Planner {
        remote: &gate.remote,
    };
    let gathered = gather::gather(&gate)?;
    let mut facts = gathered.facts.clone();
    drive::drive(&gate, &planner, &gathered, &mut facts)?;
    let text = match (&facts.behavior, args.json) {
        (b, true) => serde_json::to_string_pretty(b).unwrap_or_default() + "\n",
        (Some(b), false) => crate::core::gate::replay_table(b),
        (None, false) => "Nothing was replayed: the gate stopped before a run that records (a \
                          guard hit, a conflict, a seal or a debt over the cap), or no code \
                          changed.\n"
            .to_owned(),
    };
    output::stdout(&text)?;
    Ok(Exit::Go)
}
