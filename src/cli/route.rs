//! `patchgate route FILE`: the router from the command line, locally or against a server.

use std::path::PathBuf;

use clap::Args;

use super::error::{CliError, CliResult};
use super::{RemoteArgs, output, read_input, remote};
use crate::core::answer::{RouteAnswer, decide_route};
use crate::core::evidence::parse_route_bytes;
use crate::exit::Exit;

#[derive(Debug, Args)]
pub struct RouteArgs {
    /// The evidence document (JSON); `-` reads stdin.
    pub file: PathBuf,
    /// Print the full answer as JSON instead of the one line.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub remote: RemoteArgs,
}

pub fn run(args: RouteArgs) -> CliResult {
    let body = read_input(&args.file)
        .map_err(|e| CliError::data(format!("cannot read {}: {e}", args.file.display())))?;
    match &args.remote.server {
        Some(server) => remote_route(server, &args, body),
        None => local_route(&args, &body),
    }
}

fn local_route(args: &RouteArgs, body: &[u8]) -> CliResult {
    let request = parse_route_bytes(body).map_err(|problem| {
        CliError::problem(
            Exit::DataErr,
            format!(
                "invalid evidence in {}: {}",
                args.file.display(),
                problem.detail
            ),
            &problem,
        )
    })?;
    let outcome = decide_route(&request);
    let exit = Exit::from_decision(outcome.decision.exit_code()).unwrap_or(Exit::Software);
    if args.json {
        print_json(&outcome.answer(crate::ids::new_decision_id()))?;
    } else {
        output::stdout(&outcome.decision.line())?;
    }
    Ok(exit)
}

fn print_json(answer: &RouteAnswer) -> Result<(), CliError> {
    let s = serde_json::to_string_pretty(answer)
        .map_err(|e| CliError::software(format!("cannot print the answer: {e}")))?;
    output::stdout(&(s + "\n"))
}

fn remote_route(server: &str, args: &RouteArgs, body: Vec<u8>) -> CliResult {
    let reply = remote::post(&args.remote, server, "/route", "application/json", body)?;
    let (answer, exit) = remote::decision::<RouteAnswer>(&reply, |a| a.exit_code)?;
    if args.json {
        print_json(&answer)?;
    } else {
        output::stdout(&format!(
            "{} attribution={}\n",
            answer.disposition.as_str(),
            answer.attribution.as_str()
        ))?;
    }
    Ok(exit)
}
