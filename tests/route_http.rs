//! `/route` and friends over a real socket: every bad input of the contract's conventions is
//! the right 4xx as problem+json naming the field, and the server is still healthy after.

mod common;

use common::{TestServer, assert_healthy};
use serde_json::{Value, json};

struct Sent {
    status: u16,
    content_type: String,
    body: Value,
}

async fn send(server: &TestServer, path: &str, content_type: Option<&str>, body: Vec<u8>) -> Sent {
    let mut req = common::client().post(server.url(path)).body(body);
    if let Some(ct) = content_type {
        req = req.header("content-type", ct);
    }
    let res = req.send().await.expect("request");
    let status = res.status().as_u16();
    let content_type = res
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_owned();
    let bytes = res.bytes().await.expect("body");
    let body = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
    Sent {
        status,
        content_type,
        body,
    }
}

async fn post_json(server: &TestServer, body: &str) -> Sent {
    send(
        server,
        "/route",
        Some("application/json"),
        body.as_bytes().to_vec(),
    )
    .await
}

/// Asserts a problem document with `status`, and (when given) an error naming `pointer`.
fn assert_problem(sent: &Sent, status: u16, pointer: Option<&str>) {
    assert_eq!(sent.status, status, "{}", sent.body);
    assert_eq!(sent.content_type, "application/problem+json");
    assert_eq!(sent.body["status"], status);
    for key in ["type", "title", "detail"] {
        assert!(
            sent.body[key].is_string(),
            "problem without `{key}`: {}",
            sent.body
        );
    }
    if let Some(pointer) = pointer {
        let errors = sent.body["errors"].as_array().expect("errors");
        assert!(
            errors.iter().any(|e| e["pointer"] == pointer),
            "no error at {pointer}: {}",
            sent.body
        );
    }
}

#[tokio::test]
async fn malformed_and_empty_bodies_are_400() {
    let server = TestServer::start();
    for body in [
        "{",
        "{\"property_check\": pass}",
        "",
        "   ",
        "nul",
        "{\"a\":1,}",
    ] {
        assert_problem(&post_json(&server, body).await, 400, None);
    }
    // Invalid UTF-8 inside a string.
    let bad = send(
        &server,
        "/route",
        Some("application/json"),
        b"{\"patch_id\":\"\xff\"}".to_vec(),
    )
    .await;
    assert_problem(&bad, 400, None);
    assert_healthy(&server).await;
}

#[tokio::test]
async fn wrong_shapes_and_words_are_422_naming_the_field() {
    let server = TestServer::start();
    let cases: &[(&str, &str)] = &[
        (r#"[]"#, ""),
        (r#"[{"property_check":"pass"}]"#, ""),
        (r#""pass""#, ""),
        (
            r#"{"property_check":"PASS","fixture_check":"pass","flaky_freeze":"pass"}"#,
            "/property_check",
        ),
        (
            r#"{"property_check":"pass","fixture_check":true,"flaky_freeze":"pass"}"#,
            "/fixture_check",
        ),
        (
            r#"{"property_check":"pass","fixture_check":"pass","flaky_freeze":null}"#,
            "/flaky_freeze",
        ),
        (r#"{"property_check":"passed"}"#, "/property_check"),
        (r#"{"property_check":1}"#, "/property_check"),
        (r#"{"property_check":["pass"]}"#, "/property_check"),
        (
            r#"{"property_check":"pass","fixture_chek":"pass"}"#,
            "/fixture_chek",
        ),
        (r#"{"patch_id":5}"#, "/patch_id"),
        (
            r#"{"flaky_freeze":"unknown","frozen_tests":[],"changed_files":[]}"#,
            "/frozen_tests",
        ),
        (
            r#"{"frozen_tests":[{"id":"t","covers":["a"]}]}"#,
            "/frozen_tests",
        ),
        (r#"{"changed_files":["a"]}"#, "/changed_files"),
        (
            r#"{"changed_files":["/etc/passwd"],"frozen_tests":[]}"#,
            "/changed_files/0",
        ),
        (
            r#"{"changed_files":["a/../../b"],"frozen_tests":[]}"#,
            "/changed_files/0",
        ),
        (
            r#"{"changed_files":["a"],"frozen_tests":[{"id":"t","covers":["../x"]}]}"#,
            "/frozen_tests/0/covers/0",
        ),
        (
            r#"{"changed_files":["a"],"frozen_tests":[{"id":"t","covers":[]}]}"#,
            "/frozen_tests/0/covers",
        ),
        (
            r#"{"changed_files":["a"],"frozen_tests":[{"id":"t","covers":["a"]},{"id":"t","covers":["b"]}]}"#,
            "/frozen_tests/1/id",
        ),
        (
            r#"{"changed_files":["a"],"frozen_tests":[{"covers":["a"]}]}"#,
            "/frozen_tests/0/id",
        ),
        (
            r#"{"changed_files":["a"],"frozen_tests":[{"id":"t","covers":["a"],"owner":"x"}]}"#,
            "/frozen_tests/0/owner",
        ),
        (
            r#"{"changed_files":"a","frozen_tests":[]}"#,
            "/changed_files",
        ),
    ];
    for (body, pointer) in cases {
        let sent = post_json(&server, body).await;
        assert_problem(&sent, 422, Some(pointer));
    }
    assert_healthy(&server).await;
}

#[tokio::test]
async fn the_detail_names_the_field_and_the_four_words_and_hints_at_booleans() {
    let server = TestServer::start();
    let sent = post_json(
        &server,
        r#"{"property_check":"pass","fixture_check":false,"flaky_freeze":"pass"}"#,
    )
    .await;
    assert_problem(&sent, 422, Some("/fixture_check"));
    let detail = sent.body["detail"].as_str().unwrap_or("");
    assert!(detail.contains("fixture_check"), "{detail}");
    for word in ["pass", "fail", "unknown", "missing"] {
        assert!(detail.contains(&format!("\"{word}\"")), "{detail}");
    }
    assert!(
        detail.contains("boolean cannot say unknown or missing"),
        "{detail}"
    );

    let sent = post_json(&server, r#"{"property_check":"PASS"}"#).await;
    let detail = sent.body["detail"].as_str().unwrap_or("");
    assert!(
        detail.contains("property_check") && detail.contains("\"PASS\""),
        "{detail}"
    );
    assert!(!detail.contains("boolean"), "{detail}");
}

#[tokio::test]
async fn patch_id_is_at_most_256_characters() {
    let server = TestServer::start();
    // 256 characters (multi-byte ones: the limit is characters, not bytes) is accepted...
    let ok = json!({"patch_id": "é".repeat(256), "property_check": "pass", "fixture_check": "pass", "flaky_freeze": "pass"});
    let sent = post_json(&server, &ok.to_string()).await;
    assert_eq!(sent.status, 200);
    assert_eq!(sent.body["patch_id"], "é".repeat(256));
    // ...257 is not.
    let long = json!({"patch_id": "x".repeat(257), "property_check": "pass"});
    assert_problem(
        &post_json(&server, &long.to_string()).await,
        422,
        Some("/patch_id"),
    );
}

#[tokio::test]
async fn wrong_content_types_are_415() {
    let server = TestServer::start();
    let body =
        br#"{"property_check":"pass","fixture_check":"pass","flaky_freeze":"pass"}"#.to_vec();
    for ct in [
        Some("text/plain"),
        Some("application/x-www-form-urlencoded"),
        None,
        Some("application/json; charset=latin1"),
    ] {
        assert_problem(&send(&server, "/route", ct, body.clone()).await, 415, None);
    }
    // Parameters and +json types are fine.
    assert_eq!(
        send(
            &server,
            "/route",
            Some("application/json; charset=utf-8"),
            body.clone()
        )
        .await
        .status,
        200
    );
    assert_eq!(
        send(
            &server,
            "/route",
            Some("application/vnd.patchgate+json"),
            body
        )
        .await
        .status,
        200
    );
    assert_healthy(&server).await;
}

#[tokio::test]
async fn an_over_limit_body_is_413() {
    let server = TestServer::start();
    let mut big = String::from(r#"{"patch_id":""#);
    big.push_str(&"x".repeat(5 * 1024 * 1024));
    big.push_str("\"}");
    assert_problem(&post_json(&server, &big).await, 413, None);
    assert_healthy(&server).await;
}

#[tokio::test]
async fn deeply_nested_json_is_refused_without_a_crash() {
    let server = TestServer::start();
    // Skipped without recursion where patchgate never looks inside: well-formed, so a 422
    // naming where it was.
    let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
    assert_problem(&post_json(&server, &deep).await, 422, Some(""));
    let deep_obj = format!(
        "{{\"patch_id\":{}1{}}}",
        "{\"a\":".repeat(50_000),
        "}".repeat(50_000)
    );
    assert_problem(&post_json(&server, &deep_obj).await, 422, Some("/patch_id"));
    // Read into a tree where patchgate does look inside: refused at serde_json's depth limit.
    let deep_files = format!(
        "{{\"changed_files\":{}\"a\"{},\"frozen_tests\":[]}}",
        "[".repeat(50_000),
        "]".repeat(50_000)
    );
    assert_problem(&post_json(&server, &deep_files).await, 400, None);
    assert_healthy(&server).await;
}

#[tokio::test]
async fn a_field_given_twice_is_refused_not_silently_resolved() {
    let server = TestServer::start();
    let sent = post_json(&server, r#"{"property_check":"fail","property_check":"pass","fixture_check":"pass","flaky_freeze":"pass"}"#).await;
    assert_problem(&sent, 422, Some("/property_check"));
}

#[tokio::test]
async fn unknown_routes_and_methods_are_problems_too() {
    let server = TestServer::start();
    let res = common::client()
        .get(server.url("/nope"))
        .send()
        .await
        .expect("request");
    assert_eq!(res.status().as_u16(), 404);
    assert_eq!(res.headers()["content-type"], "application/problem+json");

    let res = common::client()
        .get(server.url("/route"))
        .send()
        .await
        .expect("request");
    assert_eq!(res.status().as_u16(), 405);
    assert_eq!(res.headers()["content-type"], "application/problem+json");
    assert_eq!(res.headers()["allow"], "POST");
    let res = common::client()
        .delete(server.url("/route/table"))
        .send()
        .await
        .expect("request");
    assert_eq!(res.status().as_u16(), 405);
}

#[tokio::test]
async fn every_answer_carries_a_request_id_and_security_headers() {
    let server = TestServer::start();
    let res = common::client()
        .post(server.url("/route"))
        .header("x-request-id", "ci-run-42")
        .json(&json!({"property_check": "pass"}))
        .send()
        .await
        .expect("request");
    assert_eq!(res.headers()["x-request-id"], "ci-run-42");
    assert_eq!(res.headers()["cache-control"], "no-store");
    assert_eq!(res.headers()["x-content-type-options"], "nosniff");
    let res = common::client()
        .get(server.url("/healthz"))
        .send()
        .await
        .expect("request");
    assert!(!res.headers()["x-request-id"].is_empty());
}

#[tokio::test]
async fn scoped_freeze_derives_the_gate_by_whole_path_segments() {
    let server = TestServer::start();
    let frozen = json!([
        {"id": "t-handlers", "covers": ["api/handlers"]},
        {"id": "t-store", "covers": ["store/counters", "store/x"]},
    ]);
    // A frozen test that does not cover the diff is irrelevant: the gate is pass, not unknown.
    let doc = json!({"patch_id": "p1", "property_check": "pass", "fixture_check": "pass",
        "changed_files": ["api/handlers_old/x.rs", "docs/readme.md"], "frozen_tests": frozen});
    let sent = post_json(&server, &doc.to_string()).await;
    assert_eq!(sent.status, 200, "{}", sent.body);
    assert_eq!(sent.body["disposition"], "MERGE_OK");
    assert_eq!(sent.body["verdicts"]["flaky_freeze"], "pass");
    assert_eq!(
        sent.body["scoped_freeze"],
        json!({"derived": "pass", "matched": []})
    );

    // A covered file (after normalisation) makes the gate unknown and names the tests.
    let doc = json!({"property_check": "pass", "fixture_check": "pass",
        "changed_files": ["./api//handlers/x.rs", "store/counters"], "frozen_tests": frozen});
    let sent = post_json(&server, &doc.to_string()).await;
    assert_eq!(sent.status, 424);
    assert_eq!(sent.body["disposition"], "ESCALATE");
    assert_eq!(sent.body["attribution"], "inadmissible-evidence");
    assert_eq!(
        sent.body["scoped_freeze"],
        json!({"derived": "unknown", "matched": ["t-handlers", "t-store"]})
    );

    // Fail still absorbs a derived unknown.
    let doc = json!({"property_check": "pass", "fixture_check": "fail",
        "changed_files": ["api/handlers/x.rs"], "frozen_tests": frozen});
    let sent = post_json(&server, &doc.to_string()).await;
    assert_eq!(sent.status, 409);
    assert_eq!(sent.body["attribution"], "concrete-behavior");

    // An empty freeze set derives pass.
    let doc = json!({"property_check": "pass", "fixture_check": "pass", "changed_files": ["a"], "frozen_tests": []});
    assert_eq!(post_json(&server, &doc.to_string()).await.status, 200);
}

#[tokio::test]
async fn batch_decides_each_document_and_reports_bad_ones_in_their_slot() {
    let server = TestServer::start();
    let docs = json!([
        {"patch_id": "a", "property_check": "pass", "fixture_check": "pass", "flaky_freeze": "pass"},
        {"patch_id": "b", "property_check": "PASS"},
        {"patch_id": "c", "property_check": "fail", "fixture_check": "fail", "flaky_freeze": "pass"},
        [],
        {"patch_id": "e", "property_check": "pass", "fixture_check": "pass"},
    ]);
    let sent = send(
        &server,
        "/route/batch",
        Some("application/json"),
        docs.to_string().into_bytes(),
    )
    .await;
    assert_eq!(sent.status, 200);
    let slots = sent.body.as_array().expect("array");
    assert_eq!(slots.len(), 5);
    assert_eq!(
        (slots[0]["patch_id"].clone(), slots[0]["status"].clone()),
        (json!("a"), json!(200))
    );
    assert_eq!(slots[0]["disposition"], "MERGE_OK");
    assert_eq!(slots[1]["index"], 1);
    assert_eq!(slots[1]["status"], 422);
    assert_eq!(slots[1]["error"]["errors"][0]["pointer"], "/property_check");
    assert_eq!(
        (slots[2]["disposition"].clone(), slots[2]["status"].clone()),
        (json!("BLOCK"), json!(409))
    );
    assert_eq!(slots[2]["attribution"], "behavior-and-invariant");
    assert_eq!(
        (slots[3]["index"].clone(), slots[3]["status"].clone()),
        (json!(3), json!(422))
    );
    assert_eq!(
        (slots[4]["disposition"].clone(), slots[4]["status"].clone()),
        (json!("ESCALATE"), json!(424))
    );
    assert_eq!(slots[4]["attribution"], "evidence-gap");
}

#[tokio::test]
async fn batch_limits_are_enforced() {
    let server = TestServer::start();
    let one = json!({"property_check": "pass", "fixture_check": "pass", "flaky_freeze": "pass"});
    let full: Vec<Value> = vec![one.clone(); 10_000];
    let sent = send(
        &server,
        "/route/batch",
        Some("application/json"),
        serde_json::to_vec(&full).unwrap_or_default(),
    )
    .await;
    assert_eq!(sent.status, 200);
    assert_eq!(sent.body.as_array().map(Vec::len), Some(10_000));
    let over: Vec<Value> = vec![one; 10_001];
    let sent = send(
        &server,
        "/route/batch",
        Some("application/json"),
        serde_json::to_vec(&over).unwrap_or_default(),
    )
    .await;
    assert_problem(&sent, 422, Some(""));
    let sent = send(
        &server,
        "/route/batch",
        Some("application/json"),
        b"{}".to_vec(),
    )
    .await;
    assert_problem(&sent, 422, Some(""));
}

#[tokio::test]
async fn readiness_turns_503_when_draining() {
    let server = TestServer::start();
    let ready = common::client()
        .get(server.url("/readyz"))
        .send()
        .await
        .expect("readyz");
    assert_eq!(ready.status().as_u16(), 200);
    server.state.start_draining();
    let ready = common::client()
        .get(server.url("/readyz"))
        .send()
        .await
        .expect("readyz");
    assert_eq!(ready.status().as_u16(), 503);
    let health = common::client()
        .get(server.url("/healthz"))
        .send()
        .await
        .expect("healthz");
    assert_eq!(health.status().as_u16(), 200);
}

#[tokio::test]
async fn metrics_count_requests_and_decisions() {
    let server = TestServer::start();
    post_json(
        &server,
        r#"{"property_check":"fail","fixture_check":"pass","flaky_freeze":"pass"}"#,
    )
    .await;
    post_json(&server, r#"{"property_check":"bogus"}"#).await;
    let text = common::client()
        .get(server.url("/metrics"))
        .send()
        .await
        .expect("metrics")
        .text()
        .await
        .expect("text");
    assert!(
        text.contains(r#"patchgate_decisions_total{endpoint="route",outcome="BLOCK"} 1"#),
        "{text}"
    );
    assert!(
        text.contains(
            r#"patchgate_http_requests_total{route="/route",method="POST",status="409"} 1"#
        ),
        "{text}"
    );
    assert!(
        text.contains(
            r#"patchgate_http_requests_total{route="/route",method="POST",status="422"} 1"#
        ),
        "{text}"
    );
    assert!(
        text.contains("patchgate_http_request_duration_seconds_bucket"),
        "{text}"
    );
}

/// CONTRACT.md section 0: a field given twice at any depth is a 422, never resolved by keeping
/// one copy. Inside a frozen test, keeping the last `covers` would answer MERGE_OK in one order
/// and ESCALATE in the other.
#[tokio::test]
async fn a_field_given_twice_inside_a_frozen_test_is_422_in_either_order() {
    let server = TestServer::start();
    for (first, second) in [("a", "b"), ("b", "a")] {
        let body = format!(
            r#"{{"property_check":"pass","fixture_check":"pass","changed_files":["a/x.rs"],"frozen_tests":[{{"id":"t","covers":["{first}"],"covers":["{second}"]}}]}}"#
        );
        let sent = post_json(&server, &body).await;
        assert_problem(&sent, 422, Some("/frozen_tests"));
        assert!(sent.body.to_string().contains("covers"), "{}", sent.body);
        // In a batch, the document is refused in its own slot and the others are decided.
        let batch = format!(
            r#"[{body},{{"property_check":"pass","fixture_check":"pass","flaky_freeze":"pass"}}]"#
        );
        let sent = send(
            &server,
            "/route/batch",
            Some("application/json"),
            batch.into_bytes(),
        )
        .await;
        assert_eq!(sent.status, 200, "{}", sent.body);
        assert_eq!(sent.body[0]["status"], 422, "{}", sent.body);
        assert_eq!(sent.body[1]["status"], 200, "{}", sent.body);
    }
}

/// Every operation the OpenAPI document lists is counted under its own route label, never as
/// `unmatched` with the 404s: each is called once (with an empty body, answered 4xx or a
/// decision) and then found in `/metrics` with its path.
#[tokio::test]
async fn every_served_operation_has_its_own_metrics_label() {
    let server = TestServer::start();
    let doc = patchgate::http::openapi::document_json();
    let doc: Value = serde_json::from_str(&doc).expect("json");
    let client = common::client();
    let mut operations = Vec::new();
    for (path, item) in doc["paths"].as_object().cloned().unwrap_or_default() {
        for method in ["get", "post"] {
            if item.get(method).is_some() {
                operations.push((path.clone(), method.to_uppercase()));
                let req = if method == "get" {
                    client.get(server.url(&path))
                } else {
                    client
                        .post(server.url(&path))
                        .header("content-type", "application/json")
                        .body("{}")
                };
                req.send().await.expect("request");
            }
        }
    }
    assert!(operations.len() >= 13, "{operations:?}");
    let text = client
        .get(server.url("/metrics"))
        .send()
        .await
        .expect("metrics")
        .text()
        .await
        .expect("text");
    for (path, method) in &operations {
        let label = format!(r#"patchgate_http_requests_total{{route="{path}",method="{method}""#);
        assert!(text.contains(&label), "{label} not in\n{text}");
    }
    assert!(!text.contains(r#"route="unmatched""#), "{text}");
}
