//! The one layer every request passes through, written as a plain tower service (no boxing,
//! no per-request clone of the inner service): request id (accepted or generated, echoed, and
//! task-local for the handler's log lines), a caught panic turned into a bare 500 problem and
//! logged with the request id, metrics, security headers, and problem+json for the bare error
//! responses that routing and the tower layers produce.

use std::future::Future;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Instant;

use axum::extract::Request;
use axum::http::{HeaderName, HeaderValue, Method, header};
use axum::response::{IntoResponse, Response};
use std::sync::Arc;

use tokio::sync::OwnedSemaphorePermit;
use tokio::task::futures::TaskLocalFuture;
use tower::{Layer, Service};

use super::AppState;
use super::error::{panic_problem, problem_for_bare_status};

pub static REQUEST_ID_HEADER: HeaderName = HeaderName::from_static("x-request-id");

tokio::task_local! {
    /// The id of the request being handled, for the handler's log lines. A task-local rather
    /// than a request extension: setting it costs a pointer swap per poll, not an allocation.
    static REQUEST_ID: HeaderValue;
}

/// Runs `f` with the current request's id (`""` outside a request).
pub fn with_request_id(f: impl FnOnce(&str)) {
    let mut f = Some(f);
    let _ = REQUEST_ID.try_with(|id| {
        if let Some(f) = f.take() {
            f(id.to_str().unwrap_or(""));
        }
    });
    if let Some(f) = f {
        f("");
    }
}

/// The current request's id, to carry onto a blocking thread.
pub fn current_request_id() -> Option<HeaderValue> {
    REQUEST_ID.try_with(HeaderValue::clone).ok()
}

/// Runs `f` with `id` as the current request's id (on a thread outside the request's task).
pub fn with_request_id_set<T>(id: Option<HeaderValue>, f: impl FnOnce() -> T) -> T {
    match id {
        Some(id) => REQUEST_ID.sync_scope(id, f),
        None => f(),
    }
}

/// A client's request id is kept when it is short printable ASCII; otherwise a new one is made.
fn request_id(req: &Request) -> HeaderValue {
    if let Some(v) = req.headers().get(&REQUEST_ID_HEADER) {
        let b = v.as_bytes();
        if !b.is_empty() && b.len() <= 128 && b.iter().all(|c| c.is_ascii_graphic()) {
            return v.clone();
        }
    }
    let mut buf = [0u8; uuid::fmt::Hyphenated::LENGTH];
    HeaderValue::from_str(crate::ids::new_uuid_v7(&mut buf))
        .unwrap_or(HeaderValue::from_static("unidentified"))
}

/// Metric label for a method, without allocating.
fn method_label(m: &Method) -> &'static str {
    match *m {
        Method::GET => "GET",
        Method::POST => "POST",
        Method::PUT => "PUT",
        Method::DELETE => "DELETE",
        Method::HEAD => "HEAD",
        Method::OPTIONS => "OPTIONS",
        Method::PATCH => "PATCH",
        _ => "OTHER",
    }
}

#[derive(Clone)]
pub struct ObserveLayer {
    pub state: AppState,
}

impl<S> Layer<S> for ObserveLayer {
    type Service = Observe<S>;

    fn layer(&self, inner: S) -> Self::Service {
        Observe {
            inner,
            state: self.state.clone(),
        }
    }
}

#[derive(Clone)]
pub struct Observe<S> {
    inner: S,
    state: AppState,
}

/// What `finish` needs to know about the request once the response is ready.
struct Pending {
    state: AppState,
    started: Instant,
    id: HeaderValue,
    route: &'static str,
    method: &'static str,
}

impl<S> Service<Request> for Observe<S>
where
    S: Service<Request, Response = Response>,
{
    type Response = Response;
    type Error = S::Error;
    type Future = ObserveFuture<TaskLocalFuture<HeaderValue, S::Future>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, req: Request) -> Self::Future {
        let id = request_id(&req);
        let route = self.state.route_label(req.uri().path());
        let method = method_label(req.method());
        self.state.metrics().request_started();
        let scoped_id = id.clone();
        // Health, readiness, metrics and the API document stay open and are never shed.
        let open = self.state.is_open(route);
        let mut early = None;
        let mut permit = None;
        if !open {
            if let Some(expected) = &self.state.settings().token
                && !authorized(req.headers(), expected)
            {
                early = Some(unauthorized(
                    req.headers().contains_key(header::AUTHORIZATION),
                ));
            } else if route != "unmatched"
                && let Some(limit) = declared_over_limit(&req, &self.state)
            {
                // Refused before a byte of the body is read, and before hyper would answer
                // `Expect: 100-continue` (it does so only when the body is first read).
                early = Some(super::error::problem_response(
                    &crate::core::problem::Problem::new(
                        413,
                        "body-too-large",
                        format!(
                            "the declared Content-Length is over this endpoint's limit of {limit} bytes"
                        ),
                    ),
                ));
            } else if req.method() != Method::POST {
                // A request with a body takes its slot once the body has arrived (in the
                // handler), so a slow sender never holds one; the others take it here.
                match Arc::clone(self.state.permits()).try_acquire_owned() {
                    Ok(p) => permit = Some(p),
                    Err(_) => early = Some(overloaded()),
                }
            }
        }
        let pending = Pending {
            state: self.state.clone(),
            started: Instant::now(),
            id,
            route,
            method,
        };
        if let Some(res) = early {
            return ObserveFuture {
                inner: None,
                pending: Some(pending),
                early: Some(res),
                _permit: None,
            };
        }
        let inner = match catch_unwind(AssertUnwindSafe(|| {
            REQUEST_ID.scope(scoped_id, self.inner.call(req))
        })) {
            Ok(fut) => Some(fut),
            Err(payload) => {
                log_panic(&pending, payload.as_ref());
                None
            }
        };
        ObserveFuture {
            inner,
            pending: Some(pending),
            early: None,
            _permit: permit,
        }
    }
}

pin_project_lite::pin_project! {
    pub struct ObserveFuture<F> {
        #[pin]
        inner: Option<F>,
        pending: Option<Pending>,
        // An answer decided before the handler (401, 503).
        early: Option<Response>,
        // Held until the answer is ready: the concurrency limit's slot.
        _permit: Option<OwnedSemaphorePermit>,
    }
}

impl<F, E> Future for ObserveFuture<F>
where
    F: Future<Output = Result<Response, E>>,
{
    type Output = Result<Response, E>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let mut this = self.project();
        let res = if let Some(res) = this.early.take() {
            res
        } else {
            match this.inner.as_mut().as_pin_mut() {
                None => panic_problem(),
                Some(fut) => match catch_unwind(AssertUnwindSafe(|| fut.poll(cx))) {
                    Ok(Poll::Pending) => return Poll::Pending,
                    Ok(Poll::Ready(Err(e))) => return Poll::Ready(Err(e)),
                    Ok(Poll::Ready(Ok(res))) => res,
                    Err(payload) => {
                        if let Some(pending) = this.pending.as_ref() {
                            log_panic(pending, payload.as_ref());
                        }
                        this.inner.set(None);
                        panic_problem()
                    }
                },
            }
        };
        let Some(pending) = this.pending.take() else {
            return Poll::Ready(Ok(res));
        };
        Poll::Ready(Ok(finish(pending, res)))
    }
}

fn log_panic(pending: &Pending, payload: &(dyn std::any::Any + Send)) {
    let cause = payload
        .downcast_ref::<String>()
        .map(String::as_str)
        .or_else(|| payload.downcast_ref::<&str>().copied())
        .unwrap_or("non-string panic payload");
    tracing::error!(
        request_id = pending.id.to_str().unwrap_or(""),
        route = pending.route,
        panic = cause,
        "handler panicked"
    );
}

fn finish(pending: Pending, mut res: Response) -> Response {
    let status = res.status();
    if status.as_u16() >= 400 && !res.headers().contains_key(header::CONTENT_TYPE) {
        let mut problem = problem_for_bare_status(status).into_response();
        // Keep what the layer said in its headers (Allow on a 405, Retry-After...).
        // Not the framing, though: the body is new, and hyper frames it.
        for (name, value) in res.headers() {
            if name != header::CONTENT_LENGTH && name != header::TRANSFER_ENCODING {
                problem
                    .headers_mut()
                    .entry(name)
                    .or_insert_with(|| value.clone());
            }
        }
        res = problem;
    }
    let headers = res.headers_mut();
    if status == axum::http::StatusCode::SERVICE_UNAVAILABLE {
        headers
            .entry(header::RETRY_AFTER)
            .or_insert(HeaderValue::from_static("1"));
    }
    headers.insert(REQUEST_ID_HEADER.clone(), pending.id);
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    pending.state.metrics().request_finished(
        pending.route,
        pending.method,
        status.as_u16(),
        pending.started.elapsed().as_secs_f64(),
    );
    res
}

/// Whether the request carries the bearer token (compared as [`super::BearerToken::matches`]
/// says: in time that does not depend on the token).
fn authorized(headers: &axum::http::HeaderMap, expected: &super::BearerToken) -> bool {
    let Some(value) = headers.get(header::AUTHORIZATION) else {
        return false;
    };
    let value = value.as_bytes().trim_ascii();
    let Some(space) = value.iter().position(|&b| b == b' ') else {
        return false;
    };
    let (scheme, token) = value.split_at(space);
    scheme.eq_ignore_ascii_case(b"bearer") && expected.matches(token.trim_ascii())
}

fn unauthorized(token_given: bool) -> Response {
    let mut res = super::error::problem_response(&crate::core::problem::Problem::new(
        401,
        "unauthorized",
        if token_given {
            "the bearer token is not the right one"
        } else {
            "this endpoint needs `Authorization: Bearer <token>`"
        },
    ));
    let challenge = if token_given {
        r#"Bearer realm="patchgate", error="invalid_token""#
    } else {
        r#"Bearer realm="patchgate""#
    };
    res.headers_mut().insert(
        header::WWW_AUTHENTICATE,
        HeaderValue::from_static(challenge),
    );
    res
}

/// The 503 of load shedding (`Retry-After` is added to every 503 on the way out).
pub fn overloaded_problem() -> crate::core::problem::Problem {
    crate::core::problem::Problem::new(
        503,
        "overloaded",
        "the server is at its concurrency limit; retry shortly",
    )
}

fn overloaded() -> Response {
    super::error::problem_response(&overloaded_problem())
}

/// The endpoint's body limit, when the request declares a longer body than it.
fn declared_over_limit(req: &Request, state: &AppState) -> Option<u64> {
    let declared = req
        .headers()
        .get(header::CONTENT_LENGTH)?
        .to_str()
        .ok()?
        .trim()
        .parse::<u64>()
        .ok()?;
    let limit = super::body_limit(state.settings(), req.uri().path());
    (declared > limit).then_some(limit)
}
