//! Reading a server's answer back into an exit code, failing closed: only a 200 whose body
//! agrees (exit_code 0) is a go; anything unexpected is 69, never 0.

use serde::de::DeserializeOwned;

use super::error::CliError;
use super::{RemoteArgs, client_runtime, output};
use crate::client::{Client, Reply};
use crate::core::decision::{Decision, Defaults, decide_body};
use crate::core::problem::Problem;
use crate::exit::Exit;

/// POSTs `body` to `server` + `path` and returns the reply; a bad URL is 64, an unreachable
/// server 69.
pub fn post(
    args: &RemoteArgs,
    server: &str,
    path: &str,
    content_type: &str,
    body: impl Into<reqwest::Body>,
) -> Result<Reply, CliError> {
    let client = Client::new(server, args.token.clone(), args.timeout)
        .map_err(|e| CliError::usage(output::chain(&e)))?;
    let rt = client_runtime()?;
    rt.block_on(client.post(path, content_type, "application/json", body))
        .map_err(|e| CliError::unavailable(output::chain(&e)))
}

/// A decision answer read back from a server, with the exit code both its status and its body
/// agree on; or why it is not one.
pub fn decision<T: DeserializeOwned>(
    reply: &Reply,
    exit_code_of: impl Fn(&T) -> u8,
) -> Result<(T, Exit), CliError> {
    let Some(by_status) = Exit::from_http_status(reply.status) else {
        return Err(failure(reply));
    };
    let answer: T = serde_json::from_slice(&reply.body).map_err(|e| {
        CliError::unavailable(format!(
            "the server answered {} with a body that is not a decision: {e}",
            reply.status
        ))
    })?;
    let by_body = exit_code_of(&answer);
    if by_body != by_status.code() {
        return Err(CliError::unavailable(format!(
            "the server answered {} but its body says exit code {by_body}; refusing to read either as a decision",
            reply.status
        )));
    }
    Ok((answer, by_status))
}

/// What a non-decision answer means, and its exit code.
pub fn failure(reply: &Reply) -> CliError {
    let problem: Option<Problem> = serde_json::from_slice(&reply.body).ok();
    let detail = problem
        .as_ref()
        .map(|p| p.detail.clone())
        .unwrap_or_else(|| {
            String::from_utf8_lossy(&reply.body)
                .chars()
                .take(300)
                .collect()
        });
    match reply.status {
        400 | 413 | 415 | 422 => {
            let message = format!("the server refused the input ({}): {detail}", reply.status);
            match &problem {
                Some(p) => CliError::problem(Exit::DataErr, message, p),
                None => CliError::data(message),
            }
        }
        401 | 403 => CliError::usage(format!(
            "the server refused the credentials ({}): check --token / PATCHGATE_TOKEN",
            reply.status
        )),
        s if s >= 500 => CliError::unavailable(format!("the server failed ({s}): {detail}")),
        s => CliError::unavailable(format!(
            "unexpected answer from the server ({s}), not read as a decision: {detail}"
        )),
    }
}

/// Decides `body` as `D`: with the server when `--server` is given (its status held against
/// its body), else with this process's core and its defaults. A body the local core refuses
/// is turned into the command's error by `refused`.
pub fn decide<D: Decision>(
    args: &RemoteArgs,
    body: Vec<u8>,
    refused: impl FnOnce(Problem) -> CliError,
) -> Result<D::Answer, CliError> {
    match &args.server {
        Some(server) => {
            let path = format!("/{}", D::ENDPOINT);
            let reply = post(args, server, &path, "application/json", body)?;
            Ok(decision::<D::Answer>(&reply, D::answer_exit_code)?.0)
        }
        None => decide_body::<D>(&body, &Defaults::default(), crate::ids::new_decision_id())
            .map_err(refused),
    }
}

/// Prints an answer of `D`: the whole answer as JSON, or its one line. Gives the answer's exit
/// code.
pub fn print<D: Decision>(answer: &D::Answer, json: bool) -> Result<Exit, CliError> {
    if json {
        let s = serde_json::to_string_pretty(answer)
            .map_err(|e| CliError::software(format!("cannot print the answer: {e}")))?;
        output::stdout(&(s + "\n"))?;
    } else {
        output::stdout(&D::line(answer))?;
    }
    Ok(Exit::from_decision(D::answer_exit_code(answer)).unwrap_or(Exit::Software))
}
