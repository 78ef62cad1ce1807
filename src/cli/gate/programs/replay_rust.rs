// The plain program for Rust (issue 66; CONTRACT.md 16.5; docs/design/replay.md): its shared
// part. The runner writes one program per changed `pub fn`, which includes this file and
// makes each call the base's tests make with literals, each of its neighbours (one argument
// varied by its kind) and inputs drawn from each argument's type, on one version of the crate
// (`base` or `patch`, its first argument): the judged crate and the base's are both its
// dependencies. A result is its `Debug` text (the standard library's for the argument types
// held here; a result type without `Debug` is not compared), a panic is `raised`. Each
// result is a JSON line in the file its second argument names plus `.replay` (that file gets an
// empty JUnit receipt: the run made calls, not tests); its third is
// the input to start from (the runner starts it again after one that ended the process).
// Included by the Rust (`include_str!`) and by its unit tests (`include!`).

use std::io::Write as _;

/// A seeded generator (splitmix64): the same inputs for the base's program and the patch's.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    pub fn below(&mut self, n: u64) -> u64 {
        if n == 0 {
            0
        } else {
            self.next() % n
        }
    }

    /// A length: mostly short, now and then up to 300.
    pub fn length(&mut self) -> usize {
        match self.below(8) {
            0 => 16 + self.below(285) as usize,
            _ => self.below(9) as usize,
        }
    }
}

/// The longest sequence or string a neighbour is made.
pub const MAX_LENGTH: usize = 100_000;

/// A value the program holds: its neighbours and how to draw one.
pub trait Value: Clone + std::fmt::Debug + Sized {
    /// Variants of its kind, each labelled (`+ 1`, `empty`, `of length 65`).
    fn variants(&self, literals: &[i128]) -> Vec<(String, Self)>;
    /// A value drawn from its type.
    fn draw(rng: &mut Rng, literals: &[i128]) -> Self;
}

/// The distinct variants, the value itself left out.
fn distinct<T: std::fmt::Debug>(v: &T, all: Vec<(String, Option<T>)>) -> Vec<(String, T)> {
    let mut seen = vec![format!("{v:?}")];
    let mut out = Vec::new();
    for (label, x) in all {
        if let Some(x) = x {
            let key = format!("{x:?}");
            if !seen.contains(&key) {
                seen.push(key);
                out.push((label, x));
            }
        }
    }
    out
}

/// The lengths a sequence of length `n` is tried at: 0, n - 1, n + 1, and each literal ± 1.
fn lengths(n: usize, literals: &[i128]) -> Vec<(String, usize)> {
    let mut out = vec![
        ("empty".to_owned(), 0),
        ("one shorter".to_owned(), n.saturating_sub(1)),
        ("one longer".to_owned(), n + 1),
    ];
    for l in literals {
        for d in -1..=1 {
            if let Ok(m) = usize::try_from(l + d) {
                out.push((format!("of length {m}"), m));
            }
        }
    }
    let mut seen = vec![n];
    out.retain(|(_, m)| {
        *m <= MAX_LENGTH && !seen.contains(m) && {
            seen.push(*m);
            true
        }
    });
    out
}

macro_rules! integers {
    ($($t:ty),*) => {$(
        impl Value for $t {
            fn variants(&self, literals: &[i128]) -> Vec<(String, Self)> {
                let v = *self;
                let mut all = vec![
                    ("+ 1".to_owned(), v.checked_add(1)),
                    ("- 1".to_owned(), v.checked_sub(1)),
                    ("0".to_owned(), Some(0)),
                    ("negated".to_owned(), <$t>::try_from(-(v as i128)).ok().filter(|_| v != 0)),
                    ("large".to_owned(), Some(<$t>::MAX)),
                    ("smallest".to_owned(), Some(<$t>::MIN)),
                ];
                for l in literals {
                    for d in -1..=1 {
                        all.push((format!("= {}", l + d), <$t>::try_from(l + d).ok()));
                    }
                }
                distinct(self, all)
            }

            fn draw(rng: &mut Rng, literals: &[i128]) -> Self {
                let wide: i128 = match rng.below(10) {
                    0..=3 => rng.below(17) as i128,
                    4 | 5 if !literals.is_empty() => {
                        literals[rng.below(literals.len() as u64) as usize] + rng.below(3) as i128 - 1
                    }
                    9 => return [0, 1, <$t>::MAX, <$t>::MIN][rng.below(4) as usize],
                    _ => {
                        let bits = rng.below(21);
                        (rng.next() & ((1u64 << bits) - 1)) as i128
                    }
                };
                let signed = if rng.below(10) < 3 { -wide } else { wide };
                <$t>::try_from(signed).or_else(|_| <$t>::try_from(wide)).unwrap_or(0)
            }
        }
    )*};
}
integers!(i8, i16, i32, i64, i128, isize, u8, u16, u32, u64, u128, usize);

macro_rules! floats {
    ($($t:ty: $large:expr),*) => {$(
        impl Value for $t {
            fn variants(&self, literals: &[i128]) -> Vec<(String, Self)> {
                let v = *self;
                let mut all = vec![
                    ("+ 1".to_owned(), Some(v + 1.0)),
                    ("- 1".to_owned(), Some(v - 1.0)),
                    ("0".to_owned(), Some(0.0)),
                    ("negated".to_owned(), Some(if v == 0.0 { -1.0 } else { -v })),
                    ("large".to_owned(), Some($large)),
                ];
                for l in literals {
                    for d in -1..=1 {
                        all.push((format!("= {}", l + d), Some((l + d) as $t)));
                    }
                }
                distinct(self, all)
            }

            fn draw(rng: &mut Rng, literals: &[i128]) -> Self {
                let whole = <i64 as Value>::draw(rng, literals) as $t;
                match rng.below(8) {
                    0..=3 => whole,
                    7 => [0.0, -0.0, <$t>::INFINITY, <$t>::NAN, <$t>::MIN_POSITIVE][rng.below(5) as usize],
                    _ => whole + (rng.next() >> 11) as $t / (1u64 << 53) as $t,
                }
            }
        }
    )*};
}
floats!(f32: 1e30, f64: 1e300);

impl Value for bool {
    fn variants(&self, _: &[i128]) -> Vec<(String, Self)> {
        vec![("negated".to_owned(), !*self)]
    }

    fn draw(rng: &mut Rng, _: &[i128]) -> Self {
        rng.below(2) == 1
    }
}

/// The characters drawn: letters, digits, punctuation, whitespace, and beyond ASCII.
const ALPHABET: [char; 24] = [
    'a', 'b', 'c', 'x', 'y', 'z', 'A', 'B', 'Z', '0', '1', '9', ' ', '_', '-', '.', '\'', '"',
    '\\', '\n', 'é', 'ß', '漢', '😀',
];

impl Value for char {
    fn variants(&self, _: &[i128]) -> Vec<(String, Self)> {
        let v = *self as u32;
        distinct(
            self,
            vec![
                ("the next".to_owned(), char::from_u32(v + 1)),
                (
                    "the previous".to_owned(),
                    v.checked_sub(1).and_then(char::from_u32),
                ),
                ("'a'".to_owned(), Some('a')),
                ("'é'".to_owned(), Some('é')),
            ],
        )
    }

    fn draw(rng: &mut Rng, _: &[i128]) -> Self {
        ALPHABET[rng.below(ALPHABET.len() as u64) as usize]
    }
}

impl Value for String {
    fn variants(&self, literals: &[i128]) -> Vec<(String, Self)> {
        let chars: Vec<char> = self.chars().collect();
        let all = lengths(chars.len(), literals)
            .into_iter()
            .map(|(label, m)| {
                let pad = chars.last().copied().unwrap_or('a');
                let made: String = match (m, m == chars.len() + 1) {
                    (0, _) => String::new(),
                    (_, true) => self.clone() + &pad.to_string(),
                    _ if chars.is_empty() => std::iter::repeat_n('a', m).collect(),
                    _ => chars.iter().cycle().take(m).collect(),
                };
                (label, Some(made))
            })
            .collect();
        distinct(self, all)
    }

    fn draw(rng: &mut Rng, literals: &[i128]) -> Self {
        let n = rng.length();
        (0..n).map(|_| char::draw(rng, literals)).collect()
    }
}

impl<T: Value> Value for Vec<T> {
    fn variants(&self, literals: &[i128]) -> Vec<(String, Self)> {
        let fill = self
            .last()
            .cloned()
            .unwrap_or_else(|| T::draw(&mut Rng::new(1), literals));
        let all = lengths(self.len(), literals)
            .into_iter()
            .map(|(label, m)| {
                let made: Vec<T> = match m == self.len() + 1 {
                    true => self.iter().cloned().chain([fill.clone()]).collect(),
                    false if self.is_empty() => vec![fill.clone(); m],
                    false => self.iter().cycle().take(m).cloned().collect(),
                };
                (label, Some(made))
            })
            .collect();
        distinct(self, all)
    }

    fn draw(rng: &mut Rng, literals: &[i128]) -> Self {
        let n = rng.length();
        (0..n).map(|_| T::draw(rng, literals)).collect()
    }
}

impl<T: Value> Value for Option<T> {
    fn variants(&self, literals: &[i128]) -> Vec<(String, Self)> {
        match self {
            None => vec![("Some".to_owned(), Some(T::draw(&mut Rng::new(1), literals)))],
            Some(x) => std::iter::once(("None".to_owned(), None))
                .chain(
                    x.variants(literals)
                        .into_iter()
                        .map(|(label, v)| (format!("Some, {label}"), Some(v))),
                )
                .collect(),
        }
    }

    fn draw(rng: &mut Rng, literals: &[i128]) -> Self {
        match rng.below(5) {
            0 => None,
            _ => Some(T::draw(rng, literals)),
        }
    }
}

/// A result shown by its `Debug` text, where its type has one (autoref: the `Debug` impl is
/// found first, at the call's own concrete type).
pub struct Shown<'a, T>(pub &'a T);

pub trait ViaDebug {
    fn shown(&self) -> Option<String>;
}

impl<T: std::fmt::Debug> ViaDebug for Shown<'_, T> {
    fn shown(&self) -> Option<String> {
        Some(format!("{:?}", self.0))
    }
}

pub trait WithoutDebug {
    fn shown(&self) -> Option<String>;
}

impl<T> WithoutDebug for &Shown<'_, T> {
    fn shown(&self) -> Option<String> {
        None
    }
}

/// The most bytes of one result written.
const MAX_SHOWN: usize = 16 << 10;

/// A JSON string.
fn json(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if (c as u32) < 0x20 || c == '\u{7f}' => {
                out.push_str(&format!("\\u{:04x}", c as u32))
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// Text cut to `max` bytes (at a character), said so with the length and a checksum of the
/// whole (FNV-1a): two long results alike up to the cut still differ.
fn cut(s: String, max: usize) -> String {
    if s.len() <= max {
        return s;
    }
    let mut at = max;
    while !s.is_char_boundary(at) {
        at -= 1;
    }
    let sum = s.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3)
    });
    format!("{}… ({} bytes, {sum:016x})", &s[..at], s.len())
}

/// Where the results go, and which version is called.
pub struct Out {
    file: std::fs::File,
    pub base: bool,
    from: usize,
    next: usize,
}

impl Out {
    /// From the program's arguments: `base|patch`, the receipt path, the input to start from.
    pub fn open() -> Out {
        std::panic::set_hook(Box::new(|_| {}));
        let args: Vec<String> = std::env::args().collect();
        let receipt = args.get(2).map_or("", String::as_str);
        // The receipt of a run that made calls, not tests: none.
        let _ = std::fs::write(
            receipt,
            "<testsuite name=\"replay\" tests=\"0\"></testsuite>\n",
        );
        let path = format!("{receipt}.replay");
        let file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .expect("the results file");
        let mut out = Out {
            file,
            base: args.get(1).map(String::as_str) == Some("base"),
            from: args.get(3).and_then(|a| a.parse().ok()).unwrap_or(0),
            next: 0,
        };
        out.line(&format!("{{\"start\":{}}}", out.from));
        out
    }

    fn line(&mut self, text: &str) {
        let _ = writeln!(self.file, "{text}");
        let _ = self.file.flush();
    }

    /// Input `n` of call `i` (0: the call itself), labelled `input`, made by `call`.
    pub fn call<A: std::fmt::Debug>(
        &mut self,
        (i, n): (usize, usize),
        input: Option<&str>,
        args: &A,
        call: impl FnOnce() -> Option<String>,
    ) {
        let k = self.next;
        self.next += 1;
        if k < self.from {
            return;
        }
        let mut line = format!("{{\"i\":{i},\"n\":{n}");
        if let Some(label) = input {
            line.push_str(&format!(",\"input\":{}", json(label)));
        }
        line.push_str(&format!(
            ",\"shown\":{}",
            json(&cut(format!("{args:?}"), 1000))
        ));
        match std::panic::catch_unwind(std::panic::AssertUnwindSafe(call)) {
            Ok(Some(text)) => {
                line.push_str(&format!(",\"result\":{}", json(&cut(text, MAX_SHOWN))))
            }
            Ok(None) => line.push_str(",\"unreplayed\":\"its result has no Debug text\""),
            Err(_) => line.push_str(",\"raised\":\"panic\""),
        }
        line.push('}');
        self.line(&line);
    }

    pub fn end(mut self) {
        let k = self.next;
        self.line(&format!("{{\"end\":{k}}}"));
    }
}
