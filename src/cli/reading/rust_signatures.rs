//! What Rust's comparison with the base reads (issue 66; CONTRACT.md 16.5;
//! docs/design/replay.md): the free `pub fn`s of a file with their argument types, by syntax
//! (tree-sitter's Rust grammar), and the calls the tests make to them with literal arguments,
//! each argument turned into a Rust expression of the argument's owned type, checked here so
//! the program that makes the call compiles. A type the comparison has no strategy for is
//! said, never guessed.

use super::syntax::{descendants, text};
use tree_sitter::Node;

/// An argument type the comparison draws values of: the integers, floats, `bool`, `char`,
/// `&str`/`String`, and slices, `Vec`s and `Option`s of those.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ArgType {
    Int(&'static str),
    Float(&'static str),
    Bool,
    Char,
    /// `&str`: held as a `String`.
    Str,
    String,
    /// `&[T]`: held as a `Vec`.
    Slice(Box<ArgType>),
    Vec(Box<ArgType>),
    Option(Box<ArgType>),
}

const INTS: [&str; 12] = [
    "i8", "i16", "i32", "i64", "i128", "isize", "u8", "u16", "u32", "u64", "u128", "usize",
];

impl ArgType {
    /// The type as written (whitespace and lifetimes aside), when it has a strategy.
    pub fn parse(written: &str) -> Option<ArgType> {
        let mut compact = String::new();
        let mut chars = written.chars().peekable();
        while let Some(c) = chars.next() {
            match c {
                c if c.is_whitespace() => {}
                // A lifetime (`&'a str`): left out.
                '\'' => {
                    while chars
                        .next_if(|c| c.is_alphanumeric() || *c == '_')
                        .is_some()
                    {}
                }
                c => compact.push(c),
            }
        }
        Self::of(&compact, 0)
    }

    fn of(t: &str, depth: usize) -> Option<ArgType> {
        if depth > 3 {
            return None;
        }
        let inner = |prefix: &str, suffix: &str| {
            t.strip_prefix(prefix)
                .and_then(|r| r.strip_suffix(suffix))
                .and_then(|r| Self::of(r, depth + 1))
                .map(Box::new)
        };
        Some(match t {
            "&str" => ArgType::Str,
            "String" => ArgType::String,
            "bool" => ArgType::Bool,
            "char" => ArgType::Char,
            "f32" => ArgType::Float("f32"),
            "f64" => ArgType::Float("f64"),
            _ if t.starts_with("&[") => ArgType::Slice(inner("&[", "]")?),
            _ if t.starts_with("Vec<") => ArgType::Vec(inner("Vec<", ">")?),
            _ if t.starts_with("Option<") => ArgType::Option(inner("Option<", ">")?),
            _ => ArgType::Int(INTS.iter().find(|i| **i == t)?),
        })
    }

    /// The type a value is held as in the program (`&str` as `String`, `&[T]` as `Vec`).
    pub fn owned(&self) -> String {
        match self {
            ArgType::Int(t) | ArgType::Float(t) => (*t).to_owned(),
            ArgType::Bool => "bool".to_owned(),
            ArgType::Char => "char".to_owned(),
            ArgType::Str | ArgType::String => "String".to_owned(),
            ArgType::Slice(e) | ArgType::Vec(e) => format!("Vec<{}>", e.owned()),
            ArgType::Option(e) => format!("Option<{}>", e.owned()),
        }
    }

    /// The expression that passes the held value `at` (a reference to it) as this type.
    pub fn pass(&self, at: &str) -> String {
        match self {
            ArgType::Str => format!("{at}.as_str()"),
            ArgType::Slice(e) | ArgType::Vec(e) if e.passes_itself() => match self {
                ArgType::Slice(_) => format!("&{at}[..]"),
                _ => format!("{at}.clone()"),
            },
            ArgType::Slice(e) => format!(
                "&{at}.iter().map(|x| {}).collect::<Vec<_>>()[..]",
                e.pass("x")
            ),
            ArgType::Vec(e) => format!("{at}.iter().map(|x| {}).collect::<Vec<_>>()", e.pass("x")),
            ArgType::Option(e) => format!("{at}.as_ref().map(|x| {})", e.pass("x")),
            _ => format!("{at}.clone()"),
        }
    }

    /// Held as itself: no conversion when passed.
    fn passes_itself(&self) -> bool {
        match self {
            ArgType::Str | ArgType::Slice(_) => false,
            ArgType::Vec(e) | ArgType::Option(e) => e.passes_itself(),
            _ => true,
        }
    }
}

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

/// Every free `pub fn` of `source` outside its test code, reachable through `pub mod`s; none
/// when it does not parse whole.
pub fn pub_fns(source: &[u8]) -> Vec<PubFn> {
    let Some(tree) = super::patch_mutants::parse_code(source, false) else {
        return Vec::new();
    };
    let tests = super::rust::test_rows(source, tree.root_node());
    let mut out = Vec::new();
    let mut stack: Vec<(Node<'_>, Vec<String>)> = vec![(tree.root_node(), Vec::new())];
    while let Some((scope, module)) = stack.pop() {
        let mut cursor = scope.walk();
        for item in scope.named_children(&mut cursor) {
            let row = item.start_position().row + 1;
            if tests.iter().any(|(a, b)| (*a..=*b).contains(&row)) {
                continue;
            }
            match item.kind() {
                // An inherent impl of a type named plainly (no generics): its associated
                // functions (`Version::parse`); a method needs a value to call it on.
                "impl_item"
                    if item.child_by_field_name("trait").is_none()
                        && item.child_by_field_name("type_parameters").is_none() =>
                {
                    let owner = item
                        .child_by_field_name("type")
                        .filter(|t| t.kind() == "type_identifier")
                        .map(|t| text(source, t));
                    if let (Some(owner), Some(body)) = (owner, item.child_by_field_name("body")) {
                        let mut inner = body.walk();
                        for f in body.named_children(&mut inner) {
                            if f.kind() == "function_item"
                                && is_pub(source, f)
                                && let Some(mut f) = pub_fn(source, f, &module)
                            {
                                f.owner = Some(owner.to_owned());
                                out.push(f);
                            }
                        }
                    }
                }
                _ if !is_pub(source, item) => {}
                "mod_item" => {
                    if let (Some(name), Some(body)) = (
                        item.child_by_field_name("name"),
                        item.child_by_field_name("body"),
                    ) && module.len() < 8
                    {
                        let mut inner = module.clone();
                        inner.push(text(source, name).to_owned());
                        stack.push((body, inner));
                    }
                }
                "function_item" => {
                    if let Some(f) = pub_fn(source, item, &module) {
                        out.push(f);
                    }
                }
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
    let Some(tree) = super::patch_mutants::parse_code(source, false) else {
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
        let Some(args) = parse_arguments(written, types) else {
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

/// `(a, b, ...)` read as literals of `types`, each an expression of its owned type; `None`
/// when one is not a literal the program can hold.
pub fn parse_arguments(written: &str, types: &[ArgType]) -> Option<Vec<String>> {
    let mut p = Literals {
        s: written.as_bytes(),
        i: 0,
    };
    p.expect(b'(')?;
    let mut out = Vec::new();
    for (n, t) in types.iter().enumerate() {
        if n > 0 {
            p.expect(b',')?;
        }
        out.push(p.value(t, 0)?);
    }
    p.ws();
    if p.peek() == Some(b',') {
        p.i += 1;
    }
    p.expect(b')')?;
    p.ws();
    (p.i == p.s.len()).then_some(out)
}

/// A reader of Rust literal syntax, just enough for the argument types above.
struct Literals<'a> {
    s: &'a [u8],
    i: usize,
}

impl Literals<'_> {
    fn peek(&self) -> Option<u8> {
        self.s.get(self.i).copied()
    }

    /// The bytes from `from` to where it stands.
    fn since(&self, from: usize) -> &[u8] {
        self.s.get(from..self.i).unwrap_or_default()
    }

    /// The bytes from where it stands on.
    fn rest(&self) -> &[u8] {
        self.s.get(self.i..).unwrap_or_default()
    }

    /// What was read from `from` on, as text.
    fn taken(&self, from: usize) -> Option<String> {
        std::str::from_utf8(self.since(from))
            .ok()
            .map(str::to_owned)
    }

    fn ws(&mut self) {
        while self.peek().is_some_and(|b| b.is_ascii_whitespace()) {
            self.i += 1;
        }
    }

    fn expect(&mut self, b: u8) -> Option<()> {
        self.ws();
        (self.peek() == Some(b)).then(|| self.i += 1)
    }

    fn word(&mut self) -> &str {
        self.ws();
        let start = self.i;
        while self
            .peek()
            .is_some_and(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.'))
            || (self.peek().is_some_and(|b| b == b'+' || b == b'-')
                && self.i > start
                && matches!(self.s.get(self.i - 1), Some(b'e' | b'E'))
                && !self.since(start).starts_with(b"0x"))
        {
            self.i += 1;
        }
        std::str::from_utf8(self.since(start)).unwrap_or("")
    }

    fn value(&mut self, t: &ArgType, depth: usize) -> Option<String> {
        if depth > 3 {
            return None;
        }
        self.ws();
        match t {
            ArgType::Int(ty) => {
                let negative = self.peek() == Some(b'-');
                self.i += usize::from(negative);
                int(self.word(), ty, negative)
            }
            ArgType::Float(ty) => {
                let negative = self.peek() == Some(b'-');
                self.i += usize::from(negative);
                float(self.word(), ty, negative)
            }
            ArgType::Bool => match self.word() {
                w @ ("true" | "false") => Some(w.to_owned()),
                _ => None,
            },
            ArgType::Char => self.quoted(b'\''),
            ArgType::Str => self.string().map(|s| format!("String::from({s})")),
            // An owned string as tests spell one: `String::from("a")`, `"a".to_string()`,
            // `"a".to_owned()`, `"a".into()`.
            ArgType::String => {
                let wrapped = self.rest().starts_with(b"String::from");
                if wrapped {
                    self.i += "String::from".len();
                    self.expect(b'(')?;
                    self.ws();
                }
                let s = self.string()?;
                if wrapped {
                    self.expect(b')')?;
                } else if self.rest().first() == Some(&b'.') {
                    self.i += 1;
                    match self.word() {
                        "to_string" | "to_owned" | "into" => {
                            self.expect(b'(')?;
                            self.expect(b')')?;
                        }
                        _ => return None,
                    }
                }
                Some(format!("String::from({s})"))
            }
            ArgType::Slice(e) | ArgType::Vec(e) => {
                if matches!(t, ArgType::Slice(_)) && self.peek() == Some(b'&') {
                    self.i += 1;
                    self.ws();
                }
                let close = match self.peek() {
                    Some(b'[') => b']',
                    Some(b'v') if self.word() == "vec" => {
                        self.expect(b'!')?;
                        self.ws();
                        match self.peek() {
                            Some(b'[') => b']',
                            Some(b'(') => b')',
                            _ => return None,
                        }
                    }
                    _ => return None,
                };
                self.i += 1;
                let mut items = Vec::new();
                loop {
                    self.ws();
                    if self.peek() == Some(close) {
                        self.i += 1;
                        break;
                    }
                    if !items.is_empty() {
                        self.expect(b',')?;
                        self.ws();
                        if self.peek() == Some(close) {
                            self.i += 1;
                            break;
                        }
                    }
                    items.push(self.value(e, depth + 1)?);
                    if items.len() > 1000 {
                        return None;
                    }
                }
                Some(format!("vec![{}]", items.join(", ")))
            }
            ArgType::Option(e) => match self.word() {
                "None" => Some("None".to_owned()),
                "Some" => {
                    self.expect(b'(')?;
                    let v = self.value(e, depth + 1)?;
                    self.expect(b')')?;
                    Some(format!("Some({v})"))
                }
                _ => None,
            },
        }
    }

    /// A string literal, plain or raw, as written.
    fn string(&mut self) -> Option<String> {
        match self.peek() {
            Some(b'r') => self.raw(),
            _ => self.quoted(b'"'),
        }
    }

    /// A `'…'` or `"…"` literal with valid escapes, as written.
    fn quoted(&mut self, q: u8) -> Option<String> {
        let start = self.i;
        (self.peek() == Some(q)).then_some(())?;
        self.i += 1;
        let mut chars = 0;
        loop {
            match self.peek()? {
                b if b == q => break,
                b'\\' => {
                    self.i += 1;
                    match self.peek()? {
                        b'n' | b'r' | b't' | b'\\' | b'0' | b'\'' | b'"' => self.i += 1,
                        b'x' => {
                            let (Some(hi), Some(lo)) =
                                (self.s.get(self.i + 1), self.s.get(self.i + 2))
                            else {
                                return None;
                            };
                            (matches!(hi, b'0'..=b'7') && lo.is_ascii_hexdigit()).then_some(())?;
                            self.i += 3;
                        }
                        b'u' => {
                            let close = self.rest().iter().position(|b| *b == b'}')?;
                            let hex = std::str::from_utf8(self.s.get(self.i + 2..self.i + close)?)
                                .ok()?;
                            (self.s.get(self.i + 1) == Some(&b'{')).then_some(())?;
                            char::from_u32(u32::from_str_radix(hex, 16).ok()?)?;
                            self.i += close + 1;
                        }
                        b'\n' if q == b'"' => self.i += 1,
                        _ => return None,
                    }
                }
                _ => {
                    let width = std::str::from_utf8(self.rest())
                        .ok()
                        .and_then(|r| r.chars().next())
                        .map_or(1, char::len_utf8);
                    self.i += width;
                }
            }
            chars += 1;
        }
        self.i += 1;
        if q == b'\'' && chars != 1 {
            return None;
        }
        self.taken(start)
    }

    /// A raw string `r#"…"#`, as written.
    fn raw(&mut self) -> Option<String> {
        let start = self.i;
        self.i += 1;
        let hashes = self.rest().iter().take_while(|b| **b == b'#').count();
        self.i += hashes;
        (self.peek() == Some(b'"')).then_some(())?;
        self.i += 1;
        let mut end = vec![b'"'];
        end.extend(std::iter::repeat_n(b'#', hashes));
        let at = self.rest().windows(end.len()).position(|w| w == end)?;
        self.i += at + end.len();
        self.taken(start)
    }
}

/// An integer literal of type `ty` (its suffix, when it has one, the same), in range.
fn int(word: &str, ty: &str, negative: bool) -> Option<String> {
    let body = match INTS.iter().find(|s| word.ends_with(**s)) {
        Some(s) if *s == ty => &word[..word.len() - s.len()],
        Some(_) => return None,
        None => word,
    };
    let digits: String = body.chars().filter(|c| *c != '_').collect();
    let (radix, digits) = match digits.get(..2) {
        Some("0x") => (16, &digits[2..]),
        Some("0o") => (8, &digits[2..]),
        Some("0b") => (2, &digits[2..]),
        _ => (10, digits.as_str()),
    };
    let magnitude = u128::from_str_radix(digits, radix).ok()?;
    let bits: u32 = match ty.trim_start_matches(['i', 'u']) {
        "size" => usize::BITS,
        n => n.parse().ok()?,
    };
    let fits = match (ty.starts_with('i'), negative) {
        (false, true) => magnitude == 0,
        (false, false) => bits == 128 || magnitude < 1u128 << bits,
        (true, false) => magnitude < 1u128 << (bits - 1),
        (true, true) => magnitude <= 1u128 << (bits - 1),
    };
    fits.then(|| format!("{}{magnitude}{ty}", if negative { "-" } else { "" }))
}

/// A float literal (or a decimal integer one) of type `ty`.
fn float(word: &str, ty: &str, negative: bool) -> Option<String> {
    let body = match ["f32", "f64"].iter().find(|s| word.ends_with(**s)) {
        Some(s) if *s == ty => &word[..word.len() - 3],
        Some(_) => return None,
        None => word,
    };
    let clean: String = body.chars().filter(|c| *c != '_').collect();
    let ok = clean.starts_with(|c: char| c.is_ascii_digit())
        && clean
            .chars()
            .all(|c| c.is_ascii_digit() || matches!(c, '.' | 'e' | 'E' | '+' | '-'))
        && clean.parse::<f64>().is_ok();
    let clean = match clean.ends_with('.') {
        true => format!("{clean}0"),
        false => clean,
    };
    ok.then(|| format!("{}{clean}{ty}", if negative { "-" } else { "" }))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The types with a strategy (CONTRACT.md 16.5), written by hand, and some without.
    #[test]
    fn argument_types_have_strategies_only_as_the_contract_lists() {
        let rows: [(&str, Option<&str>); 14] = [
            ("u64", Some("u64")),
            ("&'a str", Some("String")),
            ("& str", Some("String")),
            ("String", Some("String")),
            ("&[u8]", Some("Vec<u8>")),
            ("Vec<&str>", Some("Vec<String>")),
            ("Option<f64>", Some("Option<f64>")),
            ("&[Option<char>]", Some("Vec<Option<char>>")),
            ("bool", Some("bool")),
            ("&mut [u8]", None),
            ("&Path", None),
            ("impl AsRef<str>", None),
            ("T", None),
            ("HashMap<String, u8>", None),
        ];
        for (written, owned) in rows {
            assert_eq!(
                ArgType::parse(written).map(|t| t.owned()).as_deref(),
                owned,
                "{written}"
            );
        }
    }

    /// Literal arguments, written by hand: what the program may hold, and what it may not.
    #[test]
    fn literal_arguments_are_read_only_when_the_program_can_hold_them() {
        let u64_2 = [ArgType::Int("u64"), ArgType::Int("u64")];
        type Case<'a> = (&'a str, &'a [ArgType], Option<&'a [&'a str]>);
        let cases: [Case<'_>; 15] = [
            ("(5, 0)", &u64_2, Some(&["5u64", "0u64"])),
            ("(1_000, 0x10u64,)", &u64_2, Some(&["1000u64", "16u64"])),
            ("(5, -1)", &u64_2, None),
            ("(5u8, 1)", &u64_2, None),
            ("(5, n)", &u64_2, None),
            ("(5 + 1, 2)", &u64_2, None),
            ("(-128)", &[ArgType::Int("i8")], Some(&["-128i8"])),
            ("(128)", &[ArgType::Int("i8")], None),
            (
                r#"("kitten", r"sit\ting")"#,
                &[ArgType::Str, ArgType::String],
                Some(&[r#"String::from("kitten")"#, r#"String::from(r"sit\ting")"#]),
            ),
            (r#"("a\q")"#, &[ArgType::Str], None),
            (
                r#"(String::from("a"), "b".to_string(), "c".into(), "d".len())"#,
                &[
                    ArgType::String,
                    ArgType::String,
                    ArgType::String,
                    ArgType::String,
                ],
                None,
            ),
            (
                r#"(String::from("a"), "b".to_string(), "c".into())"#,
                &[ArgType::String, ArgType::String, ArgType::String],
                Some(&[
                    r#"String::from("a")"#,
                    r#"String::from("b")"#,
                    r#"String::from("c")"#,
                ]),
            ),
            (
                "(&[1, 2], vec![Some('x'), None])",
                &[
                    ArgType::Slice(Box::new(ArgType::Int("u8"))),
                    ArgType::Vec(Box::new(ArgType::Option(Box::new(ArgType::Char)))),
                ],
                Some(&["vec![1u8, 2u8]", "vec![Some('x'), None]"]),
            ),
            (
                "(1.5, 2)",
                &[ArgType::Float("f64"), ArgType::Float("f64")],
                Some(&["1.5f64", "2f64"]),
            ),
            (
                "(1e3, 1.)",
                &[ArgType::Float("f32"), ArgType::Float("f32")],
                Some(&["1e3f32", "1.0f32"]),
            ),
        ];
        for (written, types, want) in cases {
            let got = parse_arguments(written, types);
            let want = want.map(|w| w.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>());
            assert_eq!(got, want, "{written}");
        }
    }

    #[test]
    fn free_pub_fns_are_found_with_their_modules_and_calls_in_tests_with_literals() {
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
        let fns = pub_fns(source);
        let names: Vec<(&str, &[String], Option<&str>, bool)> = fns
            .iter()
            .map(|f| {
                let (name, module) = (f.name.as_str(), f.module.as_slice());
                (name, module, f.owner.as_deref(), f.params.is_ok())
            })
            .collect();
        let inner = ["inner".to_owned()];
        assert_eq!(
            names,
            [
                ("split", &[][..], None, true),
                ("generic", &[][..], None, false),
                ("named", &inner[..], None, true),
                ("method", &[][..], Some("X"), false),
                ("new", &[][..], Some("X"), true),
            ]
        );
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
