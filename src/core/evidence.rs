//! Strict parsing of the router's evidence document into types that cannot hold a bad value.
//!
//! Parsing walks a `serde_json::Value` by hand rather than deriving `Deserialize`, because the
//! contract wants every bad field named with a pointer and a hint (a boolean cannot say
//! `unknown` or `missing`), and all of them reported at once, not the first one serde trips on.

use std::collections::HashSet;

use serde_json::{Map, Value};

use super::path::RepoPath;
use super::problem::{FieldError, Problem, pointer_index, pointer_key};
use super::route::{Gate, Verdict, Verdicts};

/// Longest accepted `patch_id` (and frozen-test id), in characters.
pub const MAX_ID_CHARS: usize = 256;

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

/// Parses a request body as JSON: an empty body and bad syntax are 400s with line and column.
pub fn parse_json(body: &[u8]) -> Result<Value, Problem> {
    if body.iter().all(u8::is_ascii_whitespace) {
        return Err(Problem::malformed(
            "the body is empty; expected a JSON document",
        ));
    }
    serde_json::from_slice(body).map_err(|e| {
        Problem::malformed(format!(
            "the body is not valid JSON (line {}, column {}): {}",
            e.line(),
            e.column(),
            strip_position(&e.to_string())
        ))
    })
}

/// serde_json appends " at line L column C"; the detail states the position once, up front.
fn strip_position(message: &str) -> &str {
    match message.rfind(" at line ") {
        Some(i) => &message[..i],
        None => message,
    }
}

/// Parses and validates a `/route` evidence document from bytes (400 or 422 on failure).
pub fn parse_route_bytes(body: &[u8]) -> Result<RouteRequest, Problem> {
    let value = parse_json(body)?;
    parse_route_request(&value).map_err(Problem::invalid)
}

/// Validates a `/route` evidence document, reporting every invalid field.
pub fn parse_route_request(value: &Value) -> Result<RouteRequest, Vec<FieldError>> {
    let Some(obj) = value.as_object() else {
        return Err(vec![FieldError::new(
            "",
            format!("the evidence must be a JSON object, not {}", kind_of(value)),
        )]);
    };
    let mut errors = Vec::new();

    for key in obj.keys() {
        if !ROUTE_FIELDS.contains(&key.as_str()) {
            errors.push(FieldError::new(
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
    }

    let patch_id = parse_id(obj, "patch_id", "", &mut errors);
    let property_check = parse_verdict(obj, Gate::PropertyCheck, &mut errors);
    let fixture_check = parse_verdict(obj, Gate::FixtureCheck, &mut errors);
    let freeze = parse_freeze(obj, &mut errors);

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

const ROUTE_FIELDS: [&str; 6] = [
    "patch_id",
    "property_check",
    "fixture_check",
    "flaky_freeze",
    "changed_files",
    "frozen_tests",
];

fn kind_of(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

fn parse_id(
    obj: &Map<String, Value>,
    field: &str,
    base: &str,
    errors: &mut Vec<FieldError>,
) -> Option<String> {
    let value = obj.get(field)?;
    let pointer = pointer_key(base, field);
    match value {
        Value::String(s) if s.chars().count() <= MAX_ID_CHARS => Some(s.clone()),
        Value::String(s) => {
            errors.push(FieldError::new(
                pointer,
                format!(
                    "`{field}` is {} characters long; at most {MAX_ID_CHARS} are allowed",
                    s.chars().count()
                ),
            ));
            None
        }
        other => {
            errors.push(FieldError::new(
                pointer,
                format!("`{field}` must be a string, not {}", kind_of(other)),
            ));
            None
        }
    }
}

fn verdict_words() -> &'static str {
    "\"pass\", \"fail\", \"unknown\" or \"missing\""
}

/// Reads one gate's verdict from `field`; absent means `missing`.
fn parse_verdict_at(
    obj: &Map<String, Value>,
    field: &str,
    errors: &mut Vec<FieldError>,
) -> Verdict {
    let Some(value) = obj.get(field) else {
        return Verdict::Missing;
    };
    let pointer = pointer_key("", field);
    let complaint = match value {
        Value::String(word) => match Verdict::from_word(word) {
            Some(v) => return v,
            None => format!(
                "`{field}` is {}, which is not a verdict; it must be one of {}",
                serde_json::to_string(word).unwrap_or_default(),
                verdict_words()
            ),
        },
        Value::Bool(b) => format!(
            "`{field}` is the boolean {b}; it must be one of {} (a boolean cannot say unknown or missing)",
            verdict_words()
        ),
        Value::Null => format!(
            "`{field}` is null; it must be one of {} (leave the field out to say the gate never ran)",
            verdict_words()
        ),
        other => format!(
            "`{field}` is {}; it must be one of {}",
            kind_of(other),
            verdict_words()
        ),
    };
    errors.push(FieldError::new(pointer, complaint));
    Verdict::Missing
}

fn parse_verdict(obj: &Map<String, Value>, gate: Gate, errors: &mut Vec<FieldError>) -> Verdict {
    parse_verdict_at(obj, gate.field(), errors)
}

fn parse_freeze(obj: &Map<String, Value>, errors: &mut Vec<FieldError>) -> FreezeEvidence {
    let direct = obj.contains_key("flaky_freeze");
    let changed = obj.get("changed_files");
    let frozen = obj.get("frozen_tests");
    if changed.is_none() && frozen.is_none() {
        return FreezeEvidence::Given(parse_verdict(obj, Gate::FlakyFreeze, errors));
    }
    if direct {
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
        errors.push(FieldError::new(
            pointer_key("", field),
            format!("{what}: give the freeze verdict directly, or `changed_files` with `frozen_tests` to derive it"),
        ));
        return FreezeEvidence::Given(Verdict::Missing);
    }
    let (Some(changed), Some(frozen)) = (changed, frozen) else {
        let (field, other) = if changed.is_none() {
            ("frozen_tests", "changed_files")
        } else {
            ("changed_files", "frozen_tests")
        };
        errors.push(FieldError::new(
            pointer_key("", field),
            format!("`{field}` needs `{other}`: the freeze verdict is derived from both"),
        ));
        return FreezeEvidence::Given(Verdict::Missing);
    };
    let changed_files = parse_path_list(changed, "/changed_files", false, errors);
    let frozen_tests = parse_frozen_tests(frozen, errors);
    FreezeEvidence::Scoped {
        changed_files,
        frozen_tests,
    }
}

/// Parses an array of repo-relative paths at `pointer`.
pub fn parse_path_list(
    value: &Value,
    pointer: &str,
    require_non_empty: bool,
    errors: &mut Vec<FieldError>,
) -> Vec<RepoPath> {
    let Some(items) = value.as_array() else {
        errors.push(FieldError::new(
            pointer,
            format!(
                "must be an array of repo-relative paths, not {}",
                kind_of(value)
            ),
        ));
        return Vec::new();
    };
    if require_non_empty && items.is_empty() {
        errors.push(FieldError::new(
            pointer,
            "must list at least one path prefix",
        ));
    }
    let mut out = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        let at = pointer_index(pointer, i);
        match item {
            Value::String(s) => match RepoPath::parse(s) {
                Ok(p) => out.push(p),
                Err(e) => errors.push(FieldError::new(
                    at,
                    format!("path {} {e}", serde_json::to_string(s).unwrap_or_default()),
                )),
            },
            other => errors.push(FieldError::new(
                at,
                format!("must be a path string, not {}", kind_of(other)),
            )),
        }
    }
    out
}

fn parse_frozen_tests(value: &Value, errors: &mut Vec<FieldError>) -> Vec<FrozenTest> {
    let Some(items) = value.as_array() else {
        errors.push(FieldError::new(
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
        let base = pointer_index("/frozen_tests", i);
        let Some(obj) = item.as_object() else {
            errors.push(FieldError::new(
                base,
                format!(
                    "must be an object {{\"id\", \"covers\"}}, not {}",
                    kind_of(item)
                ),
            ));
            continue;
        };
        for key in obj.keys() {
            if key != "id" && key != "covers" {
                errors.push(FieldError::new(
                    pointer_key(&base, key),
                    format!("unknown field `{key}`; a frozen test has `id` and `covers`"),
                ));
            }
        }
        let id = match obj.get("id") {
            None => {
                errors.push(FieldError::new(
                    pointer_key(&base, "id"),
                    "`id` is required",
                ));
                None
            }
            Some(_) => parse_id(obj, "id", &base, errors),
        };
        if let Some(id) = &id {
            if id.is_empty() {
                errors.push(FieldError::new(
                    pointer_key(&base, "id"),
                    "`id` must not be empty",
                ));
            } else if !seen.insert(id.clone()) {
                errors.push(FieldError::new(
                    pointer_key(&base, "id"),
                    format!(
                        "duplicate frozen test id {}",
                        serde_json::to_string(id).unwrap_or_default()
                    ),
                ));
            }
        }
        let covers = match obj.get("covers") {
            None => {
                errors.push(FieldError::new(
                    pointer_key(&base, "covers"),
                    "`covers` is required: the path prefixes of the code this test covers",
                ));
                Vec::new()
            }
            Some(v) => parse_path_list(v, &pointer_key(&base, "covers"), true, errors),
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
/// Linear in the input: every ancestor of every changed file ([`RepoPath::ancestors`], the one
/// definition of whole-segment matching) goes into one set, and each covered prefix is one
/// lookup, so a large diff against a large freeze set stays cheap.
pub fn derive_freeze(changed_files: &[RepoPath], frozen_tests: &[FrozenTest]) -> ScopedFreeze {
    let mut ancestors: HashSet<&str> = HashSet::new();
    for file in changed_files {
        ancestors.extend(file.ancestors());
    }
    let matched: Vec<String> = frozen_tests
        .iter()
        .filter(|t| t.covers.iter().any(|c| ancestors.contains(c.as_str())))
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
