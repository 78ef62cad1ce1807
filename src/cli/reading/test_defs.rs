//! The test definitions a patch changes (issue 65), read by syntax: each function of a test
//! file (Python: at module level or in a class; Rust: in any module), named by where it sits,
//! whose tokens differ between the base and the patch (comments aside), or that the patch
//! removes. A failed test the base's version of which ran is matched against them by its id:
//! when every failure is one, the patch declares a behaviour change (the core decides).

use tree_sitter::Node;

use super::syntax::parse_code;
use super::syntax::{descendants, text};

/// Each side of a changed test is clipped to this many bytes (the facts carry 2 KiB).
const MAX_SIDE_BYTES: usize = 2000;

/// A test definition the patch changes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChangedDef {
    /// The classes (Python) or modules (Rust) it sits in, outermost first.
    pub within: Vec<String>,
    pub name: String,
    /// The base's lines the patch's version does not have, and the patch's lines the base's
    /// does not (each clipped).
    pub base: String,
    pub patch: String,
}

/// One function: where it sits, its name, its tokens and its text.
struct Def {
    within: Vec<String>,
    name: String,
    tokens: Vec<(u16, String)>,
    text: String,
}

/// The definitions of `file` (a `.py` or `.rs` test file) that differ between `base` and
/// `head`, or that `head` lacks; none when either does not parse or for another language.
pub fn changed_defs(file: &str, base: &[u8], head: &[u8]) -> Vec<ChangedDef> {
    let python = file.ends_with(".py");
    if !python && !file.ends_with(".rs") {
        return Vec::new();
    }
    let (Some(before), Some(after)) = (defs(base, python), defs(head, python)) else {
        return Vec::new();
    };
    before
        .into_iter()
        .filter_map(|b| {
            let now = after
                .iter()
                .find(|a| a.within == b.within && a.name == b.name);
            match now {
                Some(a) if a.tokens == b.tokens => None,
                Some(a) => {
                    let (base, patch) = sides(&b.text, &a.text);
                    Some(ChangedDef {
                        within: b.within,
                        name: b.name,
                        base,
                        patch,
                    })
                }
                None => Some(ChangedDef {
                    base: clip(&b.text),
                    patch: String::new(),
                    within: b.within,
                    name: b.name,
                }),
            }
        })
        .collect()
}

/// Whether the test `id` (`classname::name` of a JUnit report) of `file` names `def`.
/// Python: the name (its parameters aside) is the function's, and the dotted class name ends
/// with the module's stem and the classes it sits in. Rust: the id's path ends with the
/// modules and the name, and names the file's module or test binary (a `lib.rs`, `main.rs`
/// or `mod.rs` names its directory's).
pub fn names(id: &str, file: &str, def: &ChangedDef) -> bool {
    let stem = file
        .rsplit('/')
        .next()
        .unwrap_or(file)
        .trim_end_matches(".py")
        .trim_end_matches(".rs");
    if file.ends_with(".py") {
        let Some((class, name)) = id.split_once("::") else {
            return false;
        };
        let name = name.split(['[', ' ']).next().unwrap_or(name);
        let segments: Vec<&str> = class.split('.').collect();
        let want: Vec<&str> = std::iter::once(stem)
            .chain(def.within.iter().map(String::as_str))
            .collect();
        return name == def.name && segments.ends_with(&want);
    }
    let segments: Vec<&str> = id.split("::").collect();
    let want: Vec<&str> = def
        .within
        .iter()
        .map(String::as_str)
        .chain(std::iter::once(def.name.as_str()))
        .collect();
    if !segments.ends_with(&want) {
        return false;
    }
    let before = segments
        .get(..segments.len() - want.len())
        .unwrap_or_default();
    match stem {
        "lib" | "main" | "mod" => true,
        _ => before.contains(&stem),
    }
}

/// The functions of `source`, or `None` when it does not parse.
fn defs(source: &[u8], python: bool) -> Option<Vec<Def>> {
    let tree = parse_code(source, python)?;
    let mut out = Vec::new();
    let mut walk = descendants(tree.root_node());
    while let Some(node) = walk.next() {
        let function = match python {
            true => node.kind() == "function_definition",
            false => node.kind() == "function_item",
        };
        if !function {
            continue;
        }
        walk.skip_children();
        let Some(name) = node.child_by_field_name("name") else {
            continue;
        };
        let Some(within) = enclosing(source, node, python) else {
            continue;
        };
        // A Python function's decorators (`@pytest.mark.parametrize`) are part of the test.
        let whole = match node.parent() {
            Some(p) if python && p.kind() == "decorated_definition" => p,
            _ => node,
        };
        out.push(Def {
            within,
            name: text(source, name).to_owned(),
            tokens: tokens(source, whole, python),
            text: text(source, whole).to_owned(),
        });
    }
    Some(out)
}

/// The classes (Python) or modules (Rust) around `node`, outermost first; `None` when it sits
/// in a function (a nested helper is part of that function).
fn enclosing(source: &[u8], node: Node<'_>, python: bool) -> Option<Vec<String>> {
    let mut within = Vec::new();
    let mut at = node.parent();
    while let Some(p) = at {
        match p.kind() {
            "function_definition" | "function_item" => return None,
            "class_definition" if python => within.push(p),
            "mod_item" if !python => within.push(p),
            _ => {}
        }
        at = p.parent();
    }
    Some(
        within
            .into_iter()
            .rev()
            .filter_map(|p| p.child_by_field_name("name"))
            .map(|n| text(source, n).to_owned())
            .collect(),
    )
}

/// The leaves of `node` (kind and text), comments aside.
fn tokens(source: &[u8], node: Node<'_>, python: bool) -> Vec<(u16, String)> {
    descendants(node)
        .filter(|n| n.child_count() == 0)
        .filter(|n| match python {
            true => n.kind() != "comment",
            false => !matches!(n.kind(), "line_comment" | "block_comment"),
        })
        .map(|n| (n.kind_id(), text(source, n).to_owned()))
        .collect()
}

/// The lines of `base` that `patch` does not have, and the other way round, each in order
/// and clipped: what a reader compares side by side.
fn sides(base: &str, patch: &str) -> (String, String) {
    let only = |a: &str, b: &str| {
        let theirs: std::collections::HashSet<&str> = b.lines().map(str::trim).collect();
        let mine: Vec<&str> = a
            .lines()
            .filter(|l| !l.trim().is_empty() && !theirs.contains(l.trim()))
            .collect();
        clip(&mine.join("\n"))
    };
    (only(base, patch), only(patch, base))
}

/// `s` cut to at most [`MAX_SIDE_BYTES`] at a character boundary, marked with `…`.
fn clip(s: &str) -> String {
    if s.len() <= MAX_SIDE_BYTES {
        return s.to_owned();
    }
    let mut end = MAX_SIDE_BYTES;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &s[..end])
}

#[cfg(test)]
mod tests {
    use super::{changed_defs, names};

    const BASE: &str = "import pytest\n\n\ndef test_sorted():\n    assert is_sorted([1, 2], lt) is False  # pinned\n\n\nclass IsSortedTests:\n    def test_basic(self):\n        assert is_sorted([1])\n\n    def test_other(self):\n        assert True\n\n\ndef helper():\n    def test_inner():\n        pass\n    return 1\n";

    /// Written by hand: which definitions changed, and the lines side by side.
    #[test]
    fn a_changed_test_is_named_with_its_lines() {
        let head = BASE
            .replace("lt) is False  # pinned", "lt) is True")
            .replace("        assert True\n", "")
            .replace("    def test_other(self):\n", "")
            .replace("        pass", "        return")
            .replace(
                "assert is_sorted([1])",
                "assert is_sorted([1])  # a comment only",
            );
        let changed = changed_defs("tests/test_more.py", BASE.as_bytes(), head.as_bytes());
        let named: Vec<(Vec<String>, &str, &str, &str)> = changed
            .iter()
            .map(|d| {
                (
                    d.within.clone(),
                    d.name.as_str(),
                    d.base.as_str(),
                    d.patch.as_str(),
                )
            })
            .collect();
        assert_eq!(
            named,
            vec![
                (
                    vec![],
                    "test_sorted",
                    "    assert is_sorted([1, 2], lt) is False  # pinned",
                    "    assert is_sorted([1, 2], lt) is True"
                ),
                (
                    vec!["IsSortedTests".to_owned()],
                    "test_other",
                    "def test_other(self):\n        assert True",
                    ""
                ),
                (vec![], "helper", "        pass", "        return"),
            ]
        );
        let sorted = &changed[0];
        let other = &changed[1];
        for (id, def, yes) in [
            ("tests.test_more::test_sorted", sorted, true),
            ("test_more::test_sorted[1-2]", sorted, true),
            ("tests.test_other::test_sorted", sorted, false),
            ("tests.test_more::test_sorted_more", sorted, false),
            ("tests.test_more.IsSortedTests::test_other", other, true),
            ("tests.test_more::test_other", other, false),
        ] {
            assert_eq!(names(id, "tests/test_more.py", def), yes, "{id}");
        }
        let rust_base = "#[cfg(test)]\nmod tests {\n    #[test]\n    fn adds() {\n        assert_eq!(add(2, 2), 4);\n    }\n}\n";
        let rust_head = rust_base.replace("4);", "5);");
        let rust = changed_defs("src/add.rs", rust_base.as_bytes(), rust_head.as_bytes());
        assert_eq!(rust.len(), 1);
        for (id, file, yes) in [
            ("shop::add::tests::adds", "src/add.rs", true),
            ("shop::tests::adds", "src/lib.rs", true),
            ("shop::other::tests::adds", "src/add.rs", false),
            ("shop::add::adds", "src/add.rs", false),
        ] {
            assert_eq!(names(id, file, &rust[0]), yes, "{id}");
        }
        assert!(changed_defs("a.txt", b"x", b"y").is_empty());
        assert!(changed_defs("t.py", b"def f(:\n", b"def f(): pass\n").is_empty());
    }
}
