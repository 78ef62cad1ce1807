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

/// Most field errors one problem document lists; past it the document says `truncated` and
/// how many it found, and the parsers of row bodies stop reading.
pub const MAX_ERRORS: usize = 100;

/// Longest pointer or detail one field error keeps, in bytes: a detail may quote what was
/// sent, and what was sent may be megabytes long.
pub const MAX_ERROR_TEXT: usize = 512;

impl FieldError {
    pub fn new(pointer: impl Into<String>, detail: impl Into<String>) -> Self {
        Self {
            pointer: clip(pointer.into()),
            detail: clip(detail.into()),
        }
    }
}

/// A value as a detail quotes it: JSON-quoted, and cut to its first 100 characters (with `…`)
/// so the detail's own words are never the part that is clipped.
pub fn quoted(value: &str) -> String {
    match value.char_indices().nth(100) {
        None => serde_json::to_string(value).unwrap_or_default(),
        Some((end, _)) => {
            let head =
                serde_json::to_string(value.get(..end).unwrap_or_default()).unwrap_or_default();
            format!("{}…\"", head.strip_suffix('"').unwrap_or(&head))
        }
    }
}

/// `text` cut to at most [`MAX_ERROR_TEXT`] bytes (on a character boundary), with `…` added
/// where it was cut.
fn clip(mut text: String) -> String {
    if text.len() > MAX_ERROR_TEXT {
        let mut end = MAX_ERROR_TEXT - '…'.len_utf8();
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        text.truncate(end);
        text.push('…');
    }
    text
}

/// The field errors of one document, as they are found: the first [`MAX_ERRORS`] are kept,
/// the rest only counted, so a hostile document's error list costs a bounded amount of memory
/// and reply however many bad fields it holds.
#[derive(Debug, Default)]
pub struct Errors {
    kept: Vec<FieldError>,
    total: usize,
}

impl Errors {
    pub fn push(&mut self, pointer: impl Into<String>, detail: impl Into<String>) {
        self.total += 1;
        if self.kept.len() < MAX_ERRORS {
            self.kept.push(FieldError::new(pointer, detail));
        }
    }

    /// Records an error already built.
    pub fn add(&mut self, error: FieldError) {
        self.total += 1;
        if self.kept.len() < MAX_ERRORS {
            self.kept.push(error);
        }
    }

    pub fn is_empty(&self) -> bool {
        self.total == 0
    }

    /// Whether the list is full: a reader of many rows stops here, the answer is decided.
    pub fn is_full(&self) -> bool {
        self.total > MAX_ERRORS
    }

    /// How many errors were found.
    pub fn total(&self) -> usize {
        self.total
    }

    /// The errors kept, to amend in place (a line number added to each detail).
    pub fn kept_mut(&mut self) -> &mut [FieldError] {
        &mut self.kept
    }

    /// The kept errors and the count found.
    pub fn into_parts(self) -> (Vec<FieldError>, usize) {
        (self.kept, self.total)
    }
}

impl<'a> IntoIterator for &'a Errors {
    type Item = &'a FieldError;
    type IntoIter = std::slice::Iter<'a, FieldError>;

    fn into_iter(self) -> Self::IntoIter {
        self.kept.iter()
    }
}

impl From<Vec<FieldError>> for Errors {
    fn from(list: Vec<FieldError>) -> Self {
        let mut errors = Errors::default();
        for e in list {
            errors.add(e);
        }
        errors
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
    /// The invalid fields, when there are any (at most 100).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub errors: Vec<FieldError>,
    /// Set when more fields were invalid than `errors` lists.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub truncated: bool,
    /// With `truncated`: how many invalid fields were found before reading stopped. A reader of
    /// rows or list items stops soon after the first 100, so this is a lower bound there.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub total_errors: Option<usize>,
}

impl Problem {
    pub fn new(status: u16, slug: &str, detail: impl Into<String>) -> Self {
        Self {
            kind: format!("urn:patchgate:problem:{slug}"),
            title: reason_phrase(status).to_owned(),
            status,
            detail: detail.into(),
            errors: Vec::new(),
            truncated: false,
            total_errors: None,
        }
    }

    /// 400: the body is not JSON at all (or not JSON we can read).
    pub fn malformed(detail: impl Into<String>) -> Self {
        Self::new(400, "malformed-body", detail)
    }

    /// 422: well-formed, but some fields are invalid. The detail repeats the first error so a
    /// client that only prints `detail` still names the field. At most [`MAX_ERRORS`] are
    /// listed; past that, `truncated` and `total_errors` say so.
    pub fn invalid(errors: impl Into<Errors>) -> Self {
        let (errors, total) = errors.into().into_parts();
        let total = total.max(errors.len());
        let more = total.saturating_sub(1);
        let detail = match errors.first() {
            None => "the request is invalid".to_owned(),
            Some(first) if more == 0 => {
                format!("{}: {}", display_pointer(&first.pointer), first.detail)
            }
            Some(first) => format!(
                "{}: {} (and {more}{} more invalid field{})",
                display_pointer(&first.pointer),
                first.detail,
                if total > errors.len() { " or" } else { "" },
                if more == 1 { "" } else { "s" }
            ),
        };
        let truncated = total > errors.len();
        Self {
            errors,
            truncated,
            total_errors: truncated.then_some(total),
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
        assert!(!p.truncated);
        assert_eq!(p.total_errors, None);
    }

    #[test]
    fn errors_past_the_cap_are_counted_not_kept() {
        let mut e = Errors::default();
        for i in 0..MAX_ERRORS * 3 {
            e.push(pointer_index("/items", i), "x".repeat(MAX_ERROR_TEXT * 4));
        }
        assert!(e.is_full());
        let p = Problem::invalid(e);
        assert_eq!(p.errors.len(), MAX_ERRORS);
        assert!(p.truncated);
        assert_eq!(p.total_errors, Some(MAX_ERRORS * 3));
        assert!(p.errors.iter().all(|f| f.detail.len() <= MAX_ERROR_TEXT));
        let body = serde_json::to_string(&p).unwrap_or_default();
        assert!(
            body.contains(r#""truncated":true,"total_errors":300"#),
            "{body}"
        );
        assert!(body.len() < 64 * 1024, "{}", body.len());
    }
}
