//! One request buys its share and no more, over a real socket: error lists capped and counted,
//! paths capped at PATH_MAX, a declared body over the limit refused before it is read (and
//! before `Expect: 100-continue` is answered), a trickled body cut within one rate window
//! while others are served, an answer that is never read dropped by the write deadline, and a
//! report whose seconds overflow refused rather than answered with nulls. The CPU and memory
//! figures themselves are measured by `scripts/budget.py` against the release binary.

mod common;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use common::{TestServer, post, post_json};
use patchgate::core::path::{MAX_PATH_BYTES, PrefixTrie, RepoPath};
use patchgate::core::problem::MAX_ERRORS;
use patchgate::http::Settings;
use proptest::prelude::*;
use serde_json::{Value, json};

fn all_pass() -> Value {
    json!({"property_check": "pass", "fixture_check": "pass", "flaky_freeze": "pass"})
}

fn assert_capped(problem: &Value, at_least: usize) {
    let errors = problem["errors"].as_array().cloned().unwrap_or_default();
    assert_eq!(errors.len(), MAX_ERRORS, "{problem}");
    assert_eq!(problem["truncated"], true, "{problem}");
    let total = problem["total_errors"].as_u64().unwrap_or(0) as usize;
    assert!(total >= at_least, "total_errors {total} < {at_least}");
}

#[tokio::test]
async fn error_lists_are_capped_and_say_how_many_there_were() {
    let server = TestServer::start();
    // 1,000 unknown fields: 100 listed, all 1,000 counted.
    let doc: Value = Value::Object((0..1000).map(|i| (format!("k{i}"), json!(0))).collect());
    let (status, problem) = post_json(&server, "/route", &doc).await;
    assert_eq!(status, 422);
    assert_capped(&problem, 1000);
    assert_eq!(problem["total_errors"], 1000);
    // Rows: reading stops after the cap, so the count is a lower bound past it.
    let lines = "{}\n".repeat(5000).into_bytes();
    let (status, problem) = post(&server, "/ladder/report", "application/x-ndjson", lines).await;
    assert_eq!(status, 422);
    assert_capped(&problem, MAX_ERRORS + 1);
    // A review reads a log: lines that are not decisions are counted, not listed; with no
    // decision at all the answer is one error saying how many were skipped.
    let lines = "not json\n".repeat(5000).into_bytes();
    let (status, problem) = post(&server, "/review", "application/x-ndjson", lines).await;
    assert_eq!(status, 422);
    assert_eq!(
        problem["errors"].as_array().map(Vec::len),
        Some(1),
        "{problem}"
    );
    assert!(
        problem.to_string().contains("5000 lines skipped"),
        "{problem}"
    );
    // A JSON array of rows is read one row at a time, and stops the same way.
    let array = format!("[{}{{}}]", "{},".repeat(5000)).into_bytes();
    let (status, problem) = post(&server, "/ladder/report", "application/json", array).await;
    assert_eq!(status, 422);
    assert_capped(&problem, MAX_ERRORS + 1);
    // A quoted value is clipped in the detail, so 100 errors stay small.
    let long = "/".to_owned() + &"x".repeat(10_000);
    let paths: Vec<Value> = (0..200).map(|_| json!(long)).collect();
    let (status, problem) =
        post_json(&server, "/ladder/plan", &json!({ "changed_files": paths })).await;
    assert_eq!(status, 422);
    // A list is read item by item and stops after the cap, too.
    assert_capped(&problem, MAX_ERRORS + 1);
    assert!(
        serde_json::to_vec(&problem).unwrap_or_default().len() < 128 * 1024,
        "the reply is bounded"
    );
}

#[tokio::test]
async fn a_path_over_path_max_is_refused_naming_the_cap_and_a_deep_legal_one_is_decided() {
    let server = TestServer::start();
    let too_long = "a/".repeat(MAX_PATH_BYTES / 2) + "a";
    let doc = json!({"property_check": "pass", "fixture_check": "pass",
        "changed_files": [too_long], "frozen_tests": [{"id": "t", "covers": ["a"]}]});
    let (status, problem) = post_json(&server, "/route", &doc).await;
    assert_eq!(status, 422, "{problem}");
    assert_eq!(problem["errors"][0]["pointer"], "/changed_files/0");
    let detail = problem["errors"][0]["detail"].as_str().unwrap_or_default();
    assert!(detail.contains("4096"), "{detail}");
    // 1,000 segments, within both caps: matched segment by segment, whole segments only.
    let deep = "ab/".repeat(999) + "ab";
    let doc = json!({"property_check": "pass", "fixture_check": "pass",
        "changed_files": [format!("{deep}/x.rs")],
        "frozen_tests": [{"id": "near", "covers": [format!("{deep}x")]},
                         {"id": "hit", "covers": [deep.clone()]}]});
    let (status, answer) = post_json(&server, "/route", &doc).await;
    assert_eq!(status, 424, "{answer}");
    assert_eq!(answer["verdicts"]["flaky_freeze"], "unknown");
}

/// Sends raw bytes and returns what came back within `wait`.
fn raw(server: &TestServer, request: &[u8], wait: Duration) -> (String, Duration) {
    let mut s = TcpStream::connect(server.addr).expect("connect");
    s.set_read_timeout(Some(wait)).expect("timeout");
    let started = Instant::now();
    s.write_all(request).expect("write");
    let mut got = vec![0u8; 4096];
    let n = s.read(&mut got).unwrap_or(0);
    (
        String::from_utf8_lossy(&got[..n]).into_owned(),
        started.elapsed(),
    )
}

#[tokio::test]
async fn a_declared_body_over_the_limit_is_refused_before_it_is_read() {
    let server = TestServer::start();
    for path in ["/route", "/quorum", "/review", "/seal"] {
        let head = format!(
            "POST {path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100000000000\r\n\r\n"
        );
        let (got, took) = raw(&server, head.as_bytes(), Duration::from_secs(5));
        assert!(got.starts_with("HTTP/1.1 413"), "{path}: {got}");
        assert!(got.contains("application/problem+json"), "{path}: {got}");
        assert!(took < Duration::from_secs(2), "{path}: {took:?}");
    }
    // With `Expect: 100-continue`, the answer is the 413, never a 100 first.
    let head = "POST /route HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100000000\r\nExpect: 100-continue\r\n\r\n";
    let (got, _) = raw(&server, head.as_bytes(), Duration::from_secs(5));
    assert!(got.starts_with("HTTP/1.1 413"), "{got}");
    // And within the limit, `Expect: 100-continue` still gets its 100.
    let body = br#"{"property_check":"pass","fixture_check":"pass","flaky_freeze":"pass"}"#;
    let head = format!(
        "POST /route HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: {}\r\nExpect: 100-continue\r\n\r\n",
        body.len()
    );
    let (got, _) = raw(&server, head.as_bytes(), Duration::from_secs(5));
    assert!(got.starts_with("HTTP/1.1 100"), "{got}");
}

#[tokio::test]
async fn a_trickled_body_is_cut_within_one_rate_window_while_others_are_served() {
    let server = TestServer::start_with(Settings {
        max_concurrency: 1,
        ..Settings::default()
    });
    let addr = server.addr;
    let trickler = std::thread::spawn(move || {
        let mut s = TcpStream::connect(addr).expect("connect");
        s.set_read_timeout(Some(Duration::from_millis(500)))
            .expect("timeout");
        let started = Instant::now();
        s.write_all(
            b"POST /route HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{",
        )
        .expect("head");
        let mut got = Vec::new();
        while started.elapsed() < Duration::from_secs(15) {
            let mut buf = [0u8; 1024];
            match s.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => {
                    got.extend_from_slice(&buf[..n]);
                    break;
                }
                Err(_) => {
                    // One byte a half second: far below the minimum rate.
                    if s.write_all(b" ").is_err() {
                        break;
                    }
                }
            }
        }
        (
            String::from_utf8_lossy(&got).into_owned(),
            started.elapsed(),
        )
    });
    // Meanwhile the one decision slot is free: the trickler does not hold it.
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(post_json(&server, "/route", &all_pass()).await.0, 200);
    let (got, took) = trickler.join().expect("join");
    assert!(got.starts_with("HTTP/1.1 408"), "{got}");
    let window = patchgate::http::budget::RATE_WINDOW;
    assert!(
        took >= window && took < window + Duration::from_secs(3),
        "{took:?}"
    );
}

#[tokio::test]
async fn an_answer_that_is_never_read_is_dropped_at_the_write_deadline() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let server = TestServer::start_with(Settings {
        write_timeout: Duration::from_secs(1),
        ..Settings::default()
    });
    // 10,000 documents with 256-character ids: an answer of about 5 MB, more than the server's
    // socket buffer can hold while this client's receive buffer is kept small.
    let id = "p".repeat(256);
    let doc = format!(
        r#"{{"patch_id":"{id}","property_check":"pass","fixture_check":"fail","flaky_freeze":"pass"}}"#
    );
    let body = format!("[{}]", vec![doc.as_str(); 10_000].join(","));
    let socket = tokio::net::TcpSocket::new_v4().expect("socket");
    socket.set_recv_buffer_size(4096).expect("rcvbuf");
    let mut s = socket.connect(server.addr).await.expect("connect");
    let head = format!(
        "POST /route/batch HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n",
        body.len()
    );
    s.write_all(head.as_bytes()).await.expect("head");
    s.write_all(body.as_bytes()).await.expect("body");
    // Never read for a while: the server gives up on the connection...
    tokio::time::sleep(Duration::from_secs(4)).await;
    // ...so reading now ends early (EOF or reset) instead of delivering the whole answer.
    let mut got = Vec::new();
    let mut buf = vec![0u8; 64 * 1024];
    let ended = loop {
        match tokio::time::timeout(Duration::from_secs(5), s.read(&mut buf)).await {
            Err(_) => break false,
            Ok(Ok(0)) | Ok(Err(_)) => break true,
            Ok(Ok(n)) => got.extend_from_slice(&buf[..n]),
        }
    };
    assert!(ended, "the connection was still open");
    let text = String::from_utf8_lossy(&got);
    let declared: usize = text
        .lines()
        .find_map(|l| l.strip_prefix("content-length: "))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(usize::MAX);
    assert!(
        got.len() < declared,
        "the whole answer ({declared} bytes) was delivered"
    );
    // The server is fine.
    assert_eq!(post_json(&server, "/route", &all_pass()).await.0, 200);
}

#[tokio::test]
async fn bodies_held_in_memory_share_one_budget() {
    let server = TestServer::start_with(Settings {
        max_body_bytes: 1024 * 1024,
        ..Settings::default()
    });
    let row = r#"{"patch":"p","tier":"t1-properties","verdict":"pass","seconds":1.5}"#;
    let small = format!("{row}\n").repeat(1000).into_bytes();
    let (status, _) = post(&server, "/ladder/report", "application/x-ndjson", small).await;
    assert_eq!(status, 200);
    // Within the endpoint's own limit, but more than the server may hold for all bodies.
    let large = format!("{row}\n").repeat(30_000).into_bytes();
    let res = common::client()
        .post(server.url("/ladder/report"))
        .header("content-type", "application/x-ndjson")
        .body(large)
        .send()
        .await
        .expect("request");
    assert_eq!(res.status().as_u16(), 503);
    assert_eq!(res.headers()["retry-after"], "1");
    // The share comes back: the small one is served again.
    let small = format!("{row}\n").repeat(1000).into_bytes();
    let (status, _) = post(&server, "/ladder/report", "application/x-ndjson", small).await;
    assert_eq!(status, 200);
}

#[tokio::test]
async fn a_report_whose_seconds_overflow_is_refused_not_answered_with_nulls() {
    // A run is at most 1e9 seconds (the API document's `maximum`), so no ledger the body
    // limit lets in can sum to infinity: the rows that would are refused, each by pointer.
    let server = TestServer::start();
    let rows = json!([
        {"patch": "p1", "tier": "t1-properties", "verdict": "pass", "seconds": 1.7e308},
        {"patch": "p2", "tier": "t1-properties", "verdict": "caught", "seconds": 1.7e308},
        {"patch": "p3", "tier": "t1-properties", "verdict": "pass", "seconds": 1e9},
    ]);
    let (status, problem) = post_json(&server, "/ladder/report", &rows).await;
    assert_eq!(status, 422, "{problem}");
    let pointers: Vec<&str> = problem["errors"]
        .as_array()
        .map(|e| e.iter().filter_map(|x| x["pointer"].as_str()).collect())
        .unwrap_or_default();
    assert_eq!(pointers, ["/0/seconds", "/1/seconds"], "{problem}");
}

fn small_path() -> impl Strategy<Value = String> {
    prop::collection::vec(prop::sample::select(vec!["a", "b", "ab", "a_b"]), 1..6)
        .prop_map(|segments| segments.join("/"))
}

proptest! {
    // The trie answers exactly what the whole-segment definition says, for every prefix.
    #[test]
    fn the_prefix_trie_agrees_with_whole_segment_matching(
        files in prop::collection::vec(small_path(), 0..8),
        prefixes in prop::collection::vec(small_path(), 1..8),
    ) {
        let parse = |s: &String| RepoPath::parse(s).map_err(|e| TestCaseError::fail(e.to_string()));
        let files: Vec<RepoPath> = files.iter().map(parse).collect::<Result<_, _>>()?;
        let trie = PrefixTrie::new(&files);
        for prefix in &prefixes {
            let prefix = parse(prefix)?;
            let by_definition = files.iter().any(|f| {
                let (p, f) = (prefix.as_str(), f.as_str());
                f == p || f.strip_prefix(p).is_some_and(|rest| rest.starts_with('/'))
            });
            prop_assert_eq!(trie.covered_by(&prefix), by_definition, "{}", prefix);
        }
    }
}
