//! Shared test helpers: a real patchgate server on a real loopback socket, and the hand-written
//! decision table.
#![allow(dead_code)]

use std::net::SocketAddr;
use std::sync::mpsc;
use std::thread;

use patchgate::http::{AppState, Settings};

/// A patchgate server on 127.0.0.1:<ephemeral>, running on its own thread and runtime until
/// the test process ends.
pub struct TestServer {
    pub addr: SocketAddr,
    pub state: AppState,
}

impl TestServer {
    pub fn start() -> Self {
        Self::start_with(Settings::default())
    }

    pub fn start_with(settings: Settings) -> Self {
        let (tx, rx) = mpsc::channel();
        let state = AppState::new(settings);
        let server_state = state.clone();
        thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_multi_thread()
                .worker_threads(2)
                .enable_all()
                .build()
                .expect("runtime");
            rt.block_on(async move {
                let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
                    .await
                    .expect("bind");
                tx.send(listener.local_addr().expect("addr"))
                    .expect("send addr");
                patchgate::http::serve(listener, server_state, std::future::pending())
                    .await
                    .expect("serve");
            });
        });
        let addr = rx.recv().expect("server started");
        Self { addr, state }
    }

    pub fn url(&self, path: &str) -> String {
        format!("http://{}{}", self.addr, path)
    }
}

/// A reqwest client (with patchgate's TLS crypto provider installed).
pub fn client() -> reqwest::Client {
    patchgate::client::install_crypto_provider();
    reqwest::Client::new()
}

/// The `patchgate` binary, with no server or token taken from the test's environment.
pub fn patchgate() -> assert_cmd::Command {
    let mut cmd = assert_cmd::Command::cargo_bin("patchgate").expect("binary");
    cmd.env_remove("PATCHGATE_SERVER")
        .env_remove("PATCHGATE_TOKEN");
    cmd
}

/// Runs git in `dir`; its stdout, trimmed (a failure fails the test with git's stderr).
pub fn git(dir: &std::path::Path, args: &[&str]) -> String {
    let out = std::process::Command::new("git")
        .current_dir(dir)
        .args(args)
        .output()
        .expect("git");
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_owned()
}

/// After `patchgate admit`: the checkout is as it was (HEAD, a clean status, no worktree but
/// itself) and nothing is left in the `TMPDIR` it was given.
pub fn assert_untouched(dir: &std::path::Path, tmpdir: &std::path::Path, head: &str) {
    assert_eq!(git(dir, &["rev-parse", "HEAD"]), head, "HEAD moved");
    assert_eq!(
        git(dir, &["status", "--porcelain"]),
        "",
        "the checkout changed"
    );
    let worktrees = git(dir, &["worktree", "list", "--porcelain"]);
    assert_eq!(worktrees.matches("worktree ").count(), 1, "{worktrees}");
    let left: Vec<_> = std::fs::read_dir(tmpdir).expect("tmpdir").collect();
    assert!(left.is_empty(), "left in TMPDIR: {left:?}");
}

/// Writes `text` at `path` under `dir`, making its directories.
pub fn write(dir: &std::path::Path, path: &str, text: &str) {
    let p = dir.join(path);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, text).unwrap();
}

/// The first process whose command line (NUL-separated, as `/proc/PID/cmdline`) is
/// `cmdline`, whatever PID namespace it runs in.
pub fn pid_running(cmdline: &str) -> Option<i32> {
    std::fs::read_dir("/proc").ok()?.flatten().find_map(|e| {
        let pid: i32 = e.file_name().to_str()?.parse().ok()?;
        let line = std::fs::read(e.path().join("cmdline")).ok()?;
        (line == cmdline.as_bytes()).then_some(pid)
    })
}

/// Copies `from` into `to`, recursively (files only).
pub fn copy_tree(from: &std::path::Path, to: &std::path::Path) {
    for entry in std::fs::read_dir(from).expect("read_dir") {
        let entry = entry.expect("entry");
        let (src, dst) = (entry.path(), to.join(entry.file_name()));
        if entry.file_type().expect("type").is_dir() {
            std::fs::create_dir_all(&dst).expect("mkdir");
            copy_tree(&src, &dst);
        } else {
            std::fs::copy(&src, &dst).expect("copy");
        }
    }
}

/// Applies a patch file with `git apply` (as a contributor's change lands in a checkout).
pub fn apply(dir: &std::path::Path, patch: &std::path::Path) {
    git(
        dir,
        &[
            "apply",
            "--whitespace=nowarn",
            patch.to_str().expect("utf-8 path"),
        ],
    );
}

/// Everything in `dir` committed.
pub fn commit(dir: &std::path::Path, message: &str) {
    git(dir, &["add", "-A"]);
    git(dir, &["commit", "-q", "-m", message]);
}

/// A new git repository in a temporary directory, with a committer configured.
pub fn git_repo() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    let p = dir.path();
    git(p, &["init", "-q", "-b", "main"]);
    git(p, &["config", "user.email", "ci@example.invalid"]);
    git(p, &["config", "user.name", "CI"]);
    dir
}

/// The server is alive and still decides: `/healthz` answers 200 and an all-pass document
/// merges.
pub async fn assert_healthy(server: &TestServer) {
    let client = client();
    let res = client
        .get(server.url("/healthz"))
        .send()
        .await
        .expect("healthz");
    assert_eq!(res.status().as_u16(), 200);
    let (status, answer) = post_json(
        server,
        "/route",
        &serde_json::json!({"property_check": "pass", "fixture_check": "pass", "flaky_freeze": "pass"}),
    )
    .await;
    assert_eq!(status, 200, "{answer}");
    assert_eq!(answer["disposition"], "MERGE_OK");
}

/// POSTs `body` with `content_type`; the status and the body as JSON (`null` when not JSON).
pub async fn post(
    server: &TestServer,
    path: &str,
    content_type: &str,
    body: impl Into<reqwest::Body>,
) -> (u16, serde_json::Value) {
    let res = client()
        .post(server.url(path))
        .header("content-type", content_type)
        .body(body)
        .send()
        .await
        .expect("request");
    let status = res.status().as_u16();
    let bytes = res.bytes().await.expect("body");
    (
        status,
        serde_json::from_slice(&bytes).unwrap_or(serde_json::Value::Null),
    )
}

/// POSTs a JSON document.
pub async fn post_json(
    server: &TestServer,
    path: &str,
    doc: &serde_json::Value,
) -> (u16, serde_json::Value) {
    post(
        server,
        path,
        "application/json",
        serde_json::to_vec(doc).unwrap_or_default(),
    )
    .await
}

/// One row of `tests/data/route_table.tsv`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Row {
    pub property: String,
    pub fixture: String,
    pub freeze: String,
    pub disposition: String,
    pub attribution: String,
    pub rule: String,
    pub exit: u8,
}

pub fn table() -> Vec<Row> {
    let text = include_str!("../data/route_table.tsv");
    text.lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .map(|l| {
            let f: Vec<&str> = l.split('\t').collect();
            assert_eq!(f.len(), 7, "bad row: {l}");
            Row {
                property: f[0].into(),
                fixture: f[1].into(),
                freeze: f[2].into(),
                disposition: f[3].into(),
                attribution: f[4].into(),
                rule: f[5].into(),
                exit: f[6].parse().expect("exit"),
            }
        })
        .collect()
}

/// The status the contract pairs with each exit code.
pub fn status_of_exit(exit: u8) -> u16 {
    match exit {
        0 => 200,
        1 => 409,
        2 => 424,
        3 => 423,
        other => panic!("no status for exit {other}"),
    }
}

/// The exit code the contract pairs with each decision status.
pub fn exit_of_status(status: u16) -> u8 {
    match status {
        200 => 0,
        409 => 1,
        424 => 2,
        423 => 3,
        other => panic!("no exit code for status {other}"),
    }
}
