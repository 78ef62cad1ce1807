//! The one handler of every decision endpoint: read the body strictly, decide with the core,
//! log the decision, count it, and answer in the media type asked for with the status that is
//! the exit code's twin. Each endpoint's own function only carries its OpenAPI description
//! and calls [`decide`] with its [`Decision`] type.

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::Response;
use bytes::Bytes;

use super::AppState;
use super::budget::run_cpu;
use super::extract::{Accept, Answer, negotiate_among};
use super::layers::with_request_id;
use super::status_for_exit;
use crate::core::decision::{Decision, Defaults};
use crate::core::problem::Problem;
use crate::ids::new_decision_id;
use crate::telemetry::log_decision_of;

pub const TEXT_PLAIN: &str = "text/plain; charset=utf-8";
pub const TEXT_MARKDOWN: &str = "text/markdown; charset=utf-8";

/// Decides one body as `D`, off the async workers when it is large.
pub async fn decide<D>(state: AppState, accept: &Accept, body: Bytes) -> Result<Response, Problem>
where
    D: Decision + 'static,
    D::Request: 'static,
{
    let offers: &[Answer] = if D::MARKDOWN {
        &[Answer::Json, Answer::Text, Answer::Markdown]
    } else {
        &[Answer::Json, Answer::Text]
    };
    let media = negotiate_among(accept.0.as_ref(), offers);
    let worker = state.clone();
    run_cpu(&state, body.len(), move || {
        respond::<D>(&worker, &body, media)
    })
    .await?
}

/// The server's settings a decision may read.
fn defaults(state: &AppState) -> Defaults {
    Defaults {
        debt_cap: state.settings().debt_cap,
    }
}

// Not inlined: one call per request, and `scripts/bench_http.py profile` finds it by name.
#[inline(never)]
fn respond<D: Decision>(state: &AppState, body: &[u8], media: Answer) -> Result<Response, Problem> {
    let request = D::parse(body)?;
    let decision = D::decide(&request, &defaults(state));
    let decision_id = new_decision_id();
    with_request_id(|request_id| {
        log_decision_of(D::ENDPOINT, request_id, &decision_id, &request, &decision);
    });
    state
        .metrics()
        .record_decision(D::ENDPOINT, decision.label());
    let status = status_for_exit(decision.exit_code());
    let answer = decision.answer(&request, decision_id);
    let mut res = match media {
        Answer::Text => bytes_response(status, D::line(&answer).into_bytes(), TEXT_PLAIN),
        Answer::Markdown => {
            bytes_response(status, D::markdown(&answer).into_bytes(), TEXT_MARKDOWN)
        }
        Answer::Json => bytes_response(status, D::json(&answer), "application/json"),
    };
    if let Some(seconds) = decision.retry_after() {
        res.headers_mut()
            .insert(header::RETRY_AFTER, HeaderValue::from(seconds));
    }
    Ok(res)
}

/// An answer of `content_type` with `status`, built directly (no type set first to replace).
pub fn bytes_response(status: StatusCode, body: Vec<u8>, content_type: &'static str) -> Response {
    let mut res = Response::new(axum::body::Body::from(body));
    *res.status_mut() = status;
    res.headers_mut()
        .insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    res
}
