//! Who the room's runs are: started by root, a uid of the room's own outside too (so neither
//! the files nor the process count of another room are theirs), what it may write handed to
//! it, and the mount namespace of the runner's own that the room's binds and tmpfs are made
//! in.

use std::path::Path;

use super::super::error::CliError;
use super::Room;

impl Room {
    /// Which uid the room's runs are, in words.
    pub fn uid_said(&self) -> String {
        match self.uid {
            Some(uid) => format!("uid {uid}, the room's own"),
            None => format!("uid {}, the runner's", rustix::process::getuid().as_raw()),
        }
    }

    /// Gives `path` (and what it holds) to the room's uid, when it has one: what the runs may
    /// write.
    pub(super) fn own(&self, path: &Path) -> Result<(), CliError> {
        match self.uid {
            Some(uid) => hand_over(path, uid).map_err(|e| {
                CliError::software(format!("cannot hand {} over: {e}", path.display()))
            }),
            None => Ok(()),
        }
    }

    /// After the runner wrote to the copy (a mutant applied): what it wrote is the runs'
    /// again.
    pub fn settle(&self) -> Result<(), CliError> {
        self.own(&self.tree)
    }

    /// [`Room::settle`] for what the runner wrote under `path` in the copy alone.
    pub fn settle_at(&self, path: &Path) -> Result<(), CliError> {
        self.own(path)
    }
}

/// A uid of the room's own, for a runner started as root: in a range no distribution hands
/// out (above 1,000,000), from the runner's pid and a count, so rooms under way at once on a
/// machine do not share one (and so neither their files nor their process count).
pub(super) fn room_uid() -> u32 {
    static NEXT: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed) % 64;
    1_000_000 + (std::process::id() % 16_384) * 64 + n
}

/// `lchown`s `path` and everything under it to `uid` (its gid the same), links not followed;
/// what `uid` owns already is left as it is (its ctime with it: the integrity check's keys).
pub(super) fn hand_over(path: &Path, uid: u32) -> std::io::Result<()> {
    use std::os::unix::fs::MetadataExt;
    let mut pending = vec![path.to_path_buf()];
    while let Some(p) = pending.pop() {
        let meta = std::fs::symlink_metadata(&p)?;
        if meta.uid() != uid || meta.gid() != uid {
            std::os::unix::fs::lchown(&p, Some(uid), Some(uid))?;
        }
        if meta.is_dir() {
            for entry in std::fs::read_dir(&p)? {
                pending.push(entry?.path());
            }
        }
    }
    Ok(())
}

/// Whether this process has a mount namespace of its own ([`private_mounts_now`] made it):
/// the rooms' tmpfs and binds are made there, unseen by the host, and go when it ends.
static PRIVATE: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

pub(super) fn private_mounts() -> bool {
    PRIVATE.load(std::sync::atomic::Ordering::Relaxed)
}

/// For a command that opens rooms, started by root, before any thread: a mount namespace of
/// its own, every mount private (nothing it mounts reaches the host, and the kernel removes
/// it all when the process ends, even killed). Best effort: without it, rooms are directories
/// and the disk cap is per file.
pub fn private_mounts_now() {
    if !rustix::process::geteuid().is_root() {
        return;
    }
    // SAFETY: a new mount namespace changes only what paths mean to this process, which has
    // one thread here and holds no path-relative state the change could break.
    let made = unsafe { rustix::thread::unshare_unsafe(rustix::thread::UnshareFlags::NEWNS) }
        .is_ok()
        && rustix::mount::mount_change(
            "/",
            rustix::mount::MountPropagationFlags::PRIVATE
                | rustix::mount::MountPropagationFlags::REC,
        )
        .is_ok();
    PRIVATE.store(made, std::sync::atomic::Ordering::Relaxed);
}
