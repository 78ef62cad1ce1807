//! Mutant schemata for Rust (issue 68; Untch, Offutt and Harrold, ISSTA 1993): every patch
//! mutant of a changed file compiled into one copy of it, each behind a switch, so one build
//! serves the observed run and every mutant's run. A switched site reads as
//! `NAME!(VALUE, mutated, judged)`: the macro (defined once per file, on the probes' line)
//! calls a function of its own that reads the environment variable the gate draws, once per
//! process, and takes the mutated expression only when it holds `VALUE`. Every other value —
//! the one the observed run carries, or none — is the judged code. Nothing is inserted as a new
//! line: every line keeps its number.
//!
//! A mutant is switched only where the judged expression can stand as an expression the
//! mutant's type surely shares: not in a `const` context, a pattern, an array's length, an
//! attribute, a macro's own tokens or a field index, and not `Default::default()` (the
//! returned type may have none). Such a mutant is built on its own, as before.

use tree_sitter::Node;

use super::patch_mutants::PatchMutant;
use super::rust_probes::{Edit, UNUSED, WARNINGS, unprobeable};
use crate::core::gate::MutantOperator;

/// One switched mutant: the value of the switch that turns it on.
pub type Switched = (usize, u32);

/// The switch macro's definition, on one line: `NAME!(V, m, j)` is `m` when the variable
/// `VAR` holds `V` (read once per process, per site), else `j`; `NAME!(@cmp V, l, a, b, r)`
/// compares by reference (`l a r` switched, `l b r` judged) and `NAME!(@op V, l, a, b, r)`
/// applies an arithmetic operator by value, each operand evaluated once.
pub fn definition(name: &str, var: &str) -> String {
    const ON: &str = "WARNINGS fn NAME(v: u32) -> bool { extern crate std as s; \
        static V: s::sync::OnceLock<u32> = s::sync::OnceLock::new(); *V.get_or_init(|| \
        s::env::var(\"VAR\").ok().and_then(|v| v.parse::<u32>().ok()).unwrap_or(0)) == v }";
    const MACRO: &str = "UNUSED macro_rules! NAME { (@cmp $v:literal, $l:expr, \
        $a:tt, $b:tt, $r:expr) => {{ ON match (&$l, &$r) { (l, r) => if NAME($v) { *l $a *r } \
        else { *l $b *r } } }}; (@op $v:literal, $l:expr, $a:tt, $b:tt, $r:expr) => {{ ON match \
        ($l, $r) { (l, r) => if NAME($v) { l $a r } else { l $b r } } }}; ($v:literal, $m:expr, \
        $j:expr) => {{ ON if NAME($v) { $m } else { $j } }}; } ";
    MACRO
        .replace("UNUSED", UNUSED)
        .replace("ON", ON)
        .replace("WARNINGS", WARNINGS)
        .replace("NAME", name)
        .replace("VAR", var)
}

/// The edits that switch `mutants` (each with its switch's value) into `source`, parsed as
/// `root`, under the macro `name`; and which of them are switched (by index). The others
/// are built on their own.
pub fn edits(
    source: &[u8],
    root: Node<'_>,
    name: &str,
    mutants: &[(u32, &PatchMutant)],
) -> (Vec<Edit>, Vec<Switched>) {
    let mut out = Vec::new();
    let mut switched = Vec::new();
    for (i, (value, m)) in mutants.iter().enumerate() {
        if let Some(mut e) = one(source, root, name, *value, m) {
            out.append(&mut e);
            switched.push((i, *value));
        }
    }
    (out, switched)
}

/// An edit that replaces `start..end` with `text`, ordered among the probes' as `rank` says.
fn edit(at: usize, end: usize, rank: (u8, usize), text: String) -> Edit {
    Edit {
        at,
        end,
        rank,
        text,
    }
}

/// Around `start..end`: the opening before it (outer before inner, after the probes there) and
/// the closing after it (inner before outer, before the probes there).
fn around(start: usize, end: usize, open: String, close: &str) -> [Edit; 2] {
    [
        edit(start, start, (9, usize::MAX - end), open),
        edit(end, end, (0, usize::MAX - start), close.to_owned()),
    ]
}

/// The edits of one mutant; `None` where it cannot be switched.
fn one(
    source: &[u8],
    root: Node<'_>,
    name: &str,
    value: u32,
    m: &PatchMutant,
) -> Option<Vec<Edit>> {
    let node = root.descendant_for_byte_range(m.start, m.end)?;
    if fixed(node, source) {
        return None;
    }
    let judged = std::str::from_utf8(source.get(m.start..m.end)?).ok()?;
    match m.operator {
        MutantOperator::SwapComparison | MutantOperator::SwapArithmetic => {
            let binary = node.parent().filter(|p| p.kind() == "binary_expression")?;
            let (left, right) = (
                binary.child_by_field_name("left")?,
                binary.child_by_field_name("right")?,
            );
            let op = binary.child_by_field_name("operator")?;
            if (op.start_byte(), op.end_byte()) != (m.start, m.end) {
                return None;
            }
            let arm = match m.operator {
                MutantOperator::SwapComparison => "@cmp",
                _ if [left, right].iter().any(|n| n.kind().contains("string")) => return None,
                _ => "@op",
            };
            let mut e: Vec<Edit> = around(
                binary.start_byte(),
                binary.end_byte(),
                format!("{name}!({arm} {value}, "),
                ")",
            )
            .into();
            e.push(edit(
                left.end_byte(),
                right.start_byte(),
                (0, usize::MAX),
                format!(", {}, {judged}, ", m.replacement),
            ));
            Some(e)
        }
        MutantOperator::ReturnConstant if m.replacement.contains("default") => None,
        MutantOperator::ConditionTrue
        | MutantOperator::ReturnConstant
        | MutantOperator::ShiftInteger => Some(
            around(
                m.start,
                m.end,
                format!("{name}!({value}, {}, ", m.replacement),
                ")",
            )
            .into(),
        ),
        MutantOperator::DeleteStatement => {
            let judged = judged.trim_end();
            let body = judged.strip_suffix(';')?;
            let e = around(
                m.start,
                m.start + body.len(),
                format!("{name}!({value}, (), {{ "),
                "; })",
            )
            .into();
            // The statement's own `;` stays where it was, after the switched block.
            Some(e)
        }
    }
}

/// Whether `node` is where a switch cannot go: a `const` context (an item, a block, a `const
/// fn`, an array's length, a const generic argument, an enum's discriminant), a pattern, an
/// attribute, a macro's own tokens, a field's index.
fn fixed(node: Node<'_>, source: &[u8]) -> bool {
    if unprobeable(node, source) {
        return true;
    }
    let mut child = node;
    let mut at = node.parent();
    while let Some(n) = at {
        let kind = n.kind();
        let is = |field: &str| {
            n.child_by_field_name(field)
                .is_some_and(|c| c.id() == child.id())
        };
        if kind.contains("pattern")
            || matches!(
                kind,
                "token_tree" | "type_arguments" | "enum_variant" | "const_parameter"
            )
            || (kind == "array_expression" && is("length"))
            || (kind == "field_expression" && is("field"))
        {
            return true;
        }
        child = n;
        at = n.parent();
    }
    false
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;
    use std::path::{Path, PathBuf};

    use super::super::patch_mutants;
    use super::super::rust_probes;
    use super::*;

    /// A small program, a mutant on each changed line (lines 2 to 25, written by hand below).
    const PROGRAM: &str = "fn sign(x: i64) -> i64 {
    if x > 0 {
        return 1;
    }
    0
}
fn less(a: u32, b: u32) -> bool {
    a < b
}
fn add(a: u32, b: u32) -> u32 {
    let s = a + b;
    s
}
fn three() -> u32 {
    let n = 3;
    n
}
fn push(v: &mut Vec<u32>, x: u32) {
    v.push(x);
}
fn pick(x: u32) -> u32 {
    match x { 3 => 1, _ => 0 }
}
fn empty() -> String {
    return String::from(\"full\");
}
fn main() {
    let mut v = Vec::new();
    push(&mut v, 9);
    println!(\"{} {} {} {} {} {} {} {:?} {} {}\", sign(5), sign(-5), less(2, 2), less(1, 2),
        add(5, 3), three(), pick(3), v, empty(), line!());
}
";

    fn compile(dir: &Path, name: &str, source: &[u8]) -> PathBuf {
        let src = dir.join(format!("{name}.rs"));
        std::fs::write(&src, source).unwrap();
        let out = dir.join(name);
        let made = std::process::Command::new("rustc")
            .args(["--edition", "2021", "-o"])
            .arg(&out)
            .arg(&src)
            .output()
            .expect("rustc");
        assert!(
            made.status.success(),
            "{}\n{}",
            String::from_utf8_lossy(&made.stderr),
            String::from_utf8_lossy(source)
        );
        out
    }

    fn run(binary: &Path, env: Option<(&str, String)>) -> String {
        let mut c = std::process::Command::new(binary);
        c.env_remove("sw__");
        if let Some((k, v)) = env {
            c.env(k, v);
        }
        String::from_utf8(c.output().expect("run").stdout).unwrap()
    }

    /// Every mutant a switch can hold is switched in beside the probes, and the one program
    /// behaves as the judged program with no switch on (or the value real runs carry), and as
    /// each mutant built on its own with its switch on; no line moves (`line!()`). A literal in
    /// a pattern and a returned `Default::default()` are built on their own.
    #[test]
    fn one_build_behaves_as_each_mutant_built_on_its_own() {
        let dir = tempfile::tempdir().unwrap();
        let lines: BTreeSet<u32> = (2..=25).collect();
        let mutants = patch_mutants::rust(PROGRAM.as_bytes(), &lines);
        let made: Vec<(u32, &'static str)> = mutants
            .iter()
            .map(|m| (m.line, m.operator.into()))
            .collect();
        assert_eq!(
            made,
            [
                (2, "condition-true"),
                (3, "return-constant"),
                (5, "shift-integer"),
                (8, "swap-comparison"),
                (11, "swap-arithmetic"),
                (15, "shift-integer"),
                (19, "delete-statement"),
                (22, "shift-integer"),
                (25, "return-constant"),
            ]
        );
        let valued: Vec<(u32, &PatchMutant)> = mutants
            .iter()
            .enumerate()
            .map(|(i, m)| (100 + i as u32 * 7, m))
            .collect();
        let mut switched = Vec::new();
        let probed = rust_probes::probe_with(PROGRAM.as_bytes(), &lines, "pr__", 0, |root| {
            let (edits, s) = edits(PROGRAM.as_bytes(), root, "sw__", &valued);
            switched = s;
            (edits, Some(definition("sw__", "sw__")))
        })
        .expect("parsed");
        let switched_lines: Vec<u32> = switched.iter().map(|(i, _)| mutants[*i].line).collect();
        assert_eq!(switched_lines, [2, 3, 5, 8, 11, 15, 19]);
        assert_eq!(
            String::from_utf8_lossy(&probed.text).lines().count(),
            PROGRAM.lines().count()
        );
        let one = compile(dir.path(), "schema", &probed.text);
        let judged = run(&compile(dir.path(), "judged", PROGRAM.as_bytes()), None);
        assert_eq!(judged, "1 0 false true 8 3 1 [9] full 31\n");
        assert_eq!(run(&one, None), judged);
        assert_eq!(run(&one, Some(("sw__", "93".to_owned()))), judged);
        for (i, value) in &switched {
            let m = &mutants[*i];
            let alone = compile(dir.path(), &format!("m{i}"), &m.apply(PROGRAM.as_bytes()));
            let expected = run(&alone, None);
            assert_ne!(
                expected, judged,
                "mutant {i} changes what the program prints"
            );
            assert_eq!(
                run(&one, Some(("sw__", value.to_string()))),
                expected,
                "mutant {i} on line {}",
                m.line
            );
        }
    }
}
