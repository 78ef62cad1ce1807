//! Tests inside source files (issue 50): the lines of a Rust file that only a test build
//! compiles (`#[cfg(test)]` items, `#[test]` functions) and its doctests (fenced blocks of
//! `///`/`//!` comments) are test lines. A patch's edits to them are judged as the base has
//! them, like a test file's: the file the runs see has those hunks as the base has them. A
//! hunk the reader cannot split into test lines and code lines is a scope hit, never judged
//! half from the patch. In a Python file the doctest examples of its docstrings are test
//! lines, matched docstring by docstring ([`super::doctest`]).

use std::collections::HashSet;

use super::super::error::CliError;
use super::super::git::{blobs, diff_hunks, ls_blobs};
use super::{Language, MAX_CODE_FILE, Split, source};
use crate::core::ladder::ScopeMarkers;
use crate::core::path::RepoPath;

/// What a patch does to the tests inside its source files.
#[derive(Debug, Default)]
pub struct InFile {
    /// Files whose test lines the patch edits, with the content the runs see: the patch's
    /// code, the base's test lines.
    pub from_base: Vec<(String, Vec<u8>)>,
    /// Files where a hunk mixes test lines and code the reader cannot split: a scope hit.
    pub mixed: Vec<String>,
}

/// The tests inside the changed Rust files of `base..tree` (files the base and the tree both
/// hold, not test-adjacent by path, each read within the reader's limit).
pub fn in_file_tests(base: &str, tree: &str, changed: &[String]) -> Result<InFile, CliError> {
    let markers = ScopeMarkers::default();
    let files: Vec<(&str, Language)> = changed
        .iter()
        .filter_map(|f| Some((f.as_str(), Language::of(f)?)))
        .filter(|(f, _)| RepoPath::parse(f).is_ok_and(|p| !markers.is_test_adjacent(&p)))
        .collect();
    let mut out = InFile::default();
    if files.is_empty() {
        return Ok(out);
    }
    let paths: Vec<&str> = files.iter().map(|(f, _)| *f).collect();
    let before = blobs(base, &paths, MAX_CODE_FILE)?;
    let after = blobs(tree, &paths, MAX_CODE_FILE)?;
    let base_ids = ls_blobs(base, &paths)?;
    let tree_ids = ls_blobs(tree, &paths)?;
    for (((file, language), b), a) in files.iter().zip(before).zip(after) {
        let (Some(b), Some(a)) = (b, a) else {
            continue;
        };
        // A file the reader cannot read is `unread-code` already.
        let (Some(tb), Some(ta)) = (test_lines(*language, &b), test_lines(*language, &a)) else {
            continue;
        };
        if tb.is_empty() && ta.is_empty() {
            continue;
        }
        let (Some(old_id), Some(new_id)) = (base_ids.get(*file), tree_ids.get(*file)) else {
            continue;
        };
        let split = match language {
            Language::Rust => {
                judged_from_base(&b, &a, &tb, &ta, &diff_hunks(&old_id.id, &new_id.id)?)
            }
            Language::Python => super::doctest::from_base(&b, &a),
            // Not reached: `test_lines` reads no JavaScript (its in-source tests are unread).
            Language::JavaScript | Language::TypeScript => Split::Mixed,
        };
        match split {
            Split::Code => {}
            // What the runs would see must read as a whole file of its language still (the
            // base's lines back inside a docstring whose quotes moved would not): else mixed.
            Split::Tests(content) if test_lines(*language, &content).is_some() => {
                out.from_base.push(((*file).to_owned(), content));
            }
            Split::Tests(_) | Split::Mixed => out.mixed.push((*file).to_owned()),
        }
    }
    Ok(out)
}

/// The test lines of a Rust or Python file, as git numbers its lines; `None` when it cannot be
/// read (or is neither).
pub fn test_lines(language: Language, raw: &[u8]) -> Option<HashSet<usize>> {
    let source = match language {
        Language::Rust => source::rust(raw).ok()?,
        Language::Python => source::python(raw).ok()?,
        // vitest's in-source tests are not yet run apart (issue 69): the reading leaves a
        // changed block unread.
        Language::JavaScript | Language::TypeScript => return None,
    };
    let tree = super::parse(language, &source.text)?;
    if tree.root_node().has_error() {
        return None;
    }
    let rows = match language {
        Language::Rust => super::rust::test_rows(&source.text, tree.root_node()),
        Language::Python => super::doctest::docstrings(&source.text, tree.root_node())
            .into_iter()
            .flat_map(|d| d.rows)
            .map(|r| (r + 1, r + 1))
            .collect(),
        Language::JavaScript | Language::TypeScript => return None,
    };
    Some(
        rows.into_iter()
            .flat_map(|(from, to)| from..=to)
            .map(|row| source.git_line(row))
            .collect(),
    )
}

/// `after` with the patch's edits to test lines undone, from git's `-U0` hunks
/// `(old start, old count, new start, new count)`: a hunk all test lines (on both sides) is
/// the base's; a hunk whose base side holds no test line keeps its code lines and drops its
/// test lines; a pure deletion keeps its test lines; a change whose runs of test lines and code lines come in
/// the same order on both sides takes each test run from the base and each code run from the
/// patch. Anything else is [`Split::Mixed`].
pub fn judged_from_base(
    before: &[u8],
    after: &[u8],
    tests_before: &HashSet<usize>,
    tests_after: &HashSet<usize>,
    hunks: &[(usize, usize, usize, usize)],
) -> Split {
    let old: Vec<&[u8]> = before.split_inclusive(|b| *b == b'\n').collect();
    let new: Vec<&[u8]> = after.split_inclusive(|b| *b == b'\n').collect();
    // (first 0-based line of the new side, its count, what replaces it)
    let mut edits: Vec<(usize, usize, Vec<&[u8]>)> = Vec::new();
    for &(a, b, c, d) in hunks {
        let a0 = if b == 0 { a } else { a.saturating_sub(1) };
        let c0 = if d == 0 { c } else { c.saturating_sub(1) };
        let old_lines: Vec<(bool, &[u8])> = (a0..a0 + b)
            .map(|i| {
                (
                    tests_before.contains(&(i + 1)),
                    old.get(i).copied().unwrap_or(b""),
                )
            })
            .collect();
        let new_lines: Vec<(bool, &[u8])> = (c0..c0 + d)
            .map(|i| {
                (
                    tests_after.contains(&(i + 1)),
                    new.get(i).copied().unwrap_or(b""),
                )
            })
            .collect();
        if !old_lines.iter().chain(&new_lines).any(|(t, _)| *t) {
            continue;
        }
        let replacement: Vec<&[u8]> = if old_lines.iter().chain(&new_lines).all(|(t, _)| *t) {
            old_lines.iter().map(|(_, l)| *l).collect()
        } else if !old_lines.iter().any(|(t, _)| *t) {
            // The base has no test line here: the patch's are added, and left out.
            new_lines
                .iter()
                .filter(|(t, _)| !t)
                .map(|(_, l)| *l)
                .collect()
        } else if d == 0 {
            old_lines
                .iter()
                .filter(|(t, _)| *t)
                .map(|(_, l)| *l)
                .collect()
        } else {
            let (old_runs, new_runs) = (runs(&old_lines), runs(&new_lines));
            let kinds = |r: &[(bool, Vec<&[u8]>)]| r.iter().map(|(t, _)| *t).collect::<Vec<_>>();
            if kinds(&old_runs) != kinds(&new_runs) {
                return Split::Mixed;
            }
            old_runs
                .into_iter()
                .zip(new_runs)
                .flat_map(|((test, o), (_, n))| if test { o } else { n })
                .collect()
        };
        edits.push((c0, d, replacement));
    }
    if edits.is_empty() {
        return Split::Code;
    }
    let mut content = Vec::with_capacity(after.len());
    let mut at = 0;
    for (start, count, replacement) in edits {
        if start < at || start > new.len() {
            return Split::Mixed;
        }
        new.get(at..start)
            .unwrap_or_default()
            .iter()
            .for_each(|l| content.extend_from_slice(l));
        replacement
            .iter()
            .for_each(|l| content.extend_from_slice(l));
        at = start + count;
    }
    new.get(at..)
        .unwrap_or_default()
        .iter()
        .for_each(|l| content.extend_from_slice(l));
    Split::Tests(content)
}

/// Consecutive lines of one kind (test or code).
fn runs<'a>(lines: &[(bool, &'a [u8])]) -> Vec<(bool, Vec<&'a [u8]>)> {
    let mut out: Vec<(bool, Vec<&'a [u8]>)> = Vec::new();
    for (test, line) in lines {
        match out.last_mut() {
            Some((t, run)) if t == test => run.push(line),
            _ => out.push((*test, vec![*line])),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const BASE: &str = "/// Adds.\n///\n/// ```\n/// assert_eq!(add(1, 2), 3);\n/// ```\npub fn add(a: u32, b: u32) -> u32 {\n    a + b\n}\n\n#[cfg(test)]\nmod tests {\n    #[test]\n    fn adds() {\n        assert_eq!(super::add(2, 2), 4);\n    }\n}\n";

    fn lines(set: &HashSet<usize>) -> Vec<usize> {
        let mut v: Vec<usize> = set.iter().copied().collect();
        v.sort_unstable();
        v
    }

    /// Written from the issue: the fenced doc lines and the `#[cfg(test)]` module are test
    /// lines; the prose, the code, a `mod tests` without the attribute, `cfg(not(test))` and a
    /// string that looks like a doc comment are not.
    #[test]
    fn test_lines_are_what_only_a_test_build_runs() {
        assert_eq!(
            lines(&test_lines(Language::Rust, BASE.as_bytes()).unwrap()),
            [3, 4, 5, 10, 11, 12, 13, 14, 15, 16]
        );
        let not_tests = "mod tests {\n    pub fn f() {}\n}\n#[cfg(not(test))]\nfn g() {}\n#[tokio::test]\nasync fn h() {}\nconst S: &str = \"\n/// ```\n/// x\n/// ```\n\";\n";
        assert_eq!(
            lines(&test_lines(Language::Rust, not_tests.as_bytes()).unwrap()),
            Vec::<usize>::new()
        );
    }

    /// The base's test lines come back; the patch's code stays; a hunk that cannot be split
    /// is mixed (expectations written by hand).
    #[test]
    fn the_patch_s_code_with_the_base_s_tests() {
        let tb = test_lines(Language::Rust, BASE.as_bytes()).unwrap();
        // The bug (`a + b + 1`), its doctest and unit test edited to match.
        let patched = BASE
            .replace("    a + b\n", "    a + b + 1\n")
            .replace("add(1, 2), 3)", "add(1, 2), 4)")
            .replace("add(2, 2), 4)", "add(2, 2), 5)");
        let ta = test_lines(Language::Rust, patched.as_bytes()).unwrap();
        let hunks = [(4, 1, 4, 1), (7, 1, 7, 1), (14, 1, 14, 1)];
        assert_eq!(
            judged_from_base(BASE.as_bytes(), patched.as_bytes(), &tb, &ta, &hunks),
            Split::Tests(BASE.replace("    a + b\n", "    a + b + 1\n").into_bytes())
        );
        // Code only.
        let code = BASE.replace("    a + b\n", "    b + a\n");
        let tc = test_lines(Language::Rust, code.as_bytes()).unwrap();
        assert_eq!(
            judged_from_base(BASE.as_bytes(), code.as_bytes(), &tb, &tc, &[(7, 1, 7, 1)]),
            Split::Code
        );
        // A new documented function inserted with its doctest: the code stays, the doctest
        // goes (run as the base has it: not at all).
        let added = format!(
            "{BASE}/// Twice.\n/// ```\n/// assert_eq!(twice(2), 4);\n/// ```\npub fn twice(a: u32) -> u32 {{\n    a * 2\n}}\n"
        );
        let td = test_lines(Language::Rust, added.as_bytes()).unwrap();
        assert_eq!(
            judged_from_base(
                BASE.as_bytes(),
                added.as_bytes(),
                &tb,
                &td,
                &[(16, 0, 17, 7)]
            ),
            Split::Tests(
                format!("{BASE}/// Twice.\npub fn twice(a: u32) -> u32 {{\n    a * 2\n}}\n")
                    .into_bytes()
            )
        );
        // A code line turned into a doc line: the base has no test line there, so the run
        // has neither (the patch removed the code, its doc line is left out).
        let turned = BASE.replace("    a + b\n", "/// ```\n");
        let tt: HashSet<usize> = tb.iter().copied().chain([7]).collect();
        assert_eq!(
            judged_from_base(
                BASE.as_bytes(),
                turned.as_bytes(),
                &tb,
                &tt,
                &[(7, 1, 7, 1)]
            ),
            Split::Tests(BASE.replace("    a + b\n", "").into_bytes())
        );
        // A hunk whose test and code lines trade places (a fence line, then the signature,
        // written the other way round): mixed.
        let swapped = BASE.replace(
            "/// ```\npub fn add",
            "pub fn add(a: u32, b: u32) -> u32 {} // \n/// ```\npub fn add",
        );
        let tm: HashSet<usize> = tb.iter().copied().filter(|l| *l != 5).chain([6]).collect();
        assert_eq!(
            judged_from_base(
                BASE.as_bytes(),
                swapped.as_bytes(),
                &tb,
                &tm,
                &[(5, 2, 5, 2)]
            ),
            Split::Mixed
        );
    }
}
