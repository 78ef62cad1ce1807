//! Mutants of the patch's own lines (issue 52): at most one per changed code line, from the
//! syntax tree the reading builds, with the operators diff-based mutation testing shows work
//! (Petrović & Ivanković, "Practical Mutation Testing at Scale"). Named *patch* mutants: the
//! admission mutants (`patchgate admit`, `mutants/*.diff`) are another thing. Arid lines
//! (docstrings, logging, `pass`, imports, declarations, type-only lines) get none.

use std::collections::BTreeSet;

use tree_sitter::Node;

use crate::cli::reading::syntax::{descendants, parse, text};
use crate::core::gate::MutantOperator;

/// One mutant: the bytes `start..end` of the file replaced by `replacement`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PatchMutant {
    pub line: u32,
    pub operator: MutantOperator,
    pub start: usize,
    pub end: usize,
    pub replacement: String,
}

impl PatchMutant {
    /// The file's text with the mutant applied.
    pub fn apply(&self, source: &[u8]) -> Vec<u8> {
        let mut out = Vec::with_capacity(source.len() + self.replacement.len());
        out.extend_from_slice(source.get(..self.start).unwrap_or_default());
        out.extend_from_slice(self.replacement.as_bytes());
        out.extend_from_slice(source.get(self.end..).unwrap_or_default());
        out
    }
}

/// The mutants of Python `source` on `lines` (1-based), at most one per line, in line order.
/// A file that is not UTF-8, or that the parser cannot parse whole, has none.
pub fn python(source: &[u8], lines: &BTreeSet<u32>) -> Vec<PatchMutant> {
    let Some(tree) = parse(source, &tree_sitter_python::LANGUAGE.into()) else {
        return Vec::new();
    };
    // The outermost statement that starts on each line.
    let mut first: std::collections::BTreeMap<u32, Node<'_>> = std::collections::BTreeMap::new();
    for node in descendants(tree.root_node()) {
        let line = row_of(node);
        if lines.contains(&line) && is_statement(node.kind()) {
            first.entry(line).or_insert(node);
        }
    }
    first
        .into_iter()
        .filter_map(|(line, statement)| one(source, line, statement))
        .collect()
}

/// The mutants of `file` by its language (`.py`, `.rs`); none for another.
pub fn of_file(file: &str, source: &[u8], lines: &BTreeSet<u32>) -> Vec<PatchMutant> {
    if file.ends_with(".py") {
        python(source, lines)
    } else if file.ends_with(".rs") {
        rust(source, lines)
    } else {
        Vec::new()
    }
}

/// A node's first line, 1-based.
fn row_of(node: Node<'_>) -> u32 {
    u32::try_from(node.start_position().row + 1).unwrap_or(u32::MAX)
}

/// Statements a mutant may change.
const MUTABLE: [&str; 11] = [
    "if_statement",
    "elif_clause",
    "while_statement",
    "return_statement",
    "expression_statement",
    "raise_statement",
    "assert_statement",
    "for_statement",
    "with_statement",
    "except_clause",
    "delete_statement",
];

/// Statements that are arid whatever they hold: nothing to mutate, or nothing a mutant of
/// would say about the change (declarations, imports, `pass`, the heads of clauses).
const ARID: [&str; 16] = [
    "pass_statement",
    "import_statement",
    "import_from_statement",
    "future_import_statement",
    "global_statement",
    "nonlocal_statement",
    "function_definition",
    "class_definition",
    "decorated_definition",
    "else_clause",
    "finally_clause",
    "try_statement",
    "break_statement",
    "continue_statement",
    "match_statement",
    "case_clause",
];

fn is_statement(kind: &str) -> bool {
    MUTABLE.contains(&kind) || ARID.contains(&kind)
}

/// The one mutant of the statement starting on `line`, by the operators' order; `None` on an
/// arid line or where no operator applies.
fn one(source: &[u8], line: u32, statement: Node<'_>) -> Option<PatchMutant> {
    if arid(source, statement) {
        return None;
    }
    let make = |operator, node: Node<'_>, replacement: String| PatchMutant {
        line,
        operator,
        start: node.start_byte(),
        end: node.end_byte(),
        replacement,
    };
    // A condition the patch added, made always true: "this condition can be removed".
    if matches!(
        statement.kind(),
        "if_statement" | "elif_clause" | "while_statement"
    ) {
        let condition = statement.child_by_field_name("condition")?;
        return Some(make(
            MutantOperator::ConditionTrue,
            condition,
            "True".to_owned(),
        ));
    }
    // Only what is on this line of a statement that may span several.
    let row = statement.start_position().row;
    let on_line: Vec<Node<'_>> = descendants(statement)
        .filter(|n| n.start_position().row == row)
        .collect();
    for node in &on_line {
        if node.kind() == "comparison_operator" {
            let mut cursor = node.walk();
            // The first operator: a run of anonymous children between two operands.
            let ops: Vec<Node<'_>> = node
                .children(&mut cursor)
                .skip_while(|c| c.is_named())
                .take_while(|c| !c.is_named())
                .collect();
            let (Some(first), Some(last)) = (ops.first(), ops.last()) else {
                continue;
            };
            let op = text(source, *node)
                .get(first.start_byte() - node.start_byte()..last.end_byte() - node.start_byte())
                .unwrap_or_default();
            let op = op.split_whitespace().collect::<Vec<_>>().join(" ");
            let Some(swapped) = swap_comparison(&op) else {
                continue;
            };
            return Some(PatchMutant {
                line,
                operator: MutantOperator::SwapComparison,
                start: first.start_byte(),
                end: last.end_byte(),
                replacement: swapped.to_owned(),
            });
        }
    }
    for node in &on_line {
        if node.kind() == "binary_operator"
            && let Some(op) = node.child_by_field_name("operator")
        {
            let swapped = match text(source, op) {
                "+" => "-",
                "-" => "+",
                "*" => "//",
                "//" => "*",
                "/" => "*",
                "%" => "//",
                _ => continue,
            };
            return Some(make(MutantOperator::SwapArithmetic, op, swapped.to_owned()));
        }
    }
    if statement.kind() == "return_statement"
        && let Some(value) = statement.named_child(0)
    {
        let constant = match (value.kind(), text(source, value)) {
            ("integer", "0") => "1",
            ("integer" | "float", _) => "0",
            ("string", t) if t.len() <= 2 || t.ends_with("\"\"") || t.ends_with("''") => "\"x\"",
            ("string", _) => "\"\"",
            ("true", _) => "False",
            ("false", _) => "True",
            ("list", "[]") | ("dictionary", "{}") | ("tuple", "()") => "None",
            ("list", _) => "[]",
            ("dictionary", _) => "{}",
            ("tuple", _) => "()",
            ("none", _) => "0",
            _ => "None",
        };
        return Some(make(
            MutantOperator::ReturnConstant,
            value,
            constant.to_owned(),
        ));
    }
    for node in &on_line {
        if node.kind() == "integer"
            && let Ok(n) = text(source, *node).replace('_', "").parse::<i128>()
        {
            return Some(make(
                MutantOperator::ShiftInteger,
                *node,
                (n + 1).to_string(),
            ));
        }
    }
    if statement.kind() == "expression_statement" {
        return Some(make(
            MutantOperator::DeleteStatement,
            statement,
            "pass".to_owned(),
        ));
    }
    None
}

/// A line no mutant is made on: a docstring or other lone string, logging or printing, `pass`,
/// an import, a declaration (`def`, `class`, a decorator, `global`), a type-only line (an
/// annotation with no value), and the heads of clauses with nothing to mutate.
fn arid(source: &[u8], statement: Node<'_>) -> bool {
    match statement.kind() {
        kind if ARID.contains(&kind) => true,
        "expression_statement" => {
            let Some(inner) = statement.named_child(0) else {
                return true;
            };
            match inner.kind() {
                "string" | "concatenated_string" | "ellipsis" => true,
                "assignment" => {
                    inner.child_by_field_name("right").is_none()
                        && inner.child_by_field_name("type").is_some()
                }
                "call" => {
                    let callee = inner
                        .child_by_field_name("function")
                        .map(|f| text(source, f))
                        .unwrap_or_default();
                    let head = callee.split('.').next().unwrap_or_default();
                    callee == "print"
                        || callee.starts_with("warnings.")
                        || matches!(
                            head,
                            "log" | "logger" | "logging" | "LOG" | "LOGGER" | "_log" | "_logger"
                        )
                        || callee.ends_with(".debug")
                        || callee.ends_with(".info")
                }
                _ => false,
            }
        }
        _ => false,
    }
}

/// The mutants of Rust `source` on `lines` (1-based), at most one per line, in line order, the
/// same operators as Python's where Rust has them: a condition of an `if` made `true` (not a
/// `while`'s: that loop would never end, and a timeout proves nothing), a comparison or an
/// arithmetic operator swapped, a returned literal changed, an integer shifted by one, a call
/// or assignment statement deleted. Test code (`#[cfg(test)]`, `#[test]`), declarations,
/// `use`, attributes and logging macros are arid.
pub fn rust(source: &[u8], lines: &BTreeSet<u32>) -> Vec<PatchMutant> {
    let Some(tree) = parse(source, &tree_sitter_rust::LANGUAGE.into()) else {
        return Vec::new();
    };
    let tests = crate::cli::reading::rust::test_rows(source, tree.root_node());
    let in_test = |line: u32| {
        tests
            .iter()
            .any(|(a, b)| (*a..=*b).contains(&(line as usize)))
    };
    let mut first: std::collections::BTreeMap<u32, Node<'_>> = std::collections::BTreeMap::new();
    for node in descendants(tree.root_node()) {
        let line = row_of(node);
        if lines.contains(&line) && !in_test(line) && rust_statement(node) {
            first.entry(line).or_insert(node);
        }
    }
    first
        .into_iter()
        .filter_map(|(line, statement)| rust_one(source, line, statement))
        .collect()
}

/// A statement of a block (an item, a `let`, an expression statement, the tail expression),
/// or an `else if`.
fn rust_statement(node: Node<'_>) -> bool {
    if !node.is_named() || node.is_extra() {
        return false;
    }
    match node.parent().map(|p| p.kind()) {
        Some("block" | "source_file" | "declaration_list") => true,
        Some("else_clause") => node.kind() == "if_expression",
        _ => false,
    }
}

/// A comparison operator swapped for its neighbour or its negation (Python's and Rust's).
fn swap_comparison(op: &str) -> Option<&'static str> {
    Some(match op {
        "<" => "<=",
        "<=" => "<",
        ">" => ">=",
        ">=" => ">",
        "==" => "!=",
        "!=" => "==",
        "in" => "not in",
        "not in" => "in",
        "is" => "is not",
        "is not" => "is",
        _ => return None,
    })
}

/// Logging and printing macros: their lines are arid.
const RUST_LOGGING: [&str; 11] = [
    "print", "println", "eprint", "eprintln", "dbg", "trace", "debug", "info", "warn", "error",
    "log",
];

/// The one mutant of the Rust statement starting on `line`, by the operators' order.
fn rust_one(source: &[u8], line: u32, statement: Node<'_>) -> Option<PatchMutant> {
    let make = |operator, node: Node<'_>, replacement: &str| PatchMutant {
        line,
        operator,
        start: node.start_byte(),
        end: node.end_byte(),
        replacement: replacement.to_owned(),
    };
    // An expression statement is read as the expression it holds.
    let inner = match statement.kind() {
        "expression_statement" => statement.named_child(0)?,
        "let_declaration" if statement.child_by_field_name("value").is_none() => return None,
        "let_declaration" => statement,
        kind if kind.ends_with("_item") || kind.ends_with("_declaration") => return None,
        "empty_statement" | "macro_definition" => return None,
        _ => statement,
    };
    if inner.kind() == "macro_invocation" {
        let name = inner
            .child_by_field_name("macro")
            .map(|m| text(source, m))
            .unwrap_or_default();
        if RUST_LOGGING.contains(&name.rsplit("::").next().unwrap_or_default()) {
            return None;
        }
    }
    if inner.kind() == "if_expression" {
        let condition = inner.child_by_field_name("condition")?;
        if !matches!(condition.kind(), "let_condition" | "let_chain") {
            return Some(make(MutantOperator::ConditionTrue, condition, "true"));
        }
    }
    let row = statement.start_position().row;
    let on_line: Vec<Node<'_>> = descendants(statement)
        .filter(|n| n.start_position().row == row)
        .collect();
    let binary = |table: &dyn Fn(&str) -> Option<&'static str>, operator| {
        on_line.iter().find_map(|node| {
            let op = node
                .child_by_field_name("operator")
                .filter(|_| node.kind() == "binary_expression")?;
            Some(make(operator, op, table(text(source, op))?))
        })
    };
    let arithmetic = |op: &str| {
        Some(match op {
            "+" => "-",
            "-" => "+",
            "*" | "%" => "/",
            "/" => "*",
            _ => return None,
        })
    };
    if let Some(m) = binary(&swap_comparison, MutantOperator::SwapComparison)
        .or_else(|| binary(&arithmetic, MutantOperator::SwapArithmetic))
    {
        return Some(m);
    }
    if inner.kind() == "return_expression"
        && let Some(value) = inner.named_child(0)
    {
        let constant = match (value.kind(), text(source, value)) {
            ("integer_literal", "0") => "1",
            ("integer_literal", _) => "0",
            ("float_literal", _) => "0.0",
            ("boolean_literal", "true") => "false",
            ("boolean_literal", _) => "true",
            ("string_literal", "\"\"") => "\"x\"",
            ("string_literal", _) => "\"\"",
            _ => "Default::default()",
        };
        return Some(make(MutantOperator::ReturnConstant, value, constant));
    }
    for node in &on_line {
        if node.kind() == "integer_literal" {
            let literal = text(source, *node);
            let digits = literal
                .find(|c: char| !c.is_ascii_digit() && c != '_')
                .unwrap_or(literal.len());
            let (number, suffix) = literal.split_at(digits);
            if let Ok(n) = number.replace('_', "").parse::<u128>()
                && !suffix.starts_with(['x', 'o', 'b', 'e', 'E', '.'])
                && let Some(next) = n.checked_add(1)
            {
                return Some(make(
                    MutantOperator::ShiftInteger,
                    *node,
                    &format!("{next}{suffix}"),
                ));
            }
        }
    }
    if statement.kind() == "expression_statement"
        && matches!(
            inner.kind(),
            "call_expression" | "assignment_expression" | "compound_assignment_expr"
        )
    {
        return Some(make(MutantOperator::DeleteStatement, statement, ";"));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each line's mutant, as `(line, operator, the line as mutated)`.
    fn mutated(source: &str, lines: &[u32]) -> Vec<(u32, &'static str, String)> {
        mutated_as("x.py", source, lines)
    }

    fn mutated_as(file: &str, source: &str, lines: &[u32]) -> Vec<(u32, &'static str, String)> {
        of_file(file, source.as_bytes(), &lines.iter().copied().collect())
            .into_iter()
            .map(|m| {
                let after = String::from_utf8(m.apply(source.as_bytes())).unwrap();
                let text = after
                    .lines()
                    .nth(m.line as usize - 1)
                    .unwrap_or_default()
                    .trim()
                    .to_owned();
                (m.line, m.operator.into(), text)
            })
            .collect()
    }

    /// The operators, one per line, written by hand for each line of a small module.
    #[test]
    fn the_operators_one_per_line() {
        let source = r#""""Prices."""
import math


def price(items, percent):
    """The price."""
    if isinstance(items, list):
        total = sum(items)
    elif percent < 0:
        raise ValueError("negative")
    total = total * (100 - percent) // 100
    log.debug("total %s", total)
    seen.add(total)
    while total > 10 and total not in BIG:
        total -= 1
    pass
    count: int
    return total


def name(x):
    return "item"
"#;
        let all: Vec<u32> = (1..=22).collect();
        assert_eq!(
            mutated(source, &all),
            [
                (7, "condition-true", "if True:".to_owned()),
                (8, "delete-statement", "pass".to_owned()),
                (9, "condition-true", "elif True:".to_owned()),
                // The outermost operator: `(total * (100 - percent)) // 100`.
                (
                    11,
                    "swap-arithmetic",
                    "total = total * (100 - percent) * 100".to_owned()
                ),
                (13, "delete-statement", "pass".to_owned()),
                (14, "condition-true", "while True:".to_owned()),
                (15, "shift-integer", "total -= 2".to_owned()),
                (18, "return-constant", "return None".to_owned()),
                (22, "return-constant", "return \"\"".to_owned()),
            ]
        );
        // Only the lines asked.
        assert_eq!(
            mutated(source, &[10, 11]),
            [(
                11,
                "swap-arithmetic",
                "total = total * (100 - percent) * 100".to_owned()
            )]
        );
    }

    #[test]
    fn comparisons_swap_their_first_operator() {
        let source = "x = a not in b\ny = a is not None\nz = 1 <= 2 < 3\nw = a == b\n";
        assert_eq!(
            mutated(source, &[1, 2, 3, 4]),
            [
                (1, "swap-comparison", "x = a in b".to_owned()),
                (2, "swap-comparison", "y = a is None".to_owned()),
                (3, "swap-comparison", "z = 1 < 2 < 3".to_owned()),
                (4, "swap-comparison", "w = a != b".to_owned()),
            ]
        );
    }

    /// Arid lines and lines outside the asked set get none; a file that does not parse gets
    /// none.
    #[test]
    fn arid_lines_and_broken_files_get_none() {
        let source = "import os\n\"\"\"doc\"\"\"\nprint(1)\nlogger.info('x')\npass\nx: int\n@dec\ndef f():\n    return 1\n";
        assert_eq!(mutated(source, &[1, 2, 3, 4, 5, 6, 7, 8]), []);
        assert_eq!(
            mutated(source, &[9]),
            [(9, "return-constant", "return 0".to_owned())]
        );
        assert!(python(b"def f(:\n    return 1\n", &BTreeSet::from([2])).is_empty());
    }

    /// The Rust operators, one per line, written by hand for each line of a small file; the
    /// test module gets none.
    #[test]
    fn the_rust_operators_one_per_line() {
        let source = r#"//! Prices.
use std::collections::HashMap;

#[derive(Debug)]
pub struct Price(u64);

pub fn price(items: &[u64], percent: u64) -> u64 {
    let count: usize;
    let mut total: u64 = items.iter().sum();
    if items.len() > 3 {
        total = total * (100 - percent) / 100;
    } else if let Some(first) = items.first() {
        total += first;
    } else if percent == 0 {
        println!("no discount");
    }
    while total > 10 {
        total -= 1;
    }
    log::debug!("total {total}");
    seen.insert(total);
    if total == 0 {
        return 7;
    }
    total
}

fn name(flag: bool) -> bool {
    return true;
}

fn label() -> String {
    return format!("x");
}

#[cfg(test)]
mod tests {
    fn helper() -> u64 {
        return 1;
    }
}
"#;
        let all: Vec<u32> = (1..=42).collect();
        let got = mutated_as("src/lib.rs", source, &all);
        let got: Vec<(u32, &str, &str)> =
            got.iter().map(|(l, o, t)| (*l, *o, t.as_str())).collect();
        let expected: [(u32, &str, &str); 11] = [
            // (8, a `let` with no value, and 9, a `let` with nothing to mutate: none.)
            (10, "condition-true", "if true {"),
            // The outermost operator: `(total * (100 - percent)) / 100`.
            (
                11,
                "swap-arithmetic",
                "total = total * (100 - percent) * 100;",
            ),
            // (12, `if let`, has no condition to make true.)
            (13, "delete-statement", ";"),
            (14, "condition-true", "} else if true {"),
            // (15, 20: printing and logging.) A `while` is never made endless.
            (17, "swap-comparison", "while total >= 10 {"),
            (18, "shift-integer", "total -= 2;"),
            (21, "delete-statement", ";"),
            (22, "condition-true", "if true {"),
            (23, "return-constant", "return 0;"),
            (29, "return-constant", "return false;"),
            (33, "return-constant", "return Default::default();"),
            // (39: the test module's.)
        ];
        assert_eq!(got, expected);
    }

    /// Arid Rust lines and a file that does not parse get none; another language gets none.
    #[test]
    fn arid_rust_lines_and_broken_files_get_none() {
        let source = "use std::fmt;\n#[inline]\nconst N: u8 = 3;\nfn f() {\n    let x: u8;\n    tracing::info!(\"x\");\n    println!(\"{}\", 1);\n}\n";
        assert_eq!(mutated_as("a.rs", source, &[1, 2, 3, 4, 5, 6, 7]), []);
        assert!(rust(b"fn f( {\n    return 1;\n}\n", &BTreeSet::from([2])).is_empty());
        assert_eq!(mutated_as("a.go", "x := 1\n", &[1]), []);
    }
}
