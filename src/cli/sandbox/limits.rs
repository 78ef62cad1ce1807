//! The sealed room's caps (CONTRACT.md section 13.3): memory, processes and bytes written, per
//! run, and how the runner tells that a run went over one.
//!
//! No cgroup is delegated on the machines this runs on (cgroup v1, or v2 without a writable
//! subtree), so the caps are held by what an unprivileged process can be given:
//! - **memory**: the runner watches the run (every process of its PID namespace, children
//!   included) and ends it when what it holds together passes the cap (CONTRACT.md section
//!   15.4): their resident memory, every file in memory one of them holds open and no path
//!   names (a memfd, a deleted file on a tmpfs), and what its own `/tmp` and `/dev/shm` hold
//!   (each a tmpfs of the run's own, sized to the cap); an address-space rlimit on each process
//!   ([`address_space_bytes`]) stops a single allocation the watch could not see in time;
//! - **processes**: the watch ends a run whose processes (threads count) reach the cap, and
//!   `RLIMIT_NPROC` at twice the cap for the room's own uid (a uid no other room and no host
//!   process has, so the count is the room's) stops a burst between two looks;
//! - **bytes written**: the room lives on a tmpfs of its own, sized to what the copy holds plus
//!   the cap (the runner mounts it in a mount namespace of its own, so it goes when the runner
//!   goes), and `RLIMIT_FSIZE` caps any one file (the run's output log with it).
//!
//! Without root (no uid of its own, no mount) the process cap is the watch alone and the disk
//! cap is the per-file rlimit: [`Mechanisms`] says so, and every answer with it.

use std::path::Path;

/// The starter's caps (`[sandbox] memory_mib`, `pids`, `disk_mib`): what a test suite of a
/// library needs with room to spare (a Rust build of a mid-sized crate peaks near 2 GiB; pytest
/// with hypothesis under 500 MiB), and far from what a 2-core CI machine holds.
pub const DEFAULT_MEMORY_MIB: u64 = 4096;
pub const DEFAULT_PIDS: u64 = 1024;
pub const DEFAULT_DISK_MIB: u64 = 8192;

/// One run's caps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    pub memory_mib: u64,
    pub pids: u64,
    pub disk_mib: u64,
}

impl Limits {
    /// The caps `[sandbox]` sets, or what is wrong with them (each at least what a plain
    /// interpreter needs to start, at most a terabyte).
    pub fn checked(memory_mib: u64, pids: u64, disk_mib: u64) -> Result<Limits, String> {
        for (name, value, least) in [
            ("memory_mib", memory_mib, 64),
            ("pids", pids, 16),
            ("disk_mib", disk_mib, 16),
        ] {
            if !(least..=1 << 20).contains(&value) {
                return Err(format!(
                    "[sandbox] {name} must be at least {least} and at most 1048576, not {value}"
                ));
            }
        }
        Ok(Limits {
            memory_mib,
            pids,
            disk_mib,
        })
    }

    pub fn memory_bytes(self) -> u64 {
        self.memory_mib << 20
    }

    pub fn disk_bytes(self) -> u64 {
        self.disk_mib << 20
    }

    /// The room uid's `RLIMIT_NPROC`: twice the process cap. The watch ends a run that holds
    /// the cap; the rlimit is what no burst between two looks can pass (a fork bomb stops at
    /// it, and the machine with it).
    pub fn nproc_backstop(self) -> u64 {
        self.pids.saturating_mul(2)
    }

    /// The address-space rlimit of each process: four times the memory cap, at least 8 GiB
    /// (address space is not memory: an interpreter maps far more than it touches, and a cap at
    /// the memory cap itself would stop honest runs). It stops one allocation so large that
    /// the watch, which looks every 50 ms, could not end the run before the machine felt it.
    pub fn address_space_bytes(self) -> u64 {
        (self.memory_bytes().saturating_mul(4)).max(8 << 30)
    }
}

/// A cap a run went over (its step names it, and the run counts as `null`): the core's one
/// type.
pub use crate::core::gate::Limit as Over;

/// Which mechanism holds each cap, as the answer says it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Mechanisms {
    pub memory: &'static str,
    pub pids: &'static str,
    pub disk: &'static str,
}

impl Mechanisms {
    /// What holds the caps: `own_uid` (the runner is root and runs each room as a uid of its
    /// own), `own_filesystem` (the room is on a tmpfs sized to its cap).
    pub fn of(own_uid: bool, own_filesystem: bool) -> Mechanisms {
        Mechanisms {
            memory: "watch+rlimit-as",
            pids: if own_uid {
                "rlimit-nproc+watch"
            } else {
                "watch"
            },
            disk: if own_filesystem {
                "tmpfs-size+rlimit-fsize"
            } else {
                "rlimit-fsize"
            },
        }
    }
}

/// What a run holds now: the resident memory of all its processes, the files in memory it
/// holds besides (memfds, deleted tmpfs files, its `/tmp` and `/dev/shm`), and how many tasks
/// (threads included: `RLIMIT_NPROC` counts them) they are.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Usage {
    pub resident_bytes: u64,
    pub in_memory_files_bytes: u64,
    pub tasks: u64,
}

impl Usage {
    /// Everything the run holds in memory.
    pub fn memory_bytes(&self) -> u64 {
        self.resident_bytes
            .saturating_add(self.in_memory_files_bytes)
    }
}

/// Filesystems whose files are memory: tmpfs (and shmem, memfd's), ramfs, hugetlbfs.
fn in_memory(fs: rustix::fs::StatFs) -> bool {
    const TMPFS: i64 = 0x0102_1994;
    const RAMFS: i64 = 0x8584_58f6;
    const HUGETLBFS: i64 = 0x9584_58f6;
    #[allow(clippy::unnecessary_cast, reason = "f_type is i64 or u32 by platform")]
    let kind = fs.f_type as i64;
    matches!(kind, TMPFS | RAMFS | HUGETLBFS)
}

/// What a run's open files and its own tmpfs mounts hold in memory, the processes `pids`
/// (each file and each filesystem counted once).
fn in_memory_files(pids: &[u32]) -> u64 {
    use std::os::unix::fs::MetadataExt;
    let mut files: std::collections::HashSet<(u64, u64)> = std::collections::HashSet::new();
    let mut filesystems = std::collections::HashSet::new();
    let mut bytes = 0u64;
    let mut looked = 0usize;
    let ours = std::fs::read_link("/proc/self/ns/mnt").ok();
    for pid in pids {
        let proc = Path::new("/proc").join(pid.to_string());
        // Its own `/tmp` and `/dev/shm` (the room's tmpfs mounts, seen through its root); a
        // process in the runner's own mount namespace (bubblewrap's outer process) sees the
        // host's, which are not the run's.
        let own_mounts = std::fs::read_link(proc.join("ns/mnt")).ok();
        let places: &[&str] = if own_mounts.is_some() && own_mounts != ours {
            &["root/tmp", "root/dev/shm"]
        } else {
            &[]
        };
        for at in places {
            if let Ok(fs) = rustix::fs::statvfs(proc.join(at))
                && let Ok(kind) = rustix::fs::statfs(proc.join(at))
                && in_memory(kind)
                && filesystems.insert(fs.f_fsid)
            {
                bytes = bytes.saturating_add(
                    fs.f_blocks
                        .saturating_sub(fs.f_bfree)
                        .saturating_mul(fs.f_frsize),
                );
            }
        }
        // A file it holds open that no path names: a memfd, a deleted tmpfs file. (A file
        // with a path is on one of the filesystems counted whole, or on disk.)
        let Ok(fds) = std::fs::read_dir(proc.join("fd")) else {
            continue;
        };
        for fd in fds.flatten() {
            looked += 1;
            if looked > 1 << 16 {
                return bytes;
            }
            let Ok(target) = std::fs::read_link(fd.path()) else {
                continue;
            };
            let target = target.to_string_lossy();
            if !(target.starts_with("/memfd:") || target.ends_with(" (deleted)")) {
                continue;
            }
            if let (Ok(meta), Ok(kind)) = (fd.path().metadata(), rustix::fs::statfs(fd.path()))
                && in_memory(kind)
                && files.insert((meta.dev(), meta.ino()))
            {
                bytes = bytes.saturating_add(meta.blocks().saturating_mul(512));
            }
        }
    }
    bytes
}

/// Process `root` and every process under it (children of its threads, and theirs), read from
/// `/proc`: a run's bubblewrap process and everything in its PID namespace (an orphan there is
/// adopted by the namespace's init, which stays under `root`). A process that ends while it is
/// read counts as what was read of it.
pub fn usage(root: u32) -> Usage {
    let page = rustix::param::page_size() as u64;
    let mut usage = Usage::default();
    let mut pending = vec![root];
    let mut pids = Vec::new();
    while let Some(pid) = pending.pop() {
        // A run holds at most its process cap; the bound keeps a malformed `/proc` finite.
        pids.push(pid);
        if pids.len() > 1 << 20 {
            break;
        }
        let dir = Path::new("/proc").join(pid.to_string());
        if let Ok(stat) = std::fs::read_to_string(dir.join("stat"))
            && let Some((_, tail)) = stat.rsplit_once(')')
        {
            // After the command: state (field 3) first, so field k is at k - 3.
            let fields: Vec<&str> = tail.split_whitespace().collect();
            let at = |k: usize| fields.get(k - 3).and_then(|f| f.parse::<u64>().ok());
            usage.tasks += at(20).unwrap_or(1);
            usage.resident_bytes += at(24).unwrap_or(0).saturating_mul(page);
        }
        let Ok(tasks) = std::fs::read_dir(dir.join("task")) else {
            continue;
        };
        for task in tasks.flatten() {
            if let Ok(children) = std::fs::read_to_string(task.path().join("children")) {
                pending.extend(
                    children
                        .split_whitespace()
                        .filter_map(|c| c.parse::<u32>().ok()),
                );
            }
        }
    }
    usage.in_memory_files_bytes = in_memory_files(&pids);
    usage
}

/// Which cap `now` is over, if any: memory past the cap, or tasks at the process cap (the
/// rlimit lets no more start, so reaching it is going over it).
pub fn over(limits: Limits, now: Usage) -> Option<Over> {
    if now.memory_bytes() > limits.memory_bytes() {
        Some(Over::OverMemory)
    } else if now.tasks >= limits.pids {
        Some(Over::OverPids)
    } else {
        None
    }
}

/// Sets the run's rlimits: to be called in the child between `fork` and `exec` (each call is
/// one system call, async-signal-safe). `nproc`: only with a uid of the room's own (for a
/// shared uid, the count would be every process of the runner's user).
pub fn apply(limits: Limits, nproc: bool) -> std::io::Result<()> {
    let set = |resource, value: u64| {
        let limit = libc::rlimit {
            rlim_cur: value,
            rlim_max: value,
        };
        // SAFETY: setrlimit reads the struct it is given and nothing else.
        if unsafe { libc::setrlimit(resource, &limit) } == 0 {
            Ok(())
        } else {
            Err(std::io::Error::last_os_error())
        }
    };
    set(libc::RLIMIT_AS, limits.address_space_bytes())?;
    set(libc::RLIMIT_FSIZE, limits.disk_bytes())?;
    set(libc::RLIMIT_CORE, 0)?;
    if nproc {
        set(libc::RLIMIT_NPROC, limits.nproc_backstop())?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const L: Limits = Limits {
        memory_mib: 100,
        pids: 10,
        disk_mib: 100,
    };

    #[test]
    fn a_run_is_over_a_cap_only_past_it() {
        let under = Usage {
            resident_bytes: 60 << 20,
            in_memory_files_bytes: 40 << 20,
            tasks: 9,
        };
        assert_eq!(over(L, under), None);
        let fat = Usage {
            resident_bytes: (100 << 20) + 1,
            in_memory_files_bytes: 0,
            tasks: 1,
        };
        assert_eq!(over(L, fat), Some(Over::OverMemory));
        // Files in memory count as memory (section 15.4).
        let held = Usage {
            resident_bytes: 1 << 20,
            in_memory_files_bytes: 100 << 20,
            tasks: 1,
        };
        assert_eq!(over(L, held), Some(Over::OverMemory));
        let many = Usage {
            resident_bytes: 0,
            in_memory_files_bytes: 0,
            tasks: 10,
        };
        assert_eq!(over(L, many), Some(Over::OverPids));
    }

    #[test]
    fn caps_out_of_range_are_refused_by_name() {
        assert!(Limits::checked(4096, 1024, 8192).is_ok());
        let e = Limits::checked(4096, 3, 8192).unwrap_err();
        assert!(e.contains("[sandbox] pids"), "{e}");
        let e = Limits::checked(0, 1024, 8192).unwrap_err();
        assert!(e.contains("[sandbox] memory_mib"), "{e}");
    }

    #[test]
    fn the_watch_sees_this_process() {
        let me = usage(std::process::id());
        assert!(me.tasks >= 1 && me.resident_bytes > 0, "{me:?}");
    }

    /// A memfd no mapping touches holds memory no RSS shows: the watch counts it.
    #[test]
    fn the_watch_counts_a_memfd_held_open() {
        use std::io::Write;
        let before = usage(std::process::id()).in_memory_files_bytes;
        let fd = rustix::fs::memfd_create("patchgate-test", rustix::fs::MemfdFlags::CLOEXEC)
            .expect("memfd");
        let mut file = std::fs::File::from(fd);
        file.write_all(&vec![1u8; 8 << 20]).expect("write");
        let after = usage(std::process::id()).in_memory_files_bytes;
        assert!(after >= before + (8 << 20), "{before} -> {after}");
    }
}
