//! The shards' observed runs as one (issue 53): each shard observed its share of the suite,
//! so a changed line was run by a check when any share's check ran it, a branch was taken when
//! a share that ran its line took it (a share that never ran the line lists none of its
//! branches), and a patch mutant was killed when any share's checks killed it (it survived
//! when it ran and none did).

use std::collections::BTreeMap;

use serde_json::{Value, json};

use super::observe::{MAX_LINE_CHECKS, MAX_PATCH_MUTANTS, MAX_UNTAKEN};

/// The list `key` of `v`.
fn list<'a>(v: &'a Value, key: &str) -> &'a [Value] {
    v.get(key)
        .and_then(Value::as_array)
        .map_or(&[], Vec::as_slice)
}

/// `more` added to the check ids `into`, each once, at most [`MAX_LINE_CHECKS`].
fn add_checks(into: &mut Vec<Value>, more: &[Value]) {
    for c in more {
        if !into.contains(c) && into.len() < MAX_LINE_CHECKS {
            into.push(c.clone());
        }
    }
}

/// Shard 1's `observe` (`spine`) with every shard's (`all`, shard 1's among them) merged in.
pub fn merge(spine: &Value, all: &[&Value]) -> Value {
    let mut out = spine.clone();
    let read = all
        .iter()
        .all(|o| o.get("read").and_then(Value::as_bool).unwrap_or(false));
    let line_count = spine.get("line_count").and_then(Value::as_u64).unwrap_or(0);
    // Lines: by (file, line), the checks of every share.
    let mut lines: BTreeMap<(String, u64), Vec<Value>> = BTreeMap::new();
    let key = |x: &Value| {
        (
            x.get("file")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_owned(),
            x.get("line").and_then(Value::as_u64).unwrap_or(0),
        )
    };
    for o in all {
        for l in list(o, "lines") {
            add_checks(lines.entry(key(l)).or_default(), list(l, "checks"));
        }
    }
    // Every share listed every line: the lines some check ran are counted; else the most any
    // share counted (no more than is known).
    let complete = all
        .iter()
        .all(|o| list(o, "lines").len() as u64 == line_count);
    let run_count = if complete {
        lines.values().filter(|c| !c.is_empty()).count() as u64
    } else {
        all.iter()
            .filter_map(|o| o.get("run_count").and_then(Value::as_u64))
            .max()
            .unwrap_or(0)
    };
    let lines: Vec<Value> = lines
        .into_iter()
        .map(|((file, line), checks)| json!({"file": file, "line": line, "checks": checks}))
        .collect();
    // Untaken: a branch a share lists, unless another share took it: that share ran the
    // branch's line and does not list it (a share whose list was cut at its cap took nothing
    // it does not list, as far as is known; a share that never ran the line took nothing).
    let ran_line = |o: &Value, b: &Value| {
        list(o, "lines")
            .iter()
            .any(|l| key(l) == key(b) && !list(l, "checks").is_empty())
    };
    let mut untaken: Vec<Value> = Vec::new();
    for b in all.iter().flat_map(|o| list(o, "untaken")) {
        let taken = all.iter().any(|o| {
            let listed = list(o, "untaken");
            ran_line(o, b) && listed.len() < MAX_UNTAKEN && !listed.contains(b)
        });
        if !taken && !untaken.contains(b) && untaken.len() < MAX_UNTAKEN {
            untaken.push(b.clone());
        }
    }
    // Mutants, by what they are: killed by any share's checks, else survived where run.
    let mut mutants: Vec<Value> = Vec::new();
    let same = |a: &Value, b: &Value| {
        ["file", "line", "operator", "code"]
            .iter()
            .all(|k| a.get(k) == b.get(k))
    };
    for m in all.iter().flat_map(|o| list(o, "mutants")) {
        let full = mutants.len() >= MAX_PATCH_MUTANTS;
        match mutants.iter_mut().find(|x| same(x, m)) {
            None if !full => mutants.push(m.clone()),
            None => {}
            Some(x) => {
                let state = |v: &Value| {
                    v.get("state")
                        .and_then(Value::as_str)
                        .unwrap_or("")
                        .to_owned()
                };
                let rank = |s: &str| match s {
                    "killed" => 2,
                    "survived" => 1,
                    _ => 0,
                };
                let mut checks = list(x, "checks").to_vec();
                add_checks(&mut checks, list(m, "checks"));
                let mut killed_by = list(x, "killed_by").to_vec();
                add_checks(&mut killed_by, list(m, "killed_by"));
                let best = if rank(&state(m)) > rank(&state(x)) {
                    state(m)
                } else {
                    state(x)
                };
                if let Some(o) = x.as_object_mut() {
                    o.insert("checks".to_owned(), Value::Array(checks));
                    o.insert("state".to_owned(), json!(best));
                    if !killed_by.is_empty() {
                        o.insert("killed_by".to_owned(), Value::Array(killed_by));
                    }
                }
            }
        }
    }
    if let Some(o) = out.as_object_mut() {
        o.insert("read".to_owned(), json!(read));
        o.insert("run_count".to_owned(), json!(run_count));
        o.insert("lines".to_owned(), Value::Array(lines));
        o.insert("untaken".to_owned(), Value::Array(untaken));
        if mutants.is_empty() {
            o.remove("mutants");
        } else {
            o.insert("mutants".to_owned(), Value::Array(mutants));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn share(run_12: bool, untaken: &[Value]) -> Value {
        let checks = if run_12 { json!(["t::a"]) } else { json!([]) };
        json!({"changes": "required", "branches": "listed", "read": true, "line_count": 1,
               "run_count": u64::from(run_12),
               "lines": [{"file": "s.py", "line": 12, "checks": checks}],
               "untaken": untaken})
    }

    /// Written by hand: the branch 12 → 13 is untaken in the share that ran line 12 and did
    /// not take it; a share that never ran line 12 lists nothing and takes nothing; a share
    /// that ran it and does not list it took it.
    #[test]
    fn a_branch_is_taken_only_by_a_share_that_ran_its_line() {
        let branch = json!({"file": "s.py", "line": 12, "to": 13});
        let (never, untook, took) = (
            share(false, &[]),
            share(true, std::slice::from_ref(&branch)),
            share(true, &[]),
        );
        let merged = merge(&never, &[&never, &untook]);
        assert_eq!(merged["untaken"], json!([branch]));
        assert_eq!(merged["run_count"], 1);
        assert_eq!(merged["lines"][0]["checks"], json!(["t::a"]));
        let merged = merge(&never, &[&never, &untook, &took]);
        assert_eq!(merged["untaken"], json!([]));
    }
}
