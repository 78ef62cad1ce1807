//! `patchgate init`: writes the commented starter config and its canary. The starters are
//! files of their own (`src/cli/starters/`), held equal to `docs/reference/config.md` by a test.

use std::io::Write;
use std::path::{Path, PathBuf};

use clap::Args;

use super::config::{CANARY_PY, CANARY_RS, CATALOG, CONFIG_FILE, STARTER, STARTER_RUST};
use super::error::{CliError, CliResult};
use super::output;
use crate::exit::Exit;

#[derive(Debug, Args)]
pub struct InitArgs {
    /// Where to write the starter config.
    #[arg(default_value = CONFIG_FILE)]
    pub path: PathBuf,
    /// Overwrite an existing file.
    #[arg(long)]
    pub force: bool,
    /// Start with `require_admission = true`: a strong property votes only with its
    /// two-commit proof (`patchgate admit`). Off by default.
    #[arg(long)]
    pub require_admission: bool,
    /// The starter for a Rust repository (cargo test, its build step, libtest's JUnit
    /// receipts) and its canary `tests/patchgate_canary.rs`, instead of pytest's.
    #[arg(long)]
    pub rust: bool,
}

/// `patchgate init`: writes the commented starter config.
pub fn init(args: InitArgs) -> CliResult {
    let mut options = std::fs::OpenOptions::new();
    options.write(true);
    if args.force {
        options.create(true).truncate(true);
    } else {
        options.create_new(true);
    }
    let mut file = options.open(&args.path).map_err(|e| {
        if e.kind() == std::io::ErrorKind::AlreadyExists {
            CliError::usage(format!(
                "{} exists; give --force to overwrite it",
                args.path.display()
            ))
        } else {
            CliError::software(format!("cannot write {}: {e}", args.path.display()))
        }
    })?;
    let (starter, canary_file, canary_text) = if args.rust {
        (STARTER_RUST, "tests/patchgate_canary.rs", CANARY_RS)
    } else {
        (STARTER, "properties/patchgate_canary.py", CANARY_PY)
    };
    let text = if args.require_admission {
        starter.replace("require_admission = false", "require_admission = true")
    } else {
        starter.to_owned()
    };
    file.write_all(text.as_bytes())
        .map_err(|e| CliError::software(format!("cannot write {}: {e}", args.path.display())))?;
    // The canary beside it (section 11.5), where the starter's `[canary]` runs it; an existing
    // one is kept unless `--force`.
    let canary = args
        .path
        .parent()
        .unwrap_or(Path::new(""))
        .join(canary_file);
    let wrote_canary = if canary.exists() && !args.force {
        false
    } else {
        if let Some(dir) = canary.parent() {
            std::fs::create_dir_all(dir)
                .map_err(|e| CliError::software(format!("cannot make {}: {e}", dir.display())))?;
        }
        std::fs::write(&canary, canary_text)
            .map_err(|e| CliError::software(format!("cannot write {}: {e}", canary.display())))?;
        true
    };
    let root = args.path.parent().unwrap_or(Path::new(""));
    let mut also = Vec::new();
    // The catalog the next step edits (issue 64), when there is none: never overwritten, a
    // team's catalog is its own.
    let catalog = root.join("catalog.yaml");
    if std::fs::symlink_metadata(&catalog).is_err() {
        std::fs::write(&catalog, CATALOG)
            .map_err(|e| CliError::software(format!("cannot write {}: {e}", catalog.display())))?;
        also.push((
            catalog,
            "the property catalog, empty: its comments say how to fill it",
        ));
    }
    if args.rust {
        if let Some(note) = autotests_off(root) {
            output::error(&note);
        }
    } else if let Some(init) = package_marker(root)? {
        also.push((init, "an empty package marker"));
    }
    output::error(&format!(
        "wrote {}{}{}: edit them, commit them to the base branch, then {}`patchgate census --write` (commit suite.census too) and `patchgate gate --base <branch> --dry-run`",
        args.path.display(),
        if wrote_canary {
            format!(" and the canary {}", canary.display())
        } else {
            String::new()
        },
        also.iter()
            .map(|(p, what)| format!(", {} ({what})", p.display()))
            .collect::<String>(),
        // Only a starter whose build keeps a cache has something to warm (the Python
        // starter's byte-compiling build keeps none: `warm` would exit 65).
        if args.rust {
            "`patchgate warm` (the build cache every room starts from), "
        } else {
            ""
        }
    ));
    Ok(Exit::Go)
}

/// `properties/__init__.py`, written empty when absent: with it, pytest's rootdir-based import
/// puts the repository root on `sys.path` under the starter's safe import path (`-P`), so the
/// canary and the properties can import a package at the root (CONTRACT.md 12.3; a `src/`
/// layout needs the package installed, or `pythonpath = src` in the pytest config).
fn package_marker(root: &Path) -> Result<Option<PathBuf>, CliError> {
    let marker = root.join("properties/__init__.py");
    if std::fs::symlink_metadata(&marker).is_ok() {
        return Ok(None);
    }
    std::fs::write(&marker, "")
        .map_err(|e| CliError::software(format!("cannot write {}: {e}", marker.display())))?;
    Ok(Some(marker))
}

/// What to add when the crate's `Cargo.toml` turns automatic test targets off
/// (`autotests = false`): the canary is then no test target, and the gate would blame the
/// patch for a canary that cannot run (`checker-neutered`). Cargo.toml is the user's to edit:
/// the lines are said, not written.
fn autotests_off(root: &Path) -> Option<String> {
    let text = std::fs::read_to_string(root.join("Cargo.toml")).ok()?;
    let manifest: super::documents::CargoManifest = toml::from_str(&text).ok()?;
    let off = manifest.package.and_then(|p| p.autotests) == Some(false);
    let declared = manifest
        .test
        .iter()
        .any(|t| t.name.as_deref() == Some("patchgate_canary"));
    (off && !declared).then(|| {
        "warning: Cargo.toml has `autotests = false`: tests/patchgate_canary.rs is no test target until it is declared. Add to Cargo.toml:\n\n[[test]]\nname = \"patchgate_canary\"\npath = \"tests/patchgate_canary.rs\"\n".to_owned()
    })
}
