//! The argument types Rust's comparison with the base draws values of, and literal arguments
//! as a Rust test writes them (issue 66; CONTRACT.md 16.5), read just far
//! enough to know each is a literal the plain program can hold as its argument's type, and
//! turned into an expression of that owned type: an integer in range with its suffix, if any,
//! the same; a float; a `bool`; a `char` or string literal (raw too) with valid escapes; an
//! owned string as tests spell one; `&[…]`, `[…]`, `vec![…]` of those; `Some(…)`, `None`.

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
}
