//! The one middleware every request passes through: request id (accepted or generated,
//! echoed, and in the request's log span), metrics, security headers, and problem+json for
//! the bare error responses that routing and the tower layers produce.

use std::time::Instant;

use axum::extract::{MatchedPath, Request, State};
use axum::http::{HeaderName, HeaderValue, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use tracing::Instrument;

use super::AppState;
use super::error::problem_for_bare_status;

pub static REQUEST_ID: HeaderName = HeaderName::from_static("x-request-id");

/// A client's request id is kept when it is short printable ASCII; otherwise a new one is made.
fn request_id(req: &Request) -> HeaderValue {
    if let Some(v) = req.headers().get(&REQUEST_ID) {
        let b = v.as_bytes();
        if !b.is_empty() && b.len() <= 128 && b.iter().all(|c| c.is_ascii_graphic()) {
            return v.clone();
        }
    }
    HeaderValue::from_str(&uuid::Uuid::now_v7().to_string())
        .unwrap_or(HeaderValue::from_static("invalid"))
}

pub async fn observe(State(state): State<AppState>, req: Request, next: Next) -> Response {
    let started = Instant::now();
    let id = request_id(&req);
    let route = req
        .extensions()
        .get::<MatchedPath>()
        .map(|p| p.as_str().to_owned())
        .unwrap_or_else(|| "unmatched".to_owned());
    let method = req.method().clone();
    let path = req.uri().path().to_owned();
    let span = tracing::info_span!("request", request_id = id.to_str().unwrap_or(""));

    state.metrics().request_started();
    let mut res = next.run(req).instrument(span).await;

    let status = res.status();
    if status.as_u16() >= 400 && !res.headers().contains_key(header::CONTENT_TYPE) {
        let mut problem = problem_for_bare_status(status, &path).into_response();
        // Keep what the layer said in its headers (Allow on a 405, Retry-After...).
        for (name, value) in res.headers() {
            problem
                .headers_mut()
                .entry(name)
                .or_insert_with(|| value.clone());
        }
        res = problem;
    }
    let headers = res.headers_mut();
    headers.insert(REQUEST_ID.clone(), id);
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    state.metrics().request_finished(
        &route,
        method.as_str(),
        status.as_u16(),
        started.elapsed().as_secs_f64(),
    );
    res
}
