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
