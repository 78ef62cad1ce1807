//! What a shard says of itself in its facts (`shard`), and what a combination of shards says
//! (`shards`): issue 53. A shard's facts decide nothing alone; `--combine` (or `POST /gate`
//! with `{"shards": [...]}`) checks that the shards make one gate and decides once.

use hmac::{Hmac, Mac};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::Sha256;
use utoipa::ToSchema;

use crate::core::fields::{self, Errors, object};

/// A shard's own facts: who it is, how the suite was split, and what it ran on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ShardFacts {
    /// This shard, from 1.
    #[schema(minimum = 1, maximum = 256)]
    pub index: u32,
    /// How many shards the gate is split into.
    #[schema(minimum = 1, maximum = 256)]
    pub total: u32,
    /// The split (SHA-256, 64 hex digits): each census test's id and shard, a line each in id
    /// order (`ID\tSHARD\n`). Every shard of one gate computes the same one from the base's
    /// census.
    #[schema(pattern = "^[0-9a-f]{64}$")]
    pub partition: String,
    /// How many census tests this shard owns.
    #[schema(minimum = 0, maximum = 4294967295_u64)]
    pub owned: u64,
    /// How many tests the census holds (all shards').
    #[schema(minimum = 0, maximum = 4294967295_u64)]
    pub census: u64,
    /// The base's config file (SHA-256, 64 hex digits).
    #[schema(pattern = "^[0-9a-f]{64}$")]
    pub config: String,
    /// The patchgate version that ran the shard.
    #[schema(min_length = 1, max_length = 64)]
    pub version: String,
    /// HMAC-SHA-256 (key: `PATCHGATE_SHARD_KEY`, empty when unset; 64 hex digits) of the
    /// facts without this field, keys sorted: written when the shard's plan said `decide`.
    /// Absent: the shard did not finish.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false, pattern = "^[0-9a-f]{64}$")]
    pub digest: Option<String>,
    /// The properties whose runs, replay and re-proof this shard makes (issue 67): the split
    /// places each with its cases by its seconds. Absent (a shard of an earlier version):
    /// shard 1 makes them all.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false, max_items = 10000)]
    pub properties: Option<Vec<String>>,
    /// Whether this shard runs the canary and the test files the patch adds (issue 67).
    /// Absent: shard 1 does.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub checker: Option<bool>,
}

impl ShardFacts {
    /// Whether this shard makes the runs (replay, re-proof) of the property `id`.
    pub fn runs_property(&self, id: &str) -> bool {
        match &self.properties {
            Some(listed) => listed.iter().any(|p| p == id),
            None => self.index == 1,
        }
    }

    /// Whether this shard runs the canary and the test files the patch adds.
    pub fn runs_checker(&self) -> bool {
        self.checker.unwrap_or(self.index == 1)
    }
}

/// Most properties a shard's facts list.
pub const MAX_SHARD_PROPERTIES: usize = 10_000;

/// What combining shards found: the shards that make the gate, and what is wrong with them.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ShardsFacts {
    /// How many shards the gate was split into.
    #[schema(minimum = 1, maximum = 256)]
    pub total: u32,
    /// The shards combined, by index.
    #[schema(max_items = 256)]
    pub combined: Vec<u32>,
    /// What is wrong with the shards given, each naming the shard (at most 100): any →
    /// ESCALATE `evidence-gap`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schema(max_items = 100)]
    pub gaps: Vec<String>,
}

/// The key of the shards' digests (`PATCHGATE_SHARD_KEY`), set once at start; empty when
/// unset.
static SHARD_KEY: std::sync::OnceLock<Vec<u8>> = std::sync::OnceLock::new();

/// Sets the shards' digest key (once; later calls are ignored).
pub fn set_shard_key(key: &[u8]) {
    let _ = SHARD_KEY.set(key.to_vec());
}

/// The shards' digest key.
pub fn shard_key() -> &'static [u8] {
    SHARD_KEY.get().map_or(&[], Vec::as_slice)
}

/// The fields of `shard`.
pub const SHARD_FIELDS: [&str; 10] = [
    "index",
    "total",
    "partition",
    "owned",
    "census",
    "config",
    "version",
    "digest",
    "properties",
    "checker",
];
/// The fields of `shards`.
pub const SHARDS_FIELDS: [&str; 3] = ["total", "combined", "gaps"];
/// Most gaps `shards` lists.
pub const MAX_SHARD_GAPS: usize = 100;

/// A digest as the facts write it: 64 lowercase hex digits.
fn hex64(v: &Value, at: &str, what: &str, e: &mut Errors) -> Option<String> {
    let s = fields::string(v, at, what, 64, e)?;
    if s.len() != 64
        || !s
            .bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
    {
        e.push(at, format!("`{what}` is 64 lowercase hex digits"));
        return None;
    }
    Some(s)
}

fn shard_number(o: &fields::Obj<'_>, key: &str, e: &mut Errors) -> Option<u32> {
    let v = o.required(key, e)?;
    let n = fields::uint(v, &o.pointer(key), key, u64::from(super::MAX_SHARDS), e)?;
    if n == 0 {
        e.push(o.pointer(key), format!("`{key}` is from 1 to 256"));
        return None;
    }
    u32::try_from(n).ok()
}

/// The strict reader of `shard`.
pub fn parse_shard(v: &Value, e: &mut Errors) -> Option<ShardFacts> {
    let o = object(v, "/shard", "`shard`", &SHARD_FIELDS, e)?;
    let index = shard_number(&o, "index", e);
    let total = shard_number(&o, "total", e);
    let hex = |key: &str, e: &mut Errors| {
        o.required(key, e)
            .and_then(|v| hex64(v, &o.pointer(key), key, e))
    };
    let partition = hex("partition", e);
    let config = hex("config", e);
    let digest = match o.get("digest") {
        None => Some(None),
        Some(v) => hex64(v, &o.pointer("digest"), "digest", e).map(Some),
    };
    let count = |key: &str, e: &mut Errors| {
        o.required(key, e)
            .and_then(|v| fields::uint(v, &o.pointer(key), key, u64::from(u32::MAX), e))
    };
    let owned = count("owned", e);
    let census = count("census", e);
    let version = o.req_string("version", 64, e);
    let properties = match o.listed("properties", MAX_SHARD_PROPERTIES, e) {
        None => None,
        Some(None) => Some(None),
        Some(Some(v)) => {
            fields::array(v, &o.pointer("properties"), "`properties`", e, |x, p, e| {
                fields::string(x, &p, "a property id", fields::MAX_ID_CHARS, e)
            })
            .map(Some)
        }
    };
    let checker = match o.get("checker") {
        None => Some(None),
        Some(_) => o.opt_bool("checker", e).map(Some),
    };
    let (index, total, owned, census) = (index?, total?, owned?, census?);
    if index > total || owned > census {
        e.push(
            "/shard",
            "`index` is at most `total`, and `owned` at most `census`",
        );
        return None;
    }
    Some(ShardFacts {
        index,
        total,
        partition: partition?,
        owned,
        census,
        config: config?,
        version: version?,
        digest: digest?,
        properties: properties?,
        checker: checker?,
    })
}

/// The strict reader of `shards`.
pub fn parse_shards(v: &Value, e: &mut Errors) -> Option<ShardsFacts> {
    let o = object(v, "/shards", "`shards`", &SHARDS_FIELDS, e)?;
    let total = shard_number(&o, "total", e);
    let combined = o.required("combined", e).and_then(|v| match v.as_array() {
        Some(a) if a.len() > super::MAX_SHARDS as usize => {
            e.push(o.pointer("combined"), "at most 256 shards");
            None
        }
        _ => fields::array(v, &o.pointer("combined"), "`combined`", e, |x, p, e| {
            fields::uint(x, &p, "a shard", u64::from(super::MAX_SHARDS), e)
                .and_then(|n| u32::try_from(n).ok())
        }),
    });
    let gaps = match o.get("gaps") {
        None => Some(Vec::new()),
        Some(v) if v.as_array().is_some_and(|a| a.len() > MAX_SHARD_GAPS) => {
            e.push(o.pointer("gaps"), "at most 100 gaps");
            None
        }
        Some(v) => fields::array(v, &o.pointer("gaps"), "`gaps`", e, |x, p, e| {
            fields::string(x, &p, "a gap", 1024, e)
        }),
    };
    Some(ShardsFacts {
        total: total?,
        combined: combined?,
        gaps: gaps?,
    })
}

/// `v` written with every object's keys sorted, at every depth: the bytes a digest is taken
/// of, whatever order a file kept them in.
fn canonical(v: &Value) -> Vec<u8> {
    fn sorted(v: &Value) -> Value {
        match v {
            Value::Object(map) => {
                let mut keys: Vec<&String> = map.keys().collect();
                keys.sort();
                Value::Object(
                    keys.into_iter()
                        .filter_map(|k| map.get(k).map(|x| (k.clone(), sorted(x))))
                        .collect(),
                )
            }
            Value::Array(items) => Value::Array(items.iter().map(sorted).collect()),
            other => other.clone(),
        }
    }
    serde_json::to_vec(&sorted(v)).unwrap_or_default()
}

/// The digest of a shard's facts `doc` (its `shard.digest` left out), keyed by `key`:
/// HMAC-SHA-256 over the canonical bytes, as 64 hex digits.
pub fn shard_digest(doc: &Value, key: &[u8]) -> String {
    let mut doc = doc.clone();
    if let Some(shard) = doc.get_mut("shard").and_then(Value::as_object_mut) {
        shard.remove("digest");
    }
    let Ok(mut mac) = Hmac::<Sha256>::new_from_slice(key) else {
        return String::new();
    };
    mac.update(&canonical(&doc));
    crate::core::digest::Digest(mac.finalize().into_bytes().into()).to_hex()
}

/// `doc` with its digest written into `shard` (the shard's last act).
pub fn seal_shard(doc: &mut Value, key: &[u8]) {
    let digest = shard_digest(doc, key);
    if let Some(shard) = doc.get_mut("shard").and_then(Value::as_object_mut) {
        shard.insert("digest".to_owned(), Value::String(digest));
    }
}

/// The split's digest: `ID\tSHARD\n` for each census test, in id order.
pub fn partition_digest<'a>(split: impl Iterator<Item = (&'a str, u32)>) -> String {
    use sha2::Digest;
    let mut sorted: Vec<(&str, u32)> = split.collect();
    sorted.sort();
    let mut h = Sha256::new();
    for (id, shard) in sorted {
        h.update(format!("{id}\t{shard}\n").as_bytes());
    }
    crate::core::digest::Digest(h.finalize().into()).to_hex()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// The digest is HMAC-SHA-256 over the keys-sorted facts without `shard.digest`: the
    /// expected value was computed by hand with Python's `hmac` (`hmac.new(b"k",
    /// b'{"a":1,"shard":{"index":1}}', "sha256")`); key order does not matter, an edit does.
    #[test]
    fn the_digest_is_an_hmac_of_the_sorted_facts() {
        let doc = json!({"shard": {"index": 1, "digest": "x"}, "a": 1});
        assert_eq!(
            shard_digest(&doc, b"k"),
            "9158c7d15760bb00f7286eb6dbce8b4f1b7bcb2042116206a8965814aa3f80dc"
        );
        let reordered: Value =
            serde_json::from_str(r#"{"a":1,"shard":{"digest":"y","index":1}}"#).unwrap();
        assert_eq!(shard_digest(&doc, b"k"), shard_digest(&reordered, b"k"));
        assert_ne!(
            shard_digest(&doc, b"k"),
            shard_digest(&json!({"shard": {"index": 1}, "a": 2}), b"k")
        );
        assert_ne!(shard_digest(&doc, b"k"), shard_digest(&doc, b""));
    }

    /// `ID\tSHARD\n` lines in id order: `printf 'a\t2\nb\t1\n' | sha256sum`.
    #[test]
    fn the_partition_digest_is_of_its_lines() {
        assert_eq!(
            partition_digest([("b", 1), ("a", 2)].into_iter()),
            "2abfabe8ddfcad9ecf72aeaf70afb71b425c61a198cbb5ae9c846ca751251ba4"
        );
    }
}
