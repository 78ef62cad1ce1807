//! What added Rust code does, read from its syntax tree (tree-sitter's Rust grammar): the
//! paths it uses (through its `use` declarations), `cfg(test)` outside a test module, the
//! strings it spells, the comparison traits it implements by hand, the literals it
//! compares against. A test module (`#[cfg(test)] mod`, `mod tests`) and a `#[test]`
//! function are the tests' own business and are not read.

use std::collections::HashMap;

use tree_sitter::Node;

use super::syntax::{Added, Walk, descendants, text};
use super::table::Seen;

/// With `build_script` (a Cargo `build.rs`), `env::var`/`env::var_os` of one literal naming a
/// variable cargo documents for build scripts ([`cargo_sets`]) is how a build script is
/// written, not a probe; any other read of the environment still is.
pub fn read(source: &[u8], root: Node<'_>, added: &Added, walk: &mut Walk, build_script: bool) {
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
                        let path = normal(&path);
                        // The calls are judged where they are made.
                        if !(build_script && ENV_READS.contains(&path.as_str())) {
                            walk.saw(line, Seen::Name(path));
                        }
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
                let path = normal(&path);
                if !(build_script && reads_cargo_variable(source, node, &path)) {
                    walk.saw(line, Seen::Name(path));
                }
            }
            "identifier" => {
                let scoped = node
                    .parent()
                    .is_some_and(|p| p.kind() == "scoped_identifier");
                if !scoped && let Some(full) = uses.get(text(source, node)) {
                    let path = normal(full);
                    if !(build_script && reads_cargo_variable(source, node, &path)) {
                        walk.saw(line, Seen::Name(path));
                    }
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

/// The reads of one environment variable a build script makes.
const ENV_READS: [&str; 2] = ["env::var", "env::var_os"];

/// Whether `node` (naming `path`) is the function of a call `env::var("NAME")` or
/// `env::var_os("NAME")`, its one argument a plain string literal that [`cargo_sets`].
fn reads_cargo_variable(source: &[u8], node: Node<'_>, path: &str) -> bool {
    if !ENV_READS.contains(&path) {
        return false;
    }
    let Some(call) = node.parent().filter(|p| p.kind() == "call_expression") else {
        return false;
    };
    if call.child_by_field_name("function") != Some(node) {
        return false;
    }
    let Some(args) = call.child_by_field_name("arguments") else {
        return false;
    };
    let mut walker = args.walk();
    let named: Vec<Node<'_>> = args.named_children(&mut walker).collect();
    match named.as_slice() {
        [arg] if arg.kind() == "string_literal" => {
            let mut cursor = arg.walk();
            let mut parts = arg.named_children(&mut cursor);
            match (parts.next(), parts.next()) {
                (Some(p), None) if p.kind() == "string_content" => cargo_sets(text(source, p)),
                _ => false,
            }
        }
        _ => false,
    }
}

/// Whether cargo sets `name` for a build script (The Cargo Book, "Environment variables
/// Cargo sets for build scripts"): the same in a `cargo build` and a `cargo test`.
fn cargo_sets(name: &str) -> bool {
    const EXACT: [&str; 18] = [
        "CARGO",
        "CARGO_MANIFEST_DIR",
        "CARGO_MANIFEST_PATH",
        "CARGO_MANIFEST_LINKS",
        "CARGO_MAKEFLAGS",
        "CARGO_ENCODED_RUSTFLAGS",
        "OUT_DIR",
        "TARGET",
        "HOST",
        "NUM_JOBS",
        "OPT_LEVEL",
        "DEBUG",
        "PROFILE",
        "RUSTC",
        "RUSTDOC",
        "RUSTC_LINKER",
        "RUSTC_WRAPPER",
        "RUSTC_WORKSPACE_WRAPPER",
    ];
    const PREFIXES: [&str; 4] = ["CARGO_FEATURE_", "CARGO_CFG_", "CARGO_PKG_", "DEP_"];
    let plain = !name.is_empty()
        && name
            .bytes()
            .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_');
    plain && (EXACT.contains(&name) || PREFIXES.iter().any(|p| name.starts_with(p)))
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

/// The rows (1-based, inclusive) of the test code inside a Rust source file (issue 50): each
/// item under exactly `#[cfg(test)]` or `#[test]` (from that attribute to the item's end: code
/// compiled only into a test build), and each doc comment line (`///`, `//!`) of a fenced
/// block (a doctest). Nothing else: `mod tests` without the attribute, `#[cfg(not(test))]`,
/// another crate's `::test` attribute are code, as the compiler of a release build has them.
pub fn test_rows(source: &[u8], root: Node<'_>) -> Vec<(usize, usize)> {
    let mut rows = Vec::new();
    let mut fence: Option<usize> = None;
    let mut last_doc: Option<usize> = None;
    for node in descendants(root) {
        let row = node.start_position().row + 1;
        match node.kind() {
            "attribute_item" => {
                let compact: String = text(source, node)
                    .chars()
                    .filter(|c| !c.is_whitespace())
                    .collect();
                if (compact == "#[cfg(test)]" || compact == "#[test]")
                    && let Some(item) = next_item(node)
                {
                    rows.push((row, item.end_position().row + 1));
                }
            }
            "line_comment" => {
                let t = text(source, node);
                let body = match (t.strip_prefix("///"), t.strip_prefix("//!")) {
                    (Some(b), _) if !b.starts_with('/') => Some(b),
                    (_, Some(b)) => Some(b),
                    _ => None,
                };
                // A doc block is a run of doc lines; a fence left open ends with it.
                if last_doc.is_none_or(|l| l + 1 != row) {
                    fence = None;
                }
                match body {
                    Some(b) => {
                        last_doc = Some(row);
                        let fenced = b.trim_start().starts_with("```");
                        if fence.is_some() || fenced {
                            rows.push((row, row));
                        }
                        if fenced {
                            fence = match fence {
                                Some(_) => None,
                                None => Some(row),
                            };
                        }
                    }
                    None => fence = None,
                }
            }
            _ => {}
        }
    }
    rows
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
