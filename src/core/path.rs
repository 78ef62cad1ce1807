//! Repo-relative paths and whole-segment prefix matching, shared by every endpoint.
//!
//! The contract normalises paths once at the edge (`./` stripped, `//` folded, a trailing `/`
//! dropped) and refuses absolute paths and `..`; after that a [`RepoPath`] cannot hold anything
//! else, and [`RepoPath::covers`] is the one prefix matcher in the code base.

use std::collections::HashSet;
use std::fmt;

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
}

impl RepoPath {
    /// Checks and normalises one path as the contract's conventions say.
    pub fn parse(raw: &str) -> Result<Self, PathError> {
        if raw.contains('\0') {
            return Err(PathError::Nul);
        }
        if raw.starts_with('/') {
            return Err(PathError::Absolute);
        }
        let mut out = String::with_capacity(raw.len());
        for segment in raw.split('/') {
            match segment {
                "" | "." => continue,
                ".." => return Err(PathError::ParentComponent),
                s => {
                    if !out.is_empty() {
                        out.push('/');
                    }
                    out.push_str(s);
                }
            }
        }
        if out.is_empty() {
            return Err(PathError::Empty);
        }
        Ok(Self(out))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// Whole-segment prefix match: `api/handlers` covers `api/handlers` and
    /// `api/handlers/x.rs`, never `api/handlers_old/x.rs`.
    pub fn covers(&self, path: &RepoPath) -> bool {
        path.ancestors().any(|a| a == self.0)
    }

    /// The path itself and every directory above it, each a whole-segment prefix: for
    /// `a/b/c.rs`, `a`, `a/b`, `a/b/c.rs`. A prefix covers a path exactly when it is one of
    /// these, which lets a matcher put them in a set and answer each prefix in one lookup.
    pub fn ancestors(&self) -> impl Iterator<Item = &str> {
        let s = self.0.as_str();
        s.match_indices('/')
            .map(move |(i, _)| &s[..i])
            .chain(std::iter::once(s))
    }

    /// The path's segments, in order.
    pub fn segments(&self) -> impl Iterator<Item = &str> {
        self.0.split('/')
    }
}

/// Every ancestor (and the path itself) of every path in `paths`: a prefix covers one of the
/// paths exactly when it is in this set, so matching many prefixes against many paths is one
/// lookup per prefix.
pub fn ancestor_set(paths: &[RepoPath]) -> HashSet<&str> {
    let mut set = HashSet::new();
    for p in paths {
        set.extend(p.ancestors());
    }
    set
}

/// Whether any of `prefixes` covers a path whose ancestors are `set`.
pub fn covers_any(prefixes: &[RepoPath], set: &HashSet<&str>) -> bool {
    prefixes.iter().any(|p| set.contains(p.as_str()))
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

    #[test]
    fn refuses_what_leaves_the_repository() {
        assert_eq!(RepoPath::parse("/etc/passwd"), Err(PathError::Absolute));
        assert_eq!(RepoPath::parse("a/../b"), Err(PathError::ParentComponent));
        assert_eq!(RepoPath::parse(".."), Err(PathError::ParentComponent));
        assert_eq!(RepoPath::parse(""), Err(PathError::Empty));
        assert_eq!(RepoPath::parse("./"), Err(PathError::Empty));
        assert_eq!(RepoPath::parse("a\0b"), Err(PathError::Nul));
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
}
