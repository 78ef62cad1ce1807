//! Whether the checks saw *this* change (issue 52): which checks ran the patch's changed code
//! lines, and which branches it adds no check took. The runner gathers the facts (the changed
//! lines' probes in one run of the suite, read like a receipt); the rule here decides from them alone.

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

crate::core::words! {
    "kebab-case";
    /// Whether the observed run stands in for a locality (issue 65; docs/design/observe.md,
    /// O.4a): every changed code file no strong property's locality names has changed lines a
    /// check ran and a patch mutant a check killed.
    pub enum ObservedInstead {
        /// It does: `property_check` is pass on the observation.
        Held,
        /// Not known yet: the suite (observed) and the patch mutants run first.
        Pending,
        /// A file's changed lines ran under no check, or none of its mutants was killed (or
        /// it has none, or the run was not read): the empty quorum stands.
        NotShown,
    }
}

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
    /// Whether the observed run's report was read (written at the runner's path,
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

    /// What it finds to escalate, by the rules `required`; `None` when nothing. A pending
    /// patch mutant is no kill once the suite passed (the plan runs them then: one still
    /// pending was not run); before that, it is no evidence either way.
    pub fn unobserved(&self, suite_passed: bool) -> Option<Unobserved> {
        let required = |r| r == ObserveRule::Required;
        if !self.read && (required(self.changes) || required(self.branches)) {
            return Some(Unobserved::Change);
        }
        if required(self.changes) && self.line_count > 0 && self.run_count == 0 {
            return Some(Unobserved::Change);
        }
        let counted = self
            .mutants
            .iter()
            .filter(|m| suite_passed || m.state != MutantState::Pending)
            .count();
        if required(self.changes) && counted > 0 && self.killed() == 0 {
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

    /// Whether this observation stands in for the locality of `files` (issue 65; O.4a in
    /// docs/design/observe.md): each has a changed line some check ran and a patch mutant
    /// some check killed. Before the run is read (and before its mutants ran, once the suite
    /// passed) it is pending; a file whose lines no check ran, or with no mutant killed once
    /// all ran, is not shown. `suite_ran`: the suite has run (an unread run stays unread).
    pub fn stands_in(&self, files: &[&str], suite_ran: bool) -> ObservedInstead {
        // Only a code file the observed run watches (Python, Rust) can be shown run.
        if !self.on()
            || files.is_empty()
            || !files
                .iter()
                .all(|f| f.ends_with(".py") || f.ends_with(".rs"))
        {
            return ObservedInstead::NotShown;
        }
        if !self.read {
            return match suite_ran {
                true => ObservedInstead::NotShown,
                false => ObservedInstead::Pending,
            };
        }
        let mut pending = false;
        for file in files {
            let ran = self
                .lines
                .iter()
                .any(|l| l.file == *file && !l.checks.is_empty());
            let mine = || self.mutants.iter().filter(|m| m.file == *file);
            if !ran {
                return ObservedInstead::NotShown;
            }
            if mine().any(|m| m.state == MutantState::Killed) {
                continue;
            }
            if mine().any(|m| m.state == MutantState::Pending) {
                pending = true;
                continue;
            }
            return ObservedInstead::NotShown;
        }
        match pending {
            true => ObservedInstead::Pending,
            false => ObservedInstead::Held,
        }
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

/// A line number: 1 to 4,294,967,295.
pub(super) fn line_number(
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
    let listed = |key: &str, max: usize, e: &mut fields::Errors| o.listed(key, max, e);
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

#[cfg(test)]
mod tests {
    use super::*;

    /// O.4a, written by hand: each file needs a changed line a check ran and a mutant a check
    /// killed; pending before the run is read or its mutants ran.
    #[test]
    fn the_observed_run_stands_in_only_for_what_it_shows() {
        let line = |file: &str, ran: bool| ObservedLine {
            file: file.to_owned(),
            line: 3,
            checks: if ran { vec!["t::a".to_owned()] } else { vec![] },
        };
        let mutant = |file: &str, state: MutantState| PatchMutantFacts {
            file: file.to_owned(),
            line: 3,
            operator: MutantOperator::SwapArithmetic,
            code: "x - 1".to_owned(),
            checks: vec!["t::a".to_owned()],
            state,
            killed_by: vec![],
        };
        let facts =
            |read: bool, lines: Vec<ObservedLine>, mutants: Vec<PatchMutantFacts>| ObserveFacts {
                changes: ObserveRule::Required,
                branches: ObserveRule::Listed,
                read,
                line_count: lines.len() as u64,
                run_count: lines.iter().filter(|l| !l.checks.is_empty()).count() as u64,
                lines,
                untaken: vec![],
                mutants,
            };
        use MutantState::{Killed, Survived, Void};
        use ObservedInstead::{Held, NotShown};
        let rows: Vec<(&str, ObserveFacts, bool, ObservedInstead)> = vec![
            (
                "not read, suite ahead",
                facts(false, vec![], vec![]),
                false,
                ObservedInstead::Pending,
            ),
            (
                "not read, suite ran",
                facts(false, vec![], vec![]),
                true,
                NotShown,
            ),
            (
                "ran and killed",
                facts(true, vec![line("a.py", true)], vec![mutant("a.py", Killed)]),
                true,
                Held,
            ),
            (
                "ran, mutant still to run",
                facts(
                    true,
                    vec![line("a.py", true)],
                    vec![mutant("a.py", MutantState::Pending)],
                ),
                true,
                ObservedInstead::Pending,
            ),
            (
                "ran, every mutant survived or void",
                facts(
                    true,
                    vec![line("a.py", true)],
                    vec![mutant("a.py", Survived), mutant("a.py", Void)],
                ),
                true,
                NotShown,
            ),
            (
                "ran, no mutant made",
                facts(true, vec![line("a.py", true)], vec![]),
                true,
                NotShown,
            ),
            (
                "no check ran it",
                facts(
                    true,
                    vec![line("a.py", false)],
                    vec![mutant("a.py", Killed)],
                ),
                true,
                NotShown,
            ),
            (
                "another file's kill does not count",
                facts(
                    true,
                    vec![line("a.py", true), line("b.py", true)],
                    vec![mutant("b.py", Killed)],
                ),
                true,
                NotShown,
            ),
        ];
        for (name, o, suite_ran, want) in rows {
            assert_eq!(o.stands_in(&["a.py"], suite_ran), want, "{name}");
        }
        let mut off = facts(true, vec![line("a.py", true)], vec![mutant("a.py", Killed)]);
        off.changes = ObserveRule::Off;
        off.branches = ObserveRule::Off;
        assert_eq!(off.stands_in(&["a.py"], true), NotShown, "observing off");
        let ahead = facts(false, vec![], vec![]);
        assert_eq!(
            ahead.stands_in(&["a.py", "NOTES.md"], false),
            NotShown,
            "a file no observed run watches"
        );
    }
}
