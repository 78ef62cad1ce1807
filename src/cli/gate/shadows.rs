//! Modules that shadow the test toolchain (CONTRACT.md section 12.3): a changed module under a
//! test `pythonpath` directory (pytest puts those first on `sys.path`) named like a standard
//! module or an installed one — `src/hypothesis/` in front of the real hypothesis. A root-level
//! module is already a toolchain file by its path; these need the tree's pytest configuration
//! and the Python the runs use, so the runner finds them and reports them as facts.

use crate::cli::runner::{Outcome, Place, Run};
use std::collections::HashSet;
use std::path::Path;

use crate::cli::sandbox::Room;

/// Lists every top-level module the runs' Python could import, `-I` (isolated: no working
/// directory, no user site, no `PYTHON*` variables), one per line.
const LIST_MODULES: &str = include_str!("programs/list_modules.py");

/// The changed files that shadow a module of the test toolchain, as repository paths. The
/// project's own package is never its shadow (issue 64): a top-level module the base already
/// defines at the same place (`src/attr/` in the base, a patch changing `src/attr/_make.py`) is
/// the code under test, whatever else the interpreter has installed (attrs is installed beside
/// many tools); only a module the patch brings in front of an installed one is a shadow.
pub fn shadows(room: &Room, base: &str, changed: &[String]) -> Vec<String> {
    let dirs = pythonpath_dirs(&room.tree);
    let candidates: Vec<(&String, String)> = changed
        .iter()
        .filter_map(|file| {
            let (dir, module) = module_under(file, &dirs)?;
            (!own_module(base, &dir, &module)).then_some((file, module))
        })
        .collect();
    if candidates.is_empty() {
        return Vec::new();
    }
    let installed = installed_modules(room);
    candidates
        .into_iter()
        .filter(|(_, module)| installed.contains(module))
        .map(|(file, _)| file.clone())
        .collect()
}

/// Whether the base commit defines the top-level module `module` under `dir` already (a
/// package directory, or a module file): the project's own code, never a shadow. A base git
/// cannot be asked about counts as no: the file stays a candidate (fails closed).
fn own_module(base: &str, dir: &str, module: &str) -> bool {
    [
        format!("{base}:{dir}/{module}/"),
        format!("{base}:{dir}/{module}.py"),
    ]
    .iter()
    .any(|spec| crate::cli::git::object_exists(spec.trim_end_matches('/')).unwrap_or(false))
}

/// The `pythonpath` directory and the top-level module a changed file defines under it
/// (`src/json.py` → `json`, `src/hypothesis/core.py` → `hypothesis`), if any.
fn module_under(file: &str, dirs: &[String]) -> Option<(String, String)> {
    dirs.iter().find_map(|dir| {
        let rest = file.strip_prefix(dir.as_str())?.strip_prefix('/')?;
        let (first, deeper) = match rest.split_once('/') {
            Some((first, _)) => (first, true),
            None => (rest, false),
        };
        let name = if deeper {
            first
        } else {
            first.strip_suffix(".py").or_else(|| {
                first
                    .split_once('.')
                    .map(|(n, _)| n)
                    .filter(|_| first.ends_with(".so"))
            })?
        };
        (!name.is_empty()).then(|| (dir.clone(), name.to_owned()))
    })
}

/// The `pythonpath` directories pytest's configuration files in the tree name (all of them:
/// whichever pytest reads, a shadow there is caught), normalised, the root left out (a
/// root-level module is a toolchain file already).
fn pythonpath_dirs(tree: &Path) -> Vec<String> {
    let mut dirs: Vec<String> = Vec::new();
    for (file, section) in [
        ("pytest.ini", "pytest"),
        (".pytest.ini", "pytest"),
        ("tox.ini", "pytest"),
        ("setup.cfg", "tool:pytest"),
    ] {
        if let Ok(text) = std::fs::read_to_string(tree.join(file)) {
            dirs.extend(ini_values(&text, section, "pythonpath"));
        }
    }
    if let Ok(text) = std::fs::read_to_string(tree.join("pyproject.toml"))
        && let Ok(doc) = toml::from_str::<crate::cli::documents::Pyproject>(&text)
        && let Some(value) = doc.tool.pytest.ini_options.pythonpath
    {
        dirs.extend(value.dirs());
    }
    let mut seen = HashSet::new();
    dirs.into_iter()
        .filter_map(|d| {
            let d = d.trim_start_matches("./").trim_end_matches('/').to_owned();
            crate::core::path::RepoPath::parse(&d).ok()?;
            (d != "." && seen.insert(d.clone())).then_some(d)
        })
        .collect()
}

/// The whitespace-separated values of `key` in `[section]` of an INI file, continuation lines
/// included (as pytest reads `pythonpath = src\n    lib`).
fn ini_values(text: &str, section: &str, key: &str) -> Vec<String> {
    let mut values = Vec::new();
    let (mut in_section, mut in_key) = (false, false);
    for line in text.lines() {
        let trimmed = line.trim();
        if trimmed.starts_with('[') {
            in_section = trimmed == format!("[{section}]");
            in_key = false;
            continue;
        }
        if !in_section || trimmed.is_empty() || trimmed.starts_with(['#', ';']) {
            continue;
        }
        if line.starts_with([' ', '\t']) && in_key {
            values.extend(trimmed.split_whitespace().map(str::to_owned));
            continue;
        }
        in_key = false;
        if let Some((k, v)) = trimmed.split_once(['=', ':'])
            && k.trim() == key
        {
            in_key = true;
            values.extend(v.split_whitespace().map(str::to_owned));
        }
    }
    values
}

/// How long listing the installed modules may take, and how much of the list is read.
const LIST_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(60);
const MAX_LISTED_BYTES: u64 = 4 << 20;

/// Every module the runs' `python3` could import from outside the tree, asked in the room (the
/// same sandbox and environment as the runs). Empty when there is no such Python.
fn installed_modules(room: &Room) -> HashSet<String> {
    use std::io::{Read, Seek};
    let argv = ["python3", "-I", "-c", LIST_MODULES].map(str::to_owned);
    let Ok(mut listed) = tempfile::tempfile() else {
        return HashSet::new();
    };
    let ran = Run::new("installed modules", &argv, LIST_TIMEOUT, Place::Room(room))
        .quiet()
        .output_to(&listed)
        .start()
        .and_then(Outcome::ran);
    let mut text = Vec::new();
    match ran {
        Ok(ran)
            if ran.run == Some(0)
                && listed.rewind().is_ok()
                && (&mut listed)
                    .take(MAX_LISTED_BYTES)
                    .read_to_end(&mut text)
                    .is_ok() =>
        {
            // Names only: a line the interpreter said on stderr is none.
            String::from_utf8_lossy(&text)
                .lines()
                .filter(|l| !l.is_empty() && l.chars().all(|c| c.is_alphanumeric() || c == '_'))
                .map(str::to_owned)
                .collect()
        }
        _ => HashSet::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_module_under_a_pythonpath_directory_is_named_by_its_first_segment() {
        let dirs = vec!["src".to_owned(), "lib/py".to_owned()];
        for (file, module) in [
            ("src/json.py", Some("json")),
            ("src/hypothesis/__init__.py", Some("hypothesis")),
            ("lib/py/_pytest/main.py", Some("_pytest")),
            ("src/fast.cpython-311-x86_64-linux-gnu.so", Some("fast")),
            ("src/readme.md", None),
            ("srcx/json.py", None),
            ("json.py", None),
        ] {
            assert_eq!(
                module_under(file, &dirs).map(|(_, m)| m).as_deref(),
                module,
                "{file}"
            );
        }
    }

    #[test]
    fn pythonpath_is_read_as_pytest_reads_it() {
        let ini = "[metadata]\npythonpath = nope\n[pytest]\naddopts = -q\npythonpath = src\n    lib\n[other]\nx = 1\n";
        assert_eq!(ini_values(ini, "pytest", "pythonpath"), ["src", "lib"]);
        let tree = tempfile::tempdir().unwrap();
        std::fs::write(
            tree.path().join("pyproject.toml"),
            "[tool.pytest.ini_options]\npythonpath = [\"src\", \"./lib/\", \".\"]\n",
        )
        .unwrap();
        std::fs::write(
            tree.path().join("setup.cfg"),
            "[tool:pytest]\npythonpath = src\n",
        )
        .unwrap();
        assert_eq!(pythonpath_dirs(tree.path()), ["src", "lib"]);
    }
}
