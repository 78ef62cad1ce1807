//! A property's turned twin (CONTRACT.md section 15.3): the property's own test file, its
//! strategies and body as written, with every `assert` turned so that it holds only where a
//! value agrees with anything. On honest code every turned assertion fails: the twin must
//! fail, through the property engine, on the package's own values. It passes only where the
//! checker cannot fail any more: the engine's failures swallowed, a comparison that always
//! agrees (`a == b` turned is `a == x or x == b` for a fresh `x` no honest value equals, or
//! `a` equal to two values of `b`'s own type that differ from `b`, and the other way round, or
//! ordered both ways against one value: CONTRACT.md 16.4), an early exit. The code under test is byte for byte the judged tree's; only the check
//! changes, so a self-test of the code finds nothing to tell it from a plain run.
//!
//! `assert a OP b OP c` becomes `assert NAME((a, b, c), ("OP", "OP"))` (each operand evaluated
//! once, in order), any other `assert E` becomes `assert NAME((E,), ())`; `NAME` is a helper,
//! its name drawn per gate, appended to the file.
//!
//! A twin only has to fail, not to say how little it takes, so its hypothesis tests do not
//! shrink or explain what they find — taken from the settings each test was given, after the
//! module ran (`NAME_phases()`, appended too), never written in: a twin given `phases=` of its
//! own ran the phases it was given while a profile the patch loaded (`phases=[]`, the engine
//! switched off) skipped every property, and the canary "failed" beside properties that never
//! ran. Derived, an engine switched off switches both off.

use tree_sitter::Node;

use crate::cli::reading::source;
use crate::cli::reading::syntax::{descendants, text};

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

/// The helper (and, after it, the phases trimmer the module doc describes): whether, for some pair `a OP b` of the comparison, `a` or `b` (each against a
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
        # CONTRACT.md 16.4: an operand that equals two values of the other's own type that
        # differ from it, or that is ordered both ways against one value (the other operand, or
        # a value of its type), answers true whatever it is compared with.
        a, b = values[i], values[i + 1]
        try:
            if op in ("==", "!="):
                for mine, theirs in ((a, b), (b, a)):
                    others = {helper}_others(theirs)
                    if others and all(mine == other for other in others):
                        return True
            elif op in ("<", "<=", ">", ">="):
                flip = {{"<": ">=", "<=": ">", ">": "<=", ">=": "<"}}[op]
                pairs = [(a, b)] + [(a, o) for o in {helper}_others(b)] + [(o, b) for o in {helper}_others(a)]
                for left, right in pairs:
                    if compare(left, right) and asked[flip](left, right):
                        return True
        except Exception:
            pass
    return False


def {helper}_others(value):
    """Two values of `value`'s own type that differ from it (none for another type)."""
    kind = type(value)
    if kind is bool:
        return [not value]
    if kind is int:
        return [value + 1, value - 1]
    if kind is float:
        return [value + 1.0, value - 1.0] if abs(value) < 1e15 else []
    if kind is str or kind is bytes:
        one = "a" if kind is str else b"a"
        return [value + one, one + value]
    if kind is list or kind is tuple:
        return [value + kind((None,)), kind((None,)) + value]
    if kind is dict:
        return [dict(value, **{{"\x00": None}}), dict(value, **{{"\x01": None}})]
    return []


def {helper}_phases():
    try:
        engine = __import__("hypothesis")
    except ImportError:
        return
    found = []
    for value in list(globals().values()):
        if isinstance(value, type) and getattr(value, "__module__", None) == __name__:
            found.extend(vars(value).values())
        else:
            found.append(value)
    for test in found:
        test = getattr(test, "__func__", test)
        given = getattr(test, "_hypothesis_internal_use_settings", None)
        if given is None or getattr(test, "__module__", None) != __name__:
            continue
        try:
            kept = [p for p in given.phases if p.name not in ("shrink", "explain")]
            test._hypothesis_internal_use_settings = engine.settings(given, phases=kept)
        except Exception:
            pass


{helper}_phases()
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
        assert!(out.starts_with("from hypothesis import given\n\n@given(x=st.integers())\ndef test_p(x):\n    y = f(x)\n"), "{out}");
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
        // The settings stay as written: the twin runs the phases the property runs.
        let own = String::from_utf8(
            turned(
                b"@settings(max_examples=300)\n@given(st.integers())\ndef test_a(x):\n    assert x == x\n",
                "_h1",
            )
            .unwrap(),
        )
        .unwrap();
        assert!(
            own.starts_with("@settings(max_examples=300)\n@given(st.integers())\ndef test_a(x):\n    assert _h1("),
            "{own}"
        );
    }

    /// A twin's hypothesis tests keep the phases they were given, less shrinking and explaining
    /// — and none when a profile switched the engine off (run by the real interpreter).
    #[test]
    fn a_twin_runs_the_phases_its_property_was_given_less_shrinking() {
        let probe = std::process::Command::new("python3")
            .args(["-c", "import hypothesis"])
            .status();
        if !probe.is_ok_and(|s| s.success()) {
            return;
        }
        let source = b"from hypothesis import given, settings, strategies as st\n\n@settings(max_examples=5)\n@given(st.integers())\ndef test_a(x):\n    assert x == x\n\nclass TestK:\n    @given(st.integers())\n    def test_b(self, x):\n        assert x == x\n";
        let twin = String::from_utf8(turned(source, "_h1").unwrap()).unwrap();
        let show = "\nfor t in (test_a, TestK.test_b):\n    print([p.name for p in t._hypothesis_internal_use_settings.phases])\n";
        let off = "import hypothesis\nhypothesis.settings.register_profile('off', phases=[])\nhypothesis.settings.load_profile('off')\n";
        for (before, expected) in [
            ("", "['explicit', 'reuse', 'generate', 'target']\n"),
            (off, "[]\n"),
        ] {
            let out = std::process::Command::new("python3")
                .args(["-c", &format!("{before}{twin}{show}")])
                .output()
                .unwrap();
            assert_eq!(
                String::from_utf8_lossy(&out.stdout),
                expected.repeat(2),
                "{out:?}"
            );
        }
    }

    /// Whether `python3` is on this machine (it runs `pass`); a machine without one skips the
    /// tests that run the twin.
    fn python3_runs() -> bool {
        let Ok(probe) = std::process::Command::new("python3")
            .arg("-c")
            .arg("pass")
            .status()
        else {
            return false;
        };
        assert!(probe.success());
        true
    }

    /// The twin fails on honest values and holds where a comparison always agrees: run by the
    /// real interpreter.
    #[test]
    fn the_twin_fails_on_honest_values_and_holds_on_a_liar() {
        if !python3_runs() {
            return;
        }
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

    /// CONTRACT.md 16.4, written by hand: an operand that answers true to any value of the other
    /// operand's type (an `__eq__` set with `type.__setattr__`, blind to `object()`) makes the
    /// twin hold; honest values of each kind, equal or one apart, still make it fail.
    #[test]
    fn the_twin_holds_on_a_liar_that_agrees_only_with_the_expected_type() {
        if !python3_runs() {
            return;
        }
        let twin =
            String::from_utf8(turned(b"def check(y, x):\n    assert y == x\n", "_h1").unwrap())
                .unwrap();
        let ordered = String::from_utf8(
            turned(b"def ordered(y, x):\n    assert 0 <= y <= x\n", "_h2").unwrap(),
        )
        .unwrap();
        let program = format!(
            "{twin}\nclass Cents:\n    pass\n\ntype.__setattr__(Cents, '__eq__', lambda a, b: isinstance(b, int))\ntype.__setattr__(Cents, '__hash__', object.__hash__)\n\ndef says(y, x):\n    try:\n        check(y, x)\n    except AssertionError:\n        return 'fails'\n    return 'holds'\n\nfor y, x in [(Cents(), 999), (999, Cents()), (10, 10), (11, 10), (9, 10), (1.5, 1.5), ('ab', 'ab'), ('ab', 'abc'), (b'x', b'x'), ([1], [1]), ((1,), (1,)), ({{'a': 1}}, {{'a': 1}}), (True, True), (None, None)]:\n    print(says(y, x))\n{ordered}\nfor name in ('__lt__', '__le__', '__gt__', '__ge__'):\n    type.__setattr__(Cents, name, lambda a, b: isinstance(b, (int, Cents)))\nfor y, x in [(Cents(), 999), (Cents(), Cents()), (5, 10), (10, 10), (0, 0), (2.5, 3.0)]:\n    try:\n        ordered(y, x)\n    except AssertionError:\n        print('fails')\n    else:\n        print('holds')\n"
        );
        let out = std::process::Command::new("python3")
            .args(["-c", &program])
            .output()
            .unwrap();
        let mut expected = "holds\nholds\n".to_owned();
        expected.push_str(&"fails\n".repeat(12));
        expected.push_str("holds\nholds\n");
        expected.push_str(&"fails\n".repeat(4));
        assert_eq!(String::from_utf8_lossy(&out.stdout), expected, "{out:?}");
    }
}
