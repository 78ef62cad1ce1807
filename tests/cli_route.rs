//! `patchgate route` through the real binary: exit codes locally and against a live server.

mod common;

use std::io::Write;

use common::{TestServer, patchgate, table};
use serde_json::{Value, json};

fn evidence_file(doc: &Value) -> tempfile::NamedTempFile {
    let mut f = tempfile::NamedTempFile::new().expect("temp file");
    f.write_all(doc.to_string().as_bytes()).expect("write");
    f
}

fn doc(p: &str, f: &str, z: &str) -> Value {
    json!({"patch_id": "pr-1", "property_check": p, "fixture_check": f, "flaky_freeze": z})
}

#[test]
fn local_route_prints_the_line_and_exits_with_the_disposition() {
    let cases = [
        (
            doc("pass", "pass", "pass"),
            0,
            "MERGE_OK attribution=all-gates-held\n",
        ),
        (
            doc("fail", "pass", "unknown"),
            1,
            "BLOCK attribution=invariant-or-over-specified-property\n",
        ),
        (
            doc("pass", "pass", "unknown"),
            2,
            "ESCALATE attribution=inadmissible-evidence\n",
        ),
        (
            doc("fail", "pass", "missing"),
            2,
            "ESCALATE attribution=evidence-gap\n",
        ),
    ];
    for (evidence, code, line) in cases {
        let file = evidence_file(&evidence);
        patchgate()
            .arg("route")
            .arg(file.path())
            .assert()
            .code(code)
            .stdout(line);
    }
}

#[test]
fn local_route_reads_stdin_and_prints_json() {
    let out = patchgate()
        .args(["route", "-", "--json"])
        .write_stdin(doc("pass", "fail", "pass").to_string())
        .assert()
        .code(1)
        .get_output()
        .stdout
        .clone();
    let answer: Value = serde_json::from_slice(&out).expect("json answer");
    assert_eq!(answer["disposition"], "BLOCK");
    assert_eq!(answer["attribution"], "concrete-behavior");
    assert_eq!(answer["rule"], "fail-absorbs");
    assert_eq!(answer["exit_code"], 1);
    assert_eq!(answer["patch_id"], "pr-1");
    assert!(
        answer["decision_id"]
            .as_str()
            .is_some_and(|s| !s.is_empty())
    );
}

#[test]
fn bad_evidence_is_65_and_names_the_field() {
    let file = evidence_file(&json!({"property_check": true}));
    let assert = patchgate()
        .arg("route")
        .arg(file.path())
        .assert()
        .code(65)
        .stdout("");
    let stderr = String::from_utf8_lossy(&assert.get_output().stderr).into_owned();
    assert!(
        stderr.contains("property_check") && stderr.contains("boolean"),
        "{stderr}"
    );

    patchgate()
        .args(["route", "-"])
        .write_stdin("{not json")
        .assert()
        .code(65);
    patchgate()
        .args(["route", "/nonexistent/evidence.json"])
        .assert()
        .code(65);
}

#[test]
fn usage_errors_are_64() {
    patchgate().assert().code(64);
    patchgate().arg("route").assert().code(64);
    patchgate()
        .args(["route", "x.json", "--frobnicate"])
        .assert()
        .code(64);
    patchgate()
        .args(["route", "-", "--server", "not a url"])
        .write_stdin("{}")
        .assert()
        .code(64);
    // An evidence document names its own patch: a --patch-id beside it would be dropped
    // without a word, so it is refused.
    let file = evidence_file(&doc("pass", "pass", "pass"));
    let out = patchgate()
        .arg("route")
        .arg(file.path())
        .args(["--patch-id", "pr-9"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(64));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--patch-id goes with --checks"));
    patchgate().arg("--help").assert().code(0);
}

#[test]
fn remote_route_maps_the_status_back_to_the_same_exit_code() {
    let server = TestServer::start();
    let url = format!("http://{}", server.addr);
    for row in table() {
        let evidence = doc(&row.property, &row.fixture, &row.freeze);
        let file = evidence_file(&evidence);
        patchgate()
            .arg("route")
            .arg(file.path())
            .args(["--server", &url])
            .assert()
            .code(i32::from(row.exit))
            .stdout(format!(
                "{} attribution={}\n",
                row.disposition, row.attribution
            ));
    }
    // PATCHGATE_SERVER works like --server, and --json prints the server's answer.
    let file = evidence_file(&doc("pass", "pass", "pass"));
    let out = patchgate()
        .arg("route")
        .arg(file.path())
        .arg("--json")
        .env("PATCHGATE_SERVER", &url)
        .assert()
        .code(0)
        .get_output()
        .stdout
        .clone();
    let answer: Value = serde_json::from_slice(&out).expect("json");
    assert_eq!(answer["disposition"], "MERGE_OK");
}

#[test]
fn remote_bad_evidence_is_65() {
    let server = TestServer::start();
    let file = evidence_file(&json!({"property_check": "PASS"}));
    let assert = patchgate()
        .arg("route")
        .arg(file.path())
        .args(["--server", &format!("http://{}", server.addr)])
        .assert()
        .code(65);
    let stderr = String::from_utf8_lossy(&assert.get_output().stderr).into_owned();
    assert!(stderr.contains("/property_check"), "{stderr}");
}

#[test]
fn an_unreachable_server_is_69_never_a_go() {
    // A port that was free a moment ago and has nobody listening.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("port");
    let file = evidence_file(&doc("pass", "pass", "pass"));
    patchgate()
        .arg("route")
        .arg(file.path())
        .args(["--server", &format!("http://127.0.0.1:{port}")])
        .assert()
        .code(69)
        .stdout("");
}

#[test]
fn a_server_that_is_not_patchgate_is_69_never_a_go() {
    // A listener that answers 200 with a body that is not a decision, and one that answers 404.
    for (status, body) in [
        ("200 OK", "{\"hello\":1}"),
        ("404 Not Found", "nope"),
        ("302 Found", ""),
    ] {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        let addr = listener.local_addr().expect("addr");
        let status = status.to_owned();
        let body = body.to_owned();
        let handle = std::thread::spawn(move || {
            if let Ok((mut stream, _)) = listener.accept() {
                let mut buf = [0u8; 4096];
                let _ = std::io::Read::read(&mut stream, &mut buf);
                let _ = write!(
                    stream,
                    "HTTP/1.1 {status}\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                    body.len()
                );
            }
        });
        let file = evidence_file(&doc("pass", "pass", "pass"));
        patchgate()
            .arg("route")
            .arg(file.path())
            .args(["--server", &format!("http://{addr}")])
            .assert()
            .code(69);
        let _ = handle.join();
    }
}

/// Writing the answer may fail only on a closed pipe; a full disk is not a success (70), so an
/// answer that was never written never exits 0.
#[test]
fn an_answer_that_cannot_be_written_is_never_a_go() {
    let file = evidence_file(&doc("pass", "pass", "pass"));
    let full = std::fs::OpenOptions::new()
        .write(true)
        .open("/dev/full")
        .expect("/dev/full");
    let status = std::process::Command::new(assert_cmd::cargo::cargo_bin("patchgate"))
        .env_remove("PATCHGATE_SERVER")
        .env_remove("PATCHGATE_TOKEN")
        .arg("route")
        .arg(file.path())
        .stdout(full)
        .stderr(std::process::Stdio::null())
        .status()
        .expect("run");
    assert_eq!(status.code(), Some(70));
    // A closed pipe is not an error: the decision's own exit code stands.
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("patchgate"))
        .env_remove("PATCHGATE_SERVER")
        .env_remove("PATCHGATE_TOKEN")
        .arg("route")
        .arg(file.path())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("spawn");
    drop(child.stdout.take());
    assert_eq!(child.wait().expect("wait").code(), Some(0));
}
