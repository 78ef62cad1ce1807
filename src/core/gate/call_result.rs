//! A call's result as the replays write it down (issue 66; CONTRACT.md 16.2, 16.3): how it
//! ended, the text shown, the digest compared; and its strict reader.

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

crate::core::words! {
    "kebab-case";
    /// How a call ended.
    pub enum CallEnd {
        /// It returned (a generator: what its caller consumed of it, and how it ended).
        Returned,
        /// It raised (`digest` is of the exception's qualified type name).
        Raised,
        /// The plain program never wrote its result: it did not return (it hung, or ended the
        /// process).
        DidNotReturn,
        /// It was not made, or its result cannot be written down (`shown` says why): never a
        /// difference.
        Unreplayed,
    }
}

/// One result of a call, recorded or replayed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CallResult {
    pub end: CallEnd,
    /// The result as written down (type and data, never its own `repr`), or what it raised, or
    /// why it was not replayed; at most 200 characters.
    #[schema(max_length = 200)]
    pub shown: String,
    /// SHA-256 of the whole text written down (with `returned` and `raised`): what is compared.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false, pattern = "^[0-9a-f]{64}$")]
    pub digest: Option<String>,
}

impl CallResult {
    /// The same result: the same end and the same digest (never a missing or unreplayed one).
    pub(super) fn same(&self, other: &CallResult) -> bool {
        self.end == other.end && self.digest == other.digest
    }
}

/// The fields of a call's result.
pub const CALL_RESULT_FIELDS: [&str; 3] = ["end", "shown", "digest"];
/// Reads a call's result strictly.
pub(super) fn parse_result(
    v: &serde_json::Value,
    p: String,
    e: &mut crate::core::fields::Errors,
) -> Option<CallResult> {
    use crate::core::fields::{self, object};
    let r = object(v, &p, "a call's result", &CALL_RESULT_FIELDS, e)?;
    let end = r.req_enum::<CallEnd>("end", e);
    let shown = r
        .required("shown", e)
        .and_then(|v| fields::string(v, &r.pointer("shown"), "shown", 200, e));
    let digest = match r.get("digest") {
        None => Some(None),
        Some(v) => match v.as_str() {
            Some(s)
                if s.len() == 64
                    && s.bytes()
                        .all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase()) =>
            {
                Some(Some(s.to_owned()))
            }
            _ => {
                e.push(r.pointer("digest"), "`digest` is 64 lowercase hex digits");
                None
            }
        },
    };
    Some(CallResult {
        end: end?,
        shown: shown?,
        digest: digest?,
    })
}
