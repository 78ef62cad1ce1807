//! The integer literals a patch adds to Python or Rust code, read by its syntax (issue 66, CONTRACT.md
//! 16.3): the boundaries the patch itself draws (`text[:8192]`, `len(items) == 3`), which the
//! plain programs try, ±1, as values and as lengths of the recorded calls' arguments.

use std::collections::BTreeSet;

use super::syntax::{descendants, text};

/// The most literals one patch contributes.
pub const MAX_INTEGERS: usize = 16;

/// The integers (as Python reads them: `8_192`, `0x2000`, `0o17`, `0b101`) on `lines` (1-based)
/// of Python `source`, distinct, in order of appearance, at most [`MAX_INTEGERS`]; none when the
/// file does not parse whole. A negated literal is read with its sign.
pub fn python(source: &[u8], lines: &BTreeSet<u32>) -> Vec<i64> {
    integers(source, lines, true)
}

/// The integers on `lines` (1-based) of Rust `source` (`8_192u64`, `0x2000`), as [`python`]
/// reads Python's: the boundaries a Rust patch draws (CONTRACT.md 16.5).
pub fn rust(source: &[u8], lines: &BTreeSet<u32>) -> Vec<i64> {
    integers(source, lines, false)
}

/// Rust's integer suffixes.
const SUFFIXES: [&str; 12] = [
    "i8", "i16", "i32", "i64", "i128", "isize", "u8", "u16", "u32", "u64", "u128", "usize",
];

fn integers(source: &[u8], lines: &BTreeSet<u32>, python: bool) -> Vec<i64> {
    let Some(tree) = super::syntax::parse_code(source, python) else {
        return Vec::new();
    };
    let (kind, negation) = match python {
        true => ("integer", "unary_operator"),
        false => ("integer_literal", "unary_expression"),
    };
    let mut out: Vec<i64> = Vec::new();
    for node in descendants(tree.root_node()) {
        let line = u32::try_from(node.start_position().row + 1).unwrap_or(u32::MAX);
        if node.kind() != kind || !lines.contains(&line) {
            continue;
        }
        let written = text(source, node);
        let body = match SUFFIXES.iter().find(|s| !python && written.ends_with(**s)) {
            Some(s) => &written[..written.len() - s.len()],
            None => written,
        };
        let Some(mut n) = value(body) else {
            continue;
        };
        if node
            .parent()
            .is_some_and(|p| p.kind() == negation && text(source, p).starts_with('-'))
        {
            n = -n;
        }
        if !out.contains(&n) {
            out.push(n);
        }
        if out.len() == MAX_INTEGERS {
            break;
        }
    }
    out
}

/// A Python integer literal's value, when it fits an `i64`.
fn value(literal: &str) -> Option<i64> {
    let digits: String = literal.chars().filter(|c| *c != '_').collect();
    let lower = digits.to_ascii_lowercase();
    let (body, radix) = match lower.get(..2) {
        Some("0x") => (&lower[2..], 16),
        Some("0o") => (&lower[2..], 8),
        Some("0b") => (&lower[2..], 2),
        _ => (lower.as_str(), 10),
    };
    i64::from_str_radix(body, radix).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_integers_on_the_added_lines_as_python_reads_them() {
        let source = b"LIMIT = 8_192\nx = 0x10 + 7\ny = -3\ns = \"99\"  # 42\nz = 2.5\nw = 100000000000000000000\n";
        let all: BTreeSet<u32> = (1..=6).collect();
        // Written by hand: the string's digits, the comment's and the float are not integers;
        // what does not fit an i64 is left out.
        assert_eq!(python(source, &all), vec![8192, 16, 7, -3]);
        assert_eq!(python(source, &BTreeSet::from([2])), vec![16, 7]);
        assert!(python(b"def (:\n  1\n", &all).is_empty());
    }

    #[test]
    fn the_integers_on_the_added_lines_as_rustc_reads_them() {
        let source = b"const A: u64 = 8_192u64;\nfn f(x: i64) -> i64 { x + 0x10 - -3i64 }\nconst S: &str = \"99\"; // 42\nconst F: f64 = 2.5;\n";
        let all: BTreeSet<u32> = (1..=4).collect();
        assert_eq!(rust(source, &all), vec![8192, 16, -3]);
        assert_eq!(rust(source, &BTreeSet::from([1])), vec![8192]);
    }
}
