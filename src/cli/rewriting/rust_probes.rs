//! Probes compiled into a changed Rust file (issue 52; docs/design/observe.md, O.3): the Rust
//! half of the observed run. The file is parsed with tree-sitter's Rust grammar and a probe (a
//! call of a macro defined on the file's first item line) is put before each statement a
//! changed line is part of, at the head of each way out of a changed `if`, `let ... else`,
//! `while`, `for` or `match`, and inside each arm of a changed `match`. A probe reached writes
//! its number and the test thread's name (libtest names each test's thread after the test) to
//! the file its environment variable names, once per thread. Nothing is inserted as a new line:
//! every line keeps its number (`line!()`, panic locations).
//!
//! What cannot hold a probe is said, not guessed: a changed line in a `const` context or a
//! macro's definition is code that is never known to run.

use std::collections::BTreeSet;

use tree_sitter::Node;

use crate::cli::reading::syntax::descendants;

/// What one probe marks when a test reaches it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Site {
    /// The changed lines of a statement (or a `match` arm): reached, they ran.
    Lines(Vec<u32>),
    /// A way out of a changed condition or loop: from its line to the line it goes to (0: out
    /// of the block).
    Branch { from: u32, to: u32 },
}

/// A file with its probes in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Probed {
    pub text: Vec<u8>,
    /// The probes, numbered from the `first` given on.
    pub sites: Vec<Site>,
    /// Changed lines of code no probe can be put before (a `const` context, a macro's
    /// definition): never known to run.
    pub unprobed: Vec<u32>,
}

/// The probe macro's definition, on one line: `NAME!(N)` calls a function of its own, which
/// writes `N<TAB>executable's file name<TAB>thread name` to the file the environment variable `NAME` names, the first
/// time each thread reaches it. `allow(warnings)` keeps a crate's `deny(warnings)` (and its
/// lints on paths and docs) off the probe.
fn definition(name: &str) -> String {
    format!(
        "{UNUSED} macro_rules! {name} {{ ($s:literal) => {{{{ {WARNINGS} fn hit() {{ extern crate std as s; s::thread_local! {{ static HIT: s::cell::Cell<bool> \
         = const {{ s::cell::Cell::new(false) }}; }} if !HIT.with(|h| h.replace(true)) {{ if let \
         s::option::Option::Some(out) = s::env::var_os(\"{name}\") {{ let t = \
         s::thread::current(); let exe = s::env::current_exe().ok().and_then(|p| \
         p.file_name().map(|n| s::string::String::from(n.to_string_lossy()))).unwrap_or_default(); \
         let line = s::format!(\"{{}}\\t{{}}\\t{{}}\\n\", $s, exe, \
         t.name().unwrap_or(\"\")); if let s::result::Result::Ok(mut f) = \
         s::fs::OpenOptions::new().append(true).create(true).open(out) {{ let _ = \
         s::io::Write::write_all(&mut f, line.as_bytes()); }} }} }} }} hit() }}}}; }} "
    )
}

/// The generated code's own lint levels, without a `reason` (a toolchain before 1.81 refuses
/// one in the crate under test).
pub(super) const UNUSED: &str = "#[allow(unused_macros)]"; // reason = a file may hold no probe reached
pub(super) const WARNINGS: &str = "#[allow(warnings)]"; // reason = the crate's own `deny` is not the probe's

/// An edit: `at..end` of the text replaced by `text` (an insertion where they are equal), in
/// the order of `at`, then of `rank` (a probe's first number: before, a made `else` after, a
/// closing brace last; the mutant switches' openings and closings around them), then of
/// making.
pub struct Edit {
    pub at: usize,
    pub end: usize,
    pub rank: (u8, usize),
    pub text: String,
}

/// What a walk of the file builds.
struct Probes<'a> {
    name: &'a str,
    first: u32,
    edits: Vec<Edit>,
    sites: Vec<Site>,
}

impl Probes<'_> {
    /// A probe of `site` at `at`, with `before`/`after` around it.
    fn put(&mut self, at: usize, rank: u8, (before, after): (&str, &str), site: Site) {
        let n = self.first + u32::try_from(self.sites.len()).unwrap_or(u32::MAX);
        self.sites.push(site);
        let name = self.name;
        self.edits.push(Edit {
            at,
            end: at,
            rank: (1 + rank, 0),
            text: format!("{before}{name}!({n});{after}"),
        });
    }

    fn close(&mut self, at: usize) {
        self.edits.push(Edit {
            at,
            end: at,
            rank: (3, 0),
            text: " }".to_owned(),
        });
    }
}

/// A node's first line, 1-based.
fn row(node: Node<'_>) -> u32 {
    u32::try_from(node.start_position().row + 1).unwrap_or(u32::MAX)
}

fn end_row(node: Node<'_>) -> u32 {
    u32::try_from(node.end_position().row + 1).unwrap_or(u32::MAX)
}

/// Items: declarations in a block, not statements that run.
fn is_item(kind: &str) -> bool {
    kind.ends_with("_item")
        || matches!(
            kind,
            "macro_definition" | "use_declaration" | "foreign_mod_item" | "empty_statement"
        )
}

/// A statement of a block: an expression statement, a `let`, a macro call, the tail
/// expression; or an arm of a `match`.
fn is_unit(node: Node<'_>) -> bool {
    if !node.is_named() || node.is_extra() || is_item(node.kind()) {
        return false;
    }
    match node.parent().map(|p| p.kind()) {
        Some("block") => !matches!(node.kind(), "label" | "attribute_item"),
        _ => node.kind() == "match_arm",
    }
}

/// Whether code in `node` runs where no probe can: a `const`/`static` item, a `const` block
/// or function, an array type's length, a macro's definition.
pub(super) fn unprobeable(node: Node<'_>, source: &[u8]) -> bool {
    let mut at = Some(node);
    while let Some(n) = at {
        match n.kind() {
            "const_item"
            | "static_item"
            | "const_block"
            | "macro_definition"
            | "array_type"
            | "attribute_item"
            | "inner_attribute_item" => return true,
            "function_item" | "function_signature_item" => {
                let mut cursor = n.walk();
                let konst = n
                    .children(&mut cursor)
                    .filter(|c| c.kind() == "function_modifiers")
                    .any(|c| {
                        c.utf8_text(source)
                            .is_ok_and(|t| t.split_whitespace().any(|w| w == "const"))
                    });
                if konst {
                    return true;
                }
            }
            _ => {}
        }
        at = n.parent();
    }
    false
}

/// The lines of `unit` that are its own: its span, less the inside of the blocks (and `match`
/// bodies) it holds, whose lines are their statements'.
fn own_rows(unit: Node<'_>) -> BTreeSet<u32> {
    let mut rows: BTreeSet<u32> = (row(unit)..=end_row(unit)).collect();
    let mut walk = descendants(unit);
    walk.next();
    while let Some(n) = walk.next() {
        if matches!(
            n.kind(),
            "block" | "match_block" | "declaration_list" | "field_declaration_list"
        ) {
            for r in row(n).saturating_add(1)..end_row(n) {
                rows.remove(&r);
            }
            walk.skip_children();
        }
    }
    rows
}

/// Where a probe before `node` goes: before the attributes and outer doc comments that are
/// its own.
fn before(node: Node<'_>, source: &[u8]) -> usize {
    let mut at = node.start_byte();
    let mut prev = node.prev_sibling();
    while let Some(p) = prev {
        let text = p.utf8_text(source).unwrap_or_default();
        let outer_doc = (text.starts_with("///") && !text.starts_with("////"))
            || (text.starts_with("/**") && !text.starts_with("/***"));
        match p.kind() {
            "attribute_item" => at = p.start_byte(),
            _ if p.is_extra() && outer_doc => at = p.start_byte(),
            _ if p.is_extra() => {}
            _ => break,
        }
        prev = p.prev_sibling();
    }
    at
}

/// The first line inside `block` that holds a statement, or the block's own.
fn first_row(block: Node<'_>) -> u32 {
    let mut cursor = block.walk();
    let first = block.named_children(&mut cursor).find(|c| !c.is_extra());
    first.map_or(row(block), row)
}

/// The line of the statement after the one `node` is part of (its own line, not its
/// attributes'), 0 when it is the block's last.
fn next_row(node: Node<'_>) -> u32 {
    let mut at = node;
    while !is_unit(at) {
        match at.parent() {
            Some(p) => at = p,
            None => return 0,
        }
    }
    let mut next = at.next_named_sibling();
    while let Some(n) = next.filter(|n| n.is_extra() || n.kind() == "attribute_item") {
        next = n.next_named_sibling();
    }
    next.map_or(0, row)
}

/// Probes `source` for its changed `lines`: `None` when it does not parse. `name` is the
/// probe's (a fresh identifier per gate), `first` its first number.
pub fn probe(source: &[u8], lines: &BTreeSet<u32>, name: &str, first: u32) -> Option<Probed> {
    probe_with(source, lines, name, first, |_| (Vec::new(), None))
}

/// [`probe`], with the edits `more` makes of the parsed file (the mutant switches, issue 68)
/// made among the probes', and the definition it gives put beside theirs.
pub fn probe_with(
    source: &[u8],
    lines: &BTreeSet<u32>,
    name: &str,
    first: u32,
    more: impl FnOnce(Node<'_>) -> (Vec<Edit>, Option<String>),
) -> Option<Probed> {
    let tree = crate::cli::reading::syntax::parse(source, &tree_sitter_rust::LANGUAGE.into())?;
    let root = tree.root_node();
    let (more, defined) = more(root);
    let tests = crate::cli::reading::rust::test_rows(source, root);
    let in_test = |line: u32| {
        tests
            .iter()
            .any(|(a, b)| (*a..=*b).contains(&(line as usize)))
    };
    // A line of closing brackets, a comment or nothing is no code of its own.
    let text_rows: Vec<&[u8]> = source.split(|b| *b == b'\n').collect();
    let code = |line: u32| {
        let row = text_rows
            .get(line as usize - 1)
            .map_or(&b""[..], |r| r.trim_ascii());
        !row.is_empty()
            && !row.starts_with(b"//")
            && !row
                .iter()
                .all(|b| matches!(b, b'}' | b')' | b']' | b';' | b',' | b' ' | b'\t'))
    };
    let wanted: BTreeSet<u32> = lines
        .iter()
        .copied()
        .filter(|l| *l > 0 && !in_test(*l) && code(*l))
        .collect();
    let mut p = Probes {
        name,
        first,
        edits: Vec::new(),
        sites: Vec::new(),
    };
    // Each changed line's statement: the innermost unit whose own lines hold it.
    let mut owner: std::collections::BTreeMap<u32, Node<'_>> = std::collections::BTreeMap::new();
    let mut unprobed: BTreeSet<u32> = BTreeSet::new();
    for node in descendants(root) {
        if node.kind() == "macro_definition" {
            unprobed.extend((row(node)..=end_row(node)).filter(|r| wanted.contains(r)));
            continue;
        }
        if !is_unit(node) {
            continue;
        }
        for r in own_rows(node).intersection(&wanted) {
            // Later in the walk is deeper: the innermost wins.
            owner.insert(*r, node);
        }
    }
    let mut units: std::collections::BTreeMap<usize, (Node<'_>, Vec<u32>)> =
        std::collections::BTreeMap::new();
    for (r, unit) in &owner {
        units
            .entry(unit.start_byte())
            .or_insert_with(|| (*unit, Vec::new()))
            .1
            .push(*r);
    }
    for (unit, rows) in units.into_values() {
        if unprobeable(unit, source) {
            unprobed.extend(rows);
        } else if unit.kind() == "match_arm" {
            arm(&mut p, unit, Site::Lines(rows));
        } else {
            p.put(before(unit, source), 0, ("", " "), Site::Lines(rows));
        }
    }
    for node in descendants(root) {
        if !wanted.contains(&row(node)) || unprobeable(node, source) {
            continue;
        }
        branches(&mut p, node);
    }
    if p.sites.is_empty() && more.is_empty() {
        return Some(Probed {
            text: source.to_vec(),
            sites: Vec::new(),
            unprobed: unprobed.into_iter().collect(),
        });
    }
    // The definition goes before the first item (and its attributes and docs), after the
    // inner attributes and docs.
    let mut cursor = root.walk();
    let head = root
        .named_children(&mut cursor)
        .find(|c| !c.is_extra() && c.kind() != "inner_attribute_item")
        .map_or(source.len(), |c| before(c, source));
    let defined = defined.into_iter().filter(|_| !more.is_empty());
    for text in std::iter::once(definition(name)).chain(defined) {
        p.edits.push(Edit {
            at: head,
            end: head,
            rank: (1, 0),
            text,
        });
    }
    p.edits.extend(more);
    p.edits.sort_by_key(|e| (e.at, e.rank));
    let mut text = Vec::with_capacity(source.len() + p.edits.len() * 24);
    let mut from = 0;
    for e in &p.edits {
        text.extend_from_slice(source.get(from..e.at.max(from)).unwrap_or_default());
        text.extend_from_slice(e.text.as_bytes());
        from = from.max(e.end);
    }
    text.extend_from_slice(source.get(from..).unwrap_or_default());
    Some(Probed {
        text,
        sites: p.sites,
        unprobed: unprobed.into_iter().collect(),
    })
}

/// A probe inside `arm`'s value: after the `{` of a block, else around the value.
fn arm(p: &mut Probes<'_>, arm: Node<'_>, site: Site) {
    let Some(value) = arm.child_by_field_name("value") else {
        return;
    };
    if value.kind() == "block" {
        p.put(value.start_byte() + 1, 0, (" ", ""), site);
    } else {
        p.put(value.start_byte(), 0, ("{ ", " "), site);
        p.close(value.end_byte());
    }
}

/// The probes on the ways out of `node` when it is a condition, a `let ... else`, a loop or a
/// `match` on a changed line.
fn branches(p: &mut Probes<'_>, node: Node<'_>) {
    let from = row(node);
    let into = |p: &mut Probes<'_>, block: Node<'_>, from: u32| {
        let to = first_row(block);
        p.put(
            block.start_byte() + 1,
            0,
            (" ", ""),
            Site::Branch { from, to },
        );
    };
    match node.kind() {
        "if_expression" => {
            let Some(then) = node.child_by_field_name("consequence") else {
                return;
            };
            into(p, then, from);
            let alternative = node.child_by_field_name("alternative");
            let other = alternative.and_then(|e| e.named_child(0));
            match other {
                Some(b) if b.kind() == "block" => into(p, b, from),
                Some(j) if j.kind() == "if_expression" => {
                    // `else if`: the else is taken when the next condition is asked.
                    p.put(
                        j.start_byte(),
                        0,
                        ("{ ", " "),
                        Site::Branch { from, to: row(j) },
                    );
                    p.close(j.end_byte());
                }
                Some(_) => {}
                None => {
                    let to = next_row(node);
                    p.put(
                        then.end_byte(),
                        1,
                        (" else { ", " }"),
                        Site::Branch { from, to },
                    );
                }
            }
        }
        "let_declaration" => {
            if let Some(alt) = node.child_by_field_name("alternative") {
                into(p, alt, from);
                let to = next_row(node);
                p.put(node.end_byte(), 1, (" ", ""), Site::Branch { from, to });
            }
        }
        "while_expression" | "for_expression" => {
            if let Some(body) = node.child_by_field_name("body") {
                into(p, body, from);
            }
            // The way out: after the loop's statement, when the loop is one.
            let statement = match node.parent() {
                Some(s) if s.kind() == "expression_statement" => Some(s),
                Some(b) if b.kind() == "block" => Some(node),
                _ => None,
            };
            if let Some(s) = statement {
                let to = next_row(node);
                p.put(s.end_byte(), 1, (" ", ""), Site::Branch { from, to });
            }
        }
        "match_expression" => {
            let Some(body) = node.child_by_field_name("body") else {
                return;
            };
            let mut cursor = body.walk();
            let arms: Vec<Node<'_>> = body
                .named_children(&mut cursor)
                .filter(|a| a.kind() == "match_arm")
                .collect();
            for a in arms {
                arm(p, a, Site::Branch { from, to: row(a) });
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::{BTreeMap, BTreeSet};

    const SAMPLE: &str = include_str!("rust_probes_sample.rs");

    fn lines(s: &[u32]) -> Site {
        Site::Lines(s.to_vec())
    }

    fn branch(from: u32, to: u32) -> Site {
        Site::Branch { from, to }
    }

    /// The probes of a hand-written file, written out by hand (the file's lines are named in
    /// it), then compiled with rustc and run: which test reached which probe.
    #[test]
    fn the_probes_are_where_the_changed_lines_are() {
        let changed = BTreeSet::from([
            7, 8, 9, 10, 14, 19, 20, 22, 23, 24, 29, 35, 40, 45, 50, 56, 64,
        ]);
        let name = "__patchgate_0123abcd__";
        let probed = probe(SAMPLE.as_bytes(), &changed, name, 0).expect("parses");
        assert_eq!(
            probed.sites,
            [
                lines(&[7]),     // 0: the `let` of lines 6-7
                lines(&[8, 10]), // 1: the `if` (its `else if` line; 14 is a brace)
                lines(&[9]),     // 2
                lines(&[19]),    // 3
                lines(&[20]),    // 4
                lines(&[22]),    // 5 (23 is a comment)
                lines(&[24]),    // 6
                lines(&[29]),    // 7: before its attribute
                lines(&[35]),    // 8
                lines(&[40]),    // 9: an arm
                lines(&[56]),    // 10
                branch(8, 9),    // 11
                branch(8, 10),   // 12: the `else if` asked
                branch(10, 11),  // 13
                branch(10, 13),  // 14
                branch(19, 20),  // 15: the `else` of a `let`
                branch(19, 22),  // 16
                branch(22, 24),  // 17: into the loop (the comment is no statement)
                branch(22, 29),  // 18: out of it
                branch(24, 25),  // 19
                branch(24, 0),   // 20: an `if` with no `else`, at the end of its block
                branch(35, 36),  // 21
                branch(35, 37),  // 22
                branch(35, 40),  // 23
            ]
        );
        // A `const fn` and a macro's definition hold no probe; a test's line is not code.
        assert_eq!(probed.unprobed, [45, 50]);
        let text = String::from_utf8(probed.text.clone()).expect("utf-8");
        assert_eq!(
            text.lines().count(),
            SAMPLE.lines().count(),
            "no line added"
        );
        let head = format!("{UNUSED} macro_rules! __patchgate_0123abcd__ ");
        assert!(text.lines().nth(3).unwrap().starts_with(&head));

        // Compiled as it is (its `deny(warnings, unused_qualifications)` on) and run.
        let dir = tempfile::tempdir().expect("tmp");
        let src = dir.path().join("sample.rs");
        let bin = dir.path().join("sample");
        let hits = dir.path().join("hits");
        std::fs::write(&src, &probed.text).expect("write");
        let built = std::process::Command::new("rustc")
            .args(["--edition", "2021", "--test", "-o"])
            .arg(&bin)
            .arg(&src)
            .output()
            .expect("rustc");
        assert!(
            built.status.success(),
            "{}",
            String::from_utf8_lossy(&built.stderr)
        );
        let ran = std::process::Command::new(&bin)
            .env(name, &hits)
            .output()
            .expect("run");
        assert!(
            ran.status.success(),
            "{}",
            String::from_utf8_lossy(&ran.stdout)
        );
        let mut got: BTreeMap<u32, BTreeSet<String>> = BTreeMap::new();
        for line in std::fs::read_to_string(&hits).expect("hits").lines() {
            let (site, rest) = line.split_once('\t').expect("site<TAB>exe<TAB>test");
            let (exe, test) = rest.split_once('\t').expect("exe<TAB>test");
            assert_eq!(exe, "sample");
            let test = test
                .strip_prefix("tests::")
                .expect("a test's thread")
                .to_owned();
            got.entry(site.parse().expect("a number"))
                .or_default()
                .insert(test);
        }
        let (b, s) = ("big", "small_and_odd");
        let want: BTreeMap<u32, BTreeSet<String>> = [
            (0, vec![b, s]),
            (1, vec![b, s]),
            (2, vec![b]),
            (3, vec![s]),
            (5, vec![s]),
            (6, vec![s]),
            (7, vec![s]),
            (8, vec![b]),
            (10, vec![s]),
            (11, vec![b]),
            (12, vec![s]),
            (14, vec![s]),
            (16, vec![s]),
            (17, vec![s]),
            (18, vec![s]),
            (20, vec![s]),
            (21, vec![b]),
        ]
        .into_iter()
        .map(|(n, t)| (n, t.into_iter().map(String::from).collect()))
        .collect();
        assert_eq!(got, want);
    }

    /// A file that does not parse has no probes; one with nothing to probe is left as it is.
    #[test]
    fn broken_and_untouched_files() {
        assert!(probe(b"fn f( {\n", &BTreeSet::from([1]), "p", 0).is_none());
        let source = b"use std::fmt;\nstruct S;\n";
        let probed = probe(source, &BTreeSet::from([1, 2]), "p", 0).expect("parses");
        assert_eq!(probed.text, source);
        assert!(probed.sites.is_empty() && probed.unprobed.is_empty());
    }
}
