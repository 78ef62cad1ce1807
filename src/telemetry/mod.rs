//! Logging: structured JSON lines by default (the decision log is read back by machines),
//! human-readable text when asked. The decision log is one `info` event per decision under
//! the target `patchgate::decision`.

mod batch;
mod json;

pub use batch::{BatchWriter, FlushGuard};

use std::io::IsTerminal;
use std::time::Duration;

use clap::ValueEnum;
use tracing_subscriber::EnvFilter;

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
        .with_writer(writer);
    let result = match format {
        LogFormat::Json => builder
            .fmt_fields(json::JsonFields)
            .event_format(json::JsonLines)
            .try_init(),
        LogFormat::Text => builder
            .with_ansi(std::io::stdout().is_terminal())
            .try_init(),
    };
    // A second init (several servers in one test process) keeps the first subscriber.
    let _ = result;
    guard
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
        message = "decision",
    );
}

/// Writes one quorum decision to the decision log.
pub fn log_quorum_decision(
    request_id: &str,
    decision_id: &str,
    request: &QuorumRequest,
    decision: &QuorumDecision,
) {
    let count = |v: Vote| decision.properties.iter().filter(|p| p.vote == v).count() as u64;
    tracing::info!(
        target: DECISION_TARGET,
        endpoint = "quorum",
        request_id,
        decision_id,
        patch_id = request.patch_id.as_deref(),
        outcome = decision.outcome.as_str(),
        reason = decision.reason.as_str(),
        rule = u64::from(decision.rule),
        exit_code = decision.outcome.exit_code(),
        votes_yes = count(Vote::Yes),
        votes_no = count(Vote::No),
        excluded = count(Vote::Excluded),
        debt_counted = decision.debt.counted,
        debt_cap = decision.debt.cap,
        seal_match = decision.facts.seal_matches,
        message = "decision",
    );
}

/// Writes one patch-gate decision to the decision log. A decision the router made also
/// carries its verdicts and `attribution`, so `/review` counts it with the router's own.
pub fn log_gate_decision(
    request_id: &str,
    decision_id: &str,
    request: &GateRequest,
    decision: &GateDecision,
) {
    let verdict = |f: fn(&crate::core::route::Verdicts) -> crate::core::route::Verdict| {
        decision.evidence.as_ref().map(|v| f(v).as_str())
    };
    tracing::info!(
        target: DECISION_TARGET,
        endpoint = "gate",
        request_id,
        decision_id,
        patch_id = request.patch_id.as_deref(),
        rule = <&str>::from(decision.rule),
        disposition = decision.disposition.as_str(),
        reason = decision.reason.as_str(),
        attribution = decision.evidence.map(|_| decision.reason.as_str()),
        property_check = verdict(|v| v.property_check),
        fixture_check = verdict(|v| v.fixture_check),
        flaky_freeze = verdict(|v| v.flaky_freeze),
        exit_code = decision.exit_code(),
        changed_files = request.changed_files.len() as u64,
        message = "decision",
    );
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
    let verdict = |f: fn(&crate::core::route::Verdicts) -> crate::core::route::Verdict| {
        outcome.verdicts.as_ref().map(|v| f(v).as_str())
    };
    tracing::info!(
        target: DECISION_TARGET,
        endpoint = "route/checks",
        request_id,
        decision_id,
        patch_id = request.patch_id.as_deref(),
        head_sha = request.head_sha.as_str(),
        property_check = verdict(|v| v.property_check),
        fixture_check = verdict(|v| v.fixture_check),
        flaky_freeze = verdict(|v| v.flaky_freeze),
        disposition = outcome.disposition().as_str(),
        attribution = outcome.decision.map(|d| d.attribution.as_str()),
        rule = outcome.decision.map(|d| d.rule.as_str()),
        exit_code = outcome.exit_code(),
        pending = outcome.pending.len() as u64,
        message = "decision",
    );
}
