//! The changed code against the base (issue 66; CONTRACT.md 16.3; docs/design/replay.md), the
//! runner's side: each recorded call and its neighbours (programs/replay_neighbours.py) are
//! made by the plain program on the patch's tree (the two programs of 16.2, `--neighbours`) and
//! on the base's, in a room of the base's own, twice; the answers are paired here by call and
//! neighbour, and the core decides ([`crate::core::gate::against_base`]).

use std::collections::BTreeMap;

use super::gather::Gathered;
use super::plain_program::{PlainLine, PlainRun};
use crate::cli::error::CliError;
use crate::core::gate::{AgainstBase, BaseState, CallEnd, CallResult, Difference, MAX_DIFFERENCES};

/// The most bytes of one changed Python file read for its literals.
const MAX_SOURCE_BYTES: usize = 4 << 20;

/// One plain program's answers, by (call, neighbour): the neighbour's label, its changed
/// argument as shown, the result.
type Answers = BTreeMap<(usize, usize), (Option<String>, String, CallResult)>;

/// The integer literals the patch adds to the changed Python files (the boundaries it draws).
pub(super) fn literals(g: &Gathered) -> Result<Vec<i64>, CliError> {
    let files: Vec<(&String, &std::collections::BTreeSet<u32>)> = g
        .watched
        .files
        .iter()
        .filter(|(p, _)| p.ends_with(".py"))
        .collect();
    let paths: Vec<&str> = files.iter().map(|(p, _)| p.as_str()).collect();
    let blobs = crate::cli::git::blobs(&g.tree, &paths, MAX_SOURCE_BYTES)?;
    let mut out: Vec<i64> = Vec::new();
    for ((_, lines), blob) in files.iter().zip(blobs) {
        for n in crate::cli::reading::integers::python(&blob.unwrap_or_default(), lines) {
            if !out.contains(&n) && out.len() < crate::cli::reading::integers::MAX_INTEGERS {
                out.push(n);
            }
        }
    }
    Ok(out)
}

/// A program's lines as answers (neighbours and recorded calls alike; `n` 0 is the call; an
/// iterator returned by what it yields).
fn answers(lines: &[PlainLine], specs: &[(usize, String)]) -> Answers {
    let mut out = Answers::new();
    for l in lines {
        let Some((call, _)) = l.i.and_then(|i| specs.get(i)) else {
            continue;
        };
        // An iterator by what it yields: two kinds of lazy iterator alike.
        let r = match (&l.items, &l.result, &l.raised) {
            (Some(r), _, _) | (None, Some(r), _) => {
                super::plain_program::result(CallEnd::Returned, r)
            }
            (None, None, Some(t)) => super::plain_program::result(CallEnd::Raised, t),
            (None, None, None) => continue,
        };
        let n = l.n.unwrap_or(0);
        out.insert(
            (*call, n),
            (l.input.clone(), l.shown.clone().unwrap_or_default(), r),
        );
    }
    out
}

/// What the base's and the patch's programs answered, paired by call and neighbour: the
/// rows of 16.3's table, one per recorded call the base's programs could make.
pub(super) fn compare(
    patch: &[Vec<PlainLine>; 2],
    base: &[Vec<PlainLine>; 2],
    specs: &[(usize, String)],
    shown: &dyn Fn(usize) -> String,
) -> Vec<AgainstBase> {
    let [p1, p2] = [&patch[0], &patch[1]].map(|l| answers(l, specs));
    let [b1, b2] = [&base[0], &base[1]].map(|l| answers(l, specs));
    let mut rows: BTreeMap<usize, AgainstBase> = BTreeMap::new();
    for (key, (input, arguments, one)) in &p1 {
        let (call, n) = *key;
        // Each version's two programs give the same answer to the same input, or it is not
        // compared (time, randomness, identity; a neighbour drawn otherwise).
        let twice = |a: &Answers| {
            a.get(key)
                .filter(|(i, _, r)| i == input && r.end == one.end && r.digest == one.digest)
                .is_some()
        };
        let base_answer = b1.get(key).filter(|(i, _, r)| {
            i == input
                && b2
                    .get(key)
                    .is_some_and(|(_, _, s)| s.end == r.end && s.digest == r.digest)
        });
        let row = rows.entry(call).or_insert_with(|| AgainstBase {
            call: u32::try_from(call).unwrap_or(u32::MAX),
            recorded: BaseState::Uncompared,
            neighbours: 0,
            differing: 0,
            differences: Vec::new(),
        });
        let Some((_, _, theirs)) = base_answer.filter(|_| twice(&p2)) else {
            continue;
        };
        let differs = theirs.end != one.end || theirs.digest != one.digest;
        if n == 0 {
            row.recorded = match differs {
                true => BaseState::Differs,
                false => BaseState::Agrees,
            };
        } else {
            row.neighbours += 1;
            row.differing += u32::from(differs);
        }
        if differs {
            let difference = Difference {
                input: input.clone(),
                arguments: match n {
                    0 => shown(call),
                    _ => arguments.chars().take(200).collect(),
                },
                base: theirs.clone(),
                patch: one.clone(),
            };
            // The recorded call's own difference first.
            match n {
                0 => row.differences.insert(0, difference),
                _ => row.differences.push(difference),
            }
            row.differences.truncate(MAX_DIFFERENCES);
        }
    }
    // Rows for calls the base's programs never answered stay, uncompared: the base may lack
    // the function (a new one), which is never a difference.
    rows.into_values().collect()
}

/// The plain program on the base's tree, twice, in a room of the base's own: the same calls,
/// found by name and file (`--base`), the paths of the patch's room moved to the base's.
pub(super) fn on_the_base(
    g: &Gathered,
    run: &PlainRun<'_>,
    specs: &[(usize, String)],
) -> Result<Option<[Vec<PlainLine>; 2]>, CliError> {
    let room = crate::cli::runner::open_room(&g.config.sandbox, &g.base, g.cache.as_ref())?;
    let from = run.room.tree.to_string_lossy().into_owned();
    let to = room.tree.to_string_lossy().into_owned();
    let moved: Vec<(usize, String)> = specs
        .iter()
        .map(|(i, s)| {
            let mut v: serde_json::Value = serde_json::from_str(s).unwrap_or_default();
            for key in ["path", "root"] {
                if let Some(p) = v.get_mut(key)
                    && let Some(rest) = p.as_str().and_then(|s| s.strip_prefix(&from))
                {
                    *p = serde_json::Value::String(format!("{to}{rest}"));
                }
            }
            (*i, v.to_string())
        })
        .collect();
    run.twice(&room, "the base", &moved, true)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(i: usize, n: usize, result: &str) -> PlainLine {
        PlainLine {
            i: Some(i),
            n: (n > 0).then_some(n),
            input: (n > 0).then(|| format!("x + {n}")),
            shown: Some("1".to_owned()),
            result: Some(result.to_owned()),
            ..PlainLine::default()
        }
    }

    /// CONTRACT.md 16.3 with 16.2's twice: written by hand, (patch 1, patch 2, base 1, base 2)
    /// answers of one call (n 0) and two neighbours → the row.
    #[test]
    fn answers_are_paired_by_call_and_neighbour_and_compared_only_when_given_twice_alike() {
        let specs = vec![(0, String::new())];
        let patch = [
            vec![line(0, 0, "1"), line(0, 1, "2"), line(0, 2, "3")],
            vec![line(0, 0, "1"), line(0, 1, "2"), line(0, 2, "3")],
        ];
        let base = [
            vec![line(0, 0, "1"), line(0, 1, "9"), line(0, 2, "3")],
            vec![line(0, 0, "1"), line(0, 1, "9"), line(0, 2, "4")],
        ];
        let rows = compare(&patch, &base, &specs, &|_| "1".to_owned());
        assert_eq!(rows.len(), 1);
        let row = &rows[0];
        // The call agrees; neighbour 1 differs; neighbour 2's base answers differ between its
        // programs: not compared.
        assert_eq!(row.recorded, BaseState::Agrees);
        assert_eq!((row.neighbours, row.differing), (1, 1));
        assert_eq!(row.differences.len(), 1);
        assert_eq!(row.differences[0].input.as_deref(), Some("x + 1"));
        // The base lacks the function: every answer missing, the row uncompared.
        let rows = compare(&patch, &[vec![], vec![]], &specs, &|_| "1".to_owned());
        assert_eq!(rows[0].recorded, BaseState::Uncompared);
        assert_eq!(rows[0].neighbours, 0);
    }
}
