//! The ladder's judgements against figures worked out by hand: plans for hand-picked paths,
//! yield reports, freeze eligibility at its thresholds, the review and the calibration; over
//! the server's real socket, with the bad inputs refused.

mod common;

use common::post;

use common::TestServer;
use serde_json::{Value, json};

#[tokio::test]
async fn plans_for_hand_picked_paths() {
    let server = TestServer::start();
    // (path, test-adjacent?)
    let cases = [
        ("tests/test_a.py", true),
        ("contests/x.py", false),
        ("pkg/fixtures/f.json", true),
        ("myfixtures/x", false),
        ("sub/conftest.py", true),
        ("src/test_c.py", true),
        ("docs/tests.md", false),
        ("tox.ini", true),
        ("pytest.ini", true),
        ("src/app/attest_x.py", false),
        ("src/latest_test.py", false),
        ("a/tests/deep/x.rs", true),
    ];
    for (path, adjacent) in cases {
        let (status, body) = post(
            &server,
            "/ladder/plan",
            "application/json",
            json!({"changed_files": [path]}).to_string(),
        )
        .await;
        assert_eq!(status, 200);
        let want = if adjacent {
            json!(["t2-fixtures"])
        } else {
            json!(["t1-properties", "t2-fixtures"])
        };
        assert_eq!(body["plan"], want, "{path}");
        assert_eq!(
            body["scope_hits"],
            if adjacent { json!([path]) } else { json!([]) },
            "{path}"
        );
    }
    let (_, body) = post(
        &server,
        "/ladder/plan",
        "application/json",
        json!({"changed_files": ["src/a.py", "./tests//b.py"]}).to_string(),
    )
    .await;
    assert_eq!(
        body,
        json!({"plan": ["t2-fixtures"], "scope_hits": ["tests/b.py"]})
    );
    let (_, body) = post(
        &server,
        "/ladder/plan",
        "application/json",
        json!({"changed_files": []}).to_string(),
    )
    .await;
    assert_eq!(body["plan"], json!(["t1-properties", "t2-fixtures"]));
    for bad in [
        json!({"changed_files": ["../x"]}),
        json!({"changed_files": "a"}),
        json!({}),
        json!({"changed_files": [], "x": 1}),
    ] {
        let (status, _) = post(&server, "/ladder/plan", "application/json", bad.to_string()).await;
        assert_eq!(status, 422, "{bad}");
    }
}

fn row(tier: &str, verdict: &str, seconds: f64) -> Value {
    json!({"patch": "abc", "tier": tier, "verdict": verdict, "seconds": seconds})
}

#[tokio::test]
async fn the_report_matches_figures_worked_by_hand() {
    let server = TestServer::start();
    let rows = vec![
        row("t2-fixtures", "caught", 10.0),
        row("t1-properties", "pass", 2.0),
        row("t1-properties", "caught", 4.0),
        row("t2-fixtures", "error", 20.0),
        row("t1-properties", "pass", 3.0),
        row("t2-fixtures", "pass", 30.0),
        row("t2-fixtures", "pass", 40.0),
        row("t0-scope", "pass", 0.5),
        row("t3-zero", "pass", 0.0),
    ];
    let ndjson: String = rows.iter().map(|r| format!("{r}\n")).collect();
    for (ct, body) in [
        ("application/x-ndjson", ndjson.clone()),
        ("application/json", Value::Array(rows.clone()).to_string()),
    ] {
        let (status, report) = post(&server, "/ladder/report", ct, body).await;
        assert_eq!(status, 200, "{ct}: {report}");
        let tiers = report["tiers"].as_array().expect("tiers");
        let names: Vec<&str> = tiers.iter().filter_map(|t| t["tier"].as_str()).collect();
        assert_eq!(
            names,
            ["t0-scope", "t1-properties", "t2-fixtures", "t3-zero"],
            "tier-name order"
        );
        // t1: 2 + 4 + 3 = 9 s; median of (2, 3, 4) is 3; 1 catch in 9 s.
        assert_eq!(
            tiers[1],
            json!({"tier": "t1-properties", "runs": 3, "passes": 2, "caught": 1, "errors": 0,
            "median_s": 3.0, "total_s": 9.0, "yield_per_s": 1.0 / 9.0})
        );
        // t2: median of (10, 20, 30, 40) is (20 + 30) / 2 = 25; 1 catch in 100 s.
        assert_eq!(
            tiers[2],
            json!({"tier": "t2-fixtures", "runs": 4, "passes": 2, "caught": 1, "errors": 1,
            "median_s": 25.0, "total_s": 100.0, "yield_per_s": 0.01})
        );
        assert_eq!(
            tiers[0]["yield_per_s"],
            Value::Null,
            "a scope tier has no yield"
        );
        assert_eq!(
            tiers[3]["yield_per_s"],
            Value::Null,
            "a zero total has no yield"
        );
        let notes = report["notes"]
            .as_array()
            .expect("notes")
            .iter()
            .filter_map(Value::as_str)
            .collect::<Vec<_>>()
            .join("\n");
        assert!(notes.contains("broken harness"), "{notes}");
        assert!(notes.contains("ratio between tiers"), "{notes}");
        assert!(
            notes.contains("11.1x"),
            "t1 yields 0.111/s, t2 0.010/s: {notes}"
        );
    }
    // The runner's own rows carry `files` and `exit_code`.
    let runner_row = json!({"patch": "abc", "tier": "t1", "verdict": "error", "seconds": 1.5, "files": ["a.py"], "exit_code": null});
    let (status, _) = post(
        &server,
        "/ladder/report",
        "application/x-ndjson",
        format!("{runner_row}\n"),
    )
    .await;
    assert_eq!(status, 200);
    // A catch in the least time a number can say (5e-324 s, found by schemathesis): one catch
    // divided by it is past every number JSON carries, so no yield, as for no time; a 200.
    let tiny = Value::Array(vec![row("t1", "caught", 5e-324), row("t2", "pass", 1.0)]);
    let (status, report) = post(
        &server,
        "/ladder/report",
        "application/json",
        tiny.to_string(),
    )
    .await;
    assert_eq!(status, 200, "{report}");
    assert_eq!(report["tiers"][0]["yield_per_s"], Value::Null, "{report}");
    assert_eq!(report["tiers"][0]["caught"], 1, "{report}");
    assert!(
        report["notes"][0]
            .as_str()
            .is_some_and(|n| n.contains("t1: 5e-324 s is too little time to divide by")),
        "{report}"
    );
}

#[tokio::test]
async fn a_malformed_ndjson_line_is_a_422_naming_its_line() {
    let server = TestServer::start();
    let body = format!(
        "{}\n\n{}\nnot json\n{}\n",
        row("t1", "pass", 1.0),
        row("t1", "pass", 1.0),
        json!({"patch": "a", "tier": "t1", "verdict": "caught!", "seconds": 1})
    );
    let (status, problem) = post(&server, "/ladder/report", "application/x-ndjson", body).await;
    assert_eq!(status, 422);
    let text = problem.to_string();
    assert!(text.contains("line 4"), "the bad JSON is on line 4: {text}");
    assert!(
        text.contains("line 5"),
        "the bad verdict is on line 5: {text}"
    );
    let (status, _) = post(&server, "/ladder/report", "application/json", "[1,").await;
    assert_eq!(status, 400);
    let (status, _) = post(&server, "/ladder/report", "application/xml", "<x/>").await;
    assert_eq!(status, 415);
    let (status, _) = post(
        &server,
        "/ladder/report",
        "application/json",
        json!([{"patch": "a", "tier": "t", "verdict": "pass", "seconds": -1}]).to_string(),
    )
    .await;
    assert_eq!(status, 422);
}

async fn freeze(server: &TestServer, doc: Value) -> (u16, Value) {
    post(
        server,
        "/freeze/eligibility",
        "application/json",
        doc.to_string(),
    )
    .await
}

/// `n` outcomes with `flips` flips, all at the start.
fn outcomes(n: usize, flips: usize) -> Vec<bool> {
    let mut v = Vec::with_capacity(n);
    let mut cur = true;
    for i in 0..n {
        if i > 0 && i <= flips {
            cur = !cur;
        }
        v.push(cur);
    }
    v
}

#[tokio::test]
async fn freeze_eligibility_at_its_thresholds() {
    let server = TestServer::start();
    let cases = [
        // 19 runs: under the default 20.
        (
            json!({"outcomes": outcomes(19, 5), "caught_seeded_bug": true}),
            false,
            "insufficient history; keep observing",
            5,
            Some(5.0 / 18.0),
        ),
        // 20 runs, never flipped: deterministic, not flaky.
        (
            json!({"outcomes": outcomes(20, 0), "caught_seeded_bug": true}),
            false,
            "not actually flaky (0.000)",
            0,
            Some(0.0),
        ),
        // 1 flip in 20 runs: 1/19 = 0.0526.
        (
            json!({"outcomes": outcomes(20, 1), "caught_seeded_bug": true}),
            true,
            "freeze with expiry, flip_rate=0.053",
            1,
            Some(1.0 / 19.0),
        ),
        (
            json!({"outcomes": outcomes(20, 1), "caught_seeded_bug": false}),
            false,
            "no sensitivity evidence; rewrite or delete",
            1,
            Some(1.0 / 19.0),
        ),
        // Exactly at the minimum rate: 1 flip in 51 runs = 1/50 = 0.02 is not below 0.02.
        (
            json!({"outcomes": outcomes(51, 1), "caught_seeded_bug": true}),
            true,
            "freeze with expiry, flip_rate=0.020",
            1,
            Some(0.02),
        ),
        // Just under it: 1/51 = 0.0196, which prints as 0.020 (three decimals, as Python's).
        (
            json!({"outcomes": outcomes(52, 1), "caught_seeded_bug": true}),
            false,
            "not actually flaky (0.020)",
            1,
            Some(1.0 / 51.0),
        ),
        // Custom thresholds.
        (
            json!({"outcomes": outcomes(3, 2), "caught_seeded_bug": true, "min_runs": 3, "min_flip_rate": 0.5}),
            true,
            "freeze with expiry, flip_rate=1.000",
            2,
            Some(1.0),
        ),
        (
            json!({"outcomes": [], "caught_seeded_bug": true, "min_runs": 2}),
            false,
            "insufficient history; keep observing",
            0,
            None,
        ),
    ];
    for (doc, eligible, reason, flips, rate) in cases {
        let (status, body) = freeze(&server, doc.clone()).await;
        assert_eq!(status, 200, "{doc}");
        assert_eq!(body["eligible"], eligible, "{doc}");
        assert_eq!(body["reason"], reason, "{doc}");
        assert_eq!(body["flips"], flips, "{doc}");
        assert_eq!(
            body["runs"],
            doc["outcomes"].as_array().map_or(0, Vec::len),
            "{doc}"
        );
        assert_eq!(body["flip_rate"].as_f64(), rate, "{doc}");
        assert_eq!(body["exit_code"], u8::from(!eligible));
    }
    for (bad, pointer) in [
        (
            json!({"outcomes": outcomes(20, 1), "caught_seeded_bug": true, "min_runs": 1}),
            "/min_runs",
        ),
        (
            json!({"outcomes": outcomes(20, 1), "caught_seeded_bug": true, "min_runs": 0}),
            "/min_runs",
        ),
        (
            json!({"outcomes": [true, "false"], "caught_seeded_bug": true}),
            "/outcomes/1",
        ),
        (
            json!({"outcomes": [], "caught_seeded_bug": "yes"}),
            "/caught_seeded_bug",
        ),
        (
            json!({"outcomes": [], "caught_seeded_bug": true, "min_flip_rate": 2}),
            "/min_flip_rate",
        ),
        (json!({"caught_seeded_bug": true}), "/outcomes"),
    ] {
        let (status, problem) = freeze(&server, bad.clone()).await;
        assert_eq!(status, 422, "{bad}");
        assert!(
            problem["errors"]
                .as_array()
                .is_some_and(|e| e.iter().any(|x| x["pointer"] == pointer)),
            "{pointer}: {problem}"
        );
    }
}

fn decision(disposition: &str, attribution: &str) -> Value {
    json!({"timestamp": "2026-11-29T00:00:00Z", "level": "INFO", "target": "patchgate::decision", "endpoint": "route",
        "decision_id": "d", "property_check": "pass", "fixture_check": "pass", "flaky_freeze": "unknown",
        "disposition": disposition, "attribution": attribution, "rule": "r", "exit_code": 2, "message": "decision"})
}

#[tokio::test]
async fn the_review_counts_and_warns_at_forty_percent() {
    let server = TestServer::start();
    let lines = [
        json!({"timestamp": "t", "level": "INFO", "target": "patchgate::cli::serve", "message": "listening", "addr": "x"}),
        decision("MERGE_OK", "all-gates-held"),
        decision("BLOCK", "concrete-behavior"),
        decision("ESCALATE", "inadmissible-evidence"),
        decision("ESCALATE", "inadmissible-evidence"),
        decision("ESCALATE", "evidence-gap"),
        json!({"target": "patchgate::decision", "endpoint": "quorum", "outcome": "reject", "reason": "empty-quorum"}),
    ];
    let body: String = lines.iter().map(|l| format!("{l}\n")).collect();
    let (status, review) = post(&server, "/review", "application/x-ndjson", body).await;
    assert_eq!(status, 200, "{review}");
    assert_eq!(review["decisions"], 5);
    assert_eq!(review["skipped_lines"], 2);
    assert_eq!(
        review["by_disposition"],
        json!({"BLOCK": 1, "ESCALATE": 3, "MERGE_OK": 1})
    );
    assert_eq!(review["by_attribution"]["inadmissible-evidence"], 2);
    assert_eq!(review["escalation_rate"], 0.6);
    assert_eq!(review["inadmissible_share"], 0.4);
    // Every decision's line is of Sunday 2026-11-29: one week, the Monday before.
    assert_eq!(
        review["by_week"].as_array().map(Vec::len),
        Some(1),
        "{review}"
    );
    assert_eq!(review["by_week"][0]["week"], "2026-11-23");
    assert_eq!(review["by_week"][0]["decisions"], 5);
    assert_eq!(review["by_week"][0]["escalation_rate"], 0.6);
    assert!(
        review["warning"]
            .as_str()
            .is_some_and(|w| w.contains("freeze set is too broad")),
        "2/5 = 40%: {review}"
    );

    let below: String = [
        decision("ESCALATE", "inadmissible-evidence"),
        decision("MERGE_OK", "all-gates-held"),
        decision("MERGE_OK", "all-gates-held"),
    ]
    .iter()
    .map(|l| format!("{l}\n"))
    .collect();
    let (_, review) = post(&server, "/review", "application/x-ndjson", below).await;
    assert_eq!(review["warning"], Value::Null, "1/3 is under 40%");

    // The service's own log file: start-up lines that are not JSON are skipped and counted.
    let log = format!(
        "patchgate listening on 127.0.0.1:8080\n{}\n{{oops\n{}\n",
        decision("BLOCK", "concrete-behavior"),
        decision("MERGE_OK", "all-gates-held")
    );
    let (status, review) = post(&server, "/review", "application/x-ndjson", log).await;
    assert_eq!(status, 200, "{review}");
    assert_eq!(
        (review["decisions"].clone(), review["skipped_lines"].clone()),
        (json!(2), json!(2))
    );
    // Nothing in it is a router decision: not a decision log (422).
    let (status, problem) = post(
        &server,
        "/review",
        "application/x-ndjson",
        "{oops\nstarting\n{\"target\":\"patchgate::decision\",\"endpoint\":\"quorum\"}\n",
    )
    .await;
    assert_eq!(status, 422);
    assert!(problem.to_string().contains("3 lines skipped"), "{problem}");
}

/// The decision log's lines are read for what they say, however they are written: the shortest
/// line a decision can have (the contract's four fields, compact, shortest words), a decision
/// with escapes and spaces, and one spread over a line with leading blanks all count; a line
/// one byte short of the shortest is no decision.
#[tokio::test]
async fn the_review_reads_every_spelling_of_a_decision() {
    let server = TestServer::start();
    let shortest = r#"{"target":"patchgate::decision","endpoint":"gate","disposition":"BLOCK","attribution":"evidence-gap"}"#;
    let escaped = r#"{ "target" : "patchgate::decision", "endpoint": "route\/checks", "disposition": "ESCALATE", "attribution": "evidence-gap" }"#;
    let body = format!(
        "{shortest}\n{escaped}\n \t{shortest}\r\n{}\n\n",
        shortest.replace("BLOCK", "BLOC")
    );
    let (status, review) = post(&server, "/review", "application/x-ndjson", body).await;
    assert_eq!(status, 200, "{review}");
    assert_eq!(review["decisions"], 3, "{review}");
    assert_eq!(review["skipped_lines"], 1, "{review}");
    assert_eq!(review["by_disposition"]["BLOCK"], 2, "{review}");
    assert_eq!(review["by_disposition"]["ESCALATE"], 1, "{review}");
}

#[tokio::test]
async fn calibration_shares_by_attribution_class() {
    let server = TestServer::start();
    let rows = json!([
        {"attribution": "concrete-behavior", "fix_files": ["src/a.rs"], "fix_changed": "production"},
        {"attribution": "concrete-behavior", "fix_files": ["src/b.rs"], "fix_changed": "production"},
        {"attribution": "concrete-behavior", "fix_files": ["tests/t.py"], "fix_changed": "check"},
        {"attribution": "behavior-and-invariant", "fix_files": ["src/a.rs", "tests/p.py"], "fix_changed": "both"},
        // A gate reason is a class too; a row may name the decision it came from.
        {"attribution": "guarded-input-edited", "fix_files": ["src/a.rs"], "fix_changed": "production", "decision_id": "d-7"},
        {"attribution": "invariant-or-over-specified-property", "fix_files": ["tests/p.py"], "fix_changed": "check", "decision_id": "d-8"},
    ]);
    let (status, body) = post(&server, "/calibrate", "application/json", rows.to_string()).await;
    assert_eq!(status, 200, "{body}");
    // Where each class points, and the share of fixes that landed there (a fix that changed
    // both landed there too), by hand.
    assert_eq!(
        body,
        json!([
            {"attribution": "behavior-and-invariant", "count": 1, "production": 0.0, "check": 0.0, "both": 1.0,
             "points_to": "production", "hit_rate": 1.0},
            {"attribution": "concrete-behavior", "count": 3, "production": 2.0 / 3.0, "check": 1.0 / 3.0, "both": 0.0,
             "points_to": "production", "hit_rate": 2.0 / 3.0},
            {"attribution": "guarded-input-edited", "count": 1, "production": 1.0, "check": 0.0, "both": 0.0,
             "points_to": "check", "hit_rate": 0.0, "decision_ids": ["d-7"]},
            {"attribution": "invariant-or-over-specified-property", "count": 1, "production": 0.0, "check": 1.0, "both": 0.0,
             "points_to": null, "hit_rate": null, "decision_ids": ["d-8"]},
        ])
    );
    // An empty decision id names no decision (schemathesis found it taken).
    let bad = json!([{"attribution": "concrete-behavior", "fix_files": [], "fix_changed": "production", "decision_id": ""}]);
    let (status, problem) = post(&server, "/calibrate", "application/json", bad.to_string()).await;
    assert_eq!(status, 422);
    assert!(problem.to_string().contains("/0/decision_id"), "{problem}");
    let bad = json!([{"attribution": "vibes", "fix_files": [], "fix_changed": "production"}]);
    let (status, _) = post(&server, "/calibrate", "application/json", bad.to_string()).await;
    assert_eq!(status, 422);
    let bad = "{\"attribution\":\"concrete-behavior\",\"fix_files\":[\"/abs\"],\"fix_changed\":\"production\"}\n";
    let (status, problem) = post(&server, "/calibrate", "application/x-ndjson", bad).await;
    assert_eq!(status, 422);
    assert!(problem.to_string().contains("line 1"), "{problem}");
}

/// Issue 67: the review's attributions (the Markdown pie and its table) count every decision,
/// a gate rule's reason included, as `decisions` does: here 3 of 3, not the router's 2.
#[test]
fn the_attributions_count_every_decision_gate_rules_included() {
    let lines = [
        decision("MERGE_OK", "all-gates-held"),
        decision("ESCALATE", "inadmissible-evidence"),
        json!({"timestamp": "2026-11-29T01:00:00Z", "target": "patchgate::decision", "endpoint": "gate",
            "disposition": "ESCALATE", "reason": "guarded-input-edited"}),
    ];
    let body: String = lines.iter().map(|l| format!("{l}\n")).collect();
    let review = patchgate::core::ladder::review(body.as_bytes()).expect("a review");
    assert_eq!(review.decisions, 3);
    let md = patchgate::core::ladder::review_markdown(&review, None);
    for part in [
        "pie title Attributions",
        "\"all-gates-held\" : 1",
        "\"inadmissible-evidence\" : 1",
        "\"guarded-input-edited\" : 1",
        "| `guarded-input-edited` | 1 |",
    ] {
        assert!(md.contains(part), "{part}\n---\n{md}");
    }
}
