//! The changed code against the base (issue 66; CONTRACT.md 16.3; docs/design/replay.md): each
//! recorded call into a function the base also has, and its neighbours (each argument in turn
//! varied by its kind), made in a plain program on the base's tree and on the patch's, twice
//! each. The runner gathers what the two versions answered; the table here decides:
//!
//! | the patch's results differ from the base's | cause (a pass becomes `unknown`) |
//! |---|---|
//! | on some neighbour, on no recorded call | `unobserved-difference` |
//! | on a recorded call, on none of its neighbours | `special-case` |
//! | on recorded calls, and no test the patch adds fails on the base | `unasserted-difference` |
//! | nowhere, or where a test the patch adds fails on the base | — |
//!
//! Per function: the calls of one function are one table. A result that is missing, or that
//! differs between a version's two programs (time, randomness, identity), is never a
//! difference.

use super::base_facts::{AgainstBase, BaseState};
use super::behavior::{BehaviorFacts, BehaviorFinding};
use super::observe::ObserveRule;

/// What the table of 16.3 finds, in the order the step says them: per function, the first
/// row that shows it. `rules` gives each cause's rule; an `off` one is not looked for.
pub fn against_base(b: &BehaviorFacts) -> Vec<(BehaviorFinding, &AgainstBase)> {
    let mut functions: Vec<(&str, &str, Vec<&AgainstBase>)> = Vec::new();
    for row in &b.against_base {
        let Some(call) = usize::try_from(row.call).ok().and_then(|i| b.calls.get(i)) else {
            continue;
        };
        match functions
            .iter_mut()
            .find(|(f, file, _)| *f == call.function && *file == call.file)
        {
            Some((_, _, rows)) => rows.push(row),
            None => functions.push((&call.function, &call.file, vec![row])),
        }
    }
    let mut found = Vec::new();
    for (_, _, rows) in functions {
        let differs = |r: &&&AgainstBase| r.recorded == BaseState::Differs;
        let on_call = rows.iter().find(differs);
        let near = rows.iter().find(|r| r.differing > 0);
        if b.special_case != ObserveRule::Off
            && let Some(r) = rows
                .iter()
                .find(|r| differs(r) && r.neighbours > 0 && r.differing == 0)
        {
            found.push((BehaviorFinding::SpecialCase, *r));
        }
        // Declared: a call that differs was made by a test the patch adds that fails on the
        // base (16.3's last row: where that test looks, not anywhere a failing test exists).
        let declared = rows.iter().any(|r| {
            differs(&r)
                && usize::try_from(r.call)
                    .ok()
                    .and_then(|i| b.calls.get(i))
                    .is_some_and(|c| b.fails_on_base(&c.check))
        });
        match (on_call, near) {
            (None, Some(r)) if b.unobserved_difference != ObserveRule::Off => {
                found.push((BehaviorFinding::UnobservedDifference, *r));
            }
            (Some(r), _) if b.unasserted_difference != ObserveRule::Off && !declared => {
                found.push((BehaviorFinding::UnassertedDifference, *r));
            }
            _ => {}
        }
    }
    found
}

impl BehaviorFacts {
    /// The rule of a cause of 16.3.
    pub fn rule_of(&self, finding: BehaviorFinding) -> ObserveRule {
        match finding {
            BehaviorFinding::BehavesUnderTest => self.behaves_under_test,
            BehaviorFinding::UnobservedDifference => self.unobserved_difference,
            BehaviorFinding::SpecialCase => self.special_case,
            BehaviorFinding::UnassertedDifference => self.unasserted_difference,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::gate::behavior::{CallEnd, CallResult, ReplayedCall};

    fn call(function: &str) -> ReplayedCall {
        let r = CallResult {
            end: CallEnd::Returned,
            shown: "1".to_owned(),
            digest: Some("a".repeat(64)),
        };
        ReplayedCall {
            function: function.to_owned(),
            file: "m.py".to_owned(),
            line: 1,
            check: "t".to_owned(),
            arguments: "1".to_owned(),
            recorded: r.clone(),
            plain: vec![r.clone(), r],
        }
    }

    fn row(call: u32, recorded: BaseState, neighbours: u32, differing: u32) -> AgainstBase {
        AgainstBase {
            call,
            recorded,
            neighbours,
            differing,
            differences: Vec::new(),
        }
    }

    /// CONTRACT.md 16.3's table, written by hand: (rows of one function `f` and one of `g`,
    /// whether a test the patch adds fails on the base: `Some(true)` the very test `t` that
    /// made every call) → the causes found.
    #[test]
    fn the_table_of_16_3_decides_per_function() {
        use BaseState::{Agrees, Differs, Uncompared};
        use BehaviorFinding::{SpecialCase, UnassertedDifference, UnobservedDifference};
        let rows: [(Vec<AgainstBase>, Option<bool>, Vec<BehaviorFinding>); 9] = [
            // Agrees everywhere: a refactor.
            (vec![row(0, Agrees, 5, 0)], None, vec![]),
            // A neighbour differs, no recorded call does: where no check looks.
            (vec![row(0, Agrees, 5, 1)], None, vec![UnobservedDifference]),
            // The recorded call differs, none of its neighbours: the checks' exact input.
            (vec![row(0, Differs, 5, 0)], Some(true), vec![SpecialCase]),
            // ... and with no neighbour compared, no special case can be told.
            (vec![row(0, Differs, 0, 0)], Some(true), vec![]),
            // Differs on recorded calls and neighbours: a change the checks ran...
            (
                vec![row(0, Differs, 5, 3)],
                None,
                vec![UnassertedDifference],
            ),
            (
                vec![row(0, Differs, 5, 3)],
                Some(false),
                vec![UnassertedDifference],
            ),
            // ... asserted by a test the patch adds that fails on the base: a fix.
            (vec![row(0, Differs, 5, 3)], Some(true), vec![]),
            // One function's difference on a recorded call is not another's: per function.
            (
                vec![row(0, Agrees, 5, 2), row(1, Differs, 5, 2)],
                Some(true),
                vec![UnobservedDifference],
            ),
            // Uncompared is never a difference.
            (vec![row(0, Uncompared, 0, 0)], None, vec![]),
        ];
        for (rows, added, want) in rows {
            let facts = BehaviorFacts {
                behaves_under_test: ObserveRule::Required,
                unobserved_difference: ObserveRule::Required,
                special_case: ObserveRule::Required,
                unasserted_difference: ObserveRule::Listed,
                calls: vec![call("f"), call("g")],
                unrecorded: Vec::new(),
                against_base: rows.clone(),
                added_fail_on_base: added,
                failing_on_base: match added {
                    Some(true) => vec!["t".to_owned()],
                    _ => Vec::new(),
                },
            };
            let got: Vec<BehaviorFinding> = against_base(&facts).iter().map(|f| f.0).collect();
            assert_eq!(got, want, "{rows:?} {added:?}");
        }
    }

    #[test]
    fn a_rule_that_is_off_is_not_looked_for() {
        use BaseState::{Agrees, Differs};
        let facts = BehaviorFacts {
            behaves_under_test: ObserveRule::Required,
            unobserved_difference: ObserveRule::Off,
            special_case: ObserveRule::Off,
            unasserted_difference: ObserveRule::Off,
            calls: vec![call("f")],
            unrecorded: Vec::new(),
            against_base: vec![row(0, Agrees, 5, 1), row(0, Differs, 5, 0)],
            added_fail_on_base: None,
            failing_on_base: Vec::new(),
        };
        assert!(against_base(&facts).is_empty());
    }

    /// 16.3's last row is where the failing test looks: a test the patch adds that fails on
    /// the base declares the differences of the calls it made (a parametrized case by its
    /// id and `[…]`), not those another test made.
    #[test]
    fn a_failing_test_declares_only_the_calls_it_made() {
        for (failing, want) in [
            (vec!["t"], vec![]),
            (vec!["t[case-1]"], vec![]),
            (vec!["t_other"], vec![BehaviorFinding::UnassertedDifference]),
            (vec!["u"], vec![BehaviorFinding::UnassertedDifference]),
        ] {
            let facts = facts_failing(&failing, "t");
            let got: Vec<BehaviorFinding> = against_base(&facts).iter().map(|f| f.0).collect();
            assert_eq!(got, want, "{failing:?}");
        }
        // The recorder names a module as imported, the receipt by its package path: the same
        // test, its module named more fully on one side; not a module that only ends alike.
        for (failing, check, want) in [
            ("toolz.tests.test_size::f[0]", "test_size::f", vec![]),
            ("test_size::f", "toolz.tests.test_size::f", vec![]),
            ("tests.test_size::f[-1]", "tests.test_size::f", vec![]),
            (
                "toolz.tests.my_test_size::f[0]",
                "test_size::f",
                vec![BehaviorFinding::UnassertedDifference],
            ),
            (
                "toolz.tests.test_size::g",
                "test_size::f",
                vec![BehaviorFinding::UnassertedDifference],
            ),
        ] {
            let facts = facts_failing(&[failing], check);
            let got: Vec<BehaviorFinding> = against_base(&facts).iter().map(|f| f.0).collect();
            assert_eq!(got, want, "{failing} / {check}");
        }
    }

    /// One function's call made by `check`, differing on the base, with `failing` failing there.
    fn facts_failing(failing: &[&str], check: &str) -> BehaviorFacts {
        {
            use BaseState::Differs;
            let mut c = call("f");
            c.check = check.to_owned();
            BehaviorFacts {
                behaves_under_test: ObserveRule::Required,
                unobserved_difference: ObserveRule::Required,
                special_case: ObserveRule::Required,
                unasserted_difference: ObserveRule::Required,
                calls: vec![c],
                unrecorded: Vec::new(),
                against_base: vec![row(0, Differs, 5, 3)],
                added_fail_on_base: Some(true),
                failing_on_base: failing.iter().map(|f| (*f).to_owned()).collect(),
            }
        }
    }
}
