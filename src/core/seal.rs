//! The fixture seal: the SHA-256 digest of a fixtures tree, byte-identical to
//!
//! ```sh
//! LC_ALL=C find fixtures -type f ! -name '*.seal' -print0 | LC_ALL=C sort -z | xargs -0 sha256sum | sha256sum
//! ```
//!
//! so a CI job with coreutils and patchgate can check each other. Paths are bytes (a file name
//! need not be UTF-8); they are sorted by their raw bytes, and each line is written exactly as
//! GNU `sha256sum` writes it, escaping included: a name holding `\`, a newline or a carriage
//! return gets a leading `\` on its line, with `\\`, `\n` and `\r` inside (coreutils 9 escapes
//! `\r` too; the contract names only `\` and newline, and the real pipeline is the oracle).

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use sha2::{Digest as _, Sha256};

use serde_json::Value;

use super::digest::Digest;
use super::fields::{self, Errors, object};
use super::problem::MAX_ERRORS;
use super::problem::quoted;

/// One regular file: its path as `find` prints it, and the SHA-256 of its content.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    pub path: Vec<u8>,
    pub sha256: Digest,
}

pub use super::path::{PathError as TreePathError, normalize_path};

/// Caps on one tree sent to the server (a tar stream, a manifest, a JSON file list): every
/// path is kept until the tree is sorted and sealed, so these bound a seal's memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TreeLimits {
    /// Most members (files, directories, links...).
    pub max_entries: usize,
    /// Most bytes of member paths, added up.
    pub max_path_bytes: usize,
}

impl TreeLimits {
    pub const DEFAULT: TreeLimits = TreeLimits {
        max_entries: 250_000,
        max_path_bytes: 32 * 1024 * 1024,
    };
}

impl Default for TreeLimits {
    fn default() -> Self {
        Self::DEFAULT
    }
}

/// `! -name '*.seal'`: the basename ends in `.seal` (`.seal` itself included: `*` matches
/// nothing, and find's `-name` gives a leading dot no special meaning).
pub fn is_seal_file(path: &[u8]) -> bool {
    let base = path.rsplit(|b| *b == b'/').next().unwrap_or(path);
    base.ends_with(b".seal")
}

fn needs_escape(path: &[u8]) -> bool {
    path.iter().any(|b| matches!(b, b'\\' | b'\n' | b'\r'))
}

/// Appends the line `sha256sum` prints for one file.
pub fn push_line(out: &mut Vec<u8>, path: &[u8], sha256: &Digest) {
    let escape = needs_escape(path);
    if escape {
        out.push(b'\\');
    }
    out.extend_from_slice(&sha256.hex());
    out.extend_from_slice(b"  ");
    if escape {
        for &b in path {
            match b {
                b'\\' => out.extend_from_slice(b"\\\\"),
                b'\n' => out.extend_from_slice(b"\\n"),
                b'\r' => out.extend_from_slice(b"\\r"),
                b => out.push(b),
            }
        }
    } else {
        out.extend_from_slice(path);
    }
    out.push(b'\n');
}

/// The sha256sum lines of the files that count, in seal order.
pub fn manifest(entries: &[Entry]) -> Vec<u8> {
    let mut counted: Vec<&Entry> = entries.iter().filter(|e| !is_seal_file(&e.path)).collect();
    counted.sort_by(|a, b| a.path.cmp(&b.path));
    let mut out = Vec::with_capacity(counted.len() * 100);
    for e in counted {
        push_line(&mut out, &e.path, &e.sha256);
    }
    out
}

/// The SHA-256 of the empty input: what `sha256sum` prints when `xargs` runs it once on an
/// empty tree (reading an empty stdin).
const EMPTY_SHA256: &str = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";

/// A tree's seal and what went into it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Sealed {
    pub seal: Digest,
    /// Regular files counted.
    pub files: u64,
    /// Files left out because their basename ends in `.seal`.
    pub seal_files: u64,
}

/// Seals a tree given as its regular files. Paths must be unique (callers refuse duplicates).
pub fn seal(entries: &[Entry]) -> Sealed {
    let seal_files = entries.iter().filter(|e| is_seal_file(&e.path)).count() as u64;
    let files = entries.len() as u64 - seal_files;
    let lines = if files == 0 {
        // `xargs` runs `sha256sum` once with no arguments: it hashes its (empty) stdin.
        format!("{EMPTY_SHA256}  -\n").into_bytes()
    } else {
        manifest(entries)
    };
    Sealed {
        seal: Digest(Sha256::digest(&lines).into()),
        files,
        seal_files,
    }
}

/// The seal file: the line `sha256sum` prints for the piped lines, `HEX  -`.
pub fn seal_file_line(seal: &Digest) -> String {
    format!("{seal}  -\n")
}

/// Why a manifest line was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ManifestError {
    /// 1-based line number.
    pub line: usize,
    pub detail: String,
}

/// Parses `sha256sum` output: `HEX  PATH` or `HEX *PATH`, with a leading `\` on escaped lines.
/// Paths are normalised; `.seal` files are kept (sealing excludes them, as the pipeline
/// would); a path given twice is refused.
pub fn parse_manifest(text: &[u8]) -> Result<Vec<Entry>, Vec<ManifestError>> {
    parse_manifest_within(text, &TreeLimits::DEFAULT)
}

/// [`parse_manifest`] within `limits`; reading stops once [`MAX_ERRORS`] lines are refused.
pub fn parse_manifest_within(
    text: &[u8],
    limits: &TreeLimits,
) -> Result<Vec<Entry>, Vec<ManifestError>> {
    let mut entries = Vec::new();
    let mut path_bytes = 0usize;
    let mut errors = Vec::new();
    let mut seen: BTreeMap<Vec<u8>, usize> = BTreeMap::new();
    let body = text.strip_suffix(b"\n").unwrap_or(text);
    if body.is_empty() {
        return Ok(entries);
    }
    for (i, raw) in body.split(|b| *b == b'\n').enumerate() {
        if errors.len() > MAX_ERRORS {
            break;
        }
        let line = i + 1;
        let fail = |detail: String| ManifestError { line, detail };
        if entries.len() >= limits.max_entries {
            errors.push(fail(format!(
                "the manifest lists more than {} files (the server's --seal-max-entries)",
                limits.max_entries
            )));
            break;
        }
        let (escaped, rest) = match raw.strip_prefix(b"\\") {
            Some(rest) => (true, rest),
            None => (false, raw),
        };
        let (Some(hex), Some(sep), Some(name)) = (rest.get(..64), rest.get(64..66), rest.get(66..))
        else {
            errors.push(fail(
                "expected `HEX  PATH` (64 hex digits, two spaces or ` *`, a path)".into(),
            ));
            continue;
        };
        if sep != b"  " && sep != b" *" {
            errors.push(fail(
                "the digest must be followed by two spaces, or by ` *`".into(),
            ));
            continue;
        }
        let sha256 = match std::str::from_utf8(hex).ok().map(Digest::parse_hex) {
            Some(Ok(d)) => d,
            _ => {
                errors.push(fail(
                    "the line does not start with 64 hexadecimal digits".into(),
                ));
                continue;
            }
        };
        let name = if escaped {
            match unescape(name) {
                Some(n) => n,
                None => {
                    errors.push(fail(
                        "bad escape in the path (only \\\\, \\n and \\r are written by sha256sum)"
                            .into(),
                    ));
                    continue;
                }
            }
        } else {
            name.to_vec()
        };
        let path = match normalize_path(&name) {
            Ok(p) => p,
            Err(e) => {
                errors.push(fail(format!("the path {e}")));
                continue;
            }
        };
        if let Some(first) = seen.get(&path) {
            errors.push(fail(format!(
                "{} is listed twice (first on line {first})",
                String::from_utf8_lossy(&path)
            )));
            continue;
        }
        path_bytes += path.len();
        if path_bytes > limits.max_path_bytes {
            errors.push(fail(format!(
                "the manifest's paths add up to more than {} bytes (the server's --seal-max-path-bytes)",
                limits.max_path_bytes
            )));
            break;
        }
        seen.insert(path.clone(), line);
        entries.push(Entry { path, sha256 });
    }
    if errors.is_empty() {
        Ok(entries)
    } else {
        Err(errors)
    }
}

fn unescape(name: &[u8]) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(name.len());
    let mut it = name.iter();
    while let Some(&b) = it.next() {
        if b == b'\\' {
            match it.next() {
                Some(b'\\') => out.push(b'\\'),
                Some(b'n') => out.push(b'\n'),
                Some(b'r') => out.push(b'\r'),
                _ => return None,
            }
        } else {
            out.push(b);
        }
    }
    Some(out)
}

/// What changed between an expected manifest and the tree.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Drift {
    /// In the tree, not in the expected manifest.
    pub added: Vec<Vec<u8>>,
    /// In the expected manifest, not in the tree.
    pub removed: Vec<Vec<u8>>,
    /// In both, with different content.
    pub changed: Vec<Vec<u8>>,
}

/// The drift between the tree and an expected manifest, over the files that count (`.seal`
/// files are left out of both sides), each list sorted by path bytes.
pub fn drift(actual: &[Entry], expected: &[Entry]) -> Drift {
    let index = |entries: &[Entry]| -> BTreeMap<Vec<u8>, Digest> {
        entries
            .iter()
            .filter(|e| !is_seal_file(&e.path))
            .map(|e| (e.path.clone(), e.sha256))
            .collect()
    };
    let (a, e) = (index(actual), index(expected));
    let paths: BTreeSet<&Vec<u8>> = a.keys().chain(e.keys()).collect();
    let mut d = Drift::default();
    for p in paths {
        match (a.get(p), e.get(p)) {
            (Some(_), None) => d.added.push(p.clone()),
            (None, Some(_)) => d.removed.push(p.clone()),
            (Some(x), Some(y)) if x != y => d.changed.push(p.clone()),
            _ => {}
        }
    }
    d
}

impl Drift {
    pub fn is_empty(&self) -> bool {
        self.added.is_empty() && self.removed.is_empty() && self.changed.is_empty()
    }
}

// ---------------------------------------------------------------------------------------------
// The seal check of a decision request: the seal computed now against the one committed

/// The fixture seal computed now, and the one committed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SealCheck {
    pub actual: Digest,
    pub expected: Digest,
}

/// The seal check as answered.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct SealCheckAnswer {
    pub actual: String,
    pub expected: String,
    #[serde(rename = "match")]
    pub matches: bool,
}

/// The fields of a request's `seal`.
pub const SEAL_CHECK_FIELDS: [&str; 2] = ["actual", "expected"];

/// Validates `{"actual", "expected"}`, two 64-hex digests.
pub fn parse_seal(v: &Value, e: &mut Errors) -> Option<SealCheck> {
    let obj = object(v, "/seal", "the seal", &SEAL_CHECK_FIELDS, e)?;
    let actual = parse_seal_digest(&obj, "actual", e);
    let expected = parse_seal_digest(&obj, "expected", e);
    Some(SealCheck {
        actual: actual?,
        expected: expected?,
    })
}

/// A required 64-hex digest at `key` of `obj`.
pub fn parse_seal_digest(obj: &fields::Obj<'_>, key: &str, e: &mut Errors) -> Option<Digest> {
    let s = obj.req_string(key, 64, e)?;
    match Digest::parse_hex(&s) {
        Ok(d) => Some(d),
        Err(err) => {
            e.push(obj.pointer(key), format!("`{key}` {err}"));
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(path: &str, byte: u8) -> Entry {
        Entry {
            path: path.as_bytes().to_vec(),
            sha256: Digest([byte; 32]),
        }
    }

    #[test]
    fn the_empty_tree_seals_to_the_contracts_value() {
        let want = "abcfa6a9d4df344d1781bc2560b5e4cdcae08b39ed303063535e7e1e926a304a";
        assert_eq!(seal(&[]).seal.to_hex(), want);
        // Only .seal files: the same empty tree.
        assert_eq!(seal(&[entry("fixtures/x.seal", 1)]).seal.to_hex(), want);
    }

    #[test]
    fn seal_files_are_basenames_ending_in_dot_seal() {
        assert!(is_seal_file(b"fixtures/x.seal"));
        assert!(is_seal_file(b"fixtures/.seal"));
        assert!(is_seal_file(b"x.seal"));
        assert!(!is_seal_file(b"fixtures/keep.seal.txt"));
        assert!(!is_seal_file(b"fixtures/x.seal/y"));
        assert!(!is_seal_file(b"fixtures/xseal"));
    }

    #[test]
    fn lines_escape_as_sha256sum_does() {
        let d = Digest([0xab; 32]);
        let hex = d.to_hex();
        let mut out = Vec::new();
        push_line(&mut out, b"a b/c", &d);
        assert_eq!(out, format!("{hex}  a b/c\n").into_bytes());
        out.clear();
        push_line(&mut out, b"a\\b\nc\rd", &d);
        assert_eq!(out, format!("\\{hex}  a\\\\b\\nc\\rd\n").into_bytes());
    }

    #[test]
    fn manifests_round_trip_through_the_parser() {
        let entries = vec![
            entry("f/a b", 1),
            entry("f/new\nline", 2),
            entry("f/back\\slash", 3),
            entry("f/x.seal", 4),
        ];
        let mut text = Vec::new();
        for e in &entries {
            push_line(&mut text, &e.path, &e.sha256);
        }
        let parsed = parse_manifest(&text).unwrap_or_else(|e| panic!("{e:?}"));
        assert_eq!(parsed, entries);
        // ` *` (binary mode) is accepted too, and `./` is normalised away.
        let line = format!("{}  *./f/a\n", Digest([9; 32]).to_hex()).replacen("  *", " *", 1);
        assert_eq!(
            parse_manifest(line.as_bytes()).map(|v| v[0].path.clone()),
            Ok(b"f/a".to_vec())
        );
    }

    #[test]
    fn bad_manifest_lines_are_named_by_number() {
        let hex = Digest([1; 32]).to_hex();
        let text = format!("{hex}  ok\nnot a line\n{hex}  /abs\n{hex}  ok\n{hex} -x\n");
        let errors = parse_manifest(text.as_bytes()).err().unwrap_or_default();
        let lines: Vec<usize> = errors.iter().map(|e| e.line).collect();
        assert_eq!(lines, vec![2, 3, 4, 5]);
    }

    #[test]
    fn drift_names_added_removed_and_changed() {
        let actual = vec![
            entry("f/a", 1),
            entry("f/b", 2),
            entry("f/new", 3),
            entry("f/s.seal", 9),
        ];
        let expected = vec![
            entry("f/a", 1),
            entry("f/b", 7),
            entry("f/gone", 4),
            entry("f/s.seal", 8),
        ];
        let d = drift(&actual, &expected);
        assert_eq!(d.added, vec![b"f/new".to_vec()]);
        assert_eq!(d.removed, vec![b"f/gone".to_vec()]);
        assert_eq!(d.changed, vec![b"f/b".to_vec()]);
    }

    #[test]
    fn paths_normalise_and_refuse_escapes() {
        assert_eq!(
            normalize_path(b"./fixtures//a/"),
            Ok(b"fixtures/a".to_vec())
        );
        assert_eq!(normalize_path(b"/etc/passwd"), Err(TreePathError::Absolute));
        assert_eq!(
            normalize_path(b"fixtures/../x"),
            Err(TreePathError::ParentComponent)
        );
        assert_eq!(normalize_path(b"./"), Err(TreePathError::Empty));
    }
}

// ---------------------------------------------------------------------------------------------
// A tree given as JSON

/// A JSON body: `{"files": [{"path","sha256"}], "expected"?, "expected_manifest"?}`.
pub struct JsonSeal {
    pub entries: Vec<Entry>,
    pub expected: Option<Digest>,
    pub expected_manifest: Option<Vec<Entry>>,
}

fn parse_entries(v: &Value, at: &str, e: &mut Errors) -> Vec<Entry> {
    let mut seen = std::collections::HashSet::new();
    fields::array(v, at, "a file list", e, |item, p, e| {
        let row = object(item, &p, "a file", &["path", "sha256"], e)?;
        let path =
            row.req_string("path", 4096, e)
                .and_then(|s| match normalize_path(s.as_bytes()) {
                    Ok(p) => Some(p),
                    Err(err) => {
                        e.push(row.pointer("path"), format!("path {} {err}", quoted(&s)));
                        None
                    }
                });
        let sha256 = row
            .req_string("sha256", 64, e)
            .and_then(|s| match Digest::parse_hex(&s) {
                Ok(d) => Some(d),
                Err(err) => {
                    e.push(row.pointer("sha256"), format!("`sha256` {err}"));
                    None
                }
            });
        let path = path?;
        if !seen.insert(path.clone()) {
            e.push(
                row.pointer("path"),
                format!("{} is listed twice", String::from_utf8_lossy(&path)),
            );
            return None;
        }
        Some(Entry {
            path,
            sha256: sha256?,
        })
    })
    .unwrap_or_default()
}

/// Reads a JSON seal body (already read as JSON), within `limits`.
pub fn parse_json_seal(value: &Value, limits: &TreeLimits) -> Result<JsonSeal, Errors> {
    let mut e = Errors::default();
    let Some(doc) = object(
        value,
        "",
        "the seal request",
        &["files", "expected", "expected_manifest"],
        &mut e,
    ) else {
        return Err(e);
    };
    let entries = doc
        .required("files", &mut e)
        .map(|v| parse_entries(v, "/files", &mut e))
        .unwrap_or_default();
    let path_bytes: usize = entries.iter().map(|f| f.path.len()).sum();
    if entries.len() > limits.max_entries || path_bytes > limits.max_path_bytes {
        e.push(
            "/files",
            format!(
                "the tree is over the server's caps: at most {} files (--seal-max-entries) and {} bytes of paths (--seal-max-path-bytes)",
                limits.max_entries, limits.max_path_bytes
            ),
        );
    }
    let expected =
        doc.opt_string("expected", 64, &mut e)
            .and_then(|s| match Digest::parse_hex(&s) {
                Ok(d) => Some(d),
                Err(err) => {
                    e.push("/expected", format!("`expected` {err}"));
                    None
                }
            });
    let expected_manifest = match doc.get("expected_manifest") {
        None => None,
        Some(Value::String(text)) => match parse_manifest_within(text.as_bytes(), limits) {
            Ok(entries) => Some(entries),
            Err(errs) => {
                for m in errs {
                    e.push(
                        "/expected_manifest",
                        format!("line {}: {}", m.line, m.detail),
                    );
                }
                None
            }
        },
        Some(v) => Some(parse_entries(v, "/expected_manifest", &mut e)),
    };
    if e.is_empty() {
        Ok(JsonSeal {
            entries,
            expected,
            expected_manifest,
        })
    } else {
        Err(e)
    }
}

// ---------------------------------------------------------------------------------------------
// The decision on one tree, which the server and the CLI both render

/// What `sha256sum`-style sealing left out.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct Excluded {
    /// Files whose basename ends in `.seal`.
    pub seal_files: u64,
    /// Symlinks, directories, devices (tar bodies only).
    pub non_regular: u64,
}

/// The paths that differ from the expected manifest.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct DriftAnswer {
    pub added: Vec<String>,
    pub removed: Vec<String>,
    pub changed: Vec<String>,
}

/// The seal of a tree, and the verdict when an expected seal was given.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct SealAnswer {
    /// The seal: 64 hex digits, what the coreutils pipeline prints (without `  -`).
    pub seal: String,
    /// Regular files that count.
    pub files: u64,
    /// Bytes in those files (tar bodies and local trees; 0 for manifests).
    pub bytes: u64,
    pub excluded: Excluded,
    /// The expected seal, when one was given.
    pub expected: Option<String>,
    /// Whether the tree is what was expected: the seal is `expected` and nothing drifted from
    /// the expected manifest (null when neither was given).
    #[serde(rename = "match")]
    pub matches: Option<bool>,
    /// `sealed` (nothing was expected), `match`, or `fixture_fault` (the seal differs from
    /// `expected`, or the tree drifted from the expected manifest).
    pub outcome: String,
    /// With an expected manifest: what drifted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub drift: Option<DriftAnswer>,
    /// 0 match (or no expected seal); 1 mismatch.
    pub exit_code: u8,
    pub decision_id: String,
}

/// The decision on one tree: its seal and, when an expected seal was given, `match` (exit 0)
/// or `fixture_fault` (exit 1); with an expected manifest, what drifted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SealDecision {
    pub sealed: Sealed,
    /// Bytes in the files that count.
    pub bytes: u64,
    /// Symlinks, directories, devices: what did not count.
    pub non_regular: u64,
    pub expected: Option<Digest>,
    /// Whether the tree is what was expected: the seal is the expected one and nothing drifted
    /// from the expected manifest (`None`: neither was given).
    pub matches: Option<bool>,
    pub drift: Option<Drift>,
}

/// Seals a tree (its regular files, the bytes they hold, and how many other members it had)
/// and judges it against what was expected.
pub fn decide_seal(
    entries: &[Entry],
    bytes: u64,
    non_regular: u64,
    expected: Option<Digest>,
    expected_manifest: Option<&[Entry]>,
) -> SealDecision {
    let sealed = seal(entries);
    let drift = expected_manifest.map(|m| drift(entries, m));
    // Drift against an expected manifest is a mismatch, as a different seal is.
    let matches = match (expected.map(|e| e == sealed.seal), drift.as_ref()) {
        (None, None) => None,
        (seal_ok, drift) => Some(seal_ok.unwrap_or(true) && drift.is_none_or(Drift::is_empty)),
    };
    SealDecision {
        matches,
        drift,
        sealed,
        bytes,
        non_regular,
        expected,
    }
}

impl SealDecision {
    /// 1 on a mismatch, else 0.
    pub fn exit_code(&self) -> u8 {
        u8::from(self.matches == Some(false))
    }

    /// `sealed` when nothing was expected, else `match` or `fixture_fault`.
    pub fn outcome(&self) -> &'static str {
        match self.matches {
            None => "sealed",
            Some(true) => "match",
            Some(false) => "fixture_fault",
        }
    }

    /// The answer, as both edges render it.
    pub fn answer(&self, decision_id: String) -> SealAnswer {
        let lossy = |v: &[Vec<u8>]| {
            v.iter()
                .map(|p| String::from_utf8_lossy(p).into_owned())
                .collect()
        };
        SealAnswer {
            seal: self.sealed.seal.to_hex(),
            files: self.sealed.files,
            bytes: self.bytes,
            excluded: Excluded {
                seal_files: self.sealed.seal_files,
                non_regular: self.non_regular,
            },
            expected: self.expected.map(|d| d.to_hex()),
            matches: self.matches,
            outcome: self.outcome().to_owned(),
            drift: self.drift.as_ref().map(|d| DriftAnswer {
                added: lossy(&d.added),
                removed: lossy(&d.removed),
                changed: lossy(&d.changed),
            }),
            exit_code: self.exit_code(),
            decision_id,
        }
    }
}
