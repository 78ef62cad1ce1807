//! Properties of the gate, `/route/checks` and admission decisions that must hold for every
//! request, not just the hand-written rows: a go is only ever given on the contract's terms,
//! and every decision is deterministic and never panics.

use patchgate::core::admit::{AdmitDecision, AdmitOutcome};
use patchgate::core::checks::ChecksOutcome;
use patchgate::core::decision::{Decision, Defaults};
use patchgate::core::gate::{GateDecision, GateDisposition, NextStep, next_step};
use patchgate::core::route::Verdict;
use proptest::prelude::*;
use serde_json::{Value, json};

const SEALS: [&str; 2] = [
    "1111111111111111111111111111111111111111111111111111111111111111",
    "2222222222222222222222222222222222222222222222222222222222222222",
];
const FILES: [&str; 7] = [
    "src/a.py",
    "src/b/__pycache__/c.cpython-311.pyc",
    "src/b/c.py",
    "tests/test_a.py",
    "catalog.yaml",
    "props/p1.py",
    "docs/x.md",
];
const LOCALITIES: [&str; 3] = ["src", "src/b", "docs"];

fn run() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(json!(0)),
        Just(json!(1)),
        Just(json!(2)),
        Just(Value::Null)
    ]
}

fn subset<T: Clone + std::fmt::Debug>(all: &'static [T]) -> impl Strategy<Value = Vec<T>> {
    proptest::sample::subsequence(all.to_vec(), 0..=all.len())
}

/// A `/gate` body over a small world of files, properties and ledger rows, valid by
/// construction except where the strict reader says otherwise (then it is skipped).
fn gate_doc() -> impl Strategy<Value = Value> {
    let property = (any::<bool>(), 0..LOCALITIES.len(), any::<bool>());
    (
        subset(&FILES),
        (0..2usize, 0..2usize),
        proptest::collection::vec(property, 0..=3),
        (any::<bool>(), any::<bool>(), proptest::option::of(0u64..3)),
        proptest::collection::vec(proptest::option::of((run(), run())), 3),
        proptest::option::of((run(), any::<bool>())),
    )
        .prop_map(
            |(changed, (actual, expected), props, ledger, runs, suite)| {
                let (frozen_property, frozen_test, cap) = ledger;
                let catalog: Vec<Value> = props
                    .iter()
                    .enumerate()
                    .map(|(i, (strong, locality, sourced))| {
                        let mut row = json!({
                            "id": format!("p{i}"),
                            "strength": if *strong { "strong" } else { "weak" },
                            "locality": [LOCALITIES[*locality]],
                        });
                        if *sourced {
                            row["source"] = json!([format!("props/p{i}.py")]);
                        }
                        row
                    })
                    .collect();
                let mut rows = Vec::new();
                if frozen_property && !props.is_empty() {
                    rows.push(json!({"property_id": "p0", "state": "open"}));
                }
                if frozen_test {
                    rows.push(
                        json!({"test_id": "tests.test_a::t", "state": "open", "covers": ["src/b"]}),
                    );
                }
                let mut property_runs = serde_json::Map::new();
                for (i, r) in runs.iter().enumerate().take(props.len()) {
                    if let Some((a, b)) = r {
                        property_runs.insert(format!("p{i}"), json!({"runs": [a, b]}));
                    }
                }
                let mut doc = json!({
                    "patch_id": "pr-7",
                    "changed_files": changed,
                    "guarded": ["catalog.yaml", "patchgate.toml"],
                    "seal": {"actual": SEALS[actual], "expected": SEALS[expected]},
                    "catalog": {"properties": catalog},
                    "ledger": rows,
                    "property_runs": property_runs,
                });
                if let Some(cap) = cap {
                    doc["debt_cap"] = json!(cap);
                }
                if let Some((exit, frozen_failure)) = suite {
                    doc["fixture_suite"] = json!({"exit_code": exit});
                    if frozen_failure {
                        doc["fixture_suite"]["failed_tests"] = json!(["tests.test_a::t"]);
                    }
                }
                doc
            },
        )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    /// MERGE_OK only when the seal matches, debt is within the cap, no guarded input is edited
    /// and the router saw three passes; the same facts always get the same decision.
    #[test]
    fn the_gate_merges_only_on_the_contracts_terms(doc in gate_doc()) {
        let body = serde_json::to_vec(&doc).unwrap();
        let Ok(request) = GateDecision::parse(&body) else { return Ok(()); };
        let decision = GateDecision::decide(&request, &Defaults::default());
        prop_assert_eq!(&decision, &GateDecision::decide(&request, &Defaults::default()));
        if decision.disposition == GateDisposition::MergeOk {
            prop_assert_eq!(request.seal.actual, request.seal.expected);
            let answer = serde_json::to_value(decision.answer(&request, "d".into())).unwrap();
            let debt = answer["steps"].as_array().unwrap().iter().find(|s| s["step"] == "debt").unwrap();
            prop_assert!(debt["counted"].as_u64() <= debt["cap"].as_u64());
            let guard = answer["steps"].as_array().unwrap().iter().find(|s| s["step"] == "guard").unwrap();
            prop_assert_eq!(guard["hits"].as_array().map(Vec::len), Some(0));
            let binary = answer["steps"].as_array().unwrap().iter().find(|s| s["step"] == "binary").unwrap();
            prop_assert_eq!(binary["binaries"].as_array().map(Vec::len), Some(0));
            let v = decision.evidence.unwrap();
            prop_assert_eq!(
                [v.property_check, v.fixture_check, v.flaky_freeze],
                [Verdict::Pass; 3]
            );
            prop_assert_eq!(decision.exit_code(), 0);
        } else {
            prop_assert_ne!(decision.exit_code(), 0);
        }
    }

    /// The runner's plan never asks for what was given, and a decision it calls final is the
    /// decision: `decide` comes with the answer `POST /gate` gives on the same facts.
    #[test]
    fn the_plan_agrees_with_the_decision(doc in gate_doc()) {
        let body = serde_json::to_vec(&doc).unwrap();
        let Ok(request) = GateDecision::parse(&body) else { return Ok(()); };
        let plan = next_step(&request, 5);
        let decision = GateDecision::decide(&request, &Defaults::default());
        prop_assert_eq!(plan.disposition, decision.disposition);
        prop_assert_eq!(plan.rule, decision.rule);
        prop_assert_eq!(plan.reason, decision.reason);
        match plan.next {
            NextStep::Build => prop_assert!(request.build.is_none()),
            NextStep::Reproof => {
                let id = plan.reprove.clone().unwrap_or_default();
                prop_assert!(request.property_runs.contains_key(&id));
                prop_assert!(request.reproof.iter().all(|r| r.property != id));
            }
            NextStep::Runs => {
                prop_assert!(!plan.property_ids.is_empty() || plan.canary);
                for id in &plan.property_ids {
                    prop_assert!(!request.property_runs.contains_key(id));
                }
            }
            NextStep::Replay => {
                prop_assert!(!plan.replay.is_empty());
                for id in &plan.replay {
                    prop_assert!(request.property_runs.contains_key(id));
                    prop_assert!(request.replays.iter().all(|r| &r.property != id));
                }
            }
            NextStep::Suite => prop_assert!(request.fixture_suite.is_none()),
            NextStep::AddedTests => {
                prop_assert!(!request.added_tests.is_empty());
                prop_assert!(request.fixture_suite.as_ref().is_some_and(|s| s.added.is_none()));
            }
            NextStep::Rerun => {
                prop_assert!(!plan.deselect.is_empty());
                prop_assert!(request.fixture_suite.as_ref().is_some_and(|s| s.rerun.is_none()));
            }
            // Issue 52: only pending patch mutants, each named once, and only once the rest
            // passed.
            NextStep::PatchMutants => {
                let o = request.observe.as_ref();
                prop_assert!(o.is_some_and(|o| o.pending().count() > 0));
                prop_assert!(request.fixture_suite.is_some());
            }
            NextStep::Decide => prop_assert!(plan.property_ids.is_empty()),
        }
        // Issue 51: the work items are the step: something to run unless it is `decide`,
        // each item's needs met by an item of the answer or one a runner ran before it.
        prop_assert_eq!(
            plan.work.iter().all(|w| w.speculative),
            plan.next == NextStep::Decide
        );
        for item in &plan.work {
            for need in &item.needs {
                prop_assert!(
                    plan.work.iter().any(|w| &w.id == need)
                        || (need == "build" && request.build.is_some())
                        || (need == "suite" && request.fixture_suite.is_some())
                        || need.strip_prefix("runs:").is_some_and(|p| request.property_runs.contains_key(p)),
                    "{} needs {}", item.id, need
                );
            }
        }
        if plan.next != NextStep::Rerun {
            prop_assert!(plan.deselect.is_empty());
        }
        if plan.next != NextStep::Replay {
            prop_assert!(plan.replay.is_empty());
        }
    }

    /// Admission admits only a proof: the same seal, every base run a pass and every mutant
    /// run a catch.
    #[test]
    fn admission_admits_only_a_proof(
        base in proptest::collection::vec(run(), 2..=4),
        mutant in proptest::collection::vec(run(), 2..=4),
        same_seal: bool,
        catch in proptest::sample::subsequence(vec![1u8, 2, 101], 1..=3),
    ) {
        let doc = json!({
            "check_id": "p0", "kind": "property", "mutant": "m1",
            "seal": {"base": SEALS[0], "mutant": SEALS[usize::from(!same_seal)]},
            "base_runs": base, "mutant_runs": mutant, "catch_exit_codes": catch,
        });
        let body = serde_json::to_vec(&doc).unwrap();
        let request = AdmitDecision::parse(&body).unwrap();
        let decision = AdmitDecision::decide(&request, &Defaults::default());
        let answer = decision.answer(&request, "d".into());
        if answer.outcome == AdmitOutcome::Admitted {
            prop_assert!(same_seal);
            prop_assert!(base.iter().all(|r| *r == json!(0)));
            prop_assert!(mutant.iter().all(|r| r.as_u64().is_some_and(|c| catch.contains(&(c as u8)))));
            prop_assert!(answer.record.is_some());
        } else {
            prop_assert!(answer.record.is_none());
            prop_assert_ne!(answer.exit_code, 0);
        }
    }

    /// `/route/checks` merges only when nothing is pending and every gate's checks passed.
    #[test]
    fn checks_merge_only_when_every_check_passed(
        conclusions in proptest::collection::vec(
            proptest::option::of(prop_oneof![
                Just("success"), Just("failure"), Just("skipped"), Just("neutral"), Just("cancelled")
            ]),
            3,
        ),
    ) {
        let names = ["proptest", "fixtures", "quarantine"];
        let head = "abcdef1234567890abcdef1234567890abcdef12";
        let runs: Vec<Value> = names
            .iter()
            .zip(&conclusions)
            .enumerate()
            .map(|(i, (name, conclusion))| json!({
                "id": i + 1, "name": name, "head_sha": head,
                "status": if conclusion.is_some() { "completed" } else { "in_progress" },
                "conclusion": conclusion,
                "started_at": "2026-11-29T10:00:00Z",
                "completed_at": conclusion.map(|_| "2026-11-29T10:01:00Z"),
            }))
            .collect();
        let doc = json!({
            "head_sha": head,
            "gates": {"property_check": ["proptest"], "fixture_check": ["fixtures"], "flaky_freeze": ["quarantine"]},
            "check_runs": {"total_count": runs.len(), "check_runs": runs},
        });
        let body = serde_json::to_vec(&doc).unwrap();
        let request = ChecksOutcome::parse(&body).unwrap_or_else(|p| panic!("{p:?}"));
        let outcome = ChecksOutcome::decide(&request, &Defaults::default());
        prop_assert_eq!(&outcome, &ChecksOutcome::decide(&request, &Defaults::default()));
        if outcome.exit_code() == 0 {
            prop_assert!(conclusions.iter().all(|c| *c == Some("success")));
            prop_assert_eq!(outcome.pending_total, 0);
        }
        if conclusions.iter().all(|c| *c == Some("success")) {
            prop_assert_eq!(outcome.exit_code(), 0);
        }
    }
}
