//! Git, for the runners: the one place the CLI asks git anything (revisions, the files a
//! patch changes, a base commit's files, commit counts).

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use super::error::CliError;

/// Git as the runners run it, whatever the repository's or the user's git config says
/// (CONTRACT.md section 11.3): no hooks, no fsmonitor, no external diff or textconv driver,
/// no replace refs. A patch (or a run before it) cannot make git run its code or lie about
/// an object.
pub fn git_command() -> std::process::Command {
    let mut command = std::process::Command::new("git");
    command
        .args([
            "--no-replace-objects",
            "-c",
            "core.hooksPath=/dev/null",
            "-c",
            "core.fsmonitor=false",
            "-c",
            "diff.external=",
            "-c",
            "core.attributesFile=/dev/null",
        ])
        .env("GIT_NO_REPLACE_OBJECTS", "1")
        .env_remove("GIT_EXTERNAL_DIFF");
    command
}

/// Runs git and returns its stdout, or its stderr as the error (65: what was asked of git
/// came from the input).
pub fn git(args: &[&str]) -> Result<Vec<u8>, CliError> {
    run_git(git_command().args(args), args)
}

fn run_git(command: &mut std::process::Command, args: &[&str]) -> Result<Vec<u8>, CliError> {
    let out = command
        .output()
        .map_err(|e| CliError::data(format!("cannot run git: {e}")))?;
    if !out.status.success() {
        return Err(CliError::data(format!(
            "git {} failed: {}",
            args.join(" "),
            git_said(&String::from_utf8_lossy(&out.stderr))
        )));
    }
    Ok(out.stdout)
}

/// What git said, in one line: its first `fatal:` or `error:` line (git follows a bad
/// revision with its whole usage text), else its first line.
fn git_said(stderr: &str) -> String {
    let lines = || stderr.lines().map(str::trim).filter(|l| !l.is_empty());
    lines()
        .find(|l| l.starts_with("fatal:") || l.starts_with("error:"))
        .or_else(|| lines().next())
        .unwrap_or("(no message)")
        .to_owned()
}

/// The files `git diff --name-only BASE TREE` names: two-dot, against the judged tree
/// (CONTRACT.md section 12.1), NUL-separated so any name survives. Rename detection is off,
/// so a rename counts both paths: a patch cannot move a guarded or test file out of sight.
pub fn git_changed(base: &str, tree: &str) -> Result<Vec<String>, CliError> {
    let out = git(&[
        "diff",
        "-z",
        "--name-only",
        "--no-renames",
        "--no-ext-diff",
        "--no-textconv",
        base,
        tree,
    ])?;
    Ok(out
        .split(|b| *b == 0)
        .filter(|p| !p.is_empty())
        .map(|p| String::from_utf8_lossy(p).into_owned())
        .collect())
}

/// Changes to `directory` (`-C`), then to the top of the git repository it is in: the
/// config's paths are repository-relative.
pub fn enter_repository(directory: Option<&Path>) -> Result<(), CliError> {
    if let Some(dir) = directory {
        std::env::set_current_dir(dir)
            .map_err(|e| CliError::usage(format!("cannot change to {}: {e}", dir.display())))?;
    }
    let top = git(&["rev-parse", "--show-toplevel"])
        .map_err(|_| CliError::usage("not inside a git repository (or give -C REPO)"))?;
    let top = PathBuf::from(String::from_utf8_lossy(&top).trim());
    std::env::set_current_dir(&top)
        .map_err(|e| CliError::usage(format!("cannot change to {}: {e}", top.display())))
}

/// What is judged (CONTRACT.md section 12.1): the merge of HEAD into BASE, as commit and
/// tree ids, and the files that merge conflicts on.
#[derive(Debug, Clone)]
pub struct Judged {
    pub base: String,
    pub head: String,
    /// HEAD's tree when HEAD already contains BASE; else the tree `git merge-tree
    /// --write-tree` wrote (with conflict markers, when it has conflicts).
    pub tree: String,
    pub conflicts: Vec<String>,
}

/// The tree that would land: HEAD's when it already contains BASE, else the merge of the
/// two (no worktree, no index touched).
pub fn judged_tree(base: &str, head: &str) -> Result<Judged, CliError> {
    let contains = git_command()
        .args(["merge-base", "--is-ancestor", base, head])
        .status()
        .map_err(|e| CliError::data(format!("cannot run git: {e}")))?;
    let (tree, conflicts) = if contains.success() {
        let tree = git(&["rev-parse", "--verify", &format!("{head}^{{tree}}")])?;
        (String::from_utf8_lossy(&tree).trim().to_owned(), Vec::new())
    } else {
        let out = git_command()
            .args([
                "merge-tree",
                "--write-tree",
                "--name-only",
                "--no-messages",
                "-z",
                base,
                head,
            ])
            .output()
            .map_err(|e| CliError::data(format!("cannot run git: {e}")))?;
        // 0: clean, 1: conflicts (the tree still written); anything else is an error.
        if !matches!(out.status.code(), Some(0 | 1)) {
            return Err(CliError::data(format!(
                "git merge-tree {base} {head} failed: {}",
                git_said(&String::from_utf8_lossy(&out.stderr))
            )));
        }
        let mut fields = out
            .stdout
            .split(|b| *b == 0)
            .filter(|f| !f.is_empty())
            .map(|f| String::from_utf8_lossy(f).into_owned());
        let tree = fields.next().unwrap_or_default();
        let mut conflicts: Vec<String> = fields.collect();
        conflicts.dedup();
        (tree, conflicts)
    };
    Ok(Judged {
        base: base.to_owned(),
        head: head.to_owned(),
        tree,
        conflicts,
    })
}

/// The bytes of every file in `tree` (`git ls-tree -l`), or `None` when git cannot say.
pub fn tree_bytes(tree: &str) -> Option<u64> {
    let listing = git(&["ls-tree", "-r", "-l", "-z", "--full-tree", tree]).ok()?;
    Some(
        listing
            .split(|b| *b == 0)
            .filter_map(|r| {
                // `<mode> SP <type> SP <object> SP+ <size> TAB <path>`
                let tab = r.iter().position(|b| *b == b'\t')?;
                String::from_utf8_lossy(&r[..tab])
                    .split_whitespace()
                    .nth(3)?
                    .parse::<u64>()
                    .ok()
            })
            .sum(),
    )
}

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
        let (meta, path) = (String::from_utf8_lossy(&record[..tab]), &record[tab + 1..]);
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
    let mut child = git_command()
        .args(["cat-file", "--batch"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .map_err(|e| CliError::data(format!("cannot run git: {e}")))?;
    let mut stdin = child.stdin.take().expect("piped");
    let feeder = std::thread::spawn(move || -> std::io::Result<()> {
        let mut w = std::io::BufWriter::new(&mut stdin);
        for oid in blobs {
            writeln!(w, "{oid}")?;
        }
        w.flush()
    });
    let mut out = BufReader::with_capacity(1 << 16, child.stdout.take().expect("piped"));
    let failed = |e: std::io::Error| CliError::software(format!("cannot export {tree}: {e}"));
    let mut links: HashSet<Vec<u8>> = HashSet::new();
    let mut content = Vec::new();
    let mut tracked = Vec::with_capacity(entries.len());
    // The directory made last: entries come sorted, so most share it.
    let mut made: Option<std::path::PathBuf> = None;
    for entry in &entries {
        // No entry may pass through a symbolic link the tree holds.
        let mut at = 0;
        while let Some(slash) = entry.path[at..].iter().position(|b| *b == b'/') {
            at += slash;
            if links.contains(&entry.path[..at]) {
                return Err(malformed(&entry.path, "passes through a symbolic link"));
            }
            at += 1;
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
    let _ = feeder.join();
    let status = child.wait().map_err(failed)?;
    if !status.success() {
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
    use std::io::Write;
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
        let mut child = git_command()
            .args(["hash-object", "--no-filters", "--stdin-paths"])
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .spawn()
            .map_err(|e| CliError::software(format!("cannot run git: {e}")))?;
        let mut stdin = child.stdin.take().expect("piped");
        let paths: Vec<Vec<u8>> = touched
            .iter()
            .map(|t| t.path.as_os_str().as_bytes().to_vec())
            .collect();
        let feeder = std::thread::spawn(move || -> std::io::Result<()> {
            let mut w = std::io::BufWriter::new(&mut stdin);
            for p in paths {
                w.write_all(&p)?;
                w.write_all(b"\n")?;
            }
            w.flush()
        });
        let out = child
            .wait_with_output()
            .map_err(|e| CliError::software(format!("cannot run git hash-object: {e}")))?;
        let _ = feeder.join();
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

/// The base commit's file at `path`, or `None` when it has none.
pub fn base_file(base: &str, path: &str) -> Result<Option<Vec<u8>>, CliError> {
    let spec = format!("{base}:{path}");
    // `cat-file -e` says whether the object exists without printing git's error for a file
    // that is simply absent.
    let exists = git_command()
        .args(["cat-file", "-e", &spec])
        .stderr(std::process::Stdio::null())
        .status()
        .map_err(|e| CliError::data(format!("cannot run git: {e}")))?
        .success();
    if !exists {
        return Ok(None);
    }
    git(&["cat-file", "blob", &spec]).map(Some)
}

/// The files of `BASE TREE` (the judged tree) that the patch makes executable (a new mode
/// 100755): with [`binary_content`], the runner's facts for the gate's `binary-added` rule.
/// Deleted files are not counted.
pub fn git_made_executable(base: &str, tree: &str) -> Result<Vec<String>, CliError> {
    let raw = git(&[
        "diff",
        "-z",
        "--raw",
        "--no-renames",
        "--no-abbrev",
        base,
        tree,
    ])?;
    let mut out = Vec::new();
    // `:OLD NEW OLDSHA NEWSHA STATUS\0PATH\0`, once per file.
    let mut records = raw.split(|b| *b == 0).filter(|r| !r.is_empty());
    while let (Some(meta), Some(path)) = (records.next(), records.next()) {
        let meta = String::from_utf8_lossy(meta);
        let fields: Vec<&str> = meta.trim_start_matches(':').split(' ').collect();
        if let [old, "100755", ..] = fields.as_slice()
            && *old != "100755"
        {
            out.push(String::from_utf8_lossy(path).into_owned());
        }
    }
    Ok(out)
}

/// The lines `tree` adds to `base`, as `(file, line number in tree, text)`: `git diff -U0`
/// read hunk by hunk (binary files have none). Text is cut at 1,000 bytes.
pub fn added_lines(base: &str, tree: &str) -> Result<Vec<(String, u64, String)>, CliError> {
    let diff = git(&[
        "diff",
        "-U0",
        "--no-renames",
        "--no-ext-diff",
        "--no-textconv",
        "--no-color",
        "--src-prefix=a/",
        "--dst-prefix=b/",
        base,
        tree,
    ])?;
    let mut out = Vec::new();
    let (mut file, mut line) = (None::<String>, 0u64);
    for raw in diff.split(|b| *b == b'\n') {
        let text = String::from_utf8_lossy(raw);
        if let Some(path) = text.strip_prefix("+++ ") {
            file = path.strip_prefix("b/").map(str::to_owned);
        } else if let Some(hunk) = text.strip_prefix("@@ ") {
            // `@@ -a,b +c,d @@`: added lines start at c.
            line = hunk
                .split_whitespace()
                .find_map(|h| h.strip_prefix('+'))
                .and_then(|c| c.split(',').next()?.parse().ok())
                .unwrap_or(0);
        } else if let (Some(f), Some(added)) = (&file, raw.strip_prefix(b"+")) {
            let added = String::from_utf8_lossy(&added[..added.len().min(1000)]).into_owned();
            out.push((f.clone(), line, added));
            line += 1;
        }
    }
    Ok(out)
}

/// The `changed` files whose content in the copy `tree` is binary by git's own test (a NUL
/// byte in the first 8,000 bytes), read from the bytes themselves: no attribute (`diff`,
/// `-binary`, a textconv) can make git call a binary text. Deleted files and links are not
/// counted.
pub fn binary_content(tree: &Path, changed: &[String]) -> Vec<String> {
    use std::io::Read;
    use std::os::unix::fs::OpenOptionsExt;
    changed
        .iter()
        .filter(|path| {
            let mut head = Vec::with_capacity(8000);
            std::fs::OpenOptions::new()
                .read(true)
                .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
                .open(tree.join(path))
                .ok()
                .filter(|f| f.metadata().is_ok_and(|m| m.is_file()))
                .and_then(|f| f.take(8000).read_to_end(&mut head).ok())
                .is_some_and(|_| head.contains(&0))
        })
        .cloned()
        .collect()
}

/// The commit `rev` names, resolved unambiguously (CONTRACT.md section 12.1). git resolves a
/// short name by trying `NAME`, `refs/NAME`, `refs/tags/NAME`, `refs/heads/NAME`,
/// `refs/remotes/NAME` and `refs/remotes/NAME/HEAD` in turn, so a patch that adds a tag named
/// like the base branch (`main`, `origin/main`) would choose what a later gate judges against.
/// A name that more than one of those refs (or a commit id and a ref) answers to is refused
/// (64), naming them; a full ref name or a commit id always resolves.
pub fn commit_of(rev: &str) -> Result<String, CliError> {
    let named = ambiguous_names(rev)?;
    if named.len() > 1 {
        return Err(CliError::usage(format!(
            "{rev:?} is ambiguous in this repository: it names {}; give the full ref name or a commit id",
            named.join(", ")
        )));
    }
    let out = git(&[
        "rev-parse",
        "--verify",
        "--quiet",
        &format!("{rev}^{{commit}}"),
    ])
    .map_err(|_| CliError::usage(format!("{rev:?} is not a commit in this repository")))?;
    Ok(String::from_utf8_lossy(&out).trim().to_owned())
}

/// Everything the name at the start of `rev` (before `~`, `^`, `@{` or `:`) could mean to
/// git: the refs it would try, and the objects it is a prefix of.
fn ambiguous_names(rev: &str) -> Result<Vec<String>, CliError> {
    let name = rev
        .split(['~', '^', ':'])
        .next()
        .unwrap_or(rev)
        .split("@{")
        .next()
        .unwrap_or(rev);
    if name.is_empty() {
        return Ok(Vec::new());
    }
    let refs = git(&["for-each-ref", "--format=%(refname)"])?;
    let refs: std::collections::HashSet<String> = String::from_utf8_lossy(&refs)
        .lines()
        .map(str::to_owned)
        .collect();
    let mut named: Vec<String> = Vec::new();
    // `HEAD` and its kin are files in the git directory; a full name is itself.
    let special = name.bytes().all(|b| b.is_ascii_uppercase() || b == b'_');
    if special
        && git(&["rev-parse", "--verify", "--quiet", "--no-revs", name]).is_ok()
        && git(&["rev-parse", "--git-path", name])
            .map(|p| std::path::Path::new(String::from_utf8_lossy(&p).trim()).exists())
            .unwrap_or(false)
    {
        named.push(name.to_owned());
    }
    for candidate in [
        name.to_owned(),
        format!("refs/{name}"),
        format!("refs/tags/{name}"),
        format!("refs/heads/{name}"),
        format!("refs/remotes/{name}"),
        format!("refs/remotes/{name}/HEAD"),
    ] {
        if refs.contains(&candidate) && !named.contains(&candidate) {
            named.push(candidate);
        }
    }
    // A hex name may also be a commit id (or the prefix of objects).
    if (4..=64).contains(&name.len()) && name.bytes().all(|b| b.is_ascii_hexdigit()) {
        let objects = git(&["rev-parse", &format!("--disambiguate={name}")]).unwrap_or_default();
        if !objects.is_empty() {
            named.push(format!("the object {name}"));
        }
    }
    Ok(named)
}

/// Fills `commits_since_open` for open rows that name `opened_against_commit` and lack it,
/// counting commits with git from that commit to the head (inside a repository only).
pub fn fill_commit_counts(ledger: &mut Value, head: &str) -> Result<(), CliError> {
    let Some(rows) = ledger.as_array_mut() else {
        return Ok(());
    };
    let needs_git = rows
        .iter()
        .any(|r| r.get("opened_against_commit").is_some() && r.get("commits_since_open").is_none());
    if !needs_git || git(&["rev-parse", "--git-dir"]).is_err() {
        return Ok(());
    }
    for (i, row) in rows.iter_mut().enumerate() {
        let Some(obj) = row.as_object_mut() else {
            continue;
        };
        if obj.contains_key("commits_since_open") {
            continue;
        }
        let Some(commit) = obj
            .get("opened_against_commit")
            .and_then(Value::as_str)
            .map(str::to_owned)
        else {
            continue;
        };
        if !commit.bytes().all(|b| b.is_ascii_hexdigit()) {
            // Left for validation to refuse with its pointer.
            continue;
        }
        let out = git(&["rev-list", "--count", &format!("{commit}..{head}")]).map_err(|e| {
            CliError::data(format!(
                "ledger row {i}: cannot count commits since {commit}: {}",
                e.message
            ))
        })?;
        let n: u64 = String::from_utf8_lossy(&out)
            .trim()
            .parse()
            .map_err(|_| CliError::data(format!("ledger row {i}: git gave no commit count")))?;
        obj.insert("commits_since_open".into(), json!(n));
    }
    Ok(())
}
