//! problem+json at the edge: [`Problem`] as a response, the 404 fallback, and the panic answer.

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};

use crate::core::problem::Problem;

pub const PROBLEM_JSON: &str = "application/problem+json";

/// Renders a problem document with its status and media type.
pub fn problem_response(problem: &Problem) -> Response {
    let status = StatusCode::from_u16(problem.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    let body = serde_json::to_vec(problem).unwrap_or_default();
    let mut res = (status, body).into_response();
    res.headers_mut()
        .insert(header::CONTENT_TYPE, HeaderValue::from_static(PROBLEM_JSON));
    res
}

impl IntoResponse for Problem {
    fn into_response(self) -> Response {
        problem_response(&self)
    }
}

pub async fn not_found(uri: axum::http::Uri) -> Problem {
    Problem::new(
        404,
        "not-found",
        format!("no such endpoint: {}", uri.path()),
    )
}

/// The answer to a caught panic: a 500 with no internal detail (the cause is logged with the
/// request id by the observing layer).
pub fn panic_problem() -> Response {
    problem_response(&Problem::new(
        500,
        "internal",
        "an internal error occurred; the server log has the cause under this request's x-request-id",
    ))
}

/// The problem for a bare error response that a layer or axum produced without a body
/// (405 from routing, 503 from the timeout...): same status, our shape.
pub fn problem_for_bare_status(status: StatusCode) -> Problem {
    let code = status.as_u16();
    match code {
        405 => Problem::new(
            405,
            "method-not-allowed",
            "this endpoint does not accept this method; see the Allow header",
        ),
        408 => Problem::new(
            408,
            "request-timeout",
            "the request took too long to arrive",
        ),
        413 => Problem::new(
            413,
            "body-too-large",
            "the body is larger than this endpoint accepts",
        ),
        503 => Problem::new(
            503,
            "unavailable",
            "the server could not answer in time; retry later",
        ),
        _ if code >= 500 => Problem::new(code, "internal", "an internal error occurred"),
        _ => Problem::new(code, "error", "the request failed"),
    }
}

/// The problem answers of every endpoint that reads a JSON decision body: 400, 408, 413, 415
/// and 422, each an RFC 9457 document. Declared once, listed in each operation's `responses`.
pub struct DecisionProblems;

impl utoipa::IntoResponses for DecisionProblems {
    fn responses() -> Responses {
        problems(&[
            ("400", "Malformed JSON or empty body"),
            ("408", "The body did not arrive in time"),
            ("413", "Body over the limit"),
            ("415", "Not application/json"),
            ("422", "Well-formed but invalid; `errors` names each field"),
        ])
    }
}

/// The problem answers of an endpoint that reads a JSON body and answers 200 whatever it
/// decides (the ladder's plan, freeze eligibility): 400, 413 and 415; its 422 is its own.
pub struct JsonBodyProblems;

impl utoipa::IntoResponses for JsonBodyProblems {
    fn responses() -> Responses {
        problems(&[
            ("400", "Malformed JSON"),
            ("413", "Body over the limit"),
            ("415", "Not application/json"),
        ])
    }
}

type Responses =
    std::collections::BTreeMap<String, utoipa::openapi::RefOr<utoipa::openapi::response::Response>>;

/// Problem answers, each an RFC 9457 document, by status.
fn problems(list: &[(&str, &str)]) -> Responses {
    use utoipa::openapi::{ContentBuilder, Ref, ResponseBuilder};
    list.iter()
        .map(|(status, description)| {
            let content = ContentBuilder::new()
                .schema(Some(Ref::from_schema_name("Problem")))
                .build();
            let response = ResponseBuilder::new()
                .description(*description)
                .content("application/problem+json", content)
                .build();
            ((*status).to_owned(), response.into())
        })
        .collect()
}
