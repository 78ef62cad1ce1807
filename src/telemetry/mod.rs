//! Logging: structured JSON lines by default (the decision log is read back by machines),
//! human-readable text when asked. The decision log is one `info` event per decision under
//! the target `patchgate::decision`.

mod json;

use std::io::IsTerminal;

use clap::ValueEnum;
use tracing_subscriber::EnvFilter;

use crate::core::answer::RouteOutcome;

/// The target of decision-log events; filter on it with `RUST_LOG=patchgate::decision=info`.
pub const DECISION_TARGET: &str = "patchgate::decision";

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum LogFormat {
    /// One JSON object per line.
    Json,
    /// Human-readable lines.
    Text,
}

/// Installs the global subscriber writing to stdout (the server) or stderr (the CLI).
/// `RUST_LOG` overrides the default level (`info`).
pub fn init(format: LogFormat, to_stderr: bool, default_level: &str) {
    let filter =
        EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new(default_level));
    let builder = tracing_subscriber::fmt().with_env_filter(filter);
    let result = match (format, to_stderr) {
        (LogFormat::Json, false) => builder
            .fmt_fields(json::JsonFields)
            .event_format(json::JsonLines)
            .with_writer(std::io::stdout)
            .try_init(),
        (LogFormat::Json, true) => builder
            .fmt_fields(json::JsonFields)
            .event_format(json::JsonLines)
            .with_writer(std::io::stderr)
            .try_init(),
        (LogFormat::Text, false) => builder
            .with_ansi(std::io::stdout().is_terminal())
            .with_writer(std::io::stdout)
            .try_init(),
        (LogFormat::Text, true) => builder
            .with_ansi(std::io::stderr().is_terminal())
            .with_writer(std::io::stderr)
            .try_init(),
    };
    // A second init (tests start several servers in one process) keeps the first subscriber.
    let _ = result;
}

/// Writes one router decision to the decision log.
pub fn log_route_decision(
    endpoint: &str,
    request_id: &str,
    decision_id: &str,
    outcome: &RouteOutcome,
) {
    let d = &outcome.decision;
    tracing::info!(
        target: DECISION_TARGET,
        endpoint,
        request_id,
        decision_id,
        patch_id = outcome.patch_id.as_deref(),
        property_check = outcome.verdicts.property_check.as_str(),
        fixture_check = outcome.verdicts.fixture_check.as_str(),
        flaky_freeze = outcome.verdicts.flaky_freeze.as_str(),
        disposition = d.disposition.as_str(),
        attribution = d.attribution.as_str(),
        rule = d.rule.as_str(),
        exit_code = d.exit_code(),
        "decision"
    );
}
