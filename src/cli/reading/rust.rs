//! What added Rust code does, read from its syntax tree (tree-sitter's Rust grammar): the
//! paths it uses (through its `use` declarations), `cfg(test)` outside a test module, the
//! strings it spells, the comparison traits it implements by hand, the literals it
//! compares against. A test module (`#[cfg(test)] mod`, `mod tests`) and a `#[test]`
//! function are the tests' own business and are not read.

use std::collections::HashMap;

use tree_sitter::Node;

use super::syntax::{Added, Walk, descendants, text};
use super::table::Seen;

pub fn read(source: &[u8], root: Node<'_>, added: &Added, walk: &mut Walk) {
    let uses = uses(source, root);
    let mut nodes = descendants(root);
    while let Some(node) = nodes.next() {
        let line = node.start_position().row + 1;
        match node.kind() {
            "mod_item" | "function_item" if is_test_item(source, node) => {
                nodes.skip_children();
            }
            "impl_item" => {
                let end = node.end_position().row + 1;
                if let Some(t) = node.child_by_field_name("trait")
                    && added.any(line, end)
                {
                    walk.saw(line, Seen::Impl(last_segment(text(source, t)).to_owned()));
                }
            }
            _ if !added.has(line) => {}
            "attribute_item" => {
                // On a `mod`, `#[cfg(test)]` makes it a test module (skipped above).
                let on_mod = next_item(node).is_some_and(|n| n.kind() == "mod_item");
                if !on_mod && is_cfg_test(source, node) {
                    walk.saw(line, Seen::CfgTest);
                }
            }
            "macro_invocation" => {
                let name = node
                    .child_by_field_name("macro")
                    .map(|m| text(source, m))
                    .unwrap_or_default();
                if name == "cfg" && has_test_token(source, node) {
                    walk.saw(line, Seen::CfgTest);
                }
                if name == "concat" {
                    let mut s = String::new();
                    for part in descendants(node) {
                        if part.kind() == "string_content" {
                            s.push_str(text(source, part));
                        }
                    }
                    walk.saw(line, Seen::Text(s));
                }
            }
            "use_declaration" => {
                if let Some(arg) = node.child_by_field_name("argument") {
                    let mut paths = Vec::new();
                    flatten(source, arg, "", &mut paths);
                    for (path, _) in paths {
                        walk.saw(line, Seen::Name(normal(&path)));
                    }
                }
                nodes.skip_children();
            }
            "scoped_identifier" => {
                let path = text(source, node);
                let first = path.split("::").next().unwrap_or_default();
                let path = match uses.get(first) {
                    Some(full) => format!("{full}{}", &path[first.len()..]),
                    None => path.to_owned(),
                };
                walk.saw(line, Seen::Name(normal(&path)));
            }
            "identifier" => {
                let scoped = node
                    .parent()
                    .is_some_and(|p| p.kind() == "scoped_identifier");
                if !scoped && let Some(full) = uses.get(text(source, node)) {
                    walk.saw(line, Seen::Name(normal(full)));
                }
            }
            "string_literal" | "raw_string_literal" => {
                let mut s = String::new();
                for part in node.named_children(&mut node.walk()) {
                    if part.kind() == "string_content" {
                        s.push_str(text(source, part));
                    }
                }
                if compared(node) {
                    walk.literal(line, s.clone());
                }
                walk.saw(line, Seen::Text(s));
            }
            "integer_literal" | "float_literal" if compared(node) => {
                walk.literal(line, text(source, node).to_owned());
            }
            _ => {}
        }
    }
}

/// What the file's `use` declarations bind: a name to the path it stands for.
fn uses(source: &[u8], root: Node<'_>) -> HashMap<String, String> {
    let mut map = HashMap::new();
    for node in descendants(root) {
        if node.kind() == "use_declaration"
            && let Some(arg) = node.child_by_field_name("argument")
        {
            let mut paths = Vec::new();
            flatten(source, arg, "", &mut paths);
            for (path, bound) in paths {
                if let Some(bound) = bound {
                    map.insert(bound, path);
                }
            }
        }
    }
    map
}

/// The full paths a `use` tree names, each with the name it binds (`use a::{b as c, d::*}`
/// → `a::b` bound to `c`, `a::d::*` bound to nothing).
fn flatten(source: &[u8], node: Node<'_>, prefix: &str, out: &mut Vec<(String, Option<String>)>) {
    let join = |name: &str| {
        if prefix.is_empty() {
            name.to_owned()
        } else {
            format!("{prefix}::{name}")
        }
    };
    match node.kind() {
        "scoped_use_list" => {
            let path = node
                .child_by_field_name("path")
                .map(|p| join(text(source, p)))
                .unwrap_or_else(|| prefix.to_owned());
            if let Some(list) = node.child_by_field_name("list") {
                flatten(source, list, &path, out);
            }
        }
        "use_list" => {
            for item in node.named_children(&mut node.walk()) {
                flatten(source, item, prefix, out);
            }
        }
        "use_as_clause" => {
            if let (Some(p), Some(a)) = (
                node.child_by_field_name("path"),
                node.child_by_field_name("alias"),
            ) {
                out.push((join(text(source, p)), Some(text(source, a).to_owned())));
            }
        }
        "use_wildcard" => {
            let path = text(source, node);
            out.push((join(path.trim_end_matches("::*")) + "::*", None));
        }
        "self" => {
            out.push((prefix.to_owned(), Some(last_segment(prefix).to_owned())));
        }
        _ => {
            let path = join(text(source, node));
            let bound = last_segment(&path).to_owned();
            out.push((path, Some(bound)));
        }
    }
}

/// A path without spaces or a leading `::`, `std::`, `core::` or `crate::`.
fn normal(path: &str) -> String {
    let path: String = path.chars().filter(|c| !c.is_whitespace()).collect();
    let mut p = path.trim_start_matches("::");
    for root in ["std::", "core::", "alloc::"] {
        if let Some(rest) = p.strip_prefix(root) {
            p = rest;
            break;
        }
    }
    p.to_owned()
}

fn last_segment(path: &str) -> &str {
    let path = path.split('<').next().unwrap_or(path);
    path.rsplit("::").next().unwrap_or(path).trim()
}

/// The item an attribute stands on.
fn next_item(attribute: Node<'_>) -> Option<Node<'_>> {
    let mut at = attribute.next_named_sibling();
    while let Some(n) = at.filter(|n| {
        matches!(
            n.kind(),
            "attribute_item" | "line_comment" | "block_comment"
        )
    }) {
        at = n.next_named_sibling();
    }
    at
}

/// The attributes standing on an item.
fn attributes_of(item: Node<'_>) -> impl Iterator<Item = Node<'_>> {
    std::iter::successors(item.prev_named_sibling(), |n| n.prev_named_sibling())
        .take_while(|n| {
            matches!(
                n.kind(),
                "attribute_item" | "line_comment" | "block_comment"
            )
        })
        .filter(|n| n.kind() == "attribute_item")
}

/// A test module (`#[cfg(test)]` on it, or named `tests`/`test`) or a test function
/// (`#[test]`, `#[tokio::test]`...).
fn is_test_item(source: &[u8], item: Node<'_>) -> bool {
    let named = |n: &str| {
        item.child_by_field_name("name")
            .is_some_and(|name| text(source, name) == n)
    };
    match item.kind() {
        "mod_item" => {
            named("tests") || named("test") || attributes_of(item).any(|a| is_cfg_test(source, a))
        }
        _ => attributes_of(item).any(|a| {
            let t = text(source, a);
            t == "#[test]" || t.ends_with("::test]") || t.starts_with("#[test_case")
        }),
    }
}

/// `#[cfg(...)]` naming `test`.
fn is_cfg_test(source: &[u8], attribute: Node<'_>) -> bool {
    descendants(attribute).any(|n| n.kind() == "attribute")
        && descendants(attribute)
            .find(|n| n.kind() == "attribute")
            .and_then(|a| a.named_child(0))
            .is_some_and(|name| text(source, name) == "cfg")
        && has_test_token(source, attribute)
}

fn has_test_token(source: &[u8], node: Node<'_>) -> bool {
    descendants(node).any(|n| n.kind() == "identifier" && text(source, n) == "test")
}

/// Whether a literal is compared against: an operand of `==`, `!=`, `<`, `<=`, `>`, `>=`
/// (through parentheses, references, signs, tuples and arrays), or in a `match` pattern.
fn compared(node: Node<'_>) -> bool {
    let mut at = node;
    while let Some(parent) = at.parent() {
        match parent.kind() {
            "binary_expression" => {
                return parent
                    .child_by_field_name("operator")
                    .is_some_and(|o| matches!(o.kind(), "==" | "!=" | "<" | "<=" | ">" | ">="));
            }
            "match_pattern" => return true,
            "parenthesized_expression"
            | "reference_expression"
            | "unary_expression"
            | "tuple_expression"
            | "array_expression"
            | "negative_literal"
            | "or_pattern"
            | "tuple_pattern"
            | "slice_pattern"
            | "range_pattern"
            | "reference_pattern"
            | "tuple_struct_pattern" => at = parent,
            _ => return false,
        }
    }
    false
}
