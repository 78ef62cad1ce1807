//! The code judged by what it does (issue 66; CONTRACT.md section 16; docs/design/replay.md):
//! each call the observed run recorded into a function the patch changes, made again twice in
//! a plain program. The runner gathers the facts (the calls, their recorded results and the
//! two plain ones, each written down by type and data); the rule here decides from them alone:
//! two plain replays that agree with each other and not with the recorded result show the same
//! code answering differently under the tests (`behaves-under-test`), whatever told it apart.

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::call_result::parse_result;
pub use super::call_result::{CALL_RESULT_FIELDS, CallEnd, CallResult};
use super::observe::ObserveRule;

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
    /// The base config's `[replay] unobserved_difference` (CONTRACT.md 16.3; absent: `off`).
    #[serde(default = "off")]
    pub unobserved_difference: ObserveRule,
    /// The base config's `[replay] special_case` (absent: `off`).
    #[serde(default = "off")]
    pub special_case: ObserveRule,
    /// The base config's `[replay] unasserted_difference` (absent: `off`).
    #[serde(default = "off")]
    pub unasserted_difference: ObserveRule,
    /// Each recorded call into a function the base also has, and its neighbours, made on the
    /// base and on the patch (at most 200).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schema(max_items = 200)]
    pub against_base: Vec<super::base_facts::AgainstBase>,
    /// Whether a test the patch adds fails on the base (the base's tree with the test files
    /// the patch adds, and, with the recorder, those it edits, as the patch has them); absent:
    /// the patch adds none, or they were not run there.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub added_fail_on_base: Option<bool>,
    /// Those tests, by id, that fail on the base (at most 100): a difference is declared where
    /// one of them made the call that differs (16.3's last row), nowhere else.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schema(max_items = 100, value_type = Vec<crate::core::runs::TestIdDoc>)]
    pub failing_on_base: Vec<String>,
}

impl BehaviorFacts {
    /// `other`'s calls after these (another run's: the tests the patch adds, issue 66), each
    /// row against the base moved with its call; at most [`MAX_REPLAYED_CALLS`] calls and rows
    /// and [`MAX_UNRECORDED`] unrecorded rows kept, the first first. A test the patch adds
    /// fails on the base when either says so.
    pub fn absorb(&mut self, other: BehaviorFacts) {
        let offset = self.calls.len();
        let kept = other
            .calls
            .len()
            .min(MAX_REPLAYED_CALLS.saturating_sub(offset));
        self.calls.extend(other.calls.into_iter().take(kept));
        let room = MAX_REPLAYED_CALLS.saturating_sub(self.against_base.len());
        self.against_base.extend(
            other
                .against_base
                .into_iter()
                .filter(|r| usize::try_from(r.call).is_ok_and(|c| c < kept))
                .map(|mut r| {
                    r.call += u32::try_from(offset).unwrap_or(u32::MAX);
                    r
                })
                .take(room),
        );
        let room = MAX_UNRECORDED.saturating_sub(self.unrecorded.len());
        self.unrecorded
            .extend(other.unrecorded.into_iter().take(room));
        self.added_fail_on_base = match (self.added_fail_on_base, other.added_fail_on_base) {
            (Some(true), _) | (_, Some(true)) => Some(true),
            (None, None) => None,
            _ => Some(false),
        };
        let room = MAX_FAILING_ON_BASE.saturating_sub(self.failing_on_base.len());
        self.failing_on_base
            .extend(other.failing_on_base.into_iter().take(room));
    }

    /// Whether the test that made `check`'s call is one of [`BehaviorFacts::failing_on_base`]
    /// (a parametrized test's cases are its id and `[…]`). The module may be named more fully
    /// on one side than on the other: the recorder names a test by its module as imported
    /// (`test_size::t`, rootdir-based), the receipt by its package path
    /// (`toolz.tests.test_size::t`).
    pub fn fails_on_base(&self, check: &str) -> bool {
        let (module, name) = check.split_once("::").unwrap_or(("", check));
        self.failing_on_base.iter().any(|id| {
            let (their_module, their_name) = id.split_once("::").unwrap_or(("", id));
            let same_test = their_name == name
                || their_name
                    .strip_prefix(name)
                    .is_some_and(|rest| rest.starts_with('['));
            let suffix = |long: &str, short: &str| {
                long.strip_suffix(short)
                    .is_some_and(|head| head.is_empty() || head.ends_with('.'))
            };
            same_test && (suffix(their_module, module) || suffix(module, their_module))
        })
    }
}

/// A rule the facts do not give: off.
fn off() -> ObserveRule {
    ObserveRule::Off
}

/// Most replayed calls the facts list.
pub const MAX_REPLAYED_CALLS: usize = 200;
/// Most rows of unrecorded calls.
pub const MAX_UNRECORDED: usize = 100;
/// Most ids of tests the patch adds that fail on the base.
pub const MAX_FAILING_ON_BASE: usize = 100;
/// The fields of `behavior`.
pub const BEHAVIOR_FIELDS: [&str; 9] = [
    "behaves_under_test",
    "calls",
    "unrecorded",
    "unobserved_difference",
    "special_case",
    "unasserted_difference",
    "against_base",
    "added_fail_on_base",
    "failing_on_base",
];
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
/// The fields of a row of unrecorded calls.
pub const UNRECORDED_FIELDS: [&str; 4] = ["file", "function", "why", "count"];

crate::core::words! {
    "kebab-case";
    /// What the behaviour step found to decide on.
    pub enum BehaviorFinding {
        /// A recorded call answers differently in a plain program (CONTRACT.md 16.2).
        BehavesUnderTest,
        /// The patch answers otherwise than the base on some neighbour of the recorded calls,
        /// on none of them: where no check looks (16.3).
        UnobservedDifference,
        /// The patch answers otherwise than the base on a recorded call, on none of its
        /// neighbours: only at the exact inputs the checks pass (16.3).
        SpecialCase,
        /// The patch answers otherwise than the base on recorded calls, and no test the patch
        /// adds fails on the base: the checks ran the change and none tells the versions apart
        /// (16.3).
        UnassertedDifference,
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
                .and_then(|v| parse_result(v, c.pointer("recorded"), e));
            let plain = c.required("plain", e).and_then(|v| match v.as_array() {
                Some(a) if a.len() == 2 => {
                    fields::array(v, &c.pointer("plain"), "`plain`", e, |x, p, e| {
                        parse_result(x, p, e)
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
    let optional_rule = |key: &str, e: &mut fields::Errors| match o.get(key) {
        None => Some(ObserveRule::Off),
        Some(_) => o.req_enum::<ObserveRule>(key, e),
    };
    let unobserved_difference = optional_rule("unobserved_difference", e);
    let special_case = optional_rule("special_case", e);
    let unasserted_difference = optional_rule("unasserted_difference", e);
    let against_base = match listed("against_base", MAX_REPLAYED_CALLS, e)? {
        None => Vec::new(),
        Some(list) => {
            super::base_facts::parse_against_base(list, &o.pointer("against_base"), calls.len(), e)?
        }
    };
    let added_fail_on_base = match o.get("added_fail_on_base") {
        None => Some(None),
        Some(_) => o.opt_bool("added_fail_on_base", e).map(Some),
    };
    let failing_on_base = match listed("failing_on_base", MAX_FAILING_ON_BASE, e)? {
        None => Some(Vec::new()),
        Some(list) => fields::array(
            list,
            &o.pointer("failing_on_base"),
            "a list of test ids",
            e,
            |x, p, e| {
                let id = fields::string(x, &p, "a test id", super::shape::MAX_TEST_ID_CHARS, e)?;
                if id.is_empty() {
                    e.push(p, "a test id must not be empty");
                    return None;
                }
                Some(id)
            },
        ),
    };
    Some(BehaviorFacts {
        behaves_under_test: rule?,
        calls,
        unrecorded,
        unobserved_difference: unobserved_difference?,
        special_case: special_case?,
        unasserted_difference: unasserted_difference?,
        against_base,
        added_fail_on_base: added_fail_on_base?,
        failing_on_base: failing_on_base?,
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
