//! Reading a server's answer back into an exit code, failing closed: only a 200 whose body
//! agrees (exit_code 0) is a go; anything unexpected is 69, never 0.

use serde::de::DeserializeOwned;

use super::{RemoteArgs, client_runtime, output};
use crate::client::{Client, Reply};
use crate::core::problem::Problem;
use crate::exit::Exit;

/// POSTs `body` to `server` + `path` and returns the reply; a bad URL is 64, an unreachable
/// server 69 (both already reported on stderr).
pub fn post(
    args: &RemoteArgs,
    server: &str,
    path: &str,
    content_type: &str,
    body: impl Into<reqwest::Body>,
) -> Result<Reply, Exit> {
    let client = Client::new(server, args.token.clone(), args.timeout).map_err(|e| {
        output::error(&output::chain(&e));
        Exit::Usage
    })?;
    let rt = client_runtime()?;
    rt.block_on(client.post(path, content_type, "application/json", body))
        .map_err(|e| {
            output::error(&output::chain(&e));
            Exit::Unavailable
        })
}

/// A decision answer read back from a server, with the exit code both its status and its body
/// agree on; or the exit code of the failure, already reported on stderr.
pub fn decision<T: DeserializeOwned>(
    reply: &Reply,
    exit_code_of: impl Fn(&T) -> u8,
) -> Result<(T, Exit), Exit> {
    if let Some(by_status) = Exit::from_http_status(reply.status) {
        let answer: T = serde_json::from_slice(&reply.body).map_err(|e| {
            output::error(&format!(
                "the server answered {} with a body that is not a decision: {e}",
                reply.status
            ));
            Exit::Unavailable
        })?;
        let by_body = exit_code_of(&answer);
        if by_body != by_status.code() {
            output::error(&format!(
                "the server answered {} but its body says exit code {by_body}; refusing to read either as a decision",
                reply.status
            ));
            return Err(Exit::Unavailable);
        }
        return Ok((answer, by_status));
    }
    Err(failure(reply))
}

/// Reports a non-decision answer and picks its exit code.
pub fn failure(reply: &Reply) -> Exit {
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
            output::error(&format!(
                "the server refused the input ({}): {detail}",
                reply.status
            ));
            if let Some(p) = &problem {
                print_field_errors(p);
            }
            Exit::DataErr
        }
        401 | 403 => {
            output::error(&format!(
                "the server refused the credentials ({}): check --token / PATCHGATE_TOKEN",
                reply.status
            ));
            Exit::Usage
        }
        s if s >= 500 => {
            output::error(&format!("the server failed ({s}): {detail}"));
            Exit::Unavailable
        }
        s => {
            output::error(&format!(
                "unexpected answer from the server ({s}), not read as a decision: {detail}"
            ));
            Exit::Unavailable
        }
    }
}

/// Prints each invalid field of a problem on its own stderr line.
pub fn print_field_errors(problem: &Problem) {
    for e in &problem.errors {
        let at = if e.pointer.is_empty() {
            "(document)"
        } else {
            e.pointer.as_str()
        };
        output::error(&format!("  {at}: {}", e.detail));
    }
}
