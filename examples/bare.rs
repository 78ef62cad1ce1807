//! The baseline for the load benchmark: a bare axum handler on the same runtime that parses the
//! same evidence JSON and answers, with none of patchgate's layers (no strict validation, no
//! decision log, no request id, no metrics, no limits). `scripts/bench-http.sh` measures
//! patchgate against it in the same run.
//!
//! `cargo run --release --example bare -- 127.0.0.1:8090`

use axum::{Json, Router, routing::post};
use serde::{Deserialize, Serialize};

#[derive(Deserialize)]
struct Evidence {
    patch_id: Option<String>,
    property_check: Option<String>,
    fixture_check: Option<String>,
    flaky_freeze: Option<String>,
}

#[derive(Serialize)]
struct Answer {
    patch_id: Option<String>,
    disposition: &'static str,
    property_check: Option<String>,
    fixture_check: Option<String>,
    flaky_freeze: Option<String>,
}

async fn route(Json(e): Json<Evidence>) -> Json<Answer> {
    let all_pass = [&e.property_check, &e.fixture_check, &e.flaky_freeze]
        .iter()
        .all(|v| v.as_deref() == Some("pass"));
    Json(Answer {
        patch_id: e.patch_id,
        disposition: if all_pass { "MERGE_OK" } else { "ESCALATE" },
        property_check: e.property_check,
        fixture_check: e.fixture_check,
        flaky_freeze: e.flaky_freeze,
    })
}

#[tokio::main]
async fn main() -> std::io::Result<()> {
    let addr = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "127.0.0.1:8090".to_owned());
    let listener = tokio::net::TcpListener::bind(&addr).await?;
    let app = Router::new().route("/route", post(route));
    axum::serve(listener, app)
        .with_graceful_shutdown(async {
            let mut term =
                tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
                    .unwrap_or_else(|e| panic!("cannot install SIGTERM handler: {e}"));
            tokio::select! {
                _ = term.recv() => {},
                _ = tokio::signal::ctrl_c() => {},
            }
        })
        .await
}
