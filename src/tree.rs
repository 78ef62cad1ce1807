//! Reading a fixtures tree into seal entries: from a directory on disk (the CLI), walked as
//! `find DIR -type f` walks it, and from a tar stream (the server and `--server`), hashed as
//! it streams by. The seal itself is computed by [`crate::core::seal`].

use std::collections::{HashMap, hash_map};
use std::fs;
use std::io::{self, Read};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use sha2::{Digest as _, Sha256};

use crate::core::digest::Digest;
use crate::core::seal::{Entry, TreePathError, is_seal_file, normalize_path};

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

/// A file's digest and size, or why it could not be read.
type Hashed = io::Result<(Digest, u64)>;

/// Hashes everything `reader` yields.
pub fn hash_reader(mut reader: impl Read) -> io::Result<(Digest, u64)> {
    let mut hasher = Sha256::new();
    let mut buf = vec![0u8; 64 * 1024];
    let mut total = 0u64;
    loop {
        let n = match reader.read(&mut buf) {
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
/// `find` would print it, normalised). Files are hashed on `threads` threads, each streaming
/// its file through a 64 KiB buffer, so memory stays bounded whatever the tree holds.
pub fn read_dir_tree(root: &Path, display: &[u8], threads: usize) -> io::Result<Tree> {
    let mut files: Vec<(PathBuf, Vec<u8>)> = Vec::new();
    let mut non_regular = 0u64;
    let meta = fs::symlink_metadata(root)?;
    if meta.is_file() {
        files.push((root.to_path_buf(), display.to_vec()));
    } else if meta.is_dir() {
        non_regular += 1;
        let mut stack = vec![(root.to_path_buf(), display.to_vec())];
        while let Some((dir, shown)) = stack.pop() {
            for item in fs::read_dir(&dir)? {
                let item = item?;
                let mut child_shown = shown.clone();
                child_shown.push(b'/');
                child_shown.extend_from_slice(item.file_name().as_bytes());
                let kind = item.file_type()?;
                if kind.is_file() {
                    files.push((item.path(), child_shown));
                } else if kind.is_dir() {
                    non_regular += 1;
                    stack.push((item.path(), child_shown));
                } else {
                    non_regular += 1;
                }
            }
        }
    } else {
        non_regular += 1;
    }

    let next = AtomicUsize::new(0);
    let results: Mutex<Vec<Option<Hashed>>> = Mutex::new((0..files.len()).map(|_| None).collect());
    std::thread::scope(|scope| {
        for _ in 0..threads.max(1).min(files.len().max(1)) {
            scope.spawn(|| {
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some((path, _)) = files.get(i) else { break };
                    let r = fs::File::open(path).and_then(hash_reader);
                    if let Ok(mut all) = results.lock()
                        && let Some(slot) = all.get_mut(i)
                    {
                        *slot = Some(r);
                    }
                }
            });
        }
    });
    let results = results.into_inner().unwrap_or_else(|e| e.into_inner());
    let mut tree = Tree {
        non_regular,
        ..Tree::default()
    };
    for ((path, shown), result) in files.into_iter().zip(results) {
        let (sha256, size) = result
            .unwrap_or_else(|| Err(io::Error::other("not hashed")))
            .map_err(|e| io::Error::new(e.kind(), format!("{}: {e}", path.display())))?;
        if !is_seal_file(&shown) {
            tree.bytes += size;
        }
        tree.entries.push(Entry {
            path: shown,
            sha256,
        });
    }
    Ok(tree)
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

/// Reads a tar stream (already decompressed) into a tree, hashing each member as it goes by:
/// nothing is held but the current 64 KiB buffer and one digest per file.
pub fn read_tar_tree(reader: impl Read, fault: &StreamFault) -> Result<Tree, TarError> {
    let corrupt = |e: io::Error| {
        fault
            .take()
            .unwrap_or_else(|| TarError::Corrupt(e.to_string()))
    };
    let mut archive = tar::Archive::new(reader);
    let mut tree = Tree::default();
    // Every member path seen, whether it is a directory, and the content of regular files.
    let mut seen: HashMap<Vec<u8>, bool> = HashMap::new();
    let mut content: HashMap<Vec<u8>, (Digest, u64)> = HashMap::new();
    for member in archive.entries().map_err(corrupt)? {
        let mut member = member.map_err(corrupt)?;
        let kind = member.header().entry_type();
        if matches!(kind, tar::EntryType::XGlobalHeader) {
            continue;
        }
        let raw = member.path_bytes().into_owned();
        let path = normalize_path(&raw).map_err(|reason| TarError::BadPath {
            path: lossy(&raw),
            reason,
        })?;
        let is_dir = kind.is_dir();
        match seen.entry(path.clone()) {
            hash_map::Entry::Occupied(o) if *o.get() && is_dir => continue,
            hash_map::Entry::Occupied(_) => return Err(TarError::Duplicate(lossy(&path))),
            hash_map::Entry::Vacant(v) => {
                v.insert(is_dir);
            }
        }
        let (sha256, size) = if kind.is_file() || kind.is_contiguous() || kind.is_gnu_sparse() {
            let (d, n) = hash_reader(&mut member).map_err(corrupt)?;
            content.insert(path.clone(), (d, n));
            (d, n)
        } else if kind.is_hard_link() {
            let target_raw = member
                .link_name_bytes()
                .map(|c| c.into_owned())
                .unwrap_or_default();
            let target = normalize_path(&target_raw).map_err(|reason| TarError::BadPath {
                path: lossy(&target_raw),
                reason,
            })?;
            match content.get(&target) {
                Some(found) => *found,
                None => return Err(TarError::DanglingLink(lossy(&path), lossy(&target))),
            }
        } else {
            tree.non_regular += 1;
            continue;
        };
        if !is_seal_file(&path) {
            tree.bytes += size;
        }
        tree.entries.push(Entry { path, sha256 });
    }
    if let Some(e) = fault.take() {
        return Err(e);
    }
    Ok(tree)
}
