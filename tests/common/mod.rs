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
