//! Whether the checks saw *this* change (issue 52): which checks ran the patch's changed code
//! lines, and which branches it adds no check took. The runner gathers the facts (coverage of
//! one run of the suite, read like a receipt); the rule here decides from them alone.

use super::steps::plural;
use crate::core::route::Verdict;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

crate::core::words! {
    "kebab-case";
    /// What an observe rule does with what it finds (`[observe] changes`, `branches`).
    pub enum ObserveRule {
        /// Not looked at.
        Off,
        /// Listed in the answer and the report; never a verdict.
        Listed,
        /// What it finds makes `property_check` unknown: ESCALATE (a failure still BLOCKs).
        Required,
    }
}

crate::core::words! {
    "kebab-case";
    /// What the observe step found to escalate, when it did.
    pub enum Unobserved {
        /// No check ran any changed code line (or nothing could tell which did).
        Change,
        /// A branch leaving a line the patch adds was taken by no check.
        Branch,
    }
}

crate::core::words! {
    "kebab-case";
    /// How a patch mutant changes its line (issue 52): at most one per line, in this order of
    /// preference.
    pub enum MutantOperator {
        /// A condition the patch added (`if`, `elif`, `while`) made `True`: survived, the
        /// condition can be removed and no check notices.
        ConditionTrue,
        /// A comparison's operator swapped (`<` for `<=`, `==` for `!=`, `in` for `not in`...).
        SwapComparison,
        /// An arithmetic operator swapped (`+` for `-`, `*` for `//`...).
        SwapArithmetic,
        /// A returned value replaced by a constant of its kind (`0`, `""`, `None`...).
        ReturnConstant,
        /// An integer literal shifted by one.
        ShiftInteger,
        /// A statement deleted (`pass` in its place).
        DeleteStatement,
    }
}

crate::core::words! {
    "kebab-case";
    /// What became of a patch mutant.
    pub enum MutantState {
        /// Made, not run yet (the plan runs it next).
        Pending,
        /// A check it ran against failed, its receipt listing the failure.
        Killed,
        /// Every check it ran against passed: no check notices the change.
        Survived,
        /// It could not be shown either way (no receipt, nothing ran, killed by its timeout):
        /// never a kill.
        Void,
    }
}

/// One mutant of the patch's own lines and what became of it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct PatchMutantFacts {
    #[schema(min_length = 1, max_length = 4096)]
    pub file: String,
    #[schema(minimum = 1, maximum = 4294967295_u64)]
    pub line: u32,
    pub operator: MutantOperator,
    /// The line as mutated (at most 200 characters).
    #[schema(max_length = 200)]
    pub code: String,
    /// The checks that ran its line: what it runs against (at most 10).
    #[schema(max_items = 10)]
    pub checks: Vec<String>,
    pub state: MutantState,
    /// With `killed`: the checks that failed (at most 10).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schema(max_items = 10)]
    pub killed_by: Vec<String>,
}

/// Most patch mutants a gate makes (`[observe] mutants` is at most this).
pub const MAX_PATCH_MUTANTS: usize = 100;
/// The fields of a patch mutant.
pub const PATCH_MUTANT_FIELDS: [&str; 7] = [
    "file",
    "line",
    "operator",
    "code",
    "checks",
    "state",
    "killed_by",
];

/// Most changed code lines the facts list (the counts are of all of them).
pub const MAX_OBSERVED_LINES: usize = 1000;
/// Most checks listed for one line.
pub const MAX_LINE_CHECKS: usize = 10;
/// Longest check id listed.
pub const MAX_CHECK_ID_CHARS: usize = 512;
/// Most untaken branches listed.
pub const MAX_UNTAKEN: usize = 100;
/// The fields of `observe`.
pub const OBSERVE_FIELDS: [&str; 8] = [
    "changes",
    "branches",
    "read",
    "line_count",
    "run_count",
    "lines",
    "untaken",
    "mutants",
];
/// The fields of an observed line.
pub const OBSERVED_LINE_FIELDS: [&str; 3] = ["file", "line", "checks"];
/// The fields of an untaken branch.
pub const UNTAKEN_FIELDS: [&str; 3] = ["file", "line", "to"];

/// What the observed run saw of the patch's changed code lines (CONTRACT-style rule text:
/// docs/design/observe.md). Absent: observing is off.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(as = ObserveDoc)]
pub struct ObserveFacts {
    /// The base config's `[observe] changes`: `required` makes a change no check runs
    /// `unobserved-change`.
    pub changes: ObserveRule,
    /// The base config's `[observe] branches`: `required` makes an added branch no check
    /// takes `unobserved-branch`.
    pub branches: ObserveRule,
    /// Whether the observed run's coverage report was read (written at the runner's path,
    /// outside the tree). False: nothing is known to be observed.
    pub read: bool,
    /// How many changed code lines the judged tree has (lines the patch adds or changes that
    /// are statements of a changed code file; test code and inert paths are not code).
    #[schema(minimum = 0, maximum = 4294967295_u64)]
    pub line_count: u64,
    /// How many of them some check ran.
    #[schema(minimum = 0, maximum = 4294967295_u64)]
    pub run_count: u64,
    /// The changed code lines, by file and line, each with the checks that ran it (at most
    /// 1,000 lines, 10 checks each; `(import)` is code run when its module was imported).
    #[serde(default)]
    #[schema(max_items = 1000)]
    pub lines: Vec<ObservedLine>,
    /// Branches leaving a line the patch adds that no check took (at most 100).
    #[serde(default)]
    #[schema(max_items = 100)]
    pub untaken: Vec<UntakenBranch>,
    /// Mutants of the changed code lines some check ran (at most `[observe] mutants`, 100),
    /// one per line, each run against the checks that ran its line: with `changes =
    /// "required"`, none killed is `unobserved-change`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schema(max_items = 100)]
    pub mutants: Vec<PatchMutantFacts>,
}

/// A changed code line and the checks that ran it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ObservedLine {
    #[schema(min_length = 1, max_length = 4096)]
    pub file: String,
    #[schema(minimum = 1, maximum = 4294967295_u64)]
    pub line: u32,
    /// The suite's tests (and properties) that ran it; empty: none did.
    #[schema(max_items = 10)]
    pub checks: Vec<String>,
}

/// A branch no check took: from `line` (a line the patch adds) to `to`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct UntakenBranch {
    #[schema(min_length = 1, max_length = 4096)]
    pub file: String,
    #[schema(minimum = 1, maximum = 4294967295_u64)]
    pub line: u32,
    /// The line the branch goes to; absent: it leaves the function.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false, minimum = 1, maximum = 4294967295_u64)]
    pub to: Option<u32>,
}

impl ObserveFacts {
    /// How many patch mutants a check killed.
    pub fn killed(&self) -> usize {
        self.mutants
            .iter()
            .filter(|m| m.state == MutantState::Killed)
            .count()
    }

    /// The patch mutants not run yet.
    pub fn pending(&self) -> impl Iterator<Item = (usize, &PatchMutantFacts)> {
        self.mutants
            .iter()
            .enumerate()
            .filter(|(_, m)| m.state == MutantState::Pending)
    }

    /// Whether any rule looks at the change.
    pub fn on(&self) -> bool {
        self.changes != ObserveRule::Off || self.branches != ObserveRule::Off
    }

    /// What it finds to escalate, by the rules `required`; `None` when nothing.
    pub fn unobserved(&self) -> Option<Unobserved> {
        let required = |r| r == ObserveRule::Required;
        if !self.read && (required(self.changes) || required(self.branches)) {
            return Some(Unobserved::Change);
        }
        if required(self.changes) && self.line_count > 0 && self.run_count == 0 {
            return Some(Unobserved::Change);
        }
        if required(self.changes) && !self.mutants.is_empty() && self.killed() == 0 {
            return Some(Unobserved::Change);
        }
        // A branch the patch adds that no check takes, and whose condition made true no
        // check notices: its two arms are one to every check (the change's own branching was
        // not observed).
        if required(self.changes) && self.dead_branches().next().is_some() {
            return Some(Unobserved::Branch);
        }
        (required(self.branches) && !self.untaken.is_empty()).then_some(Unobserved::Branch)
    }

    /// The untaken branches whose line's condition, made true, survived every check.
    pub fn dead_branches(&self) -> impl Iterator<Item = &UntakenBranch> {
        self.untaken.iter().filter(|b| {
            self.mutants.iter().any(|m| {
                m.file == b.file
                    && m.line == b.line
                    && m.operator == MutantOperator::ConditionTrue
                    && m.state == MutantState::Survived
            })
        })
    }
}

/// The observe step: the facts as the answer shows them, and `property_check` after it. Only
/// a pass is made unknown (a failure stays a failure; an open verdict keeps its own cause);
/// a suite that did not run leaves its report unread, and says so itself.
pub(super) fn observe_step(
    observe: Option<&ObserveFacts>,
    suite_ran: bool,
    property_check: Verdict,
) -> (super::steps::Step, Verdict) {
    let Some(o) = observe.filter(|o| o.on()) else {
        return (
            super::steps::Step::Observe {
                on: false,
                verdict: property_check,
                unobserved: None,
                facts: None,
                summary: "off: no check is asked to show it runs the patch's lines ([observe] in the config)".to_owned(),
            },
            property_check,
        );
    };
    let found = o.unobserved().filter(|_| o.read || suite_ran);
    let verdict = match found {
        Some(_) if property_check == Verdict::Pass => Verdict::Unknown,
        _ => property_check,
    };
    let untaken = match o.untaken.first() {
        None => String::new(),
        Some(first) => format!(
            "; {} the patch adds no check takes, the first from {}:{}",
            plural(o.untaken.len(), "branch", "branches"),
            first.file,
            first.line
        ),
    };
    let mutants = match o.mutants.len() {
        0 => String::new(),
        n => format!(
            "; {} of {} killed",
            o.killed(),
            plural(n, "patch mutant", "patch mutants")
        ),
    };
    let seen = if !o.read {
        "the observed run's coverage report was not read: nothing is known to run the change"
            .to_owned()
    } else if o.line_count == 0 {
        "the patch changes no code line a check could run".to_owned()
    } else {
        format!(
            "{} of {} run by a check{untaken}{mutants}",
            o.run_count,
            plural(
                usize::try_from(o.line_count).unwrap_or(usize::MAX),
                "changed code line",
                "changed code lines"
            )
        )
    };
    let summary = match (verdict == property_check, found) {
        (false, Some(Unobserved::Change)) => {
            format!("{seen}: the change was not observed, property_check is unknown")
        }
        (false, Some(Unobserved::Branch)) => {
            format!(
                "{seen}: a branch the patch adds runs under no check, property_check is unknown"
            )
        }
        _ => seen,
    };
    (
        super::steps::Step::Observe {
            on: true,
            verdict,
            unobserved: found.filter(|_| verdict != property_check),
            facts: Some(o.clone()),
            summary,
        },
        verdict,
    )
}

/// A line number: 1 to 4,294,967,295.
fn line_number(
    v: &serde_json::Value,
    at: &str,
    e: &mut crate::core::fields::Errors,
) -> Option<u32> {
    match crate::core::fields::whole_u64(v).and_then(|n| u32::try_from(n).ok()) {
        Some(n) if n > 0 => Some(n),
        _ => {
            e.push(at, "a line number is an integer from 1 to 4294967295");
            None
        }
    }
}

/// Reads `observe` strictly (every field named, every bound held, the counts consistent).
pub(super) fn parse_observe(
    v: &serde_json::Value,
    e: &mut crate::core::fields::Errors,
) -> Option<ObserveFacts> {
    use crate::core::fields::{self, object};
    const AT: &str = "/observe";
    let o = object(v, AT, "`observe`", &OBSERVE_FIELDS, e)?;
    let changes = o.req_enum::<ObserveRule>("changes", e);
    let branches = o.req_enum::<ObserveRule>("branches", e);
    let read = match o.required("read", e) {
        Some(serde_json::Value::Bool(b)) => Some(*b),
        Some(_) => {
            e.push(o.pointer("read"), "`read` must be true or false");
            None
        }
        None => None,
    };
    let count = |key: &str, e: &mut fields::Errors| {
        o.required(key, e)
            .and_then(|v| fields::uint(v, &o.pointer(key), key, u64::from(u32::MAX), e))
    };
    let line_count = count("line_count", e);
    let run_count = count("run_count", e);
    let listed = |key: &str, max: usize, e: &mut fields::Errors| match o.get(key) {
        Some(v) if v.as_array().is_some_and(|a| a.len() > max) => {
            e.push(
                o.pointer(key),
                format!("`{key}` lists at most {max} entries"),
            );
            None
        }
        other => Some(other),
    };
    let line_of = |x: &fields::Obj<'_>, e: &mut fields::Errors| {
        let file = x
            .required("file", e)
            .and_then(|v| fields::path(v, &x.pointer("file"), e));
        let line = x
            .required("line", e)
            .and_then(|v| line_number(v, &x.pointer("line"), e));
        Some((file?.as_str().to_owned(), line?))
    };
    let lines = match listed("lines", MAX_OBSERVED_LINES, e)? {
        None => Vec::new(),
        Some(list) => fields::array(list, &o.pointer("lines"), "`lines`", e, |x, p, e| {
            let l = object(x, &p, "an observed line", &OBSERVED_LINE_FIELDS, e)?;
            let at = l.pointer("checks");
            let checks = l.required("checks", e).and_then(|v| match v.as_array() {
                Some(a) if a.len() > MAX_LINE_CHECKS => {
                    e.push(
                        &at,
                        format!("at most {MAX_LINE_CHECKS} checks are listed a line"),
                    );
                    None
                }
                _ => fields::array(v, &at, "`checks`", e, |c, p, e| {
                    fields::string(c, &p, "a check id", MAX_CHECK_ID_CHARS, e)
                }),
            });
            let (file, line) = line_of(&l, e)?;
            Some(ObservedLine {
                file,
                line,
                checks: checks?,
            })
        })?,
    };
    let untaken = match listed("untaken", MAX_UNTAKEN, e)? {
        None => Vec::new(),
        Some(list) => fields::array(list, &o.pointer("untaken"), "`untaken`", e, |x, p, e| {
            let b = object(x, &p, "an untaken branch", &UNTAKEN_FIELDS, e)?;
            let to = match b.get("to") {
                None => Some(None),
                Some(v) => line_number(v, &b.pointer("to"), e).map(Some),
            };
            let (file, line) = line_of(&b, e)?;
            Some(UntakenBranch {
                file,
                line,
                to: to?,
            })
        })?,
    };
    let mutants = match listed("mutants", MAX_PATCH_MUTANTS, e)? {
        None => Vec::new(),
        Some(list) => fields::array(list, &o.pointer("mutants"), "`mutants`", e, |x, p, e| {
            let m = object(x, &p, "a patch mutant", &PATCH_MUTANT_FIELDS, e)?;
            let operator = m.req_enum::<MutantOperator>("operator", e);
            let state = m.req_enum::<MutantState>("state", e);
            let code = m.req_string("code", 200, e);
            let ids = |key: &str, e: &mut fields::Errors| match m.get(key) {
                None if key == "killed_by" => Some(Vec::new()),
                None => {
                    e.push(m.pointer(key), format!("`{key}` is required"));
                    None
                }
                Some(v) if v.as_array().is_some_and(|a| a.len() > MAX_LINE_CHECKS) => {
                    e.push(
                        m.pointer(key),
                        format!("at most {MAX_LINE_CHECKS} checks are listed"),
                    );
                    None
                }
                Some(v) => fields::array(v, &m.pointer(key), &format!("`{key}`"), e, |c, p, e| {
                    fields::string(c, &p, "a check id", MAX_CHECK_ID_CHARS, e)
                }),
            };
            let checks = ids("checks", e);
            let killed_by = ids("killed_by", e);
            let (file, line) = line_of(&m, e)?;
            Some(PatchMutantFacts {
                file,
                line,
                operator: operator?,
                code: code?,
                checks: checks?,
                state: state?,
                killed_by: killed_by?,
            })
        })?,
    };
    let (line_count, run_count) = (line_count?, run_count?);
    let listed_run = lines.iter().filter(|l| !l.checks.is_empty()).count() as u64;
    if lines.len() as u64 > line_count || run_count > line_count || listed_run > run_count {
        e.push(
            AT,
            "`lines` lists more lines than `line_count`, or more run lines than `run_count`, or `run_count` is over `line_count`",
        );
        return None;
    }
    if lines.len() as u64 == line_count && listed_run != run_count {
        e.push(
            AT,
            "`lines` lists every changed line: `run_count` must be the lines with a check",
        );
        return None;
    }
    Some(ObserveFacts {
        changes: changes?,
        branches: branches?,
        read: read?,
        line_count,
        run_count,
        lines,
        untaken,
        mutants,
    })
}

/// The report's part: the branches no check takes first, then the changed lines no check
/// runs, then which checks ran the others.
pub(super) fn detail(out: &mut String, o: &ObserveFacts) {
    use super::report::{code, list};
    use std::fmt::Write as _;
    if !o.untaken.is_empty() {
        out.push_str("### Branches the patch adds that no check takes\n\n");
        let dead: Vec<&UntakenBranch> = o.dead_branches().collect();
        let mut branches: Vec<&UntakenBranch> = o.untaken.iter().collect();
        branches.sort_by_key(|b| !dead.contains(b));
        list(
            out,
            branches.into_iter().map(|b| {
                format!(
                    "this branch of {} runs under no check (to {}){}",
                    code(&format!("{}:{}", b.file, b.line)),
                    b.to.map_or_else(|| "the function's exit".to_owned(), |t| format!("line {t}")),
                    match dead.contains(&b) {
                        true => ", and its condition can be removed and no check notices",
                        false => "",
                    }
                )
            }),
        );
        out.push('\n');
    }
    let mut survived: Vec<&PatchMutantFacts> = o
        .mutants
        .iter()
        .filter(|m| m.state == MutantState::Survived)
        .collect();
    // A condition that can be removed first: the patch's own guard no check needs.
    survived.sort_by_key(|m| m.operator != MutantOperator::ConditionTrue);
    if !survived.is_empty() {
        let _ = writeln!(
            out,
            "### Patch mutants no check kills

{} of {} patch mutants killed; these survived, each run against the checks that ran its line:
",
            o.killed(),
            o.mutants.len()
        );
        list(
            out,
            survived.iter().map(|m| {
                let says = match m.operator {
                    MutantOperator::ConditionTrue => {
                        "this condition can be removed and no check notices"
                    }
                    _ => "no check notices",
                };
                let checks: Vec<String> = m.checks.iter().map(|c| code(c)).collect();
                format!(
                    "{} ({}): {} — {says}; ran {}",
                    code(&format!("{}:{}", m.file, m.line)),
                    <&str>::from(m.operator),
                    code(&m.code),
                    checks.join(", ")
                )
            }),
        );
        out.push('\n');
    }
    let (unrun, run): (Vec<&ObservedLine>, Vec<&ObservedLine>) =
        o.lines.iter().partition(|l| l.checks.is_empty());
    if !unrun.is_empty() {
        out.push_str("### Changed code lines no check runs\n\n");
        list(
            out,
            unrun
                .iter()
                .map(|l| code(&format!("{}:{}", l.file, l.line))),
        );
        out.push('\n');
    }
    if !run.is_empty() {
        let _ = writeln!(
            out,
            "### Which checks ran the change\n\n{} of {} changed code lines ran under a check:\n",
            o.run_count, o.line_count
        );
        list(
            out,
            run.iter().map(|l| {
                let checks: Vec<String> = l.checks.iter().map(|c| code(c)).collect();
                format!(
                    "{}: {}",
                    code(&format!("{}:{}", l.file, l.line)),
                    checks.join(", ")
                )
            }),
        );
        out.push('\n');
    }
}
