//! The one strict JSON reader: every body, NDJSON line, and JSON or YAML file the CLI reads
//! goes through it (the service's own log lines, read back for a review, through
//! [`read_log_line`]). Two rules beyond JSON's own: a key given twice in one object is refused,
//! never resolved (parsers disagree on which copy wins, and a merge gate must not pick one
//! silently), and a document holds at most [`MAX_JSON_VALUES`] values, so its tree stays within
//! a bounded size. Bad syntax is a 400; a refused rule is a 422 (by the error's kind, never
//! by its words).

use std::cell::{Cell, RefCell};

use serde::de::{
    Deserialize, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor,
};
use serde_json::Value;

use super::problem::{FieldError, Problem};

/// Parses a request body as JSON: an empty body and bad syntax are 400s with line and column.
///
/// A field given twice in one object is refused (422) rather than resolved: JSON parsers
/// disagree on which copy wins, and a merge gate must not pick one silently.
pub fn parse_json(body: &[u8]) -> Result<Value, Problem> {
    refuse_empty(body)?;
    strict_value(body).map_err(problem_of)
}

fn refuse_empty(body: &[u8]) -> Result<(), Problem> {
    if body.iter().all(u8::is_ascii_whitespace) {
        return Err(Problem::malformed(
            "the body is empty; expected a JSON document",
        ));
    }
    Ok(())
}

/// The one 400-vs-422 rule, by the error's kind: bad syntax (or an early end) is a 400; a rule
/// of the strict reader (a key given twice, too many values) or a type the document did not
/// match is a 422. The detail states the position once, up front.
pub fn problem_of(e: serde_json::Error) -> Problem {
    let what = strip_position(&e.to_string()).to_owned();
    if e.is_data() {
        Problem::invalid(vec![FieldError::new(
            "",
            format!("{what} (line {}, column {})", e.line(), e.column()),
        )])
    } else {
        Problem::malformed(format!(
            "the body is not valid JSON (line {}, column {}): {what}",
            e.line(),
            e.column()
        ))
    }
}

/// Reads one line of a log this service wrote (read back, not a request) into `T`, a struct of
/// the few fields its reader looks at: any other field is read for its syntax only and held
/// nowhere, so a long line costs its parse and no tree; a field `T` names given twice is
/// refused. `None`: the line is not such a document (other events, start-up lines).
pub fn read_log_line<'de, T: Deserialize<'de>>(line: &'de [u8]) -> Option<T> {
    serde_json::from_slice(line).ok()
}

/// Most JSON values (every number, string, array, object and literal counts one) in one
/// document, one array element of a row body, or one NDJSON line. A `Value` tree costs tens of
/// bytes a value, so this is what keeps a document's tree within a few tens of megabytes
/// whatever the body limit is; real documents stay far below it.
pub const MAX_JSON_VALUES: usize = 1_000_000;

/// Reads JSON into a `Value`, refusing an object that holds the same key twice and a document
/// of more than [`MAX_JSON_VALUES`] values.
pub fn strict_value(bytes: &[u8]) -> Result<Value, serde_json::Error> {
    let mut de = serde_json::Deserializer::from_slice(bytes);
    let v = strict_from(&mut de)?;
    de.end()?;
    Ok(v)
}

/// Reads one value from any serde deserializer (a YAML file, a JSON sub-document) as
/// [`strict_value`] reads JSON: a key given twice in one mapping is an error, and the values
/// draw on a budget of [`MAX_JSON_VALUES`].
pub fn strict_from<'de, D: Deserializer<'de>>(d: D) -> Result<Value, D::Error> {
    match read_strict(d)? {
        (v, None) => Ok(v),
        (_, Some(key)) => Err(serde::de::Error::custom(twice(&key))),
    }
}

fn twice(key: &str) -> String {
    format!("the field `{key}` is given twice in one object; give each field once")
}

/// Reads a value on a fresh budget; the first key found twice in one object, if any, comes
/// back beside it (that object keeps its first copy).
fn read_strict<'de, D: Deserializer<'de>>(d: D) -> Result<(Value, Option<String>), D::Error> {
    read_shaped(d, &Shape::All)
}

fn read_shaped<'de, D: Deserializer<'de>>(
    d: D,
    shape: &Shape,
) -> Result<(Value, Option<String>), D::Error> {
    let left = Cell::new(MAX_JSON_VALUES);
    let dup = RefCell::new(None);
    let v = StrictSeed {
        left: &left,
        dup: &dup,
        shape,
    }
    .deserialize(d)?;
    Ok((v, dup.into_inner()))
}

/// Parses a request body as [`parse_json`] does, keeping only what `shape` names: the rules of
/// the strict reader hold for what is kept (a key twice, the value budget); what is skipped is
/// read for its syntax only and held nowhere.
pub fn parse_projected(body: &[u8], shape: &Shape) -> Result<Value, Problem> {
    refuse_empty(body)?;
    let mut de = serde_json::Deserializer::from_slice(body);
    let read = read_shaped(&mut de, shape).and_then(|(v, dup)| match dup {
        None => Ok(v),
        Some(key) => Err(serde::de::Error::custom(twice(&key))),
    });
    read.and_then(|v| de.end().map(|()| v)).map_err(problem_of)
}

/// A field of a shallow document, read with [`strict_from`]'s rules; a key given twice inside
/// it is kept as an error to report at the field (so a batch reports it in the document's own
/// slot), never resolved silently.
#[derive(Debug, Clone, PartialEq)]
pub struct Strict {
    pub value: Value,
    /// What is wrong, when a key is given twice inside.
    pub twice: Option<String>,
}

impl<'de> Deserialize<'de> for Strict {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let (value, dup) = read_strict(d)?;
        Ok(Strict {
            value,
            twice: dup.map(|key| twice(&key)),
        })
    }
}

/// What [`for_each_element`] found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ArrayRead {
    /// The document was an array; every element was handed over (or `each` asked to stop).
    Array,
    /// The document was not an array but this.
    NotArray(&'static str),
}

/// Reads a JSON array one element at a time: each element is read as [`strict_value`] reads a
/// document (its own value budget), handed to `each` with its index, and dropped, so a large
/// array of rows never exists as one tree. `each` returns `false` to stop reading (the rest of
/// the body is then not read at all).
pub fn for_each_element(
    bytes: &[u8],
    mut each: impl FnMut(usize, Value) -> bool,
) -> Result<ArrayRead, serde_json::Error> {
    let stopped = Cell::new(false);
    let mut de = serde_json::Deserializer::from_slice(bytes);
    let read = de.deserialize_any(ElementsVisitor {
        each: &mut each,
        stopped: &stopped,
    });
    match read {
        Err(_) if stopped.get() => Ok(ArrayRead::Array),
        Err(e) => Err(e),
        Ok(found) => {
            de.end()?;
            Ok(found)
        }
    }
}

struct ElementsVisitor<'a, F> {
    each: &'a mut F,
    stopped: &'a Cell<bool>,
}

impl<'de, F: FnMut(usize, Value) -> bool> Visitor<'de> for ElementsVisitor<'_, F> {
    type Value = ArrayRead;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a JSON array")
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<ArrayRead, A::Error> {
        let mut i = 0;
        loop {
            let Some(Strict { value: v, twice }) = seq.next_element::<Strict>()? else {
                return Ok(ArrayRead::Array);
            };
            if let Some(twice) = twice {
                return Err(serde::de::Error::custom(twice));
            }
            if !(self.each)(i, v) {
                self.stopped.set(true);
                return Err(serde::de::Error::custom("stopped"));
            }
            i += 1;
        }
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<ArrayRead, A::Error> {
        while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(ArrayRead::NotArray("an object"))
    }
    fn visit_bool<E>(self, _: bool) -> Result<ArrayRead, E> {
        Ok(ArrayRead::NotArray("a boolean"))
    }
    fn visit_i64<E>(self, _: i64) -> Result<ArrayRead, E> {
        Ok(ArrayRead::NotArray("a number"))
    }
    fn visit_u64<E>(self, _: u64) -> Result<ArrayRead, E> {
        Ok(ArrayRead::NotArray("a number"))
    }
    fn visit_f64<E>(self, _: f64) -> Result<ArrayRead, E> {
        Ok(ArrayRead::NotArray("a number"))
    }
    fn visit_str<E>(self, _: &str) -> Result<ArrayRead, E> {
        Ok(ArrayRead::NotArray("a string"))
    }
    fn visit_unit<E>(self) -> Result<ArrayRead, E> {
        Ok(ArrayRead::NotArray("null"))
    }
}

/// Reads one `serde_json::Value` with two more rules: no object holds the same key twice,
/// and every value read draws on a budget.
#[derive(Clone, Copy)]
struct StrictSeed<'a> {
    left: &'a Cell<usize>,
    /// The first key found twice in one object.
    dup: &'a RefCell<Option<String>>,
    /// What of this value to keep.
    shape: &'a Shape,
}

/// What to keep of a document read by [`projected_value`]: a foreign document (a forge's API
/// response) carries many fields the reader never looks at, and skipping them while reading
/// keeps neither their memory nor their share of the value budget.
#[derive(Debug)]
pub enum Shape {
    /// The whole value.
    All,
    /// An object: the listed keys, each with its shape; any other key is skipped unread (its
    /// duplicates too: nothing of it is kept to disagree on).
    Only(&'static [(&'static str, Shape)]),
    /// An object: the listed keys with their shapes, and every other key whole (so a reader
    /// that refuses unknown fields still sees them).
    Known(&'static [(&'static str, Shape)]),
    /// An array: each element with this shape.
    Each(&'static Shape),
}

impl Shape {
    /// The shape of the value at `key` in an object of this shape; `None`: skip it.
    fn at(&self, key: &str) -> Option<&Shape> {
        let find = |fields: &'static [(&'static str, Shape)]| {
            fields.iter().find(|(k, _)| *k == key).map(|(_, s)| s)
        };
        match self {
            Shape::Only(fields) => find(fields),
            Shape::Known(fields) => Some(find(fields).unwrap_or(&Shape::All)),
            Shape::All | Shape::Each(_) => Some(&Shape::All),
        }
    }

    /// The shape of an element in an array of this shape.
    fn element(&self) -> &Shape {
        match self {
            Shape::Each(s) => s,
            _ => &Shape::All,
        }
    }
}

impl StrictSeed<'_> {
    fn spend<E: serde::de::Error>(self) -> Result<(), E> {
        match self.left.get().checked_sub(1) {
            Some(n) => {
                self.left.set(n);
                Ok(())
            }
            None => Err(E::custom(format!(
                "the document holds more than {MAX_JSON_VALUES} JSON values, the most one document may hold"
            ))),
        }
    }
}

impl<'de> DeserializeSeed<'de> for StrictSeed<'_> {
    type Value = Value;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for StrictSeed<'_> {
    type Value = Value;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_bool<E: serde::de::Error>(self, v: bool) -> Result<Value, E> {
        self.spend()?;
        Ok(Value::Bool(v))
    }
    fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<Value, E> {
        self.spend()?;
        Ok(Value::from(v))
    }
    fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<Value, E> {
        self.spend()?;
        Ok(Value::from(v))
    }
    fn visit_f64<E: serde::de::Error>(self, v: f64) -> Result<Value, E> {
        self.spend()?;
        Ok(serde_json::Number::from_f64(v).map_or(Value::Null, Value::Number))
    }
    fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Value, E> {
        self.spend()?;
        Ok(Value::String(v.to_owned()))
    }
    fn visit_string<E: serde::de::Error>(self, v: String) -> Result<Value, E> {
        self.spend()?;
        Ok(Value::String(v))
    }
    fn visit_unit<E: serde::de::Error>(self) -> Result<Value, E> {
        self.spend()?;
        Ok(Value::Null)
    }
    fn visit_none<E: serde::de::Error>(self) -> Result<Value, E> {
        self.spend()?;
        Ok(Value::Null)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        self.spend()?;
        let mut out = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(4096));
        let element = StrictSeed {
            shape: self.shape.element(),
            ..self
        };
        while let Some(v) = seq.next_element_seed(element)? {
            out.push(v);
        }
        Ok(Value::Array(out))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        self.spend()?;
        let mut out = serde_json::Map::new();
        while let Some(key) = map.next_key::<String>()? {
            let Some(shape) = self.shape.at(&key) else {
                map.next_value::<IgnoredAny>()?;
                continue;
            };
            let v = map.next_value_seed(StrictSeed { shape, ..self })?;
            if out.contains_key(&key) {
                // Noted, not resolved: the caller refuses the document (or the field).
                let mut dup = self.dup.borrow_mut();
                if dup.is_none() {
                    *dup = Some(key);
                }
                continue;
            }
            out.insert(key, v);
        }
        Ok(Value::Object(out))
    }
}

/// Parses a request body as JSON into `T` (whose `Deserialize` accepts any well-formed JSON):
/// an empty body and bad syntax are 400s; a rule of the strict reader that `T` applies (a key
/// given twice, too many values) is a 422.
pub fn parse_json_as<'de, T: Deserialize<'de>>(body: &'de [u8]) -> Result<T, Problem> {
    refuse_empty(body)?;
    // `T` accepts any JSON, so only a rule of the strict reader can make a data error.
    serde_json::from_slice(body).map_err(problem_of)
}

/// serde_json appends " at line L column C"; the detail states the position once, up front.
fn strip_position(message: &str) -> &str {
    match message.rfind(" at line ") {
        Some(i) => message.get(..i).unwrap_or(message),
        None => message,
    }
}
