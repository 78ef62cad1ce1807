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
        .filter(|f| markers.is_test_adjacent(f))
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
