//! Arid changes (issue 65): a change that lies only in what no check need run — a comment, a
//! docstring, the plain message of a `raise`, a `warnings` call or a logging call. Such a
//! file's changed lines are not code a check must be shown to run (`unobserved-change`), as
//! Google's mutation testing leaves arid lines alone. Decided by syntax, never by spelling:
//! both versions are parsed, what is arid is taken out, and what is left must be the same
//! tokens in the same order. Anything else (an f-string's expressions, a doc comment that holds
//! a Rust doctest, a file that does not parse) is not arid.

use tree_sitter::Node;

use super::syntax::parse_code;
use super::syntax::{descendants, text};

/// Whether the only differences between `base` and `head` (both of `file`, Python or Rust)
/// are arid. `false` for another language, or when either does not parse.
pub fn only_arid(file: &str, base: &[u8], head: &[u8]) -> bool {
    let python = file.ends_with(".py");
    if !python && !file.ends_with(".rs") {
        return false;
    }
    let arid = match python {
        true => python_arid,
        false => rust_arid,
    };
    match (dry(base, python, arid), dry(head, python, arid)) {
        (Some(a), Some(b)) => a == b,
        _ => false,
    }
}

/// Whether the only differences between `base` and `head` (both of `file`, Python or Rust)
/// are comments — plain comments, not Rust's documentation, not Python's docstrings: the
/// same program token for token (issue 65: a comment fixed in `build.rs` or `conftest.py`
/// is no change to how the package builds or tests). `false` for another language, for no
/// difference, or when either does not parse.
pub fn only_comments(file: &str, base: &[u8], head: &[u8]) -> bool {
    let python = file.ends_with(".py");
    if (!python && !file.ends_with(".rs")) || base == head {
        return false;
    }
    let comment = match python {
        true => python_comment,
        false => rust_arid,
    };
    match (dry(base, python, comment), dry(head, python, comment)) {
        (Some(a), Some(b)) => a == b,
        _ => false,
    }
}

/// A Python comment, but not a coding declaration (PEP 263: on the first two lines, it
/// changes how CPython decodes the whole file).
fn python_comment(source: &[u8], node: Node<'_>) -> bool {
    node.kind() == "comment" && !cookie(source, node)
}

/// A comment on the first two lines that names an encoding (`coding:` or `coding=`), as
/// CPython's PEP 263 check looks for it.
fn cookie(source: &[u8], node: Node<'_>) -> bool {
    node.start_position().row <= 1
        && text(source, node)
            .split("coding")
            .skip(1)
            .any(|after| after.starts_with(':') || after.starts_with('='))
}

/// Whether the only difference between `base` and `head` of a Python module is the plain
/// string a module-level `__version__ = "…"` assigns: a version bump (issue 65), which no
/// property need observe. `false` for another file, no difference, or either not parsing.
pub fn only_version(file: &str, base: &[u8], head: &[u8]) -> bool {
    if !file.ends_with(".py") || base == head {
        return false;
    }
    match (dry(base, true, version), dry(head, true, version)) {
        (Some(a), Some(b)) => a == b,
        _ => false,
    }
}

/// The plain string of a module-level `__version__ = "…"`.
fn version(source: &[u8], node: Node<'_>) -> bool {
    let Some(assignment) = node.parent().filter(|a| a.kind() == "assignment") else {
        return false;
    };
    plain(node)
        && node.kind() == "string"
        && assignment.child_by_field_name("right") == Some(node)
        && assignment
            .child_by_field_name("left")
            .is_some_and(|l| l.kind() == "identifier" && text(source, l) == "__version__")
        && assignment
            .parent()
            .filter(|s| s.kind() == "expression_statement")
            .and_then(|s| s.parent())
            .is_some_and(|m| m.kind() == "module")
}

/// The tokens of `source` (each leaf's kind and text), what `arid` says left out; `None` when
/// it does not parse.
fn dry(
    source: &[u8],
    python: bool,
    arid: fn(&[u8], Node<'_>) -> bool,
) -> Option<Vec<(u16, String)>> {
    let tree = parse_code(source, python)?;
    let mut out = Vec::new();
    let mut walk = descendants(tree.root_node());
    while let Some(node) = walk.next() {
        if arid(source, node) {
            walk.skip_children();
        } else if node.child_count() == 0 {
            out.push((node.kind_id(), text(source, node).to_owned()));
        }
    }
    Some(out)
}

/// A Python comment, a lone plain string statement (a docstring), or a plain string argument
/// of a call that is raised, warned or logged.
fn python_arid(source: &[u8], node: Node<'_>) -> bool {
    match node.kind() {
        "comment" => !cookie(source, node),
        "expression_statement" => {
            node.named_child_count() == 1 && node.named_child(0).is_some_and(|s| plain(s))
        }
        "string" | "concatenated_string" if plain(node) => {
            let call = node
                .parent()
                .filter(|p| p.kind() == "argument_list")
                .and_then(|p| p.parent())
                .filter(|c| c.kind() == "call");
            call.is_some_and(|call| {
                call.parent().is_some_and(|r| r.kind() == "raise_statement")
                    || call
                        .child_by_field_name("function")
                        .is_some_and(|f| message_call(text(source, f)))
            })
        }
        _ => false,
    }
}

/// A call whose message is only shown: `warnings.warn`, or a logger's level method
/// (`log.info`, `logger.warning`, `logging.error`, ...). Not `print` (a program's output is
/// behaviour), and not any other method of a name that looks like a logger.
fn message_call(callee: &str) -> bool {
    let Some((head, method)) = callee.split_once('.') else {
        return false;
    };
    callee == "warnings.warn"
        || (matches!(
            head,
            "log" | "logger" | "logging" | "LOG" | "LOGGER" | "_log" | "_logger"
        ) && matches!(
            method,
            "debug" | "info" | "warning" | "warn" | "error" | "exception" | "critical" | "fatal"
        ))
}

/// A string literal with nothing computed in it (no f-string expression).
fn plain(node: Node<'_>) -> bool {
    match node.kind() {
        "string" => !descendants(node).any(|n| n.kind() == "interpolation"),
        "concatenated_string" => {
            (0..node.named_child_count()).all(|i| node.named_child(i as u32).is_some_and(plain))
        }
        _ => false,
    }
}

/// A Rust comment that is not documentation (`///`, `//!`, `/**`, `/*!` hold doctests).
fn rust_arid(source: &[u8], node: Node<'_>) -> bool {
    match node.kind() {
        "line_comment" | "block_comment" => {
            let t = text(source, node);
            !["///", "//!", "/**", "/*!"]
                .iter()
                .any(|d| t.starts_with(d))
                || t.starts_with("////")
                || t == "/**/"
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::only_arid;
    use super::only_comments;
    use super::only_version;

    /// Written by hand: plain comments are the only difference, or not (a docstring, a Rust
    /// doc comment, a token are differences).
    #[test]
    fn only_plain_comments_differ() {
        let rows: [(&str, &str, &str, bool); 9] = [
            (
                "build.rs",
                "fn main() {\n    // see a\n}\n",
                "fn main() {\n    // see b\n}\n",
                true,
            ),
            ("build.rs", "fn main() {}\n", "// why\nfn main() {}\n", true),
            (
                "build.rs",
                "/// a\nfn main() {}\n",
                "/// b\nfn main() {}\n",
                false,
            ),
            (
                "build.rs",
                "fn main() { let x = 1; }\n",
                "fn main() { let x = 2; }\n",
                false,
            ),
            ("build.rs", "fn main() {}\n", "fn main() {}\n", false),
            ("conftest.py", "x = 1  # a\n", "x = 1  # b\n", true),
            (
                "conftest.py",
                "# a\nx = 1\n",
                "# coding: latin-1\nx = 1\n",
                false,
            ),
            (
                "conftest.py",
                "def f():\n    'a'\n",
                "def f():\n    'b'\n",
                false,
            ),
            ("build.sh", "# a\n", "# b\n", false),
        ];
        for (file, base, head, want) in rows {
            assert_eq!(
                only_comments(file, base.as_bytes(), head.as_bytes()),
                want,
                "{file}: {base:?} -> {head:?}"
            );
        }
    }

    /// Written by hand: a module-level `__version__` string is the only difference, or not.
    #[test]
    fn only_a_version_string_is_a_version_bump() {
        let rows: [(&str, &str, &str, bool); 8] = [
            (
                "p/__init__.py",
                "__version__ = '1.0'\nx = 1\n",
                "__version__ = '1.1'\nx = 1\n",
                true,
            ),
            (
                "p/v.py",
                "__version__ = \"1.0\"\n",
                "__version__ = \"2.0.0rc1\"\n",
                true,
            ),
            (
                "p/__init__.py",
                "__version__ = '1.0'\n",
                "__version__ = '1.0'\n",
                false,
            ),
            (
                "p/__init__.py",
                "__version__ = '1.0'\nx = 1\n",
                "__version__ = '1.1'\nx = 2\n",
                false,
            ),
            (
                "p/__init__.py",
                "VERSION = '1.0'\n",
                "VERSION = '1.1'\n",
                false,
            ),
            (
                "p/__init__.py",
                "def f():\n    __version__ = '1'\n",
                "def f():\n    __version__ = '2'\n",
                false,
            ),
            (
                "p/__init__.py",
                "__version__ = f'{a}'\n",
                "__version__ = f'{b}'\n",
                false,
            ),
            (
                "p/__init__.py",
                "__version__ = '1.0'  # a\n",
                "__version__ = '1.1'  # b\n",
                false,
            ),
        ];
        for (file, base, head, bump) in rows {
            assert_eq!(
                only_version(file, base.as_bytes(), head.as_bytes()),
                bump,
                "{base:?} -> {head:?}"
            );
        }
    }

    /// Written by hand: each pair, and whether only arid parts differ.
    #[test]
    fn only_comments_docstrings_and_messages_are_arid() {
        let rows: [(&str, &str, &str, bool); 15] = [
            ("m.py", "x = 1  # one\n", "x = 1  # the one\n", true),
            (
                "m.py",
                "def f():\n    \"\"\"Doc.\"\"\"\n    return 1\n",
                "def f():\n    \"\"\"The doc.\"\"\"\n    return 1\n",
                true,
            ),
            (
                "m.py",
                "def f(x):\n    raise TypeError('an iterabel')\n",
                "def f(x):\n    raise TypeError('an iterable')\n",
                true,
            ),
            (
                "m.py",
                "import warnings\nwarnings.warn('old')\n",
                "import warnings\nwarnings.warn('older')\n",
                true,
            ),
            (
                "m.py",
                "log.info('a %s', x)\n",
                "log.info('the %s', x)\n",
                true,
            ),
            // Code changed, or a message's computed part.
            ("m.py", "x = 1\n", "x = 2\n", false),
            (
                "m.py",
                "def f(x):\n    raise TypeError('bad')\n",
                "def f(x):\n    raise ValueError('bad')\n",
                false,
            ),
            (
                "m.py",
                "raise TypeError(f'{x}')\n",
                "raise TypeError(f'{y}')\n",
                false,
            ),
            ("m.py", "y = 'a'\n", "y = 'b'\n", false),
            // Output is behaviour; a logger's other methods are not messages.
            ("m.py", "print('a')\n", "print('b')\n", false),
            ("m.py", "logger.run('a')\n", "logger.run('b')\n", false),
            ("m.py", "print(x\n", "print(x)  # fixed\n", false),
            (
                "m.rs",
                "fn f() -> u8 { 1 } // one\n",
                "fn f() -> u8 { 1 } // the one\n",
                true,
            ),
            (
                "m.rs",
                "/// ```\n/// assert!(true);\n/// ```\nfn f() {}\n",
                "/// ```\n/// assert!(false);\n/// ```\nfn f() {}\n",
                false,
            ),
            ("m.txt", "a\n", "b\n", false),
        ];
        for (file, base, head, arid) in rows {
            assert_eq!(
                only_arid(file, base.as_bytes(), head.as_bytes()),
                arid,
                "{file}: {base:?} -> {head:?}"
            );
        }
    }
}
