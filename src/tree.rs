//! Reading a fixtures tree into seal entries: from a directory on disk (the CLI), walked as
//! `find DIR -type f` walks it, and from a tar stream (the server and `--server`), hashed as
//! it streams by. The seal itself is computed by [`crate::core::seal`].

use std::collections::HashMap;
use std::fs;
use std::io::{self, Read};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

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

/// A file's digest and size, or why it could not be read.
type Hashed = io::Result<(Digest, u64)>;

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
/// `find` would print it, normalised). Files are hashed on `threads` threads, each streaming
/// its file through a 64 KiB buffer, so memory stays bounded whatever the tree holds.
pub fn read_dir_tree(root: &Path, display: &[u8], threads: usize) -> io::Result<Tree> {
    let mut files: Vec<(PathBuf, Vec<u8>)> = Vec::new();
    let mut non_regular = 0u64;
    // As `find ROOT` walks: no link followed, the root included (`follow_root_links(false)`).
    let walk = walkdir::WalkDir::new(root)
        .follow_links(false)
        .follow_root_links(false);
    for entry in walk {
        let entry = entry.map_err(io::Error::from)?;
        if !entry.file_type().is_file() {
            // Directories (the root included), symlinks, devices: they do not count.
            non_regular += 1;
            continue;
        }
        let mut shown = display.to_vec();
        if let Ok(rel) = entry.path().strip_prefix(root)
            && !rel.as_os_str().is_empty()
        {
            shown.push(b'/');
            shown.extend_from_slice(rel.as_os_str().as_bytes());
        }
        files.push((entry.into_path(), shown));
    }

    let next = AtomicUsize::new(0);
    let results: Mutex<Vec<Option<Hashed>>> = Mutex::new((0..files.len()).map(|_| None).collect());
    std::thread::scope(|scope| {
        for _ in 0..threads.max(1).min(files.len().max(1)) {
            scope.spawn(|| {
                let mut buf = vec![0u8; HASH_BUFFER];
                // Results are kept per thread and merged once: no lock per file.
                let mut done: Vec<(usize, Hashed)> = Vec::new();
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some((path, _)) = files.get(i) else { break };
                    done.push((i, fs::File::open(path).and_then(|f| hash_with(f, &mut buf))));
                }
                if let Ok(mut all) = results.lock() {
                    for (i, r) in done {
                        if let Some(slot) = all.get_mut(i) {
                            *slot = Some(r);
                        }
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
