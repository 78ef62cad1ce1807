//! `patchgate route FILE`: the router from the command line, locally or against a server; and
//! `patchgate route --checks FILE --gates FILE`: the router over a forge's check results.

use std::path::PathBuf;

use clap::Args;

use super::error::{CliError, CliResult};
use super::{AnswerArgs, read_input, remote};
use crate::core::answer::RouteOutcome;
use crate::core::checks::ChecksOutcome;
use crate::exit::Exit;

#[derive(Debug, Args)]
pub struct RouteArgs {
    /// The evidence document (JSON); `-` reads stdin. Or give the forge's check results with
    /// --checks and/or --statuses, and --gates (and --patch-id to echo: an evidence document
    /// gives its own `patch_id`).
    #[arg(required_unless_present_any = ["checks", "statuses"])]
    pub file: Option<PathBuf>,
    /// GitHub's list-check-runs response (JSON), verbatim (`gh api repos/O/R/commits/SHA/check-runs`).
    #[arg(long, conflicts_with = "file", requires_all = ["gates", "head_sha"])]
    pub checks: Option<PathBuf>,
    /// GitHub's combined-status response (JSON), verbatim (`gh api repos/O/R/commits/SHA/status`).
    #[arg(long, conflicts_with = "file", requires_all = ["gates", "head_sha"])]
    pub statuses: Option<PathBuf>,
    /// Which checks make up each gate (TOML or JSON):
    /// `property_check = ["proptest"]`, `fixture_check = [...]`, `flaky_freeze = [...]`.
    #[arg(long, requires = "head_sha")]
    pub gates: Option<PathBuf>,
    /// The pull request's head commit: check runs for another commit are stale.
    #[arg(long)]
    pub head_sha: Option<String>,
    #[command(flatten)]
    pub answer: AnswerArgs,
}

fn read(path: &PathBuf) -> Result<Vec<u8>, CliError> {
    read_input(path).map_err(|e| CliError::data(format!("cannot read {}: {e}", path.display())))
}

pub fn run(args: RouteArgs) -> CliResult {
    let Some(file) = &args.file else {
        return checks(&args);
    };
    if args.answer.patch_id.is_some() {
        // Never dropped without a word: an evidence document carries its own.
        return Err(CliError::usage(
            "--patch-id goes with --checks/--statuses; an evidence document gives its own `patch_id`",
        ));
    }
    let body = read(file)?;
    let answer = remote::decide::<RouteOutcome>(&args.answer.remote, body, |problem| {
        CliError::problem(
            Exit::DataErr,
            format!("invalid evidence in {}: {}", file.display(), problem.detail),
            &problem,
        )
    })?;
    remote::print::<RouteOutcome>(&answer, args.answer.json)
}

/// The `/route/checks` body: the gates and the forge's two documents, spliced in as they are
/// (they are read once, by the same parser a server uses; never rebuilt).
fn checks_body(args: &RouteArgs) -> Result<Vec<u8>, CliError> {
    let gates_path = args
        .gates
        .as_ref()
        .ok_or_else(|| CliError::usage("--gates FILE names the checks of each gate"))?;
    let gates_text = String::from_utf8(read(gates_path)?)
        .map_err(|_| CliError::data(format!("{} is not UTF-8", gates_path.display())))?;
    let is_json = gates_path.extension().is_some_and(|e| e == "json")
        || gates_text.trim_start().starts_with('{');
    let gates: serde_json::Value = if is_json {
        crate::core::json::strict_value(gates_text.as_bytes()).map_err(|e| {
            CliError::data(format!("{} is not valid JSON: {e}", gates_path.display()))
        })?
    } else {
        toml::from_str(&gates_text).map_err(|e| {
            CliError::data(format!(
                "{} is not valid TOML: {}",
                gates_path.display(),
                e.message()
            ))
        })?
    };
    let head = super::wire::ChecksHead {
        head_sha: args.head_sha.as_deref().unwrap_or_default(),
        gates: &gates,
        patch_id: args.answer.patch_id.as_deref(),
    };
    let mut body = serde_json::to_vec(&head)
        .map_err(|e| CliError::software(format!("cannot write the request: {e}")))?;
    body.pop(); // the closing brace: the forge documents go in before it
    for (key, path) in [("check_runs", &args.checks), ("statuses", &args.statuses)] {
        if let Some(path) = path {
            body.extend_from_slice(format!(",\"{key}\":").as_bytes());
            body.extend_from_slice(&read(path)?);
        }
    }
    body.push(b'}');
    Ok(body)
}

fn checks(args: &RouteArgs) -> CliResult {
    let body = checks_body(args)?;
    let answer = remote::decide::<ChecksOutcome>(&args.answer.remote, body, |problem| {
        CliError::problem(
            Exit::DataErr,
            format!(
                "invalid check results (--checks/--statuses/--gates): {}",
                problem.detail
            ),
            &problem,
        )
    })?;
    remote::print::<ChecksOutcome>(&answer, args.answer.json)
}
