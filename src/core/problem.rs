//! RFC 9457 problem documents: the one error shape of every endpoint and of the CLI's
//! `--json` errors. Pure data here; the HTTP edge turns it into a response.

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

/// One invalid field, located by a JSON Pointer (RFC 6901) into the request body.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct FieldError {
    /// JSON Pointer to the offending value; `""` is the whole document.
    pub pointer: String,
    /// What is wrong with it, in words.
    pub detail: String,
}

impl FieldError {
    pub fn new(pointer: impl Into<String>, detail: impl Into<String>) -> Self {
        Self {
            pointer: pointer.into(),
            detail: detail.into(),
        }
    }
}

/// An RFC 9457 problem document (`application/problem+json`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct Problem {
    /// A URI naming the kind of problem (`urn:patchgate:problem:<slug>`).
    #[serde(rename = "type")]
    pub kind: String,
    /// A short summary of the kind of problem (the status's reason phrase).
    pub title: String,
    /// The HTTP status this problem is answered with.
    pub status: u16,
    /// What went wrong with this request, in words.
    pub detail: String,
    /// The invalid fields, when there are any.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub errors: Vec<FieldError>,
}

impl Problem {
    pub fn new(status: u16, slug: &str, detail: impl Into<String>) -> Self {
        Self {
            kind: format!("urn:patchgate:problem:{slug}"),
            title: reason_phrase(status).to_owned(),
            status,
            detail: detail.into(),
            errors: Vec::new(),
        }
    }

    /// 400: the body is not JSON at all (or not JSON we can read).
    pub fn malformed(detail: impl Into<String>) -> Self {
        Self::new(400, "malformed-body", detail)
    }

    /// 422: well-formed, but some fields are invalid. The detail repeats the first error so a
    /// client that only prints `detail` still names the field.
    pub fn invalid(errors: Vec<FieldError>) -> Self {
        let detail = match errors.as_slice() {
            [] => "the request is invalid".to_owned(),
            [only] => format!("{}: {}", display_pointer(&only.pointer), only.detail),
            [first, rest @ ..] => format!(
                "{}: {} (and {} more invalid field{})",
                display_pointer(&first.pointer),
                first.detail,
                rest.len(),
                if rest.len() == 1 { "" } else { "s" }
            ),
        };
        Self {
            errors,
            ..Self::new(422, "invalid-request", detail)
        }
    }
}

fn display_pointer(pointer: &str) -> &str {
    if pointer.is_empty() {
        "the document"
    } else {
        pointer
    }
}

/// The reason phrase for the statuses patchgate answers with.
pub fn reason_phrase(status: u16) -> &'static str {
    match status {
        200 => "OK",
        400 => "Bad Request",
        401 => "Unauthorized",
        404 => "Not Found",
        405 => "Method Not Allowed",
        406 => "Not Acceptable",
        408 => "Request Timeout",
        409 => "Conflict",
        413 => "Content Too Large",
        415 => "Unsupported Media Type",
        422 => "Unprocessable Content",
        423 => "Locked",
        424 => "Failed Dependency",
        429 => "Too Many Requests",
        500 => "Internal Server Error",
        503 => "Service Unavailable",
        504 => "Gateway Timeout",
        _ => "Error",
    }
}

/// Appends one object key to a JSON Pointer, escaping `~` and `/` as RFC 6901 says.
pub fn pointer_key(base: &str, key: &str) -> String {
    let mut out = String::with_capacity(base.len() + key.len() + 1);
    out.push_str(base);
    out.push('/');
    for c in key.chars() {
        match c {
            '~' => out.push_str("~0"),
            '/' => out.push_str("~1"),
            c => out.push(c),
        }
    }
    out
}

/// Appends one array index to a JSON Pointer.
pub fn pointer_index(base: &str, index: usize) -> String {
    format!("{base}/{index}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pointers_escape_as_rfc_6901_says() {
        assert_eq!(pointer_key("", "a/b~c"), "/a~1b~0c");
        assert_eq!(pointer_index("/frozen_tests", 3), "/frozen_tests/3");
    }

    #[test]
    fn invalid_names_the_first_field_in_its_detail() {
        let p = Problem::invalid(vec![
            FieldError::new("/property_check", "bad"),
            FieldError::new("/fixture_check", "bad"),
        ]);
        assert_eq!(p.status, 422);
        assert_eq!(p.detail, "/property_check: bad (and 1 more invalid field)");
    }
}
