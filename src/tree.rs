//! Reading a fixtures tree into seal entries: from a directory on disk (the CLI), walked as
//! `find DIR -type f` walks it, and from a tar stream (the server and `--server`), hashed as
//! it streams by. The seal itself is computed by [`crate::core::seal`].

use std::collections::HashMap;
use std::fs;
use std::io::{self, Read};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

use sha2::{Digest as _, Sha256};

use crate::core::digest::Digest;
use crate::core::path::MAX_PATH_BYTES;
use crate::core::seal::{Entry, TreeLimits, TreePathError, is_seal_file, normalize_path};

/// A tree read into entries.
#[derive(Debug, Default)]
pub struct Tree {
    /// Regular files (`.seal` files included: sealing leaves them out, and counts them).
    pub entries: Vec<Entry>,
    /// Bytes in the files that count (not `.seal` files).
    pub bytes: u64,
    /// Symlinks, directories, devices and the like, which do not count.
    pub non_regular: u64,
}

/// Hashes everything `reader` yields.
pub fn hash_reader(reader: impl Read) -> io::Result<(Digest, u64)> {
    hash_with(reader, &mut vec![0u8; HASH_BUFFER])
}

/// The read size of [`hash_reader`].
const HASH_BUFFER: usize = 64 * 1024;

/// [`hash_reader`] with the caller's buffer: a walk over many small files reuses one buffer
/// per thread instead of allocating (and zeroing) 64 KiB per file.
fn hash_with(mut reader: impl Read, buf: &mut [u8]) -> io::Result<(Digest, u64)> {
    let mut hasher = Sha256::new();
    let mut total = 0u64;
    loop {
        let n = match reader.read(buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        hasher.update(buf.get(..n).unwrap_or_default());
        total += n as u64;
    }
    Ok((Digest(hasher.finalize().into()), total))
}

// ---------------------------------------------------------------------------------------------
// A directory on disk

/// Walks `root` as `find ROOT -type f` does: symlinks are not followed (the root included),
/// only regular files count. `display` is the path prefix the entries carry (the root as
/// `find` would print it, normalised).
///
/// The walk and the hashing are one job shared by `threads` threads: a thread reads a
/// directory (`getdents`), queues its subdirectories and its files in batches, and hashes
/// batches as it takes them, so both cores work from the first directory on and a directory
/// of many files is shared too. Files are opened relative to their directory (`openat` of one
/// name, not a path resolved from the root), never through a link (`O_NOFOLLOW`), and streamed
/// through one 64 KiB buffer per thread, so memory stays bounded whatever the tree holds.
pub fn read_dir_tree(root: &Path, display: &[u8], threads: usize) -> io::Result<Tree> {
    use rustix::fs::{AtFlags, FileType, statat};
    let with_path =
        |e: io::Error, path: &Path| io::Error::new(e.kind(), format!("{}: {e}", path.display()));
    // The root as `find ROOT` sees it: not followed when it is a link.
    let kind = statat(rustix::fs::CWD, root, AtFlags::SYMLINK_NOFOLLOW)
        .map(|st| FileType::from_raw_mode(st.st_mode))
        .map_err(|e| with_path(e.into(), root))?;
    match kind {
        FileType::Directory => {}
        FileType::RegularFile => {
            let (sha256, size) = fs::File::open(root)
                .and_then(hash_reader)
                .map_err(|e| with_path(e, root))?;
            let path = display.to_vec();
            let bytes = if is_seal_file(&path) { 0 } else { size };
            return Ok(Tree {
                entries: vec![Entry { path, sha256 }],
                bytes,
                non_regular: 0,
            });
        }
        _ => {
            return Ok(Tree {
                non_regular: 1,
                ..Tree::default()
            });
        }
    }
    let walk = Walk {
        threads: threads.max(1),
        queue: Mutex::new(WalkQueue {
            jobs: vec![Job::Dir {
                path: root.to_path_buf(),
                shown: display.to_vec(),
            }],
            busy: 0,
            failed: None,
        }),
        wake: std::sync::Condvar::new(),
    };
    let mut tree = Tree::default();
    let merged = Mutex::new(&mut tree);
    std::thread::scope(|scope| {
        for _ in 0..threads.max(1) {
            scope.spawn(|| {
                let done = walk.work();
                let mut tree = merged.lock().unwrap_or_else(PoisonError::into_inner);
                tree.entries.extend(done.entries);
                tree.bytes += done.bytes;
                tree.non_regular += done.non_regular;
            });
        }
    });
    if let Some(e) = walk
        .queue
        .into_inner()
        .unwrap_or_else(PoisonError::into_inner)
        .failed
    {
        return Err(e);
    }
    Ok(tree)
}

/// Files of one directory are hashed in batches of at most this many: small enough that the
/// threads share a directory of many files, large enough that the queue is not the work. A
/// directory of few files is split finer (down to one file a batch), so that a few large
/// files are hashed side by side.
const FILE_BATCH: usize = 64;

/// The batch size for a directory of `files` files read by `threads` threads: about four
/// batches per thread, within 1..=[`FILE_BATCH`].
fn batch_size(files: usize, threads: usize) -> usize {
    (files / (threads.max(1) * 4)).clamp(1, FILE_BATCH)
}

/// A piece of the walk.
enum Job {
    /// A directory to read.
    Dir { path: PathBuf, shown: Vec<u8> },
    /// Files of a directory to hash: the directory (open), its path as shown, their names.
    Files {
        dir: Arc<(rustix::fd::OwnedFd, PathBuf, Vec<u8>)>,
        names: Vec<std::ffi::CString>,
    },
}

struct WalkQueue {
    jobs: Vec<Job>,
    /// Threads working on a job (which may queue more).
    busy: usize,
    /// The first error: the walk stops at it.
    failed: Option<io::Error>,
}

struct Walk {
    threads: usize,
    queue: Mutex<WalkQueue>,
    wake: std::sync::Condvar,
}

impl Walk {
    /// Takes jobs until none is left and no thread can queue more; what this thread read.
    fn work(&self) -> Tree {
        let mut mine = Tree::default();
        let mut buf = vec![0u8; HASH_BUFFER];
        let mut queue = self.queue.lock().unwrap_or_else(PoisonError::into_inner);
        loop {
            if queue.failed.is_some() {
                queue.jobs.clear();
            }
            let Some(job) = queue.jobs.pop() else {
                if queue.busy == 0 {
                    self.wake.notify_all();
                    return mine;
                }
                queue = self
                    .wake
                    .wait(queue)
                    .unwrap_or_else(PoisonError::into_inner);
                continue;
            };
            queue.busy += 1;
            drop(queue);
            let mut more = Vec::new();
            let result = match job {
                Job::Dir { path, shown } => {
                    read_one_dir(path, shown, self.threads, &mut mine, &mut more)
                }
                Job::Files { dir, names } => hash_files(&dir, &names, &mut buf, &mut mine),
            };
            queue = self.queue.lock().unwrap_or_else(PoisonError::into_inner);
            queue.busy -= 1;
            if let Err(e) = result {
                queue.failed.get_or_insert(e);
            }
            let queued = !more.is_empty();
            queue.jobs.append(&mut more);
            if queued || queue.busy == 0 {
                self.wake.notify_all();
            }
        }
    }
}

/// `dir/name` as shown: `shown` and the name's bytes.
fn shown_child(shown: &[u8], name: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(shown.len() + 1 + name.len());
    out.extend_from_slice(shown);
    out.push(b'/');
    out.extend_from_slice(name);
    out
}

/// Reads one directory: its subdirectories and files become jobs (the files last, so they are
/// taken first and the open directory is not held long); everything else is counted.
fn read_one_dir(
    path: PathBuf,
    shown: Vec<u8>,
    threads: usize,
    tree: &mut Tree,
    jobs: &mut Vec<Job>,
) -> io::Result<()> {
    use rustix::fs::{AtFlags, FileType, Mode, OFlags, openat, statat};
    let with_path = |e: rustix::io::Errno, path: &Path| {
        let e = io::Error::from(e);
        io::Error::new(e.kind(), format!("{}: {e}", path.display()))
    };
    // The directory itself counts as `find` lists it (not a regular file).
    tree.non_regular += 1;
    let fd = rustix::fs::open(
        &path,
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        Mode::empty(),
    )
    .map_err(|e| with_path(e, &path))?;
    let mut dir = rustix::fs::Dir::new(fd).map_err(|e| with_path(e, &path))?;
    let mut files = Vec::new();
    while let Some(entry) = dir.read() {
        let entry = entry.map_err(|e| with_path(e, &path))?;
        let name = entry.file_name();
        let bytes = name.to_bytes();
        if bytes == b"." || bytes == b".." {
            continue;
        }
        let kind = match entry.file_type() {
            FileType::Unknown => {
                // A filesystem that does not say: ask, without following a link.
                let fd = dir.fd().map_err(|e| with_path(e, &path))?;
                statat(fd, name, AtFlags::SYMLINK_NOFOLLOW)
                    .map(|st| FileType::from_raw_mode(st.st_mode))
                    .map_err(|e| with_path(e, &path.join(std::ffi::OsStr::from_bytes(bytes))))?
            }
            kind => kind,
        };
        match kind {
            FileType::RegularFile => files.push(name.to_owned()),
            FileType::Directory => jobs.push(Job::Dir {
                path: path.join(std::ffi::OsStr::from_bytes(bytes)),
                shown: shown_child(&shown, bytes),
            }),
            _ => tree.non_regular += 1,
        }
    }
    if files.is_empty() {
        return Ok(());
    }
    let fd = dir.fd().map_err(|e| with_path(e, &path))?;
    let fd = openat(
        fd,
        c".",
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
        Mode::empty(),
    )
    .map_err(|e| with_path(e, &path))?;
    drop(dir);
    let shared = Arc::new((fd, path, shown));
    let batch = batch_size(files.len(), threads);
    while !files.is_empty() {
        let rest = files.split_off(files.len().saturating_sub(batch));
        jobs.push(Job::Files {
            dir: Arc::clone(&shared),
            names: rest,
        });
    }
    Ok(())
}

/// Hashes some files of one directory, each opened by name relative to it.
fn hash_files(
    dir: &(rustix::fd::OwnedFd, PathBuf, Vec<u8>),
    names: &[std::ffi::CString],
    buf: &mut [u8],
    tree: &mut Tree,
) -> io::Result<()> {
    use rustix::fs::{Mode, OFlags, openat};
    let (fd, path, shown) = dir;
    for name in names {
        let bytes = name.to_bytes();
        let hashed = openat(
            fd,
            name.as_c_str(),
            OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
            Mode::empty(),
        )
        .map_err(io::Error::from)
        .and_then(|file| hash_with(fs::File::from(file), buf));
        let (sha256, size) = hashed.map_err(|e| {
            let file = path.join(std::ffi::OsStr::from_bytes(bytes));
            io::Error::new(e.kind(), format!("{}: {e}", file.display()))
        })?;
        let shown = shown_child(shown, bytes);
        if !is_seal_file(&shown) {
            tree.bytes += size;
        }
        tree.entries.push(Entry {
            path: shown,
            sha256,
        });
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// A tar stream

/// Why a tar stream could not be sealed.
#[derive(Debug, thiserror::Error)]
pub enum TarError {
    /// Not a readable tar (or gzip) stream: truncated, garbage, bad checksum. A 400.
    #[error("the archive is corrupt or truncated: {0}")]
    Corrupt(String),
    /// A member path that leaves the tree. A 422.
    #[error("member {path:?} {reason}")]
    BadPath { path: String, reason: TreePathError },
    /// The same path twice (tar would silently overwrite). A 422.
    #[error("member {0:?} appears twice in the archive")]
    Duplicate(String),
    /// A hard link whose target is not an earlier member. A 422.
    #[error(
        "member {0:?} is a hard link to {1:?}, which is not an earlier regular file of the archive"
    )]
    DanglingLink(String, String),
    /// Over a size limit. A 413.
    #[error("{0}")]
    TooLarge(String),
    /// The body stopped arriving. A 408.
    #[error("{0}")]
    Timeout(String),
    /// A member of a kind the seal does not read. A 422.
    #[error("the archive holds {0}")]
    Unsupported(String),
}

/// How a stream failed outside the tar parser (size limits, timeouts, the client going
/// away): set by the readers, read back after the parser gives up, since the parser only
/// passes on an `io::Error`.
#[derive(Debug, Clone, Default)]
pub struct StreamFault(std::sync::Arc<Mutex<Option<TarError>>>);

impl StreamFault {
    pub fn set(&self, e: TarError) -> io::Error {
        let msg = e.to_string();
        if let Ok(mut slot) = self.0.lock()
            && slot.is_none()
        {
            *slot = Some(e);
        }
        io::Error::other(msg)
    }

    fn take(&self) -> Option<TarError> {
        self.0.lock().ok().and_then(|mut s| s.take())
    }
}

/// Counts bytes through a reader and stops past `limit`.
pub struct Limited<R> {
    inner: R,
    left: u64,
    what: &'static str,
    limit: u64,
    fault: StreamFault,
}

impl<R> Limited<R> {
    pub fn new(inner: R, limit: u64, what: &'static str, fault: StreamFault) -> Self {
        Self {
            inner,
            left: limit,
            what,
            limit,
            fault,
        }
    }
}

impl<R: Read> Read for Limited<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        if n as u64 > self.left {
            return Err(self.fault.set(TarError::TooLarge(format!(
                "the {} is larger than {} bytes",
                self.what, self.limit
            ))));
        }
        self.left -= n as u64;
        Ok(n)
    }
}

fn lossy(p: &[u8]) -> String {
    String::from_utf8_lossy(p).into_owned()
}

/// Longest PAX extended header (`x`/`g`) accepted, in bytes: path, link path and times fit
/// in a few hundred bytes; a header that claims more is refused before it is read.
pub const MAX_PAX_BYTES: u64 = 64 * 1024;

/// Reads the data of an extension member (a GNU long name or a PAX header) whose header
/// claims `size` bytes, refusing it before reading when that is over `cap`.
fn read_extension(
    member: &mut impl Read,
    size: u64,
    cap: u64,
    what: &str,
    corrupt: &impl Fn(io::Error) -> TarError,
) -> Result<Vec<u8>, TarError> {
    if size > cap {
        return Err(TarError::TooLarge(format!(
            "a {what} in the archive claims {size} bytes; at most {cap} are accepted"
        )));
    }
    let mut data = Vec::with_capacity(usize::try_from(size).unwrap_or(0));
    member.take(size).read_to_end(&mut data).map_err(corrupt)?;
    Ok(data)
}

/// A GNU long name or link: the data, less the one NUL that ends it (as the `tar` crate reads it).
fn strip_nul(mut bytes: Vec<u8>) -> Vec<u8> {
    if bytes.last() == Some(&0) {
        bytes.pop();
    }
    bytes
}

/// The value of `key` in PAX records, if present.
fn pax_value(records: &[u8], key: &[u8]) -> Option<Vec<u8>> {
    tar::PaxExtensions::new(records)
        .filter_map(Result::ok)
        .find(|r| r.key_bytes() == key)
        .map(|r| r.value_bytes().to_vec())
}

/// What a member path was, for the duplicate check and hard links.
enum Seen {
    Dir,
    /// A regular file: its content, which a later hard link to it shares.
    File((Digest, u64)),
    /// A symlink, device or the like.
    Other,
}

/// Reads a tar stream (already decompressed) into a tree, hashing each member as it goes by.
///
/// Memory stays bounded whatever the archive claims: the members are read raw, so a GNU long
/// name or a PAX header is refused by the size its header claims, before a byte of it is read
/// (the `tar` crate would read it whole), and `limits` caps the members and the path bytes
/// kept for the seal's sort. Besides one 64 KiB buffer, a member costs its path (twice: the
/// duplicate check and the entry) and a digest. Sparse members are refused, and so is a PAX
/// `size` that disagrees with its header, so that no two tar readers can see two trees.
pub fn read_tar_tree(
    reader: impl Read,
    fault: &StreamFault,
    limits: &TreeLimits,
) -> Result<Tree, TarError> {
    let corrupt = |e: io::Error| {
        fault
            .take()
            .unwrap_or_else(|| TarError::Corrupt(e.to_string()))
    };
    let mut archive = tar::Archive::new(reader);
    let mut tree = Tree::default();
    // Every member path seen, and what it was.
    let mut seen: HashMap<Vec<u8>, Seen> = HashMap::new();
    let mut path_bytes = 0usize;
    let mut long_name: Option<Vec<u8>> = None;
    let mut long_link: Option<Vec<u8>> = None;
    let mut pax: Option<Vec<u8>> = None;
    let name_cap = (MAX_PATH_BYTES + 1) as u64;
    for member in archive.entries().map_err(corrupt)?.raw(true) {
        let mut member = member.map_err(corrupt)?;
        let header = member.header();
        let kind = header.entry_type();
        let size = header.entry_size().map_err(corrupt)?;
        let recognized = header.as_gnu().is_some() || header.as_ustar().is_some();
        if recognized && kind.is_gnu_longname() {
            if long_name.is_some() {
                return Err(TarError::Corrupt("two long names for one member".into()));
            }
            let data = read_extension(&mut member, size, name_cap, "long name", &corrupt)?;
            long_name = Some(strip_nul(data));
            continue;
        }
        if recognized && kind.is_gnu_longlink() {
            if long_link.is_some() {
                return Err(TarError::Corrupt(
                    "two long link names for one member".into(),
                ));
            }
            let data = read_extension(&mut member, size, name_cap, "long link name", &corrupt)?;
            long_link = Some(strip_nul(data));
            continue;
        }
        if recognized && kind.is_pax_local_extensions() {
            if pax.is_some() {
                return Err(TarError::Corrupt("two PAX headers for one member".into()));
            }
            pax = Some(read_extension(
                &mut member,
                size,
                MAX_PAX_BYTES,
                "PAX header",
                &corrupt,
            )?);
            continue;
        }
        if matches!(kind, tar::EntryType::XGlobalHeader) {
            // Applies to no member's path; skipped unread (streamed past, not held).
            if size > MAX_PAX_BYTES {
                return Err(TarError::TooLarge(format!(
                    "a global PAX header in the archive claims {size} bytes; at most {MAX_PAX_BYTES} are accepted"
                )));
            }
            continue;
        }
        if kind.is_gnu_sparse() {
            return Err(TarError::Unsupported(
                "a sparse member; create the archive without --sparse".into(),
            ));
        }
        let pax_records = pax.take();
        if let Some(records) = &pax_records
            && let Some(declared) = pax_value(records, b"size")
            && declared != size.to_string().as_bytes()
        {
            // GNU tar reads the PAX size, older readers the header's: what follows would be a
            // different tree to each, so the archive is refused (as a `..` member would be).
            return Err(TarError::Unsupported(format!(
                "a member whose PAX size ({}) disagrees with its header ({size} bytes)",
                String::from_utf8_lossy(&declared)
            )));
        }
        let raw = match (long_name.take(), &pax_records) {
            (Some(name), _) => name,
            (None, Some(records)) => {
                pax_value(records, b"path").unwrap_or_else(|| header.path_bytes().into_owned())
            }
            (None, None) => header.path_bytes().into_owned(),
        };
        let link = match (long_link.take(), &pax_records) {
            (Some(name), _) => Some(name),
            (None, Some(records)) => pax_value(records, b"linkpath")
                .or_else(|| header.link_name_bytes().map(|c| c.into_owned())),
            (None, None) => header.link_name_bytes().map(|c| c.into_owned()),
        };
        let path = normalize_path(&raw).map_err(|reason| TarError::BadPath {
            path: lossy(&raw),
            reason,
        })?;
        let is_dir = kind.is_dir();
        let is_file = kind.is_file() || kind.is_contiguous();
        match seen.get(&path) {
            Some(Seen::Dir) if is_dir => continue,
            Some(_) => return Err(TarError::Duplicate(lossy(&path))),
            None => {}
        }
        if seen.len() >= limits.max_entries {
            return Err(TarError::TooLarge(format!(
                "the archive has more than {} members (the server's --seal-max-entries)",
                limits.max_entries
            )));
        }
        path_bytes += path.len();
        if path_bytes > limits.max_path_bytes {
            return Err(TarError::TooLarge(format!(
                "the archive's member paths add up to more than {} bytes (the server's --seal-max-path-bytes)",
                limits.max_path_bytes
            )));
        }
        let (sha256, size) = if is_file {
            hash_reader(&mut member).map_err(corrupt)?
        } else if kind.is_hard_link() {
            let target_raw = link.unwrap_or_default();
            let target = normalize_path(&target_raw).map_err(|reason| TarError::BadPath {
                path: lossy(&target_raw),
                reason,
            })?;
            match seen.get(&target) {
                Some(Seen::File(found)) => *found,
                _ => return Err(TarError::DanglingLink(lossy(&path), lossy(&target))),
            }
        } else {
            tree.non_regular += 1;
            seen.insert(path, if is_dir { Seen::Dir } else { Seen::Other });
            continue;
        };
        if !is_seal_file(&path) {
            tree.bytes += size;
        }
        seen.insert(path.clone(), Seen::File((sha256, size)));
        tree.entries.push(Entry { path, sha256 });
    }
    if long_name.is_some() || long_link.is_some() || pax.is_some() {
        return Err(TarError::Corrupt(
            "the archive ends with a header that describes no member".into(),
        ));
    }
    if let Some(e) = fault.take() {
        return Err(e);
    }
    Ok(tree)
}

#[cfg(test)]
mod walk_tests {
    use super::*;

    /// A tree with a wide directory (many batches), a deep chain, an empty directory,
    /// links to a file, a directory and nowhere, and a FIFO.
    fn awkward(root: &Path) {
        let wide = root.join("wide");
        fs::create_dir_all(&wide).unwrap_or_else(|e| panic!("{e}"));
        for i in 0..(FILE_BATCH * 7 + 5) {
            fs::write(
                wide.join(format!("f{i:04}")),
                format!("{i}\n").repeat(i % 40),
            )
            .unwrap_or_else(|e| panic!("{e}"));
        }
        let mut deep = root.join("deep");
        for level in 0..40 {
            deep = deep.join(format!("d{level}"));
        }
        fs::create_dir_all(&deep).unwrap_or_else(|e| panic!("{e}"));
        fs::write(deep.join("bottom"), b"at the bottom").unwrap_or_else(|e| panic!("{e}"));
        fs::write(root.join("deep/top.seal"), b"a seal file").unwrap_or_else(|e| panic!("{e}"));
        fs::create_dir_all(root.join("empty")).unwrap_or_else(|e| panic!("{e}"));
        std::os::unix::fs::symlink("wide/f0001", root.join("to-file"))
            .unwrap_or_else(|e| panic!("{e}"));
        std::os::unix::fs::symlink("wide", root.join("to-dir")).unwrap_or_else(|e| panic!("{e}"));
        std::os::unix::fs::symlink("/nonexistent", root.join("dangling"))
            .unwrap_or_else(|e| panic!("{e}"));
        rustix::fs::mknodat(
            rustix::fs::CWD,
            root.join("a-fifo"),
            rustix::fs::FileType::Fifo,
            rustix::fs::Mode::from_raw_mode(0o644),
            0,
        )
        .unwrap_or_else(|e| panic!("{e}"));
    }

    fn sorted(mut tree: Tree) -> (Vec<(Vec<u8>, Digest)>, u64, u64) {
        tree.entries.sort_by(|a, b| a.path.cmp(&b.path));
        (
            tree.entries
                .into_iter()
                .map(|e| (e.path, e.sha256))
                .collect(),
            tree.bytes,
            tree.non_regular,
        )
    }

    #[test]
    fn any_number_of_threads_reads_the_same_tree() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        awkward(dir.path());
        let one =
            sorted(read_dir_tree(dir.path(), b"fixtures", 1).unwrap_or_else(|e| panic!("{e}")));
        // 453 wide files, the bottom one and the seal file.
        assert_eq!(one.0.len(), FILE_BATCH * 7 + 5 + 2);
        // The root, wide, deep and its 40 levels, empty; three links and a FIFO.
        assert_eq!(one.2, 1 + 1 + 1 + 40 + 1 + 3 + 1);
        let wide_bytes: u64 = (0..(FILE_BATCH * 7 + 5))
            .map(|i| (format!("{i}\n").len() * (i % 40)) as u64)
            .sum();
        assert_eq!(
            one.1,
            wide_bytes + b"at the bottom".len() as u64,
            "seal files do not count"
        );
        assert!(one.0.iter().any(|(p, _)| p.as_slice()
            == b"fixtures/deep/d0/d1/d2/d3/d4/d5/d6/d7/d8/d9/d10/d11/d12/d13/d14/d15/d16/d17/d18/d19/d20/d21/d22/d23/d24/d25/d26/d27/d28/d29/d30/d31/d32/d33/d34/d35/d36/d37/d38/d39/bottom"));
        for threads in [2, 3, 8] {
            let many = sorted(
                read_dir_tree(dir.path(), b"fixtures", threads).unwrap_or_else(|e| panic!("{e}")),
            );
            assert_eq!(many, one, "{threads} threads");
        }
    }

    #[test]
    fn few_files_are_split_finer_than_many() {
        assert_eq!(batch_size(4, 2), 1, "four large files: one each");
        assert_eq!(batch_size(1, 8), 1);
        assert_eq!(batch_size(100, 2), 12);
        assert_eq!(batch_size(20_000, 2), FILE_BATCH);
    }

    #[test]
    fn roots_that_are_a_file_a_link_or_missing() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        fs::write(dir.path().join("file"), b"content").unwrap_or_else(|e| panic!("{e}"));
        std::os::unix::fs::symlink(dir.path(), dir.path().join("link"))
            .unwrap_or_else(|e| panic!("{e}"));
        let file =
            read_dir_tree(&dir.path().join("file"), b"file", 2).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(file.entries.len(), 1);
        assert_eq!(file.entries[0].path, b"file");
        assert_eq!(file.bytes, 7);
        let link =
            read_dir_tree(&dir.path().join("link"), b"link", 2).unwrap_or_else(|e| panic!("{e}"));
        assert!(link.entries.is_empty(), "a root link is not followed");
        assert_eq!(link.non_regular, 1);
        let missing = read_dir_tree(&dir.path().join("missing"), b"missing", 2)
            .err()
            .unwrap_or_else(|| panic!("a missing root is an error"));
        assert_eq!(missing.kind(), io::ErrorKind::NotFound);
        assert!(missing.to_string().contains("missing"), "{missing}");
    }
}
