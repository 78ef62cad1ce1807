//! The behaviour step (issue 66): the replayed calls as the answer shows them, and
//! `fixture_check` after them (the rule itself is [`super::behavior::ReplayedCall::state`]).

use super::against_base::against_base;
use super::base_facts::{AgainstBase, BaseState};
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
    let on = |b: &&BehaviorFacts| {
        [
            b.behaves_under_test,
            b.unobserved_difference,
            b.special_case,
            b.unasserted_difference,
        ]
        .iter()
        .any(|r| *r != ObserveRule::Off)
    };
    let Some(b) = facts.filter(on) else {
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
    let differs = differs.filter(|_| b.behaves_under_test != ObserveRule::Off);
    let mut verdict = match differs {
        Some(_)
            if b.behaves_under_test == ObserveRule::Required && fixture_check == Verdict::Pass =>
        {
            Verdict::Fail
        }
        _ => fixture_check,
    };
    // Against the base (16.3): a cause whose rule is required makes a pass unknown.
    let against = against_base(b);
    let decisive = against
        .iter()
        .find(|(f, _)| b.rule_of(*f) == ObserveRule::Required);
    if decisive.is_some() && verdict == Verdict::Pass {
        verdict = Verdict::Unknown;
    }
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
    summary.push_str(&base_summary(
        b,
        &against,
        decisive.is_some() && verdict == Verdict::Unknown,
    ));
    let found = match differs {
        Some(_) => Some(BehaviorFinding::BehavesUnderTest),
        None => decisive.or(against.first()).map(|(f, _)| *f),
    };
    let step = super::steps::Step::Behavior {
        on: true,
        verdict,
        found,
        facts: Some(b.clone()),
        summary,
    };
    (step, verdict)
}

/// The comparison with the base, as the step says it: what was compared, and the first
/// difference of each cause found.
fn base_summary(
    b: &BehaviorFacts,
    found: &[(BehaviorFinding, &AgainstBase)],
    turned: bool,
) -> String {
    use super::steps::plural;
    if b.against_base.is_empty() {
        return String::new();
    }
    let rows = &b.against_base;
    let compared = rows
        .iter()
        .filter(|r| r.recorded != BaseState::Uncompared)
        .count();
    let differ = rows
        .iter()
        .filter(|r| r.recorded == BaseState::Differs)
        .count();
    let neighbours: u64 = rows.iter().map(|r| u64::from(r.neighbours)).sum();
    let differing: u64 = rows.iter().map(|r| u64::from(r.differing)).sum();
    let mut out = format!(
        "; against the base: {} compared ({differ} differ), {neighbours} neighbours ({differing} differ)",
        plural(compared, "recorded call", "recorded calls"),
    );
    if let Some(added) = b.added_fail_on_base {
        out.push_str(match added {
            true => {
                ", a test the patch adds (a new file, or new in a file it edits) fails on the base"
            }
            false => {
                ", the tests the patch adds (new files, or new in files it edits) pass on the base"
            }
        });
    }
    for (finding, row) in found {
        let call = usize::try_from(row.call).ok().and_then(|i| b.calls.get(i));
        let (Some(call), Some(d)) = (call, row.differences.first()) else {
            continue;
        };
        out.push_str(&format!(
            "; {}{}: {}({}){} gave {} on the base and {} on the patch",
            <&str>::from(*finding),
            match b.rule_of(*finding) {
                ObserveRule::Required => "",
                _ => " (listed)",
            },
            call.function,
            call.arguments,
            d.input
                .as_deref()
                .map_or(String::new(), |i| format!(" with {i} ({})", d.arguments)),
            d.base.shown,
            d.patch.shown,
        ));
    }
    if turned {
        out.push_str(": the suite's pass cannot vouch for this change, fixture_check is unknown");
    }
    out
}
