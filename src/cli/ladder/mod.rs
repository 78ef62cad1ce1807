//! `patchgate ladder plan|run|report`, `patchgate freeze`, `patchgate review`,
//! `patchgate calibrate`: the ladder where the code is. The service stays stateless; the CLI
//! runs the tiers as real subprocesses and appends the ledger.

use std::io::Write;
use std::path::{Path, PathBuf};

use clap::{Args, Subcommand};
use serde::Deserialize;
use serde::de::DeserializeOwned;

use super::error::{CliError, CliResult};
use super::git::{git, git_changed};
use super::runner::{Ran, Run, timeout};
use super::{ChangedFilesArgs, RemoteArgs, output, read_input, remote};
use crate::core::ladder::{
    self, CalibrationClass, FreezeAnswer, Plan, Report, Review, ScopeMarkers, TierVerdict,
};
use crate::core::path::RepoPath;
use crate::core::problem::Problem;
use crate::core::problem::quoted;
use crate::core::runs::CatchCodes;
use crate::exit::Exit;

#[derive(Debug, Subcommand)]
pub enum LadderCommand {
    /// Plan the tiers for a diff (exit 0).
    #[command(after_help = super::exits!("0 planned"))]
    Plan(PlanArgs),
    /// Run the planned tiers, append one ledger row per tier reached (exit 0 all pass, 1 caught, 2 error).
    #[command(after_help = super::exits!("0 every tier passed, 1 a tier caught the patch, 2 a tier errored (a broken harness or a timeout); 130 interrupted (the running tier's process group killed)"))]
    Run(RunArgs),
    /// The yield report of a ledger (a table, or --json).
    #[command(after_help = super::exits!("0 reported"))]
    Report(ReportArgs),
}

#[derive(Debug, Args)]
pub struct PlanArgs {
    #[command(flatten)]
    pub changed: ChangedFilesArgs,
    /// The ladder config (TOML, e.g. ladder.toml); without it, two tiers: t1-properties (`pytest -q tests/properties -x`, 120 s, skipped on a scope hit) and t2-fixtures (`pytest -q -p no:randomly`, 900 s).
    #[arg(long)]
    pub config: Option<PathBuf>,
    /// Print the full answer as JSON instead of the table.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub remote: RemoteArgs,
}

#[derive(Debug, Args)]
pub struct RunArgs {
    /// The base the patch targets: the changed files are `git diff --name-only BASE...HEAD`.
    #[arg(long)]
    pub base: String,
    /// The patch's head commit (e.g. HEAD); its id is the `patch` of each ledger row.
    #[arg(long)]
    pub head: String,
    /// The JSONL ledger to append to.
    #[arg(long)]
    pub ledger: PathBuf,
    /// The ladder config (TOML, e.g. ladder.toml); without it, two tiers: t1-properties (`pytest -q tests/properties -x`, 120 s, skipped on a scope hit) and t2-fixtures (`pytest -q -p no:randomly`, 900 s).
    #[arg(long)]
    pub config: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct ReportArgs {
    /// The JSONL ledger (`-` for stdin).
    pub ledger: PathBuf,
    /// Print the full answer as JSON instead of the table.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub remote: RemoteArgs,
}

#[derive(Debug, Args)]
pub struct FreezeArgs {
    /// The test's outcomes, oldest first: a JSON array of booleans, or one `true`/`false` a line.
    #[arg(long)]
    pub outcomes: PathBuf,
    /// The test caught a deliberately seeded bug. Give its proof to back the claim: the
    /// answer `patchgate admit --test ID --mutant REF --json` printed when it admitted the test
    /// (it passed on the base and failed on the mutant, same fixtures).
    #[arg(long, value_name = "PROOF", num_args = 0..=1)]
    pub caught_seeded_bug: Option<Option<PathBuf>>,
    /// Fewest outcomes before a verdict (default 20; at least 2).
    #[arg(long)]
    pub min_runs: Option<u64>,
    /// Least flip rate (flips between consecutive outcomes / (runs - 1)) that is flaky
    /// (default 0.02).
    #[arg(long)]
    pub min_flip_rate: Option<f64>,
    /// Print the full answer as JSON instead of the table.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub remote: RemoteArgs,
}

// ---------------------------------------------------------------------------------------------
// Config

/// `ladder.toml`. Every key optional; the defaults are the article's.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    #[serde(default)]
    pub scope: ScopeMarkers,
    #[serde(default = "default_tiers", rename = "tier")]
    pub tiers: Vec<TierConfig>,
    /// Where the tiers run: the gate's sealed room, on the head's committed tree
    /// (CONTRACT.md sections 12.2 and 13), as `patchgate.toml`'s `[sandbox]` says it.
    #[serde(default)]
    pub sandbox: crate::cli::sandbox::SandboxConfig,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TierConfig {
    pub name: String,
    /// argv: the program and its arguments (no shell).
    pub command: Vec<String>,
    pub timeout_s: f64,
    /// Skipped when the diff hits the scope (the properties' oracle may have moved).
    #[serde(default)]
    pub skip_on_scope_hit: bool,
    /// The exit codes that are a catch (default `[1]`, pytest's; `cargo test` fails with 101).
    #[serde(default)]
    pub catch: CatchCodes,
}

fn default_tiers() -> Vec<TierConfig> {
    vec![
        TierConfig {
            name: ladder::T1.into(),
            command: ["pytest", "-q", "tests/properties", "-x"]
                .map(String::from)
                .to_vec(),
            timeout_s: 120.0,
            skip_on_scope_hit: true,
            catch: CatchCodes::default(),
        },
        TierConfig {
            name: ladder::T2.into(),
            command: ["pytest", "-q", "-p", "no:randomly"]
                .map(String::from)
                .to_vec(),
            timeout_s: 900.0,
            skip_on_scope_hit: false,
            catch: CatchCodes::default(),
        },
    ]
}

impl Default for Config {
    fn default() -> Self {
        Self {
            scope: ScopeMarkers::default(),
            tiers: default_tiers(),
            sandbox: crate::cli::sandbox::SandboxConfig::default(),
        }
    }
}

fn load_config(path: Option<&Path>) -> Result<Config, CliError> {
    let Some(path) = path else {
        return Ok(Config::default());
    };
    let text = std::fs::read_to_string(path)
        .map_err(|e| CliError::data(format!("cannot read {}: {e}", path.display())))?;
    let config: Config = toml::from_str(&text).map_err(|e| {
        CliError::data(format!(
            "{} is not a valid ladder config: {e}",
            path.display()
        ))
    })?;
    for t in &config.tiers {
        if t.command.is_empty() {
            return Err(CliError::data(format!(
                "{}: tier {:?} needs a command (an argv list)",
                path.display(),
                t.name
            )));
        }
        timeout(t.timeout_s).map_err(|why| {
            CliError::data(format!(
                "{}: tier {:?}: `timeout_s` {why}",
                path.display(),
                t.name
            ))
        })?;
    }

    config
        .sandbox
        .limits()
        .map_err(|why| CliError::data(format!("{}: {why}", path.display())))?;
    Ok(config)
}

fn to_paths(raw: &[String]) -> Result<Vec<RepoPath>, CliError> {
    raw.iter()
        .map(|p| {
            RepoPath::parse(p)
                .map_err(|e| CliError::data(format!("changed path {} {e}", quoted(p))))
        })
        .collect()
}

// ---------------------------------------------------------------------------------------------
// Shared by the commands

/// POSTs to a report endpoint and reads the 200 answer; anything else is reported.
fn ask<T: DeserializeOwned>(
    remote_args: &RemoteArgs,
    server: &str,
    path: &str,
    content_type: &str,
    body: Vec<u8>,
) -> Result<T, CliError> {
    let reply = remote::post(remote_args, server, path, content_type, body)?;
    if reply.status != 200 {
        return Err(remote::failure(&reply));
    }
    serde_json::from_slice(&reply.body).map_err(|e| {
        CliError::unavailable(format!(
            "the server answered 200 with a body that is not the expected answer: {e}"
        ))
    })
}

fn print_json<T: serde::Serialize>(v: &T) -> Result<(), CliError> {
    output::stdout(&format!(
        "{}\n",
        serde_json::to_string_pretty(v).unwrap_or_default()
    ))
}

/// A refusal of the input, field by field (65).
fn refuse(problem: &Problem) -> CliError {
    CliError::problem(Exit::DataErr, problem.detail.clone(), problem)
}

mod calibrate;
mod freeze;
mod plan;
mod report;
mod review;
mod run;

pub use calibrate::{CalibrateArgs, calibrate};
pub use freeze::freeze;
pub use review::{ReviewArgs, review};

/// `patchgate ladder plan|run|report`.
pub fn run_ladder(cmd: LadderCommand) -> CliResult {
    match cmd {
        LadderCommand::Plan(a) => plan::plan(a),
        LadderCommand::Run(a) => run::run(a),
        LadderCommand::Report(a) => report::report(a),
    }
}
