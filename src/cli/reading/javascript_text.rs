//! JavaScript's text as the reader needs it (issue 69): the strings code spells, folded as far
//! as the parser can tell, and the TypeScript syntax tree-sitter's grammar lacks, blanked
//! before it parses.

use tree_sitter::Node;

use super::syntax::{Walk, text};

/// A folded string is kept up to this many bytes.
const MAX_TEXT: usize = 4096;

/// Blanks (spaces for their bytes, line breaks kept) what TypeScript accepts and tree-sitter's
/// TypeScript grammar 0.23 does not, so that a file using it is read rather than unparsed
/// (tree-sitter/tree-sitter-typescript issue 370): a type parameter's variance (`<in T>`,
/// `<out T>`, `<const in out T>`, TypeScript 4.7) and `export type *` (5.0), which becomes the
/// runtime `export *` (the reader sees more, not less). Neither runs; positions are kept.
/// What this blanks in a string or a comment only removes the words `in`, `out` or `type`.
pub fn blank_grammar_gaps(text: &mut [u8]) {
    use std::sync::LazyLock;
    static GAPS: LazyLock<Option<regex::bytes::Regex>> = LazyLock::new(|| {
        regex::bytes::Regex::new(
            r"[<,](?:\s|/\*(?s:.*?)\*/|//[^\n]*)*(?:const\s+)?(in\s+out|in|out)\s+[A-Za-z_$]|\bexport\s+(type)\s*\*",
        )
        .ok()
    });
    let Some(gaps) = GAPS.as_ref() else { return };
    let spans: Vec<(usize, usize)> = gaps
        .captures_iter(text)
        .filter_map(|c| c.get(1).or_else(|| c.get(2)))
        .map(|m| (m.start(), m.end()))
        .collect();
    for (start, end) in spans {
        for b in text.iter_mut().take(end).skip(start) {
            if *b != b'\n' {
                *b = b' ';
            }
        }
    }
}

/// The string `node` is, when the parser can tell: a string literal (its escapes decoded),
/// a template whose substitutions fold, `+` of such, `String.fromCharCode` of numbers. An
/// explicit stack: a hostile file nests `+` as deep as it likes.
pub(super) fn fold(source: &[u8], node: Node<'_>) -> Option<String> {
    let mut out = String::new();
    // Nodes still to append, the last first.
    let mut todo = vec![node];
    while let Some(n) = todo.pop() {
        if out.len() > MAX_TEXT {
            break;
        }
        match n.kind() {
            "string" => {
                for part in n.named_children(&mut n.walk()) {
                    match part.kind() {
                        "string_fragment" => out.push_str(text(source, part)),
                        "escape_sequence" => out.push_str(&unescape(text(source, part))?),
                        _ => return None,
                    }
                }
            }
            "template_string" => {
                let mut parts: Vec<Node<'_>> = n.named_children(&mut n.walk()).collect();
                parts.reverse();
                for part in parts {
                    match part.kind() {
                        "string_fragment" | "escape_sequence" => todo.push(part),
                        "template_substitution" => todo.push(part.named_child(0)?),
                        _ => return None,
                    }
                }
            }
            "string_fragment" => out.push_str(text(source, n)),
            "escape_sequence" => out.push_str(&unescape(text(source, n))?),
            "parenthesized_expression" => todo.push(n.named_child(0)?),
            "binary_expression" => {
                let op = n.child_by_field_name("operator")?;
                if text(source, op) != "+" {
                    return None;
                }
                todo.push(n.child_by_field_name("right")?);
                todo.push(n.child_by_field_name("left")?);
            }
            "call_expression" => {
                let callee = n.child_by_field_name("function")?;
                if text(source, callee).split_whitespace().collect::<String>()
                    != "String.fromCharCode"
                {
                    return None;
                }
                let args = n.child_by_field_name("arguments")?;
                for a in args.named_children(&mut args.walk()) {
                    if a.kind() != "number" {
                        return None;
                    }
                    let code = parse_number(text(source, a))?;
                    out.push(char::from_u32(code & 0xffff)?);
                }
            }
            _ => return None,
        }
    }
    Some(out.chars().take(MAX_TEXT).collect())
}

/// A JavaScript number literal's integer value (`116`, `0x74`, `0o164`, `0b1110100`).
fn parse_number(t: &str) -> Option<u32> {
    let t = t.replace('_', "");
    let (digits, radix) = match t.get(..2) {
        Some("0x" | "0X") => (t.get(2..)?, 16),
        Some("0o" | "0O") => (t.get(2..)?, 8),
        Some("0b" | "0B") => (t.get(2..)?, 2),
        _ => (t.as_str(), 10),
    };
    u32::from_str_radix(digits, radix).ok()
}

/// One escape sequence's text as the string holds it (`\x74` is `t`, `\u{1F600}`, a line
/// continuation is nothing); `None` where it cannot tell.
fn unescape(e: &str) -> Option<String> {
    let body = e.strip_prefix('\\')?;
    let mut chars = body.chars();
    let first = chars.next()?;
    let rest: String = chars.collect();
    let hex = |h: &str| u32::from_str_radix(h, 16).ok().and_then(char::from_u32);
    Some(match first {
        'n' => "\n".into(),
        't' => "\t".into(),
        'r' => "\r".into(),
        'b' => "\u{8}".into(),
        'f' => "\u{c}".into(),
        'v' => "\u{b}".into(),
        '0' if rest.is_empty() => "\0".into(),
        'x' => hex(&rest)?.to_string(),
        'u' => match rest.strip_prefix('{').and_then(|r| r.strip_suffix('}')) {
            Some(h) => hex(h)?.to_string(),
            None => hex(&rest)?.to_string(),
        },
        '\n' | '\r' | '\u{2028}' | '\u{2029}' => String::new(),
        c if rest.is_empty() && !c.is_ascii_digit() => c.to_string(),
        _ => return None,
    })
}

/// A comparison's literal operands (`x === "espresso"`, `n < 1000`), for the special case.
pub(super) fn compared(source: &[u8], node: Node<'_>, line: usize, walk: &mut Walk) {
    let op = node
        .child_by_field_name("operator")
        .map(|o| text(source, o))
        .unwrap_or_default();
    if !matches!(op, "===" | "!==" | "==" | "!=" | "<" | ">" | "<=" | ">=") {
        return;
    }
    // `typeof x === "string"` names a type, not an input.
    let is_typeof = |n: Node<'_>| {
        n.kind() == "unary_expression" && n.child(0).is_some_and(|o| o.kind() == "typeof")
    };
    let sides = [
        node.child_by_field_name("left"),
        node.child_by_field_name("right"),
    ];
    if sides.iter().flatten().any(|s| is_typeof(*s)) {
        return;
    }
    for side in ["left", "right"] {
        if let Some(l) = node
            .child_by_field_name(side)
            .and_then(|s| literal(source, s))
        {
            walk.literal(line, l);
        }
    }
}

/// A literal as the tests would spell it: a string's content, a number's text (`-` kept).
pub(super) fn literal(source: &[u8], node: Node<'_>) -> Option<String> {
    match node.kind() {
        "number" => Some(text(source, node).to_owned()),
        "unary_expression" => {
            let op = node.child(0)?;
            let arg = node.child_by_field_name("argument")?;
            (text(source, op) == "-" && arg.kind() == "number")
                .then(|| format!("-{}", text(source, arg)))
        }
        "string" | "template_string" => fold(source, node),
        _ => None,
    }
}
