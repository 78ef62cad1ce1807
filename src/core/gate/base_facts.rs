//! The facts of the comparison with the base (issue 66; CONTRACT.md 16.3): each recorded
//! call and its neighbours as the base's and the patch's plain programs answered them, and
//! their strict reader. The rule that decides from them is in `against_base.rs`.

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::call_result::CallResult;

crate::core::words! {
    "kebab-case";
    /// What the base's and the patch's plain programs answered to a recorded call.
    pub enum BaseState {
        /// The same result, on both versions, twice each.
        Agrees,
        /// A result each version gives twice, and not the same one.
        Differs,
        /// A result missing, or not given twice alike: never a difference.
        Uncompared,
    }
}

/// One input on which the patch answers otherwise than the base.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct Difference {
    /// The neighbour: which argument, varied how (`items as a tuple`, `n of length 8193`);
    /// absent: the recorded call itself.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false, max_length = 200)]
    pub input: Option<String>,
    /// The varied argument as written down (a neighbour), or the call's arguments.
    #[schema(max_length = 200)]
    pub arguments: String,
    pub base: CallResult,
    pub patch: CallResult,
}

/// A recorded call and its neighbours, made on the base and on the patch.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct AgainstBase {
    /// The call's index in `calls`.
    #[schema(minimum = 0, maximum = 199)]
    pub call: u32,
    /// The recorded call itself.
    pub recorded: BaseState,
    /// How many of its neighbours were compared (both versions answered each twice alike).
    #[schema(minimum = 0, maximum = 4294967295_u64)]
    pub neighbours: u32,
    /// How many of those the patch answers otherwise than the base.
    #[schema(minimum = 0, maximum = 4294967295_u64)]
    pub differing: u32,
    /// The first differences (at most 4): the recorded call's first, when it differs.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schema(max_items = 4)]
    pub differences: Vec<Difference>,
}

/// Most differences one row lists.
pub const MAX_DIFFERENCES: usize = 4;
/// The fields of a row against the base.
pub const AGAINST_BASE_FIELDS: [&str; 5] =
    ["call", "recorded", "neighbours", "differing", "differences"];
/// The fields of a difference.
pub const DIFFERENCE_FIELDS: [&str; 4] = ["input", "arguments", "base", "patch"];

/// Reads `against_base` strictly (every field named, every bound held).
pub(super) fn parse_against_base(
    list: &serde_json::Value,
    at: &str,
    calls: usize,
    e: &mut crate::core::fields::Errors,
) -> Option<Vec<AgainstBase>> {
    use crate::core::fields::{self, object};
    fields::array(list, at, "`against_base`", e, |x, p, e| {
        let r = object(x, &p, "a row against the base", &AGAINST_BASE_FIELDS, e)?;
        let call = r.required("call", e).and_then(|v| {
            let n = fields::uint(v, &r.pointer("call"), "call", u64::from(u32::MAX), e)?;
            match usize::try_from(n).ok().filter(|n| *n < calls) {
                Some(_) => u32::try_from(n).ok(),
                None => {
                    e.push(r.pointer("call"), "`call` is the index of one of `calls`");
                    None
                }
            }
        });
        let recorded = r.req_enum::<BaseState>("recorded", e);
        let count = |key: &str, e: &mut fields::Errors| {
            r.required(key, e)
                .and_then(|v| fields::uint(v, &r.pointer(key), key, u64::from(u32::MAX), e))
                .and_then(|n| u32::try_from(n).ok())
        };
        let neighbours = count("neighbours", e);
        let differing = count("differing", e);
        let differences = match r.listed("differences", MAX_DIFFERENCES, e)? {
            None => Vec::new(),
            Some(list) => fields::array(
                list,
                &r.pointer("differences"),
                "`differences`",
                e,
                |x, p, e| {
                    let d = object(x, &p, "a difference", &DIFFERENCE_FIELDS, e)?;
                    let input = d.opt_string("input", 200, e);
                    let input = match d.get("input") {
                        None => Some(None),
                        Some(_) => input.map(Some),
                    };
                    let arguments = d.required("arguments", e).and_then(|v| {
                        fields::string(v, &d.pointer("arguments"), "arguments", 200, e)
                    });
                    let base = d
                        .required("base", e)
                        .and_then(|v| super::call_result::parse_result(v, d.pointer("base"), e));
                    let patch = d
                        .required("patch", e)
                        .and_then(|v| super::call_result::parse_result(v, d.pointer("patch"), e));
                    Some(Difference {
                        input: input?,
                        arguments: arguments?,
                        base: base?,
                        patch: patch?,
                    })
                },
            )?,
        };
        let (neighbours, differing) = (neighbours?, differing?);
        if differing > neighbours {
            e.push(
                r.pointer("differing"),
                "`differing` is at most `neighbours`",
            );
            return None;
        }
        Some(AgainstBase {
            call: call?,
            recorded: recorded?,
            neighbours,
            differing,
            differences,
        })
    })
}
