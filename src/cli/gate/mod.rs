//! `patchgate gate`: the runner of the patch gate (CONTRACT.md section 8.2).
//!
//! It gathers the facts of one patch ([`gather`]) and has the core (or a server, `--server`)
//! plan and decide them: [`drive`] asks the core's plan for the next step, executes it and
//! reports what it saw as typed facts ([`crate::core::gate::Facts`]), until the plan says
//! `decide`; [`outputs`] writes the one decision. Its first rule: a patch is never judged by
//! rules it brought along. The config, catalog, ledger and expected seal are read from the
//! *base* commit with `git show`, and they are always guarded. Its second: the code under test
//! is hostile. What is judged is the merge of the head into the base, copied from git's
//! objects into a clean room where every run happens in a sandbox ([`super::sandbox`]). It
//! stops as soon as the answer is known: nothing runs on a conflict, a seal mismatch, debt
//! over the cap, a guard hit or a binary.
//!
//! | file | its one job |
//! |---|---|
//! | `mod.rs` | the command line, the entry, the core it asks (local or `--server`) |
//! | `gather.rs` | the base's inputs, the clean room, the facts known before anything runs; the integrity check after a run |
//! | `drive.rs` | the loop: the plan's next step, executed, its facts recorded |
//! | `jobs.rs` | the `runs` step: the canary and the property runs, up to `--jobs` at once |
//! | `reproof.rs` | the `reproof` step: one admitted property, its assertions turned (or on its mutant) |
//! | `twin.rs` | the turned twins written into a copy: the re-proof's, the canary's |
//! | `suite.rs` | the `suite` and `rerun` steps, and the suite started early in its own copy |
//! | `outputs.rs` | the one decision and everything written from it |
//! | `dry_run.rs` | `--dry-run`: the plan, said, nothing run |
//! | `replay_command.rs` | `patchgate replay`: the steps with every replay rule listed, the table printed |
//! | `census.rs`, `shadows.rs` | the census file; modules that shadow the test toolchain |
//! | `manifests.rs` | `pyproject.toml`/`Cargo.toml` read by their tables: a change that only describes the package |

mod base_census;
mod base_replay;
mod drive;
mod dry_run;
mod gather;
mod jobs;
mod manifests;
mod mutants;
mod observe;
pub(crate) mod observe_command;
mod observe_driver;
mod observe_rust;
pub(crate) use observe_command::ObserveArgs;
mod outputs;
mod patch_mutant_runs;
mod plain_program;
mod plain_replay;
pub(crate) mod replay_command;
mod rust_probed;
mod rust_replay;
pub(crate) use replay_command::ReplayArgs;
mod reproof;
mod shadows;
mod shard;
mod suite;
mod twin;

pub(crate) use base_census::{CensusLine, CensusOutcome, parse_census};
pub(crate) use twin::{without_shrinking, write_in};

use std::path::PathBuf;

use clap::Args;
use serde_json::Value;

use super::error::{CliError, CliResult};
use super::{RemoteArgs, remote};
use crate::core::freeze_ledger::DEFAULT_DEBT_CAP;
use crate::core::gate::{Facts, GateAnswer, GateDecision, GateNext, GateRequest, Phase, next_step};
use crate::core::problem::Problem;
use crate::exit::Exit;

#[derive(Debug, Args)]
pub struct GateArgs {
    /// The base the patch targets (a branch, tag or commit): the config, catalog, ledger and
    /// expected seal are read from it, never from the patch.
    #[arg(long, required_unless_present_any = ["facts", "combine"])]
    pub base: Option<String>,
    #[command(flatten)]
    pub at: super::reading::command::HeadArgs,
    /// Append one ladder-ledger row (JSONL, the tier ledger of `patchgate ladder`; not the
    /// freeze ledger) per tier reached to this file. `--ledger` is its older name.
    #[arg(long = "tier-ledger", visible_alias = "ledger")]
    pub tier_ledger: Option<PathBuf>,
    /// Write the evidence document (the `/route` body a merge bot can replay) here; only a
    /// decision the router made has one.
    #[arg(long)]
    pub evidence_out: Option<PathBuf>,
    /// Write the full JSON answer here.
    #[arg(long)]
    pub json_out: Option<PathBuf>,
    /// Write the Markdown report here (e.g. `$GITHUB_STEP_SUMMARY`; appended to, as GitHub
    /// expects, when the file exists).
    #[arg(long)]
    pub markdown_out: Option<PathBuf>,
    /// Print the plan (what would run, in order, and why) and run nothing (exit 0).
    #[arg(long)]
    pub dry_run: bool,
    /// Echoed in the answer (default: the head commit id).
    #[arg(long)]
    pub patch_id: Option<String>,
    /// The head is a GitHub merge queue's group with this ref
    /// (`refs/heads/gh-readonly-queue/main/pr-13-...`): its tree already holds the base and the
    /// queued pull requests ahead, and the answer and the report say so.
    #[arg(long, value_name = "REF", conflicts_with = "merge_train")]
    pub merge_group: Option<String>,
    /// The head is a GitLab merge train's ref (`refs/merge-requests/7/train`).
    #[arg(long, value_name = "REF")]
    pub merge_train: Option<String>,
    /// A pull (merge) request in the group or train, in queue order (repeat the flag).
    #[arg(long = "pull-request", value_name = "NUMBER", value_parser = clap::value_parser!(u32).range(1..=i64::from(i32::MAX)))]
    pub pull_requests: Vec<u32>,
    /// Print the full answer as JSON instead of the one line.
    #[arg(long)]
    pub json: bool,
    /// How many runs may be under way at once (default: the number of cores): the canary and
    /// the property runs, and the suite started beside them in its own copy (used only if the
    /// core asks for it). 1 runs each in turn in one copy, the suite only once the core asks.
    #[arg(long, short = 'j')]
    pub jobs: Option<std::num::NonZeroU8>,
    /// Write the facts gathered (the `POST /gate` body) here, to audit or replay them: written
    /// again after every step, so a gate stopped midway leaves the facts of the steps that ran.
    #[arg(long)]
    pub facts_out: Option<PathBuf>,
    /// Shadow mode (also `shadow = true` in the base's config): the real decision is made and
    /// written to every output, headed "would BLOCK" (or ESCALATE, STOP_QUEUE), and the exit
    /// code is 0 — watch the gate before it blocks anyone. The gate's own failures (64, 65,
    /// 69, 70) still fail.
    #[arg(long)]
    pub shadow: bool,
    /// Append the decision to this decision log (one JSON line, as `patchgate serve` writes
    /// it, with `"shadow":true` in shadow mode): `patchgate review FILE` over a shadow period
    /// counts what enforcing would have done. (With `--server`, the server's log has it.)
    #[arg(long)]
    pub decision_log: Option<PathBuf>,
    /// Decide a facts document (a `POST /gate` body) instead of gathering one: no git, nothing
    /// run.
    #[arg(long, conflicts_with_all = ["base", "dry_run", "tier_ledger"])]
    pub facts: Option<PathBuf>,
    /// Run this job's shard of a gate split over N CI jobs (issue 53): its share of the
    /// suite and of the rest of the work (each changed property's runs and re-proof, the
    /// canary and the added tests: issue 67), split from the base's census (balanced by the
    /// seconds it records), every shard building and gathering on its own. Its facts (`--facts-out`, required) decide nothing alone: the
    /// combine job decides once on all N (`--combine`). The answer printed is ESCALATE
    /// `evidence-gap` (a shard alone), exit 2.
    #[arg(long, value_name = "K/N", value_parser = parse_shard, requires = "facts_out", conflicts_with = "facts")]
    pub shard: Option<crate::core::gate::Shard>,
    /// Decide the N shards' facts (each written by `--shard K/N --facts-out`) once, as one
    /// gate: a shard missing, given twice, unfinished, edited (`PATCHGATE_SHARD_KEY`), or of
    /// another head, base config, split or version is ESCALATE `evidence-gap` naming it.
    #[arg(long, num_args = 1.., value_name = "FACTS", conflicts_with_all = ["base", "dry_run", "tier_ledger", "facts", "shard"])]
    pub combine: Vec<PathBuf>,
    #[command(flatten)]
    pub remote: RemoteArgs,
    /// `patchgate replay`: the base's `[replay]` rules taken as `listed`, `[observe]` on.
    #[arg(skip)]
    pub listing: bool,
}

impl GateArgs {
    /// The merge queue's group the head is, as the flags say.
    fn merge_group(&self) -> Option<crate::core::gate::MergeGroup> {
        use crate::core::gate::{MergeGroup, MergeQueue};
        let (queue, group_ref) = match (&self.merge_group, &self.merge_train) {
            (Some(r), _) => (MergeQueue::GithubMergeGroup, r),
            (None, Some(r)) => (MergeQueue::GitlabMergeTrain, r),
            (None, None) => return None,
        };
        let mut pull_requests = Vec::new();
        for n in &self.pull_requests {
            if !pull_requests.contains(n) {
                pull_requests.push(*n);
            }
        }
        Some(MergeGroup {
            queue,
            group_ref: group_ref.clone(),
            pull_requests,
        })
    }

    /// How many runs may be under way at once: `--jobs`, else the number of cores.
    fn jobs(&self) -> usize {
        self.jobs.map_or_else(
            || std::thread::available_parallelism().map_or(1, std::num::NonZero::get),
            |j| usize::from(j.get()),
        )
    }
}

/// `K/N`, as the core reads it.
fn parse_shard(text: &str) -> Result<crate::core::gate::Shard, String> {
    crate::core::gate::Shard::parse(text)
}

/// The message of facts the runner gathered that do not validate: they came from the base.
const GATHERED_INVALID: &str = "the gate's inputs (read from the base commit) are invalid:";

/// Who plans and decides for the runner: this process's core, or a server's (`--server`); named
/// `Planner`, not `Core`, so it is never taken for `crate::core` itself. Either way the same
/// code plans and decides, with the same debt cap: a remote gate runs the steps the server
/// plans.
struct Planner<'a> {
    remote: &'a RemoteArgs,
}

impl Planner<'_> {
    /// A request validated locally; an invalid one is refused field by field (65).
    fn parse(doc: &Value, invalid: &str) -> Result<GateRequest, CliError> {
        crate::core::gate::parse_gate_body(doc)
            .map_err(|errors| CliError::problem(Exit::DataErr, invalid, &Problem::invalid(errors)))
    }

    /// The next step of the plan on the facts gathered so far.
    fn next(&self, facts: &Facts) -> Result<GateNext, CliError> {
        let doc = outputs::redacted(facts);
        match &self.remote.server {
            Some(server) => {
                let body = serde_json::to_vec(&doc).unwrap_or_default();
                let reply =
                    remote::post(self.remote, server, "/gate/next", "application/json", body)?;
                if reply.status != 200 {
                    return Err(remote::failure(&reply));
                }
                serde_json::from_slice(&reply.body).map_err(|e| {
                    CliError::unavailable(format!(
                        "the server's /gate/next answer is not a plan: {e}"
                    ))
                })
            }
            None => Ok(next_step(
                &Self::parse(&doc, GATHERED_INVALID)?,
                DEFAULT_DEBT_CAP,
            )),
        }
    }

    /// The decision on every fact gathered (the server's, with `--server`).
    fn decide(&self, doc: &Value, invalid: &str) -> Result<GateAnswer, CliError> {
        let body = serde_json::to_vec(doc).unwrap_or_default();
        remote::decide::<GateDecision>(self.remote, body, |problem| {
            CliError::problem(Exit::DataErr, invalid, &problem)
        })
    }
}

pub fn run(args: GateArgs) -> CliResult {
    if !args.pull_requests.is_empty() && args.merge_group.is_none() && args.merge_train.is_none() {
        return Err(CliError::usage(
            "--pull-request names a pull request in a merge queue's group: give --merge-group or --merge-train too",
        ));
    }
    let planner = Planner {
        remote: &args.remote,
    };
    if !args.combine.is_empty() {
        // Each file as read, or why it could not be read as a shard's facts: such a file is a
        // gap the core names (`unreadable`), never dropped.
        let (mut items, mut unreadable) = (Vec::new(), Vec::new());
        for path in &args.combine {
            let read = super::read_input(path)
                .map_err(|e| format!("{}: {e}", path.display()))
                .and_then(|bytes| {
                    crate::core::json::strict_value(&bytes)
                        .map_err(|e| format!("{}: not valid JSON: {e}", path.display()))
                })
                .and_then(|doc| match crate::core::gate::parse_gate_request(&doc) {
                    Ok(_) => Ok(doc),
                    Err(e) => {
                        let first = e.into_parts().0.into_iter().next();
                        Err(format!(
                            "{}: not a gate's facts{}",
                            path.display(),
                            first.map_or(String::new(), |f| format!(
                                " ({} {})",
                                f.pointer, f.detail
                            ))
                        ))
                    }
                });
            match read {
                Ok(doc) => items.push(doc),
                Err(why) => unreadable.push(why.chars().take(1000).collect::<String>()),
            }
        }
        let doc = serde_json::to_value(crate::cli::wire::CombinedShards {
            shards: items,
            unreadable,
        })
        .unwrap_or_default();
        return outputs::finish(
            &args,
            &planner,
            &doc,
            "the shards' facts are invalid:",
            args.shadow,
        )
        .map(|(exit, _)| exit);
    }
    if let Some(path) = &args.facts {
        let bytes = super::read_input(path)
            .map_err(|e| CliError::data(format!("cannot read {}: {e}", path.display())))?;
        let doc = crate::core::json::strict_value(&bytes)
            .map_err(|e| CliError::data(format!("{} is not valid JSON: {e}", path.display())))?;
        return outputs::finish(
            &args,
            &planner,
            &doc,
            "the facts document is invalid:",
            args.shadow,
        )
        .map(|(exit, _)| exit);
    }
    // Ctrl-C kills the running check's whole group and exits 130: no test outlives the gate.
    super::interrupt::catch()?;
    super::sandbox::harden_runner();
    let started = std::time::Instant::now();
    let gathered = gather::gather(&args)?;
    let g = &gathered;
    let mut facts = g.facts.clone();
    facts
        .timings_ms
        .add(Phase::Gather, started.elapsed().as_secs_f64());
    if args.dry_run {
        return dry_run::dry_run(&args, g, &planner);
    }
    outputs::write_facts(&args, &facts)?;
    let drove = drive::drive(&args, &planner, g, &mut facts)?;
    facts
        .timings_ms
        .add(Phase::Total, started.elapsed().as_secs_f64());
    facts.left_behind = super::runner::left_behind() as u64;
    facts.room = g.room.facts(&super::runner::over_limits());
    let (checks, spent) = *g
        .checked
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if checks > 0 {
        super::progress::say(super::progress::Event::IntegrityChecked {
            checks: checks as usize,
            seconds: spent,
        });
    }
    outputs::write_final_facts(&args, &facts)?;
    let answer = outputs::finish(
        &args,
        &planner,
        &outputs::redacted(&facts),
        GATHERED_INVALID,
        args.shadow || g.config.shadow,
    );
    let exit = answer.and_then(|(exit, answer)| {
        if let Some(path) = &args.tier_ledger {
            outputs::append_rows(
                path,
                &outputs::tier_rows(&answer, drove.seconds, &g.head, &g.changed),
            )?;
        }
        Ok(exit)
    });
    // The copies removed at once, each on its own core (20,000 files take a while).
    std::thread::scope(|s| {
        if let Some(room) = drove.suite_room {
            s.spawn(move || drop(room));
        }
        drop(gathered);
    });
    exit
}
