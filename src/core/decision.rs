//! One shape for every decision: parse strictly → decide purely → exit code, one line, log
//! fields, Markdown where there is one (cedar's one `Response` for every request).
//!
//! Each decision (route, quorum, admit, gate, route/checks) implements [`Decision`] in its own
//! core module, and everything around it is written once against the trait: the HTTP handler
//! (`http::decide`), the CLI's local-or-remote path (`cli::remote::decide`) and the
//! decision-log writer (`telemetry::log_decision_of`). A new decision endpoint is one core
//! module plus one line in the endpoint table.

use serde::Serialize;
use serde::de::DeserializeOwned;

use super::freeze_ledger::DEFAULT_DEBT_CAP;
use super::problem::Problem;

/// A decision-log field's key as it is written into the JSON line: `,"name":`.
macro_rules! log_key {
    ($name:literal) => {
        concat!(",\"", $name, "\":")
    };
}
pub(crate) use log_key;

/// The value of one decision-log field. An absent one is left out of the line (as a tracing
/// event leaves out a `None`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Field<'a> {
    /// A string from outside (a client's id): escaped as JSON needs.
    Str(&'a str),
    /// A string of ours that needs no escaping (a rule name, a verdict, an id we made):
    /// copied as it is.
    Plain(&'a str),
    U64(u64),
    Bool(bool),
    Absent,
}

impl<'a> From<&'a str> for Field<'a> {
    fn from(v: &'a str) -> Self {
        Field::Str(v)
    }
}

impl<'a> From<Option<&'a str>> for Field<'a> {
    fn from(v: Option<&'a str>) -> Self {
        v.map_or(Field::Absent, Field::Str)
    }
}

impl From<u64> for Field<'_> {
    fn from(v: u64) -> Self {
        Field::U64(v)
    }
}

impl From<u8> for Field<'_> {
    fn from(v: u8) -> Self {
        Field::U64(u64::from(v))
    }
}

impl From<bool> for Field<'_> {
    fn from(v: bool) -> Self {
        Field::Bool(v)
    }
}

/// Most fields a decision logs (after `endpoint`, `request_id` and `decision_id`).
pub const MAX_LOG_FIELDS: usize = 16;

/// A decision's log fields after `endpoint`, `request_id` and `decision_id`, each key a
/// [`log_key!`]. Held on the stack (a decision line is on every request's path): unused slots
/// are [`Field::Absent`], which a line leaves out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LogFields<'a>([(&'static str, Field<'a>); MAX_LOG_FIELDS]);

impl<'a> LogFields<'a> {
    /// The fields `list`, in order.
    pub fn of<const N: usize>(list: [(&'static str, Field<'a>); N]) -> Self {
        const { assert!(N <= MAX_LOG_FIELDS, "more log fields than MAX_LOG_FIELDS") };
        let mut all = [("", Field::Absent); MAX_LOG_FIELDS];
        for (slot, field) in all.iter_mut().zip(list) {
            *slot = field;
        }
        Self(all)
    }

    pub fn as_slice(&self) -> &[(&'static str, Field<'a>)] {
        &self.0
    }

    /// The value logged under `name` (`None` when absent).
    pub fn get(&self, name: &str) -> Option<Field<'a>> {
        self.0
            .iter()
            .find(|(key, v)| {
                *v != Field::Absent && key.get(2..key.len().saturating_sub(2)) == Some(name)
            })
            .map(|(_, v)| *v)
    }
}

/// What a decision may take from where it runs: the server's settings, or the CLI's defaults.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Defaults {
    /// The freeze-debt cap when a request names none.
    pub debt_cap: u64,
}

impl Default for Defaults {
    fn default() -> Self {
        Self {
            debt_cap: DEFAULT_DEBT_CAP,
        }
    }
}

/// One decision endpoint: how its body is read, how it decides, and every way it answers.
pub trait Decision: Sized {
    /// The endpoint's path without its `/`: the metric label and the log's `endpoint`.
    const ENDPOINT: &'static str;
    /// Whether the answer has a Markdown form (`Accept: text/markdown`).
    const MARKDOWN: bool = false;
    type Request;
    type Answer: Serialize + DeserializeOwned;

    /// Reads a body strictly: a 400 for what is not the format, a 422 naming each field.
    fn parse(body: &[u8]) -> Result<Self::Request, Problem>;
    /// Decides. Pure and deterministic, fails closed.
    fn decide(request: &Self::Request, defaults: &Defaults) -> Self;
    /// 0 go; 1 the patch is wrong; 2 a human must look; 3 the queue is stopped (75 pending).
    fn exit_code(&self) -> u8;
    /// The metric label of this decision: its disposition or outcome word.
    fn label(&self) -> &'static str;
    /// What the decision log records of it.
    fn log_fields<'a>(&'a self, request: &'a Self::Request) -> LogFields<'a>;
    /// The answer, with the decision's id.
    fn answer(&self, request: &Self::Request, decision_id: String) -> Self::Answer;
    /// The exit code an answer says (to hold a server's status against its body).
    fn answer_exit_code(answer: &Self::Answer) -> u8;
    /// The one line, newline-terminated (`Accept: text/plain`, the CLI's default output).
    fn line(answer: &Self::Answer) -> String;
    /// The Markdown report, for a decision with [`Decision::MARKDOWN`].
    fn markdown(answer: &Self::Answer) -> String {
        Self::line(answer)
    }
    /// The answer as JSON.
    fn json(answer: &Self::Answer) -> Vec<u8> {
        serde_json::to_vec(answer).unwrap_or_default()
    }
    /// Seconds to ask again after (`Retry-After`), for an answer that is not final.
    fn retry_after(&self) -> Option<u32> {
        None
    }
}

/// Reads a JSON body strictly (400 when it is not JSON) and validates it with `validate`
/// (422 naming every invalid field): the `parse` of every JSON decision.
pub fn json_body<T>(
    body: &[u8],
    validate: fn(&serde_json::Value) -> Result<T, super::problem::Errors>,
) -> Result<T, Problem> {
    validate(&super::json::parse_json(body)?).map_err(Problem::invalid)
}

/// Parses, decides and answers in one go, as the CLI does locally (the server does the same
/// through `http::decide`, with its own settings and a log line).
pub fn decide_body<D: Decision>(
    body: &[u8],
    defaults: &Defaults,
    decision_id: String,
) -> Result<D::Answer, Problem> {
    let request = D::parse(body)?;
    let decision = D::decide(&request, defaults);
    Ok(decision.answer(&request, decision_id))
}
