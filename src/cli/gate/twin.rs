//! The turned twins the gate runs (CONTRACT.md section 15.3): a property's own test file with
//! its assertions turned ([`crate::cli::rewriting::turned_twin`]), which must fail on the judged tree's
//! code, byte for byte, through the property engine and on the package's own values.
//! - The re-proof writes it in place of the admitted property's file in its copy and runs the
//!   property's own command: the code, the command and the environment are a plain property
//!   run's; only the check changed.
//! - The canary (`[canary] twin = true`) is the twin of an in-locality property drawn per
//!   gate, under a name drawn per gate, riding in each batched property run.

use std::path::{Path, PathBuf};

use super::super::error::CliError;
use super::super::git::blobs;
use super::gather::Gathered;
use crate::cli::rewriting::turned_twin::turned;

/// The most bytes of a property's test file that is turned.
const MAX_TWIN_SOURCE: usize = 4 << 20;

/// A name drawn for this gate from its seed (a Python identifier): `stem` and a few hex digits,
/// so no fixed name tells a twin from a property.
pub(super) fn drawn(seed: u64, stem: &str, salt: &str) -> String {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    (seed, salt).hash(&mut h);
    format!("{stem}_{:06x}", h.finish() & 0xff_ffff)
}

/// The Python test files of property `id`'s `source` in the catalog (a file named, or the
/// `.py` files of the judged tree under a directory named), sorted.
pub(super) fn python_sources(g: &Gathered, id: &str) -> Result<Vec<String>, CliError> {
    let named: Vec<String> = g
        .properties
        .iter()
        .find(|row| row.id == id)
        .map(|row| {
            row.source
                .iter()
                .map(|s| s.as_str().trim_end_matches('/').to_owned())
                .collect()
        })
        .unwrap_or_default();
    if named.is_empty() {
        return Ok(Vec::new());
    }
    let mut files: Vec<String> = super::super::export::ls_tree(&g.tree)?
        .into_iter()
        .filter(|e| e.mode & 0o170000 == 0o100000)
        .map(|e| String::from_utf8_lossy(&e.path).into_owned())
        .filter(|p| p.ends_with(".py"))
        .filter(|p| {
            named.iter().any(|n| {
                p == n
                    || p.strip_prefix(n.as_str())
                        .is_some_and(|r| r.starts_with('/'))
            })
        })
        .collect();
    files.sort();
    Ok(files)
}

/// A test file's path and its turned twin (`None`: no assertion to turn).
pub(super) type Twin = (String, Option<Vec<u8>>);

/// The turned twin of each of `files` as the judged tree has them, the helper named `helper`.
pub(super) fn twins(g: &Gathered, files: &[String], helper: &str) -> Result<Vec<Twin>, CliError> {
    let names: Vec<&str> = files.iter().map(String::as_str).collect();
    Ok(files
        .iter()
        .cloned()
        .zip(
            blobs(&g.tree, &names, MAX_TWIN_SOURCE)?
                .into_iter()
                .map(|raw| raw.and_then(|raw| turned(&raw, helper))),
        )
        .collect())
}

/// The lines a re-proof's twin gains when it uses hypothesis: a profile with every phase of
/// the loaded default but `shrink`, loaded before its tests are defined, so the first failing
/// example ends the run (a re-proof needs the failure, not its smallest form). Each name is
/// the gate's own; anything that fails leaves the twin as it was.
const DETECT_ONLY: &str = "try:\n    import hypothesis as _patchgate_h\n    _patchgate_h.settings.register_profile(\n        \"_patchgate_detect\",\n        _patchgate_h.settings.default,\n        phases=[p for p in _patchgate_h.settings.default.phases if p.name != \"shrink\"],\n    )\n    _patchgate_h.settings.load_profile(\"_patchgate_detect\")\nexcept Exception:\n    pass\n";

/// `twin` with [`DETECT_ONLY`] after its `from __future__` imports (which must come first),
/// when it names hypothesis; else as it is.
pub(crate) fn without_shrinking(twin: &[u8]) -> Vec<u8> {
    if !twin.windows(10).any(|w| w == b"hypothesis") {
        return twin.to_vec();
    }
    let lines: Vec<&[u8]> = twin.split_inclusive(|b| *b == b'\n').collect();
    // After the last line of the last `from __future__ import` statement (parenthesised ones
    // end at their `)`).
    let mut after = 0;
    let mut open = false;
    for (i, line) in lines.iter().enumerate() {
        if line.starts_with(b"from __future__ import") {
            open = line.contains(&b'(') && !line.contains(&b')');
            after = i + 1;
        } else if open {
            if line.contains(&b')') {
                open = false;
            }
            after = i + 1;
        }
    }
    let mut out = Vec::with_capacity(twin.len() + DETECT_ONLY.len() + 1);
    let (before, rest) = lines.split_at(after.min(lines.len()));
    before.iter().for_each(|l| out.extend_from_slice(l));
    if out.last().is_some_and(|b| *b != b'\n') {
        out.push(b'\n');
    }
    out.extend_from_slice(DETECT_ONLY.as_bytes());
    rest.iter().for_each(|l| out.extend_from_slice(l));
    out
}

/// Writes `twin` at `path` under `tree` (a room's copy), replacing what is there; never
/// through a link (a patch may have made the path one).
pub(crate) fn write_in(tree: &Path, path: &str, twin: &[u8]) -> Result<PathBuf, String> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let at = tree.join(path);
    let mut dir = tree.to_path_buf();
    let parts: Vec<_> = Path::new(path).components().collect();
    for part in parts.iter().take(parts.len().saturating_sub(1)) {
        dir.push(part);
        if !std::fs::symlink_metadata(&dir).is_ok_and(|m| m.is_dir()) {
            return Err(format!("{} is not a directory of the copy", dir.display()));
        }
    }
    let _ = std::fs::remove_file(&at);
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .custom_flags(libc::O_NOFOLLOW)
        .open(&at)
        .map_err(|e| format!("{}: {e}", at.display()))?;
    f.write_all(twin)
        .map_err(|e| format!("{}: {e}", at.display()))?;
    Ok(at)
}

/// The canary's twin for a batched property run (`[canary] twin = true`): the id it rides
/// under (drawn per gate), the file written for it, its cases' prefix in the run's receipt,
/// and the property it is the twin of.
pub(super) struct CanaryTwin {
    pub id: String,
    pub file: PathBuf,
    pub case: String,
    pub of: String,
}

impl Drop for CanaryTwin {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.file);
    }
}

/// Writes the canary's twin into the room's copy for the runs of `ids`: of the first property,
/// in an order the gate's seed draws, whose one source file (named like the file the batch
/// gives it) has an assertion to turn. `None` when none has (the canary then runs as its
/// command says).
pub(super) fn canary_twin(g: &Gathered, ids: &[String]) -> Result<Option<CanaryTwin>, CliError> {
    let p = &g.config.properties;
    let (Some(case), Some(seed)) = (
        p.case.as_deref(),
        g.facts.configured.as_ref().map(|c| c.seed),
    ) else {
        return Ok(None);
    };
    let Some(template) = p.command.iter().find(|a| a.contains("{ids}")) else {
        return Ok(None);
    };
    let mut order: Vec<&String> = ids.iter().collect();
    order.sort_by_key(|id| drawn(seed, "", id));
    for of in order {
        let sources = python_sources(g, of)?;
        // The file the batch names for this property must be its one source: the twin is
        // named, and found, the same way.
        let named = template.replace("{ids}", of);
        if sources.as_slice() != [named.clone()] {
            continue;
        }
        let helper = drawn(seed, "_check", "helper");
        let Some((_, Some(twin))) = twins(g, &sources, &helper)?.into_iter().next() else {
            continue;
        };
        let id = drawn(seed, of, "canary");
        let path = template.replace("{ids}", &id);
        // Written by the runner, readable by the room's uid; nothing else of the copy changes.
        let file = write_in(&g.room.tree, &path, &twin)
            .map_err(|why| CliError::software(format!("cannot write the canary's twin: {why}")))?;
        g.room.placed(&file);
        return Ok(Some(CanaryTwin {
            case: case.replace("{id}", &id),
            id,
            file,
            of: of.clone(),
        }));
    }
    Ok(None)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The detect-only lines go after the `from __future__` imports (a parenthesised one ends
    /// at its `)`), only into a file that names hypothesis (expectations written by hand).
    #[test]
    fn a_detect_only_twin_keeps_its_future_imports_first() {
        let plain = b"import pytest\n\ndef test_a():\n    assert 1 == 1\n";
        assert_eq!(without_shrinking(plain), plain.to_vec());
        let file = "\"\"\"Doc.\"\"\"\nfrom __future__ import annotations\nfrom __future__ import (\n    division,\n)\nfrom hypothesis import given\n";
        let want = format!(
            "\"\"\"Doc.\"\"\"\nfrom __future__ import annotations\nfrom __future__ import (\n    division,\n)\n{DETECT_ONLY}from hypothesis import given\n"
        );
        assert_eq!(
            String::from_utf8(without_shrinking(file.as_bytes())).unwrap(),
            want
        );
        let bare = "from hypothesis import given\n";
        assert_eq!(
            String::from_utf8(without_shrinking(bare.as_bytes())).unwrap(),
            format!("{DETECT_ONLY}{bare}")
        );
    }
}
