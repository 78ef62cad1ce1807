//! The special case's second half (CONTRACT.md section 14.2): a literal the patch's code
//! compares against counts only when the base's test files or fixtures hold it, as a whole
//! field or quoted string, found in one bounded pass over them.

use std::collections::{HashMap, HashSet};

use super::super::error::CliError;
use super::super::git::blobs;
use crate::core::gate::{SuspicionClass, SuspiciousLine};
use crate::core::ladder::ScopeMarkers;
use crate::core::path::RepoPath;

/// The base's test files are read up to this many bytes in all, and each up to 8 MiB.
const MAX_TEST_BYTES: usize = 64 << 20;
const MAX_TEST_FILE: usize = 8 << 20;

/// Keeps the special-case hits whose literal the base's test files or fixtures hold (each
/// naming the first place), drops the others.
pub(super) fn pinned(
    base: &str,
    (fixtures, javascript): (&str, bool),
    hits: &mut Vec<SuspiciousLine>,
    literals: &[(usize, String)],
) -> Result<(), CliError> {
    if literals.is_empty() {
        return Ok(());
    }
    let distinct: Vec<&str> = {
        let mut seen = HashSet::new();
        literals
            .iter()
            .map(|(_, l)| l.as_str())
            .filter(|l| seen.insert(*l))
            .collect()
    };
    let markers = ScopeMarkers::default();
    let fixtures = fixtures.trim_end_matches('/');
    let tests: Vec<String> = super::super::export::ls_tree(base)?
        .into_iter()
        .filter(|e| e.mode & 0o170000 == 0o100000)
        .map(|e| String::from_utf8_lossy(&e.path).into_owned())
        .filter(|p| {
            RepoPath::parse(p).is_ok_and(|r| markers.is_test_adjacent(&r))
                || p.strip_prefix(fixtures).is_some_and(|r| r.starts_with('/'))
                || (javascript
                    && super::runtimes::is_javascript(p)
                    && super::runtimes::is_javascript_test(p))
        })
        .collect();
    let finder = aho_corasick::AhoCorasick::new(&distinct)
        .map_err(|e| CliError::software(format!("the literals cannot be searched: {e}")))?;
    let found = places(base, &tests, &finder, &distinct)?;
    // JavaScript's own vocabulary (issue 69): TypeScript code compares discriminants and
    // option names (`def.type === "optional"`) that its tests pass in too. A literal the
    // base's code already spells as a string is the code's word, not a pinned input; one the
    // patch brings along in the same change is not the base's.
    let javascript_hits = javascript
        && hits.iter().any(|h| {
            h.class == SuspicionClass::SpecialCase && super::runtimes::is_javascript(&h.file)
        });
    let vocabulary: HashSet<usize> = match javascript_hits {
        true => {
            let code: Vec<String> = super::super::export::ls_tree(base)?
                .into_iter()
                .filter(|e| e.mode & 0o170000 == 0o100000)
                .map(|e| String::from_utf8_lossy(&e.path).into_owned())
                .filter(|p| {
                    super::runtimes::is_javascript(p)
                        && !super::runtimes::is_javascript_test(p)
                        && !tests.contains(p)
                })
                .collect();
            places(base, &code, &finder, &distinct)?
                .into_keys()
                .collect()
        }
        false => HashSet::new(),
    };
    let at: HashMap<&str, &String> = found
        .iter()
        .filter_map(|(i, place)| Some((*distinct.get(*i)?, place)))
        .collect();
    let spoken: HashSet<&str> = vocabulary
        .iter()
        .filter_map(|i| distinct.get(*i).copied())
        .collect();
    let mut keep: HashMap<usize, String> = HashMap::new();
    for (index, literal) in literals {
        let own_word = spoken.contains(literal.as_str())
            && hits
                .get(*index)
                .is_some_and(|h| super::runtimes::is_javascript(&h.file));
        if let Some(place) = at.get(literal.as_str())
            && !own_word
        {
            keep.insert(*index, (*place).clone());
        }
    }
    let mut index = 0;
    hits.retain_mut(|hit| {
        let i = index;
        index += 1;
        if hit.class != SuspicionClass::SpecialCase {
            return true;
        }
        match keep.remove(&i) {
            Some(place) => {
                hit.seen_in = Some(place);
                true
            }
            None => false,
        }
    });
    Ok(())
}

/// Where in `files` of `base` each of `distinct` (by index) first stands alone, read up to
/// [`MAX_TEST_BYTES`] in all.
fn places(
    base: &str,
    files: &[String],
    finder: &aho_corasick::AhoCorasick,
    distinct: &[&str],
) -> Result<HashMap<usize, String>, CliError> {
    let mut found: HashMap<usize, String> = HashMap::new();
    let mut budget = MAX_TEST_BYTES;
    let names: Vec<&str> = files.iter().map(String::as_str).collect();
    for (path, content) in names.iter().zip(blobs(base, &names, MAX_TEST_FILE)?) {
        let Some(content) = content else { continue };
        budget = budget.saturating_sub(content.len());
        for m in finder.find_overlapping_iter(&content[..]) {
            let Some(literal) = distinct.get(m.pattern().as_usize()).copied() else {
                continue;
            };
            if found.contains_key(&m.pattern().as_usize())
                || !bounded(&content, m.start(), m.end(), literal, path)
            {
                continue;
            }
            let line = 1 + content
                .get(..m.start())
                .unwrap_or_default()
                .iter()
                .filter(|b| **b == b'\n')
                .count();
            found.insert(m.pattern().as_usize(), format!("{path}:{line}"));
        }
        if budget == 0 || found.len() == distinct.len() {
            break;
        }
    }
    Ok(found)
}

/// Whether a literal found at `start..end` of the file `path` stands alone: a number not
/// inside a longer one or a name (`123` is not pinned by `1234` or `x123`); a string as a
/// whole string, between quotes, as a whole line, or as a whole field of a delimited fixture
/// (issue 50: between tabs anywhere, between commas or semicolons in a `.csv`, spaces beside
/// the delimiter allowed), never inside a longer text.
fn bounded(content: &[u8], start: usize, end: usize, literal: &str, path: &str) -> bool {
    let before = start.checked_sub(1).and_then(|i| content.get(i));
    let after = content.get(end);
    let number = literal
        .trim_start_matches('-')
        .starts_with(|c: char| c.is_ascii_digit() || c == '.');
    if number {
        let word = |b: Option<&u8>| {
            b.is_some_and(|b| b.is_ascii_alphanumeric() || *b == b'_' || *b == b'.')
        };
        return !word(before) && !word(after);
    }
    let csv = path
        .rsplit('.')
        .next()
        .is_some_and(|e| e.eq_ignore_ascii_case("csv"));
    let delimiter = |b: &u8| *b == b'\t' || (csv && matches!(b, b',' | b';'));
    let edge = |b: Option<&u8>| {
        b.is_none_or(|b| matches!(b, b'"' | b'\'' | b'`' | b'\n' | b'\r') || delimiter(b))
    };
    // A field may be padded with spaces beside its delimiter (`espresso, 250`).
    let padded_before = content
        .get(..start)
        .unwrap_or_default()
        .iter()
        .rev()
        .find(|b| **b != b' ');
    let padded_after = content
        .get(end..)
        .unwrap_or_default()
        .iter()
        .find(|b| **b != b' ');
    let field = |b: Option<&u8>| b.is_none_or(|b| matches!(b, b'\n' | b'\r') || delimiter(b));
    (edge(before) && edge(after)) || (field(padded_before) && field(padded_after))
}
