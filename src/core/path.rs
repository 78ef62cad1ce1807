//! Repo-relative paths and whole-segment prefix matching, shared by every endpoint.
//!
//! The contract normalises paths once at the edge (`./` stripped, `//` folded, a trailing `/`
//! dropped) and refuses absolute paths and `..`; after that a [`RepoPath`] cannot hold anything
//! else, and [`RepoPath::covers`] is the one prefix matcher in the code base.

use std::collections::HashMap;
use std::fmt;

/// Longest accepted path, in bytes, as given (Linux's `PATH_MAX`): no checkout holds a longer
/// one, and the cap keeps every per-path step cheap whatever a request sends.
pub const MAX_PATH_BYTES: usize = 4096;

/// Most segments in one path. A path within [`MAX_PATH_BYTES`] has at most 2,048; real
/// repositories stay under a few dozen.
pub const MAX_PATH_SEGMENTS: usize = 1024;

/// A normalised repo-relative path: non-empty, no leading `/`, no `.` / `..` / empty segment.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct RepoPath(String);

/// Why a string is not a repo-relative path.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum PathError {
    #[error("is empty (after normalisation)")]
    Empty,
    #[error("is absolute; paths are repo-relative")]
    Absolute,
    #[error("has a `..` component; paths may not leave the repository")]
    ParentComponent,
    #[error("contains a NUL byte")]
    Nul,
    #[error("is longer than {MAX_PATH_BYTES} bytes (PATH_MAX)")]
    TooLong,
    #[error("has more than {MAX_PATH_SEGMENTS} segments")]
    TooManySegments,
}

/// Normalises a repo-relative path given as bytes (a tar member, a manifest line, a JSON
/// string): `./` and empty segments dropped, a trailing `/` dropped; absolute paths, `..`,
/// NUL bytes and paths over the caps refused. The one normaliser of the code base: [`RepoPath`]
/// is this over UTF-8 text. One pass over the input.
pub fn normalize_path(raw: &[u8]) -> Result<Vec<u8>, PathError> {
    if raw.len() > MAX_PATH_BYTES {
        return Err(PathError::TooLong);
    }
    if raw.contains(&0) {
        return Err(PathError::Nul);
    }
    if raw.first() == Some(&b'/') {
        return Err(PathError::Absolute);
    }
    let mut out = Vec::with_capacity(raw.len());
    let mut segments = 0usize;
    for segment in raw.split(|b| *b == b'/') {
        match segment {
            b"" | b"." => continue,
            b".." => return Err(PathError::ParentComponent),
            s => {
                segments += 1;
                if segments > MAX_PATH_SEGMENTS {
                    return Err(PathError::TooManySegments);
                }
                if !out.is_empty() {
                    out.push(b'/');
                }
                out.extend_from_slice(s);
            }
        }
    }
    if out.is_empty() {
        return Err(PathError::Empty);
    }
    Ok(out)
}

impl RepoPath {
    /// Checks and normalises one path as the contract's conventions say.
    pub fn parse(raw: &str) -> Result<Self, PathError> {
        let bytes = normalize_path(raw.as_bytes())?;
        // Only whole `/`-separated segments of valid UTF-8 were kept, so this cannot fail.
        String::from_utf8(bytes)
            .map(Self)
            .map_err(|_| PathError::Empty)
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// Whole-segment prefix match: `api/handlers` covers `api/handlers` and
    /// `api/handlers/x.rs`, never `api/handlers_old/x.rs`. One comparison, linear in the
    /// prefix's length.
    pub fn covers(&self, path: &RepoPath) -> bool {
        let (p, s) = (self.0.as_bytes(), path.0.as_bytes());
        s.starts_with(p) && (s.len() == p.len() || s.get(p.len()) == Some(&b'/'))
    }

    /// The path's segments, in order.
    pub fn segments(&self) -> impl Iterator<Item = &str> {
        self.0.split('/')
    }
}

/// The whole-segment prefixes of a set of paths, as a trie of segments: a prefix covers one of
/// the paths exactly when its segments are a walk from the root. Building it hashes each
/// segment of each path once, and a lookup hashes each segment of the prefix once, so
/// matching many prefixes against many paths is linear in the bytes given, however deep the
/// paths are. (Hashing every ancestor string instead is quadratic in a path's length.)
pub struct PrefixTrie<'a> {
    edges: HashMap<(usize, &'a str), usize>,
    /// The node each path ends at → the index of the first path that ends there.
    ends: HashMap<usize, usize>,
}

impl<'a> PrefixTrie<'a> {
    pub fn new(paths: &'a [RepoPath]) -> Self {
        let mut edges = HashMap::new();
        let mut ends = HashMap::new();
        let mut next = 1usize;
        for (i, p) in paths.iter().enumerate() {
            let mut node = 0usize;
            for segment in p.segments() {
                node = *edges.entry((node, segment)).or_insert_with(|| {
                    next += 1;
                    next - 1
                });
            }
            ends.entry(node).or_insert(i);
        }
        Self { edges, ends }
    }

    /// Read the other way round, the trie's paths are prefixes: the index of the shortest one
    /// that is `path` or one of its ancestors (whole segments), in one walk down `path`.
    pub fn prefix_of(&self, path: &RepoPath) -> Option<usize> {
        let mut node = 0usize;
        for segment in path.segments() {
            node = *self.edges.get(&(node, segment))?;
            if let Some(&i) = self.ends.get(&node) {
                return Some(i);
            }
        }
        None
    }

    /// Whether `prefix` covers at least one of the paths.
    pub fn covered_by(&self, prefix: &RepoPath) -> bool {
        let mut node = 0usize;
        for segment in prefix.segments() {
            match self.edges.get(&(node, segment)) {
                Some(&child) => node = child,
                None => return false,
            }
        }
        true
    }

    /// Whether any of `prefixes` covers at least one of the paths.
    pub fn any_covered_by(&self, prefixes: &[RepoPath]) -> bool {
        prefixes.iter().any(|p| self.covered_by(p))
    }
}

impl fmt::Display for RepoPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalises_as_the_contract_says() {
        let cases = [
            ("./a/b.rs", "a/b.rs"),
            ("a//b.rs", "a/b.rs"),
            ("a/b/", "a/b"),
            ("./././a", "a"),
            ("a/./b", "a/b"),
            ("api/handlers", "api/handlers"),
        ];
        for (raw, want) in cases {
            assert_eq!(
                RepoPath::parse(raw).map(|p| p.0),
                Ok(want.to_owned()),
                "{raw}"
            );
        }
    }

    /// The API document's pattern says what the normaliser does: a hand table (from CONTRACT.md's
    /// path rules), then every string of up to 7 characters over `a . / \n \0`.
    #[test]
    fn the_document_s_pattern_is_the_normaliser_s_rule() {
        let pattern = regex::Regex::new(REPO_PATH_PATTERN).expect("the pattern compiles");
        for (raw, accepted) in [
            ("a", true),
            ("./a", true),
            ("a/", true),
            ("a//b", true),
            ("..a", true),
            (".../x", true),
            ("a/.b", true),
            ("a/..b/c", true),
            ("a\n/b", true),
            ("", false),
            (".", false),
            ("./", false),
            ("//", false),
            ("/a", false),
            ("..", false),
            ("a/..", false),
            ("../a", false),
            ("a/../b", false),
            ("a\n/..", false),
            ("a\0b", false),
        ] {
            assert_eq!(pattern.is_match(raw), accepted, "{raw:?}");
            assert_eq!(normalize_path(raw.as_bytes()).is_ok(), accepted, "{raw:?}");
        }
        let alphabet = ['a', '.', '/', '\n', '\0'];
        let mut layer = vec![String::new()];
        for _ in 0..7 {
            layer = layer
                .iter()
                .flat_map(|s| alphabet.iter().map(move |c| format!("{s}{c}")))
                .collect();
            for raw in &layer {
                assert_eq!(
                    pattern.is_match(raw),
                    normalize_path(raw.as_bytes()).is_ok(),
                    "{raw:?}"
                );
            }
        }
    }

    #[test]
    fn prefix_of_matches_whole_segments() {
        let guards: Vec<RepoPath> = ["patchgate.toml", "api/handlers", "api"]
            .iter()
            .map(|p| RepoPath::parse(p).unwrap())
            .collect();
        let trie = PrefixTrie::new(&guards);
        let of = |p: &str| trie.prefix_of(&RepoPath::parse(p).unwrap());
        assert_eq!(of("patchgate.toml"), Some(0));
        assert_eq!(of("patchgate.toml.bak"), None);
        assert_eq!(of("api/handlers/x.rs"), Some(2), "the shortest prefix");
        assert_eq!(of("api_old/x.rs"), None);
        assert_eq!(of("src/patchgate.toml"), None);
    }

    #[test]
    fn refuses_what_leaves_the_repository() {
        assert_eq!(RepoPath::parse("/etc/passwd"), Err(PathError::Absolute));
        assert_eq!(RepoPath::parse("a/../b"), Err(PathError::ParentComponent));
        assert_eq!(RepoPath::parse(".."), Err(PathError::ParentComponent));
        assert_eq!(RepoPath::parse(""), Err(PathError::Empty));
        assert_eq!(RepoPath::parse("./"), Err(PathError::Empty));
        assert_eq!(RepoPath::parse("a\0b"), Err(PathError::Nul));
        assert_eq!(
            RepoPath::parse(&"a".repeat(MAX_PATH_BYTES + 1)),
            Err(PathError::TooLong)
        );
        assert_eq!(
            RepoPath::parse(&"a/".repeat(MAX_PATH_SEGMENTS + 1)),
            Err(PathError::TooManySegments)
        );
        assert!(RepoPath::parse(&"a/".repeat(MAX_PATH_SEGMENTS)).is_ok());
        // `..x` is a file name, not a parent component.
        assert!(RepoPath::parse("a/..x").is_ok());
    }

    #[test]
    fn prefixes_match_whole_segments_only() {
        let p = |s| RepoPath::parse(s).unwrap_or_else(|e| panic!("{s}: {e}"));
        let prefix = p("api/handlers");
        assert!(prefix.covers(&p("api/handlers")));
        assert!(prefix.covers(&p("api/handlers/x.rs")));
        assert!(!prefix.covers(&p("api/handlers_old/x.rs")));
        assert!(!prefix.covers(&p("api/handler")));
        assert!(!prefix.covers(&p("api")));
        assert!(!p("api/handlers/x.rs").covers(&p("api/handlers")));
    }

    #[test]
    fn the_trie_agrees_with_covers() {
        let p = |s| RepoPath::parse(s).unwrap_or_else(|e| panic!("{s}: {e}"));
        let files = [p("api/handlers/x.rs"), p("store/a/b/c.rs"), p("README.md")];
        let trie = PrefixTrie::new(&files);
        for prefix in [
            "api",
            "api/handlers",
            "api/handlers/x.rs",
            "api/handlers_old",
            "api/handler",
            "store/a/b",
            "store/a/c",
            "README.md",
            "README",
            "api/handlers/x.rs/y",
        ] {
            let prefix = p(prefix);
            let want = files.iter().any(|f| prefix.covers(f));
            assert_eq!(trie.covered_by(&prefix), want, "{prefix}");
        }
    }
}

/// A real segment, as [`REPO_PATH_PATTERN`] spells it: not starting with a dot, or one dot and
/// then not a dot, or two dots and then anything (no `/`, no NUL).
macro_rules! real_segment {
    () => {
        r"[^/\x00.][^/\x00]*|\.[^/\x00.][^/\x00]*|\.\.[^/\x00]+"
    };
}

/// What every repo-relative path [`normalize_path`] accepts satisfies: not absolute, no `..`
/// segment, no NUL, and a segment that is neither empty nor `.`. Written without lookaround:
/// empty or `.` segments up to the first real one (a segment that is not empty, `.` or `..`),
/// then real, empty or `.` segments. (The lookaround spelling it replaces let a newline hide a
/// `..` segment, and a generator can only draw it by rejection: schemathesis spent 200 s a run
/// drawing 4096-byte paths for it.)
pub const REPO_PATH_PATTERN: &str = concat!(
    r"^(?:\.(?:/\.?)*/)?(?:",
    real_segment!(),
    r")(?:/(?:",
    real_segment!(),
    r"|\.?))*$",
);

super::value_schema!(
    /// A repo-relative path as request documents declare it (the API document's `RepoPath`).
    RepoPathDoc(String) as "RepoPath",
    || utoipa::openapi::ObjectBuilder::new()
        .schema_type(utoipa::openapi::schema::Type::String)
        .description(Some(
            "A repo-relative path: `/`-separated, not absolute, no `..` segment, no NUL, at least one segment that is neither empty nor `.` (`./` and empty segments are dropped); at most 4096 bytes of UTF-8 and 1024 segments.",
        ))
        .min_length(Some(1))
        .max_length(Some(MAX_PATH_BYTES))
        .pattern(Some(REPO_PATH_PATTERN))
);
