//! What Rust's comparison with the base reads (issue 66; CONTRACT.md 16.5;
//! docs/design/replay.md): the free `pub fn`s of a file with their argument types, by syntax
//! (tree-sitter's Rust grammar), and the calls the tests make to them with literal arguments,
//! each argument turned into a Rust expression of the argument's owned type, checked here so
//! the program that makes the call compiles. A type the comparison has no strategy for is
//! said, never guessed.

pub use super::rust_literals::ArgType;
use super::syntax::{descendants, text};
use tree_sitter::Node;

/// A free `pub fn` of a file, reachable by its module path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PubFn {
    pub name: String,
    /// The modules inside the file it sits in (`pub mod` items).
    pub module: Vec<String>,
    /// The type whose inherent impl holds it (an associated function), if any.
    pub owner: Option<String>,
    /// The line of its `fn`, and its last line (1-based).
    pub rows: (u32, u32),
    /// Each parameter: its pattern as written and its type, or why the function is not compared.
    pub params: Result<Vec<(String, ArgType)>, String>,
    /// Its return type as written, whitespace aside (`()` when none).
    pub returns: String,
}

/// Every function of `source` outside its test code, free or in an impl: those another crate
/// calls by a path (`pub`, through `pub mod`s, or a plainly named type's inherent `pub fn`)
/// with their parameters, every other one with why it is not called (`params` an error);
/// none when the file does not parse whole.
pub fn functions(source: &[u8]) -> Vec<PubFn> {
    let Some(tree) = super::syntax::parse_code(source, false) else {
        return Vec::new();
    };
    let tests = super::rust::test_rows(source, tree.root_node());
    let mut out = Vec::new();
    // Each scope, its modules, and why its functions cannot be called from outside (`None`:
    // they can, when `pub`).
    type Scope<'t> = (Node<'t>, Vec<String>, Option<&'static str>);
    let mut stack: Vec<Scope<'_>> = vec![(tree.root_node(), Vec::new(), None)];
    let mut add = |source: &[u8],
                   f: Node<'_>,
                   module: &[String],
                   owner: Option<String>,
                   unreachable: Option<&str>| {
        if let Some(mut f) = pub_fn(source, f, module) {
            f.owner = owner;
            if let Some(why) = unreachable {
                f.params = Err(why.to_owned());
            }
            out.push(f);
        }
    };
    while let Some((scope, module, reach)) = stack.pop() {
        let mut cursor = scope.walk();
        for item in scope.named_children(&mut cursor) {
            let row = item.start_position().row + 1;
            if tests.iter().any(|(a, b)| (*a..=*b).contains(&row)) {
                continue;
            }
            let private =
                (!is_pub(source, item)).then_some("not `pub`: only the crate's own code calls it");
            match item.kind() {
                // An impl's functions: a plainly named type's inherent ones are called by its
                // name (`Version::parse`); a trait's through the trait, a generic type's with
                // no one type: said, not called. A method needs a value to call it on.
                "impl_item" => {
                    let owner = item
                        .child_by_field_name("type")
                        .map(|t| text(source, t).to_owned());
                    let why = match (
                        item.child_by_field_name("trait").is_some(),
                        item.child_by_field_name("type_parameters").is_some(),
                    ) {
                        (true, _) => Some("a trait's function: called through the trait"),
                        (false, true) => Some("a generic type's function"),
                        (false, false) => reach,
                    };
                    if let Some(body) = item.child_by_field_name("body") {
                        let mut inner = body.walk();
                        for f in body.named_children(&mut inner) {
                            let own = match (why, is_pub(source, f)) {
                                (Some(w), _) => Some(w),
                                (None, false) => {
                                    Some("not `pub`: only the crate's own code calls it")
                                }
                                (None, true) => None,
                            };
                            if f.kind() == "function_item" {
                                add(source, f, &module, owner.clone(), own);
                            }
                        }
                    }
                }
                "mod_item" => {
                    if let (Some(name), Some(body)) = (
                        item.child_by_field_name("name"),
                        item.child_by_field_name("body"),
                    ) && module.len() < 8
                    {
                        let mut inner = module.clone();
                        inner.push(text(source, name).to_owned());
                        let reach = reach.or(private.map(|_| "in a module that is not `pub`"));
                        stack.push((body, inner, reach));
                    }
                }
                "function_item" => add(source, item, &module, None, reach.or(private)),
                _ => {}
            }
        }
    }
    out.sort_by_key(|f| f.rows);
    out
}

/// Exactly `pub` (not `pub(crate)`: not reachable from another crate).
fn is_pub(source: &[u8], item: Node<'_>) -> bool {
    let mut cursor = item.walk();
    let visible = item
        .children(&mut cursor)
        .find(|c| c.kind() == "visibility_modifier");
    visible.is_some_and(|v| text(source, v) == "pub")
}

fn pub_fn(source: &[u8], item: Node<'_>, module: &[String]) -> Option<PubFn> {
    let name = text(source, item.child_by_field_name("name")?).to_owned();
    let rows = (
        u32::try_from(item.start_position().row + 1).ok()?,
        u32::try_from(item.end_position().row + 1).ok()?,
    );
    let returns: String = item
        .child_by_field_name("return_type")
        .map_or("()", |r| text(source, r))
        .chars()
        .filter(|c| !c.is_whitespace())
        .collect();
    let params = params(source, item);
    Some(PubFn {
        name,
        module: module.to_vec(),
        owner: None,
        rows,
        params,
        returns,
    })
}

fn params(source: &[u8], item: Node<'_>) -> Result<Vec<(String, ArgType)>, String> {
    let mut cursor = item.walk();
    for c in item.children(&mut cursor) {
        if c.kind() == "function_modifiers" {
            let m = text(source, c);
            if ["async", "unsafe", "extern"].iter().any(|k| m.contains(k)) {
                return Err(format!("an `{m}` function is not called"));
            }
        }
    }
    if let Some(generics) = item.child_by_field_name("type_parameters")
        && descendants(generics).any(|n| {
            matches!(
                n.kind(),
                "type_parameter" | "const_parameter" | "constrained_type_parameter"
            )
        })
    {
        return Err("a generic function: no one type to draw its values from".to_owned());
    }
    let list = item
        .child_by_field_name("parameters")
        .ok_or_else(|| "no parameter list".to_owned())?;
    let mut out = Vec::new();
    let mut cursor = list.walk();
    for p in list.named_children(&mut cursor) {
        match p.kind() {
            "parameter" => {
                let pattern = p
                    .child_by_field_name("pattern")
                    .map_or("_", |n| text(source, n));
                let written = p
                    .child_by_field_name("type")
                    .map_or("", |n| text(source, n));
                let Some(t) = ArgType::parse(written) else {
                    let shown: String = written.chars().take(60).collect();
                    return Err(format!("an argument of type `{shown}` has no strategy"));
                };
                out.push((pattern.trim_start_matches("mut ").to_owned(), t));
            }
            "line_comment" | "block_comment" | "attribute_item" => {}
            "self_parameter" => {
                return Err("a method: no value of its type to call it on".to_owned());
            }
            other => return Err(format!("a parameter the comparison cannot make ({other})")),
        }
    }
    Ok(out)
}

/// A call a test makes with literal arguments only.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LiteralCall {
    /// The test function it is in, with its modules (`tests::no_parts`), or the file's line.
    pub test: String,
    /// The arguments as written.
    pub written: String,
    /// Each argument as an expression of its owned type.
    pub args: Vec<String>,
}

/// The most argument text read for one call.
const MAX_ARGUMENT_BYTES: usize = 4096;

/// The calls of `source` to a function named `name` whose arguments are literals of `types`:
/// in the test code only, unless `all_test` (a file under `tests/`); both plain calls and the
/// calls inside a macro's tokens (`assert_eq!(split(5, 0), ...)`).
pub fn literal_calls(
    source: &[u8],
    name: &str,
    types: &[ArgType],
    all_test: bool,
) -> Vec<LiteralCall> {
    let Some(tree) = super::syntax::parse_code(source, false) else {
        return Vec::new();
    };
    let tests = super::rust::test_rows(source, tree.root_node());
    let mut out: Vec<LiteralCall> = Vec::new();
    for node in descendants(tree.root_node()) {
        if node.kind() != "identifier" || text(source, node) != name {
            continue;
        }
        let row = node.start_position().row + 1;
        if !all_test && !tests.iter().any(|(a, b)| (*a..=*b).contains(&row)) {
            continue;
        }
        let Some(arguments) = arguments_of(source, node) else {
            continue;
        };
        let written = text(source, arguments);
        if written.len() > MAX_ARGUMENT_BYTES {
            continue;
        }
        let Some(args) = super::rust_literals::parse_arguments(written, types) else {
            continue;
        };
        let test = enclosing_test(source, node).unwrap_or_else(|| format!("line {row}"));
        out.push(LiteralCall {
            test,
            written: written.to_owned(),
            args,
        });
    }
    out
}

/// The argument list a function named by `name` is called with: a call expression's, or in
/// a macro's tokens the parenthesised tokens right after the name (not a method's, not a
/// definition's).
fn arguments_of<'t>(source: &[u8], name: Node<'t>) -> Option<Node<'t>> {
    let parent = name.parent()?;
    match parent.kind() {
        "call_expression" => parent.child_by_field_name("arguments"),
        "scoped_identifier" => {
            let call = parent.parent().filter(|c| c.kind() == "call_expression")?;
            (call.child_by_field_name("function")? == parent)
                .then(|| call.child_by_field_name("arguments"))
                .flatten()
        }
        "token_tree" => {
            let before = name.prev_sibling().map(|p| text(source, p));
            if matches!(before, Some("." | "fn")) {
                return None;
            }
            name.next_sibling()
                .filter(|n| n.kind() == "token_tree" && text(source, *n).starts_with('('))
        }
        _ => None,
    }
}

/// The test function `node` is in, with its modules.
fn enclosing_test(source: &[u8], node: Node<'_>) -> Option<String> {
    let mut names = Vec::new();
    let mut at = node;
    while let Some(p) = at.parent() {
        if matches!(p.kind(), "function_item" | "mod_item")
            && let Some(n) = p.child_by_field_name("name")
        {
            names.push(text(source, n).to_owned());
        }
        at = p;
    }
    names.reverse();
    (!names.is_empty()).then(|| names.join("::"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn functions_are_found_with_why_not_called_and_tests_calls_with_literals() {
        let source = br#"
pub fn split(total: u64, parts: u64) -> Vec<u64> { Vec::new() }
fn private(x: u64) {}
pub(crate) fn crate_only(x: u64) {}
pub fn generic<T: Copy>(x: T) {}
pub mod inner { pub fn named(s: &str) -> usize { s.len() } }
impl X { pub fn method(&self) {} pub fn new(n: u8) -> Self { X } fn private() {} }
impl Display for X { fn fmt(&self) {} }
#[cfg(test)]
mod tests {
    use super::split;
    pub fn helper() {}
    #[test]
    fn no_parts() { assert!(split(5, 0).is_empty()); assert_eq!(split(n, 1), vec![]); }
}
"#;
        let fns = functions(source);
        let names: Vec<(&str, &[String], Option<&str>, bool)> = fns
            .iter()
            .map(|f| {
                let (name, module) = (f.name.as_str(), f.module.as_slice());
                (name, module, f.owner.as_deref(), f.params.is_ok())
            })
            .collect();
        let inner = ["inner".to_owned()];
        let x = Some("X");
        assert_eq!(
            names,
            [
                ("split", &[][..], None, true),
                ("private", &[][..], None, false),
                ("crate_only", &[][..], None, false),
                ("generic", &[][..], None, false),
                ("named", &inner[..], None, true),
                ("method", &[][..], x, false),
                ("new", &[][..], x, true),
                ("private", &[][..], x, false),
                ("fmt", &[][..], x, false),
            ]
        );
        let why = |i: usize| fns[i].params.as_ref().err().map(String::as_str);
        assert_eq!(
            why(1),
            Some("not `pub`: only the crate's own code calls it")
        );
        assert_eq!(why(5), Some("a method: no value of its type to call it on"));
        assert_eq!(why(8), Some("a trait's function: called through the trait"));
        let types = [ArgType::Int("u64"), ArgType::Int("u64")];
        let calls = literal_calls(source, "split", &types, false);
        assert_eq!(
            calls,
            [LiteralCall {
                test: "tests::no_parts".to_owned(),
                written: "(5, 0)".to_owned(),
                args: vec!["5u64".to_owned(), "0u64".to_owned()],
            }]
        );
    }
}
