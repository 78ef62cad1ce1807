//! `patchgate serve` as a real process: it logs where it listens, writes one decision-log line
//! per decision (with the answer's decision_id), and on SIGTERM drains and exits 0.

mod common;

use std::io::{BufRead, BufReader, Read};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

fn binary() -> std::path::PathBuf {
    assert_cmd::cargo::cargo_bin("patchgate")
}

#[tokio::test]
async fn decisions_are_logged_and_sigterm_drains_and_exits_zero() {
    let mut child = Command::new(binary())
        .args(["serve", "--listen", "127.0.0.1:0"])
        .env_remove("RUST_LOG")
        .env_remove("PORT")
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn patchgate serve");
    let mut stdout = BufReader::new(child.stdout.take().expect("stdout"));

    // The first line says where it listens.
    let mut first = String::new();
    stdout
        .read_line(&mut first)
        .expect("read the listening line");
    let listening: Value = serde_json::from_str(&first).expect("a JSON log line");
    assert_eq!(listening["message"], "listening");
    let addr = listening["addr"].as_str().expect("addr").to_owned();

    let client = common::client();
    let evidences = [
        json!({"patch_id": "pr-a", "property_check": "pass", "fixture_check": "pass", "flaky_freeze": "pass"}),
        json!({"patch_id": "pr-b", "property_check": "fail", "fixture_check": "pass", "flaky_freeze": "unknown"}),
        json!({"property_check": "pass", "fixture_check": "pass"}),
    ];
    let mut answers = Vec::new();
    for e in &evidences {
        let res = client
            .post(format!("http://{addr}/route"))
            .header("x-request-id", "log-test-1")
            .json(e)
            .send()
            .await
            .expect("request");
        answers.push(res.json::<Value>().await.expect("answer"));
    }
    // One patch-gate decision, routed: its line carries the verdicts and the attribution too.
    let seal = "1".repeat(64);
    let gate_answer: Value = client
        .post(format!("http://{addr}/gate"))
        .header("x-request-id", "log-test-1")
        .json(&json!({
            "patch_id": "pr-g", "changed_files": ["src/a.rs"],
            "seal": {"actual": seal, "expected": seal},
            "catalog": {"properties": [{"id": "p", "strength": "strong", "locality": ["src"]}]},
            "property_runs": {"p": {"runs": [0, 0]}},
            "fixture_suite": {"exit_code": 1}
        }))
        .send()
        .await
        .expect("request")
        .json()
        .await
        .expect("answer");
    assert_eq!(gate_answer["disposition"], "BLOCK");
    // One forge-checks decision, PENDING: logged with its disposition and how many still run.
    let head = "ce587453ced02b1526dfb4cb910479d431683101";
    let pending = client
        .post(format!("http://{addr}/route/checks"))
        .json(&json!({
            "head_sha": head,
            "gates": {"property_check": ["p"], "fixture_check": ["f"], "flaky_freeze": ["q"]},
            "check_runs": {"total_count": 1, "check_runs": [
                {"id": 1, "name": "f", "head_sha": head, "status": "in_progress", "conclusion": null}
            ]}
        }))
        .send()
        .await
        .expect("request");
    assert_eq!(pending.status().as_u16(), 425);
    let pending: Value = pending.json().await.expect("answer");
    // A refused document is not a decision and must not be logged as one.
    let res = client
        .post(format!("http://{addr}/route"))
        .json(&json!({"property_check": "PASS"}))
        .send()
        .await
        .expect("request");
    assert_eq!(res.status().as_u16(), 422);

    // The shell's own `kill`: no procps needed.
    let status = Command::new("sh")
        .args(["-c", &format!("kill -TERM {}", child.id())])
        .status()
        .expect("kill");
    assert!(status.success());
    let deadline = Instant::now() + Duration::from_secs(20);
    let exit = loop {
        if let Some(s) = child.try_wait().expect("wait") {
            break s;
        }
        assert!(
            Instant::now() < deadline,
            "patchgate did not exit after SIGTERM"
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    assert_eq!(exit.code(), Some(0), "SIGTERM must drain and exit 0");

    let mut rest = String::new();
    stdout.read_to_string(&mut rest).expect("read the log");
    let lines: Vec<Value> = rest
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON: {l}: {e}")))
        .collect();
    let decisions: Vec<&Value> = lines
        .iter()
        .filter(|l| l["target"] == "patchgate::decision")
        .collect();
    assert_eq!(decisions.len(), 5, "one line per decision: {rest}");
    let checks = decisions[4];
    assert_eq!(checks["endpoint"], "route/checks");
    assert_eq!(checks["decision_id"], pending["decision_id"]);
    assert_eq!(
        (
            &checks["disposition"],
            &checks["exit_code"],
            &checks["pending_total"]
        ),
        (&json!("PENDING"), &json!(75), &json!(1))
    );
    assert!(checks.get("attribution").is_none());
    let gate = decisions[3];
    assert_eq!(gate["endpoint"], "gate");
    assert_eq!(gate["decision_id"], gate_answer["decision_id"]);
    assert_eq!(
        (
            &gate["disposition"],
            &gate["reason"],
            &gate["attribution"],
            &gate["rule"]
        ),
        (
            &json!("BLOCK"),
            &json!("concrete-behavior"),
            &json!("concrete-behavior"),
            &json!("route")
        )
    );
    assert_eq!(gate["fixture_check"], "fail");
    assert_eq!(gate["patch_id"], "pr-g");
    for (line, answer) in decisions.iter().zip(&answers) {
        assert_eq!(line["decision_id"], answer["decision_id"]);
        assert_eq!(line["disposition"], answer["disposition"]);
        assert_eq!(line["attribution"], answer["attribution"]);
        assert_eq!(line["rule"], answer["rule"]);
        assert_eq!(line["level"], "INFO");
        assert_eq!(line["request_id"], "log-test-1");
        for gate in ["property_check", "fixture_check", "flaky_freeze"] {
            assert_eq!(line[gate], answer["verdicts"][gate]);
        }
    }
    assert_eq!(decisions[0]["patch_id"], "pr-a");
    assert!(decisions[2].get("patch_id").is_none());
    assert_eq!(decisions[2]["flaky_freeze"], "missing");
}

#[test]
fn a_port_env_that_is_not_a_port_is_a_usage_error() {
    let out = Command::new(binary())
        .args(["serve"])
        .env("PORT", "not-a-port")
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(64));
}

#[tokio::test]
async fn with_a_drain_delay_readyz_turns_503_at_sigterm_while_requests_are_still_served() {
    let mut child = Command::new(binary())
        .args(["serve", "--listen", "127.0.0.1:0", "--drain-delay", "2s"])
        .env_remove("RUST_LOG")
        .env_remove("PORT")
        .env_remove("PATCHGATE_TOKEN")
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn");
    let mut stdout = BufReader::new(child.stdout.take().expect("stdout"));
    let mut first = String::new();
    stdout.read_line(&mut first).expect("listening line");
    let listening: Value = serde_json::from_str(&first).expect("json");
    assert_eq!(listening["auth"], false);
    let addr = listening["addr"].as_str().expect("addr").to_owned();
    let client = common::client();
    assert_eq!(
        client
            .get(format!("http://{addr}/readyz"))
            .send()
            .await
            .expect("readyz")
            .status()
            .as_u16(),
        200
    );

    let sent = Instant::now();
    Command::new("sh")
        .args(["-c", &format!("kill -TERM {}", child.id())])
        .status()
        .expect("kill");
    // Within the delay: not ready, but still answering.
    let mut saw_503 = false;
    while sent.elapsed() < Duration::from_millis(1500) {
        let res = client
            .get(format!("http://{addr}/readyz"))
            .send()
            .await
            .expect("readyz during the delay");
        if res.status().as_u16() == 503 {
            saw_503 = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(saw_503, "/readyz did not turn 503 after SIGTERM");
    let res = client
        .post(format!("http://{addr}/route"))
        .json(&json!({"property_check": "pass", "fixture_check": "pass", "flaky_freeze": "pass"}))
        .send()
        .await
        .expect("served during the drain delay");
    assert_eq!(res.status().as_u16(), 200);
    let deadline = Instant::now() + Duration::from_secs(20);
    let exit = loop {
        if let Some(s) = child.try_wait().expect("wait") {
            break s;
        }
        assert!(Instant::now() < deadline, "no exit after the drain");
        std::thread::sleep(Duration::from_millis(20));
    };
    assert_eq!(exit.code(), Some(0));
    assert!(
        sent.elapsed() >= Duration::from_secs(2),
        "exited before the drain delay"
    );
}

#[test]
fn healthcheck_is_0_against_a_live_server_and_1_against_a_dead_port() {
    let server = common::TestServer::start();
    common::patchgate()
        .args(["healthcheck", "--url", &format!("http://{}", server.addr)])
        .assert()
        .code(0);
    // PORT picks the default URL's port.
    common::patchgate()
        .arg("healthcheck")
        .env("PORT", server.addr.port().to_string())
        .assert()
        .code(0);
    let dead = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("port")
        .port();
    common::patchgate()
        .args(["healthcheck", "--url", &format!("http://127.0.0.1:{dead}")])
        .assert()
        .code(1);
    // Something that answers, but not 200.
    common::patchgate()
        .args([
            "healthcheck",
            "--url",
            &format!("http://{}/nope", server.addr),
        ])
        .assert()
        .code(1);
}

/// The environment of a running process, as `NAME=value` strings.
fn environ(pid: u32) -> Vec<String> {
    std::fs::read(format!("/proc/{pid}/environ"))
        .expect("environ")
        .split(|b| *b == 0)
        .map(|v| String::from_utf8_lossy(v).into_owned())
        .collect()
}

/// Serves until the listening line: that line, and the process's environment; the process is
/// killed.
fn serving(set: &[(&str, &str)]) -> (Value, Vec<String>) {
    let mut cmd = Command::new(binary());
    cmd.args(["serve", "--listen", "127.0.0.1:0"])
        .env_remove("MALLOC_ARENA_MAX")
        .env_remove("MALLOC_MMAP_THRESHOLD_")
        .env_remove("PORT")
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    for (k, v) in set {
        cmd.env(k, v);
    }
    let mut child = cmd.spawn().expect("spawn");
    let mut line = String::new();
    BufReader::new(child.stdout.take().expect("stdout"))
        .read_line(&mut line)
        .expect("the listening line");
    assert!(line.contains("listening"), "{line}");
    let env = environ(child.id());
    let _ = child.kill();
    let _ = child.wait();
    (serde_json::from_str(&line).expect("a JSON line"), env)
}

/// `serve` bounds glibc's malloc with mallopt(3) in its own process (it used to re-execute
/// itself with environment variables, which escaped valgrind and debuggers and dropped the
/// second setting when an operator gave the first).
#[test]
fn the_server_runs_with_glibc_malloc_bounded_unless_the_operator_says_otherwise() {
    if !cfg!(target_env = "gnu") {
        return;
    }
    let (line, env) = serving(&[]);
    assert_eq!(
        line["malloc"],
        "MALLOC_ARENA_MAX=2 (mallopt), MALLOC_MMAP_THRESHOLD_=131072 (mallopt)"
    );
    // Not re-executed: nothing was added to the environment it was started with.
    assert!(!env.iter().any(|v| v.starts_with("MALLOC_")), "{env:?}");
    // An operator's own setting stands, and the other one is still bounded.
    let (line, env) = serving(&[("MALLOC_ARENA_MAX", "4")]);
    assert_eq!(
        line["malloc"],
        "MALLOC_ARENA_MAX=4 (environment), MALLOC_MMAP_THRESHOLD_=131072 (mallopt)"
    );
    assert!(env.contains(&"MALLOC_ARENA_MAX=4".to_owned()), "{env:?}");
    assert!(
        !env.iter().any(|v| v.starts_with("MALLOC_MMAP_THRESHOLD_")),
        "{env:?}"
    );
}
