//! Hardening over a real socket: bearer-token auth, per-endpoint body limits, the panic path,
//! request ids, a slowloris client cut off while others are served, load shed with 503 +
//! Retry-After, and a client that disconnects mid-upload.

mod common;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use axum::Router;
use axum::body::Body;
use axum::routing::get;
use common::TestServer;
use patchgate::http::layers::ObserveLayer;
use patchgate::http::{AppState, BearerToken, Settings};
use serde_json::{Value, json};
use tower::{Layer, ServiceExt};

const TOKEN: &str = "s3cret-token-for-tests";

fn with_token() -> Settings {
    Settings {
        token: BearerToken::new(TOKEN),
        ..Settings::default()
    }
}

fn evidence() -> Value {
    json!({"property_check": "pass", "fixture_check": "pass", "flaky_freeze": "pass"})
}

#[tokio::test]
async fn decision_endpoints_need_the_token_and_health_does_not() {
    let server = TestServer::start_with(with_token());
    let client = common::client();
    // No token.
    let res = client
        .post(server.url("/route"))
        .json(&evidence())
        .send()
        .await
        .expect("req");
    assert_eq!(res.status().as_u16(), 401);
    assert_eq!(
        res.headers()["www-authenticate"],
        r#"Bearer realm="patchgate""#
    );
    assert_eq!(res.headers()["content-type"], "application/problem+json");
    // Wrong token, including one that shares a prefix and one of another length.
    for wrong in [
        "nope",
        "s3cret-token-for-test",
        "s3cret-token-for-tests-and-more",
        "",
    ] {
        let res = client
            .post(server.url("/route"))
            .bearer_auth(wrong)
            .json(&evidence())
            .send()
            .await
            .expect("req");
        assert_eq!(res.status().as_u16(), 401, "{wrong:?}");
    }
    let res = client
        .post(server.url("/route"))
        .header("authorization", format!("Basic {TOKEN}"))
        .json(&evidence())
        .send()
        .await
        .expect("req");
    assert_eq!(res.status().as_u16(), 401, "another scheme");
    // The right token.
    let res = client
        .post(server.url("/route"))
        .bearer_auth(TOKEN)
        .json(&evidence())
        .send()
        .await
        .expect("req");
    assert_eq!(res.status().as_u16(), 200);
    let res = client
        .post(server.url("/route"))
        .header("authorization", format!("bearer {TOKEN}"))
        .json(&evidence())
        .send()
        .await
        .expect("req");
    assert_eq!(res.status().as_u16(), 200, "the scheme is case-insensitive");
    for path in [
        "/quorum",
        "/admit",
        "/gate",
        "/route/checks",
        "/seal",
        "/ladder/plan",
        "/review",
        "/route/batch",
    ] {
        let res = client
            .post(server.url(path))
            .json(&json!({}))
            .send()
            .await
            .expect("req");
        assert_eq!(res.status().as_u16(), 401, "{path}");
    }
    // Open without a token.
    for path in ["/healthz", "/readyz", "/metrics", "/openapi.json"] {
        let res = client.get(server.url(path)).send().await.expect("req");
        assert_eq!(res.status().as_u16(), 200, "{path}");
    }
}

#[test]
fn the_cli_sends_the_token() {
    let server = TestServer::start_with(with_token());
    let url = format!("http://{}", server.addr);
    let file = tempfile::NamedTempFile::new().expect("tmp");
    std::fs::write(file.path(), evidence().to_string()).expect("write");
    let run = |token: Option<&str>| {
        let mut cmd = common::patchgate();
        cmd.env_remove("PATCHGATE_TOKEN")
            .arg("route")
            .arg(file.path())
            .args(["--server", &url]);
        if let Some(t) = token {
            cmd.env("PATCHGATE_TOKEN", t);
        }
        cmd.assert()
    };
    run(Some(TOKEN)).code(0);
    run(Some("wrong")).code(64);
    run(None).code(64);
}

#[tokio::test]
async fn every_endpoint_has_its_body_limit() {
    let settings = Settings {
        decision_body_limit: 1024,
        report_body_limit: 4096,
        seal_archive_limit: 8192,
        ..Settings::default()
    };
    let server = TestServer::start_with(settings);
    let client = common::client();
    let padded = |n: usize| format!("{{\"patch_id\":\"{}\"}}", "x".repeat(n));
    let cases: Vec<(&str, &str, String, u16)> = vec![
        ("/route", "application/json", padded(2000), 413),
        (
            "/route/batch",
            "application/json",
            format!("[{}]", padded(2000)),
            413,
        ),
        ("/quorum", "application/json", padded(2000), 413),
        ("/admit", "application/json", padded(2000), 413),
        ("/gate", "application/json", padded(2000), 413),
        ("/ladder/plan", "application/json", padded(2000), 413),
        ("/freeze/eligibility", "application/json", padded(2000), 413),
        // Reports and reviews take more than a decision...
        (
            "/ladder/report",
            "application/x-ndjson",
            "\n".repeat(2000),
            200,
        ),
        // (read, not refused by size; then 422: no line in it is a decision)
        ("/review", "application/x-ndjson", "\n".repeat(2000), 422),
        ("/calibrate", "application/x-ndjson", "\n".repeat(2000), 200),
        // A forge's check documents too (2,000 bytes: read, then refused as a document: 422).
        ("/route/checks", "application/json", padded(2000), 422),
        ("/route/checks", "application/json", padded(5000), 413),
        // ...up to their own limit.
        (
            "/ladder/report",
            "application/x-ndjson",
            "\n".repeat(5000),
            413,
        ),
        ("/review", "application/x-ndjson", "\n".repeat(5000), 413),
        ("/calibrate", "application/x-ndjson", "\n".repeat(5000), 413),
        ("/seal", "text/plain", "\n".repeat(5000), 413),
        ("/seal", "application/x-tar", "\0".repeat(9000), 413),
    ];
    for (path, ct, body, status) in cases {
        let res = client
            .post(server.url(path))
            .header("content-type", ct)
            .body(body)
            .send()
            .await
            .expect("req");
        assert_eq!(res.status().as_u16(), status, "{path} {ct}");
        if status == 413 {
            assert_eq!(
                res.headers()["content-type"],
                "application/problem+json",
                "{path}"
            );
        }
    }
    assert_eq!(
        client
            .get(server.url("/healthz"))
            .send()
            .await
            .expect("req")
            .status()
            .as_u16(),
        200
    );
}

#[tokio::test]
async fn a_panic_is_a_bare_500_with_the_request_id_and_no_detail() {
    let state = AppState::new(Settings::default());
    async fn boom() -> &'static str {
        panic!("internal detail: /etc/secret")
    }
    let router = Router::new().route("/boom", get(boom));
    let service = ObserveLayer { state }.layer(router);
    let res = service
        .oneshot(
            axum::http::Request::builder()
                .uri("/boom")
                .header("x-request-id", "req-77")
                .body(Body::empty())
                .expect("request"),
        )
        .await
        .expect("response");
    assert_eq!(res.status().as_u16(), 500);
    assert_eq!(res.headers()["x-request-id"], "req-77");
    assert_eq!(res.headers()["content-type"], "application/problem+json");
    let bytes = axum::body::to_bytes(res.into_body(), 1 << 20)
        .await
        .expect("body");
    let text = String::from_utf8_lossy(&bytes);
    assert!(
        !text.contains("secret") && !text.contains("internal detail"),
        "{text}"
    );
    let problem: Value = serde_json::from_slice(&bytes).expect("json");
    assert_eq!(problem["status"], 500);
}

#[tokio::test]
async fn request_ids_are_echoed_generated_or_replaced() {
    let server = TestServer::start();
    let client = common::client();
    let res = client
        .get(server.url("/healthz"))
        .header("x-request-id", "ci-42")
        .send()
        .await
        .expect("req");
    assert_eq!(res.headers()["x-request-id"], "ci-42");
    let generated = client
        .get(server.url("/healthz"))
        .send()
        .await
        .expect("req")
        .headers()["x-request-id"]
        .to_str()
        .expect("ascii")
        .to_owned();
    assert_eq!(generated.len(), 36, "a UUID: {generated}");
    let res = client
        .get(server.url("/healthz"))
        .header("x-request-id", "x".repeat(500))
        .send()
        .await
        .expect("req");
    assert_ne!(
        res.headers()["x-request-id"],
        "x".repeat(500).as_str(),
        "an over-long id is replaced"
    );
}

#[tokio::test]
async fn a_slowloris_client_is_cut_off_while_others_are_served() {
    let server = TestServer::start_with(Settings {
        header_read_timeout: Duration::from_secs(1),
        ..Settings::default()
    });
    let addr = server.addr;
    let slow = tokio::task::spawn_blocking(move || {
        let mut s = TcpStream::connect(addr).expect("connect");
        s.set_read_timeout(Some(Duration::from_millis(200)))
            .expect("timeout");
        let started = Instant::now();
        let _ = s.write_all(b"POST /route HTTP/1.1\r\nHost: x\r\n");
        // Trickle a header byte every 0.2 s, never finishing the head, until the server
        // answers or closes: bytes of a head are not progress.
        let mut buf = [0u8; 1024];
        let mut got = Vec::new();
        while started.elapsed() < Duration::from_secs(12) {
            if s.write_all(b"X").is_err() {
                break;
            }
            match s.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => got.extend_from_slice(&buf[..n]),
                Err(e)
                    if matches!(
                        e.kind(),
                        std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                    ) => {}
                Err(_) => break,
            }
        }
        (started.elapsed(), got)
    });
    // Meanwhile, others are served.
    let client = common::client();
    for _ in 0..5 {
        let res = client
            .post(server.url("/route"))
            .json(&evidence())
            .send()
            .await
            .expect("req");
        assert_eq!(res.status().as_u16(), 200);
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let (elapsed, got) = slow.await.expect("slow client");
    // The deadline is 1 s, kept to within a quarter of it (and a little scheduling slack).
    assert!(
        elapsed < Duration::from_secs(3),
        "the trickling client was not cut off in time ({elapsed:?})"
    );
    let text = String::from_utf8_lossy(&got);
    assert!(got.is_empty() || text.starts_with("HTTP/1.1 408"), "{text}");
}

/// Sends one `/route` request on `s` and reads its whole answer; the status code.
fn round_trip(s: &mut TcpStream) -> u16 {
    let body = evidence().to_string();
    let req = format!(
        "POST /route HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    );
    s.write_all(req.as_bytes()).expect("send");
    let mut got = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        let n = s.read(&mut buf).expect("read");
        assert!(n > 0, "closed mid-answer");
        got.extend_from_slice(&buf[..n]);
        let text = String::from_utf8_lossy(&got).into_owned();
        if let Some(end) = text.find("\r\n\r\n") {
            let length: usize = text
                .lines()
                .find_map(|l| {
                    l.to_ascii_lowercase()
                        .strip_prefix("content-length:")
                        .map(|v| v.trim().parse().expect("length"))
                })
                .expect("a content-length");
            if got.len() >= end + 4 + length {
                return text[9..12].parse().expect("a status");
            }
        }
    }
}

/// The header read deadline also bounds an idle keep-alive connection: closed after the
/// timeout (not before), while a connection that keeps sending whole requests stays open.
#[tokio::test]
async fn idle_keep_alive_connections_close_after_the_header_timeout_busy_ones_stay() {
    let timeout = Duration::from_secs(1);
    let server = TestServer::start_with(Settings {
        header_read_timeout: timeout,
        ..Settings::default()
    });
    let addr = server.addr;
    let idle = tokio::task::spawn_blocking(move || {
        let mut s = TcpStream::connect(addr).expect("connect");
        s.set_read_timeout(Some(Duration::from_secs(20)))
            .expect("timeout");
        assert_eq!(round_trip(&mut s), 200);
        let answered = Instant::now();
        let mut buf = [0u8; 64];
        let n = s.read(&mut buf).unwrap_or(0);
        (n, answered.elapsed())
    });
    let busy = tokio::task::spawn_blocking(move || {
        let mut s = TcpStream::connect(addr).expect("connect");
        s.set_read_timeout(Some(Duration::from_secs(20)))
            .expect("timeout");
        let started = Instant::now();
        let mut answered = 0;
        // A request every 0.4 s for four timeouts, all on the one connection.
        while started.elapsed() < timeout * 4 {
            assert_eq!(
                round_trip(&mut s),
                200,
                "request {answered} on the busy connection"
            );
            answered += 1;
            std::thread::sleep(Duration::from_millis(400));
        }
        answered
    });
    let (n, idle_for) = idle.await.expect("idle client");
    assert_eq!(n, 0, "the idle connection is closed, not answered");
    // Measured from the client, which notes the answer a little after the server wrote it.
    assert!(
        idle_for >= timeout - Duration::from_millis(50),
        "closed before the timeout: {idle_for:?}"
    );
    assert!(idle_for < timeout * 5, "not closed in time: {idle_for:?}");
    assert!(busy.await.expect("busy client") >= 8);
}

#[tokio::test]
async fn a_stalled_upload_holds_an_upload_slot_never_a_decision_slot_and_releases_it_on_disconnect()
{
    // One decision slot and one upload slot: a stalled upload must not starve decisions.
    let server = TestServer::start_with(Settings {
        max_concurrency: 1,
        max_seal_uploads: 1,
        ..Settings::default()
    });
    let addr = server.addr;
    let (tx, rx) = std::sync::mpsc::channel::<()>();
    let (started_tx, started_rx) = std::sync::mpsc::channel::<()>();
    let stalled = std::thread::spawn(move || {
        // Started once the server holds it: an upload answered at once (shed, because the
        // server took another request first) is made again, so no probe below races it.
        let s = loop {
            let mut s = TcpStream::connect(addr).expect("connect");
            let head = "POST /seal HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-tar\r\nContent-Length: 100000\r\n\r\n";
            s.write_all(head.as_bytes()).expect("head");
            // A member header that announces 90,000 bytes, then only some of them: the archive
            // stalls mid-member (zero blocks would end it: an empty tree, answered at once).
            let mut h = tar::Header::new_gnu();
            h.set_path("fixtures/big").expect("path");
            h.set_size(90_000);
            h.set_mode(0o644);
            h.set_cksum();
            s.write_all(h.as_bytes()).expect("header");
            s.write_all(&[7u8; 1000]).expect("part of the body");
            s.set_read_timeout(Some(Duration::from_millis(300)))
                .expect("timeout");
            let mut byte = [0u8; 1];
            match std::io::Read::read(&mut s, &mut byte) {
                Err(e)
                    if matches!(
                        e.kind(),
                        std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                    ) =>
                {
                    break s;
                }
                _ => continue,
            }
        };
        let _ = started_tx.send(());
        let _ = rx.recv();
        // Disconnect mid-upload.
        drop(s);
    });
    started_rx.recv().expect("the upload started");
    let client = common::client();
    let tar = || {
        let mut b = tar::Builder::new(Vec::new());
        let mut h = tar::Header::new_gnu();
        h.set_size(2);
        h.set_mode(0o644);
        h.set_cksum();
        b.append_data(&mut h, "fixtures/a", &b"a\n"[..])
            .expect("append");
        b.into_inner().expect("tar")
    };
    // A second upload is shed at once while the first holds the one upload slot...
    let deadline = Instant::now() + Duration::from_secs(10);
    let shed = loop {
        let res = client
            .post(server.url("/seal"))
            .header("content-type", "application/x-tar")
            .body(tar())
            .send()
            .await
            .expect("req");
        let status = res.status().as_u16();
        if status == 503 {
            break res;
        }
        assert!(
            Instant::now() < deadline,
            "a second upload was never shed (answered {status})"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    assert_eq!(shed.headers()["retry-after"], "1");
    assert_eq!(shed.headers()["content-type"], "application/problem+json");
    // ...while decisions are still served: the stalled body holds no decision slot.
    for _ in 0..5 {
        let res = client
            .post(server.url("/route"))
            .json(&evidence())
            .send()
            .await
            .expect("req");
        assert_eq!(res.status().as_u16(), 200);
    }
    // Health is never shed.
    assert_eq!(
        client
            .get(server.url("/healthz"))
            .send()
            .await
            .expect("req")
            .status()
            .as_u16(),
        200
    );
    // The client goes away: the upload slot comes back.
    tx.send(()).expect("signal");
    stalled.join().expect("join");
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let res = client
            .post(server.url("/seal"))
            .header("content-type", "application/x-tar")
            .body(tar())
            .send()
            .await
            .expect("req");
        if res.status().as_u16() == 200 {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the upload slot was never released after the disconnect"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}
