//! `/quorum`: every row of the contract's outcome table, each case written by hand, decided
//! by the core and by the server over a real socket; and the bad inputs, each a 422 naming
//! the field.

mod common;

use common::{TestServer, status_of_exit};
use patchgate::core::freeze_ledger::DEFAULT_DEBT_CAP;
use patchgate::core::quorum::{decide, parse_request};
use serde_json::{Value, json};

const SEAL_A: &str = "1111111111111111111111111111111111111111111111111111111111111111";
const SEAL_B: &str = "2222222222222222222222222222222222222222222222222222222222222222";

fn strong(id: &str, locality: &[&str]) -> Value {
    json!({"id": id, "strength": "strong", "locality": locality})
}

fn weak(id: &str, locality: &[&str]) -> Value {
    json!({"id": id, "strength": "weak", "locality": locality})
}

fn open_row(id: &str) -> Value {
    json!({"property_id": id, "state": "open", "reason": "split exits on a clean tree", "owner": "unassigned"})
}

fn request(
    changed: &[&str],
    properties: Vec<Value>,
    results: Value,
    ledger: Vec<Value>,
    seal_matches: bool,
) -> Value {
    json!({
        "patch_id": "pr-9",
        "changed_files": changed,
        "catalog": {"properties": properties},
        "results": results,
        "ledger": ledger,
        "seal": {"actual": SEAL_A, "expected": if seal_matches { SEAL_A } else { SEAL_B }},
    })
}

/// Six open freezes on properties this patch does not touch: over the default cap of 5.
fn full_debt() -> Vec<Value> {
    (0..6)
        .map(|i| open_row(&format!("elsewhere.{i}")))
        .collect()
}

struct Case {
    name: &'static str,
    doc: Value,
    outcome: &'static str,
    reason: &'static str,
    exit: u8,
    /// (property id, in_locality, state, vote) expected in the report.
    votes: Vec<(&'static str, bool, &'static str, &'static str)>,
}

fn cases() -> Vec<Case> {
    let counters = || strong("counter.monotonic", &["store/counters"]);
    let pass = || json!({"runs": [0, 0]});
    vec![
        Case {
            name: "seal mismatch outranks a full-debt queue",
            doc: request(
                &["store/counters/mod.rs"],
                vec![counters()],
                json!({"counter.monotonic": pass()}),
                full_debt(),
                false,
            ),
            outcome: "fixture_fault",
            reason: "seal-mismatch",
            exit: 2,
            votes: vec![("counter.monotonic", true, "pass", "yes")],
        },
        Case {
            name: "seal mismatch with every property passing is still a fixture fault",
            doc: request(
                &["store/counters/mod.rs"],
                vec![counters()],
                json!({"counter.monotonic": pass()}),
                vec![],
                false,
            ),
            outcome: "fixture_fault",
            reason: "seal-mismatch",
            exit: 2,
            votes: vec![("counter.monotonic", true, "pass", "yes")],
        },
        Case {
            name: "debt stops a patch that touches nothing frozen",
            doc: request(
                &["store/counters/mod.rs"],
                vec![counters()],
                json!({"counter.monotonic": pass()}),
                full_debt(),
                true,
            ),
            outcome: "stop_queue",
            reason: "debt-over-cap",
            exit: 3,
            votes: vec![("counter.monotonic", true, "pass", "yes")],
        },
        Case {
            name: "a spent budget counts once more and tips the debt over the cap",
            doc: {
                let mut ledger: Vec<Value> = (0..5)
                    .map(|i| open_row(&format!("elsewhere.{i}")))
                    .collect();
                ledger[0]["retire_by_commit_count"] = json!(30);
                ledger[0]["commits_since_open"] = json!(30);
                request(
                    &["store/counters/mod.rs"],
                    vec![counters()],
                    json!({"counter.monotonic": pass()}),
                    ledger,
                    true,
                )
            },
            outcome: "stop_queue",
            reason: "debt-over-cap",
            exit: 3,
            votes: vec![("counter.monotonic", true, "pass", "yes")],
        },
        Case {
            name: "debt exactly at the cap does not stop the queue; closed rows and unspent budgets do not count",
            doc: {
                let mut ledger: Vec<Value> = (0..5)
                    .map(|i| open_row(&format!("elsewhere.{i}")))
                    .collect();
                ledger[0]["retire_by_commit_count"] = json!(30);
                ledger[0]["commits_since_open"] = json!(29);
                ledger.push(json!({"property_id": "old", "state": "closed"}));
                ledger.push(json!({"property_id": "old2", "state": "closed"}));
                request(
                    &["store/counters/mod.rs"],
                    vec![counters()],
                    json!({"counter.monotonic": pass()}),
                    ledger,
                    true,
                )
            },
            outcome: "promote",
            reason: "quorum-held",
            exit: 0,
            votes: vec![("counter.monotonic", true, "pass", "yes")],
        },
        Case {
            name: "an introduced property that would vote rejects the patch",
            doc: request(
                &["store/counters/mod.rs"],
                vec![
                    counters(),
                    json!({"id": "counter.new", "strength": "strong", "locality": ["store"], "introduced": true}),
                ],
                json!({"counter.monotonic": pass(), "counter.new": pass()}),
                vec![],
                true,
            ),
            outcome: "reject",
            reason: "self-introduced-predicate",
            exit: 1,
            votes: vec![
                ("counter.monotonic", true, "pass", "yes"),
                ("counter.new", true, "pass", "introduced"),
            ],
        },
        Case {
            name: "a freeze row on an introduced property does not launder it: still rejected",
            doc: request(
                &["store/counters/mod.rs"],
                vec![
                    counters(),
                    json!({"id": "counter.new", "strength": "weak", "locality": ["store"], "introduced": true}),
                ],
                json!({"counter.monotonic": pass()}),
                vec![open_row("counter.new")],
                true,
            ),
            outcome: "reject",
            reason: "self-introduced-predicate",
            exit: 1,
            votes: vec![
                ("counter.monotonic", true, "pass", "yes"),
                ("counter.new", true, "missing", "introduced"),
            ],
        },
        Case {
            name: "an introduced property outside the locality does not vote and does not reject",
            doc: request(
                &["store/counters/mod.rs"],
                vec![
                    counters(),
                    json!({"id": "api.new", "strength": "strong", "locality": ["api"], "introduced": true}),
                ],
                json!({"counter.monotonic": pass()}),
                vec![],
                true,
            ),
            outcome: "promote",
            reason: "quorum-held",
            exit: 0,
            votes: vec![
                ("counter.monotonic", true, "pass", "yes"),
                ("api.new", false, "not-run", "not-in-locality"),
            ],
        },
        Case {
            name: "a frozen strong property that leaves the strong set empty is a rejection, not a promote",
            doc: request(
                &["store/counters/mod.rs"],
                vec![counters()],
                json!({"counter.monotonic": pass()}),
                vec![open_row("counter.monotonic")],
                true,
            ),
            outcome: "reject",
            reason: "empty-quorum",
            exit: 1,
            votes: vec![("counter.monotonic", true, "pass", "excluded")],
        },
        Case {
            name: "a weak pass never fills an empty strong quorum",
            doc: request(
                &["api/serializers/user.py"],
                vec![weak("resp.keys_present", &["api/serializers"]), counters()],
                json!({"resp.keys_present": pass()}),
                vec![],
                true,
            ),
            outcome: "reject",
            reason: "empty-quorum",
            exit: 1,
            votes: vec![
                ("resp.keys_present", true, "pass", "yes"),
                ("counter.monotonic", false, "not-run", "not-in-locality"),
            ],
        },
        Case {
            name: "api/handlers does not match api/handlers_old/x.rs",
            doc: request(
                &["api/handlers_old/x.rs"],
                vec![strong(
                    "resp.no_secret_fields",
                    &["api/handlers", "api/serializers"],
                )],
                json!({"resp.no_secret_fields": pass()}),
                vec![],
                true,
            ),
            outcome: "reject",
            reason: "empty-quorum",
            exit: 1,
            votes: vec![("resp.no_secret_fields", false, "pass", "not-in-locality")],
        },
        Case {
            name: "a weak failure rejects",
            doc: request(
                &["api/serializers/user.py"],
                vec![
                    strong(
                        "resp.no_secret_fields",
                        &["api/handlers", "api/serializers"],
                    ),
                    weak("resp.keys_present", &["api/serializers"]),
                ],
                json!({"resp.no_secret_fields": pass(), "resp.keys_present": {"runs": [1, 1]}}),
                vec![],
                true,
            ),
            outcome: "reject",
            reason: "stable-failure",
            exit: 1,
            votes: vec![
                ("resp.no_secret_fields", true, "pass", "yes"),
                ("resp.keys_present", true, "fail", "no"),
            ],
        },
        Case {
            name: "a strong stable failure rejects, even beside a flake",
            doc: request(
                &["store/counters/mod.rs", "api/handlers/a.rs"],
                vec![
                    counters(),
                    strong("resp.no_secret_fields", &["api/handlers"]),
                ],
                json!({"counter.monotonic": {"runs": [1, 1, 1]}, "resp.no_secret_fields": {"runs": [0, 1]}}),
                vec![],
                true,
            ),
            outcome: "reject",
            reason: "stable-failure",
            exit: 1,
            votes: vec![
                ("counter.monotonic", true, "fail", "no"),
                ("resp.no_secret_fields", true, "flake", "no"),
            ],
        },
        // CONTRACT.md section 2: only a catch is a failure.
        Case {
            name: "pytest's exit 5 (no tests collected) is the harness: hold, never reject",
            doc: request(
                &["store/counters/mod.rs"],
                vec![counters()],
                json!({"counter.monotonic": {"runs": [5, 5]}}),
                vec![],
                true,
            ),
            outcome: "hold",
            reason: "harness-error",
            exit: 2,
            votes: vec![("counter.monotonic", true, "error", "no")],
        },
        Case {
            name: "runs killed by their timeout are the harness too",
            doc: request(
                &["store/counters/mod.rs"],
                vec![counters()],
                json!({"counter.monotonic": {"runs": [null, null]}}),
                vec![],
                true,
            ),
            outcome: "hold",
            reason: "harness-error",
            exit: 2,
            votes: vec![("counter.monotonic", true, "error", "no")],
        },
        Case {
            name: "a split run outranks a broken harness",
            doc: request(
                &["store/counters/mod.rs", "api/handlers/a.rs"],
                vec![
                    counters(),
                    strong("resp.no_secret_fields", &["api/handlers"]),
                ],
                json!({"counter.monotonic": {"runs": [3, 3]}, "resp.no_secret_fields": {"runs": [0, null]}}),
                vec![],
                true,
            ),
            outcome: "hold",
            reason: "split-exits",
            exit: 2,
            votes: vec![
                ("counter.monotonic", true, "error", "no"),
                ("resp.no_secret_fields", true, "flake", "no"),
            ],
        },
        Case {
            name: "a split run holds, it does not reject",
            doc: request(
                &["store/counters/mod.rs"],
                vec![counters()],
                json!({"counter.monotonic": {"runs": [0, 1]}}),
                vec![],
                true,
            ),
            outcome: "hold",
            reason: "split-exits",
            exit: 2,
            votes: vec![("counter.monotonic", true, "flake", "no")],
        },
        Case {
            name: "unequal non-zero exits are a flake",
            doc: request(
                &["store/counters/mod.rs"],
                vec![counters()],
                json!({"counter.monotonic": {"runs": [1, 2]}}),
                vec![],
                true,
            ),
            outcome: "hold",
            reason: "split-exits",
            exit: 2,
            votes: vec![("counter.monotonic", true, "flake", "no")],
        },
        Case {
            name: "a voting property without results holds on missing results",
            doc: request(
                &["store/counters/mod.rs", "api/handlers/a.rs"],
                vec![
                    counters(),
                    strong("resp.no_secret_fields", &["api/handlers"]),
                ],
                json!({"counter.monotonic": pass()}),
                vec![],
                true,
            ),
            outcome: "hold",
            reason: "missing-results",
            exit: 2,
            votes: vec![
                ("counter.monotonic", true, "pass", "yes"),
                ("resp.no_secret_fields", true, "missing", "no"),
            ],
        },
        Case {
            name: "every voting property passed twice on sealed fixtures: promote; a frozen one stays excluded",
            doc: request(
                &["./store//counters/mod.rs", "api/handlers/a.rs"],
                vec![
                    counters(),
                    strong("resp.no_secret_fields", &["api/handlers"]),
                    weak("resp.keys_present", &["api"]),
                ],
                json!({"counter.monotonic": {"runs": [0, 0, 0]}, "resp.no_secret_fields": {"runs": [0, 1]}, "resp.keys_present": pass()}),
                vec![open_row("resp.no_secret_fields")],
                true,
            ),
            outcome: "promote",
            reason: "quorum-held",
            exit: 0,
            votes: vec![
                ("counter.monotonic", true, "pass", "yes"),
                ("resp.no_secret_fields", true, "flake", "excluded"),
                ("resp.keys_present", true, "pass", "yes"),
            ],
        },
    ]
}

fn check(case: &Case, body: &Value) {
    assert_eq!(body["outcome"], case.outcome, "{}: {body}", case.name);
    assert_eq!(body["reason"], case.reason, "{}: {body}", case.name);
    assert_eq!(body["exit_code"], case.exit, "{}", case.name);
    let props = body["properties"].as_array().expect("properties");
    assert_eq!(
        props.len(),
        case.votes.len(),
        "{}: every catalog property is reported",
        case.name
    );
    for (p, (id, in_locality, state, vote)) in props.iter().zip(&case.votes) {
        assert_eq!(p["id"], *id, "{}", case.name);
        assert_eq!(p["in_locality"], *in_locality, "{}: {id}", case.name);
        assert_eq!(p["state"], *state, "{}: {id}", case.name);
        assert_eq!(p["vote"], *vote, "{}: {id}", case.name);
    }
}

#[test]
fn the_core_decides_every_case() {
    for case in cases() {
        let request = parse_request(&case.doc).unwrap_or_else(|e| panic!("{}: {e:?}", case.name));
        let decision = decide(&request, DEFAULT_DEBT_CAP);
        let answer = serde_json::to_value(decision.answer(&request, "id".into())).expect("json");
        check(&case, &answer);
    }
}

#[tokio::test]
async fn the_server_decides_every_case_with_the_status_twin_of_its_exit_code() {
    let server = TestServer::start();
    let client = common::client();
    for case in cases() {
        let res = client
            .post(server.url("/quorum"))
            .json(&case.doc)
            .send()
            .await
            .expect("request");
        assert_eq!(
            res.status().as_u16(),
            status_of_exit(case.exit),
            "{}",
            case.name
        );
        let body: Value = res.json().await.expect("json");
        check(&case, &body);
        assert_eq!(body["patch_id"], "pr-9");
        assert!(body["decision_id"].as_str().is_some_and(|s| !s.is_empty()));
        assert_eq!(body["seal"]["actual"], SEAL_A);
    }
}

#[tokio::test]
async fn debt_is_reported_and_the_cap_defaults_to_the_servers_setting() {
    let server = TestServer::start();
    let client = common::client();
    let mut ledger = full_debt();
    ledger[1]["retire_by_commit_count"] = json!(10);
    ledger[1]["commits_since_open"] = json!(11);
    let doc = request(
        &["x"],
        vec![strong("p", &["x"])],
        json!({"p": {"runs": [0, 0]}}),
        ledger,
        true,
    );
    let body: Value = client
        .post(server.url("/quorum"))
        .json(&doc)
        .send()
        .await
        .expect("req")
        .json()
        .await
        .expect("json");
    assert_eq!(
        body["debt"],
        json!({"open": 6, "spent": 1, "counted": 7, "cap": 5})
    );
    // The request's own cap wins.
    let mut raised = doc.clone();
    raised["debt_cap"] = json!(7);
    let res = client
        .post(server.url("/quorum"))
        .json(&raised)
        .send()
        .await
        .expect("req");
    assert_eq!(res.status().as_u16(), 200);
    let body: Value = res.json().await.expect("json");
    assert_eq!(body["debt"]["cap"], 7);
    assert_eq!(body["outcome"], "promote");
}

#[tokio::test]
async fn bad_inputs_are_422_naming_the_field() {
    let server = TestServer::start();
    let client = common::client();
    let good = || {
        request(
            &["store/a.rs"],
            vec![strong("p", &["store"])],
            json!({"p": {"runs": [0, 0]}}),
            vec![],
            true,
        )
    };
    let with = |f: &dyn Fn(&mut Value)| {
        let mut d = good();
        f(&mut d);
        d
    };
    let cases: Vec<(Value, &str)> = vec![
        (with(&|d| d["surprise"] = json!(1)), "/surprise"),
        (
            with(&|d| d["catalog"]["properties"][0]["owner"] = json!("x")),
            "/catalog/properties/0/owner",
        ),
        (
            with(&|d| d["seal"]["actual"] = json!("abc")),
            "/seal/actual",
        ),
        (
            with(&|d| d["seal"]["expected"] = json!("z".repeat(64))),
            "/seal/expected",
        ),
        (
            with(&|d| d["seal"] = json!({"actual": SEAL_A})),
            "/seal/expected",
        ),
        (
            with(&|d| {
                d.as_object_mut().map(|o| o.remove("seal"));
            }),
            "/seal",
        ),
        (
            with(&|d| d["results"]["p"]["runs"] = json!([0, 256])),
            "/results/p/runs/1",
        ),
        (
            with(&|d| d["results"]["p"]["runs"] = json!([0, -1])),
            "/results/p/runs/1",
        ),
        (
            with(&|d| d["results"]["p"]["runs"] = json!([0, "0"])),
            "/results/p/runs/1",
        ),
        (
            with(&|d| d["results"]["p"]["runs"] = json!([0])),
            "/results/p/runs",
        ),
        (
            with(&|d| d["results"]["p"]["runs"] = json!(vec![0; 11])),
            "/results/p/runs",
        ),
        (
            with(&|d| d["results"]["q"] = json!({"runs": [0, 0]})),
            "/results/q",
        ),
        (
            with(&|d| d["changed_files"] = json!(["../etc/passwd"])),
            "/changed_files/0",
        ),
        (
            with(&|d| d["changed_files"] = json!(["/abs/path"])),
            "/changed_files/0",
        ),
        (
            with(&|d| {
                d.as_object_mut().map(|o| o.remove("changed_files"));
            }),
            "/changed_files",
        ),
        (
            with(&|d| d["catalog"]["properties"][0]["locality"] = json!(["a/../b"])),
            "/catalog/properties/0/locality/0",
        ),
        (
            with(&|d| d["catalog"]["properties"][0]["locality"] = json!([])),
            "/catalog/properties/0/locality",
        ),
        (
            with(&|d| d["catalog"]["properties"][0]["strength"] = json!("Strong")),
            "/catalog/properties/0/strength",
        ),
        (
            with(&|d| d["catalog"]["properties"][0]["introduced"] = json!("yes")),
            "/catalog/properties/0/introduced",
        ),
        (
            with(&|d| d["catalog"]["properties"][0]["fixtures"] = json!("/fixtures")),
            "/catalog/properties/0/fixtures",
        ),
        (
            with(&|d| {
                d["catalog"]["properties"] = json!([strong("p", &["a"]), strong("p", &["b"])])
            }),
            "/catalog/properties/1/id",
        ),
        (
            with(&|d| d["ledger"] = json!([open_row("p"), open_row("p")])),
            "/ledger/1",
        ),
        (
            with(&|d| d["ledger"] = json!([{"property_id": "p", "state": "frozen"}])),
            "/ledger/0/state",
        ),
        (
            with(&|d| d["ledger"] = json!([{"state": "open"}])),
            "/ledger/0/property_id",
        ),
        (
            with(&|d| d["ledger"] = json!([{"property_id": "p", "state": "open", "seal": "00"}])),
            "/ledger/0/seal",
        ),
        (
            with(&|d| {
                d["ledger"] =
                    json!([{"property_id": "p", "state": "open", "opened_against_commit": "HEAD"}])
            }),
            "/ledger/0/opened_against_commit",
        ),
        (
            with(&|d| {
                d["ledger"] =
                    json!([{"property_id": "p", "state": "open", "commits_since_open": -3}])
            }),
            "/ledger/0/commits_since_open",
        ),
        (with(&|d| d["debt_cap"] = json!(-1)), "/debt_cap"),
        (with(&|d| d["debt_cap"] = json!("5")), "/debt_cap"),
        (json!([]), ""),
    ];
    for (doc, pointer) in cases {
        let res = client
            .post(server.url("/quorum"))
            .json(&doc)
            .send()
            .await
            .expect("request");
        assert_eq!(res.status().as_u16(), 422, "{pointer}: {doc}");
        assert_eq!(res.headers()["content-type"], "application/problem+json");
        let body: Value = res.json().await.expect("json");
        let errors = body["errors"].as_array().expect("errors");
        assert!(
            errors.iter().any(|e| e["pointer"] == pointer),
            "no error at {pointer}: {body}"
        );
    }
    // A closed row and an open row for one property are fine; so is a ledger row for a property
    // outside the catalog (the ledger is the whole queue's).
    let ok = with(&|d| {
        d["ledger"] =
            json!([{"property_id": "p", "state": "closed"}, open_row("p"), open_row("other")])
    });
    let res = client
        .post(server.url("/quorum"))
        .json(&ok)
        .send()
        .await
        .expect("request");
    assert_eq!(
        res.status().as_u16(),
        409,
        "the one strong property is frozen: empty quorum"
    );
    let health = client
        .get(server.url("/healthz"))
        .send()
        .await
        .expect("healthz");
    assert_eq!(health.status().as_u16(), 200);
}

#[tokio::test]
async fn a_field_given_twice_anywhere_is_refused_not_silently_resolved() {
    let server = TestServer::start();
    let client = common::client();
    let twice = format!(
        r#"{{"changed_files":["a"],"catalog":{{"properties":[{{"id":"p","strength":"strong","strength":"weak","locality":["a"]}}]}},"seal":{{"actual":"{SEAL_A}","expected":"{SEAL_A}"}}}}"#
    );
    let res = client
        .post(server.url("/quorum"))
        .header("content-type", "application/json")
        .body(twice)
        .send()
        .await
        .expect("req");
    assert_eq!(res.status().as_u16(), 422);
    let problem: Value = res.json().await.expect("json");
    assert!(
        problem["detail"]
            .as_str()
            .is_some_and(|d| d.contains("`strength` is given twice")),
        "{problem}"
    );
    for (path, ct, body) in [
        (
            "/ladder/plan",
            "application/json",
            r#"{"changed_files":[],"changed_files":["a"]}"#,
        ),
        (
            "/freeze/eligibility",
            "application/json",
            r#"{"outcomes":[],"caught_seeded_bug":true,"caught_seeded_bug":false}"#,
        ),
        (
            "/ladder/report",
            "application/json",
            r#"[{"patch":"a","tier":"t","verdict":"pass","verdict":"caught","seconds":1}]"#,
        ),
        (
            "/ladder/report",
            "application/x-ndjson",
            "{\"patch\":\"a\",\"tier\":\"t\",\"verdict\":\"pass\",\"verdict\":\"caught\",\"seconds\":1}\n",
        ),
        ("/seal", "application/json", r#"{"files":[],"files":[]}"#),
    ] {
        let res = client
            .post(server.url(path))
            .header("content-type", ct)
            .body(body)
            .send()
            .await
            .expect("req");
        assert_eq!(res.status().as_u16(), 422, "{path} {ct}");
    }
}

/// CONTRACT.md section 2: a catch is an exit code in `catch_exit_codes` (default `[1]`); a Rust
/// repository sends `[101]`, and then its failing `cargo test` rejects instead of holding.
#[tokio::test]
async fn catch_exit_codes_say_which_exits_are_a_failure() {
    let server = TestServer::start();
    let doc = |catch: Option<Value>| {
        let mut d = request(
            &["x"],
            vec![strong("p", &["x"])],
            json!({"p": {"runs": [101, 101]}}),
            vec![],
            true,
        );
        if let Some(c) = catch {
            d["catch_exit_codes"] = c;
        }
        d
    };
    let (status, answer) = common::post_json(&server, "/quorum", &doc(None)).await;
    assert_eq!(
        (status, answer["reason"].clone()),
        (424, json!("harness-error"))
    );
    let (status, answer) = common::post_json(&server, "/quorum", &doc(Some(json!([101])))).await;
    assert_eq!(
        (status, answer["reason"].clone()),
        (409, json!("stable-failure"))
    );
    assert_eq!(answer["properties"][0]["state"], "fail");
    // 0 is a pass, never a catch; the list is never empty; codes are 1..=255.
    for (bad, pointer) in [
        (json!([0]), "/catch_exit_codes/0"),
        (json!([]), "/catch_exit_codes"),
        (json!([256]), "/catch_exit_codes/0"),
        (json!("1"), "/catch_exit_codes"),
    ] {
        let (status, problem) =
            common::post_json(&server, "/quorum", &doc(Some(bad.clone()))).await;
        assert_eq!(status, 422, "{bad}: {problem}");
        assert_eq!(problem["errors"][0]["pointer"], pointer, "{bad}: {problem}");
    }
}

/// CONTRACT.md section 2: a ledger row freezes a property (`property_id`) or a test of the
/// fixture suite (`test_id` + `covers`). Test rows never change a vote and count toward debt.
#[tokio::test]
async fn frozen_tests_in_the_ledger_count_toward_debt_and_never_vote() {
    let server = TestServer::start();
    let test_row = |id: &str| json!({"test_id": id, "covers": ["store/counters"], "state": "open"});
    let doc = |ledger: Vec<Value>| {
        request(
            &["store/counters/mod.rs"],
            vec![strong("counter.monotonic", &["store/counters"])],
            json!({"counter.monotonic": {"runs": [0, 0]}}),
            ledger,
            true,
        )
    };
    // Two frozen tests and a frozen property elsewhere: debt 3, the vote untouched.
    let (status, answer) = common::post_json(
        &server,
        "/quorum",
        &doc(vec![test_row("t1"), test_row("t2"), open_row("elsewhere")]),
    )
    .await;
    assert_eq!(status, 200, "{answer}");
    assert_eq!(answer["debt"]["open"], 3);
    assert_eq!(answer["properties"][0]["vote"], "yes");
    // A test and a property may share an id: two things frozen.
    let (_, answer) =
        common::post_json(&server, "/quorum", &doc(vec![test_row("x"), open_row("x")])).await;
    assert_eq!(answer["debt"]["open"], 2);
    // Six open tests: over the cap of 5, the queue stops.
    let rows = (0..6).map(|i| test_row(&format!("t{i}"))).collect();
    let (status, answer) = common::post_json(&server, "/quorum", &doc(rows)).await;
    assert_eq!(
        (status, answer["outcome"].clone()),
        (423, json!("stop_queue"))
    );
    // Refused: both ids, neither, a test without `covers`, a property with `covers`, a test
    // frozen twice.
    for (ledger, pointer) in [
        (
            vec![json!({"property_id": "p", "test_id": "t", "covers": ["a"], "state": "open"})],
            "/ledger/0",
        ),
        (vec![json!({"state": "open"})], "/ledger/0/property_id"),
        (
            vec![json!({"test_id": "t", "state": "open"})],
            "/ledger/0/covers",
        ),
        (
            vec![json!({"test_id": "t", "covers": [], "state": "open"})],
            "/ledger/0/covers",
        ),
        (
            vec![json!({"property_id": "p", "covers": ["a"], "state": "open"})],
            "/ledger/0/covers",
        ),
        (vec![test_row("t"), test_row("t")], "/ledger/1"),
    ] {
        let (status, problem) = common::post_json(&server, "/quorum", &doc(ledger.clone())).await;
        assert_eq!(status, 422, "{ledger:?}: {problem}");
        assert_eq!(
            problem["errors"][0]["pointer"], pointer,
            "{ledger:?}: {problem}"
        );
    }
}

/// A hostile `catch_exit_codes` (a million repeats) is read as the set it names: the decision is
/// the same as with the short list, and its cost does not grow with the repeats.
#[test]
fn a_long_catch_list_is_a_set() {
    let mut doc = request(
        &["x"],
        vec![strong("p", &["x"])],
        json!({"p": {"runs": [101, 101]}}),
        vec![],
        true,
    );
    doc["catch_exit_codes"] = json!(vec![101u8; 1_000_000]);
    let request = parse_request(&doc).unwrap_or_else(|e| panic!("{e:?}"));
    assert_eq!(request.catch_exit_codes.as_slice(), &[101]);
    assert_eq!(
        decide(&request, DEFAULT_DEBT_CAP).reason.as_str(),
        "stable-failure"
    );
}
