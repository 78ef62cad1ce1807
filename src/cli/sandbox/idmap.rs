//! A root runner's toolchain directories as its rooms see them: bound in the room through an
//! id-mapped mount (Linux 5.12 and later, on a filesystem that supports it: ext4, xfs, btrfs,
//! tmpfs, overlayfs), on which what the runner owns is the room's uid's. So a room reads every
//! toolchain file the runner reads (a crate cargo unpacked with its own 0640 or 0700 modes),
//! as a runner that is not root has its rooms do. The mount is read-only, `nosuid` and
//! `nodev`: owning a file there lets the room read it, never write it, change its mode or run
//! it as anyone else. What the view does not show or masks stays unseen.

use std::io::Write;
use std::os::fd::{AsFd, AsRawFd, OwnedFd};
use std::path::Path;
use std::process::{Child, Stdio};

use super::super::process::Invocation;

/// A user namespace in which the runner's uid and gid are `uid`'s outside: what an id-mapped
/// mount maps through. Held by a process of its own (`cat`, waiting on its stdin), which ends
/// when this is dropped.
pub(super) struct Mapping {
    ns: OwnedFd,
    holder: Child,
}

impl Drop for Mapping {
    fn drop(&mut self) {
        drop(self.holder.stdin.take());
        let _ = self.holder.kill();
        let _ = self.holder.wait();
    }
}

impl Mapping {
    /// The runner's uid and gid as `uid` (and its gid, the same number).
    pub(super) fn to(uid: u32) -> std::io::Result<Mapping> {
        let cat = super::env::find_program("cat")
            .ok_or_else(|| std::io::Error::other("no `cat` to hold a user namespace"))?;
        let mut holder = Invocation::new(cat);
        // SAFETY: `unshare` is one system call, async-signal-safe, in the forked child.
        unsafe {
            holder.before_exec(|| {
                rustix::thread::unshare_unsafe(rustix::thread::UnshareFlags::NEWUSER)
                    .map_err(std::io::Error::from)
            });
        }
        let mut c = holder.command();
        c.stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        // `spawn` returns once the child has exec'd: it is in its namespace by then.
        let mut holder = c.spawn()?;
        let made = (|| {
            let proc = Path::new("/proc").join(holder.id().to_string());
            let (runner_uid, runner_gid) = (
                rustix::process::geteuid().as_raw(),
                rustix::process::getegid().as_raw(),
            );
            std::fs::OpenOptions::new()
                .write(true)
                .open(proc.join("uid_map"))?
                .write_all(format!("{runner_uid} {uid} 1\n").as_bytes())?;
            std::fs::OpenOptions::new()
                .write(true)
                .open(proc.join("gid_map"))?
                .write_all(format!("{runner_gid} {uid} 1\n").as_bytes())?;
            std::fs::File::open(proc.join("ns/user")).map(OwnedFd::from)
        })();
        match made {
            Ok(ns) => Ok(Mapping { ns, holder }),
            Err(e) => {
                let _ = holder.kill();
                let _ = holder.wait();
                Err(e)
            }
        }
    }

    /// Binds `from` (with what is mounted under it) at `at`, id-mapped through this mapping,
    /// read-only, `nosuid`, `nodev`.
    pub(super) fn bind(&self, from: &Path, at: &Path) -> std::io::Result<()> {
        use rustix::mount::{MoveMountFlags, OpenTreeFlags, move_mount, open_tree};
        let tree = open_tree(
            rustix::fs::CWD,
            from,
            OpenTreeFlags::OPEN_TREE_CLONE
                | OpenTreeFlags::OPEN_TREE_CLOEXEC
                | OpenTreeFlags::AT_RECURSIVE,
        )?;
        self.set(&tree)?;
        move_mount(
            tree.as_fd(),
            "",
            rustix::fs::CWD,
            at,
            MoveMountFlags::MOVE_MOUNT_F_EMPTY_PATH,
        )?;
        Ok(())
    }

    /// `mount_setattr(2)` on the detached tree `tree` (rustix has no wrapper).
    fn set(&self, tree: &OwnedFd) -> std::io::Result<()> {
        use nix::libc;
        /// `struct mount_attr`, `MOUNT_ATTR_SIZE_VER0`.
        #[repr(C)]
        struct MountAttr {
            attr_set: u64,
            attr_clr: u64,
            propagation: u64,
            userns_fd: u64,
        }
        const RDONLY: u64 = 0x1;
        const NOSUID: u64 = 0x2;
        const NODEV: u64 = 0x4;
        const IDMAP: u64 = 0x0010_0000;
        let attr = MountAttr {
            attr_set: IDMAP | RDONLY | NOSUID | NODEV,
            attr_clr: 0,
            propagation: 0,
            userns_fd: u64::try_from(self.ns.as_raw_fd()).unwrap_or(u64::MAX),
        };
        // SAFETY: the path is a NUL-terminated empty string, `attr` lives across the call and
        // its size is the one passed.
        let r = unsafe {
            libc::syscall(
                libc::SYS_mount_setattr,
                tree.as_raw_fd(),
                c"".as_ptr(),
                libc::AT_EMPTY_PATH | libc::AT_RECURSIVE,
                &raw const attr,
                std::mem::size_of::<MountAttr>(),
            )
        };
        if r == 0 {
            Ok(())
        } else {
            Err(std::io::Error::last_os_error())
        }
    }
}
