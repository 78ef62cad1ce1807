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
    let table: [(&str, &[&str]); 23] = [
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
        ("JudgedDoc", &patchgate::core::gate::JUDGED_FIELDS),
        ("RerunDoc", &patchgate::core::gate::RERUN_FIELDS),
        (
            "SuspiciousLineDoc",
            &patchgate::core::gate::SUSPICIOUS_FIELDS,
        ),
        ("AdmitRequestDoc", &patchgate::core::admit::REQUEST_FIELDS),
        ("AdmissionRecordDoc", &patchgate::core::admit::RECORD_FIELDS),
        ("ChecksRequestDoc", &patchgate::core::checks::FIELDS),
        ("TierRow", &patchgate::core::ladder::ROW_FIELDS),
        ("ResultDoc", &["runs"]),
        ("ReceiptDoc", &patchgate::core::runs::RECEIPT_FIELDS),
        ("FailingCaseDoc", &patchgate::core::gate::FAILURE_FIELDS),
        (
            "IntegrityFindingDoc",
            &patchgate::core::gate::INTEGRITY_FIELDS,
        ),
        ("BuildDoc", &patchgate::core::gate::BUILD_FIELDS),
        ("CanaryDoc", &patchgate::core::gate::CANARY_FIELDS),
        ("ReproofDoc", &patchgate::core::gate::REPROOF_FIELDS),
        ("TimingsDoc", &patchgate::core::gate::TIMING_STEPS),
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
