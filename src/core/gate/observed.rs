//! The observe step (issue 52): the observe facts as the answer shows them, and
//! `property_check` after them (the rule itself is [`super::observe::ObserveFacts::unobserved`]).

use super::observe::{ObserveFacts, Unobserved};
use super::steps::plural;
use crate::core::route::Verdict;

/// The observe step: the facts as the answer shows them, and `property_check` after it. Only
/// a pass is made unknown (a failure stays a failure; an open verdict keeps its own cause);
/// a suite that did not pass says its own cause, and the patch mutants it kept from running
/// count for nothing.
pub(super) fn observe_step(
    observe: Option<&ObserveFacts>,
    suite_passed: bool,
    property_check: Verdict,
) -> (super::steps::Step, Verdict) {
    let Some(o) = observe.filter(|o| o.on()) else {
        return (
            super::steps::Step::Observe {
                on: false,
                verdict: property_check,
                unobserved: None,
                facts: None,
                summary: "off: no check is asked to show it runs the patch's lines ([observe] in the config)".to_owned(),
            },
            property_check,
        );
    };
    let found = o
        .unobserved(suite_passed)
        .filter(|_| o.read || suite_passed);
    let verdict = match found {
        Some(_) if property_check == Verdict::Pass => Verdict::Unknown,
        _ => property_check,
    };
    let untaken = match o.untaken.first() {
        None => String::new(),
        Some(first) => format!(
            "; {} the patch adds no check takes, the first from {}:{}",
            plural(o.untaken.len(), "branch", "branches"),
            first.file,
            first.line
        ),
    };
    // How many ran, beside how many a check killed (issue 64): a mutant that never ran is
    // neither.
    let pending = o
        .mutants
        .iter()
        .filter(|m| m.state == super::observe::MutantState::Pending)
        .count();
    let mutants = match (o.mutants.len(), pending) {
        (0, _) => String::new(),
        (n, 0) => format!(
            "; {} of {} killed",
            o.killed(),
            plural(n, "patch mutant", "patch mutants")
        ),
        (n, p) if p == n => format!(
            "; {} listed, none run (the gate decided before they were due)",
            plural(n, "patch mutant", "patch mutants")
        ),
        (n, p) => format!(
            "; {} of {} killed, {p} not run",
            o.killed(),
            plural(n, "patch mutant", "patch mutants")
        ),
    };
    let seen = if !o.read {
        "the observed run's report was not read: nothing is known to run the change".to_owned()
    } else if o.line_count == 0 {
        "the patch changes no code line a check could run".to_owned()
    } else {
        format!(
            "{} of {} run by a check{untaken}{mutants}",
            o.run_count,
            plural(
                usize::try_from(o.line_count).unwrap_or(usize::MAX),
                "changed code line",
                "changed code lines"
            )
        )
    };
    let summary = match (verdict == property_check, found) {
        (false, Some(Unobserved::Change)) => {
            format!("{seen}: the change was not observed, property_check is unknown")
        }
        (false, Some(Unobserved::Branch)) => {
            format!(
                "{seen}: a branch the patch adds runs under no check, property_check is unknown"
            )
        }
        _ => seen,
    };
    (
        super::steps::Step::Observe {
            on: true,
            verdict,
            unobserved: found.filter(|_| verdict != property_check),
            facts: Some(o.clone()),
            summary,
        },
        verdict,
    )
}
