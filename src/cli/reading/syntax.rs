//! What both parsers share: the walk over a syntax tree (iterative: a hostile file nests as
//! deep as it likes), a node's text, and what a walk collects.

use tree_sitter::{Node, TreeCursor};

use super::table::Seen;

/// Every node under `root` (itself first), depth first, without recursion.
pub fn descendants(root: Node<'_>) -> Descendants<'_> {
    Descendants {
        cursor: root.walk(),
        done: false,
        entered: false,
    }
}

pub struct Descendants<'a> {
    cursor: TreeCursor<'a>,
    done: bool,
    /// The last step went into the children of the node returned last.
    entered: bool,
}

impl<'a> Descendants<'a> {
    /// Leaves the subtree of the node returned last unvisited.
    pub fn skip_children(&mut self) {
        if std::mem::take(&mut self.entered) && self.cursor.goto_parent() {
            self.advance();
        }
    }

    /// To the next sibling, or the next sibling of the nearest parent that has one.
    fn advance(&mut self) {
        loop {
            if self.cursor.goto_next_sibling() {
                return;
            }
            if !self.cursor.goto_parent() {
                self.done = true;
                return;
            }
        }
    }
}

impl<'a> Iterator for Descendants<'a> {
    type Item = Node<'a>;

    fn next(&mut self) -> Option<Node<'a>> {
        if self.done {
            return None;
        }
        let node = self.cursor.node();
        // Step past it now; `skip_children` undoes the step into its children.
        self.entered = self.cursor.goto_first_child();
        if !self.entered {
            self.advance();
        }
        Some(node)
    }
}

/// A node's source text ("" if it is not UTF-8).
pub fn text<'s>(source: &'s [u8], node: Node<'_>) -> &'s str {
    node.utf8_text(source).unwrap_or_default()
}

/// The lines of one file a patch adds, sorted.
pub struct Added(pub Vec<usize>);

impl Added {
    pub fn has(&self, line: usize) -> bool {
        self.0.binary_search(&line).is_ok()
    }

    /// Whether any line in `first..=last` is added.
    pub fn any(&self, first: usize, last: usize) -> bool {
        let at = self.0.partition_point(|l| *l < first);
        self.0.get(at).is_some_and(|l| *l <= last)
    }
}

/// What a walk saw, by 1-based line.
#[derive(Debug, Default)]
pub struct Walk {
    pub seen: Vec<(usize, Seen)>,
}

impl Walk {
    pub fn saw(&mut self, line: usize, seen: Seen) {
        self.seen.push((line, seen));
    }

    /// A compared literal, when it is long enough to pin an input: a string of 4 or more
    /// characters (on one line), a number with 3 or more significant digits.
    pub fn literal(&mut self, line: usize, literal: String) {
        if let Some(l) = pinnable(&literal) {
            self.seen.push((line, Seen::Literal(l)));
        }
    }
}

/// The form of a literal the tests would spell, when it can pin an input: a string's
/// content (4 or more characters, no line break); a number's digits without `_` or a
/// type suffix (3 or more significant digits).
fn pinnable(literal: &str) -> Option<String> {
    let number = literal
        .strip_prefix('-')
        .unwrap_or(literal)
        .starts_with(|c: char| c.is_ascii_digit() || c == '.');
    if !number {
        return (literal.chars().count() >= 4 && !literal.contains('\n'))
            .then(|| literal.to_owned());
    }
    let mut digits: String = literal.chars().filter(|c| *c != '_').collect();
    // Rust's type suffixes (`1000u32`, `2.5f64`).
    for suffix in [
        "u128", "i128", "usize", "isize", "u64", "i64", "u32", "i32", "u16", "i16", "u8", "i8",
        "f64", "f32",
    ] {
        if let Some(d) = digits.strip_suffix(suffix)
            && !digits.starts_with("0x")
        {
            digits = d.to_owned();
            break;
        }
    }
    let hex = digits.starts_with("0x") || digits.starts_with("0X");
    let mantissa = if hex {
        &digits[2..]
    } else {
        digits.split(['e', 'E']).next().unwrap_or(&digits)
    };
    let significant = mantissa
        .chars()
        .filter(|c| c.is_ascii_hexdigit())
        .collect::<String>();
    let significant = significant.trim_start_matches('0').trim_end_matches('0');
    (significant.len() >= 3).then_some(digits)
}

/// `source` parsed whole, or `None` (not UTF-8, not parsed, or with a syntax error).
pub(crate) fn parse(source: &[u8], language: &tree_sitter::Language) -> Option<tree_sitter::Tree> {
    std::str::from_utf8(source).ok()?;
    let mut parser = tree_sitter::Parser::new();
    parser.set_language(language).ok()?;
    parser
        .parse(source, None)
        .filter(|t| !t.root_node().has_error())
}

/// `source` parsed as Python (`python`) or Rust, as [`parse`] does.
pub(crate) fn parse_code(source: &[u8], python: bool) -> Option<tree_sitter::Tree> {
    let language: tree_sitter::Language = match python {
        true => tree_sitter_python::LANGUAGE.into(),
        false => tree_sitter_rust::LANGUAGE.into(),
    };
    parse(source, &language)
}

#[cfg(test)]
mod tests {
    use super::pinnable;

    /// Section 14.2: a string of 4 or more characters, a number with 3 or more significant
    /// digits.
    #[test]
    fn what_can_pin_an_input() {
        for (literal, pins) in [
            ("abc", None),
            ("abcd", Some("abcd")),
            ("a\nbcd", None),
            ("100", None),
            ("1000", None),
            ("123", Some("123")),
            ("1_234", Some("1234")),
            ("12345u32", Some("12345")),
            ("0.125", Some("0.125")),
            ("0.5", None),
            ("2.5e10", None),
            ("0x1ff", Some("0x1ff")),
            ("-4321", Some("-4321")),
        ] {
            assert_eq!(pinnable(literal).as_deref(), pins, "{literal}");
        }
    }
}
