//! The code judged by what it does (issue 66; CONTRACT.md section 16; docs/design/replay.md):
//! each call the observed run recorded into a function the patch changes, made again twice in
//! a plain program. The runner gathers the facts (the calls, their recorded results and the
//! two plain ones, each written down by type and data); the rule here decides from them alone:
//! two plain replays that agree with each other and not with the recorded result show the same
//! code answering differently under the tests (`behaves-under-test`), whatever told it apart.

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::observe::ObserveRule;

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

crate::core::words! {
    "kebab-case";
    /// What the replays of one call show.
    pub enum CallState {
        /// The plain replays answer as the recorded call did.
        Agrees,
        /// The two plain replays agree with each other and not with the recorded result: the
        /// code answers differently under the tests.
        BehavesUnderTest,
        /// The two plain replays disagree with each other (time, randomness, identity): listed,
        /// never a difference.
        Nondeterministic,
        /// A result is missing or cannot be compared: listed, never a difference.
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
    fn same(&self, other: &CallResult) -> bool {
        self.end == other.end && self.digest == other.digest
    }
}

/// A recorded call into a changed function, and its two plain replays.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ReplayedCall {
    /// The function's qualified name in its module (`Class.method`).
    #[schema(min_length = 1, max_length = 512)]
    pub function: String,
    #[schema(min_length = 1, max_length = 4096)]
    pub file: String,
    /// The line of its `def`.
    #[schema(minimum = 1, maximum = 4294967295_u64)]
    pub line: u32,
    /// The check that made the call (a test id; `(import)`: none was under way).
    #[schema(max_length = 512)]
    pub check: String,
    /// The arguments as written down (at most 200 characters).
    #[schema(max_length = 200)]
    pub arguments: String,
    pub recorded: CallResult,
    /// The two plain replays, in order.
    #[schema(min_items = 2, max_items = 2)]
    pub plain: Vec<CallResult>,
}

impl ReplayedCall {
    /// Plain replay `n`'s result as shown (`""` when there is none).
    pub fn plain_shown(&self, n: usize) -> &str {
        self.plain.get(n).map_or("", |r| r.shown.as_str())
    }

    /// What its replays show (CONTRACT.md 16.2).
    pub fn state(&self) -> CallState {
        let unreplayed = |r: &CallResult| r.end == CallEnd::Unreplayed;
        match self.plain.as_slice() {
            [a, b] if !unreplayed(&self.recorded) && !unreplayed(a) && !unreplayed(b) => {
                if !a.same(b) {
                    CallState::Nondeterministic
                } else if !a.same(&self.recorded) {
                    CallState::BehavesUnderTest
                } else {
                    CallState::Agrees
                }
            }
            _ => CallState::Unreplayed,
        }
    }
}

/// Calls into a changed function that could not be recorded, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct UnrecordedCalls {
    #[schema(min_length = 1, max_length = 4096)]
    pub file: String,
    #[schema(min_length = 1, max_length = 512)]
    pub function: String,
    #[schema(max_length = 200)]
    pub why: String,
    #[schema(minimum = 1, maximum = 4294967295_u64)]
    pub count: u32,
}

/// The changed code's recorded calls replayed in a plain program (issue 66). Absent: `[replay]`
/// is off, or the suite's first run was not observed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(as = BehaviorDoc)]
pub struct BehaviorFacts {
    /// The base config's `[replay] behaves_under_test`: `required` makes a call that answers
    /// differently under the tests a failure of the suite (BLOCK `concrete-behavior`).
    pub behaves_under_test: ObserveRule,
    /// The recorded calls and their replays (at most 200).
    #[serde(default)]
    #[schema(max_items = 200)]
    pub calls: Vec<ReplayedCall>,
    /// The calls that could not be recorded, by function and why (at most 100).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schema(max_items = 100)]
    pub unrecorded: Vec<UnrecordedCalls>,
}

/// Most replayed calls the facts list.
pub const MAX_REPLAYED_CALLS: usize = 200;
/// Most rows of unrecorded calls.
pub const MAX_UNRECORDED: usize = 100;
/// The fields of `behavior`.
pub const BEHAVIOR_FIELDS: [&str; 3] = ["behaves_under_test", "calls", "unrecorded"];
/// The fields of a replayed call.
pub const REPLAYED_CALL_FIELDS: [&str; 7] = [
    "function",
    "file",
    "line",
    "check",
    "arguments",
    "recorded",
    "plain",
];
/// The fields of a call's result.
pub const CALL_RESULT_FIELDS: [&str; 3] = ["end", "shown", "digest"];
/// The fields of a row of unrecorded calls.
pub const UNRECORDED_FIELDS: [&str; 4] = ["file", "function", "why", "count"];

crate::core::words! {
    "kebab-case";
    /// What the behaviour step found to decide on.
    pub enum BehaviorFinding {
        /// A recorded call answers differently in a plain program (CONTRACT.md 16.2).
        BehavesUnderTest,
    }
}

/// Reads `behavior` strictly (every field named, every bound held).
pub(super) fn parse_behavior(
    v: &serde_json::Value,
    e: &mut crate::core::fields::Errors,
) -> Option<BehaviorFacts> {
    use crate::core::fields::{self, object};
    let o = object(v, "/behavior", "`behavior`", &BEHAVIOR_FIELDS, e)?;
    let rule = o.req_enum::<ObserveRule>("behaves_under_test", e);
    let listed = |key: &str, max: usize, e: &mut fields::Errors| o.listed(key, max, e);
    let line = |x: &fields::Obj<'_>, e: &mut fields::Errors| {
        let v = x.required("line", e)?;
        super::observe::line_number(v, &x.pointer("line"), e)
    };
    let result = |v: &serde_json::Value, p: String, e: &mut fields::Errors| {
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
    };
    let calls = match listed("calls", MAX_REPLAYED_CALLS, e)? {
        None => Vec::new(),
        Some(list) => fields::array(list, &o.pointer("calls"), "`calls`", e, |x, p, e| {
            let c = object(x, &p, "a replayed call", &REPLAYED_CALL_FIELDS, e)?;
            let function = c.req_string("function", 512, e);
            let file = c
                .required("file", e)
                .and_then(|v| fields::path(v, &c.pointer("file"), e));
            let line = line(&c, e);
            let check = c
                .required("check", e)
                .and_then(|v| fields::string(v, &c.pointer("check"), "check", 512, e));
            let arguments = c
                .required("arguments", e)
                .and_then(|v| fields::string(v, &c.pointer("arguments"), "arguments", 200, e));
            let recorded = c
                .required("recorded", e)
                .and_then(|v| result(v, c.pointer("recorded"), e));
            let plain = c.required("plain", e).and_then(|v| match v.as_array() {
                Some(a) if a.len() == 2 => {
                    fields::array(v, &c.pointer("plain"), "`plain`", e, |x, p, e| {
                        result(x, p, e)
                    })
                }
                _ => {
                    e.push(c.pointer("plain"), "`plain` lists the two plain replays");
                    None
                }
            });
            Some(ReplayedCall {
                function: function?,
                file: file?.as_str().to_owned(),
                line: line?,
                check: check?,
                arguments: arguments?,
                recorded: recorded?,
                plain: plain?,
            })
        })?,
    };
    let unrecorded = match listed("unrecorded", MAX_UNRECORDED, e)? {
        None => Vec::new(),
        Some(list) => fields::array(
            list,
            &o.pointer("unrecorded"),
            "`unrecorded`",
            e,
            |x, p, e| {
                let u = object(x, &p, "unrecorded calls", &UNRECORDED_FIELDS, e)?;
                let file = u
                    .required("file", e)
                    .and_then(|v| fields::path(v, &u.pointer("file"), e));
                let function = u.req_string("function", 512, e);
                let why = u
                    .required("why", e)
                    .and_then(|v| fields::string(v, &u.pointer("why"), "why", 200, e));
                let count = u.required("count", e).and_then(|v| {
                    fields::uint(v, &u.pointer("count"), "count", u64::from(u32::MAX), e)
                });
                match count? {
                    0 => {
                        e.push(u.pointer("count"), "`count` is at least 1");
                        None
                    }
                    n => Some(UnrecordedCalls {
                        file: file?.as_str().to_owned(),
                        function: function?,
                        why: why?,
                        count: u32::try_from(n).ok()?,
                    }),
                }
            },
        )?,
    };
    Some(BehaviorFacts {
        behaves_under_test: rule?,
        calls,
        unrecorded,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn result(end: CallEnd, digest: Option<&str>) -> CallResult {
        CallResult {
            end,
            shown: "x".to_owned(),
            digest: digest.map(str::to_owned),
        }
    }

    /// CONTRACT.md 16.2, written by hand: (recorded, plain 1, plain 2) → the state.
    #[test]
    fn a_call_differs_only_when_both_plain_replays_agree_against_the_recorded_one() {
        use CallEnd::{DidNotReturn, Raised, Returned, Unreplayed};
        let (a, b) = (Some("a"), Some("b"));
        let rows = [
            (
                (Returned, a),
                (Returned, a),
                (Returned, a),
                CallState::Agrees,
            ),
            (
                (Returned, a),
                (Returned, b),
                (Returned, b),
                CallState::BehavesUnderTest,
            ),
            (
                (Returned, a),
                (Raised, a),
                (Raised, a),
                CallState::BehavesUnderTest,
            ),
            (
                (Returned, a),
                (DidNotReturn, None),
                (DidNotReturn, None),
                CallState::BehavesUnderTest,
            ),
            (
                (Returned, a),
                (Returned, a),
                (Returned, b),
                CallState::Nondeterministic,
            ),
            (
                (Returned, a),
                (Returned, b),
                (Raised, b),
                CallState::Nondeterministic,
            ),
            ((Raised, a), (Raised, a), (Raised, a), CallState::Agrees),
            (
                (Unreplayed, None),
                (Returned, b),
                (Returned, b),
                CallState::Unreplayed,
            ),
            (
                (Returned, a),
                (Unreplayed, None),
                (Returned, b),
                CallState::Unreplayed,
            ),
        ];
        for (recorded, one, two, want) in rows {
            let call = ReplayedCall {
                function: "f".to_owned(),
                file: "m.py".to_owned(),
                line: 1,
                check: "t::a".to_owned(),
                arguments: "1".to_owned(),
                recorded: result(recorded.0, recorded.1),
                plain: vec![result(one.0, one.1), result(two.0, two.1)],
            };
            assert_eq!(call.state(), want, "{recorded:?} {one:?} {two:?}");
        }
    }
}
