//! Field-by-field validation of a JSON document, for the endpoints whose documents are read
//! into a `serde_json::Value` first: each helper checks one field, records a [`FieldError`]
//! with its pointer when it is wrong, and lets the caller go on, so one answer names every bad
//! field. Unknown fields are errors, never ignored.

use serde_json::{Map, Value};
use strum::VariantArray;

use super::path::RepoPath;
use super::problem::{pointer_index, pointer_key, quoted};

/// What a JSON value is, in words, for error details.
pub fn kind_of(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// An object being validated, with the pointer it sits at.
pub struct Obj<'a> {
    pub map: &'a Map<String, Value>,
    pub at: String,
}

pub use super::problem::Errors;

/// Longest accepted id (patch id, property id, frozen-test id, tier name), in characters.
pub const MAX_ID_CHARS: usize = 256;

/// `value` as an object whose keys are all in `allowed`; unknown keys are reported.
pub fn object<'a>(
    value: &'a Value,
    at: &str,
    what: &str,
    allowed: &[&str],
    errors: &mut Errors,
) -> Option<Obj<'a>> {
    let Some(map) = value.as_object() else {
        errors.push(
            at,
            format!("{what} must be a JSON object, not {}", kind_of(value)),
        );
        return None;
    };
    for key in map.keys() {
        if errors.is_full() {
            break;
        }
        if !allowed.contains(&key.as_str()) {
            errors.push(
                pointer_key(at, key),
                format!(
                    "unknown field `{key}`; {what} has {}",
                    allowed
                        .iter()
                        .map(|f| format!("`{f}`"))
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            );
        }
    }
    Some(Obj {
        map,
        at: at.to_owned(),
    })
}

impl<'a> Obj<'a> {
    pub fn pointer(&self, key: &str) -> String {
        pointer_key(&self.at, key)
    }

    pub fn get(&self, key: &str) -> Option<&'a Value> {
        self.map.get(key)
    }

    /// A required field.
    pub fn required(&self, key: &str, errors: &mut Errors) -> Option<&'a Value> {
        let v = self.map.get(key);
        if v.is_none() {
            errors.push(self.pointer(key), format!("`{key}` is required"));
        }
        v
    }

    /// An optional string of at most `max_chars` characters.
    pub fn opt_string(&self, key: &str, max_chars: usize, errors: &mut Errors) -> Option<String> {
        let v = self.map.get(key)?;
        string(v, &self.pointer(key), key, max_chars, errors)
    }

    /// A required, non-empty string of at most `max_chars` characters.
    pub fn req_string(&self, key: &str, max_chars: usize, errors: &mut Errors) -> Option<String> {
        let v = self.required(key, errors)?;
        let s = string(v, &self.pointer(key), key, max_chars, errors)?;
        if s.is_empty() {
            errors.push(self.pointer(key), format!("`{key}` must not be empty"));
            return None;
        }
        Some(s)
    }

    /// An optional list of at most `max` entries: `None` (an error pushed) when longer,
    /// `Some(None)` when absent.
    pub fn listed(&self, key: &str, max: usize, errors: &mut Errors) -> Option<Option<&'a Value>> {
        match self.map.get(key) {
            Some(v) if v.as_array().is_some_and(|a| a.len() > max) => {
                errors.push(
                    self.pointer(key),
                    format!("`{key}` lists at most {max} entries"),
                );
                None
            }
            other => Some(other),
        }
    }

    /// An optional boolean.
    pub fn opt_bool(&self, key: &str, errors: &mut Errors) -> Option<bool> {
        match self.map.get(key)? {
            Value::Bool(b) => Some(*b),
            other => {
                errors.push(
                    self.pointer(key),
                    format!("`{key}` must be true or false, not {}", kind_of(other)),
                );
                None
            }
        }
    }

    /// An optional non-negative integer no larger than `max`.
    pub fn opt_uint(&self, key: &str, max: u64, errors: &mut Errors) -> Option<u64> {
        let v = self.map.get(key)?;
        uint(v, &self.pointer(key), key, max, errors)
    }

    /// A required word naming one of `T`'s variants, as its words are written (the enum's
    /// own, from strum; the same words serde writes). The error lists them.
    pub fn req_enum<T>(&self, key: &str, errors: &mut Errors) -> Option<T>
    where
        T: VariantArray + Copy + Into<&'static str>,
    {
        let v = self.required(key, errors)?;
        let word_of = |t: &T| -> &'static str { (*t).into() };
        if let Value::String(s) = v
            && let Some(found) = T::VARIANTS.iter().find(|t| word_of(t) == s.as_str())
        {
            return Some(*found);
        }
        let list = T::VARIANTS
            .iter()
            .map(|t| format!("\"{}\"", word_of(t)))
            .collect::<Vec<_>>()
            .join(", ");
        let what = match v {
            Value::String(s) => quoted(s),
            other => kind_of(other).to_owned(),
        };
        errors.push(
            self.pointer(key),
            format!("`{key}` is {what}; it must be one of {list}"),
        );
        None
    }
}

/// A string of at most `max_chars` characters.
pub fn string(
    v: &Value,
    at: &str,
    name: &str,
    max_chars: usize,
    errors: &mut Errors,
) -> Option<String> {
    match v {
        Value::String(s) if s.chars().count() <= max_chars => Some(s.clone()),
        Value::String(s) => {
            errors.push(
                at,
                format!(
                    "`{name}` is {} characters long; at most {max_chars} are allowed",
                    s.chars().count()
                ),
            );
            None
        }
        other => {
            errors.push(
                at,
                format!("`{name}` must be a string, not {}", kind_of(other)),
            );
            None
        }
    }
}

/// A non-negative integer no larger than `max`.
/// The largest integer a JSON number written with a fraction part (`251.0`) holds exactly.
const MAX_EXACT_FLOAT: f64 = 9_007_199_254_740_992.0;

/// `v` as a whole number: an integer, or a number written with a zero fraction (`251.0`,
/// which JSON Schema calls an integer too) up to 2^53, where every such number is exact.
pub fn whole(v: &Value) -> Option<i128> {
    if let Some(n) = v.as_u64() {
        return Some(i128::from(n));
    }
    if let Some(n) = v.as_i64() {
        return Some(i128::from(n));
    }
    v.as_f64()
        .filter(|f| f.fract() == 0.0 && f.abs() <= MAX_EXACT_FLOAT)
        .map(|f| f as i128)
}

/// `v` as a whole number from 0 to `u64::MAX`.
pub fn whole_u64(v: &Value) -> Option<u64> {
    whole(v).and_then(|n| u64::try_from(n).ok())
}

pub fn uint(v: &Value, at: &str, name: &str, max: u64, errors: &mut Errors) -> Option<u64> {
    match whole_u64(v) {
        Some(n) if n <= max => Some(n),
        Some(n) => {
            errors.push(at, format!("`{name}` is {n}; at most {max} is allowed"));
            None
        }
        None => {
            let what = if v.is_number() {
                "a negative or fractional number".to_owned()
            } else {
                kind_of(v).to_owned()
            };
            errors.push(
                at,
                format!("`{name}` must be a non-negative integer, not {what}"),
            );
            None
        }
    }
}

/// An array at `at`, each item handed to `item` with its pointer.
pub fn array<'a, T>(
    v: &'a Value,
    at: &str,
    what: &str,
    errors: &mut Errors,
    mut item: impl FnMut(&'a Value, String, &mut Errors) -> Option<T>,
) -> Option<Vec<T>> {
    let Some(items) = v.as_array() else {
        errors.push(at, format!("{what} must be an array, not {}", kind_of(v)));
        return None;
    };
    let mut out = Vec::with_capacity(items.len());
    for (i, x) in items.iter().enumerate() {
        // Past the error cap the answer is decided (a 422); reading on would only spend.
        if errors.is_full() {
            break;
        }
        if let Some(v) = item(x, pointer_index(at, i), errors) {
            out.push(v);
        }
    }
    Some(out)
}

/// A repo-relative path.
pub fn path(v: &Value, at: &str, errors: &mut Errors) -> Option<RepoPath> {
    match v {
        Value::String(s) => match RepoPath::parse(s) {
            Ok(p) => Some(p),
            Err(e) => {
                errors.push(at, format!("path {} {e}", quoted(s)));
                None
            }
        },
        other => {
            errors.push(at, format!("must be a path string, not {}", kind_of(other)));
            None
        }
    }
}

/// An array of repo-relative paths; `non_empty` requires at least one.
pub fn paths(v: &Value, at: &str, non_empty: bool, errors: &mut Errors) -> Option<Vec<RepoPath>> {
    let out = array(v, at, "a path list", errors, |x, p, e| path(x, &p, e))?;
    if non_empty && v.as_array().is_some_and(Vec::is_empty) {
        errors.push(at, "must list at least one path prefix");
    }
    Some(out)
}

/// A full git object id (40 hex digits for SHA-1, 64 for SHA-256).
pub fn is_object_id(s: &str) -> bool {
    matches!(s.len(), 40 | 64) && s.bytes().all(|b| b.is_ascii_hexdigit())
}

#[cfg(test)]
mod whole_tests {
    use super::*;

    #[test]
    fn whole_numbers_written_with_a_zero_fraction_are_whole() {
        let cases: [(&str, Option<i128>); 9] = [
            ("251", Some(251)),
            ("251.0", Some(251)),
            ("-3.0", Some(-3)),
            ("1964845683437989.0", Some(1_964_845_683_437_989)),
            ("9007199254740992.0", Some(9_007_199_254_740_992)),
            ("1e300", None),
            ("2.5", None),
            ("18446744073709551615", Some(18_446_744_073_709_551_615)),
            ("\"7\"", None),
        ];
        for (text, want) in cases {
            let v: Value = serde_json::from_str(text).unwrap_or(Value::Null);
            assert_eq!(whole(&v), want, "{text}");
        }
        let v: Value = serde_json::from_str("-1.0").unwrap_or(Value::Null);
        assert_eq!(whole_u64(&v), None);
    }
}
