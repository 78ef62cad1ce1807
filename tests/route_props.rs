//! Properties of the router that must hold for every input, not just the table's rows.

use patchgate::core::answer::decide_route;
use patchgate::core::evidence::{parse_route_bytes, parse_route_request};
use patchgate::core::route::{Disposition, Verdict, Verdicts, route};
use proptest::prelude::*;
use serde_json::{Value, json};

fn verdict() -> impl Strategy<Value = Verdict> {
    prop_oneof![
        Just(Verdict::Pass),
        Just(Verdict::Fail),
        Just(Verdict::Unknown),
        Just(Verdict::Missing)
    ]
}

fn verdicts() -> impl Strategy<Value = Verdicts> {
    (verdict(), verdict(), verdict()).prop_map(|(p, f, z)| Verdicts {
        property_check: p,
        fixture_check: f,
        flaky_freeze: z,
    })
}

fn words(v: &Verdicts) -> [Verdict; 3] {
    [v.property_check, v.fixture_check, v.flaky_freeze]
}

/// Arbitrary JSON, a few levels deep.
fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(|n| json!(n)),
        prop_oneof![
            Just("pass".to_owned()),
            Just("fail".to_owned()),
            Just("missing".to_owned()),
            ".{0,12}"
        ]
        .prop_map(Value::String),
    ];
    leaf.prop_recursive(4, 32, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            prop::collection::btree_map(
                prop_oneof![
                    Just("property_check".to_owned()),
                    Just("fixture_check".to_owned()),
                    Just("flaky_freeze".to_owned()),
                    Just("patch_id".to_owned()),
                    Just("changed_files".to_owned()),
                    Just("frozen_tests".to_owned()),
                    Just("id".to_owned()),
                    Just("covers".to_owned()),
                    "[a-z_]{1,8}",
                ],
                inner,
                0..6
            )
            .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

proptest! {
    #[test]
    fn only_all_pass_merges(v in verdicts()) {
        let merges = route(&v).disposition == Disposition::MergeOk;
        prop_assert_eq!(merges, words(&v).iter().all(|w| *w == Verdict::Pass));
    }

    #[test]
    fn a_fail_without_missing_always_blocks(v in verdicts()) {
        let w = words(&v);
        if w.contains(&Verdict::Fail) && !w.contains(&Verdict::Missing) {
            prop_assert_eq!(route(&v).disposition, Disposition::Block);
        }
    }

    #[test]
    fn missing_always_escalates(v in verdicts()) {
        if words(&v).contains(&Verdict::Missing) {
            let d = route(&v);
            prop_assert_eq!(d.disposition, Disposition::Escalate);
            prop_assert_eq!(d.attribution.as_str(), "evidence-gap");
        }
    }

    #[test]
    fn unknown_is_never_a_pass(v in verdicts()) {
        if words(&v).contains(&Verdict::Unknown) {
            prop_assert_ne!(route(&v).disposition, Disposition::MergeOk);
        }
    }

    /// The decision depends on the verdicts, not on how the document is written: any order of
    /// its fields, any whitespace, gives the ladder's decision for those verdicts.
    #[test]
    fn the_decision_does_not_depend_on_field_order_or_layout(
        v in verdicts(),
        order in Just([0usize, 1, 2, 3]).prop_shuffle(),
        pad in prop_oneof![Just(""), Just(" "), Just("\n\t ")],
    ) {
        let fields = [
            format!(r#""property_check":"{}""#, v.property_check.as_str()),
            format!(r#""fixture_check":"{}""#, v.fixture_check.as_str()),
            format!(r#""flaky_freeze":"{}""#, v.flaky_freeze.as_str()),
            r#""patch_id":"pr-7""#.to_owned(),
        ];
        let body: Vec<String> = order.iter().map(|i| fields[*i].clone()).collect();
        let doc = format!("{pad}{{{pad}{}{pad}}}{pad}", body.join(&format!(",{pad}")));
        let request = parse_route_bytes(doc.as_bytes())
            .map_err(|p| TestCaseError::fail(format!("{doc}: {}", p.detail)))?;
        prop_assert_eq!(decide_route(&request).decision, route(&v));
    }

    /// Near-valid documents (real JSON, then cut short, given a key twice, or with one byte
    /// changed) are answered with a decision, a 400 (syntax) or a 422 (meaning), never anything
    /// else; a well-formed one is never a 400.
    #[test]
    fn near_valid_documents_are_decided_or_refused_with_400_or_422(
        value in json_value(),
        mutation in 0u8..4,
        at in any::<prop::sample::Index>(),
        byte in any::<u8>(),
    ) {
        let text = serde_json::to_string(&value).unwrap_or_default();
        let mut bytes = text.clone().into_bytes();
        match mutation {
            0 => {}
            1 => bytes.truncate(at.index(bytes.len().max(1))),
            2 => {
                // The first key again, right after the opening brace.
                if let Some(obj) = value.as_object()
                    && let Some((k, v)) = obj.iter().next()
                {
                    let dup = format!("{{{}:{},", serde_json::to_string(k).unwrap_or_default(), v);
                    bytes = text.replacen('{', &dup, 1).into_bytes();
                }
            }
            _ => {
                if !bytes.is_empty() {
                    let i = at.index(bytes.len());
                    bytes[i] = byte;
                }
            }
        }
        match parse_route_bytes(&bytes) {
            Ok(request) => {
                let _ = decide_route(&request);
            }
            Err(problem) => {
                prop_assert!(problem.status == 400 || problem.status == 422, "{}", problem.status);
                if mutation == 0 || mutation == 2 {
                    prop_assert_eq!(problem.status, 422, "{}: {}", text, problem.detail);
                }
            }
        }
    }

    #[test]
    fn parsing_never_panics_on_arbitrary_json_and_errors_name_a_field(value in json_value()) {
        match parse_route_request(&value) {
            Ok(request) => {
                let a = decide_route(&request);
                let b = decide_route(&request);
                prop_assert_eq!(a, b);
            }
            Err(errors) => {
                prop_assert!(!errors.is_empty());
                for e in &errors {
                    prop_assert!(e.pointer.is_empty() || e.pointer.starts_with('/'));
                    prop_assert!(!e.detail.is_empty());
                }
            }
        }
    }

    #[test]
    fn parsing_is_the_identity_on_the_four_words(v in verdicts()) {
        let mut doc = serde_json::Map::new();
        for (field, w) in [("property_check", v.property_check), ("fixture_check", v.fixture_check), ("flaky_freeze", v.flaky_freeze)] {
            doc.insert(field.to_owned(), json!(w.as_str()));
        }
        let parsed = parse_route_request(&Value::Object(doc)).map_err(|e| TestCaseError::fail(format!("{e:?}")))?;
        prop_assert_eq!(decide_route(&parsed).verdicts, v);
    }
}

fn scoped_strategy() -> impl Strategy<Value = Option<(Verdict, Vec<String>)>> {
    prop::option::of((verdict(), prop::collection::vec(any::<String>(), 0..4)))
}

proptest! {
    /// The hand-written answer writer on the hot path is byte for byte serde_json's output.
    #[test]
    fn the_answer_writer_matches_serde_json(
        v in verdicts(),
        patch_id in prop::option::of(any::<String>()),
        decision_id in any::<String>(),
        scoped in scoped_strategy(),
    ) {
        use patchgate::core::answer::{RouteAnswer, ScopedFreezeAnswer};
        let d = route(&v);
        let answer = RouteAnswer {
            patch_id,
            disposition: d.disposition,
            attribution: d.attribution,
            rule: d.rule,
            exit_code: d.exit_code(),
            decision_id,
            verdicts: v,
            scoped_freeze: scoped.map(|(derived, matched)| ScopedFreezeAnswer { derived, matched }),
        };
        let by_serde = serde_json::to_string(&answer).map_err(|e| TestCaseError::fail(e.to_string()))?;
        prop_assert_eq!(answer.to_json(), by_serde);
    }
}
