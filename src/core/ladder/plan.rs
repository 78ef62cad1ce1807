//! Planning the ladder for a diff: scope routing before the expensive suites.

use super::*;

/// The name of the article's scope tier.
pub const SCOPE_TIER: &str = "t0-scope";
pub const T1: &str = "t1-properties";
pub const T2: &str = "t2-fixtures";

/// What makes a path test-adjacent: whole segments, never substrings.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ScopeMarkers {
    /// A directory segment with one of these names (`tests/`, `pkg/fixtures/`).
    pub dirs: Vec<String>,
    /// A basename equal to one of these (`conftest.py`).
    pub files: Vec<String>,
    /// A basename starting with one of these (`test_a.py`).
    pub prefixes: Vec<String>,
}

impl Default for ScopeMarkers {
    fn default() -> Self {
        Self {
            dirs: vec!["tests".into(), "fixtures".into()],
            files: vec!["conftest.py".into(), "pytest.ini".into(), "tox.ini".into()],
            prefixes: vec!["test_".into()],
        }
    }
}

impl ScopeMarkers {
    /// Whether a change to `path` is a scope hit: it is test-adjacent, or it is a toolchain
    /// file (always, whatever the markers say).
    pub fn is_scope_hit(&self, path: &RepoPath) -> bool {
        self.is_test_adjacent(path) || is_toolchain_file(path)
    }

    /// Whether `path` is test-adjacent.
    pub fn is_test_adjacent(&self, path: &RepoPath) -> bool {
        let segments: Vec<&str> = path.segments().collect();
        let Some((base, dirs)) = segments.split_last() else {
            return false;
        };
        dirs.iter().any(|d| self.dirs.iter().any(|m| m == d))
            || self.files.iter().any(|f| f == base)
            || self.prefixes.iter().any(|p| base.starts_with(p.as_str()))
    }
}

/// Whether `path` alters the test toolchain rather than the code (CONTRACT.md section 12.3), so
/// that a change to it is at least a scope hit: what a test runner imports or reads before the
/// tests (a root-level Python module shadows an installed one under `python3 -m`; `*.pth`,
/// `sitecustomize.py`, `usercustomize.py` and package metadata run or register code at start;
/// pytest's configuration files), and what builds or selects a Rust test binary (`build.rs`,
/// `Cargo.toml`, whose `[[test]]` entries can turn a test's harness off, `Cargo.lock`, which
/// picks the dependencies' code the tests run against (issue 50), `.cargo/`, `rust-toolchain*`,
/// `.config/nextest.toml`).
pub fn is_toolchain_file(path: &RepoPath) -> bool {
    let segments: Vec<&str> = path.segments().collect();
    let Some((base, dirs)) = segments.split_last() else {
        return false;
    };
    const FILES: [&str; 11] = [
        "sitecustomize.py",
        "usercustomize.py",
        "pytest.ini",
        ".pytest.ini",
        "tox.ini",
        "setup.cfg",
        "pyproject.toml",
        "conftest.py",
        "build.rs",
        "Cargo.toml",
        "Cargo.lock",
    ];
    let metadata = |s: &str| s.ends_with(".dist-info") || s.ends_with(".egg-info");
    (dirs.is_empty() && base.ends_with(".py"))
        || FILES.contains(base)
        || base.ends_with(".pth")
        || base.starts_with("rust-toolchain")
        || metadata(base)
        || dirs.iter().any(|d| metadata(d) || *d == ".cargo")
        || (dirs.last() == Some(&".config") && *base == "nextest.toml")
}

/// The plan for a diff: the tiers to run, in order, and the paths that hit the scope.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct Plan {
    pub plan: Vec<String>,
    pub scope_hits: Vec<String>,
}

/// A scope hit sends the patch straight to the fixture tier: the properties' oracle may have
/// moved with the code. The scope tier routes; it never catches.
pub fn plan(files: &[RepoPath], markers: &ScopeMarkers, tiers: &[(String, bool)]) -> Plan {
    let scope_hits: Vec<String> = files
        .iter()
        .filter(|f| markers.is_scope_hit(f))
        .map(|f| f.as_str().to_owned())
        .collect();
    let hit = !scope_hits.is_empty();
    let plan = tiers
        .iter()
        .filter(|(_, skip_on_hit)| !(hit && *skip_on_hit))
        .map(|(n, _)| n.clone())
        .collect();
    Plan { plan, scope_hits }
}

/// The article's tiers: (name, skipped on a scope hit).
pub fn default_tiers() -> Vec<(String, bool)> {
    vec![(T1.to_owned(), true), (T2.to_owned(), false)]
}

#[cfg(test)]
mod tests {
    use super::*;

    /// CONTRACT.md section 12.3's list, by hand: each a toolchain file, and its near misses not.
    #[test]
    fn toolchain_files_are_the_contracts() {
        let path = |p: &str| RepoPath::parse(p).unwrap_or_else(|e| panic!("{p}: {e}"));
        for p in [
            "pytest.py",
            "hypothesis.py",
            "setup.py",
            "site.pth",
            "lib/evil.pth",
            "sitecustomize.py",
            "src/usercustomize.py",
            "pytest.ini",
            ".pytest.ini",
            "pkg/tox.ini",
            "setup.cfg",
            "pyproject.toml",
            "evil-1.0.dist-info/entry_points.txt",
            "src/evil.egg-info/PKG-INFO",
            "build.rs",
            "crates/a/build.rs",
            ".cargo/config.toml",
            "rust-toolchain",
            "rust-toolchain.toml",
            ".config/nextest.toml",
            // Its `[[test]]` entries can turn a test's harness off (issue 25).
            "Cargo.toml",
            "crates/a/Cargo.toml",
            // Which versions of the dependencies build (issue 50): a dependency's code.
            "Cargo.lock",
        ] {
            assert!(is_toolchain_file(&path(p)), "{p}");
        }
        for p in [
            "shop/pricing.py",
            "src/lib.rs",
            "Cargo.lock.md",
            "docs/setup.md",
            "config/nextest.toml",
            "pathfinder.py.txt",
            "src/build.rs.md",
        ] {
            assert!(!is_toolchain_file(&path(p)), "{p}");
        }
    }
}
