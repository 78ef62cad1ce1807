//! What a run changed that it may not (CONTRACT.md section 11.3): the tracked files of the copy
//! by content against the judged tree, and anything added under a directory.

use std::path::Path;

use super::super::error::CliError;
use super::Room;

impl Room {
    /// The tracked files of the copy a run changed, deleted or changed the mode of, by
    /// content against the judged tree (CONTRACT.md section 11.3).
    pub fn changed_files(&self) -> Result<Vec<String>, CliError> {
        super::super::export::changed_since_export(&self.tracked, &self.tree)
    }

    /// Whether `dir` (a directory of the copy) holds anything but tracked files and
    /// directories: a file, link or other entry a run added. With no tracked file changed
    /// ([`Room::changed_files`]) and none added, what `dir` holds is what was judged, and
    /// its seal with it, without hashing it again. An unreadable entry counts as added.
    pub fn added_under(&self, dir: &str) -> bool {
        let top = self.tree.join(dir);
        let mut under = self
            .dirs
            .iter()
            .filter(|(d, _)| d.starts_with(&top))
            .peekable();
        if under.peek().is_some()
            && under
                .all(|(d, key)| super::super::export::StatKey::of(d).is_ok_and(|now| now == *key))
        {
            return false;
        }
        let tracked: std::collections::HashSet<&Path> =
            self.tracked.iter().map(|t| t.path.as_path()).collect();
        let mut pending = vec![self.tree.join(dir)];
        while let Some(d) = pending.pop() {
            let entries = match std::fs::read_dir(&d) {
                Ok(e) => e,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
                Err(_) => return true,
            };
            for entry in entries {
                let Ok(entry) = entry else { return true };
                let path = entry.path();
                match entry.file_type() {
                    Ok(t) if t.is_dir() => pending.push(path),
                    Ok(_) if tracked.contains(path.as_path()) => {}
                    _ => return true,
                }
            }
        }
        false
    }
}

/// Where the runs may write in the copy without a finding (CONTRACT.md section 11.3, as
/// docs/reference/config.md says it): the toolchains' own caches, whatever they hold, at the
/// tree's top — pytest's (`.pytest_cache`), Hypothesis's example database (`.hypothesis`),
/// cargo's `target` —, the build's cache directories and `[sandbox] scratch`, also whatever
/// they hold; and, anywhere, only what the toolchain writes there: `.pyc` files in a
/// `__pycache__`, `.txt` files in a `proptest-regressions`, a `Cargo.lock` beside a tracked
/// `Cargo.toml`. Anything else a run creates is a finding, whoever would load it.
pub const TOP_SCRATCH: [&str; 3] = [".pytest_cache", ".hypothesis", "target"];

/// At most this many entries are read looking for created files: past it the count is a
/// floor (a run that writes more than this outside scratch is a finding anyway).
const MOST_ENTRIES: u64 = 200_000;

/// What runs created outside scratch: the first 100 paths (sorted) and how many there were.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Created {
    pub files: Vec<String>,
    pub count: u64,
}

impl Room {
    /// Notes `path`, a file of the copy the runner itself wrote (a turned twin): not a run's.
    pub fn placed(&self, path: &Path) {
        self.placed
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .push(path.to_path_buf());
    }

    /// The files the runs so far created in the copy outside its scratch directories
    /// ([`TOP_SCRATCH`], `scratch`: directories relative to the tree's top). Only the
    /// directories whose `lstat` key changed since the copy was written are read, and the
    /// directories created since; an entry that cannot be read counts as created.
    pub fn created_files(&self, scratch: &[String]) -> Created {
        let (found, count) = self.walk_created(scratch);
        // Named as a path the facts can carry: a name too long or too deep is named by its
        // nearest ancestor that is one.
        let mut files: Vec<String> = found
            .iter()
            .filter_map(|p| p.strip_prefix(&self.tree).ok())
            .filter_map(|p| {
                p.ancestors()
                    .map(|a| a.to_string_lossy().into_owned())
                    .find(|a| crate::core::path::RepoPath::parse(a).is_ok())
            })
            .collect();
        files.sort();
        files.dedup();
        files.truncate(100);
        Created { files, count }
    }

    /// What the build step created outside scratch (an extension module built in place,
    /// `build/`): the built tree, the runner's own from now on ([`Room::placed`]) — but for a
    /// file the test toolchain reads (CONTRACT.md 12.3's list, as a patch that changes one is a
    /// scope hit: a `conftest.py`, an `.egg-info`, `.cargo/config.toml`), which stays a
    /// finding of the build's. How many were taken as built.
    pub fn accept_built(&self, scratch: &[String]) -> usize {
        let (found, _) = self.walk_created(scratch);
        let built: Vec<std::path::PathBuf> = found
            .into_iter()
            .filter(|p| {
                p.strip_prefix(&self.tree)
                    .ok()
                    .and_then(|r| crate::core::path::RepoPath::parse(&r.to_string_lossy()).ok())
                    .is_some_and(|r| !crate::core::ladder::is_toolchain_file(&r))
            })
            .collect();
        let n = built.len();
        self.placed
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .extend(built);
        n
    }

    /// Every entry created outside scratch (at most 100,000 named) and how many.
    fn walk_created(&self, scratch: &[String]) -> (Vec<std::path::PathBuf>, u64) {
        use std::collections::HashSet;
        let placed = self
            .placed
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone();
        let tracked: HashSet<&Path> = self
            .tracked
            .iter()
            .map(|t| t.path.as_path())
            .chain(placed.iter().map(std::path::PathBuf::as_path))
            .collect();
        let known: HashSet<&Path> = self.dirs.iter().map(|(d, _)| d.as_path()).collect();
        let free: Vec<std::path::PathBuf> = TOP_SCRATCH
            .iter()
            .map(|s| self.tree.join(s))
            .chain(
                scratch
                    .iter()
                    .map(|s| self.tree.join(s.trim_end_matches('/'))),
            )
            .collect();
        let is_free = |p: &Path| free.iter().any(|f| p.starts_with(f));
        let mut pending: Vec<std::path::PathBuf> = self
            .dirs
            .iter()
            .filter(|(d, key)| {
                !is_free(d) && super::super::export::StatKey::of(d).map_or(true, |now| now != *key)
            })
            .map(|(d, _)| d.clone())
            .collect();
        let mut found: Vec<std::path::PathBuf> = Vec::new();
        let mut count = 0u64;
        let mut read = 0u64;
        let mut note = |p: std::path::PathBuf, count: &mut u64| {
            *count += 1;
            if found.len() < 100_000 {
                found.push(p);
            }
        };
        while let Some(d) = pending.pop() {
            let entries = match std::fs::read_dir(&d) {
                Ok(e) => e,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
                Err(_) => {
                    note(d, &mut count);
                    continue;
                }
            };
            let cache = d
                .file_name()
                .and_then(|n| n.to_str())
                .and_then(|n| match n {
                    "__pycache__" => Some(".pyc"),
                    "proptest-regressions" => Some(".txt"),
                    _ => None,
                });
            for entry in entries {
                read += 1;
                if read > MOST_ENTRIES {
                    break;
                }
                let Ok(entry) = entry else {
                    note(d.clone(), &mut count);
                    continue;
                };
                let path = entry.path();
                if tracked.contains(path.as_path()) || is_free(&path) {
                    continue;
                }
                let name = entry.file_name();
                let name = name.to_str().unwrap_or("");
                match entry.file_type() {
                    Ok(t) if t.is_dir() => {
                        if !known.contains(path.as_path()) {
                            pending.push(path);
                        }
                    }
                    Ok(t) if t.is_file() && cache.is_some_and(|ext| name.ends_with(ext)) => {}
                    Ok(t)
                        if t.is_file()
                            && name == "Cargo.lock"
                            && tracked.contains(d.join("Cargo.toml").as_path()) => {}
                    _ => note(path, &mut count),
                }
            }
        }
        (found, count)
    }
}
