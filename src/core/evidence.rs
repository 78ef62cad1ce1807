//! Strict parsing of the router's evidence document into types that cannot hold a bad value.
//!
//! The body is read in two steps. First serde reads it into a [`RouteDoc`] that accepts any
//! JSON: each known field is kept as it was given ([`Scalar`]: a string, or what else it was),
//! unknown and repeated fields are listed, a non-object body is described. Only bad JSON
//! syntax fails there (400). Then [`validate`] checks the document and reports every bad field
//! at once with a pointer and a hint (a boolean cannot say `unknown` or `missing`), not just
//! the first one serde would trip on (422). Reading straight into this shallow shape, rather
//! than a `serde_json::Value` tree, keeps a decision's parse cheap on the hot path.

use std::borrow::Cow;
use std::collections::HashSet;

use serde::de::{Deserialize, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::Value;

use super::fields::{self, kind_of};
use super::json::{Strict, parse_json_as};
use super::path::{PrefixTrie, RepoPath};
use super::problem::{Errors, FieldError, MAX_ERRORS, Problem, pointer_index, pointer_key, quoted};
use super::route::{Gate, Verdict, Verdicts};

pub use super::fields::MAX_ID_CHARS;

/// A validated `/route` request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RouteRequest {
    pub patch_id: Option<String>,
    pub property_check: Verdict,
    pub fixture_check: Verdict,
    /// The freeze gate: given directly, or derived from the patch's scope.
    pub freeze: FreezeEvidence,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FreezeEvidence {
    /// `flaky_freeze` given (or absent, which means `missing`).
    Given(Verdict),
    /// `changed_files` + `frozen_tests`: the article's "freeze by patch scope".
    Scoped {
        changed_files: Vec<RepoPath>,
        frozen_tests: Vec<FrozenTest>,
    },
}

/// A frozen (quarantined) test and the path prefixes of the code it covers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FrozenTest {
    pub id: String,
    pub covers: Vec<RepoPath>,
}

/// Parses and validates a `/route` evidence document from bytes (400 or 422 on failure). Not
/// inlined: one call per request, and `scripts/bench_http.py profile` finds it by name.
#[inline(never)]
pub fn parse_route_bytes(body: &[u8]) -> Result<RouteRequest, Problem> {
    let doc: RouteDoc = parse_json_as(body)?;
    validate(doc).map_err(Problem::invalid)
}

/// Validates a `/route` evidence document given as a JSON value.
pub fn parse_route_request(value: &Value) -> Result<RouteRequest, Errors> {
    let doc = RouteDoc::deserialize(value)
        .map_err(|e| vec![FieldError::new("", format!("unreadable document: {e}"))])?;
    validate(doc)
}

/// A JSON value where the router expects a word or an id: kept when it is a string, otherwise
/// described, so the 422 can say what was sent instead.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Scalar<'a> {
    /// Borrowed from the request body when it holds no escapes.
    Str(Cow<'a, str>),
    Bool(bool),
    Null,
    /// A number, array or object, by its kind ("a number"...).
    Other(&'static str),
}

impl<'de> Deserialize<'de> for Scalar<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(ScalarVisitor)
    }
}

struct ScalarVisitor;

impl<'de> Visitor<'de> for ScalarVisitor {
    type Value = Scalar<'de>;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_bool<E>(self, v: bool) -> Result<Scalar<'de>, E> {
        Ok(Scalar::Bool(v))
    }
    fn visit_i64<E>(self, _: i64) -> Result<Scalar<'de>, E> {
        Ok(Scalar::Other("a number"))
    }
    fn visit_u64<E>(self, _: u64) -> Result<Scalar<'de>, E> {
        Ok(Scalar::Other("a number"))
    }
    fn visit_f64<E>(self, _: f64) -> Result<Scalar<'de>, E> {
        Ok(Scalar::Other("a number"))
    }
    fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Scalar<'de>, E> {
        Ok(Scalar::Str(Cow::Borrowed(v)))
    }
    fn visit_str<E>(self, v: &str) -> Result<Scalar<'de>, E> {
        Ok(Scalar::Str(Cow::Owned(v.to_owned())))
    }
    fn visit_string<E>(self, v: String) -> Result<Scalar<'de>, E> {
        Ok(Scalar::Str(Cow::Owned(v)))
    }
    fn visit_unit<E>(self) -> Result<Scalar<'de>, E> {
        Ok(Scalar::Null)
    }
    fn visit_none<E>(self) -> Result<Scalar<'de>, E> {
        Ok(Scalar::Null)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Scalar<'de>, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(Scalar::Other("an array"))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Scalar<'de>, A::Error> {
        while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(Scalar::Other("an object"))
    }
}

/// The evidence document as read off the wire, before validation. Accepts any JSON.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct RouteDoc<'a> {
    /// Set when the document is not an object: what it is instead.
    not_object: Option<&'static str>,
    patch_id: Option<Scalar<'a>>,
    property_check: Option<Scalar<'a>>,
    fixture_check: Option<Scalar<'a>>,
    flaky_freeze: Option<Scalar<'a>>,
    changed_files: Option<Value>,
    frozen_tests: Option<Value>,
    /// Fields that are not part of the document, in the order given (the first
    /// [`MAX_ERRORS`] + 1 of them).
    unknown: Vec<String>,
    /// How many more unknown fields were given past those kept.
    unknown_unlisted: usize,
    /// Fields given more than once (JSON allows it; silently keeping one would lose the other).
    repeated: Vec<String>,
    /// Fields that hold an object with a key given twice: the field, and what is wrong.
    nested: Vec<(&'static str, String)>,
}

/// A strictly read field's value; a key twice inside it is noted against the field.
fn strict_field(
    Strict { value, twice }: Strict,
    field: &'static str,
    nested: &mut Vec<(&'static str, String)>,
) -> Value {
    if let Some(detail) = twice {
        nested.push((field, detail));
    }
    value
}

enum Key {
    PatchId,
    PropertyCheck,
    FixtureCheck,
    FlakyFreeze,
    ChangedFiles,
    FrozenTests,
    Unknown(String),
}

impl<'de> Deserialize<'de> for Key {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct KeyVisitor;
        impl Visitor<'_> for KeyVisitor {
            type Value = Key;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a field name")
            }
            fn visit_str<E>(self, v: &str) -> Result<Key, E> {
                Ok(match v {
                    "patch_id" => Key::PatchId,
                    "property_check" => Key::PropertyCheck,
                    "fixture_check" => Key::FixtureCheck,
                    "flaky_freeze" => Key::FlakyFreeze,
                    "changed_files" => Key::ChangedFiles,
                    "frozen_tests" => Key::FrozenTests,
                    other => Key::Unknown(other.to_owned()),
                })
            }
        }
        d.deserialize_str(KeyVisitor)
    }
}

impl<'de> Deserialize<'de> for RouteDoc<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(DocVisitor)
    }
}

struct DocVisitor;

impl DocVisitor {
    fn not_object<'a, E>(kind: &'static str) -> Result<RouteDoc<'a>, E> {
        Ok(RouteDoc {
            not_object: Some(kind),
            ..RouteDoc::default()
        })
    }
}

fn keep<T>(slot: &mut Option<T>, value: T, name: &str, repeated: &mut Vec<String>) {
    if slot.is_some() {
        repeated.push(name.to_owned());
    }
    *slot = Some(value);
}

impl<'de> Visitor<'de> for DocVisitor {
    type Value = RouteDoc<'de>;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("an evidence document")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<RouteDoc<'de>, A::Error> {
        let mut doc = RouteDoc::default();
        while let Some(key) = map.next_key::<Key>()? {
            let rep = &mut doc.repeated;
            match key {
                Key::PatchId => keep(&mut doc.patch_id, map.next_value()?, "patch_id", rep),
                Key::PropertyCheck => keep(
                    &mut doc.property_check,
                    map.next_value()?,
                    "property_check",
                    rep,
                ),
                Key::FixtureCheck => keep(
                    &mut doc.fixture_check,
                    map.next_value()?,
                    "fixture_check",
                    rep,
                ),
                Key::FlakyFreeze => keep(
                    &mut doc.flaky_freeze,
                    map.next_value()?,
                    "flaky_freeze",
                    rep,
                ),
                // Read strictly: a key twice inside a frozen test must not resolve silently.
                Key::ChangedFiles => {
                    let v = strict_field(map.next_value()?, "changed_files", &mut doc.nested);
                    keep(&mut doc.changed_files, v, "changed_files", rep)
                }
                Key::FrozenTests => {
                    let v = strict_field(map.next_value()?, "frozen_tests", &mut doc.nested);
                    keep(&mut doc.frozen_tests, v, "frozen_tests", rep)
                }
                Key::Unknown(name) => {
                    map.next_value::<IgnoredAny>()?;
                    // Only the first few are kept (each becomes a listed error, and the list
                    // is capped): the scan below stays short however many keys are sent.
                    if doc.unknown.len() > MAX_ERRORS {
                        doc.unknown_unlisted += 1;
                    } else if doc.unknown.contains(&name) {
                        doc.repeated.push(name);
                    } else {
                        doc.unknown.push(name);
                    }
                }
            }
        }
        Ok(doc)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<RouteDoc<'de>, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Self::not_object("an array")
    }
    fn visit_bool<E>(self, _: bool) -> Result<RouteDoc<'de>, E> {
        Self::not_object("a boolean")
    }
    fn visit_i64<E>(self, _: i64) -> Result<RouteDoc<'de>, E> {
        Self::not_object("a number")
    }
    fn visit_u64<E>(self, _: u64) -> Result<RouteDoc<'de>, E> {
        Self::not_object("a number")
    }
    fn visit_f64<E>(self, _: f64) -> Result<RouteDoc<'de>, E> {
        Self::not_object("a number")
    }
    fn visit_str<E>(self, _: &str) -> Result<RouteDoc<'de>, E> {
        Self::not_object("a string")
    }
    fn visit_unit<E>(self) -> Result<RouteDoc<'de>, E> {
        Self::not_object("null")
    }
    fn visit_none<E>(self) -> Result<RouteDoc<'de>, E> {
        Self::not_object("null")
    }
}

/// A `/route/batch` body as read off the wire: the documents, or what came instead of an array.
#[derive(Debug, Clone, PartialEq)]
pub enum BatchDoc<'a> {
    Docs(Vec<RouteDoc<'a>>),
    NotArray(&'static str),
}

impl<'de> Deserialize<'de> for BatchDoc<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct BatchVisitor;
        impl<'de> Visitor<'de> for BatchVisitor {
            type Value = BatchDoc<'de>;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("an array of evidence documents")
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<BatchDoc<'de>, A::Error> {
                let mut docs = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(1024));
                while let Some(doc) = seq.next_element::<RouteDoc>()? {
                    docs.push(doc);
                }
                Ok(BatchDoc::Docs(docs))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<BatchDoc<'de>, A::Error> {
                while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
                Ok(BatchDoc::NotArray("an object"))
            }
            fn visit_bool<E>(self, _: bool) -> Result<BatchDoc<'de>, E> {
                Ok(BatchDoc::NotArray("a boolean"))
            }
            fn visit_i64<E>(self, _: i64) -> Result<BatchDoc<'de>, E> {
                Ok(BatchDoc::NotArray("a number"))
            }
            fn visit_u64<E>(self, _: u64) -> Result<BatchDoc<'de>, E> {
                Ok(BatchDoc::NotArray("a number"))
            }
            fn visit_f64<E>(self, _: f64) -> Result<BatchDoc<'de>, E> {
                Ok(BatchDoc::NotArray("a number"))
            }
            fn visit_str<E>(self, _: &str) -> Result<BatchDoc<'de>, E> {
                Ok(BatchDoc::NotArray("a string"))
            }
            fn visit_unit<E>(self) -> Result<BatchDoc<'de>, E> {
                Ok(BatchDoc::NotArray("null"))
            }
        }
        d.deserialize_any(BatchVisitor)
    }
}

/// The fields of a `/route` body.
pub const ROUTE_FIELDS: [&str; 6] = [
    "patch_id",
    "property_check",
    "fixture_check",
    "flaky_freeze",
    "changed_files",
    "frozen_tests",
];

/// Checks a read document and builds the request, reporting every invalid field.
pub fn validate(doc: RouteDoc<'_>) -> Result<RouteRequest, Errors> {
    if let Some(kind) = doc.not_object {
        return Err(vec![FieldError::new(
            "",
            format!("the evidence must be a JSON object, not {kind}"),
        )]
        .into());
    }
    let mut errors = Errors::default();
    for key in &doc.unknown {
        errors.add(FieldError::new(
            pointer_key("", key),
            format!(
                "unknown field `{key}`; the fields are {}",
                ROUTE_FIELDS
                    .iter()
                    .map(|f| format!("`{f}`"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        ));
    }
    // Unknown fields past the ones kept are counted, so the answer says how many there were.
    for _ in 0..doc.unknown_unlisted {
        errors.push("", "one more unknown field");
    }
    for (field, detail) in &doc.nested {
        errors.push(pointer_key("", field), detail.clone());
    }
    for key in &doc.repeated {
        errors.add(FieldError::new(
            pointer_key("", key),
            format!("`{key}` is given more than once; give each field once"),
        ));
    }
    let patch_id = doc
        .patch_id
        .and_then(|v| check_id(v, "patch_id", "", &mut errors));
    let property_check = check_verdict(doc.property_check, Gate::PropertyCheck, &mut errors);
    let fixture_check = check_verdict(doc.fixture_check, Gate::FixtureCheck, &mut errors);
    let freeze = check_freeze(
        doc.flaky_freeze,
        doc.changed_files,
        doc.frozen_tests,
        &mut errors,
    );
    if errors.is_empty() {
        Ok(RouteRequest {
            patch_id,
            property_check,
            fixture_check,
            freeze,
        })
    } else {
        Err(errors)
    }
}

fn scalar_of(v: &Value) -> Scalar<'_> {
    match v {
        Value::String(s) => Scalar::Str(Cow::Borrowed(s)),
        Value::Bool(b) => Scalar::Bool(*b),
        Value::Null => Scalar::Null,
        other => Scalar::Other(kind_of(other)),
    }
}

/// An id string of at most [`MAX_ID_CHARS`] characters.
fn check_id(value: Scalar, field: &str, base: &str, errors: &mut Errors) -> Option<String> {
    let complaint = match value {
        Scalar::Str(s) => {
            let chars = s.chars().count();
            if chars <= MAX_ID_CHARS {
                return Some(s.into_owned());
            }
            format!("`{field}` is {chars} characters long; at most {MAX_ID_CHARS} are allowed")
        }
        Scalar::Bool(_) => format!("`{field}` must be a string, not a boolean"),
        Scalar::Null => format!("`{field}` must be a string, not null"),
        Scalar::Other(kind) => format!("`{field}` must be a string, not {kind}"),
    };
    errors.add(FieldError::new(pointer_key(base, field), complaint));
    None
}

fn verdict_words() -> &'static str {
    "\"pass\", \"fail\", \"unknown\" or \"missing\""
}

/// One gate's verdict; absent means `missing`.
fn check_verdict(value: Option<Scalar<'_>>, gate: Gate, errors: &mut Errors) -> Verdict {
    let Some(value) = value else {
        return Verdict::Missing;
    };
    let field = gate.field();
    let complaint = match value {
        Scalar::Str(word) => match Verdict::from_word(&word) {
            Some(v) => return v,
            None => format!(
                "`{field}` is {}, which is not a verdict; it must be one of {}",
                quoted(&word),
                verdict_words()
            ),
        },
        Scalar::Bool(b) => format!(
            "`{field}` is the boolean {b}; it must be one of {} (a boolean cannot say unknown or missing)",
            verdict_words()
        ),
        Scalar::Null => format!(
            "`{field}` is null; it must be one of {} (leave the field out to say the gate never ran)",
            verdict_words()
        ),
        Scalar::Other(kind) => {
            format!("`{field}` is {kind}; it must be one of {}", verdict_words())
        }
    };
    errors.add(FieldError::new(pointer_key("", field), complaint));
    Verdict::Missing
}

fn check_freeze(
    flaky_freeze: Option<Scalar<'_>>,
    changed: Option<Value>,
    frozen: Option<Value>,
    errors: &mut Errors,
) -> FreezeEvidence {
    if changed.is_none() && frozen.is_none() {
        return FreezeEvidence::Given(check_verdict(flaky_freeze, Gate::FlakyFreeze, errors));
    }
    if flaky_freeze.is_some() {
        let (field, what) = if frozen.is_some() {
            (
                "frozen_tests",
                "`flaky_freeze` and `frozen_tests` cannot both be given",
            )
        } else {
            (
                "changed_files",
                "`changed_files` scopes the freeze; it cannot be given with `flaky_freeze`",
            )
        };
        errors.add(FieldError::new(
            pointer_key("", field),
            format!("{what}: give the freeze verdict directly, or `changed_files` with `frozen_tests` to derive it"),
        ));
        return FreezeEvidence::Given(Verdict::Missing);
    }
    let frozen_given = frozen.is_some();
    let (Some(changed), Some(frozen)) = (changed, frozen) else {
        let (field, other) = if frozen_given {
            ("frozen_tests", "changed_files")
        } else {
            ("changed_files", "frozen_tests")
        };
        errors.add(FieldError::new(
            pointer_key("", field),
            format!("`{field}` needs `{other}`: the freeze verdict is derived from both"),
        ));
        return FreezeEvidence::Given(Verdict::Missing);
    };
    let changed_files =
        fields::paths(&changed, "/changed_files", false, errors).unwrap_or_default();
    let frozen_tests = parse_frozen_tests(&frozen, errors);
    FreezeEvidence::Scoped {
        changed_files,
        frozen_tests,
    }
}

fn parse_frozen_tests(value: &Value, errors: &mut Errors) -> Vec<FrozenTest> {
    let Some(items) = value.as_array() else {
        errors.add(FieldError::new(
            "/frozen_tests",
            format!(
                "must be an array of {{\"id\", \"covers\"}} objects, not {}",
                kind_of(value)
            ),
        ));
        return Vec::new();
    };
    let mut seen = HashSet::new();
    let mut out = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        if errors.is_full() {
            break;
        }
        let base = pointer_index("/frozen_tests", i);
        // Unknown keys and a non-object are reported by the validation toolkit.
        let Some(obj) = fields::object(item, &base, "a frozen test", &["id", "covers"], errors)
        else {
            continue;
        };
        let obj = obj.map;
        let id = match obj.get("id") {
            None => {
                errors.add(FieldError::new(
                    pointer_key(&base, "id"),
                    "`id` is required",
                ));
                None
            }
            Some(v) => check_id(scalar_of(v), "id", &base, errors),
        };
        if let Some(id) = &id {
            if id.is_empty() {
                errors.add(FieldError::new(
                    pointer_key(&base, "id"),
                    "`id` must not be empty",
                ));
            } else if !seen.insert(id.clone()) {
                errors.add(FieldError::new(
                    pointer_key(&base, "id"),
                    format!("duplicate frozen test id {}", quoted(id)),
                ));
            }
        }
        let covers = match obj.get("covers") {
            None => {
                errors.add(FieldError::new(
                    pointer_key(&base, "covers"),
                    "`covers` is required: the path prefixes of the code this test covers",
                ));
                Vec::new()
            }
            Some(v) => {
                fields::paths(v, &pointer_key(&base, "covers"), true, errors).unwrap_or_default()
            }
        };
        if let Some(id) = id {
            out.push(FrozenTest { id, covers });
        }
    }
    out
}

/// The freeze gate derived from the patch's scope.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScopedFreeze {
    pub derived: Verdict,
    /// Ids of the frozen tests that cover a changed file, in request order.
    pub matched: Vec<String>,
}

/// `unknown` when a frozen test covers a changed file, else `pass`: a freeze that does not
/// touch the diff is irrelevant to it and must not escalate it.
///
/// Linear in the input: the changed files go into one segment trie ([`PrefixTrie`]), and each
/// covered prefix is one walk down it, so a large diff against a large freeze set, or one very
/// deep path, stays cheap.
pub fn derive_freeze(changed_files: &[RepoPath], frozen_tests: &[FrozenTest]) -> ScopedFreeze {
    let trie = PrefixTrie::new(changed_files);
    let matched: Vec<String> = frozen_tests
        .iter()
        .filter(|t| trie.any_covered_by(&t.covers))
        .map(|t| t.id.clone())
        .collect();
    let derived = if matched.is_empty() {
        Verdict::Pass
    } else {
        Verdict::Unknown
    };
    ScopedFreeze { derived, matched }
}

impl RouteRequest {
    /// The verdict triple the ladder reads, and the scoped freeze when it was derived.
    pub fn verdicts(&self) -> (Verdicts, Option<ScopedFreeze>) {
        let (flaky_freeze, scoped) = match &self.freeze {
            FreezeEvidence::Given(v) => (*v, None),
            FreezeEvidence::Scoped {
                changed_files,
                frozen_tests,
            } => {
                let s = derive_freeze(changed_files, frozen_tests);
                (s.derived, Some(s))
            }
        };
        let verdicts = Verdicts {
            property_check: self.property_check,
            fixture_check: self.fixture_check,
            flaky_freeze,
        };
        (verdicts, scoped)
    }
}
