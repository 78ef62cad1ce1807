//! What added Python code does, read from its syntax tree (tree-sitter's Python grammar):
//! the names it uses resolved through the file's imports, the calls of built-ins, the
//! strings it folds, the comparison methods it defines, the classes it derives, the
//! literals it compares against.

use std::collections::HashMap;

use tree_sitter::Node;

use super::syntax::{Added, Walk, descendants, text};
use super::table::Seen;

/// The built-ins whose attribute name argument is read (`getattr(x, name)`).
const ATTRIBUTE_BUILTINS: [&str; 4] = ["getattr", "setattr", "hasattr", "delattr"];

/// Dunder names that mean themselves wherever they appear (no import binds them).
const BARE: [&str; 2] = ["__import__", "__builtins__"];

pub fn read(source: &[u8], root: Node<'_>, added: &Added, walk: &mut Walk) {
    let imports = imports(source, root);
    for node in descendants(root) {
        let line = node.start_position().row + 1;
        match node.kind() {
            "class_definition" => {
                // The header: from `class` to the end of its bases.
                let end = node
                    .child_by_field_name("superclasses")
                    .map_or(line, |s| s.end_position().row + 1);
                if let Some(bases) = node.child_by_field_name("superclasses")
                    && added.any(line, end)
                {
                    let names: Vec<String> = bases
                        .named_children(&mut bases.walk())
                        .filter_map(|b| dotted(source, b))
                        .map(|b| resolve(&imports, &b))
                        .collect();
                    walk.saw(line, Seen::Bases(names));
                }
            }
            "function_definition" if in_class(node) => {
                let end = node.end_position().row + 1;
                if let Some(name) = node.child_by_field_name("name")
                    && added.any(line, end)
                {
                    walk.saw(line, Seen::Method(text(source, name).to_owned()));
                }
            }
            _ if !added.has(line) => {}
            "import_statement" | "import_from_statement" => {
                for path in imported(source, node) {
                    walk.saw(line, Seen::Name(path));
                }
            }
            "assignment" if in_class(node) => {
                // `__eq__ = ...`, `__le__ = __ge__ = __eq__`.
                let mut at = Some(node);
                while let Some(a) = at.filter(|a| a.kind() == "assignment") {
                    if let Some(left) = a.child_by_field_name("left")
                        && left.kind() == "identifier"
                    {
                        walk.saw(line, Seen::Method(text(source, left).to_owned()));
                    }
                    at = a.child_by_field_name("right");
                }
            }
            "identifier" => {
                let name = text(source, node);
                if is_use(node) {
                    if BARE.contains(&name) {
                        walk.saw(line, Seen::Name(name.to_owned()));
                    } else if let Some(path) = imports.get(name) {
                        walk.saw(line, Seen::Name(path.clone()));
                    }
                }
            }
            "attribute" => {
                if let Some(attr) = node.child_by_field_name("attribute") {
                    walk.saw(line, Seen::Attribute(text(source, attr).to_owned()));
                }
                if let Some(path) = dotted(source, node) {
                    let first = path.split('.').next().unwrap_or_default();
                    if imports.contains_key(first) || BARE.contains(&first) {
                        walk.saw(line, Seen::Name(resolve(&imports, &path)));
                    }
                }
            }
            "call" => {
                call(source, node, line, &imports, walk);
                // `"".join(["py", "test"])` folds to the string it builds.
                if let Some(s) = fold(source, node, 0) {
                    walk.saw(line, Seen::Text(s));
                }
            }
            "string" | "concatenated_string" | "binary_operator" => {
                if is_docstring(node) {
                    continue;
                }
                if node.kind() == "string"
                    && let Some(s) = fold(source, node, 0)
                {
                    if compared(node) {
                        walk.literal(line, s.clone());
                    }
                    walk.saw(line, Seen::Text(s));
                }
                // The top of a fold: what the whole expression folds to.
                if node.kind() != "string"
                    && !folds_into_parent(node)
                    && let Some(s) = fold(source, node, 0)
                {
                    walk.saw(line, Seen::Text(s));
                }
            }
            "integer" | "float" if compared(node) => {
                walk.literal(line, text(source, node).to_owned());
            }
            _ => {}
        }
    }
}

/// What `import`/`from ... import` statements bind, anywhere in the file: a local name to
/// the dotted path it stands for.
fn imports(source: &[u8], root: Node<'_>) -> HashMap<String, String> {
    let mut map = HashMap::new();
    for node in descendants(root) {
        match node.kind() {
            "import_statement" => {
                for name in node.children_by_field_name("name", &mut node.walk()) {
                    match name.kind() {
                        "aliased_import" => {
                            if let (Some(n), Some(a)) = (
                                name.child_by_field_name("name"),
                                name.child_by_field_name("alias"),
                            ) {
                                map.insert(text(source, a).to_owned(), text(source, n).to_owned());
                            }
                        }
                        _ => {
                            // `import a.b` binds `a`.
                            let path = text(source, name);
                            let first = path.split('.').next().unwrap_or(path).trim();
                            map.insert(first.to_owned(), first.to_owned());
                        }
                    }
                }
            }
            "import_from_statement" => {
                let Some(module) = node.child_by_field_name("module_name") else {
                    continue;
                };
                let module = text(source, module);
                for name in node.children_by_field_name("name", &mut node.walk()) {
                    let (n, bound) = match name.kind() {
                        "aliased_import" => (
                            name.child_by_field_name("name"),
                            name.child_by_field_name("alias"),
                        ),
                        _ => (Some(name), Some(name)),
                    };
                    if let (Some(n), Some(bound)) = (n, bound) {
                        map.insert(
                            text(source, bound).to_owned(),
                            format!("{module}.{}", text(source, n)),
                        );
                    }
                }
            }
            _ => {}
        }
    }
    map
}

/// The dotted paths an import statement names (`import a.b` → `a.b`; `from os import
/// environ` → `os`, `os.environ`).
fn imported(source: &[u8], node: Node<'_>) -> Vec<String> {
    let mut out = Vec::new();
    fn name_of(n: Node<'_>) -> Option<Node<'_>> {
        match n.kind() {
            "aliased_import" => n.child_by_field_name("name"),
            _ => Some(n),
        }
    }
    if node.kind() == "import_statement" {
        for n in node.children_by_field_name("name", &mut node.walk()) {
            if let Some(n) = name_of(n) {
                out.push(text(source, n).to_owned());
            }
        }
    } else if let Some(module) = node.child_by_field_name("module_name") {
        let module = text(source, module);
        out.push(module.to_owned());
        for n in node.children_by_field_name("name", &mut node.walk()) {
            if let Some(n) = name_of(n) {
                out.push(format!("{module}.{}", text(source, n)));
            }
        }
    }
    out
}

/// `a.b.c` of an identifier or an attribute chain of identifiers.
fn dotted(source: &[u8], node: Node<'_>) -> Option<String> {
    match node.kind() {
        "identifier" => Some(text(source, node).to_owned()),
        "attribute" => {
            let object = dotted(source, node.child_by_field_name("object")?)?;
            let attr = node.child_by_field_name("attribute")?;
            Some(format!("{object}.{}", text(source, attr)))
        }
        _ => None,
    }
}

/// A dotted path with its first name resolved through the imports.
fn resolve(imports: &HashMap<String, String>, path: &str) -> String {
    let (first, rest) = path.split_once('.').unwrap_or((path, ""));
    match (imports.get(first), rest) {
        (Some(full), "") => full.clone(),
        (Some(full), rest) => format!("{full}.{rest}"),
        (None, _) => path.to_owned(),
    }
}

/// Whether an identifier is a use of a name (not an attribute's name, a parameter, a
/// keyword, or the name a definition or an import binds).
fn is_use(node: Node<'_>) -> bool {
    let Some(parent) = node.parent() else {
        return true;
    };
    let field = |name: &str| {
        parent
            .child_by_field_name(name)
            .is_some_and(|c| c.id() == node.id())
    };
    match parent.kind() {
        "attribute" => !field("attribute"),
        "keyword_argument" => !field("name"),
        "function_definition" | "class_definition" => !field("name"),
        "dotted_name"
        | "aliased_import"
        | "import_statement"
        | "import_from_statement"
        | "parameters"
        | "default_parameter"
        | "typed_parameter"
        | "typed_default_parameter"
        | "lambda_parameters" => false,
        _ => true,
    }
}

fn call(
    source: &[u8],
    node: Node<'_>,
    line: usize,
    imports: &HashMap<String, String>,
    walk: &mut Walk,
) {
    let (Some(function), Some(args)) = (
        node.child_by_field_name("function"),
        node.child_by_field_name("arguments"),
    ) else {
        return;
    };
    if function.kind() != "identifier" {
        return;
    }
    let name = text(source, function);
    if imports.contains_key(name) {
        return;
    }
    walk.saw(line, Seen::Call(name.to_owned()));
    if ATTRIBUTE_BUILTINS.contains(&name) {
        let asked = args.named_children(&mut args.walk()).nth(1);
        let computed = asked.is_some_and(|a| {
            let named = matches!(a.kind(), "identifier" | "attribute");
            let literal = a.kind() == "string" && fold(source, a, 0).is_some();
            !(named || literal)
        });
        if computed {
            walk.saw(line, Seen::ComputedName(name.to_owned()));
        }
    }
}

/// Whether `node` is a method's or a class attribute's: directly in a class body.
fn in_class(node: Node<'_>) -> bool {
    let mut at = node.parent();
    if at.is_some_and(|p| p.kind() == "expression_statement" || p.kind() == "decorated_definition")
    {
        at = at.and_then(|p| p.parent());
    }
    at.filter(|b| b.kind() == "block")
        .and_then(|b| b.parent())
        .is_some_and(|c| c.kind() == "class_definition")
}

/// A string standing alone as a statement (a docstring, or a comment written as a string).
fn is_docstring(node: Node<'_>) -> bool {
    node.parent()
        .is_some_and(|p| p.kind() == "expression_statement" && p.named_child_count() == 1)
}

/// Whether `node` is part of a larger fold (so only the larger one is said).
fn folds_into_parent(node: Node<'_>) -> bool {
    node.parent().is_some_and(|p| match p.kind() {
        "concatenated_string" | "parenthesized_expression" => true,
        "binary_operator" => p
            .child_by_field_name("operator")
            .is_some_and(|o| o.kind() == "+"),
        _ => false,
    })
}

/// What a constant string expression folds to: a string (its parts), an implicit
/// concatenation, `a + b`, an f-string whose parts fold, `"sep".join([...])` of constants.
/// Depth- and size-bounded.
pub(super) fn fold(source: &[u8], node: Node<'_>, depth: usize) -> Option<String> {
    if depth > 32 {
        return None;
    }
    let out = match node.kind() {
        "string" => {
            let mut s = String::new();
            for part in node.named_children(&mut node.walk()) {
                match part.kind() {
                    "string_content" => s.push_str(text(source, part)),
                    "interpolation" => s.push_str(&fold(
                        source,
                        part.child_by_field_name("expression")?,
                        depth + 1,
                    )?),
                    "string_start" | "string_end" => {}
                    _ => return None,
                }
            }
            s
        }
        "concatenated_string" => {
            let mut s = String::new();
            for part in node.named_children(&mut node.walk()) {
                s.push_str(&fold(source, part, depth + 1)?);
            }
            s
        }
        "parenthesized_expression" => fold(source, node.named_child(0)?, depth + 1)?,
        "binary_operator" => {
            if node.child_by_field_name("operator")?.kind() != "+" {
                return None;
            }
            let left = fold(source, node.child_by_field_name("left")?, depth + 1)?;
            let right = fold(source, node.child_by_field_name("right")?, depth + 1)?;
            left + &right
        }
        "call" => {
            // `"sep".join(["a", "b"])`
            let function = node.child_by_field_name("function")?;
            if function.kind() != "attribute"
                || text(source, function.child_by_field_name("attribute")?) != "join"
            {
                return None;
            }
            let sep = fold(source, function.child_by_field_name("object")?, depth + 1)?;
            let args = node.child_by_field_name("arguments")?;
            let list = args.named_child(0)?;
            if !matches!(list.kind(), "list" | "tuple") || args.named_child_count() != 1 {
                return None;
            }
            let parts: Option<Vec<String>> = list
                .named_children(&mut list.walk())
                .map(|p| fold(source, p, depth + 1))
                .collect();
            parts?.join(&sep)
        }
        _ => return None,
    };
    (out.len() <= 4096).then_some(out)
}

/// Whether a literal is compared against: an operand of a comparison (through tuples, lists,
/// sets, parentheses and signs: `x in (1234, 5678)`), or a `case` pattern.
fn compared(node: Node<'_>) -> bool {
    let mut at = node;
    while let Some(parent) = at.parent() {
        match parent.kind() {
            "comparison_operator" | "case_pattern" => return true,
            "tuple"
            | "list"
            | "set"
            | "parenthesized_expression"
            | "unary_operator"
            | "expression_list"
            | "concatenated_string"
            | "union_pattern"
            | "list_pattern"
            | "tuple_pattern"
            | "as_pattern" => at = parent,
            _ => return false,
        }
    }
    false
}
