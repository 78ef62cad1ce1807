//! Package manifests read by their tables (issue 50): a change to `pyproject.toml` or
//! `Cargo.toml` that touches only what describes the package (its version, description,
//! authors, links...) is no scope hit; one that changes how it builds or tests (dependencies,
//! features, profiles, `[patch]`, build settings, test tool configuration, anything else) still
//! is. Fail closed: a key not on the list below, a file that does not parse, one added or
//! deleted, is a change to how the package builds.

use super::super::error::CliError;
use super::super::git::blobs;

/// The keys of `pyproject.toml` that only describe the package (dotted table paths; a key
/// named here may change in any way, with everything under it).
const PYPROJECT: [&str; 18] = [
    "project.version",
    "project.description",
    "project.readme",
    "project.authors",
    "project.maintainers",
    "project.keywords",
    "project.classifiers",
    "project.urls",
    "project.license",
    "project.license-files",
    "tool.black",
    "tool.ruff",
    "tool.isort",
    "tool.mypy",
    "tool.pyright",
    "tool.codespell",
    "tool.towncrier",
    "tool.bumpversion",
];

/// The keys of `Cargo.toml` that only describe the package (the same for `workspace.package`).
const CARGO: [&str; 16] = [
    "package.version",
    "package.description",
    "package.documentation",
    "package.homepage",
    "package.repository",
    "package.readme",
    "package.keywords",
    "package.categories",
    "package.authors",
    "package.license",
    "package.license-file",
    "package.metadata",
    "workspace.package.version",
    "workspace.package.authors",
    "workspace.package.description",
    "badges",
];

/// Which of the `changed` manifests changed only what describes the package, between `base`
/// and the judged `tree`.
pub(super) fn metadata_only(
    base: &str,
    tree: &str,
    changed: &[String],
) -> Result<Vec<String>, CliError> {
    let manifests: Vec<&str> = changed
        .iter()
        .map(String::as_str)
        .filter(|f| allowed_keys(f).is_some())
        .collect();
    if manifests.is_empty() {
        return Ok(Vec::new());
    }
    let before = blobs(base, &manifests, 1 << 20)?;
    let after = blobs(tree, &manifests, 1 << 20)?;
    Ok(manifests
        .iter()
        .zip(before.into_iter().zip(after))
        .filter(|(file, (b, a))| match (b, a, allowed_keys(file)) {
            (Some(b), Some(a), Some(keys)) => only_described(b, a, keys),
            _ => false,
        })
        .map(|(f, _)| (*f).to_owned())
        .collect())
}

/// The describing keys of a manifest by its name, or `None` for any other file.
fn allowed_keys(path: &str) -> Option<&'static [&'static str]> {
    match path.rsplit('/').next() {
        Some("pyproject.toml") => Some(&PYPROJECT),
        Some("Cargo.toml") => Some(&CARGO),
        _ => None,
    }
}

/// Whether `before` and `after` parse and are equal once every describing key is removed.
fn only_described(before: &[u8], after: &[u8], keys: &[&str]) -> bool {
    let read = |bytes: &[u8]| -> Option<toml::Table> {
        let mut table: toml::Table = std::str::from_utf8(bytes).ok()?.parse().ok()?;
        for key in keys {
            remove(&mut table, key);
        }
        Some(table)
    };
    match (read(before), read(after)) {
        (Some(b), Some(a)) => b == a,
        _ => false,
    }
}

/// Removes the dotted `key` from `table`, if it is there.
fn remove(table: &mut toml::Table, key: &str) {
    match key.split_once('.') {
        None => {
            table.remove(key);
        }
        Some((head, rest)) => {
            if let Some(toml::Value::Table(inner)) = table.get_mut(head) {
                remove(inner, rest);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Written from the issue: a version, description or link is no scope hit; dependencies,
    /// features, profiles, `[patch]`, pytest's configuration, an unknown key or a file that
    /// does not parse are.
    #[test]
    fn a_manifest_is_read_by_its_tables() {
        let py = "[project]\nname = \"shop\"\nversion = \"1.0\"\ndependencies = [\"attrs\"]\n\n[tool.pytest.ini_options]\naddopts = \"-q\"\n";
        let cargo = "[package]\nname = \"c\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[dependencies]\nfnv = \"1\"\n\n[profile.test]\nopt-level = 0\n";
        let rows: [(&str, &str, &str, bool); 11] = [
            (PY_FILE, py, &py.replace("1.0", "1.1"), true),
            (PY_FILE, py, &py.replace("version = \"1.0\"", "version = \"1.0\"\ndescription = \"a shop\"\nkeywords = [\"x\"]"), true),
            (PY_FILE, py, &format!("{py}\n[tool.ruff]\nline-length = 100\n"), true),
            (PY_FILE, py, &py.replace("\"attrs\"", "\"attrs>=23\""), false),
            (PY_FILE, py, &py.replace("-q", "--collect-only"), false),
            (PY_FILE, py, &format!("{py}\n[tool.setuptools]\npackages = []\n"), false),
            (PY_FILE, py, "[project\n", false),
            (CARGO_FILE, cargo, &cargo.replace("0.1.0", "0.2.0"), true),
            (CARGO_FILE, cargo, &cargo.replace("edition = \"2021\"", "edition = \"2021\"\nrepository = \"https://x\"\n[package.metadata.docs.rs]\nall-features = true"), true),
            (CARGO_FILE, cargo, &cargo.replace("opt-level = 0", "opt-level = 3"), false),
            (CARGO_FILE, cargo, &format!("{cargo}\n[patch.crates-io]\nfnv = {{ path = \"../fnv\" }}\n"), false),
        ];
        for (which, before, after, described) in rows {
            let keys = allowed_keys(which).unwrap();
            assert_eq!(
                only_described(before.as_bytes(), after.as_bytes(), keys),
                described,
                "{which}: {after}"
            );
        }
    }
    const PY_FILE: &str = "pyproject.toml";
    const CARGO_FILE: &str = "Cargo.toml";
}
