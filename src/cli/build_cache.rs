//! The build cache: what the build step wrote on a trusted commit (`[build] cache`, e.g.
//! cargo's `target`), kept in the repository's git directory and carried into every room, so
//! a patch's build compiles what the patch changed and nothing else.
//!
//! Only `patchgate warm` writes it, from a build of the commit it is given (the base branch);
//! a gate, an admission or a census only read it. A patch's build writing it would let the
//! patch plant artifacts that a later gate takes as fresh: the poisoning the rooms exist to
//! prevent. Every file of the tree it was built from has one fixed time
//! ([`super::export::source_time`]); a room that restores it gives the same time to every file
//! whose blob is the same there, and writes every other file now, so a build tool that
//! compares times (cargo) rebuilds what the judged tree changed and trusts the rest.
//!
//! Layout, under `<git common dir>/patchgate/build/`: `<tree id>/` per cache, holding the
//! configured directories; `current`, the tree id of the one in use. A cache directory is
//! complete before `current` names it and is never written again, so a room copies one
//! tree's build whatever a `warm` beside it does (a copy that loses a race is dropped).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Stdio;

use super::process::Invocation;

use super::error::CliError;
use super::export::TreeEntry;

/// A build cache found for a room: the tree it was built from and where its files are.
pub struct BuildCache {
    /// The tree id it was built from.
    pub tree: String,
    dir: PathBuf,
    /// The directories it holds (`[build] cache`), relative to the tree's root.
    dirs: Vec<String>,
    /// Its tree's files: path → (mode, blob id).
    files: HashMap<Vec<u8>, (u32, String)>,
}

impl BuildCache {
    /// The cache in use for `dirs` (`[build] cache`), if there is one and its tree is still
    /// in the repository; `None` otherwise (the room is built cold).
    pub fn find(dirs: &[String]) -> Option<BuildCache> {
        if dirs.is_empty() {
            return None;
        }
        let root = store_root().ok()?;
        let tree = std::fs::read_to_string(root.join("current")).ok()?;
        let tree = tree.trim();
        if tree.len() < 40 || !tree.bytes().all(|b| b.is_ascii_hexdigit()) {
            return None;
        }
        let dir = root.join(tree);
        if !dirs.iter().all(|d| dir.join(d).is_dir()) {
            return None;
        }
        let files = super::export::ls_tree(tree)
            .ok()?
            .into_iter()
            .map(|e| (e.path, (e.mode, e.oid)))
            .collect();
        Some(BuildCache {
            tree: tree.to_owned(),
            dir,
            dirs: dirs.to_vec(),
            files,
        })
    }

    /// Whether `entry` of the judged tree is the same file in the cache's tree (same path,
    /// mode and blob): given the cache's source time in the room.
    pub fn unchanged(&self, entry: &TreeEntry) -> bool {
        self.files
            .get(&entry.path)
            .is_some_and(|(mode, oid)| *mode == entry.mode && *oid == entry.oid)
    }

    /// Copies the cached directories into `tree` (a room's fresh copy); on failure, removes
    /// what was copied and says why. Not when the tree has anything at one of them (the
    /// tree's own files are what is judged).
    pub fn restore(&self, tree: &Path) -> Result<(), String> {
        if let Some(d) = self
            .dirs
            .iter()
            .find(|d| std::fs::symlink_metadata(tree.join(d)).is_ok())
        {
            return Err(format!("the tree itself has {d}"));
        }
        for d in &self.dirs {
            let to = tree.join(d);
            if let Err(why) = copy_keeping_times(&self.dir.join(d), &to) {
                for d in &self.dirs {
                    let _ = std::fs::remove_dir_all(tree.join(d));
                }
                return Err(why);
            }
        }
        Ok(())
    }
}

/// Where the caches are kept: `patchgate/build` in the repository's common git directory
/// (shared by its worktrees; never inside a room, never writable by a run).
fn store_root() -> Result<PathBuf, CliError> {
    Ok(super::git::state_dir()?.join("build"))
}

/// `cp -a --reflink=auto FROM TO`: times kept (the build tool's freshness depends on them).
pub fn copy_keeping_times(from: &Path, to: &Path) -> Result<(), String> {
    if let Some(parent) = to.parent() {
        std::fs::create_dir_all(parent)
            .map_err(|e| format!("cannot make {}: {e}", parent.display()))?;
    }
    let mut cp = Invocation::new("cp");
    cp.args(["-a", "--reflink=auto"]).arg(from).arg(to);
    let out = cp
        .command()
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("cannot run cp: {e}"))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(format!(
            "cp {} failed: {}",
            from.display(),
            String::from_utf8_lossy(&out.stderr).trim()
        ))
    }
}

/// Keeps `dirs` of `built` (a room's tree after a build of `tree` that succeeded) as the
/// cache in use: written beside the others, then named `current`; the caches of other trees
/// are removed. Returns where it is.
pub fn store(tree: &str, dirs: &[String], built: &Path) -> Result<PathBuf, CliError> {
    let root = store_root()?;
    let failed = |e: String| CliError::software(format!("cannot keep the build cache: {e}"));
    std::fs::create_dir_all(&root).map_err(|e| failed(format!("{}: {e}", root.display())))?;
    let staging = tempfile::Builder::new()
        .prefix(".new-")
        .tempdir_in(&root)
        .map_err(|e| failed(e.to_string()))?;
    for d in dirs {
        let from = built.join(d);
        if !from.is_dir() {
            return Err(CliError::data(format!(
                "the build wrote no directory {d} ([build] cache): nothing to keep"
            )));
        }
        copy_keeping_times(&from, &staging.path().join(d)).map_err(failed)?;
    }
    let dir = root.join(tree);
    if dir.exists() {
        // A cache of the same tree, replaced: moved aside first (a room copying it keeps a
        // complete one or fails its copy and builds cold).
        let old = root.join(format!(".old-{tree}-{}", std::process::id()));
        std::fs::rename(&dir, &old).map_err(|e| failed(e.to_string()))?;
    }
    std::fs::rename(staging.keep(), &dir).map_err(|e| failed(e.to_string()))?;
    let current = root.join(format!(".current-{}", std::process::id()));
    std::fs::write(&current, format!("{tree}\n")).map_err(|e| failed(e.to_string()))?;
    std::fs::rename(&current, root.join("current")).map_err(|e| failed(e.to_string()))?;
    // Every other cache (and what a failed store left) is no longer used.
    if let Ok(entries) = std::fs::read_dir(&root) {
        for e in entries.flatten() {
            let name = e.file_name();
            if name != "current" && name.to_string_lossy() != tree {
                let _ = std::fs::remove_dir_all(e.path());
            }
        }
    }
    Ok(dir)
}
