//! Where a room lives and what it is made of: its directory (on `/dev/shm` when the tree fits,
//! as a tmpfs of its own sized to the copy and the disk cap when the runner is root), its
//! places (the copy, `HOME`, the receipts), and the directory keys taken before any run.

use std::path::{Path, PathBuf};

use super::limits;
use crate::cli::error::CliError;

/// Mounts a tmpfs of `bytes` at `at` (or, `resize`, gives the one there that size), mode 0711.
pub(super) fn tmpfs(at: &Path, bytes: u64, resize: bool) -> rustix::io::Result<()> {
    use rustix::mount::{MountFlags, mount, mount_remount};
    let data = std::ffi::CString::new(format!("size={bytes},mode=0711"))
        .map_err(|_| rustix::io::Errno::INVAL)?;
    if resize {
        mount_remount(at, MountFlags::NOSUID | MountFlags::NODEV, data.as_c_str())
    } else {
        mount(
            "patchgate-room",
            at,
            "tmpfs",
            MountFlags::NOSUID | MountFlags::NODEV,
            data.as_c_str(),
        )
    }
}

pub(super) struct Places {
    pub dir: tempfile::TempDir,
    pub tree: PathBuf,
    pub home: PathBuf,
    pub tmp: PathBuf,
    pub receipts: PathBuf,
}

impl Places {
    /// A room's directory in `parent`; with `own_fs`, a tmpfs of its own (as large as the
    /// machine's memory allows while the copy is written; [`Room::assemble`] then sizes it).
    pub(super) fn make(parent: &Path, own_fs: Option<limits::Limits>) -> Result<Places, CliError> {
        let dir = tempfile::Builder::new()
            .prefix("patchgate-room-")
            .tempdir_in(parent)
            .map_err(|e| CliError::software(format!("cannot make the gate's directory: {e}")))?;
        if own_fs.is_some() {
            tmpfs(dir.path(), memory_available().max(1 << 30), false).map_err(|e| {
                CliError::software(format!("cannot mount the room's filesystem: {e}"))
            })?;
        }
        let root = dir.path().to_path_buf();
        let places = Places {
            tree: root.join("tree"),
            home: root.join("home"),
            tmp: root.join("tmp"),
            receipts: root.join("receipts"),
            dir,
        };
        for d in [&places.home, &places.tmp, &places.receipts] {
            std::fs::create_dir(d)
                .map_err(|e| CliError::software(format!("cannot make {}: {e}", d.display())))?;
        }
        Ok(places)
    }
}

/// The machine's available memory in bytes (`MemAvailable`), 0 when unknown.
pub(super) fn memory_available() -> u64 {
    std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|m| {
            m.lines()
                .find_map(|l| l.strip_prefix("MemAvailable:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        })
        .map_or(0, |kb| kb << 10)
}

/// Every directory under `root` (itself included) and its `lstat` key, each key taken before
/// its directory is read.
pub(super) fn directories(root: &Path) -> Vec<(PathBuf, crate::cli::export::StatKey)> {
    let mut found = Vec::new();
    let mut pending = vec![root.to_path_buf()];
    while let Some(d) = pending.pop() {
        let Ok(key) = crate::cli::export::StatKey::of(&d) else {
            continue;
        };
        if let Ok(entries) = std::fs::read_dir(&d) {
            for entry in entries.flatten() {
                if entry.file_type().is_ok_and(|t| t.is_dir()) {
                    pending.push(entry.path());
                }
            }
        }
        found.push((d, key));
    }
    found
}

/// Where rooms are made, and whether the tree fits in memory with plenty to spare
/// ([`SHM_SPARE`] beside twice the tree: the runs write there too): `$TMPDIR` when set (the
/// machine's owner chose; for a root runner, only when a room's uid can cross it); else
/// `/dev/shm` when the tree fits; else `/var/tmp`, else the system's temporary directory. A
/// root runner mounts a tmpfs of the room's own there when it fits ([`Room::assemble`]).
/// Measured on the CI machines (`scripts/bench_gate.py`): a 20,000-file tree is written to
/// tmpfs in 0.3 s and to their disk in 1 to 17 s, as the disk's state goes.
pub(super) fn room_parent(tree: &str, root: bool) -> (PathBuf, bool) {
    let shm = Path::new("/dev/shm");
    let shm_free = rustix::fs::statvfs(shm)
        .ok()
        .map_or(0, |s| s.f_bavail.saturating_mul(s.f_frsize));
    let need = crate::cli::git::tree_bytes(tree)
        .unwrap_or(u64::MAX / 4)
        .saturating_mul(2)
        .saturating_add(SHM_SPARE);
    let fits = if root {
        memory_available() >= need
    } else {
        shm_free >= need
    };
    if let Some(dir) = std::env::var_os("TMPDIR")
        .map(PathBuf::from)
        .filter(|p| p.is_dir() && (!root || crossable(p)))
    {
        return (dir, fits);
    }
    if shm.is_dir() && (fits || shm_free >= need) {
        return (shm.to_path_buf(), fits);
    }
    (
        Some(PathBuf::from("/var/tmp"))
            .filter(|p| p.is_dir())
            .unwrap_or_else(std::env::temp_dir),
        fits,
    )
}

/// Whether any user may cross `dir` and every directory above it (the `x` bit for others).
fn crossable(dir: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    dir.ancestors()
        .all(|d| std::fs::metadata(d).is_ok_and(|m| m.permissions().mode() & 0o001 != 0))
}

/// What a room in memory must leave free beside twice its tree (memory is shared with
/// everything else the machine runs).
const SHM_SPARE: u64 = 2 << 30;
