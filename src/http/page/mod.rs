//! `GET /`: one small page for the people who open the server's URL — what patchgate decides
//! and how to call it, the ladder and its 64 rows (from `/route/table`), a form that decides an
//! evidence document, the gate's rules (from `/gate/rules`), the review of a decision log, a
//! ladder ledger or calibration rows drawn as charts (from `/review`, `/ladder/report`,
//! `/calibrate`), and links. No external assets: the
//! HTML, its script and its stylesheet are compiled into the binary and served from this
//! origin, under a CSP that allows nothing else (no inline script, no inline style).

use axum::http::{HeaderName, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};

const INDEX: &str = include_str!("index.html");
const SCRIPT: &str = include_str!("page.js");
const STYLE: &str = include_str!("page.css");
const ICON: &str = include_str!("icon.svg");

/// Everything from this origin's files, nothing inline, nothing elsewhere.
pub const PAGE_CSP: &str = "default-src 'none'; script-src 'self'; style-src 'self'; \
connect-src 'self'; img-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

fn asset(body: &'static str, content_type: &'static str) -> Response {
    let mut res = (StatusCode::OK, body).into_response();
    let h = res.headers_mut();
    h.insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    h.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(PAGE_CSP),
    );
    h.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    h.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    h.insert(
        HeaderName::from_static("cross-origin-opener-policy"),
        HeaderValue::from_static("same-origin"),
    );
    res
}

/// The page for people: what patchgate decides and how to call it, the tables, a form.
#[utoipa::path(get, path = "/", tag = "operations",
    responses((status = 200, description = "The HTML page", body = String, content_type = "text/html")))]
pub async fn index() -> Response {
    asset(INDEX, "text/html; charset=utf-8")
}

/// The page's script.
#[utoipa::path(get, path = "/page.js", tag = "operations",
    responses((status = 200, description = "The page's script", body = String, content_type = "text/javascript")))]
pub async fn script() -> Response {
    asset(SCRIPT, "text/javascript; charset=utf-8")
}

/// The page's stylesheet.
#[utoipa::path(get, path = "/page.css", tag = "operations",
    responses((status = 200, description = "The page's stylesheet", body = String, content_type = "text/css")))]
pub async fn style() -> Response {
    asset(STYLE, "text/css; charset=utf-8")
}

/// The page's icon (so a browser does not ask for a `/favicon.ico` there is none of).
#[utoipa::path(get, path = "/icon.svg", tag = "operations",
    responses((status = 200, description = "The page's icon", body = String, content_type = "image/svg+xml")))]
pub async fn icon() -> Response {
    asset(ICON, "image/svg+xml")
}
