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

pub use crate::core::decision::Field;
use crate::core::decision::{Decision, LogFields, log_key as key};

/// The name in a [`key!`].
fn key_name(key: &str) -> &str {
    key.get(2..key.len().saturating_sub(2)).unwrap_or(key)
}

/// The fields of a decision line, for a text-mode event: `name=value ...`.
struct TextFields<'a>(
    &'a [(&'static str, Field<'a>)],
    &'a [(&'static str, Field<'a>)],
);

impl std::fmt::Display for TextFields<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        for (key, value) in self.0.iter().chain(self.1) {
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
fn log_decision<'a>(head: &[(&'static str, Field<'a>)], fields: &[(&'static str, Field<'a>)]) {
    if !tracing::enabled!(target: DECISION_TARGET, tracing::Level::INFO) {
        return;
    }
    match DECISION_LINES.get() {
        Some(writer) => json::with_line(|line| {
            json::decision_line(line, DECISION_TARGET, head.iter().chain(fields));
            // A log that cannot be written has nowhere to report that; the server goes on.
            let _ = writer.make_writer().write_all(line.as_bytes());
        }),
        None => tracing::info!(target: DECISION_TARGET, "decision{}", TextFields(head, fields)),
    }
}

/// Writes one decision of `D` to the decision log, as it was made at `endpoint` (`D`'s own,
/// or `route/batch` for a `/route` document decided in a batch).
pub fn log_decision_of<D: Decision>(
    endpoint: &'static str,
    request_id: &str,
    decision_id: &str,
    request: &D::Request,
    decision: &D,
) {
    if !tracing::enabled!(target: DECISION_TARGET, tracing::Level::INFO) {
        return;
    }
    log_decision_at(
        endpoint,
        request_id,
        decision_id,
        &decision.log_fields(request),
    );
}

/// Writes one decision line: the endpoint, the request and decision ids, then `fields`.
/// One decision of `D` as the decision log writes it (the line `serve` writes for it, the
/// request id `cli`), for a command that keeps its own log (`patchgate gate
/// --decision-log`); `shadow` adds `"shadow":true` (the decision was reported, not enforced).
pub fn decision_line_of<D: Decision>(
    decision_id: &str,
    request: &D::Request,
    decision: &D,
    shadow: bool,
) -> String {
    let fields = decision.log_fields(request);
    let head = [
        (key!("endpoint"), Field::Plain(D::ENDPOINT)),
        (key!("request_id"), Field::Plain("cli")),
        (key!("decision_id"), Field::Plain(decision_id)),
    ];
    let tail = [(
        key!("shadow"),
        if shadow {
            Field::Bool(true)
        } else {
            Field::Absent
        },
    )];
    json::with_line(|line| {
        json::decision_line(
            line,
            DECISION_TARGET,
            head.iter().chain(fields.as_slice()).chain(tail.iter()),
        );
        line.clone()
    })
}

pub fn log_decision_at<'a>(
    endpoint: &'static str,
    request_id: &'a str,
    decision_id: &'a str,
    fields: &LogFields<'a>,
) {
    let head = [
        (key!("endpoint"), Field::Plain(endpoint)),
        (key!("request_id"), Field::Str(request_id)),
        (key!("decision_id"), Field::Plain(decision_id)),
    ];
    log_decision(&head, fields.as_slice());
}
