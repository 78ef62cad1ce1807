//! `patchgate ladder plan|run|report`, `patchgate freeze`, `patchgate review`,
//! `patchgate calibrate`: the ladder where the code is. The service stays stateless; the CLI
//! runs the tiers as real subprocesses and appends the ledger.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus};
use std::time::{Duration, Instant};

use clap::{Args, Subcommand};
use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::json;

use super::error::{CliError, CliResult};
use super::{ChangedFilesArgs, RemoteArgs, git, git_changed, output, read_input, remote};
use crate::core::ladder::{
    self, CalibrationClass, FreezeAnswer, Plan, Report, Review, ScopeMarkers, TierVerdict,
};
use crate::core::path::RepoPath;
use crate::core::problem::Problem;
use crate::core::problem::quoted;
use crate::exit::Exit;

#[derive(Debug, Subcommand)]
pub enum LadderCommand {
    /// Plan the tiers for a diff (exit 0).
    Plan(PlanArgs),
    /// Run the planned tiers, append one ledger row per tier reached (exit 0 all pass, 1 caught, 2 error).
    Run(RunArgs),
    /// The yield report of a ledger (a table, or --json).
    Report(ReportArgs),
}

#[derive(Debug, Args)]
pub struct PlanArgs {
    #[command(flatten)]
    pub changed: ChangedFilesArgs,
    /// The ladder config (TOML); the article's tiers when absent.
    #[arg(long)]
    pub config: Option<PathBuf>,
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub remote: RemoteArgs,
}

#[derive(Debug, Args)]
pub struct RunArgs {
    #[arg(long)]
    pub base: String,
    #[arg(long)]
    pub head: String,
    /// The JSONL ledger to append to.
    #[arg(long)]
    pub ledger: PathBuf,
    /// The ladder config (TOML); the article's tiers when absent.
    #[arg(long)]
    pub config: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct ReportArgs {
    /// The JSONL ledger (`-` for stdin).
    pub ledger: PathBuf,
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
    /// The test caught a deliberately seeded bug.
    #[arg(long)]
    pub caught_seeded_bug: bool,
    #[arg(long)]
    pub min_runs: Option<u64>,
    #[arg(long)]
    pub min_flip_rate: Option<f64>,
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub remote: RemoteArgs,
}

#[derive(Debug, Args)]
pub struct RowsArgs {
    /// The JSONL file (`-` for stdin).
    pub file: PathBuf,
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
        },
        TierConfig {
            name: ladder::T2.into(),
            command: ["pytest", "-q", "-p", "no:randomly"]
                .map(String::from)
                .to_vec(),
            timeout_s: 900.0,
            skip_on_scope_hit: false,
        },
    ]
}

impl Default for Config {
    fn default() -> Self {
        Self {
            scope: ScopeMarkers::default(),
            tiers: default_tiers(),
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
        if t.command.is_empty() || !(t.timeout_s.is_finite() && t.timeout_s > 0.0) {
            return Err(CliError::data(format!(
                "tier {:?} needs a command and a positive timeout_s",
                t.name
            )));
        }
    }
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
// Remote helper

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

// ---------------------------------------------------------------------------------------------
// plan

pub fn run_ladder(cmd: LadderCommand) -> CliResult {
    match cmd {
        LadderCommand::Plan(a) => plan(a),
        LadderCommand::Run(a) => run(a),
        LadderCommand::Report(a) => report(a),
    }
}

fn plan(args: PlanArgs) -> CliResult {
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
            json!({"changed_files": raw}).to_string().into_bytes(),
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

// ---------------------------------------------------------------------------------------------
// run

/// Runs `argv` in its own process group; on timeout the whole group is killed, so no test
/// runner it spawned outlives it. Returns the exit status (None on timeout) and the seconds.
pub fn run_tier(argv: &[String], timeout: Duration) -> std::io::Result<(Option<ExitStatus>, f64)> {
    use std::os::unix::process::CommandExt;
    let (program, args) = argv
        .split_first()
        .ok_or_else(|| std::io::Error::other("empty command"))?;
    let started = Instant::now();
    let mut child = Command::new(program).args(args).process_group(0).spawn()?;
    let pgid = nix::unistd::Pid::from_raw(i32::try_from(child.id()).unwrap_or(i32::MAX));
    let status = wait_timeout::ChildExt::wait_timeout(&mut child, timeout)?;
    // Whatever the leader did, nothing of its group outlives the tier.
    let _ = nix::sys::signal::killpg(pgid, nix::sys::signal::Signal::SIGKILL);
    if status.is_none() {
        let _ = child.wait();
    }
    Ok((status, started.elapsed().as_secs_f64()))
}

fn run(args: RunArgs) -> CliResult {
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
        let (status, seconds) =
            match run_tier(&tier.command, Duration::from_secs_f64(tier.timeout_s)) {
                Ok(r) => r,
                Err(e) => {
                    // The command could not start: the harness is broken.
                    output::error(&format!(
                        "{name}: cannot start {:?}: {e}",
                        tier.command.first()
                    ));
                    (None, 0.0)
                }
            };
        let timed_out = status.is_none() && seconds >= tier.timeout_s;
        let code = status.and_then(|s| s.code());
        let verdict = TierVerdict::of_exit(code, timed_out);
        let row = json!({
            "patch": patch, "tier": name, "verdict": verdict.as_str(), "seconds": seconds,
            "files": files.iter().map(RepoPath::as_str).collect::<Vec<_>>(), "exit_code": code,
        });
        writeln!(ledger, "{row}")
            .and_then(|()| ledger.flush())
            .map_err(|e| CliError::software(format!("cannot append to the ledger: {e}")))?;
        let how = if timed_out {
            format!("timed out after {:.0} s", tier.timeout_s)
        } else {
            format!("exit {code:?}")
        };
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

// ---------------------------------------------------------------------------------------------
// report

fn report(args: ReportArgs) -> CliResult {
    let body = read_input(&args.ledger)
        .map_err(|e| CliError::data(format!("cannot read {}: {e}", args.ledger.display())))?;
    let report: Report = match &args.remote.server {
        Some(server) => ask(
            &args.remote,
            server,
            "/ladder/report",
            "application/x-ndjson",
            body,
        )?,
        None => ladder::report_of_ledger(&body, true)
            .map_err(|errors| refuse(&Problem::from(errors)))?,
    };
    ladder::check_report(&report).map_err(|problem| refuse(&problem))?;
    if args.json {
        print_json(&report)?;
        return Ok(Exit::Go);
    }
    let mut text = format!(
        "{:<16} {:>6} {:>6} {:>6} {:>6} {:>10} {:>10} {:>12}\n",
        "tier", "runs", "passes", "caught", "errors", "median_s", "total_s", "yield_per_s"
    );
    for t in &report.tiers {
        text.push_str(&format!(
            "{:<16} {:>6} {:>6} {:>6} {:>6} {:>10.3} {:>10.3} {:>12}\n",
            t.tier,
            t.runs,
            t.passes,
            t.caught,
            t.errors,
            t.median_s,
            t.total_s,
            t.yield_per_s.map_or("-".to_owned(), |y| format!("{y:.4}"))
        ));
    }
    for n in &report.notes {
        text.push_str(&format!("\n- {n}"));
    }
    text.push('\n');
    output::stdout(&text)?;
    Ok(Exit::Go)
}

// ---------------------------------------------------------------------------------------------
// freeze, review, calibrate

fn read_outcomes(path: &Path) -> Result<Vec<bool>, CliError> {
    let bytes = read_input(&path.to_path_buf())
        .map_err(|e| CliError::data(format!("cannot read {}: {e}", path.display())))?;
    let text = String::from_utf8_lossy(&bytes);
    if text.trim_start().starts_with('[') {
        return serde_json::from_str::<Vec<bool>>(&text).map_err(|e| {
            CliError::data(format!(
                "{}: expected a JSON array of booleans: {e}",
                path.display()
            ))
        });
    }
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(i, l)| match l.trim() {
            "true" => Ok(true),
            "false" => Ok(false),
            other => Err(CliError::data(format!(
                "{} line {}: {} is not `true` or `false`",
                path.display(),
                i + 1,
                quoted(other)
            ))),
        })
        .collect()
}

pub fn freeze(args: FreezeArgs) -> CliResult {
    let outcomes = read_outcomes(&args.outcomes)?;
    let mut doc = json!({"outcomes": outcomes, "caught_seeded_bug": args.caught_seeded_bug});
    if let Some(n) = args.min_runs {
        doc["min_runs"] = json!(n);
    }
    if let Some(r) = args.min_flip_rate {
        doc["min_flip_rate"] = json!(r);
    }
    let answer: FreezeAnswer = match &args.remote.server {
        Some(server) => ask(
            &args.remote,
            server,
            "/freeze/eligibility",
            "application/json",
            doc.to_string().into_bytes(),
        )?,
        None => ladder::parse_freeze(&doc)
            .map(|r| ladder::freeze_eligibility(&r))
            .map_err(|errors| refuse(&Problem::invalid(errors)))?,
    };
    if args.json {
        print_json(&answer)?;
    } else {
        output::stdout(&format!(
            "{} {}\n",
            if answer.eligible {
                "eligible"
            } else {
                "not-eligible"
            },
            answer.reason
        ))?;
    }
    Ok(if answer.eligible {
        Exit::Go
    } else {
        Exit::PatchWrong
    })
}

pub fn review(args: RowsArgs) -> CliResult {
    let body = read_input(&args.file)
        .map_err(|e| CliError::data(format!("cannot read {}: {e}", args.file.display())))?;
    let review: Review = match &args.remote.server {
        Some(server) => ask(
            &args.remote,
            server,
            "/review",
            "application/x-ndjson",
            body,
        )?,
        None => ladder::review(&body).map_err(|errors| refuse(&Problem::invalid(errors)))?,
    };
    if args.json {
        print_json(&review)?;
    } else {
        let pct = |v: Option<f64>| v.map_or("-".to_owned(), |x| format!("{:.1}%", x * 100.0));
        let mut text = format!(
            "decisions: {}\nescalation rate: {}\nescalated on inadmissible-evidence: {}\n",
            review.decisions,
            pct(review.escalation_rate),
            pct(review.inadmissible_share)
        );
        for (k, v) in &review.by_disposition {
            text.push_str(&format!("  {k:<10} {v}\n"));
        }
        for (k, v) in &review.by_attribution {
            text.push_str(&format!("  {k:<38} {v}\n"));
        }
        if let Some(w) = &review.warning {
            text.push_str(&format!("warning: {w}\n"));
        }
        output::stdout(&text)?;
    }
    Ok(Exit::Go)
}

pub fn calibrate(args: RowsArgs) -> CliResult {
    let body = read_input(&args.file)
        .map_err(|e| CliError::data(format!("cannot read {}: {e}", args.file.display())))?;
    let classes: Vec<CalibrationClass> = match &args.remote.server {
        Some(server) => ask(
            &args.remote,
            server,
            "/calibrate",
            "application/x-ndjson",
            body,
        )?,
        None => ladder::parse_rows(&body, true, ladder::parse_calibration_row)
            .map(|rows| ladder::calibrate(&rows))
            .map_err(|errors| refuse(&Problem::from(errors)))?,
    };
    if args.json {
        print_json(&classes)?;
    } else {
        let mut text = format!(
            "{:<38} {:>6} {:>11} {:>7} {:>7}\n",
            "attribution", "count", "production", "check", "both"
        );
        for c in &classes {
            text.push_str(&format!(
                "{:<38} {:>6} {:>10.1}% {:>6.1}% {:>6.1}%\n",
                c.attribution,
                c.count,
                c.production * 100.0,
                c.check * 100.0,
                c.both * 100.0
            ));
        }
        output::stdout(&text)?;
    }
    Ok(Exit::Go)
}
