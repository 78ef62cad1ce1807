//! `patchgate route FILE`: the router from the command line, locally or against a server.

use std::path::PathBuf;

use clap::Args;

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

pub fn run(args: RouteArgs) -> Exit {
    let body = match read_input(&args.file) {
        Ok(b) => b,
        Err(e) => {
            output::error(&format!("cannot read {}: {e}", args.file.display()));
            return Exit::DataErr;
        }
    };
    match &args.remote.server {
        Some(server) => remote_route(server, &args, body),
        None => local_route(&args, &body),
    }
}

fn local_route(args: &RouteArgs, body: &[u8]) -> Exit {
    let request = match parse_route_bytes(body) {
        Ok(r) => r,
        Err(problem) => {
            output::error(&format!(
                "invalid evidence in {}: {}",
                args.file.display(),
                problem.detail
            ));
            remote::print_field_errors(&problem);
            return Exit::DataErr;
        }
    };
    let outcome = decide_route(&request);
    let exit = Exit::from_decision(outcome.decision.exit_code()).unwrap_or(Exit::Software);
    if args.json {
        let answer = outcome.answer(crate::ids::new_decision_id());
        print_json(&answer)
    } else {
        output::stdout(&outcome.decision.line());
    }
    exit
}

fn print_json(answer: &RouteAnswer) {
    match serde_json::to_string_pretty(answer) {
        Ok(s) => output::stdout(&(s + "\n")),
        Err(e) => output::error(&format!("cannot print the answer: {e}")),
    }
}

fn remote_route(server: &str, args: &RouteArgs, body: Vec<u8>) -> Exit {
    let reply = match remote::post(&args.remote, server, "/route", "application/json", body) {
        Ok(r) => r,
        Err(exit) => return exit,
    };
    match remote::decision::<RouteAnswer>(&reply, |a| a.exit_code) {
        Ok((answer, exit)) => {
            if args.json {
                print_json(&answer);
            } else {
                output::stdout(&format!(
                    "{} attribution={}\n",
                    answer.disposition.as_str(),
                    answer.attribution.as_str()
                ));
            }
            exit
        }
        Err(exit) => exit,
    }
}
