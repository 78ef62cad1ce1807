//! Logging: structured JSON lines by default (the decision log is read back by machines),
//! human-readable text when asked. The decision log is one `info` event per decision under
//! the target `patchgate::decision`.
//!
//! A decision line is on every request's path, so in JSON mode it does not go through a
//! tracing event: its fields are a fixed list, written straight into the line (one string
//! escape check each) and handed to the same [`BatchWriter`] the subscriber writes to, after
//! the same level filter (`RUST_LOG`). The line is exactly what the subscriber's JSON format
//! writes for an event. In text mode, and with no server subscriber installed, it is an
//! ordinary tracing event.

mod batch;
mod json;

pub use batch::{BatchWriter, FlushGuard};

use std::io::{IsTerminal, Write as _};
use std::sync::OnceLock;
use std::time::Duration;

use clap::ValueEnum;
use tracing_subscriber::EnvFilter;
use tracing_subscriber::fmt::MakeWriter as _;

use crate::core::admit::{AdmitDecision, AdmitRequest};
use crate::core::answer::RouteOutcome;
use crate::core::checks::{ChecksOutcome, ChecksRequest};
use crate::core::gate::{GateDecision, GateRequest};
use crate::core::quorum::{QuorumDecision, QuorumRequest, Vote};

/// The target of decision-log events; filter on it with `RUST_LOG=patchgate::decision=info`.
pub const DECISION_TARGET: &str = crate::core::DECISION_TARGET;

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum LogFormat {
    /// One JSON object per line.
    Json,
    /// Human-readable lines.
    Text,
}

/// Installs the server's global subscriber, writing to stdout through [`BatchWriter`]: a
/// request formats its line into memory, and a thread writes the lines out in batches (at
/// least every 100 ms), so no request waits on a `write(2)` of its own. Nothing is dropped. Keep the returned guard
/// alive until exit: dropping it flushes what is queued. `RUST_LOG` overrides the default
/// level (`info`).
pub fn init_server(format: LogFormat) -> FlushGuard {
    let (writer, guard) = BatchWriter::new(std::io::stdout(), Duration::from_millis(100));
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info"));
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(writer.clone());
    let result = match format {
        LogFormat::Json => {
            let result = builder
                .fmt_fields(json::JsonFields)
                .event_format(json::JsonLines)
                .try_init();
            if result.is_ok() {
                let _ = DECISION_LINES.set(writer);
            }
            result
        }
        LogFormat::Text => builder
            .with_ansi(std::io::stdout().is_terminal())
            .try_init(),
    };
    // A second init (several servers in one test process) keeps the first subscriber.
    let _ = result;
    guard
}

/// Where decision lines go as JSON, bypassing the tracing event: the server subscriber's own
/// writer, set when that subscriber is installed in JSON mode.
static DECISION_LINES: OnceLock<BatchWriter> = OnceLock::new();

/// The value of one decision-log field. An absent one is left out of the line (as a tracing
/// event leaves out a `None`).
#[derive(Debug, Clone, Copy)]
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

/// A decision-log field's key as it is written into the JSON line: `,"name":`.
macro_rules! key {
    ($name:literal) => {
        concat!(",\"", $name, "\":")
    };
}

/// The name in a [`key!`].
fn key_name(key: &str) -> &str {
    key.get(2..key.len().saturating_sub(2)).unwrap_or(key)
}

/// The fields of a decision line, for a text-mode event: `name=value ...`.
struct TextFields<'a>(&'a [(&'static str, Field<'a>)]);

impl std::fmt::Display for TextFields<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        for (key, value) in self.0 {
            let name = key_name(key);
            match value {
                Field::Str(v) | Field::Plain(v) => write!(f, " {name}={v:?}")?,
                Field::U64(v) => write!(f, " {name}={v}")?,
                Field::Bool(v) => write!(f, " {name}={v}")?,
                Field::Absent => {}
            }
        }
        Ok(())
    }
}

/// Writes one decision line (when `patchgate::decision` is on at `info`). Each key is a
/// [`key!`].
fn log_decision(fields: &[(&'static str, Field<'_>)]) {
    if !tracing::enabled!(target: DECISION_TARGET, tracing::Level::INFO) {
        return;
    }
    match DECISION_LINES.get() {
        Some(writer) => json::with_line(|line| {
            json::decision_line(line, DECISION_TARGET, fields);
            // A log that cannot be written has nowhere to report that; the server goes on.
            let _ = writer.make_writer().write_all(line.as_bytes());
        }),
        None => tracing::info!(target: DECISION_TARGET, "decision{}", TextFields(fields)),
    }
}

/// Writes one router decision to the decision log.
pub fn log_route_decision(
    endpoint: &'static str,
    request_id: &str,
    decision_id: &str,
    outcome: &RouteOutcome,
) {
    let d = &outcome.decision;
    let v = &outcome.verdicts;
    log_decision(&[
        (key!("endpoint"), Field::Plain(endpoint)),
        (key!("request_id"), Field::Str(request_id)),
        (key!("decision_id"), Field::Plain(decision_id)),
        (key!("patch_id"), outcome.patch_id.as_deref().into()),
        (
            key!("property_check"),
            Field::Plain(v.property_check.as_str()),
        ),
        (
            key!("fixture_check"),
            Field::Plain(v.fixture_check.as_str()),
        ),
        (key!("flaky_freeze"), Field::Plain(v.flaky_freeze.as_str())),
        (key!("disposition"), Field::Plain(d.disposition.as_str())),
        (key!("attribution"), Field::Plain(d.attribution.as_str())),
        (key!("rule"), Field::Plain(d.rule.as_str())),
        (key!("exit_code"), d.exit_code().into()),
    ]);
}

/// Writes one quorum decision to the decision log.
pub fn log_quorum_decision(
    request_id: &str,
    decision_id: &str,
    request: &QuorumRequest,
    decision: &QuorumDecision,
) {
    let count = |v: Vote| decision.properties.iter().filter(|p| p.vote == v).count() as u64;
    log_decision(&[
        (key!("endpoint"), Field::Plain("quorum")),
        (key!("request_id"), Field::Str(request_id)),
        (key!("decision_id"), Field::Plain(decision_id)),
        (key!("patch_id"), request.patch_id.as_deref().into()),
        (key!("outcome"), Field::Plain(decision.outcome.as_str())),
        (key!("reason"), Field::Plain(decision.reason.as_str())),
        (key!("rule"), u64::from(decision.rule).into()),
        (key!("exit_code"), decision.outcome.exit_code().into()),
        (key!("votes_yes"), count(Vote::Yes).into()),
        (key!("votes_no"), count(Vote::No).into()),
        (key!("excluded"), count(Vote::Excluded).into()),
        (key!("debt_counted"), decision.debt.counted.into()),
        (key!("debt_cap"), decision.debt.cap.into()),
        (key!("seal_match"), decision.facts.seal_matches.into()),
    ]);
}

/// Writes one admission decision to the decision log.
pub fn log_admit_decision(
    request_id: &str,
    decision_id: &str,
    request: &AdmitRequest,
    decision: &AdmitDecision,
) {
    log_decision(&[
        (key!("endpoint"), Field::Plain("admit")),
        (key!("request_id"), Field::Str(request_id)),
        (key!("decision_id"), Field::Plain(decision_id)),
        (key!("check_id"), Field::Str(&request.check_id)),
        (key!("kind"), Field::Plain(request.kind.as_str())),
        (key!("mutant"), Field::Str(&request.mutant)),
        (key!("outcome"), Field::Plain(decision.outcome.as_str())),
        (key!("reason"), Field::Plain(decision.reason.as_str())),
        (key!("rule"), u64::from(decision.rule).into()),
        (key!("exit_code"), decision.outcome.exit_code().into()),
        (
            key!("base_state"),
            Field::Plain(decision.facts.base.as_str()),
        ),
        (
            key!("mutant_state"),
            Field::Plain(decision.facts.mutant.as_str()),
        ),
        (key!("seal_match"), decision.facts.seal_matches.into()),
    ]);
}

/// A verdict of a decision the router made, or absent.
fn verdict_field(
    verdicts: Option<&crate::core::route::Verdicts>,
    pick: fn(&crate::core::route::Verdicts) -> crate::core::route::Verdict,
) -> Field<'static> {
    verdicts.map_or(Field::Absent, |v| Field::Plain(pick(v).as_str()))
}

/// Writes one patch-gate decision to the decision log. A decision the router made also
/// carries its verdicts and `attribution`, so `/review` counts it with the router's own.
pub fn log_gate_decision(
    request_id: &str,
    decision_id: &str,
    request: &GateRequest,
    decision: &GateDecision,
) {
    let verdicts = decision.evidence.as_ref();
    log_decision(&[
        (key!("endpoint"), Field::Plain("gate")),
        (key!("request_id"), Field::Str(request_id)),
        (key!("decision_id"), Field::Plain(decision_id)),
        (key!("patch_id"), request.patch_id.as_deref().into()),
        (key!("rule"), Field::Plain(<&str>::from(decision.rule))),
        (
            key!("disposition"),
            Field::Plain(decision.disposition.as_str()),
        ),
        (key!("reason"), Field::Plain(decision.reason.as_str())),
        (
            key!("attribution"),
            verdicts.map_or(Field::Absent, |_| Field::Plain(decision.reason.as_str())),
        ),
        (
            key!("property_check"),
            verdict_field(verdicts, |v| v.property_check),
        ),
        (
            key!("fixture_check"),
            verdict_field(verdicts, |v| v.fixture_check),
        ),
        (
            key!("flaky_freeze"),
            verdict_field(verdicts, |v| v.flaky_freeze),
        ),
        (key!("exit_code"), decision.exit_code().into()),
        (
            key!("changed_files"),
            (request.changed_files.len() as u64).into(),
        ),
    ]);
}

/// Writes one `/route/checks` decision to the decision log. A routed one carries the verdicts
/// and the attribution (so `/review` counts it with `/route`'s); a PENDING one says how many
/// checks still run.
pub fn log_checks_decision(
    request_id: &str,
    decision_id: &str,
    request: &ChecksRequest,
    outcome: &ChecksOutcome,
) {
    let verdicts = outcome.verdicts.as_ref();
    let decided = |f: fn(&crate::core::route::Decision) -> &'static str| {
        outcome
            .decision
            .map_or(Field::Absent, |d| Field::Plain(f(&d)))
    };
    log_decision(&[
        (key!("endpoint"), Field::Plain("route/checks")),
        (key!("request_id"), Field::Str(request_id)),
        (key!("decision_id"), Field::Plain(decision_id)),
        (key!("patch_id"), request.patch_id.as_deref().into()),
        // Checked to be hex when the request was read; escaped all the same (it is the client's).
        (key!("head_sha"), Field::Str(request.head_sha.as_str())),
        (
            key!("property_check"),
            verdict_field(verdicts, |v| v.property_check),
        ),
        (
            key!("fixture_check"),
            verdict_field(verdicts, |v| v.fixture_check),
        ),
        (
            key!("flaky_freeze"),
            verdict_field(verdicts, |v| v.flaky_freeze),
        ),
        (
            key!("disposition"),
            Field::Plain(outcome.disposition().as_str()),
        ),
        (key!("attribution"), decided(|d| d.attribution.as_str())),
        (key!("rule"), decided(|d| d.rule.as_str())),
        (key!("exit_code"), outcome.exit_code().into()),
        (key!("pending"), (outcome.pending.len() as u64).into()),
    ]);
}

/// Writes one seal decision to the decision log.
pub fn log_seal_decision(
    request_id: &str,
    decision_id: &str,
    seal: &str,
    files: u64,
    outcome: &'static str,
    exit_code: u8,
) {
    log_decision(&[
        (key!("endpoint"), Field::Plain("seal")),
        (key!("request_id"), Field::Str(request_id)),
        (key!("decision_id"), Field::Plain(decision_id)),
        (key!("seal"), Field::Plain(seal)),
        (key!("files"), files.into()),
        (key!("outcome"), Field::Plain(outcome)),
        (key!("exit_code"), exit_code.into()),
    ]);
}
