//! What added JavaScript and TypeScript code does, read from its syntax tree (tree-sitter's
//! TypeScript grammar for `.ts`, `.mts`, `.cts`; its TSX dialect for `.tsx` and for
//! JavaScript, JSX included): the names it uses (member chains through the file's imports,
//! `require` and destructuring, `globalThis.` dropped), what it calls or constructs (`eval`,
//! `Function`, `Proxy`), a `require` or `import()` of a computed name, the strings it spells
//! (folded: `"vi" + "test"`, escapes, templates of literals, `String.fromCharCode` of
//! numbers), the methods it defines (`valueOf`, `toJSON`, `asymmetricMatch`,
//! `[Symbol.toPrimitive]`), the literals it compares against. An in-source test block
//! (`if (import.meta.vitest) { ... }`) is the tests' business: not read, and a patch that
//! changes one is [`InSourceTests`] (the room does not yet run it as the base has it).

use std::collections::{HashMap, HashSet};

use tree_sitter::Node;

use super::javascript_text::{compared, fold, literal};
use super::syntax::{Added, Walk, descendants, text};
use super::table::Seen;

pub use super::javascript_text::blank_grammar_gaps;

/// An added line inside an in-source test block, on this line.
#[derive(Debug)]
pub struct InSourceTests(pub usize);

/// The objects that name the global scope: `globalThis.process` is `process`.
const GLOBAL_OBJECTS: [&str; 4] = ["globalThis", "global", "window", "self"];

/// Links longer than this in one member chain are not followed (a hostile file nests as deep
/// as it likes); the chain's name is then unknown.
const MAX_CHAIN: usize = 64;

pub fn read(
    source: &[u8],
    root: Node<'_>,
    added: &Added,
    walk: &mut Walk,
) -> Result<(), InSourceTests> {
    let (aliases, declared) = bindings(source, root);
    let names = Names {
        source,
        aliases: &aliases,
        declared: &declared,
    };
    // What each node is to its parent, told by the parent when it is visited (a walk is
    // depth first, a parent before its children): tree-sitter finds a node's parent by
    // walking down from the root, which on a hostile file's deep nesting is quadratic.
    let mut roles: HashMap<usize, Role> = HashMap::new();
    let mut nodes = descendants(root);
    while let Some(node) = nodes.next() {
        let line = node.start_position().row + 1;
        let end = node.end_position().row + 1;
        let role = roles.remove(&node.id());
        mark(source, node, role, &mut roles);
        match node.kind() {
            "if_statement" if names.is_in_source_test_block(node) => {
                if added.any(line, end) {
                    let first = (line..=end).find(|l| added.has(*l)).unwrap_or(line);
                    return Err(InSourceTests(first));
                }
                nodes.skip_children();
            }
            "method_definition" | "pair" | "public_field_definition" => {
                let key = node
                    .child_by_field_name("name")
                    .or_else(|| node.child_by_field_name("key"));
                if let Some(key) = key
                    && added.any(line, end)
                    && let Some(name) = names.key(key)
                {
                    walk.saw(line, Seen::Method(name));
                }
            }
            _ if !added.has(line) => {}
            "assignment_expression" => {
                // `x.valueOf = f`: a method set from outside.
                if let Some(left) = node.child_by_field_name("left")
                    && left.kind() == "member_expression"
                    && let Some(p) = left.child_by_field_name("property")
                {
                    walk.saw(line, Seen::Method(text(source, p).to_owned()));
                }
            }
            "member_expression" | "subscript_expression" => {
                // `err.stack`: an attribute by its name, on anything.
                if let Some(p) = node.child_by_field_name("property") {
                    walk.saw(line, Seen::Attribute(text(source, p).to_owned()));
                }
                if role != Some(Role::Object)
                    && let Some((name, computed)) = names.chain(node)
                {
                    if computed {
                        walk.saw(line, Seen::ComputedName(name.clone()));
                    }
                    walk.saw(line, Seen::Name(name));
                }
            }
            "identifier" | "shorthand_property_identifier" => {
                names.identifier(node, role, line, walk);
            }
            "variable_declarator" => {
                // `const { env, argv: a } = process`: what it takes out is read here.
                if let (Some(pattern), Some(value)) = (
                    node.child_by_field_name("name"),
                    node.child_by_field_name("value"),
                ) && pattern.kind() == "object_pattern"
                    && let Some(bound) = names.value(value)
                {
                    for (key, _) in destructured(source, pattern) {
                        walk.saw(line, Seen::Name(format!("{bound}.{key}")));
                    }
                }
            }
            "call_expression" => {
                let Some(callee) = node.child_by_field_name("function") else {
                    continue;
                };
                let first = node
                    .child_by_field_name("arguments")
                    .and_then(|a| a.named_child(0));
                let computed = first.is_some_and(|a| fold(source, a).is_none());
                match callee.kind() {
                    "import" if computed => walk.saw(line, Seen::ComputedName("import".into())),
                    "identifier"
                        if text(source, callee) == "require" && !declared.contains("require") =>
                    {
                        match first.and_then(|a| fold(source, a)) {
                            Some(m) => walk.saw(line, Seen::Name(module_name(&m))),
                            None if computed => {
                                walk.saw(line, Seen::ComputedName("require".into()));
                            }
                            None => {}
                        }
                    }
                    _ => {}
                }
                if role != Some(Role::Concatenated)
                    && let Some(s) = fold(source, node)
                {
                    walk.saw(line, Seen::Text(s));
                }
            }
            // Each string alone, and each `+` chain once, at its top (linear in the file).
            "string" | "template_string" => match fold(source, node) {
                Some(s) => walk.saw(line, Seen::Text(s)),
                // `${x}VITEST`: what it does spell, piece by piece.
                None => {
                    for part in node.named_children(&mut node.walk()) {
                        if part.kind() == "string_fragment" {
                            walk.saw(line, Seen::Text(text(source, part).to_owned()));
                        }
                    }
                }
            },
            "binary_expression" => {
                compared(source, node, line, walk);
                if role != Some(Role::Concatenated)
                    && is_concatenation(source, node)
                    && let Some(s) = fold(source, node)
                {
                    walk.saw(line, Seen::Text(s));
                }
            }
            "import_statement" => {
                // Each name it takes (`vitest.vi`); a default or namespace import is read
                // where it is used; an import for its side effects, by what it loads.
                if let Some(module) = node
                    .child_by_field_name("source")
                    .and_then(|s| fold(source, s))
                    .map(|s| module_name(&s))
                {
                    let mut binds = false;
                    for part in descendants(node) {
                        binds |= part.kind() == "import_clause";
                        if part.kind() == "import_specifier"
                            && let Some(n) = part.child_by_field_name("name")
                        {
                            let name =
                                fold(source, n).unwrap_or_else(|| text(source, n).to_owned());
                            walk.saw(line, Seen::Name(format!("{module}.{name}")));
                        }
                    }
                    if !binds {
                        walk.saw(line, Seen::Name(module));
                    }
                }
            }
            "switch_case" => {
                if let Some(v) = node.child_by_field_name("value")
                    && let Some(l) = literal(source, v)
                {
                    walk.literal(line, l);
                }
            }
            _ => {}
        }
    }
    Ok(())
}

/// What names mean in one file.
struct Names<'a> {
    source: &'a [u8],
    /// A local name bound to a module or a chain: `import { env } from "node:process"` binds
    /// `env` to `process.env`; `const p = require("vm")`, `p` to `vm`.
    aliases: &'a HashMap<String, String>,
    /// Every name the file declares (a variable, a function, a class, a parameter): not a
    /// global where it is used.
    declared: &'a HashSet<String>,
}

impl Names<'_> {
    /// The dotted name of a member chain ending at `node` (`a.b["c"].d`), its root resolved,
    /// the global object dropped; where a link is computed (`a[k].b`), the chain below it,
    /// and `true`. `None` when its root is no name (a call's result, `this`) or a local.
    fn chain(&self, node: Node<'_>) -> Option<(String, bool)> {
        let mut parts: Vec<String> = Vec::new();
        let mut computed = false;
        let mut at = node;
        let root = loop {
            if parts.len() > MAX_CHAIN {
                // Too long to follow: where it leads is unknown, read as the global scope
                // taken by a computed key (a hit), never as nothing.
                return Some(("globalThis".to_owned(), true));
            }
            match at.kind() {
                "member_expression" => {
                    let p = at.child_by_field_name("property")?;
                    parts.push(text(self.source, p).to_owned());
                    at = at.child_by_field_name("object")?;
                }
                "subscript_expression" => {
                    let index = at.child_by_field_name("index")?;
                    match fold(self.source, index) {
                        Some(key) => parts.push(key),
                        None => {
                            parts.clear();
                            computed = true;
                        }
                    }
                    at = at.child_by_field_name("object")?;
                }
                "parenthesized_expression"
                | "as_expression"
                | "satisfies_expression"
                | "non_null_expression"
                | "type_assertion" => {
                    // The expression itself: the last named child of a `<T>x`, the first of
                    // the others.
                    let n = at.named_child_count();
                    let inner = match at.kind() {
                        "type_assertion" => at.named_child(u32::try_from(n).ok()?.checked_sub(1)?),
                        _ => at.named_child(0),
                    }?;
                    at = inner;
                }
                "meta_property" => break "import.meta".to_owned(),
                "identifier" => break self.root(text(self.source, at))?,
                "call_expression" => break self.required(at)?,
                _ => return None,
            }
        };
        parts.reverse();
        let mut name = root;
        for p in parts {
            name.push('.');
            name.push_str(&p);
        }
        Some((strip_global(&name).to_owned(), computed))
    }

    /// The name a declaration's value stands for: a name, a `require("m")`, a member chain
    /// (not one with a computed link).
    fn value(&self, value: Node<'_>) -> Option<String> {
        match value.kind() {
            "identifier" => self.root(text(self.source, value)),
            "call_expression" => self.required(value),
            "member_expression" | "subscript_expression" => {
                self.chain(value).filter(|(_, c)| !c).map(|(n, _)| n)
            }
            _ => None,
        }
        .map(|n| strip_global(&n).to_owned())
    }

    /// What a root name stands for: its alias, itself when it is a global, `None` for a
    /// local.
    fn root(&self, name: &str) -> Option<String> {
        match self.aliases.get(name) {
            Some(full) => Some(full.clone()),
            None if self.declared.contains(name) => None,
            None => Some(name.to_owned()),
        }
    }

    /// The module a `require("m")` call loads, as a name.
    fn required(&self, call: Node<'_>) -> Option<String> {
        let callee = call.child_by_field_name("function")?;
        if callee.kind() != "identifier"
            || text(self.source, callee) != "require"
            || self.declared.contains("require")
        {
            return None;
        }
        let arg = call.child_by_field_name("arguments")?.named_child(0)?;
        Some(module_name(&fold(self.source, arg)?))
    }

    /// An identifier that is not part of a chain or a declaration: `eval` called or passed
    /// along, `Function` and `Proxy` called or constructed, an imported name, a global.
    fn identifier(&self, node: Node<'_>, role: Option<Role>, line: usize, walk: &mut Walk) {
        // A chain's root is read with the chain; `typeof process !== "undefined"` asks whether
        // there is one, as isomorphic code does; `const { env } = process` is read as what it
        // takes out.
        if matches!(
            role,
            Some(Role::Object | Role::Declared | Role::TypeofOperand | Role::Destructured)
        ) {
            return;
        }
        let name = text(self.source, node);
        let called = role == Some(Role::Callee);
        let Some(resolved) = self.root(name) else {
            return;
        };
        if self.aliases.contains_key(name) {
            walk.saw(line, Seen::Name(resolved));
            return;
        }
        match (name, called) {
            ("eval" | "Function" | "Proxy", true) => walk.saw(line, Seen::Call(name.to_owned())),
            ("eval", false) => walk.saw(line, Seen::Reference(name.to_owned())),
            _ => walk.saw(line, Seen::Name(resolved)),
        }
    }

    /// A property key as a name: `valueOf`, `"toJSON"`, `[Symbol.toPrimitive]`.
    fn key(&self, key: Node<'_>) -> Option<String> {
        match key.kind() {
            "property_identifier" | "private_property_identifier" | "number" => {
                Some(text(self.source, key).to_owned())
            }
            "string" => fold(self.source, key),
            "computed_property_name" => {
                let inner = key.named_child(0)?;
                fold(self.source, inner)
                    .or_else(|| self.chain(inner).map(|(n, _)| n))
                    .or_else(|| Some(text(self.source, inner).chars().take(200).collect()))
            }
            _ => None,
        }
    }

    /// `if (import.meta.vitest) { ... }`: vitest's in-source test block.
    fn is_in_source_test_block(&self, node: Node<'_>) -> bool {
        node.child_by_field_name("condition")
            .and_then(|c| c.named_child(0))
            .and_then(|c| self.chain(c))
            .is_some_and(|(name, _)| name == "import.meta.vitest")
    }
}

/// `globalThis.process.env` is `process.env` (and `window.globalThis.x` is `x`).
fn strip_global(name: &str) -> &str {
    let mut name = name;
    while let Some(rest) = GLOBAL_OBJECTS
        .iter()
        .find_map(|g| name.strip_prefix(g).and_then(|r| r.strip_prefix('.')))
    {
        name = rest;
    }
    name
}

/// A module specifier as a name: Node's built-ins without their `node:` scheme (`node:vm` is
/// `vm`), but `node:test`, which has no other name.
fn module_name(specifier: &str) -> String {
    match specifier.strip_prefix("node:") {
        Some(m) if m != "test" => m.to_owned(),
        _ => specifier.to_owned(),
    }
}

/// What a node is to its parent, as far as the reading cares.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Role {
    /// The object of a member chain (the chain is read whole).
    Object,
    /// A name being declared (a variable, a function, a parameter, an import's local name).
    Declared,
    /// The operand of `typeof`.
    TypeofOperand,
    /// What a call calls or a `new` constructs.
    Callee,
    /// An operand of `+` (the whole sum is folded once, at its top).
    Concatenated,
    /// The value a destructuring declaration takes apart.
    Destructured,
}

/// Tells `node`'s children what they are to it (`role`: what it is to its own parent).
fn mark(source: &[u8], node: Node<'_>, role: Option<Role>, roles: &mut HashMap<usize, Role>) {
    let mut set = |child: Option<Node<'_>>, role: Role| {
        if let Some(c) = child {
            roles.insert(c.id(), role);
        }
    };
    match node.kind() {
        "member_expression" | "subscript_expression" => {
            set(node.child_by_field_name("object"), Role::Object);
        }
        "unary_expression" if node.child(0).is_some_and(|o| o.kind() == "typeof") => {
            set(node.child_by_field_name("argument"), Role::TypeofOperand);
        }
        // `(process as any).env`: the chain's root is inside.
        "parenthesized_expression"
        | "as_expression"
        | "satisfies_expression"
        | "non_null_expression"
        | "type_assertion"
            if role == Some(Role::Object) =>
        {
            for c in node.named_children(&mut node.walk()) {
                roles.insert(c.id(), Role::Object);
            }
        }
        "call_expression" => set(node.child_by_field_name("function"), Role::Callee),
        "new_expression" => set(node.child_by_field_name("constructor"), Role::Callee),
        "binary_expression" if is_concatenation(source, node) => {
            set(node.child_by_field_name("left"), Role::Concatenated);
            set(node.child_by_field_name("right"), Role::Concatenated);
        }
        "variable_declarator"
            if node
                .child_by_field_name("name")
                .is_some_and(|n| n.kind() == "object_pattern") =>
        {
            set(node.child_by_field_name("value"), Role::Destructured);
        }
        _ => {}
    }
    for d in declared_children(node) {
        roles.insert(d.id(), Role::Declared);
    }
}

/// The identifiers `node` declares among its children (a variable's, a function's or a
/// class's name, parameters, pattern parts, an import's local names).
fn declared_children(node: Node<'_>) -> Vec<Node<'_>> {
    let field = |f: &str| node.child_by_field_name(f).into_iter().collect::<Vec<_>>();
    let found = match node.kind() {
        "variable_declarator"
        | "function_declaration"
        | "generator_function_declaration"
        | "function_expression"
        | "class_declaration"
        | "class" => field("name"),
        "required_parameter" | "optional_parameter" => field("pattern"),
        "arrow_function" | "catch_clause" => field("parameter"),
        "assignment_pattern" => field("left"),
        "pair_pattern" => field("value"),
        "formal_parameters"
        | "array_pattern"
        | "rest_pattern"
        | "namespace_import"
        | "import_clause"
        | "import_require_clause"
        | "import_specifier" => node.named_children(&mut node.walk()).collect(),
        _ => Vec::new(),
    };
    found
        .into_iter()
        .filter(|n| n.kind() == "identifier")
        .collect()
}

/// The keys a destructuring pattern takes and the local names it binds them to
/// (`{ env, argv: a }`: `(env, env)`, `(argv, a)`).
fn destructured(source: &[u8], pattern: Node<'_>) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for p in pattern.named_children(&mut pattern.walk()) {
        match p.kind() {
            "shorthand_property_identifier_pattern" => {
                out.push((text(source, p).to_owned(), text(source, p).to_owned()));
            }
            "pair_pattern" => {
                let key = p.child_by_field_name("key");
                let value = p.child_by_field_name("value");
                if let (Some(k), Some(v)) = (key, value)
                    && v.kind() == "identifier"
                {
                    let key = fold(source, k).unwrap_or_else(|| text(source, k).to_owned());
                    out.push((key, text(source, v).to_owned()));
                }
            }
            _ => {}
        }
    }
    out
}

/// The file's aliases and declared names, from every node (a use may come before its
/// binding's line, and the binding need not be added).
fn bindings(source: &[u8], root: Node<'_>) -> (HashMap<String, String>, HashSet<String>) {
    let mut aliases: HashMap<String, String> = HashMap::new();
    let mut declared: HashSet<String> = HashSet::new();
    let plain = Names {
        source,
        aliases: &HashMap::new(),
        declared: &HashSet::new(),
    };
    for node in descendants(root) {
        for d in declared_children(node) {
            declared.insert(text(source, d).to_owned());
        }
        match node.kind() {
            "shorthand_property_identifier_pattern" => {
                declared.insert(text(source, node).to_owned());
            }
            "import_statement" => {
                let Some(module) = node
                    .child_by_field_name("source")
                    .and_then(|s| fold(source, s))
                    .map(|s| module_name(&s))
                else {
                    continue;
                };
                for part in descendants(node) {
                    match part.kind() {
                        "import_clause" | "namespace_import" | "import_require_clause" => {
                            for id in part.named_children(&mut part.walk()) {
                                if id.kind() == "identifier" {
                                    aliases.insert(text(source, id).to_owned(), module.clone());
                                }
                            }
                        }
                        "import_specifier" => {
                            let Some(name) = part.child_by_field_name("name") else {
                                continue;
                            };
                            let exported =
                                fold(source, name).unwrap_or_else(|| text(source, name).to_owned());
                            let local = part
                                .child_by_field_name("alias")
                                .map_or(exported.clone(), |a| text(source, a).to_owned());
                            aliases.insert(local, format!("{module}.{exported}"));
                        }
                        _ => {}
                    }
                }
            }
            "variable_declarator" => {
                let (Some(name), Some(value)) = (
                    node.child_by_field_name("name"),
                    node.child_by_field_name("value"),
                ) else {
                    continue;
                };
                let Some(bound) = plain.value(value) else {
                    continue;
                };
                match name.kind() {
                    "identifier" => {
                        aliases.insert(text(source, name).to_owned(), bound);
                    }
                    "object_pattern" => {
                        for (key, local) in destructured(source, name) {
                            aliases.insert(local, format!("{bound}.{key}"));
                        }
                    }
                    _ => {}
                }
            }
            _ => {}
        }
    }
    (aliases, declared)
}

/// Whether `node` is a `+` expression.
fn is_concatenation(source: &[u8], node: Node<'_>) -> bool {
    node.kind() == "binary_expression"
        && node
            .child_by_field_name("operator")
            .is_some_and(|o| text(source, o) == "+")
}

#[cfg(test)]
mod tests {
    use super::super::table::{Language, first_match};
    use super::super::{read_source, source};

    /// The rules each snippet of added TypeScript meets (every line added), written by hand
    /// from the list: what asks whether it is under test, what changes what a
    /// comparison means, what runs code the reader cannot read; and honest code that meets
    /// none. A compared literal is left out (it counts only where the tests pin it).
    #[test]
    fn what_added_typescript_does() {
        let cases: &[(&str, &[&str])] = &[
            (
                "export const on = process.env.VITEST;\n",
                &["js-environment"],
            ),
            (
                "const { env } = process;\nexport const on = env.VITEST;\n",
                &["js-environment"],
            ),
            (
                "import { env } from \"node:process\";\nexport const a = env.X;\n",
                &["js-environment"],
            ),
            (
                "export const a = globalThis.process.env.X;\n",
                &["js-environment"],
            ),
            (
                "export const a = (process as any)[\"env\"].X;\n",
                &["js-environment"],
            ),
            ("export const a = process.env[key];\n", &["js-environment"]),
            (
                "export const t = import.meta.env.MODE === \"test\";\n",
                &["js-environment"],
            ),
            (
                "export const t = !!import.meta.vitest;\n",
                &["js-test-stack"],
            ),
            (
                "export const w = JEST_WORKER_ID_X;\nconst k = \"JEST_WORKER_ID\";\n",
                &["js-test-stack-text"],
            ),
            ("const k = \"VI\" + \"TEST\";\n", &["js-test-stack-text"]),
            ("const k = \"\\x56ITEST\";\n", &["js-test-stack-text"]),
            ("const k = `VI${\"TEST\"}`;\n", &["js-test-stack-text"]),
            (
                "const k = String.fromCharCode(86, 73, 84, 69, 83, 84);\n",
                &["js-test-stack-text"],
            ),
            (
                "import { vi } from \"vitest\";\n",
                &["js-test-stack", "js-test-stack-text"],
            ),
            (
                "export function f() { return typeof vi !== \"undefined\" ? 1 : vi.fn(); }\n",
                &["js-test-stack"],
            ),
            (
                "export function f(a: string) { return eval(a); }\n",
                &["js-dynamic-code"],
            ),
            ("const run = eval;\n", &["js-dynamic-code"]),
            (
                "const f = new Function(\"a\", \"return a\");\n",
                &["js-dynamic-code"],
            ),
            (
                "export const load = (m: string) => require(m);\n",
                &["js-dynamic-code"],
            ),
            (
                "export const load = (m: string) => import(`./${m}`);\n",
                &["js-dynamic-code"],
            ),
            (
                "import vm from \"node:vm\";\nvm.runInThisContext(\"1\");\n",
                &["js-dynamic-code"],
            ),
            ("export const p = globalThis[name];\n", &["js-dynamic-code"]),
            ("const k = `${x}VITEST`;\n", &["js-test-stack-text"]),
            (
                "if (process.argv.some((a) => a.includes(\"x\"))) {}\n",
                &["js-process"],
            ),
            ("process.exit(0);\n", &["js-process"]),
            ("const p = process;\n", &["js-process"]),
            ("export const where = new Error().stack;\n", &["js-process"]),
            (
                "export const c = process.cwd();\n",
                &["js-working-directory"],
            ),
            ("export const id = process.pid;\n", &["js-process-ids"]),
            ("const f = \"/proc/self/cmdline\";\n", &["js-process"]),
            (
                "export class Money { valueOf() { return 1; } }\n",
                &["js-comparison"],
            ),
            (
                "export class Money { [Symbol.toPrimitive]() { return 1; } }\n",
                &["js-comparison"],
            ),
            (
                "export const any = { asymmetricMatch: () => true };\n",
                &["js-comparison"],
            ),
            (
                "export const liar = new Proxy({}, {});\n",
                &["js-comparison"],
            ),
            ("Money.prototype.toJSON = () => 1;\n", &["js-comparison"]),
            // Honest code: isomorphic checks, a local named like a global, the test runner's
            // name in a comment.
            (
                "export const node = typeof process !== \"undefined\";\n",
                &[],
            ),
            (
                "export function expect(tok: string) { return tok; }\nexpect(\"a\");\n",
                &[],
            ),
            (
                "export function f(process: string) { return process.length; }\n",
                &[],
            ),
            (
                "// vitest runs this\nexport const sum = (a: number, b: number) => a + b;\n",
                &[],
            ),
            ("export class Money { toString() { return \"1\"; } }\n", &[]),
            ("export const msg = err.message;\n", &[]),
            (
                "import { z } from \"zod\";\nexport const s = z.string();\n",
                &[],
            ),
            (
                "import process from \"node:process\";\nexport const p = process.platform;\n",
                &[],
            ),
            (
                "import process from \"node:process\";\nexport const e = process.env.X;\n",
                &["js-environment"],
            ),
        ];
        for (code, want) in cases {
            let added: Vec<usize> = (1..=code.split('\n').count()).collect();
            let read = read_source(Language::TypeScript, code.as_bytes(), &added, false)
                .unwrap_or_else(|e| panic!("{code}: {e:?}"));
            assert!(read.unparsed_at.is_none(), "{code}");
            let mut got: Vec<&str> = read
                .seen
                .iter()
                .filter_map(|(_, s, _)| Some(first_match(Language::TypeScript, s)?.id))
                .filter(|id| *id != "js-pinned-literal")
                .collect();
            got.sort();
            got.dedup();
            assert_eq!(got, *want, "{code}");
        }
    }

    /// TypeScript the grammar lacks (variance, `export type *`) is read, not unparsed; `in` and
    /// `out` in code are left alone.
    #[test]
    fn typescript_the_grammar_lacks_is_read() {
        for code in [
            "export interface A<out O = unknown, in I = never> { o: O; process: typeof process.env }\n",
            "export interface Z<\n  out Output = unknown,\n  in out Input = unknown,\n> {}\n",
            "export interface O<\n  /** @ts-ignore Cast variance */\n  out Shape extends S = S,\n  // c\n  out C = D,\n> {}\n",
            "class C<const in T> { m(x: T) {} }\n",
            "export type * from \"./types.js\";\nexport type * as ns from \"./ns.js\";\n",
        ] {
            let added: Vec<usize> = (1..=code.split('\n').count()).collect();
            let read =
                read_source(Language::TypeScript, code.as_bytes(), &added, false).expect("read");
            assert_eq!(read.unparsed_at, None, "{code}");
        }
        let mut text = b"for (const k in obj) f(a, out); if (a < b, c in d) {}".to_vec();
        let before = text.clone();
        super::super::javascript_text::blank_grammar_gaps(&mut text);
        assert_eq!(
            String::from_utf8_lossy(&text),
            String::from_utf8_lossy(&before)
        );
    }

    /// JavaScript and JSX read with the TSX dialect; a compared literal is a candidate.
    #[test]
    fn javascript_and_jsx_are_read_and_literals_compared() {
        let code = "export const View = () => <div>{process.env.X}</div>;\nexport const f = (n) => n === 12345 ? \"espresso\" : \"x\";\n";
        let read =
            read_source(Language::JavaScript, code.as_bytes(), &[1, 2], false).expect("read");
        let got: Vec<(usize, &str)> = read
            .seen
            .iter()
            .filter_map(|(l, s, _)| Some((*l, first_match(Language::JavaScript, s)?.id)))
            .collect();
        assert!(got.contains(&(1, "js-environment")), "{got:?}");
        assert!(got.contains(&(2, "js-pinned-literal")), "{got:?}");
    }

    /// CONTRACT.md 15.2 for JavaScript: what the reader cannot read as Node will is unread.
    #[test]
    fn what_cannot_be_read_as_node_reads_it_is_unread() {
        use crate::core::gate::UnreadReason::{NotUtf8, OverReadLimit, SkippedExtension, Unparsed};
        let long = format!("export const a = \"{}\";\n", "x".repeat(1200));
        let rows: [(&[u8], _); 5] = [
            (b"export const a = 1;\xff\n", NotUtf8),
            ("// x\u{2028}process.exit(1)\n".as_bytes(), Unparsed),
            (long.as_bytes(), OverReadLimit),
            (b"const a = 1;\0\n", Unparsed),
            (
                b"export const a = 1;\nif (import.meta.vitest) {\n  const { it } = import.meta.vitest;\n  it(\"a\", () => {});\n}\n",
                SkippedExtension,
            ),
        ];
        for (code, reason) in rows {
            let added: Vec<usize> = (1..=6).collect();
            let got = read_source(Language::TypeScript, code, &added, false).map(|_| ());
            assert_eq!(
                got.map_err(|(r, _)| r),
                Err(reason),
                "{}",
                String::from_utf8_lossy(code)
            );
        }
        // The same block untouched: the code around it is read, the block is not.
        let code = b"export const a = process.pid;\nif (import.meta.vitest) {\n  const { it } = import.meta.vitest;\n}\n";
        let read = read_source(Language::TypeScript, code, &[1], false).expect("read");
        assert!(source::javascript(code).is_ok());
        let ids: Vec<&str> = read
            .seen
            .iter()
            .filter_map(|(_, s, _)| Some(first_match(Language::TypeScript, s)?.id))
            .collect();
        assert_eq!(ids, ["js-process-ids"]);
    }

    /// A member chain longer than the reader follows is a hit, never nothing: past 64 links
    /// `globalThis.globalThis.….process.env` would otherwise hide where it leads.
    #[test]
    fn a_chain_too_long_to_follow_is_a_hit() {
        let code = format!(
            "export const on = {}process.env.VITEST;\n",
            "globalThis.".repeat(70)
        );
        let read = read_source(Language::TypeScript, code.as_bytes(), &[1], false).expect("read");
        let ids: Vec<&str> = read
            .seen
            .iter()
            .filter_map(|(_, s, _)| Some(first_match(Language::TypeScript, s)?.id))
            .collect();
        assert!(ids.contains(&"js-dynamic-code"), "{ids:?}");
    }

    /// A hostile file nests `+` and member chains as deep as it likes: read in linear time,
    /// without recursion.
    #[test]
    fn deep_nesting_is_read_without_recursion() {
        let n = 20_000;
        let concat = format!("const k = {}\"x\";\n", "\"a\" + ".repeat(n));
        let chain = format!("const k = a{};\n", "\n  .b".repeat(n));
        for code in [concat, chain] {
            let lines: Vec<String> = code.split(" + ").map(str::to_owned).collect();
            let code = lines.join(" +\n");
            let added: Vec<usize> = (1..=code.split('\n').count()).collect();
            let read = read_source(Language::TypeScript, code.as_bytes(), &added, false);
            assert!(read.is_ok_and(|r| !r.seen.is_empty()));
        }
    }
}
