//! `patchgate replay`'s table (issue 66; CONTRACT.md 16; docs/design/replay.md): every recorded
//! call, what the plain programs and the base answered to it, and what the rules of 16.2 and
//! 16.3 would say of the calls — listed, nothing decided. The gate's report lists only the
//! differences; this is the whole table, for an adopter choosing which rule to require.

use std::fmt::Write as _;

use super::against_base::against_base;
use super::behavior::{BehaviorFacts, BehaviorFinding, CallState};
use super::report_text::code;

/// The table in Markdown: one row a recorded call, then the calls not recorded, then the
/// findings.
pub fn replay_table(b: &BehaviorFacts) -> String {
    let mut out = String::new();
    if b.calls.is_empty() {
        out.push_str("No call into a function the patch changes was recorded.\n");
    } else {
        out.push_str(
            "| function | arguments | made by | under the tests | plain program (twice) | on the base |\n\
             |---|---|---|---|---|---|\n",
        );
        for (i, c) in b.calls.iter().enumerate() {
            let plain = match c.state() {
                CallState::Agrees => "the same".to_owned(),
                _ => format!("{} · {}", code(c.plain_shown(0)), code(c.plain_shown(1))),
            };
            let state: &str = c.state().into();
            let base = b
                .against_base
                .iter()
                .find(|r| usize::try_from(r.call).is_ok_and(|n| n == i))
                .map_or_else(
                    || "not compared".to_owned(),
                    |r| {
                        let on: &str = r.recorded.into();
                        format!(
                            "{on}; neighbours differing: {} of {}",
                            r.differing, r.neighbours
                        )
                    },
                );
            let _ = writeln!(
                out,
                "| {} | {} | {} | {} | {plain} ({state}) | {base} |",
                code(&format!("{}:{} {}", c.file, c.line, c.function)),
                code(&c.arguments),
                code(&c.check),
                code(&c.recorded.shown),
            );
        }
    }
    if !b.unrecorded.is_empty() {
        out.push_str("\nNot recorded:\n\n");
        for u in &b.unrecorded {
            let _ = writeln!(
                out,
                "- {} ×{}: {}",
                code(&format!("{} {}", u.file, u.function)),
                u.count,
                u.why
            );
        }
    }
    out.push_str("\nWhat the rules would say (listed; nothing decided):\n\n");
    let mut said = 0;
    for c in b
        .calls
        .iter()
        .filter(|c| c.state() == CallState::BehavesUnderTest)
    {
        let _ = writeln!(
            out,
            "- `{}`: {} with {}",
            <&str>::from(BehaviorFinding::BehavesUnderTest),
            code(&c.function),
            code(&c.arguments)
        );
        said += 1;
    }
    for (finding, row) in against_base(b) {
        let Some(c) = usize::try_from(row.call).ok().and_then(|i| b.calls.get(i)) else {
            continue;
        };
        let _ = writeln!(
            out,
            "- `{}`: {} with {}",
            <&str>::from(finding),
            code(&c.function),
            code(&c.arguments)
        );
        said += 1;
    }
    if said == 0 {
        out.push_str("- nothing\n");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::gate::base_facts::{AgainstBase, BaseState};
    use crate::core::gate::behavior::{CallEnd, CallResult, ReplayedCall};
    use crate::core::gate::observe::ObserveRule;

    fn returned(shown: &str) -> CallResult {
        CallResult {
            end: CallEnd::Returned,
            shown: shown.to_owned(),
            // What is compared; the table's tests need only equal texts to be equal.
            digest: Some(shown.to_owned()),
        }
    }

    fn facts(plain: [&str; 2], base: Option<(BaseState, u32, u32)>) -> BehaviorFacts {
        BehaviorFacts {
            behaves_under_test: ObserveRule::Listed,
            calls: vec![ReplayedCall {
                function: "apply_discount".to_owned(),
                file: "shop/pricing.py".to_owned(),
                line: 3,
                check: "tests/test_cases.py::test_half".to_owned(),
                arguments: "1999, 50".to_owned(),
                recorded: returned("1000"),
                plain: plain.iter().map(|s| returned(s)).collect(),
            }],
            unrecorded: Vec::new(),
            unobserved_difference: ObserveRule::Listed,
            special_case: ObserveRule::Listed,
            unasserted_difference: ObserveRule::Listed,
            against_base: base
                .map(|(recorded, neighbours, differing)| AgainstBase {
                    call: 0,
                    recorded,
                    neighbours,
                    differing,
                    differences: Vec::new(),
                })
                .into_iter()
                .collect(),
            added_fail_on_base: None,
            failing_on_base: Vec::new(),
        }
    }

    // Expectations written from CONTRACT.md 16.2/16.3's table, by hand.
    #[test]
    fn each_row_says_what_the_rules_would_and_decides_nothing() {
        let cases: [(_, _, &[&str]); 5] = [
            (
                ["1000", "1000"],
                None,
                &["| the same (agrees) | not compared |", "- nothing"],
            ),
            (
                ["999", "999"],
                None,
                &[
                    "(behaves-under-test)",
                    "- `behaves-under-test`: `apply_discount`",
                ],
            ),
            (["999", "1000"], None, &["(nondeterministic)", "- nothing"]),
            (
                ["1000", "1000"],
                Some((BaseState::Differs, 8, 0)),
                &[
                    "differs; neighbours differing: 0 of 8",
                    "- `special-case`: `apply_discount` with `1999, 50`",
                ],
            ),
            (
                ["1000", "1000"],
                Some((BaseState::Agrees, 8, 3)),
                &[
                    "agrees; neighbours differing: 3 of 8",
                    "- `unobserved-difference`",
                ],
            ),
        ];
        for (plain, base, wanted) in cases {
            let table = replay_table(&facts(plain, base));
            for w in wanted {
                assert!(table.contains(w), "{plain:?} {base:?}: {w} not in\n{table}");
            }
        }
    }

    #[test]
    fn no_calls_says_so() {
        let mut f = facts(["1", "1"], None);
        f.calls.clear();
        assert!(replay_table(&f).starts_with("No call into a function the patch changes"));
    }
}
