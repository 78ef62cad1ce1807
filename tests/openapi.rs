//! The committed OpenAPI document is the one the code serves. Regenerate it with
//! `cargo run -- openapi > openapi/openapi.json` after changing an endpoint.

mod common;

#[test]
fn committed_openapi_matches_the_code() {
    let generated = patchgate::http::openapi::document_json();
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/openapi/openapi.json");
    let committed = std::fs::read_to_string(path).unwrap_or_default();
    assert!(
        committed == generated,
        "openapi/openapi.json is stale: run `cargo run -- openapi > openapi/openapi.json` and commit it"
    );
}

#[tokio::test]
async fn the_server_serves_the_same_document() {
    let server = common::TestServer::start();
    let res = common::client()
        .get(server.url("/openapi.json"))
        .send()
        .await
        .expect("request");
    assert_eq!(res.status().as_u16(), 200);
    let served = res.text().await.expect("text");
    assert_eq!(served, patchgate::http::openapi::document_json());
    // The document's paths are the served ones, both read from the one endpoint declaration.
    let doc: serde_json::Value = serde_json::from_str(&served).expect("json");
    let mut documented: Vec<String> = doc["paths"]
        .as_object()
        .map(|p| p.keys().cloned().collect())
        .unwrap_or_default();
    let mut served: Vec<String> = server
        .state
        .route_labels()
        .iter()
        .map(|s| (*s).to_owned())
        .collect();
    documented.sort();
    served.sort();
    assert_eq!(documented, served);
    assert_eq!(served.len(), 23, "{served:?}");
}

/// Each request document's fields are the strict parser's, field for field: a field the
/// server takes is never missing from the document under `additionalProperties: false`, and a
/// documented field is never refused. (Issue 23: `/gate` took `require_admission` while its
/// document left it out.)
#[test]
fn every_request_document_lists_the_fields_its_parser_takes() {
    use patchgate::core::catalog::CatalogKind;
    let doc: serde_json::Value =
        serde_json::from_str(&patchgate::http::openapi::document_json()).unwrap();
    let table: [(&str, &[&str]); 31] = [
        ("RouteRequestDoc", &patchgate::core::evidence::ROUTE_FIELDS),
        ("QuorumRequestDoc", &patchgate::core::quorum::REQUEST_FIELDS),
        ("PropertyDoc", CatalogKind::Quorum.fields()),
        ("GatePropertyDoc", CatalogKind::Gate.fields()),
        (
            "LedgerRowDoc",
            &patchgate::core::freeze_ledger::LEDGER_FIELDS,
        ),
        ("SealDoc", &patchgate::core::seal::SEAL_CHECK_FIELDS),
        ("GateRequestDoc", &patchgate::core::gate::GATE_FIELDS),
        ("FixtureSuiteDoc", &patchgate::core::gate::SUITE_FIELDS),
        ("Judged", &patchgate::core::gate::JUDGED_FIELDS),
        ("RerunDoc", &patchgate::core::gate::RERUN_FIELDS),
        ("ObserveDoc", &patchgate::core::gate::OBSERVE_FIELDS),
        ("ObservedLine", &patchgate::core::gate::OBSERVED_LINE_FIELDS),
        ("UntakenBranch", &patchgate::core::gate::UNTAKEN_FIELDS),
        (
            "PatchMutantFacts",
            &patchgate::core::gate::PATCH_MUTANT_FIELDS,
        ),
        ("SuspiciousLine", &patchgate::core::gate::SUSPICIOUS_FIELDS),
        ("AdmitRequestDoc", &patchgate::core::admit::REQUEST_FIELDS),
        ("AdmissionRecordDoc", &patchgate::core::admit::RECORD_FIELDS),
        ("ChecksRequestDoc", &patchgate::core::checks::FIELDS),
        ("TierRow", &patchgate::core::ladder::ROW_FIELDS),
        ("ResultDoc", &["runs"]),
        ("Receipt", &patchgate::core::runs::RECEIPT_FIELDS),
        ("FailingCase", &patchgate::core::gate::FAILURE_FIELDS),
        ("IntegrityFinding", &patchgate::core::gate::INTEGRITY_FIELDS),
        ("BuildDoc", &patchgate::core::gate::BUILD_FIELDS),
        ("CanaryDoc", &patchgate::core::gate::CANARY_FIELDS),
        ("Reproof", &patchgate::core::gate::REPROOF_FIELDS),
        ("TimingsDoc", &patchgate::core::gate::TIMING_STEPS),
        ("Configured", &patchgate::core::gate::CONFIGURED_FIELDS),
        ("RoomFacts", &patchgate::core::gate::ROOM_FIELDS),
        ("OverLimit", &patchgate::core::gate::OVER_FIELDS),
        ("HeldBy", &patchgate::core::gate::ROOM_CAPS),
    ];
    for (schema, parsed) in table {
        let s = &doc["components"]["schemas"][schema];
        let mut documented: Vec<&str> = s["properties"]
            .as_object()
            .unwrap_or_else(|| panic!("{schema} has no properties"))
            .keys()
            .map(String::as_str)
            .collect();
        let mut parsed = parsed.to_vec();
        documented.sort_unstable();
        parsed.sort_unstable();
        assert_eq!(documented, parsed, "{schema}");
        assert_eq!(s["additionalProperties"], false, "{schema}");
    }
}

/// Issue 34 (found by schemathesis): a `suspicious` line's `pattern` may not be empty, and the
/// document says so. Before, the schema allowed `""` and the server refused the body with 422.
#[tokio::test]
async fn a_suspicious_pattern_is_never_empty_and_the_document_says_so() {
    let doc: serde_json::Value =
        serde_json::from_str(&patchgate::http::openapi::document_json()).unwrap();
    let pattern = &doc["components"]["schemas"]["SuspiciousLine"]["properties"]["pattern"];
    assert_eq!(pattern["minLength"], 1, "{pattern}");
    let server = common::TestServer::start();
    let sha = "1".repeat(64);
    let body = serde_json::json!({
        "changed_files": ["src/a.py"],
        "seal": {"actual": sha, "expected": sha},
        "catalog": {"properties": []},
        "suspicious": [{"file": "src/a.py", "line": 1, "rule": "pattern", "class": "probe", "code": "x", "pattern": ""}],
    });
    let res = common::client()
        .post(server.url("/gate"))
        .json(&body)
        .send()
        .await
        .expect("request");
    assert_eq!(res.status().as_u16(), 422);
    let problem: serde_json::Value = res.json().await.unwrap();
    assert!(
        problem.to_string().contains("/suspicious/0/pattern"),
        "{problem}"
    );
}

/// Issue 50 (found by schemathesis): `POST /gate/next` refused `suspicious[].seen_in: null`,
/// which the document allowed. The parser refuses a null there (an absent field is how "none"
/// is said), and now the document says so too, for `seen_in` and `pattern` alike. Issue 67
/// (schemathesis again): `unread[].detail` likewise.
#[tokio::test]
async fn optional_strings_are_never_null_and_the_document_says_so() {
    let doc: serde_json::Value =
        serde_json::from_str(&patchgate::http::openapi::document_json()).unwrap();
    for (schema, field) in [
        ("SuspiciousLine", "seen_in"),
        ("SuspiciousLine", "pattern"),
        ("UnreadFile", "detail"),
    ] {
        let at = &doc["components"]["schemas"][schema]["properties"][field];
        assert_eq!(at["type"], "string", "{schema}.{field}: {at}");
    }
    let server = common::TestServer::start();
    let sha = "1".repeat(64);
    let nulls = [
        (
            "suspicious",
            serde_json::json!([{"file": "src/a.py", "line": 1, "rule": "pinned-literal", "class": "special-case", "code": "x", "seen_in": null}]),
            "/suspicious/0/seen_in",
        ),
        (
            "unread",
            serde_json::json!([{"file": "src/a.py", "reason": "symbolic-link", "detail": null}]),
            "/unread/0/detail",
        ),
    ];
    for (key, value, pointer) in nulls {
        let mut body = serde_json::json!({
            "changed_files": ["src/a.py"],
            "seal": {"actual": sha, "expected": sha},
            "catalog": {"properties": []},
        });
        body[key] = value;
        let res = common::client()
            .post(server.url("/gate/next"))
            .json(&body)
            .send()
            .await
            .expect("request");
        assert_eq!(res.status().as_u16(), 422, "{key}");
        let problem: serde_json::Value = res.json().await.unwrap();
        assert!(problem.to_string().contains(pointer), "{problem}");
    }
}
