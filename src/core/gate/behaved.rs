//! The behaviour step (issue 66): the replayed calls as the answer shows them, and
//! `fixture_check` after them (the rule itself is [`super::behavior::ReplayedCall::state`]).

use super::behavior::{BehaviorFacts, BehaviorFinding, CallState};
use super::observe::ObserveRule;
use crate::core::route::Verdict;

/// The behaviour step: the facts as the answer shows them, and `fixture_check` after it. With
/// `behaves_under_test = "required"`, a call the code answers differently under the tests makes
/// a passing suite a failure: what it vouched for is not what the code does.
pub(super) fn behavior_step(
    facts: Option<&BehaviorFacts>,
    fixture_check: Verdict,
) -> (super::steps::Step, Verdict) {
    use super::steps::plural;
    let Some(b) = facts.filter(|b| b.behaves_under_test != ObserveRule::Off) else {
        let step = super::steps::Step::Behavior {
            on: false,
            verdict: fixture_check,
            found: None,
            facts: None,
            summary: "off: the changed code's calls are not replayed outside the tests ([replay] in the config)".to_owned(),
        };
        return (step, fixture_check);
    };
    let count = |s: CallState| b.calls.iter().filter(|c| c.state() == s).count();
    let differs = b
        .calls
        .iter()
        .find(|c| c.state() == CallState::BehavesUnderTest);
    let verdict = match differs {
        Some(_)
            if b.behaves_under_test == ObserveRule::Required && fixture_check == Verdict::Pass =>
        {
            Verdict::Fail
        }
        _ => fixture_check,
    };
    let unrecorded: u64 = b.unrecorded.iter().map(|u| u64::from(u.count)).sum();
    let mut summary = match b.calls.len() {
        0 => "no call into a changed function was recorded".to_owned(),
        n => format!(
            "{} made again twice in a plain program: {} answered as under the tests",
            plural(n, "recorded call", "recorded calls"),
            count(CallState::Agrees),
        ),
    };
    for (state, said) in [
        (CallState::BehavesUnderTest, "answered differently"),
        (CallState::Nondeterministic, "were nondeterministic"),
        (CallState::Unreplayed, "were not replayed"),
    ] {
        match count(state) {
            0 => {}
            n => summary.push_str(&format!(", {n} {said}")),
        }
    }
    if unrecorded > 0 {
        summary.push_str(&format!("; {unrecorded} calls not recorded"));
    }
    if let Some(c) = differs {
        summary.push_str(&format!(
            "; first: {}({}) in {}:{} gave {} under the tests and {} in a plain program",
            c.function,
            c.arguments,
            c.file,
            c.line,
            c.recorded.shown,
            c.plain_shown(0)
        ));
        if verdict != fixture_check {
            summary.push_str(": the suite's pass is not what the code does, fixture_check fails");
        }
    }
    let step = super::steps::Step::Behavior {
        on: true,
        verdict,
        found: differs.map(|_| BehaviorFinding::BehavesUnderTest),
        facts: Some(b.clone()),
        summary,
    };
    (step, verdict)
}
