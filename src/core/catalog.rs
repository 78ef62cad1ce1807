//! The property catalog (CONTRACT.md sections 2, 8.1 and 10): which properties observe which
//! paths, how strong each is, what implements it, and its admission proof.

use std::collections::{HashMap, HashSet};

use serde_json::Value;

use super::admit::{AdmissionRecord, parse_record};
use super::fields::{self, Errors, MAX_ID_CHARS, object};
use super::path::RepoPath;
use super::runs::CatchCodes;

crate::core::words! {
    pub enum Strength {
        /// Checks an invariant the patch can actually break; only these fill the quorum.
        Strong,
        /// Checks structure; may reject, never fills a quorum.
        Weak,
    }
}

impl Strength {
    pub fn as_str(self) -> &'static str {
        self.into()
    }
}

/// A catalog row.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Property {
    pub id: String,
    pub strength: Strength,
    /// Path prefixes this property observes (whole segments).
    pub locality: Vec<RepoPath>,
    /// The fixture directory it may read.
    pub fixtures: Option<RepoPath>,
    /// Added by this very patch: it may not vote on it.
    pub introduced: bool,
    /// The paths (files or directories) that implement the property; the patch gate guards
    /// them like the catalog (`/gate` only).
    pub source: Vec<RepoPath>,
    /// Its two-commit proof (CONTRACT.md section 10), when it was admitted.
    pub admitted: Option<AdmissionRecord>,
}

/// Which catalog a request carries: `/quorum`'s (rows may say `introduced`) or the patch
/// gate's, read from the base commit (rows may name their `source`; `introduced` is refused:
/// a patch that changes the catalog is caught by the guard instead).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CatalogKind {
    Quorum,
    Gate,
}

impl CatalogKind {
    /// The fields of one of its rows.
    pub fn fields(self) -> &'static [&'static str] {
        match self {
            CatalogKind::Quorum => &[
                "id",
                "strength",
                "locality",
                "fixtures",
                "introduced",
                "admitted",
            ],
            CatalogKind::Gate => &[
                "id", "strength", "locality", "fixtures", "source", "admitted",
            ],
        }
    }
}

/// Validates a catalog (`{"properties": [...]}`); also gives every id it names, even on rows
/// that are invalid otherwise. An `admitted` record is read with `catch`, the request's catch
/// codes.
pub fn parse_catalog(
    v: &Value,
    kind: CatalogKind,
    catch: Option<&CatchCodes>,
    e: &mut Errors,
) -> (Vec<Property>, HashSet<String>) {
    let Some(catalog) = object(v, "/catalog", "the catalog", &["properties"], e) else {
        return Default::default();
    };
    let Some(props) = catalog.required("properties", e) else {
        return Default::default();
    };
    let mut seen: HashMap<String, String> = HashMap::new();
    let props = fields::array(
        props,
        "/catalog/properties",
        "`properties`",
        e,
        |item, at, e| {
            let row = object(item, &at, "a catalog property", kind.fields(), e)?;
            let id = row.req_string("id", MAX_ID_CHARS, e);
            let strength = row.req_enum::<Strength>("strength", e);
            let locality = row
                .required("locality", e)
                .and_then(|l| fields::paths(l, &row.pointer("locality"), true, e));
            // Path prefixes, not patterns: a glob would match nothing, and nothing would say
            // so (every patch in it unobserved).
            if let Some(paths) = &locality {
                for (i, p) in paths.iter().enumerate() {
                    if p.as_str().contains(['*', '?', '[', ']', '{', '}']) {
                        e.push(
                            format!("{}/{i}", row.pointer("locality")),
                            format!(
                                "{:?} is a pattern; `locality` lists path prefixes (whole segments: `src/mypkg` covers every file under it), not globs",
                                p.as_str()
                            ),
                        );
                    }
                }
            }
            let fixtures = row
                .get("fixtures")
                .and_then(|f| fields::path(f, &row.pointer("fixtures"), e));
            let introduced = row.opt_bool("introduced", e).unwrap_or(false);
            let source = row
                .get("source")
                .and_then(|s| fields::paths(s, &row.pointer("source"), false, e))
                .unwrap_or_default();
            let admitted = row
                .get("admitted")
                .and_then(|a| parse_record(a, &row.pointer("admitted"), catch, e));
            let id = id?;
            if let Some(first) = seen.get(&id) {
                e.push(
                    row.pointer("id"),
                    format!("duplicate property id {:?} (first at {first})", id),
                );
                return None;
            }
            seen.insert(id.clone(), row.pointer("id"));
            Some(Property {
                id,
                strength: strength?,
                locality: locality?,
                fixtures,
                introduced,
                source,
                admitted,
            })
        },
    )
    .unwrap_or_default();
    (props, seen.into_keys().collect())
}

/// A catalog read once ([`parse_catalog`]): its rows, written back as its file holds them
/// (the facts' `catalog`), which [`parse_catalog`] reads to the same rows.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct Catalog {
    pub properties: Vec<Property>,
}

/// A row as the catalog file holds it.
#[derive(serde::Serialize)]
struct RowAsWritten<'a> {
    id: &'a str,
    strength: &'static str,
    locality: Vec<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    fixtures: Option<&'a str>,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    introduced: bool,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    source: Vec<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    admitted: Option<&'a AdmissionRecord>,
}

impl serde::Serialize for Property {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        RowAsWritten {
            id: &self.id,
            strength: self.strength.as_str(),
            locality: self.locality.iter().map(RepoPath::as_str).collect(),
            fixtures: self.fixtures.as_ref().map(RepoPath::as_str),
            introduced: self.introduced,
            source: self.source.iter().map(RepoPath::as_str).collect(),
            admitted: self.admitted.as_ref(),
        }
        .serialize(s)
    }
}

#[cfg(test)]
mod written {
    use super::*;

    /// A catalog written is the catalog read: every field of a row (written by hand as a
    /// catalog file holds it), for the patch gate's kind and `/quorum`'s.
    #[test]
    fn a_catalog_written_reads_back_the_same() {
        let admitted = serde_json::json!({"seal": "ab".repeat(32), "mutant": "m1",
            "base_runs": [0, 0], "mutant_runs": [1, 1], "source": "cd".repeat(32)});
        let gate = serde_json::json!({"properties": [
            {"id": "p.one", "strength": "strong", "locality": ["src/a", "src/b.py"],
             "fixtures": "fixtures/one", "source": ["properties/test_one.py"],
             "admitted": admitted},
            {"id": "p.two", "strength": "weak", "locality": ["src"]}
        ]});
        let quorum = serde_json::json!({"properties": [
            {"id": "p.three", "strength": "strong", "locality": ["src"], "introduced": true}
        ]});
        let catch = CatchCodes::default();
        for (kind, file) in [(CatalogKind::Gate, gate), (CatalogKind::Quorum, quorum)] {
            let mut e = Errors::default();
            let (properties, _) = parse_catalog(&file, kind, Some(&catch), &mut e);
            assert!(e.is_empty(), "{e:?}");
            let written = serde_json::to_value(Catalog { properties }).unwrap();
            assert_eq!(written, file);
        }
    }
}
