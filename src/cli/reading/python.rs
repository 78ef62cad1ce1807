//! What added Python code does, read from its syntax tree (tree-sitter's Python grammar):
//! the names it uses resolved through the file's imports (identifiers compared after NFKC
//! normalisation, as CPython compares them), the calls of and references to built-ins, the
//! strings it folds, the comparison methods it defines, the classes it derives, the
//! literals it compares against. Names a star import may bring are read as that module's.

use std::borrow::Cow;
use std::collections::{HashMap, HashSet};

use tree_sitter::Node;
use unicode_normalization::UnicodeNormalization;

use super::syntax::{Added, Walk, descendants, text};
use super::table::{ATTRIBUTE_BUILTINS, REFERENCED, Seen};

/// Dunder names that mean themselves wherever they appear (no import binds them).
const BARE: [&str; 2] = ["__import__", "__builtins__"];

/// An identifier's name as CPython compares it: NFKC-normalised (`ｓｙｓ` is `sys`).
pub(super) fn name<'s>(source: &'s [u8], node: Node<'_>) -> Cow<'s, str> {
    let t = text(source, node);
    if t.is_ascii() {
        Cow::Borrowed(t)
    } else {
        Cow::Owned(t.nfkc().collect())
    }
}

/// What a file binds by its imports, what it star-imports, and the names it defines itself
/// (a `def`, a `class`, a parameter, an import), which shadow a built-in.
#[derive(Debug, Default)]
pub struct Imports {
    /// A local name to the dotted path it stands for (relative paths keep their dots).
    pub map: HashMap<String, String>,
    /// The modules of `from M import *`.
    pub stars: Vec<String>,
    defined: HashSet<String>,
}

impl Imports {
    fn get(&self, name: &str) -> Option<&String> {
        self.map.get(name)
    }

    fn contains_key(&self, name: &str) -> bool {
        self.map.contains_key(name)
    }
}

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
                    walk.saw(line, Seen::Method(self::name(source, name).into_owned()));
                }
            }
            _ if !added.has(line) => {}
            "import_statement" | "import_from_statement" => {
                for path in imported(source, node) {
                    walk.saw(line, Seen::Name(path));
                }
            }
            "assignment" => {
                // In a class body `__eq__ = ...`, `__le__ = __ge__ = __eq__` define methods;
                // anywhere `C.__eq__ = f` and `ns["__eq__"] = f` set one by name.
                let class = in_class(node);
                let mut at = Some(node);
                while let Some(a) = at.filter(|a| a.kind() == "assignment") {
                    match a.child_by_field_name("left") {
                        Some(left) if left.kind() == "identifier" && class => {
                            walk.saw(line, Seen::Method(name(source, left).into_owned()));
                        }
                        Some(left) if left.kind() == "attribute" => {
                            if let Some(attr) = left.child_by_field_name("attribute") {
                                walk.saw(line, Seen::Sets(name(source, attr).into_owned()));
                            }
                        }
                        Some(left) if left.kind() == "subscript" => {
                            if let Some(key) = left.child_by_field_name("subscript")
                                && let Some(key) = fold(source, key, 0)
                            {
                                walk.saw(line, Seen::Sets(key));
                            }
                        }
                        _ => {}
                    }
                    at = a.child_by_field_name("right");
                }
            }
            "pair" => {
                // `{"__eq__": f}`: a namespace for `type()`, a class dict.
                if let Some(key) = node.child_by_field_name("key")
                    && let Some(key) = fold(source, key, 0)
                {
                    walk.saw(line, Seen::Sets(key));
                }
            }
            "identifier" => {
                let name = name(source, node);
                let name = name.as_ref();
                if is_use(node) {
                    if let Some(names) = literal_import(source, node, name, &imports) {
                        // `__import__('a.b').b.f`: read as `import a.b` and `a.b.f`.
                        for path in names {
                            walk.saw(line, Seen::Name(path));
                        }
                    } else if BARE.contains(&name) {
                        walk.saw(line, Seen::Name(name.to_owned()));
                    } else if let Some(path) = imports.get(name) {
                        walk.saw(line, Seen::Name(path.clone()));
                    } else {
                        if REFERENCED.contains(&name)
                            && !imports.defined.contains(name)
                            && !is_parameter(source, node, name)
                            && !is_called(node)
                            && (name != "type" || is_aliased(node))
                        {
                            walk.saw(line, Seen::Reference(name.to_owned()));
                        }
                        // A name no import binds may come from a star import.
                        for star in &imports.stars {
                            walk.saw(line, Seen::Name(format!("{star}.{name}")));
                        }
                    }
                }
            }
            "attribute" => {
                if let Some(attr) = node.child_by_field_name("attribute") {
                    walk.saw(line, Seen::Attribute(name(source, attr).into_owned()));
                }
                if let Some(path) = dotted(source, node) {
                    let first = path.split('.').next().unwrap_or_default();
                    if imports.contains_key(first) || BARE.contains(&first) {
                        walk.saw(line, Seen::Name(resolve(&imports, &path)));
                    } else if !imports.defined.contains(first) {
                        for star in &imports.stars {
                            walk.saw(line, Seen::Name(format!("{star}.{path}")));
                        }
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

/// What `import`/`from ... import` statements bind, anywhere in the file (a local name to
/// the dotted path it stands for), what it star-imports, and the names it defines.
pub fn imports(source: &[u8], root: Node<'_>) -> Imports {
    let mut out = Imports::default();
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
                                out.map.insert(
                                    self::name(source, a).into_owned(),
                                    self::name(source, n).into_owned(),
                                );
                            }
                        }
                        _ => {
                            // `import a.b` binds `a`.
                            let path = self::name(source, name);
                            let first = path.split('.').next().unwrap_or(&path).trim();
                            out.map.insert(first.to_owned(), first.to_owned());
                        }
                    }
                }
            }
            "import_from_statement" => {
                let Some(module) = node.child_by_field_name("module_name") else {
                    continue;
                };
                let module = name(source, module);
                if node
                    .named_children(&mut node.walk())
                    .any(|c| c.kind() == "wildcard_import")
                {
                    out.stars.push(module.to_string());
                }
                for imported in node.children_by_field_name("name", &mut node.walk()) {
                    let (n, bound) = match imported.kind() {
                        "aliased_import" => (
                            imported.child_by_field_name("name"),
                            imported.child_by_field_name("alias"),
                        ),
                        _ => (Some(imported), Some(imported)),
                    };
                    if let (Some(n), Some(bound)) = (n, bound) {
                        out.map.insert(
                            name(source, bound).into_owned(),
                            format!("{}.{}", join_relative(&module), name(source, n)),
                        );
                    }
                }
            }
            // A module-level definition shadows a built-in everywhere in the file (an
            // assignment does not count: `exec = exec` is a reference).
            "function_definition" | "class_definition"
                if node.parent().is_some_and(|p| p.kind() == "module")
                    || node.parent().is_some_and(|p| {
                        p.kind() == "decorated_definition"
                            && p.parent().is_some_and(|m| m.kind() == "module")
                    }) =>
            {
                if let Some(n) = node.child_by_field_name("name") {
                    out.defined.insert(name(source, n).into_owned());
                }
            }
            _ => {}
        }
    }
    out.defined.extend(out.map.keys().cloned());
    out
}

/// A relative module as a dotted prefix: `.` stays `.` (so `from . import x` is `..x`
/// without the doubled dot: `.x`).
fn join_relative(module: &str) -> &str {
    module.strip_suffix('.').unwrap_or(module)
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
                out.push(name(source, n).into_owned());
            }
        }
    } else if let Some(module) = node.child_by_field_name("module_name") {
        let module = name(source, module);
        out.push(module.to_string());
        for n in node.children_by_field_name("name", &mut node.walk()) {
            if let Some(n) = name_of(n) {
                out.push(format!("{}.{}", join_relative(&module), name(source, n)));
            }
        }
    }
    out
}

/// `a.b.c` of an identifier or an attribute chain of identifiers.
fn dotted(source: &[u8], node: Node<'_>) -> Option<String> {
    match node.kind() {
        "identifier" => Some(name(source, node).into_owned()),
        "attribute" => {
            let object = dotted(source, node.child_by_field_name("object")?)?;
            let attr = node.child_by_field_name("attribute")?;
            Some(format!("{object}.{}", name(source, attr)))
        }
        _ => None,
    }
}

/// What a call of the built-in `__import__` with one plain string literal naming a module
/// (`__import__('a.b')`, in a file that binds no `__import__` of its own) imports, read as
/// the interpreter runs it: the module `a.b`, and the path the expression around the call
/// reaches (`__import__('a.b').b.f` is `a.b.f`: without a `fromlist` the call is the top
/// package `a`). The reader follows such an import as it follows `import a.b`; anything else
/// (a computed name, more arguments) is `None`, a dynamic import.
fn literal_import(
    source: &[u8],
    node: Node<'_>,
    name: &str,
    imports: &Imports,
) -> Option<Vec<String>> {
    if name != "__import__" || imports.defined.contains(name) || imports.contains_key(name) {
        return None;
    }
    let call = node.parent().filter(|c| c.kind() == "call")?;
    if call.child_by_field_name("function") != Some(node) {
        return None;
    }
    let args = call.child_by_field_name("arguments")?;
    let mut cursor = args.walk();
    let mut named = args.named_children(&mut cursor);
    let (Some(arg), None) = (named.next(), named.next()) else {
        return None;
    };
    let plain = arg.kind() == "string"
        && arg
            .named_children(&mut arg.walk())
            .all(|p| matches!(p.kind(), "string_start" | "string_content" | "string_end"));
    let module = fold(source, arg, 0).filter(|_| plain)?;
    let identifier = |part: &str| {
        part.chars()
            .next()
            .is_some_and(|c| c.is_alphabetic() || c == '_')
            && part.chars().all(|c| c.is_alphanumeric() || c == '_')
    };
    if !module.split('.').all(identifier) {
        return None;
    }
    let mut reached = module.split('.').next().unwrap_or_default().to_owned();
    let mut at = call;
    while let Some(parent) = at.parent().filter(|p| p.kind() == "attribute") {
        if parent.child_by_field_name("object") != Some(at) {
            break;
        }
        let attr = parent.child_by_field_name("attribute")?;
        reached = format!("{reached}.{}", self::name(source, attr));
        at = parent;
    }
    Some(if reached == module {
        vec![module]
    } else {
        vec![module, reached]
    })
}

/// A dotted path with its first name resolved through the imports.
fn resolve(imports: &Imports, path: &str) -> String {
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

fn call(source: &[u8], node: Node<'_>, line: usize, imports: &Imports, walk: &mut Walk) {
    let (Some(function), Some(args)) = (
        node.child_by_field_name("function"),
        node.child_by_field_name("arguments"),
    ) else {
        return;
    };
    if function.kind() != "identifier" {
        return;
    }
    let name = self::name(source, function);
    let name = name.as_ref();
    if imports.contains_key(name)
        || imports.defined.contains(name)
        || is_parameter(source, function, name)
    {
        return;
    }
    walk.saw(line, Seen::Call(name.to_owned()));
    // `type(name, bases, namespace)` makes a class without `class` syntax.
    if name == "type" && args.named_children(&mut args.walk()).count() >= 3 {
        walk.saw(line, Seen::NewClass);
    }
    if name == "setattr"
        && let Some(asked) = args.named_children(&mut args.walk()).nth(1)
        && let Some(set) = fold(source, asked, 0)
    {
        walk.saw(line, Seen::Sets(set));
    }
    if matches!(name, "dict" | "type") {
        // `dict(__eq__=f)`.
        for arg in args.named_children(&mut args.walk()) {
            if arg.kind() == "keyword_argument"
                && let Some(key) = arg.child_by_field_name("name")
            {
                walk.saw(line, Seen::Sets(self::name(source, key).into_owned()));
            }
        }
    }
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

/// Whether `name`, used at `node`, is a parameter of a function or lambda around it.
fn is_parameter(source: &[u8], node: Node<'_>, name: &str) -> bool {
    let mut at = node.parent();
    while let Some(n) = at {
        if matches!(n.kind(), "function_definition" | "lambda")
            && let Some(params) = n.child_by_field_name("parameters")
            && descendants(params).any(|p| {
                p.kind() == "identifier" && is_parameter_name(p) && self::name(source, p) == name
            })
        {
            return true;
        }
        at = n.parent();
    }
    false
}

/// Whether an identifier in a parameter list is a parameter's name (not in its default
/// value or its annotation).
fn is_parameter_name(p: Node<'_>) -> bool {
    p.parent().is_some_and(|parent| match parent.kind() {
        "parameters" | "lambda_parameters" | "list_splat_pattern" | "dictionary_splat_pattern" => {
            true
        }
        "typed_parameter" => parent.named_child(0).is_some_and(|c| c.id() == p.id()),
        "default_parameter" | "typed_default_parameter" => parent
            .child_by_field_name("name")
            .is_some_and(|c| c.id() == p.id()),
        _ => false,
    })
}

/// Whether a reference stands alone as a value that is kept or handed on (`T = type`,
/// `return type`, a default value): `type` is everywhere in annotations (`type[X]`) and
/// checks (`isinstance(x, type)`), honest; bound to another name, a call of it is a call the
/// reader does not see as `type(...)`.
fn is_aliased(node: Node<'_>) -> bool {
    node.parent().is_some_and(|p| match p.kind() {
        "assignment" | "augmented_assignment" => p
            .child_by_field_name("right")
            .is_some_and(|r| r.id() == node.id()),
        "return_statement" | "lambda" | "default_parameter" | "typed_default_parameter" => true,
        "keyword_argument" => p
            .child_by_field_name("value")
            .is_some_and(|v| v.id() == node.id()),
        _ => false,
    })
}

/// Whether an identifier is the function a call calls (`exec(...)`), not a reference to it.
fn is_called(node: Node<'_>) -> bool {
    node.parent().is_some_and(|p| {
        p.kind() == "call"
            && p.child_by_field_name("function")
                .is_some_and(|f| f.id() == node.id())
    })
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
