//! The 64-row decision table, written by hand from the contract, against the core,
//! `GET /route/table` and `POST /route` over a real socket.

mod common;

use common::{Row, TestServer, status_of_exit, table};
use patchgate::core::route::{self, Verdict, Verdicts};
use serde_json::{Value, json};

fn verdict(word: &str) -> Verdict {
    Verdict::from_word(word).unwrap_or_else(|| panic!("bad word {word}"))
}

#[test]
fn the_hand_written_table_has_64_rows_and_exactly_one_merge() {
    let rows = table();
    assert_eq!(rows.len(), 64);
    assert_eq!(
        rows.iter().filter(|r| r.disposition == "MERGE_OK").count(),
        1
    );
}

#[test]
fn the_core_agrees_with_every_row() {
    for row in table() {
        let v = Verdicts {
            property_check: verdict(&row.property),
            fixture_check: verdict(&row.fixture),
            flaky_freeze: verdict(&row.freeze),
        };
        let d = route::route(&v);
        assert_eq!(d.disposition.as_str(), row.disposition, "{row:?}");
        assert_eq!(d.attribution.as_str(), row.attribution, "{row:?}");
        assert_eq!(d.rule.as_str(), row.rule, "{row:?}");
        assert_eq!(d.exit_code(), row.exit, "{row:?}");
    }
}

#[tokio::test]
async fn get_route_table_serves_the_same_64_rows_in_order() {
    let server = TestServer::start();
    let res = common::client()
        .get(server.url("/route/table"))
        .send()
        .await
        .expect("request");
    assert_eq!(res.status().as_u16(), 200);
    let got: Vec<Value> = res.json().await.expect("json");
    let want: Vec<Value> = table()
        .into_iter()
        .map(|r| {
            json!({
                "verdicts": {"property_check": r.property, "fixture_check": r.fixture, "flaky_freeze": r.freeze},
                "disposition": r.disposition, "attribution": r.attribution, "rule": r.rule, "exit_code": r.exit,
            })
        })
        .collect();
    assert_eq!(got, want);
}

async fn post_route(client: &reqwest::Client, server: &TestServer, doc: &Value) -> (u16, Value) {
    let res = client
        .post(server.url("/route"))
        .json(doc)
        .send()
        .await
        .expect("request");
    let status = res.status().as_u16();
    (status, res.json().await.expect("json"))
}

fn check(row: &Row, status: u16, body: &Value) {
    assert_eq!(status, status_of_exit(row.exit), "{row:?}");
    assert_eq!(body["disposition"], row.disposition.as_str(), "{row:?}");
    assert_eq!(body["attribution"], row.attribution.as_str(), "{row:?}");
    assert_eq!(body["rule"], row.rule.as_str(), "{row:?}");
    assert_eq!(body["exit_code"], row.exit, "{row:?}");
    assert_eq!(body["verdicts"]["property_check"], row.property.as_str());
    assert_eq!(body["verdicts"]["fixture_check"], row.fixture.as_str());
    assert_eq!(body["verdicts"]["flaky_freeze"], row.freeze.as_str());
    assert!(
        body["decision_id"].as_str().is_some_and(|s| !s.is_empty()),
        "{body}"
    );
}

#[tokio::test]
async fn post_route_decides_every_row_over_a_real_socket() {
    let server = TestServer::start();
    let client = common::client();
    let mut ids = std::collections::HashSet::new();
    for row in table() {
        // The explicit words...
        let doc = json!({"patch_id": "p", "property_check": row.property, "fixture_check": row.fixture, "flaky_freeze": row.freeze});
        let (status, body) = post_route(&client, &server, &doc).await;
        check(&row, status, &body);
        assert_eq!(body["patch_id"], "p");
        assert!(
            ids.insert(body["decision_id"].as_str().unwrap_or_default().to_owned()),
            "decision ids repeat"
        );

        // ...and the same evidence with every `missing` gate left out: absent means missing.
        let mut sparse = serde_json::Map::new();
        for (field, word) in [
            ("property_check", &row.property),
            ("fixture_check", &row.fixture),
            ("flaky_freeze", &row.freeze),
        ] {
            if word != "missing" {
                sparse.insert(field.to_owned(), json!(word));
            }
        }
        let (status, body) = post_route(&client, &server, &Value::Object(sparse)).await;
        check(&row, status, &body);
        assert!(body.get("patch_id").is_none());
    }
}

#[tokio::test]
async fn text_plain_answers_with_the_article_line_and_the_same_status() {
    let server = TestServer::start();
    let client = common::client();
    for row in table() {
        let doc = json!({"property_check": row.property, "fixture_check": row.fixture, "flaky_freeze": row.freeze});
        let res = client
            .post(server.url("/route"))
            .header("accept", "text/plain")
            .json(&doc)
            .send()
            .await
            .expect("request");
        assert_eq!(res.status().as_u16(), status_of_exit(row.exit));
        assert!(
            res.headers()["content-type"]
                .to_str()
                .unwrap_or("")
                .starts_with("text/plain")
        );
        assert_eq!(
            res.text().await.expect("text"),
            format!("{} attribution={}\n", row.disposition, row.attribution)
        );
    }
}
