//! The command line: `patchgate serve` and the decision commands, each deciding locally with
//! the same core the server runs, or asking a server with `--server`. Exit codes are the API
//! (see [`crate::exit::Exit`]).

mod admit;
mod build_cache;
mod census;
mod config;
mod config_observe;
mod documents;
mod error;
mod export;
mod gate;
mod git;
mod healthcheck;
mod init;
mod interrupt;
mod junit;
mod ladder;
mod output;
mod process;
mod progress;
mod quorum;
pub mod reading;
mod redact;
mod relay;
mod remote;
pub mod rewriting;
mod route;
mod runner;
mod sandbox;
mod seal;
mod serve;
mod warm;
mod wire;

use std::path::PathBuf;
use std::time::Duration;

use clap::{Args, Parser, Subcommand};

use crate::exit::Exit;
use error::CliError;

#[derive(Debug, Parser)]
#[command(
    name = "patchgate",
    version,
    about = "Decides whether a code patch may merge. Exit codes: 0 go, 1 the patch is wrong, \
2 a human must look, 3 the queue is stopped; 64 usage, 65 bad input, 69 server unreachable or \
5xx, 70 internal error."
)]
pub struct Cli {
    #[command(subcommand)]
    command: Command,
}

macro_rules! exits {
    ($decisions:literal) => {
        concat!(
            "Exit codes: ",
            $decisions,
            "; 64 usage error, 65 bad input data, 69 server unreachable or not answering a decision, 70 internal error."
        )
    };
}
pub(crate) use exits;

#[derive(Debug, Subcommand)]
enum Command {
    /// Run the HTTP service.
    #[command(
        after_help = "Exit codes: 0 after a drain on SIGTERM or SIGINT; 64 usage error (a bad flag, a PORT that is not a port); 70 cannot listen or run."
    )]
    Serve(serve::ServeArgs),
    /// Gate one patch end to end: seal, debt, guard, properties, fixture suite, router. Reads
    /// its config, catalog, ledger and expected seal from the base commit (exit 0/1/2/3).
    #[command(after_help = exits!("0 MERGE_OK, 1 BLOCK, 2 ESCALATE, 3 STOP_QUEUE (--dry-run: 0); 130 interrupted (the running check's process group killed, no decision)"))]
    Gate(Box<gate::GateArgs>),
    /// Write a commented starter patchgate.toml.
    #[command(
        after_help = "Exit codes: 0 written; 64 the file exists (give --force); 70 cannot write it."
    )]
    Init(init::InitArgs),
    /// Prove a check earns its vote: it passes on the base and fails on a mutant that deletes
    /// its invariant, on the same sealed fixtures, each tree in its own temporary worktree
    /// (exit 0 admitted, 1 rejected, 2 inconclusive).
    #[command(after_help = exits!("0 admitted (two-commit-proof), 1 rejected (fails-on-base, tautology), 2 inconclusive (seal-differs, unstable-on-base, unstable-on-mutant, harness-error); 130 interrupted (the worktrees removed)"))]
    Admit(Box<admit::AdmitArgs>),
    /// Record the base's tests (the suite run on the base, in a clean room): every test that
    /// passes there must run on each patch (`[suite] census`).
    #[command(after_help = exits!("0 recorded; 65 the suite wrote no readable report, or ran no test; 69 no sandbox; 130/143 interrupted"))]
    Census(Box<census::CensusArgs>),
    /// Build a trusted commit (the base branch) in a clean room and keep `[build] cache` as the
    /// build cache every later room starts from; never run it on a patch.
    #[command(after_help = exits!("0 kept; 65 no [build] cache, or the build failed; 69 no sandbox; 130/143 interrupted"))]
    Warm(Box<warm::WarmArgs>),
    /// Read a patch's code as the gate's `test-aware` rule does (CONTRACT.md section 14): the code it adds
    /// to files that are not tests, parsed, against the reading rules; nothing runs.
    #[command(after_help = exits!("0 nothing flagged; 2 a hit (a human must look)"))]
    Read(Box<reading::command::ReadArgs>),
    /// What the gate's observe step would look at (issue 52): the patch's changed code lines,
    /// with `--coverage` the tests that ran each and the branches none took, and the patch
    /// mutants it would make; nothing runs, nothing is decided.
    #[command(after_help = exits!("0 listed; 65 the coverage report is not coverage.py's JSON"))]
    Observe(Box<gate::ObserveArgs>),
    /// The table of CONTRACT.md section 16 for one patch (issue 66): the gate's runs with
    /// `[replay]` on and every rule listed, each recorded call made again in a plain program and
    /// against the base, and what each rule would say; nothing is decided.
    #[command(after_help = exits!("0 listed; 65 the base's inputs are invalid; 69 no sandbox; 130 interrupted"))]
    Replay(Box<gate::ReplayArgs>),
    /// Route one evidence document through the precedence ladder (exit 0/1/2).
    #[command(after_help = exits!("0 MERGE_OK, 1 BLOCK, 2 ESCALATE; with --checks/--statuses also 75 PENDING (a check still runs)"))]
    Route(route::RouteArgs),
    /// Decide a patch's strong-property quorum from the repository's files (exit 0/1/2/3).
    #[command(after_help = exits!("0 promote, 1 reject, 2 hold or fixture_fault, 3 stop_queue"))]
    Quorum(Box<quorum::QuorumArgs>),
    /// Seal a fixtures tree as the coreutils pipeline does (exit 1 on a mismatch with --expected).
    #[command(after_help = exits!("0 sealed or match, 1 fixture_fault (a seal other than --expected, or drift from --expected-manifest)"))]
    Seal(Box<seal::SealArgs>),
    /// The gate ladder: plan, run the tiers, report yield.
    #[command(subcommand)]
    Ladder(ladder::LadderCommand),
    /// Whether a flaky test may be frozen (exit 0 eligible, 1 not).
    #[command(after_help = exits!("0 eligible, 1 not eligible"))]
    Freeze(Box<ladder::FreezeArgs>),
    /// Review the router from its decision log.
    #[command(after_help = exits!("0 reviewed"))]
    Review(Box<ladder::ReviewArgs>),
    /// Calibrate attributions from where fixes landed: rows, or a decision log and git.
    #[command(after_help = exits!("0 calibrated"))]
    Calibrate(Box<ladder::CalibrateArgs>),
    /// Exit 0 when the server's /healthz answers 200, else 1 (for container HEALTHCHECKs).
    #[command(after_help = "Exit codes: 0 healthy; 1 not (no answer, or not 200); 64 usage error.")]
    Healthcheck(healthcheck::HealthcheckArgs),
    /// Print the OpenAPI document.
    #[command(after_help = "Exit codes: 0 printed; 70 cannot write to stdout.")]
    Openapi,
}

/// The trusted commit a command builds or runs on (`census`, `warm`), and its config.
#[derive(Debug, Args)]
pub struct BaseArgs {
    /// The trusted commit (the base branch); the config is read from it.
    #[arg(long, default_value = "HEAD")]
    pub base: String,
    /// The config file's path in the base commit.
    #[arg(long, default_value = config::CONFIG_FILE)]
    pub config: String,
    /// Run as if started in this directory (inside the repository).
    #[arg(short = 'C', long = "directory")]
    pub directory: Option<PathBuf>,
}

impl BaseArgs {
    /// Enters the repository; the base commit's id and its config.
    pub fn open(&self) -> Result<(String, config::GateConfig), CliError> {
        git::enter_repository(self.directory.as_deref())?;
        let base = git::commit_of(&self.base)?;
        let config = config::GateConfig::from_base(&base, &self.base, &self.config)?;
        Ok((base, config))
    }
}

/// What a decision command takes beside its inputs: an id to echo, how to print the answer,
/// and where it is decided.
#[derive(Debug, Args)]
pub struct AnswerArgs {
    /// Echoed in the answer.
    #[arg(long)]
    pub patch_id: Option<String>,
    /// Print the full answer as JSON instead of the one line.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub remote: RemoteArgs,
}

/// Where a decision command asks: locally (default) or a server.
#[derive(Debug, Clone, Args)]
pub struct RemoteArgs {
    /// Ask this patchgate server instead of deciding locally (e.g. http://127.0.0.1:8080).
    #[arg(long, env = "PATCHGATE_SERVER")]
    pub server: Option<String>,
    /// Bearer token for the server.
    #[arg(long, env = "PATCHGATE_TOKEN", hide_env_values = true)]
    pub token: Option<String>,
    /// How long to wait for the server (e.g. `30s`, `500ms`).
    #[arg(long, default_value = "30s", value_parser = parse_duration)]
    pub timeout: Duration,
}

/// Which files a patch changes: a file listing them, or a git range.
#[derive(Debug, Clone, Args)]
pub struct ChangedFilesArgs {
    /// A file of changed paths, one per line (`-` for stdin). Or give --base/--head.
    #[arg(long, conflicts_with = "base")]
    pub changed_files: Option<PathBuf>,
    /// Read the changed files from `git diff --name-only BASE...HEAD`.
    #[arg(long, requires = "head")]
    pub base: Option<String>,
    /// The head of the git range (with --base).
    #[arg(long)]
    pub head: Option<String>,
}

impl ChangedFilesArgs {
    /// The changed paths, as given; or why they could not be had.
    pub fn resolve(&self) -> Result<Vec<String>, CliError> {
        if let Some(path) = &self.changed_files {
            let bytes = read_input(path)
                .map_err(|e| CliError::data(format!("cannot read {}: {e}", path.display())))?;
            let text = String::from_utf8(bytes)
                .map_err(|_| CliError::data(format!("{} is not UTF-8", path.display())))?;
            return Ok(text
                .lines()
                .map(str::trim_end)
                .filter(|l| !l.is_empty())
                .map(str::to_owned)
                .collect());
        }
        match (&self.base, &self.head) {
            (Some(base), Some(head)) => git::git_changed(base, head),
            _ => Err(CliError::usage(
                "give the changed files: --changed-files FILE, or --base REF --head REF",
            )),
        }
    }
}

/// Parses `30s`, `500ms`, `2m` or a bare number of seconds.
pub fn parse_duration(s: &str) -> Result<Duration, String> {
    let s = s.trim();
    // Bare seconds (`30`) as before; otherwise humantime's units (`500ms`, `30s`, `10m`, `1h`).
    let parsed = match s.parse::<f64>() {
        Ok(secs) if secs.is_finite() && secs > 0.0 && secs <= 86_400.0 => {
            Duration::from_secs_f64(secs)
        }
        Ok(_) => Duration::ZERO,
        Err(_) => humantime::parse_duration(s)
            .map_err(|e| format!("`{s}` is not a duration like 30s or 500ms: {e}"))?,
    };
    if parsed.is_zero() || parsed > Duration::from_secs(86_400) {
        return Err(format!(
            "`{s}` is out of range (more than 0, at most a day)"
        ));
    }
    Ok(parsed)
}

/// [`parse_duration`] as a flag's value that prints itself (`30s`), so a flag's default can
/// come from [`crate::http::Settings::default`] instead of being written twice.
pub fn parse_span(s: &str) -> Result<humantime::Duration, String> {
    parse_duration(s).map(Into::into)
}

/// A default taken from the server's settings, as a flag prints it.
pub fn span(d: Duration) -> humantime::Duration {
    d.into()
}

/// Reads an input file, or stdin for `-`.
pub fn read_input(path: &PathBuf) -> std::io::Result<Vec<u8>> {
    if path.as_os_str() == "-" {
        let mut buf = Vec::new();
        std::io::Read::read_to_end(&mut std::io::stdin(), &mut buf)?;
        Ok(buf)
    } else {
        std::fs::read(path)
    }
}

/// Entry point of the binary.
pub fn main() -> Exit {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            use clap::error::ErrorKind;
            let _ = e.print();
            return match e.kind() {
                ErrorKind::DisplayHelp | ErrorKind::DisplayVersion => Exit::Go,
                _ => Exit::Usage,
            };
        }
    };
    // The key of a split gate's shard digests (issue 53), read once: the runs never see it
    // (a room's environment is only what `[sandbox] env` names).
    // (`PATCHGATE_SHARD_KEY_FILE` names a file holding it, as a Kubernetes Secret mounts it.)
    if let Ok(key) = std::env::var("PATCHGATE_SHARD_KEY") {
        crate::core::gate::set_shard_key(key.as_bytes());
    } else if let Some(path) = std::env::var_os("PATCHGATE_SHARD_KEY_FILE") {
        match std::fs::read(&path) {
            Ok(key) => crate::core::gate::set_shard_key(key.trim_ascii_end()),
            Err(e) => {
                output::error(&format!(
                    "cannot read PATCHGATE_SHARD_KEY_FILE {}: {e}",
                    std::path::Path::new(&path).display()
                ));
                return Exit::Usage;
            }
        }
    }
    // The commands that open clean rooms, started by root: a mount namespace of their own,
    // made while the process has one thread (CONTRACT.md section 13.3).
    if matches!(
        cli.command,
        Command::Gate(_)
            | Command::Replay(_)
            | Command::Warm(_)
            | Command::Admit(_)
            | Command::Census(_)
            | Command::Ladder(ladder::LadderCommand::Run(_))
    ) {
        sandbox::private_mounts_now();
    }
    // Every command's error is printed here, in one place.
    error::finish(match cli.command {
        Command::Serve(args) => serve::run(args),
        Command::Gate(args) => gate::run(*args),
        Command::Warm(args) => warm::run(*args),
        Command::Init(args) => init::init(args),
        Command::Admit(args) => admit::run(*args),
        Command::Census(args) => census::run(*args),
        Command::Read(args) => reading::command::run(*args),
        Command::Observe(args) => gate::observe_command::run(*args),
        Command::Replay(args) => gate::replay_command::run(*args),
        Command::Route(args) => route::run(args),
        Command::Quorum(args) => quorum::run(*args),
        Command::Seal(args) => seal::run(*args),
        Command::Ladder(cmd) => ladder::run_ladder(cmd),
        Command::Freeze(args) => ladder::freeze(*args),
        Command::Review(args) => ladder::review(*args),
        Command::Calibrate(args) => ladder::calibrate(*args),
        Command::Healthcheck(args) => healthcheck::run(args),
        Command::Openapi => {
            output::stdout(&crate::http::openapi::document_json()).map(|()| Exit::Go)
        }
    })
}

/// A current-thread runtime for the client side of the CLI.
pub fn client_runtime() -> Result<tokio::runtime::Runtime, CliError> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| CliError::software(format!("cannot start the async runtime: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    /// Every (sub)command, with its path.
    fn walk(cmd: &clap::Command, path: String, out: &mut Vec<(String, clap::Command)>) {
        for sub in cmd.get_subcommands() {
            let p = format!("{path} {}", sub.get_name());
            out.push((p.clone(), sub.clone()));
            walk(sub, p, out);
        }
    }

    #[test]
    fn every_subcommand_documents_its_flags_and_exit_codes() {
        let mut all = Vec::new();
        walk(&Cli::command(), "patchgate".to_owned(), &mut all);
        assert!(all.len() > 10);
        let mut undocumented = Vec::new();
        for (path, mut cmd) in all {
            if cmd.get_subcommands().next().is_some() {
                continue; // a group (`ladder`): its leaves are checked
            }
            let help = cmd.render_long_help().to_string();
            assert!(
                help.contains("Exit codes:"),
                "`{path} --help` does not list its exit codes:\n{help}"
            );
            assert!(
                !help.to_lowercase().contains("article"),
                "`{path} --help` refers to an article:\n{help}"
            );
            for arg in cmd.get_arguments() {
                let id = arg.get_id().as_str();
                if id == "help" || id == "version" || arg.is_hide_set() {
                    continue;
                }
                let documented = arg
                    .get_long_help()
                    .or(arg.get_help())
                    .is_some_and(|h| !h.to_string().trim().is_empty());
                if !documented {
                    undocumented.push(format!("`{path}`: --{id}"));
                }
            }
        }
        assert!(
            undocumented.is_empty(),
            "flags without a description:\n{}",
            undocumented.join("\n")
        );
    }
}
