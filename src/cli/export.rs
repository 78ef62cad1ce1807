//! The judged tree written out of git's objects into a room ([`export_tree`]), and the
//! after-run integrity snapshot of what was written ([`Tracked`], [`changed_since_export`]):
//! what a run may not change (CONTRACT.md section 11.3). Not git plumbing: git is asked
//! through [`super::git`].

use std::path::Path;

use super::error::CliError;
use super::git::{Fed, git, git_command};

/// The modification time of every file a build cache was built from, and of the same files
/// in every room that uses it (2001-09-09): older than any build, so a build tool that
/// compares times (cargo) finds what it built from them fresh, and anything written now
/// (a file the patch changed) newer.
pub fn source_time() -> std::time::SystemTime {
    std::time::SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(1_000_000_000)
}

/// One entry of a tree, every level down (`git ls-tree -r`).
pub struct TreeEntry {
    pub mode: u32,
    pub oid: String,
    pub path: Vec<u8>,
}

/// Every entry of `tree` (files, links, submodules), each path checked to stay inside the
/// tree: no empty, `.` or `..` part, no `.git`.
pub fn ls_tree(tree: &str) -> Result<Vec<TreeEntry>, CliError> {
    let malformed = |path: &[u8], why: &str| {
        CliError::data(format!(
            "the tree {tree} cannot be exported: {:?} {why}",
            String::from_utf8_lossy(path)
        ))
    };
    let listing = git(&["ls-tree", "-r", "-z", "--full-tree", tree])?;
    let mut entries = Vec::new();
    for record in listing.split(|b| *b == 0).filter(|r| !r.is_empty()) {
        // `<mode> SP <type> SP <object> TAB <path>`
        let tab = record
            .iter()
            .position(|b| *b == b'\t')
            .ok_or_else(|| malformed(record, "is not an ls-tree line"))?;
        let (meta, path) = record.split_at(tab);
        let (meta, path) = (
            String::from_utf8_lossy(meta),
            path.get(1..).unwrap_or_default(),
        );
        let mut fields = meta.split(' ');
        let (Some(mode), Some(_kind), Some(oid)) = (fields.next(), fields.next(), fields.next())
        else {
            return Err(malformed(record, "is not an ls-tree line"));
        };
        let mode = u32::from_str_radix(mode, 8).map_err(|_| malformed(path, "has no mode"))?;
        let safe = path.split(|b| *b == b'/').all(|part| {
            !part.is_empty() && part != b"." && part != b".." && !part.eq_ignore_ascii_case(b".git")
        });
        if !safe {
            return Err(malformed(path, "is not a path inside the tree"));
        }
        entries.push(TreeEntry {
            mode,
            oid: oid.to_owned(),
            path: path.to_vec(),
        });
    }
    Ok(entries)
}

/// Writes the files of `tree` into the directory `dest`, byte for byte from git's objects:
/// `ls-tree` names them, one `cat-file --batch` streams them. Neither the worktree nor its
/// index is read, and no attribute, filter or conversion applies: a `.git/info/attributes`
/// plus a smudge filter planted in the repository (by an earlier, unconfined run) would
/// otherwise run its command and rewrite files as they are exported. Symbolic links are
/// written as links (they point wherever they point: the copy is read through them by the
/// runs only); a path that would pass through one, leave `dest` or name `.git` is refused.
/// A file `aged` names gets [`source_time`] as its modification time (the build cache's
/// sources); every other one is written now.
pub fn export_tree(
    tree: &str,
    dest: &Path,
    aged: Option<&dyn Fn(&TreeEntry) -> bool>,
) -> Result<Vec<Tracked>, CliError> {
    use std::collections::HashSet;
    use std::io::{BufRead, BufReader, Read, Write};
    use std::os::unix::ffi::OsStrExt;
    use std::os::unix::fs::{OpenOptionsExt, symlink};

    let malformed = |path: &[u8], why: &str| {
        CliError::data(format!(
            "the tree {tree} cannot be exported: {:?} {why}",
            String::from_utf8_lossy(path)
        ))
    };
    let entries = ls_tree(tree)?;
    // Submodules (mode 160000) are commits, not blobs: an empty directory stands for each.
    let blobs: Vec<String> = entries
        .iter()
        .filter(|e| e.mode != 0o160000)
        .map(|e| e.oid.clone())
        .collect();
    let ids: Vec<u8> = blobs
        .iter()
        .flat_map(|oid| oid.bytes().chain([b'\n']))
        .collect();
    let mut fed = Fed::start(git_command().args(["cat-file", "--batch"]), ids)
        .map_err(|e| CliError::data(format!("cannot run git: {e}")))?;
    let failed = |e: std::io::Error| CliError::software(format!("cannot export {tree}: {e}"));
    let mut out = BufReader::with_capacity(1 << 16, fed.stdout().map_err(failed)?);
    let mut links: HashSet<Vec<u8>> = HashSet::new();
    let mut content = Vec::new();
    let mut tracked = Vec::with_capacity(entries.len());
    // The directory made last: entries come sorted, so most share it.
    let mut made: Option<std::path::PathBuf> = None;
    for entry in &entries {
        // No entry may pass through a symbolic link the tree holds.
        for (i, b) in entry.path.iter().enumerate() {
            if *b == b'/' && links.contains(entry.path.get(..i).unwrap_or_default()) {
                return Err(malformed(&entry.path, "passes through a symbolic link"));
            }
        }
        let target = dest.join(std::ffi::OsStr::from_bytes(&entry.path));
        if let Some(parent) = target.parent()
            && made.as_deref() != Some(parent)
        {
            std::fs::create_dir_all(parent).map_err(failed)?;
            made = Some(parent.to_path_buf());
        }
        if entry.mode == 0o160000 {
            std::fs::create_dir_all(&target).map_err(failed)?;
            continue;
        }
        let mut header = String::new();
        out.read_line(&mut header).map_err(failed)?;
        // `<oid> blob <size>`
        let size: usize = header
            .trim_end()
            .rsplit(' ')
            .next()
            .and_then(|s| s.parse().ok())
            .filter(|_| header.contains(" blob "))
            .ok_or_else(|| malformed(&entry.path, &format!("is not a blob ({})", header.trim())))?;
        content.clear();
        content.resize(size + 1, 0);
        out.read_exact(&mut content).map_err(failed)?;
        content.truncate(size);
        let (kind, stat) = if entry.mode == 0o120000 {
            symlink(std::ffi::OsStr::from_bytes(&content), &target).map_err(failed)?;
            links.insert(entry.path.clone());
            let stat = StatKey::of(&target).map_err(failed)?;
            (TrackedKind::Link(content.clone()), stat)
        } else {
            let executable = entry.mode & 0o111 != 0;
            let stat = std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .mode(if executable { 0o755 } else { 0o644 })
                .custom_flags(libc::O_NOFOLLOW)
                .open(&target)
                .and_then(|mut f| {
                    f.write_all(&content)?;
                    if aged.is_some_and(|aged| aged(entry)) {
                        f.set_modified(source_time())?;
                    }
                    // Its key as written (the file as `lstat` will see it: opened
                    // `O_NOFOLLOW`, so not through a link).
                    f.metadata().map(|m| StatKey::from_metadata(&m))
                })
                .map_err(failed)?;
            (TrackedKind::File { executable }, stat)
        };
        tracked.push(Tracked {
            path: target,
            oid: entry.oid.clone(),
            kind,
            stat,
        });
    }
    drop(out);
    let (done, _) = fed.finish().map_err(failed)?;
    if !done.status.success() {
        return Err(CliError::data(format!(
            "git cat-file could not read {tree}"
        )));
    }
    Ok(tracked)
}

/// A file [`export_tree`] wrote, as it wrote it: what a run may not change (CONTRACT.md
/// section 11.3).
pub struct Tracked {
    pub path: std::path::PathBuf,
    /// Its blob id in the judged tree.
    pub oid: String,
    pub kind: TrackedKind,
    pub stat: StatKey,
}

impl Tracked {
    /// The same file in a copy of the tree made at `to` from `from` (its `lstat` key still
    /// the original's: take it again with [`Tracked::restat`]).
    pub fn moved(&self, from: &Path, to: &Path) -> Tracked {
        Tracked {
            path: to.join(self.path.strip_prefix(from).unwrap_or(&self.path)),
            oid: self.oid.clone(),
            kind: match &self.kind {
                TrackedKind::File { executable } => TrackedKind::File {
                    executable: *executable,
                },
                TrackedKind::Link(target) => TrackedKind::Link(target.clone()),
            },
            stat: self.stat,
        }
    }

    /// Takes every file's `lstat` key again (in a copy just made of files checked unchanged).
    /// A file gone keeps its key, and is found changed.
    pub fn restat(tracked: &mut [Tracked]) {
        let now = StatKey::of_all(tracked);
        for (t, key) in tracked.iter_mut().zip(now) {
            if let Some(key) = key {
                t.stat = key;
            }
        }
    }
}

pub enum TrackedKind {
    File {
        executable: bool,
    },
    /// A symbolic link and its target.
    Link(Vec<u8>),
}

/// What `lstat` says of a file that changes whenever it is written, replaced or chmod-ed:
/// the inode, the size, and the modification and change times (a process cannot set the
/// change time back).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StatKey {
    ino: u64,
    size: u64,
    mode: u32,
    mtime: (i64, i64),
    ctime: (i64, i64),
}

impl StatKey {
    /// The keys of every tracked file as it is now (`None`: gone or unreadable), on every
    /// core, each directory opened once (`fstatat` by name: 20,000 files in a few ms).
    fn of_all(tracked: &[Tracked]) -> Vec<Option<StatKey>> {
        let threads = std::thread::available_parallelism().map_or(1, std::num::NonZero::get);
        let chunk = tracked.len().div_ceil(threads).max(256);
        std::thread::scope(|scope| {
            let parts: Vec<_> = tracked
                .chunks(chunk)
                .map(|part| scope.spawn(move || Self::of_chunk(part)))
                .collect();
            parts
                .into_iter()
                .flat_map(|p| p.join().unwrap_or_default())
                .collect()
        })
    }

    fn of_chunk(part: &[Tracked]) -> Vec<Option<StatKey>> {
        use rustix::fs::{AtFlags, Mode, OFlags, openat, statat};
        let mut dir: Option<(&Path, Option<std::os::fd::OwnedFd>)> = None;
        part.iter()
            .map(|t| {
                let (parent, name) = (t.path.parent()?, t.path.file_name()?);
                if dir.as_ref().is_none_or(|(p, _)| *p != parent) {
                    let fd = openat(
                        rustix::fs::CWD,
                        parent,
                        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
                        Mode::empty(),
                    )
                    .ok();
                    dir = Some((parent, fd));
                }
                let fd = dir.as_ref()?.1.as_ref()?;
                let st = statat(fd, name, AtFlags::SYMLINK_NOFOLLOW).ok()?;
                Some(StatKey {
                    ino: st.st_ino,
                    size: u64::try_from(st.st_size).unwrap_or(u64::MAX),
                    mode: st.st_mode,
                    mtime: (st.st_mtime, i64::try_from(st.st_mtime_nsec).unwrap_or(-1)),
                    ctime: (st.st_ctime, i64::try_from(st.st_ctime_nsec).unwrap_or(-1)),
                })
            })
            .collect()
    }

    pub fn of(path: &Path) -> std::io::Result<Self> {
        Ok(Self::from_metadata(&std::fs::symlink_metadata(path)?))
    }

    /// The key of what `m` describes.
    pub fn from_metadata(m: &std::fs::Metadata) -> Self {
        use std::os::unix::fs::MetadataExt;
        Self {
            ino: m.ino(),
            size: m.size(),
            mode: m.mode(),
            mtime: (m.mtime(), m.mtime_nsec()),
            ctime: (m.ctime(), m.ctime_nsec()),
        }
    }
}

/// The tracked files a run changed (CONTRACT.md section 11.3), by content against the judged
/// tree, never through git's index: deleted, no longer the same kind, executable bit changed,
/// or (when `lstat` says it was touched) content that hashes to another blob
/// (`git hash-object --no-filters`). Sorted.
pub fn changed_since_export(tracked: &[Tracked], root: &Path) -> Result<Vec<String>, CliError> {
    use std::os::unix::ffi::OsStrExt;
    use std::os::unix::fs::PermissionsExt;
    let rel = |t: &Tracked| {
        t.path
            .strip_prefix(root)
            .map(|p| p.to_string_lossy().into_owned())
            .unwrap_or_else(|_| t.path.to_string_lossy().into_owned())
    };
    let mut changed = Vec::new();
    let mut touched: Vec<&Tracked> = Vec::new();
    for (t, now) in tracked.iter().zip(StatKey::of_all(tracked)) {
        let Some(now) = now else {
            changed.push(rel(t));
            continue;
        };
        if now == t.stat {
            continue;
        }
        let meta = std::fs::symlink_metadata(&t.path);
        let same_kind = match (&t.kind, &meta) {
            (TrackedKind::Link(target), Ok(m)) if m.file_type().is_symlink() => {
                std::fs::read_link(&t.path)
                    .is_ok_and(|now| now.as_os_str().as_bytes() == target.as_slice())
            }
            (TrackedKind::File { executable }, Ok(m)) if m.file_type().is_file() => {
                (m.permissions().mode() & 0o111 != 0) == *executable
            }
            _ => false,
        };
        match (&t.kind, same_kind) {
            (_, false) => changed.push(rel(t)),
            (TrackedKind::Link(_), true) => {}
            (TrackedKind::File { .. }, true) => touched.push(t),
        }
    }
    if !touched.is_empty() {
        let paths: Vec<u8> = touched
            .iter()
            .flat_map(|t| t.path.as_os_str().as_bytes().iter().copied().chain([b'\n']))
            .collect();
        let (out, _) = Fed::start(
            git_command().args(["hash-object", "--no-filters", "--stdin-paths"]),
            paths,
        )
        .and_then(Fed::finish)
        .map_err(|e| CliError::software(format!("cannot run git hash-object: {e}")))?;
        let oids: Vec<&str> = std::str::from_utf8(&out.stdout)
            .unwrap_or_default()
            .lines()
            .collect();
        if !out.status.success() || oids.len() != touched.len() {
            // A file that cannot be hashed (replaced by a FIFO, made unreadable) is changed.
            for t in &touched {
                changed.push(rel(t));
            }
        } else {
            for (t, oid) in touched.iter().zip(oids) {
                if oid != t.oid {
                    changed.push(rel(t));
                }
            }
        }
    }
    changed.sort();
    changed.dedup();
    Ok(changed)
}
