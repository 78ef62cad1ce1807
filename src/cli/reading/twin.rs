//! A property's turned twin (CONTRACT.md section 15.3): the property's own test file, its
//! strategies and body as written, with every `assert` turned so that it holds only where a
//! value agrees with anything. On honest code every turned assertion fails: the twin must
//! fail, through the property engine, on the package's own values. It passes only where the
//! checker cannot fail any more: the engine's failures swallowed, a comparison that always
//! agrees (`a == b` turned is `a == x or x == b` for a fresh `x` no honest value equals), an
//! early exit. The code under test is byte for byte the judged tree's; only the check
//! changes, so a self-test of the code finds nothing to tell it from a plain run.
//!
//! `assert a OP b OP c` becomes `assert NAME((a, b, c), ("OP", "OP"))` (each operand evaluated
//! once, in order), any other `assert E` becomes `assert NAME((E,), ())`; `NAME` is a helper,
//! its name drawn per gate, appended to the file. A twin only has to fail, not to say how
//! little it takes: a hypothesis test's phases are the explicit, replayed and generated
//! examples, no shrinking or explaining (its `@settings` given `phases=`, or one added when
//! its only decorators are hypothesis's and pytest's marks).

use tree_sitter::Node;

use super::source;
use super::syntax::{descendants, text};

/// `source` (a Python test file) with its assertions turned, the helper `helper` appended; `None`
/// when it holds no assertion to turn (or cannot be read as CPython reads it).
pub fn turned(raw: &[u8], helper: &str) -> Option<Vec<u8>> {
    let source = source::python(raw).ok()?;
    let text_bytes = &source.text;
    let mut parser = tree_sitter::Parser::new();
    parser
        .set_language(&tree_sitter_python::LANGUAGE.into())
        .ok()?;
    let tree = parser.parse(text_bytes, None)?;
    if tree.root_node().has_error() {
        return None;
    }
    // (start, end, replacement) of each assertion's condition, in order.
    let mut edits: Vec<(usize, usize, String)> = Vec::new();
    for node in descendants(tree.root_node()) {
        if node.kind() != "assert_statement" {
            continue;
        }
        let Some(condition) = node.named_child(0) else {
            continue;
        };
        edits.push((
            condition.start_byte(),
            condition.end_byte(),
            turn(text_bytes, condition, helper),
        ));
    }
    if edits.is_empty() {
        return None;
    }
    edits.extend(no_shrinking(text_bytes, tree.root_node()));
    edits.sort_by_key(|(start, _, _)| *start);
    let mut out = Vec::with_capacity(text_bytes.len() + 1024);
    let mut at = 0;
    for (start, end, replacement) in edits {
        out.extend_from_slice(text_bytes.get(at..start)?);
        out.extend_from_slice(replacement.as_bytes());
        at = end;
    }
    out.extend_from_slice(text_bytes.get(at..)?);
    out.extend_from_slice(helper_source(helper).as_bytes());
    Some(out)
}

/// The phases a twin's hypothesis tests run: no shrinking, no explaining.
const PHASES: &str = "(__import__(\"hypothesis\").Phase.explicit, __import__(\"hypothesis\").Phase.reuse, __import__(\"hypothesis\").Phase.generate)";

/// The edits that keep a twin's hypothesis tests from shrinking what they find: `phases=` in
/// their `@settings(...)`, or a `@settings` of their own when every decorator is one this
/// knows (`given`, `example`, `seed`, `reproduce_failure`, a pytest mark); a test decorated
/// otherwise is left as it is (a second settings would be an error).
fn no_shrinking(source: &[u8], root: Node<'_>) -> Vec<(usize, usize, String)> {
    let mut out = Vec::new();
    for node in descendants(root) {
        if node.kind() != "decorated_definition" {
            continue;
        }
        let decorators: Vec<Node<'_>> = node
            .named_children(&mut node.walk())
            .filter(|c| c.kind() == "decorator")
            .collect();
        let names: Vec<(String, Option<Node<'_>>)> = decorators
            .iter()
            .map(|d| decorator_call(source, *d))
            .collect();
        let last = |n: &str| n.rsplit('.').next().unwrap_or(n).to_owned();
        if !names.iter().any(|(n, _)| last(n) == "given") {
            continue;
        }
        if let Some((_, Some(args))) = names.iter().find(|(n, _)| last(n) == "settings") {
            let has_phases = args.named_children(&mut args.walk()).any(|a| {
                a.kind() == "keyword_argument"
                    && a.child_by_field_name("name")
                        .is_some_and(|k| text(source, k) == "phases")
            });
            if !has_phases {
                let close = args.end_byte().saturating_sub(1);
                let empty = args.named_child_count() == 0;
                let comma = source
                    .get(..close)
                    .and_then(|b| b.iter().rev().find(|c| !c.is_ascii_whitespace()))
                    .is_some_and(|c| *c == b',');
                let sep = if empty || comma { "" } else { ", " };
                out.push((close, close, format!("{sep}phases={PHASES}")));
            }
            continue;
        }
        let known = names.iter().all(|(n, _)| {
            matches!(
                last(n).as_str(),
                "given" | "example" | "seed" | "reproduce_failure"
            ) || n.starts_with("pytest.mark.")
                || n.starts_with("mark.")
        });
        if known && let Some(first) = decorators.first() {
            let column = first.start_position().column;
            out.push((
                first.start_byte(),
                first.start_byte(),
                format!(
                    "@__import__(\"hypothesis\").settings(phases={PHASES})\n{}",
                    " ".repeat(column)
                ),
            ));
        }
    }
    out
}

/// A decorator's callee (`hypothesis.settings`) and, when it is a call, its arguments.
fn decorator_call<'t>(source: &[u8], d: Node<'t>) -> (String, Option<Node<'t>>) {
    let expr = d.named_child(0);
    let (function, args) = match expr {
        Some(e) if e.kind() == "call" => (
            e.child_by_field_name("function"),
            e.child_by_field_name("arguments"),
        ),
        other => (other, None),
    };
    let name = function
        .map(|f| text(source, f))
        .unwrap_or_default()
        .to_owned();
    (name, args)
}

/// The turned condition: a comparison's operands and operators handed to the helper, anything
/// else handed to it alone (it then fails whatever it is).
fn turn(source: &[u8], condition: Node<'_>, helper: &str) -> String {
    let inner = if condition.kind() == "parenthesized_expression" {
        condition.named_child(0).unwrap_or(condition)
    } else {
        condition
    };
    if inner.kind() == "comparison_operator" {
        let mut operands = Vec::new();
        let mut operators = Vec::new();
        let mut cursor = inner.walk();
        for child in inner.children(&mut cursor) {
            if child.is_named() && child.kind() != "comment" {
                operands.push(format!("({})", text(source, child)));
            } else if !child.is_named() {
                // `not in` and `is not` are two tokens.
                let op = text(source, child);
                let joins = operands.len() == operators.len();
                match operators.last_mut() {
                    Some(last) if joins => *last = format!("{last} {op}"),
                    _ => operators.push(op.to_owned()),
                }
            }
        }
        if operands.len() == operators.len() + 1 && !operators.is_empty() {
            return format!(
                "{helper}(({},), ({},))",
                operands.join(", "),
                operators
                    .iter()
                    .map(|o| format!("{o:?}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            );
        }
    }
    format!("{helper}((({}),), ())", text(source, condition))
}

/// The helper: whether, for some pair `a OP b` of the comparison, `a` or `b` (each against a
/// fresh object nothing honest equals) still answers true; an error is no answer. `!=`,
/// `not in` and `is not` are asked as `==`, `in` and `is`.
fn helper_source(helper: &str) -> String {
    format!(
        r#"


def {helper}(values, ops):
    import operator

    asked = {{
        "==": operator.eq, "!=": operator.eq, "<": operator.lt, "<=": operator.le,
        ">": operator.gt, ">=": operator.ge, "is": operator.is_, "is not": operator.is_,
        "in": lambda a, b: a in b, "not in": lambda a, b: a in b,
    }}
    for i, op in enumerate(ops):
        compare = asked.get(op)
        if compare is None:
            continue
        for left, right in ((values[i], object()), (object(), values[i + 1])):
            try:
                if compare(left, right):
                    return True
            except Exception:
                pass
    return False
"#
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Written by hand: each assertion's condition handed to the helper, the rest as written.
    #[test]
    fn assertions_are_turned_and_nothing_else() {
        let source = b"from hypothesis import given\n\n@given(x=st.integers())\ndef test_p(x):\n    y = f(x)\n    assert 0 <= y <= x, 'bounded'\n    assert y not in seen\n    assert ok(y)\n";
        let out = String::from_utf8(turned(source, "_h1").unwrap()).unwrap();
        assert!(out.starts_with(&format!("from hypothesis import given\n\n@__import__(\"hypothesis\").settings(phases={PHASES})\n@given(x=st.integers())\ndef test_p(x):\n    y = f(x)\n")), "{out}");
        assert!(
            out.contains("    assert _h1(((0), (y), (x),), (\"<=\", \"<=\",)), 'bounded'\n"),
            "{out}"
        );
        assert!(
            out.contains("    assert _h1(((y), (seen),), (\"not in\",))\n"),
            "{out}"
        );
        assert!(out.contains("    assert _h1(((ok(y)),), ())\n"), "{out}");
        assert!(out.contains("def _h1(values, ops):"), "{out}");
        assert_eq!(turned(b"def test_p():\n    pass\n", "_h1"), None);
        // Its own settings gain the phases; a settings by another name is left alone.
        let own = String::from_utf8(
            turned(
                b"@settings(max_examples=300, deadline=None)\n@given(st.integers())\ndef test_a(x):\n    assert x == x\n\n@heavy\n@given(st.integers())\ndef test_b(x):\n    assert x == x\n",
                "_h1",
            )
            .unwrap(),
        )
        .unwrap();
        assert!(
            own.starts_with(&format!(
                "@settings(max_examples=300, deadline=None, phases={PHASES})\n@given"
            )),
            "{own}"
        );
        assert!(own.contains("\n\n@heavy\n@given"), "{own}");
    }

    /// The twin fails on honest values and holds where a comparison always agrees: run by the
    /// real interpreter.
    #[test]
    fn the_twin_fails_on_honest_values_and_holds_on_a_liar() {
        let Ok(probe) = std::process::Command::new("python3")
            .arg("-c")
            .arg("pass")
            .status()
        else {
            return;
        };
        assert!(probe.success());
        let twin = String::from_utf8(
            turned(
                b"def check(y, x):\n    assert 0 <= y <= x\n    assert y == x\n",
                "_h1",
            )
            .unwrap(),
        )
        .unwrap();
        let program = format!(
            "{twin}\nclass Liar(int):\n    def __eq__(self, o): return True\n    __le__ = __ge__ = __lt__ = __gt__ = __eq__\n    __hash__ = int.__hash__\n\nimport sys\ntry:\n    check(int(sys.argv[1]), 10)\nexcept AssertionError:\n    print('fails')\nelse:\n    print('holds')\ntry:\n    check(Liar(int(sys.argv[1])), 10)\nexcept AssertionError:\n    print('fails')\nelse:\n    print('holds')\n"
        );
        let out = std::process::Command::new("python3")
            .args(["-c", &program, "3"])
            .output()
            .unwrap();
        assert_eq!(
            String::from_utf8_lossy(&out.stdout),
            "fails\nholds\n",
            "{out:?}"
        );
    }
}
