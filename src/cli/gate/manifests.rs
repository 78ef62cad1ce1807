//! Package manifests read by their tables (issue 50): a change to `pyproject.toml`,
//! `Cargo.toml` or `package.json` that touches only what describes the package (its version,
//! description, authors, links...) is no scope hit; one that changes how it builds or tests
//! (dependencies, features, profiles, `[patch]`, scripts, build settings, test tool
//! configuration, anything else) still is. A version bump is described too wherever it is
//! written (issue 65): `setup.cfg`'s `version` or bumpversion's `current_version` line, a
//! module's `__version__ = "…"` string. Fail closed: a key not on the lists below, a file that
//! does not parse, one added or deleted, is a change to how the package builds or runs.

use super::super::error::CliError;
use super::super::git::blobs;

/// The keys of `pyproject.toml` that only describe the package (dotted table paths; a key
/// named here may change in any way, with everything under it).
/// The `tool.*` tables named are linters, formatters, type checkers and the tools that write
/// documentation, changelogs and sponsor lists: none of them runs in the gate's runs, and
/// none is read by the package's own code (a `tool.*` table not named here may be).
const PYPROJECT: [&str; 29] = [
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
    "tool.sponcon",
    "tool.pylint",
    "tool.pydocstyle",
    "tool.docformatter",
    "tool.interrogate",
    "tool.typos",
    "tool.yapf",
    "tool.check-manifest",
    "tool.commitizen",
    "tool.basedpyright",
    "tool.ty",
];

/// The keys of `Cargo.toml` that only describe the package (the same for `workspace.package`),
/// and the library's settings only `cargo doc` reads.
const CARGO: [&str; 18] = [
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
    "lib.doc",
    "lib.doc-scrape-examples",
];

/// The keys of `package.json` that only describe the package (not `scripts`, `main`,
/// `exports`, dependencies, `type`, engines: they change what runs).
const PACKAGE_JSON: [&str; 10] = [
    "version",
    "description",
    "keywords",
    "homepage",
    "bugs",
    "repository",
    "author",
    "contributors",
    "license",
    "funding",
];

/// How a changed file may be read as only describing the package.
#[derive(Clone, Copy)]
enum Described {
    Toml(&'static [&'static str]),
    Json(&'static [&'static str]),
    /// `setup.cfg`: only a version line changed.
    Cfg,
    /// A Python module: only its `__version__` string changed, or (a file of the toolchain:
    /// `conftest.py`, `setup.py`) only its comments.
    Module,
    /// A Rust file of the toolchain (a `build.rs`): only its plain comments changed.
    Comments,
}

/// Which of the `changed` manifests (and modules) changed only what describes the package,
/// between `base` and the judged `tree`.
pub(super) fn metadata_only(
    base: &str,
    tree: &str,
    changed: &[String],
) -> Result<Vec<String>, CliError> {
    let manifests: Vec<&str> = changed
        .iter()
        .map(String::as_str)
        .filter(|f| kind(f).is_some())
        .collect();
    if manifests.is_empty() {
        return Ok(Vec::new());
    }
    let before = blobs(base, &manifests, 1 << 20)?;
    let after = blobs(tree, &manifests, 1 << 20)?;
    Ok(manifests
        .iter()
        .zip(before.into_iter().zip(after))
        .filter(|(file, (b, a))| match (b, a, kind(file)) {
            (Some(b), Some(a), Some(kind)) => match kind {
                Described::Toml(keys) => only_described(b, a, keys),
                Described::Json(keys) => only_described_json(b, a, keys),
                Described::Cfg => only_version_lines(b, a),
                Described::Module => {
                    crate::cli::reading::arid::only_version(file, b, a)
                        || (toolchain(file) && crate::cli::reading::arid::only_comments(file, b, a))
                }
                Described::Comments => crate::cli::reading::arid::only_comments(file, b, a),
            },
            _ => false,
        })
        .map(|(f, _)| (*f).to_owned())
        .collect())
}

/// Whether `path` is a file of the build or test toolchain (`build.rs`, `conftest.py`, a
/// top-level `.py`): only there is a comment-only change a scope hit to spare; in the code
/// under test a comment changes nothing the properties would not pass on anyway.
fn toolchain(path: &str) -> bool {
    crate::core::path::RepoPath::parse(path)
        .is_ok_and(|p| crate::core::ladder::is_toolchain_file(&p))
}

/// How a file may only describe the package, by its name, or `None` for any other file.
fn kind(path: &str) -> Option<Described> {
    match path.rsplit('/').next()? {
        "pyproject.toml" => Some(Described::Toml(&PYPROJECT)),
        "Cargo.toml" => Some(Described::Toml(&CARGO)),
        "package.json" => Some(Described::Json(&PACKAGE_JSON)),
        "setup.cfg" => Some(Described::Cfg),
        b if b.ends_with(".py") => Some(Described::Module),
        b if b.ends_with(".rs") && toolchain(path) => Some(Described::Comments),
        _ => None,
    }
}

/// Whether `before` and `after` are JSON objects equal once every describing top-level key is
/// removed.
fn only_described_json(before: &[u8], after: &[u8], keys: &[&str]) -> bool {
    let read = |bytes: &[u8]| -> Option<serde_json::Map<String, serde_json::Value>> {
        let mut object = match serde_json::from_slice(bytes).ok()? {
            serde_json::Value::Object(o) => o,
            _ => return None,
        };
        for key in keys {
            object.remove(*key);
        }
        Some(object)
    };
    match (read(before), read(after)) {
        (Some(b), Some(a)) => b == a,
        _ => false,
    }
}

/// Whether `setup.cfg` changed only in version lines: the same lines but for `version = …`
/// under `[metadata]` and `current_version = …` under `[bumpversion]` (the key and the
/// section unchanged). Read by lines, not as configparser reads: a continuation line, another
/// key or section, a line added or removed is not a version bump.
fn only_version_lines(before: &[u8], after: &[u8]) -> bool {
    let (Ok(before), Ok(after)) = (std::str::from_utf8(before), std::str::from_utf8(after)) else {
        return false;
    };
    let (b, a): (Vec<&str>, Vec<&str>) = (before.lines().collect(), after.lines().collect());
    if b.len() != a.len() || before == after {
        return false;
    }
    let mut section = "";
    b.iter().zip(&a).all(|(x, y)| {
        if x.trim_start().starts_with('[') {
            section = x.trim();
        }
        let key = |l: &str| {
            l.split_once('=')
                .filter(|_| !l.starts_with([' ', '\t']))
                .map(|(k, _)| k.trim().to_owned())
        };
        x == y
            || match (key(x), key(y)) {
                (Some(k), Some(l)) if k == l => matches!(
                    (section, k.as_str()),
                    ("[metadata]", "version") | ("[bumpversion]", "current_version")
                ),
                _ => false,
            }
    })
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
                let was_empty = inner.is_empty();
                remove(inner, rest);
                // A table that held only described keys goes with them (`[lib]` that only
                // sets `doc-scrape-examples`); one that was empty as written stays.
                if inner.is_empty() && !was_empty {
                    table.remove(head);
                }
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
        let rows: [(&str, &str, &str, bool); 15] = [
            (PY_FILE, py, &py.replace("1.0", "1.1"), true),
            (PY_FILE, py, &py.replace("version = \"1.0\"", "version = \"1.0\"\ndescription = \"a shop\"\nkeywords = [\"x\"]"), true),
            (PY_FILE, py, &format!("{py}\n[tool.ruff]\nline-length = 100\n"), true),
            (
                PY_FILE,
                py,
                &format!("{py}\n[[tool.sponcon.sponsors]]\ntitle = \"L\"\nurl = \"https://l.example/\"\n"),
                true,
            ),
            // A table the package's own code may read: not description.
            (PY_FILE, py, &format!("{py}\n[tool.shop]\ncurrency = \"EUR\"\n"), false),
            (PY_FILE, py, &py.replace("\"attrs\"", "\"attrs>=23\""), false),
            (PY_FILE, py, &py.replace("-q", "--collect-only"), false),
            (PY_FILE, py, &format!("{py}\n[tool.setuptools]\npackages = []\n"), false),
            (PY_FILE, py, "[project\n", false),
            (CARGO_FILE, cargo, &cargo.replace("0.1.0", "0.2.0"), true),
            (CARGO_FILE, cargo, &cargo.replace("edition = \"2021\"", "edition = \"2021\"\nrepository = \"https://x\"\n[package.metadata.docs.rs]\nall-features = true"), true),
            (CARGO_FILE, cargo, &format!("{cargo}\n[lib]\ndoc-scrape-examples = false\n"), true),
            (CARGO_FILE, cargo, &format!("{cargo}\n[lib]\ndoctest = false\n"), false),
            (CARGO_FILE, cargo, &cargo.replace("opt-level = 0", "opt-level = 3"), false),
            (CARGO_FILE, cargo, &format!("{cargo}\n[patch.crates-io]\nfnv = {{ path = \"../fnv\" }}\n"), false),
        ];
        for (which, before, after, described) in rows {
            let Some(Described::Toml(keys)) = kind(which) else {
                panic!("{which}")
            };
            assert_eq!(
                only_described(before.as_bytes(), after.as_bytes(), keys),
                described,
                "{which}: {after}"
            );
        }
    }

    /// Written from issue 65: a version bump in `package.json` or `setup.cfg` describes the
    /// package; scripts, dependencies, another `setup.cfg` key or a moved line do not.
    #[test]
    fn a_version_bump_is_described_wherever_it_is_written() {
        let json = r#"{"name": "p", "version": "1.0.0", "scripts": {"test": "vitest"}, "dependencies": {"a": "1"}}"#;
        let cfg = "[metadata]\nname = p\nversion = 1.0\n\n[bumpversion]\ncurrent_version = 1.0\ncommit = True\n\n[tool:pytest]\naddopts = -q\n";
        let rows: [(&str, String, bool); 9] = [
            ("json", json.replace("1.0.0", "1.1.0"), true),
            (
                "json",
                json.replace("\"p\",", "\"p\", \"description\": \"x\","),
                true,
            ),
            (
                "json",
                json.replace("vitest", "vitest --passWithNoTests"),
                false,
            ),
            ("json", json.replace("\"1\"", "\"2\""), false),
            ("json", "[1]".to_owned(), false),
            ("cfg", cfg.replace("1.0", "1.1"), true),
            ("cfg", cfg.replace("commit = True", "commit = False"), false),
            ("cfg", cfg.replace("-q", "-q --co"), false),
            (
                "cfg",
                cfg.replace("version = 1.0\n\n", "version = 1.1\n"),
                false,
            ),
        ];
        for (which, after, described) in rows {
            let said = match which {
                "json" => only_described_json(json.as_bytes(), after.as_bytes(), &PACKAGE_JSON),
                _ => only_version_lines(cfg.as_bytes(), after.as_bytes()),
            };
            assert_eq!(said, described, "{which}: {after}");
        }
    }

    const PY_FILE: &str = "pyproject.toml";
    const CARGO_FILE: &str = "Cargo.toml";
}
