//! Python doctests as test lines (issue 50): the examples in the docstrings `doctest` runs, and
//! the file a run sees when a patch edits them — the patch's code and prose with each
//! docstring's examples as the base has them. Matched docstring by docstring (by the dotted
//! name of what it documents), not hunk by hunk: an honest rewrite of a function moves its
//! code and its examples together, and a hunk-by-hunk split would call most of them mixed.

use std::collections::HashMap;

use tree_sitter::Node;

use super::syntax::{descendants, text};
use super::{Language, Split, source};

/// One docstring's doctest examples.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Docstring {
    /// What it documents: the dotted names of its classes and functions, `""` for the module.
    pub owner: String,
    /// The rows (0-based) of its examples, in order.
    pub rows: Vec<usize>,
    /// The row of its opening quotes and of its closing quotes.
    pub open_row: usize,
    pub close_row: usize,
}

/// The docstrings of a parsed Python file that `doctest` reads (the first statement of a
/// module, class or function body, a plain string: not an f-string, not bytes), each with its
/// examples: a `>>>` line, its `...` continuation lines and its expected output, up to a blank
/// line or the next `>>>`, as doctest's parser reads them; a row holding the opening or
/// closing quotes counts when example text lies on it.
pub fn docstrings(source: &[u8], root: Node<'_>) -> Vec<Docstring> {
    let lines: Vec<&[u8]> = source.split(|b| *b == b'\n').collect();
    let mut out = Vec::new();
    let mut bodies = vec![(root, String::new())];
    bodies.extend(descendants(root).filter_map(|n| match n.kind() {
        "function_definition" | "class_definition" => {
            Some((n.child_by_field_name("body")?, owner(source, n)))
        }
        _ => None,
    }));
    for (body, owner) in bodies {
        let mut cursor = body.walk();
        let Some(statement) = body
            .named_children(&mut cursor)
            .find(|c| c.kind() != "comment")
        else {
            continue;
        };
        if statement.kind() != "expression_statement" || statement.named_child_count() != 1 {
            continue;
        }
        let Some(string) = statement.named_child(0).filter(|s| s.kind() == "string") else {
            continue;
        };
        let mut cursor = string.walk();
        let parts: Vec<Node<'_>> = string.children(&mut cursor).collect();
        let (Some(open), Some(close)) = (
            parts.iter().find(|p| p.kind() == "string_start"),
            parts.iter().find(|p| p.kind() == "string_end"),
        ) else {
            continue;
        };
        let prefix = text(source, *open).to_ascii_lowercase();
        if prefix.contains('f') || prefix.contains('b') {
            continue;
        }
        let (from, to) = (open.end_position(), close.start_position());
        let mut rows = Vec::new();
        let mut in_example = false;
        for row in from.row..=to.row {
            let line = lines.get(row).copied().unwrap_or_default();
            let end = if row == to.row {
                to.column.min(line.len())
            } else {
                line.len()
            };
            let start = if row == from.row {
                from.column.min(end)
            } else {
                0
            };
            let body = line.get(start..end).unwrap_or_default().trim_ascii();
            let prompt = body.strip_prefix(b">>>");
            if prompt.is_some_and(|p| p.first().is_none_or(|b| *b == b' ')) {
                in_example = true;
            } else if body.is_empty() {
                in_example = false;
            }
            if in_example && !body.is_empty() {
                rows.push(row);
            }
        }
        out.push(Docstring {
            owner,
            rows,
            open_row: from.row,
            close_row: to.row,
        });
    }
    out
}

/// The dotted name of a class or function: its enclosing classes' and functions' names, then
/// its own.
fn owner(source: &[u8], definition: Node<'_>) -> String {
    let mut names: Vec<&str> = std::iter::successors(Some(definition), |n| n.parent())
        .filter(|n| matches!(n.kind(), "function_definition" | "class_definition"))
        .filter_map(|n| n.child_by_field_name("name").map(|name| text(source, name)))
        .collect();
    names.reverse();
    names.join(".")
}

/// A Python file read for its docstrings: its raw lines as git splits them, and its docstrings.
struct Read<'a> {
    lines: Vec<&'a [u8]>,
    docstrings: Vec<Docstring>,
}

impl<'a> Read<'a> {
    /// `None` when the reader cannot read it, or when its lines are not git's one for one (a
    /// bare carriage return ends a line for CPython, not for git).
    fn of(raw: &'a [u8]) -> Option<Read<'a>> {
        let source = source::python(raw).ok()?;
        let tree = super::parse(Language::Python, &source.text)?;
        if tree.root_node().has_error() {
            return None;
        }
        let body = raw.strip_prefix(b"\xef\xbb\xbf").unwrap_or(raw);
        let lines: Vec<&[u8]> = raw.split_inclusive(|b| *b == b'\n').collect();
        let count = source.text.split(|b| *b == b'\n').count();
        if body.split(|b| *b == b'\n').count() != count {
            return None;
        }
        Some(Read {
            lines,
            docstrings: docstrings(&source.text, tree.root_node()),
        })
    }

    /// The example lines of `d`, as the file has them.
    fn examples(&self, d: &Docstring) -> Vec<&'a [u8]> {
        d.rows
            .iter()
            .map(|r| self.lines.get(*r).copied().unwrap_or_default())
            .collect()
    }

    /// Each owner's docstrings (more than one: a property and its setter, a definition in
    /// each branch of an `if`).
    fn by_owner(&self) -> HashMap<&str, Vec<&Docstring>> {
        let mut map: HashMap<&str, Vec<&Docstring>> = HashMap::new();
        for d in &self.docstrings {
            map.entry(d.owner.as_str()).or_default().push(d);
        }
        map
    }

    /// The examples of `docstrings` that have any, each docstring's lines together.
    fn examples_of(&self, docstrings: &[&Docstring]) -> Vec<Vec<&'a [u8]>> {
        docstrings
            .iter()
            .filter(|d| !d.rows.is_empty())
            .map(|d| self.examples(d))
            .collect()
    }
}

/// How many pairs of a vanished and a new owner the rename search compares at most, and how
/// many bytes of their examples: each pair costs at most those bytes, so the search is bounded
/// whatever the patch (an honest rename is a few owners and a few kilobytes).
const MAX_RENAME_PAIRS: usize = 256;
const MAX_RENAME_BYTES: usize = 1 << 20;

/// The last name of a dotted owner.
fn last(owner: &str) -> &str {
    owner.rsplit('.').next().unwrap_or(owner)
}

/// Example blocks as owned lines.
fn owned(blocks: Vec<Vec<&[u8]>>) -> Vec<Vec<Vec<u8>>> {
    blocks
        .into_iter()
        .map(|b| b.into_iter().map(<[u8]>::to_vec).collect())
        .collect()
}

/// `blocks` with the name `from` (a whole identifier) written `to`.
fn renamed(blocks: &[Vec<&[u8]>], from: &str, to: &str) -> Vec<Vec<Vec<u8>>> {
    let ident =
        |c: Option<&u8>| c.is_some_and(|c| c.is_ascii_alphanumeric() || *c == b'_' || *c >= 0x80);
    let (from, to) = (from.as_bytes(), to.as_bytes());
    // A name is an identifier: one longer than any honest one is not looked for (so the scan
    // stays linear in the examples).
    let from: &[u8] = if from.len() > 256 { b"" } else { from };
    blocks
        .iter()
        .map(|b| {
            b.iter()
                .map(|line| {
                    let mut out = Vec::with_capacity(line.len());
                    let mut i = 0;
                    while let Some(rest) = line.get(i..).filter(|r| !r.is_empty()) {
                        if !from.is_empty()
                            && rest.starts_with(from)
                            && !ident(i.checked_sub(1).and_then(|p| line.get(p)))
                            && !ident(line.get(i + from.len()))
                        {
                            out.extend_from_slice(to);
                            i += from.len();
                        } else {
                            out.extend(rest.first());
                            i += 1;
                        }
                    }
                    out
                })
                .collect()
        })
        .collect()
}

/// `after` with each docstring's examples as `before` has them: where the patch changed a
/// docstring's examples, its examples are left out and the base's put where its first one
/// was (or, with none, before the closing quotes), a blank line after them when prose
/// follows; a docstring the base does not have loses its examples (a new function's doctest
/// is not run, like a test file the patch adds). [`Split::Mixed`] when that cannot be said
/// safely: a docstring with examples the patch removes with what it documents (or documents
/// twice: not moved whole to a new name), examples on a row with the quotes, examples to put into a one-line docstring, a
/// file either side cannot read.
pub fn from_base(before: &[u8], after: &[u8]) -> Split {
    let (Some(b), Some(a)) = (Read::of(before), Read::of(after)) else {
        return Split::Mixed;
    };
    let (base, patch) = (b.by_owner(), a.by_owner());
    let mut owners: Vec<&str> = base.keys().chain(patch.keys()).copied().collect();
    owners.sort_unstable();
    owners.dedup();
    // A docstring moved whole to a new name, its examples as they were (`pairwise` renamed
    // `_pairwise`) or calling it by its new name and nothing else changed (toolz's `iterable`
    // renamed `isiterable`): the same tests, unchanged.
    // Bounded ([`MAX_RENAME_PAIRS`], [`MAX_RENAME_BYTES`]): past them no rename is looked for,
    // and a vanished owner's examples make the file mixed, never passed.
    let mut moved: std::collections::HashSet<&str> = std::collections::HashSet::new();
    let bytes = |read: &Read<'_>, docs: &[&Docstring]| -> usize {
        read.examples_of(docs)
            .iter()
            .flatten()
            .map(|l| l.len())
            .sum()
    };
    let (mut vanished, mut new_owners, mut size) = (0usize, 0usize, 0usize);
    for (o, bl) in &base {
        if !patch.contains_key(o) {
            vanished += 1;
            size += bytes(&b, bl);
        }
    }
    for (o, pl) in &patch {
        if !base.contains_key(o) {
            new_owners += 1;
            size += bytes(&a, pl);
        }
    }
    let search =
        vanished.saturating_mul(new_owners) <= MAX_RENAME_PAIRS && size <= MAX_RENAME_BYTES;
    for (old, bl) in &base {
        let examples = b.examples_of(bl);
        if !search || examples.is_empty() || patch.contains_key(old) {
            continue;
        }
        if let Some((new, _)) = patch.iter().find(|(new, pl)| {
            !base.contains_key(*new) && !moved.contains(*new) && {
                let theirs = a.examples_of(pl);
                theirs == examples || renamed(&examples, last(old), last(new)) == owned(theirs)
            }
        }) {
            moved.extend([*old, *new]);
        }
    }
    owners.retain(|o| !moved.contains(o));
    // Rows of the patch's file left out, and the base's examples put before a row.
    let mut removed = std::collections::HashSet::new();
    let mut inserted: HashMap<usize, Vec<&[u8]>> = HashMap::new();
    for owner in owners {
        let (bl, pl) = (
            base.get(owner).cloned().unwrap_or_default(),
            patch.get(owner).cloned().unwrap_or_default(),
        );
        let base_examples = b.examples_of(&bl);
        if base_examples == a.examples_of(&pl) {
            continue;
        }
        // Examples on a row with the quotes cannot move without them.
        let on_quotes =
            |d: &&Docstring| d.rows.iter().any(|r| *r == d.open_row || *r == d.close_row);
        if bl.iter().chain(&pl).any(on_quotes) {
            return Split::Mixed;
        }
        pl.iter()
            .for_each(|d| removed.extend(d.rows.iter().copied()));
        let (d, block) = match (base_examples.as_slice(), pl.as_slice()) {
            // New examples: not run, like a test file the patch adds.
            ([], _) => continue,
            ([one], [d]) => (*d, one.clone()),
            // Removed with what they document, or documented more than once: a human decides.
            _ => return Split::Mixed,
        };
        let at = match d.rows.first() {
            Some(first) => *first,
            None if d.close_row > d.open_row => d.close_row,
            None => return Split::Mixed,
        };
        // Prose on the next row that stays needs a blank line first, or doctest reads it as
        // the examples' expected output.
        let mut block = block;
        // (`rows` is in order.)
        if let Some(next) = (at..=d.close_row).find(|r| d.rows.binary_search(r).is_err()) {
            let line = a.lines.get(next).copied().unwrap_or_default().trim_ascii();
            let closing_only = next == d.close_row
                && line
                    .iter()
                    .all(|c| matches!(c, b'"' | b'\'') || c.is_ascii_whitespace());
            if !line.is_empty() && !closing_only {
                block.push(b"\n");
            }
        }
        inserted.insert(at, block);
    }
    if removed.is_empty() && inserted.is_empty() {
        return Split::Code;
    }
    let mut content = Vec::with_capacity(after.len());
    for (row, line) in a.lines.iter().enumerate() {
        for l in inserted.get(&row).into_iter().flatten() {
            content.extend_from_slice(l);
            if !l.ends_with(b"\n") {
                content.push(b'\n');
            }
        }
        if !removed.contains(&row) {
            content.extend_from_slice(line);
        }
    }
    Split::Tests(content)
}

#[cfg(test)]
mod tests {
    use super::*;

    const BASE: &str = r#""""Prices.

>>> half(10)
5.0
"""


def half(x):
    """Half of x.

    >>> half(4)
    2.0
    >>> [half(v)
    ...  for v in (2, 6)]
    [1.0, 3.0]

    Not an example: >>> in prose.
    """
    return x / 2


def g():
    x = 1
    """>>> not a docstring"""
    return f""">>> {x}"""


class C:
    # a comment first
    r""">>> C()
    <C>"""
"#;

    fn lines(raw: &str) -> Vec<usize> {
        let mut v: Vec<usize> = super::super::in_file::test_lines(Language::Python, raw.as_bytes())
            .unwrap()
            .into_iter()
            .collect();
        v.sort_unstable();
        v
    }

    fn run(before: &str, after: &str) -> Split {
        from_base(before.as_bytes(), after.as_bytes())
    }

    fn tests(content: &str) -> Split {
        Split::Tests(content.as_bytes().to_vec())
    }

    /// Written from doctest's rules: the examples of the module's, a function's and a class's
    /// docstring (prompt, continuation, expected output, up to a blank line) are test lines,
    /// a quote row too when example text lies on it; prose, a `>>>` inside prose, a string
    /// that is not the first statement and an f-string are not.
    #[test]
    fn doctest_examples_are_test_lines() {
        assert_eq!(lines(BASE), [3, 4, 11, 12, 13, 14, 15, 30, 31]);
    }

    /// A bug with its doctest edited to match: the run sees the patch's code and the base's
    /// example; code alone, or prose alone, is no test edit.
    #[test]
    fn an_edited_example_comes_back_from_the_base() {
        let bug = BASE.replace("    return x / 2\n", "    return x / 2 + 1\n");
        assert_eq!(
            run(BASE, &bug.replace("    2.0\n", "    3.0\n")),
            tests(&bug)
        );
        assert_eq!(run(BASE, &bug), Split::Code);
        assert_eq!(
            run(BASE, &BASE.replace("Half of x.", "Half of any x.")),
            Split::Code
        );
    }

    /// An honest rewrite (as more-itertools' running_mean gained `maxlen`): the function's
    /// code, prose and examples all change together; the run sees the new code and prose with
    /// the base's examples where the new ones were, a blank line before the prose after them.
    #[test]
    fn a_rewritten_function_keeps_its_prose_and_takes_the_base_s_examples() {
        let base = "def mean(xs):\n    \"\"\"Mean.\n\n    >>> mean([1, 3])\n    2.0\n    \"\"\"\n    return sum(xs) / len(xs)\n";
        let patch = "def mean(xs, *, w=None):\n    \"\"\"Mean, or of a window.\n\n    For example:\n\n        >>> mean([1, 3], w=1)\n        3.0\n\n    Windows of *w* values.\n    \"\"\"\n    xs = xs[-w:] if w else xs\n    return sum(xs) / len(xs)\n";
        let judged = "def mean(xs, *, w=None):\n    \"\"\"Mean, or of a window.\n\n    For example:\n\n    >>> mean([1, 3])\n    2.0\n\n    Windows of *w* values.\n    \"\"\"\n    xs = xs[-w:] if w else xs\n    return sum(xs) / len(xs)\n";
        assert_eq!(run(base, patch), tests(judged));
        // Examples where the base had none: not run (a new test), the prose stays.
        let plain = "def mean(xs):\n    \"\"\"Mean.\"\"\"\n    return sum(xs) / len(xs)\n";
        let documented = "def mean(xs):\n    \"\"\"Mean.\n\n    >>> mean([2])\n    2.0\n    \"\"\"\n    return sum(xs) / len(xs)\n";
        assert_eq!(
            run(plain, documented),
            tests("def mean(xs):\n    \"\"\"Mean.\n\n    \"\"\"\n    return sum(xs) / len(xs)\n")
        );
        // The base's examples into a docstring that lost its own, before its closing quotes.
        assert_eq!(
            run(
                documented,
                "def mean(xs):\n    \"\"\"Mean.\n\n    \"\"\"\n    return 0\n"
            ),
            tests(
                "def mean(xs):\n    \"\"\"Mean.\n\n    >>> mean([2])\n    2.0\n    \"\"\"\n    return 0\n"
            )
        );
        // ... and when prose shares the closing quotes' row, a blank line keeps it prose.
        assert_eq!(
            run(
                documented,
                "def mean(xs):\n    \"\"\"Mean.\n\n    Now faster.\"\"\"\n    return 0\n"
            ),
            tests(
                "def mean(xs):\n    \"\"\"Mean.\n\n    >>> mean([2])\n    2.0\n\n    Now faster.\"\"\"\n    return 0\n"
            )
        );
        // A new function with its doctest: the code stays, the examples go.
        let added = format!(
            "{plain}\n\ndef one():\n    \"\"\"\n    >>> one()\n    1\n    \"\"\"\n    return 1\n"
        );
        assert_eq!(
            run(plain, &added),
            tests(&format!(
                "{plain}\n\ndef one():\n    \"\"\"\n    \"\"\"\n    return 1\n"
            ))
        );
    }

    /// What cannot be said safely is mixed (a scope hit, a human decides): a function removed
    /// with its examples, one documented twice whose examples change, examples on a quote row
    /// that change, the base's examples with only a one-line docstring to go in.
    #[test]
    fn what_cannot_move_safely_is_mixed() {
        let documented = "def mean(xs):\n    \"\"\"Mean.\n\n    >>> mean([2])\n    2.0\n    \"\"\"\n    return sum(xs) / len(xs)\n";
        assert_eq!(run(documented, "X = 1\n"), Split::Mixed);
        // Moved whole to a new name, its examples as they were or calling it by the new
        // name: no test edited.
        let renamed = documented.replace("def mean(xs)", "def _mean(xs)");
        assert_eq!(run(documented, &renamed), Split::Code);
        assert_eq!(
            run(documented, &renamed.replace(">>> mean(", ">>> _mean(")),
            Split::Code
        );
        // Renamed, and its expected output changed too: mixed.
        assert_eq!(
            run(
                documented,
                &renamed
                    .replace(">>> mean(", ">>> _mean(")
                    .replace("    2.0\n", "    3.0\n")
            ),
            Split::Mixed
        );
        // A name inside another identifier is not the name.
        assert_eq!(
            run(documented, &renamed.replace(">>> mean(", ">>> xmean(")),
            Split::Mixed
        );
        let twice = "if A:\n    def f():\n        \"\"\"\n        >>> f()\n        1\n        \"\"\"\n        return 1\nelse:\n    def f():\n        \"\"\"\n        >>> f()\n        1\n        \"\"\"\n        return 1\n";
        assert_eq!(
            run(
                twice,
                &twice.replacen("        1\n        \"\"\"", "        2\n        \"\"\"", 1)
            ),
            Split::Mixed
        );
        assert_eq!(
            run(twice, &twice.replace("return 1", "return 2")),
            Split::Code
        );
        assert_eq!(
            run(BASE, &BASE.replace("    <C>\"\"\"", "    <D>\"\"\"")),
            Split::Mixed
        );
        assert_eq!(
            run(
                documented,
                "def mean(xs):\n    \"\"\"Mean.\"\"\"\n    return 0\n"
            ),
            Split::Mixed
        );
        // Past the rename search's bounds (here 300 owners renamed at once: 90,000 pairs),
        // no rename is looked for: mixed, never passed.
        let many: String = (0..300)
            .map(|i| {
                format!(
                    "def f{i}():\n    \"\"\"\n    >>> f{i}()\n    1\n    \"\"\"\n    return 1\n\n\n"
                )
            })
            .collect();
        assert_eq!(run(&many, &many.replace("def f", "def g")), Split::Mixed);
        assert_eq!(
            run(&many, &many.replacen("def f7()", "def g7()", 1)),
            Split::Code
        );
        // A file either side cannot read.
        assert_eq!(run(documented, "def mean(:\n"), Split::Mixed);
    }
}
