//! One gate over N shards (issue 53): the shards' facts combined, and every way they can fail
//! to make one gate. Each row is written by hand from the issue: a shard's facts alone, a
//! shard missing, given twice, unfinished, edited, or of another head, config, split or
//! version is ESCALATE `evidence-gap` naming the shard (rule `shards`); shards that make one
//! gate decide as one machine's facts would.

mod common;

use common::{TestServer, patchgate, post_json};
use patchgate::core::gate::{decide_gate, parse_gate_body, seal_shard};
use serde_json::{Value, json};

const SEAL: &str = "1111111111111111111111111111111111111111111111111111111111111111";
const CONFIG: &str = "2222222222222222222222222222222222222222222222222222222222222222";
const SPLIT: &str = "3333333333333333333333333333333333333333333333333333333333333333";
const HEAD: &str = "4444444444444444444444444444444444444444";
const OTHER_HEAD: &str = "5555555555555555555555555555555555555555";

/// Shard `k` of 3 of a patch that changes only docs (t1 does not apply: the suite decides),
/// whose share of the 6 census tests (2 each) all passed; sealed with the empty key.
fn shard(k: u32, edit: impl FnOnce(&mut Value)) -> Value {
    let mut doc = json!({
        "changed_files": ["docs/guide.md"],
        "inert": ["docs"],
        "seal": {"actual": SEAL, "expected": SEAL},
        "catalog": {"properties": []},
        "judged": {"base": "a".repeat(40), "head": HEAD, "tree": "b".repeat(40)},
        "fixture_suite": {"exit_code": 0, "failed_tests": [], "receipt": {"executed": 2, "failed": 0, "skipped": 0}},
        "shard": {"index": k, "total": 3, "partition": SPLIT, "owned": 2, "census": 6, "config": CONFIG, "version": "0.1.0"}
    });
    edit(&mut doc);
    seal_shard(&mut doc, b"");
    doc
}

fn ok(k: u32) -> Value {
    shard(k, |_| {})
}

/// (disposition, rule, reason, the first gap or the shards step's summary) of a `/gate` body.
fn decide(body: &Value) -> (String, String, String, String) {
    let request = parse_gate_body(body).expect("a valid body");
    let d = decide_gate(&request, 5);
    let answer = serde_json::to_value(d.answer(&request, "x".to_owned())).unwrap();
    let first = &answer["steps"][0];
    let said = first["gaps"][0]
        .as_str()
        .or_else(|| first["summary"].as_str())
        .unwrap_or("")
        .to_owned();
    let s = |k: &str| answer[k].as_str().unwrap_or("").to_owned();
    (s("disposition"), s("rule"), s("reason"), said)
}

fn shards(items: Vec<Value>) -> Value {
    json!({ "shards": items })
}

/// The gaps, written first (issue 53's "done when"): each ESCALATE `evidence-gap` by rule
/// `shards`, naming the shard.
#[test]
fn shards_that_do_not_make_one_gate_escalate_naming_the_shard() {
    let edited = {
        let mut s = ok(2);
        s["fixture_suite"]["exit_code"] = json!(0);
        s["fixture_suite"]["receipt"]["executed"] = json!(9);
        s
    };
    let unfinished = {
        let mut s = ok(3);
        s["shard"].as_object_mut().unwrap().remove("digest");
        s
    };
    let rows: Vec<(&str, Value, &str)> = vec![
        // The attack: one shard's facts (its share of the suite passed) posted as the gate's.
        (
            "one shard alone",
            ok(1),
            "these are shard 1/3's facts alone",
        ),
        ("2 of 3", shards(vec![ok(1), ok(2)]), "shard 3/3 is missing"),
        (
            "another head",
            shards(vec![
                ok(1),
                shard(2, |d| d["judged"]["head"] = json!(OTHER_HEAD)),
                ok(3),
            ]),
            "shard 2/3 judged another head (555555555555, not 444444444444 as shard 1/3)",
        ),
        (
            "edited",
            shards(vec![ok(1), edited, ok(3)]),
            "shard 2/3's facts are not as it wrote them",
        ),
        (
            "another config",
            shards(vec![
                ok(1),
                ok(2),
                shard(3, |d| d["shard"]["config"] = json!("9".repeat(64))),
            ]),
            "shard 3/3 ran with another base config (999999999999, not 222222222222 as shard 1/3)",
        ),
        (
            "given twice",
            shards(vec![ok(1), ok(2), ok(2)]),
            "shard 2/3 is given twice",
        ),
        (
            "another split",
            shards(vec![
                ok(1),
                shard(2, |d| d["shard"]["partition"] = json!("4".repeat(64))),
                ok(3),
            ]),
            "shard 2/3 split another census, or split it differently",
        ),
        (
            "another N",
            shards(vec![
                ok(1),
                shard(2, |d| d["shard"]["total"] = json!(4)),
                ok(3),
            ]),
            "shard 2/4 was split into 4 shards, not 3 as shard 1/3",
        ),
        (
            "another version",
            shards(vec![
                ok(1),
                ok(2),
                shard(3, |d| d["shard"]["version"] = json!("0.0.9")),
            ]),
            "shard 3/3 ran another patchgate version",
        ),
        (
            "unfinished",
            shards(vec![ok(1), ok(2), unfinished]),
            "shard 3/3 did not finish",
        ),
        (
            "unreadable",
            json!({"shards": [ok(1), ok(3)], "unreadable": ["shard-2.json: No such file"]}),
            "could not be read: shard-2.json: No such file",
        ),
        (
            "not a shard's",
            shards(vec![ok(1), ok(2), {
                let mut s = ok(3);
                s.as_object_mut().unwrap().remove("shard");
                s
            }]),
            "facts #3 are not a shard's",
        ),
        (
            "owns too little",
            shards(vec![
                ok(1),
                ok(2),
                shard(3, |d| d["shard"]["owned"] = json!(1)),
            ]),
            "the shards own 5 of the census's 6 tests",
        ),
        ("none", shards(vec![]), "no shard's facts were given"),
    ];
    for (name, body, says) in rows {
        let (disposition, rule, reason, said) = decide(&body);
        assert_eq!(
            (disposition.as_str(), rule.as_str(), reason.as_str()),
            ("ESCALATE", "shards", "evidence-gap"),
            "{name}"
        );
        assert!(said.contains(says), "{name}: {said}");
    }
    // Given twice in place of another: the missing one is named too.
    let request = parse_gate_body(&shards(vec![ok(1), ok(2), ok(2)])).unwrap();
    let gaps = request.shards.unwrap().gaps;
    assert!(gaps.iter().any(|g| g == "shard 3/3 is missing"), "{gaps:?}");
}

/// Shards that make one gate decide as one machine would: every share passed → MERGE_OK
/// (the shards step first); a test failed in one share → BLOCK, its case named; a census test
/// vanished from one share → ESCALATE `vanished-tests`; a share killed → not a pass.
#[test]
fn shards_that_make_one_gate_decide_once() {
    let all = shards(vec![ok(3), ok(1), ok(2)]);
    let (disposition, rule, reason, said) = decide(&all);
    assert_eq!(
        (disposition.as_str(), rule.as_str(), reason.as_str()),
        ("MERGE_OK", "route", "all-gates-held")
    );
    assert!(said.starts_with("3 shards combined"), "{said}");
    let request = parse_gate_body(&all).unwrap();
    let suite = request.fixture_suite.unwrap();
    assert_eq!(
        (
            suite.exit_code,
            suite.receipt.clone().flatten().map(|r| r.executed)
        ),
        (Some(0), Some(6))
    );

    let failed = shards(vec![
        ok(1),
        shard(2, |d| {
            d["fixture_suite"] = json!({"exit_code": 1, "failed_tests": ["tests.t::b"], "receipt": {"executed": 2, "failed": 1, "skipped": 0}});
            d["failures"] = json!([{"id": "tests.t::b", "message": "assert 1 == 2"}]);
        }),
        ok(3),
    ]);
    let request = parse_gate_body(&failed).unwrap();
    let d = decide_gate(&request, 5);
    let answer = d.answer(&request, "x".to_owned());
    assert_eq!(
        (answer.disposition.as_str(), answer.reason.as_str()),
        ("BLOCK", "concrete-behavior")
    );
    assert_eq!(answer.failures.len(), 1);
    assert_eq!(answer.failures[0].id, "tests.t::b");

    let vanished = shards(vec![
        ok(1),
        ok(2),
        shard(3, |d| {
            d["fixture_suite"]["vanished"] = json!(["tests.t::f"]);
            d["fixture_suite"]["receipt"]["executed"] = json!(1);
        }),
    ]);
    let request = parse_gate_body(&vanished).unwrap();
    let answer = decide_gate(&request, 5).answer(&request, "x".to_owned());
    assert_eq!(
        (
            answer.disposition.as_str(),
            answer.reason.as_str(),
            answer.cause.map(|c| c.as_str())
        ),
        ("ESCALATE", "inadmissible-evidence", Some("vanished-tests"))
    );

    let killed = shards(vec![
        shard(
            1,
            |d| d["fixture_suite"] = json!({"exit_code": 1, "failed_tests": ["tests.t::a"], "receipt": {"executed": 2, "failed": 1, "skipped": 0}}),
        ),
        shard(2, |d| {
            d["fixture_suite"] = json!({"exit_code": null, "receipt": null})
        }),
        ok(3),
    ]);
    let (disposition, ..) = decide(&killed);
    assert_ne!(disposition, "MERGE_OK");
    let request = parse_gate_body(&killed).unwrap();
    assert_eq!(request.fixture_suite.unwrap().exit_code, None);
}

/// Issue 67, by hand: each shard runs the properties the split gave it (`shard.properties`),
/// and combine merges each property's runs from the shard that ran them. `p` on shard 2 and
/// `q` on shard 3 both passed twice, every share passed: MERGE_OK, as one machine's facts
/// with both runs would (route table: pass, pass, pass). When `q` fails on shard 3, whose
/// plan then decides before its share of the suite, the combined facts have no suite (one
/// machine's would not either) and list `q`'s failing case, not the failure of a share that
/// ran: t1 caught on its runs is BLOCK `invariant-or-over-specified-property`, as the
/// example's `broken-invariant` is on one machine (examples/gate-python/README.md).
#[test]
fn each_property_s_runs_come_from_the_shard_that_ran_them() {
    let with = |k: u32, mine: &[&str], runs: Value, suite: bool| {
        shard(k, move |d| {
            d["changed_files"] = json!(["src/p.py", "src/q.py"]);
            d["catalog"] = json!({"properties": [
                {"id": "p", "strength": "strong", "locality": ["src/p.py"]},
                {"id": "q", "strength": "strong", "locality": ["src/q.py"]}
            ]});
            d["shard"]["properties"] = json!(mine);
            d["shard"]["checker"] = json!(k == 2);
            if !runs.is_null() {
                d["property_runs"] = runs;
            }
            if !suite {
                d.as_object_mut().unwrap().remove("fixture_suite");
            }
        })
    };
    let passed = shards(vec![
        with(1, &[], Value::Null, true),
        with(2, &["p"], json!({"p": {"runs": [0, 0]}}), true),
        with(3, &["q"], json!({"q": {"runs": [0, 0]}}), true),
    ]);
    let request = parse_gate_body(&passed).expect("valid");
    let mut merged: Vec<&String> = request.property_runs.keys().collect();
    merged.sort();
    assert_eq!(merged, ["p", "q"]);
    let (disposition, rule, reason, _) = decide(&passed);
    assert_eq!(
        (disposition.as_str(), rule.as_str(), reason.as_str()),
        ("MERGE_OK", "route", "all-gates-held")
    );
    let q_failed = shards(vec![
        shard(1, |_| {}),
        with(2, &["p"], json!({"p": {"runs": [0, 0]}}), true),
        with(3, &["q"], json!({"q": {"runs": [1, 1]}}), false),
    ]);
    // Shard 1's share failed a test, and shard 3's facts list `q`'s failing case.
    let mut items = q_failed["shards"].as_array().unwrap().clone();
    items[0] = with(1, &[], Value::Null, true);
    let mut one = items[0].clone();
    one["fixture_suite"] = json!({"exit_code": 1, "failed_tests": ["tests.t::b"], "receipt": {"executed": 2, "failed": 1, "skipped": 0}});
    one["failures"] = json!([{"id": "tests.t::b", "message": "assert 1 == 2"}]);
    one.as_object_mut().unwrap().remove("shard");
    one["shard"] = items[0]["shard"].clone();
    one["shard"].as_object_mut().unwrap().remove("digest");
    seal_shard(&mut one, b"");
    items[0] = one;
    let mut three = items[2].clone();
    three["failures"] = json!([{"id": "q", "message": "falsified"}]);
    three["shard"].as_object_mut().unwrap().remove("digest");
    seal_shard(&mut three, b"");
    items[2] = three;
    let body = shards(items);
    let request = parse_gate_body(&body).expect("valid");
    assert!(request.fixture_suite.is_none());
    let answer = decide_gate(&request, 5).answer(&request, "x".to_owned());
    assert_eq!(
        (answer.disposition.as_str(), answer.reason.as_str()),
        ("BLOCK", "invariant-or-over-specified-property")
    );
    let failing: Vec<&str> = answer.failures.iter().map(|f| f.id.as_str()).collect();
    assert_eq!(failing, ["q"]);
}

/// The same over the wire and through the CLI: `POST /gate` with `{"shards": [...]}` answers
/// 422 for more than 256, and `patchgate gate --combine` reads files (one missing is a gap,
/// exit 2).
#[tokio::test]
async fn the_server_and_the_cli_combine_the_same() {
    let server = TestServer::start();
    let (status, answer) = post_json(&server, "/gate", &shards(vec![ok(1), ok(2), ok(3)])).await;
    assert_eq!(
        (status, answer["disposition"].as_str()),
        (200, Some("MERGE_OK"))
    );
    let (status, answer) = post_json(&server, "/gate", &shards(vec![ok(1), ok(2)])).await;
    assert_eq!(
        (status, answer["reason"].as_str()),
        (424, Some("evidence-gap"))
    );
    let (status, problem) = post_json(&server, "/gate", &shards(vec![json!({}); 257])).await;
    assert_eq!(status, 422, "{problem}");
    assert_eq!(problem["errors"][0]["pointer"], "/shards", "{problem}");
    // Facts that are not facts are a bad request, named by their pointer (a file the caller
    // could not read goes in `unreadable`, a gap).
    let mut bad = ok(2);
    bad.as_object_mut().unwrap().remove("seal");
    let body = shards(vec![ok(1), bad, json!([null])]);
    let (status, problem) = post_json(&server, "/gate", &body).await;
    assert_eq!(status, 422, "{problem}");
    let pointers = problem["errors"].to_string();
    assert!(
        pointers.contains("/shards/1/seal") && pointers.contains("/shards/2"),
        "{problem}"
    );

    let dir = tempfile::tempdir().unwrap();
    let mut paths = Vec::new();
    for k in 1..=3 {
        let p = dir.path().join(format!("shard-{k}.json"));
        std::fs::write(&p, ok(k).to_string()).unwrap();
        paths.push(p);
    }
    // `patchgate gate --combine PATHS --json`: its exit code and answer.
    let combine = |paths: &[std::path::PathBuf]| {
        let out = patchgate()
            .args(["gate", "--json", "--combine"])
            .args(paths)
            .output()
            .unwrap();
        let answer: Value = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
        (out.status.code(), answer)
    };
    let (code, answer) = combine(&paths);
    assert_eq!(
        (code, &answer["disposition"]),
        (Some(0), &json!("MERGE_OK"))
    );
    std::fs::remove_file(&paths[1]).unwrap();
    let (code, answer) = combine(&paths);
    assert_eq!(code, Some(2), "{answer}");
    let gaps = answer["steps"][0]["gaps"].to_string();
    assert!(
        gaps.contains("could not be read:") && gaps.contains("shard-2.json"),
        "{gaps}"
    );
    assert!(gaps.contains("shard 2/3 is missing"), "{gaps}");
    // A file that is JSON but not a shard's facts: named, a gap, not a refusal.
    std::fs::write(&paths[1], "{\"changed_files\": []}").unwrap();
    let (code, answer) = combine(&paths);
    assert_eq!(code, Some(2), "{answer}");
    assert!(
        answer["steps"][0]["gaps"]
            .to_string()
            .contains("not a gate's facts"),
        "{answer}"
    );
}

/// A failure only a frozen test explains, in one share, re-run there without it and passing;
/// the other shares passed: the combined suite's re-run is theirs and that one, and it passed
/// (CONTRACT.md section 12.4) → MERGE_OK. With another share failing a test that is not
/// frozen, the frozen test's discard does not hide it → BLOCK.
#[test]
fn a_frozen_failure_in_one_share_is_discarded_as_one_machine_would() {
    let frozen = |d: &mut Value| {
        d["ledger"] = json!([{"test_id": "tests.t::frozen", "covers": ["other"], "state": "open"}]);
    };
    let reran = |d: &mut Value| {
        frozen(d);
        d["fixture_suite"] = json!({
            "exit_code": 1, "failed_tests": ["tests.t::frozen"],
            "receipt": {"executed": 2, "failed": 1, "skipped": 0},
            "rerun": {"exit_code": 0, "failed_tests": [], "receipt": {"executed": 1, "failed": 0, "skipped": 0}}
        });
    };
    let all = shards(vec![shard(1, reran), shard(2, frozen), shard(3, frozen)]);
    let (disposition, _, reason, _) = decide(&all);
    assert_eq!(
        (disposition.as_str(), reason.as_str()),
        ("MERGE_OK", "all-gates-held")
    );
    let request = parse_gate_body(&all).unwrap();
    let rerun = request.fixture_suite.unwrap().rerun.unwrap();
    assert_eq!(
        (rerun.exit_code, rerun.receipt.flatten().map(|r| r.executed)),
        (Some(0), Some(5))
    );

    let broken = shards(vec![
        shard(1, reran),
        shard(2, |d| {
            frozen(d);
            d["fixture_suite"] = json!({"exit_code": 1, "failed_tests": ["tests.t::b"], "receipt": {"executed": 2, "failed": 1, "skipped": 0}});
        }),
        shard(3, frozen),
    ]);
    let (disposition, _, reason, _) = decide(&broken);
    assert_eq!(
        (disposition.as_str(), reason.as_str()),
        ("BLOCK", "concrete-behavior")
    );
}

/// A gap that names a long path is clipped to what `shards.gaps` carries: still an answer
/// (ESCALATE), never a 422 of the combine's own making.
#[test]
fn a_long_gap_is_clipped_not_refused() {
    // (`unreadable` carries up to 1,024 characters; the gap says more.)
    let long = format!("{}: No such file", "d/".repeat(495));
    let body = json!({"shards": [ok(1), ok(3)], "unreadable": [long]});
    let (disposition, rule, reason, said) = decide(&body);
    assert_eq!(
        (disposition.as_str(), rule.as_str(), reason.as_str()),
        ("ESCALATE", "shards", "evidence-gap")
    );
    assert!(
        said.starts_with("could not be read: d/d/") && said.ends_with('…'),
        "{said}"
    );
}
