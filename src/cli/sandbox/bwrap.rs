//! bubblewrap's arguments for one run of a room (CONTRACT.md sections 12.2, 13 and 15.4): the
//! namespaces, the allowlisted view, each run's own `/tmp` and `/dev/shm`, its receipt
//! directory, and `/` and `/dev` made read-only once everything is mounted.

use super::super::process::Invocation;
use std::path::{Path, PathBuf};

use super::{RECEIPTS_INSIDE, Room, view};

impl Room {
    /// bubblewrap's arguments for one run (CONTRACT.md sections 12.2 and 13): a user
    /// namespace (the runner's own ids inside, no capability, no further user namespace), new
    /// PID, IPC, UTS and (unless given) network namespaces, killed with its parent, in a new
    /// session; the system's trees and what runs need of `/etc` and the toolchain directories
    /// read-only, credential files masked, a minimal `/dev`, its own `/proc`; its own `/tmp`
    /// and `/dev/shm` (tmpfs mounts sized to the memory cap, which the watch counts), `HOME` at
    /// the runner's home path, the copy at the checkout's path, its receipt directory. Mounted
    /// parents first, so each lands on what it belongs in; then `/` and `/dev` read-only.
    pub(super) fn sealed(&self, c: &mut Invocation, view: &view::View, receipts: Option<&Path>) {
        let (uid, gid) = (rustix::process::getuid(), rustix::process::getgid());
        c.args(["--unshare-user", "--disable-userns", "--uid"])
            .arg(uid.as_raw().to_string())
            .arg("--gid")
            .arg(gid.as_raw().to_string());
        c.args([
            "--cap-drop",
            "ALL",
            "--unshare-pid",
            "--unshare-ipc",
            "--unshare-uts",
            "--die-with-parent",
            "--new-session",
        ]);
        if !self.network {
            c.arg("--unshare-net");
        }
        enum Bind<'p> {
            Rw(&'p Path),
            Ro(&'p Path),
            RoOwned(PathBuf),
            Empty(bool),
        }
        let mut later: Vec<(PathBuf, Bind<'_>)> = Vec::new();
        for entry in &view.entries {
            match entry {
                view::Entry::Link(target, at) => {
                    c.arg("--symlink").arg(target).arg(at);
                }
                view::Entry::ReadOnly(p) if view::is_system(p) => {
                    c.arg("--ro-bind").arg(p).arg(p);
                }
                view::Entry::ReadOnly(p) => {
                    // Under a toolchain directory bound in the room (started by root): from
                    // there, where the room's uid reaches it.
                    let from = self
                        .sources
                        .iter()
                        .find_map(|(inside, from)| Some(from.join(p.strip_prefix(inside).ok()?)))
                        .unwrap_or_else(|| p.clone());
                    later.push((p.clone(), Bind::RoOwned(from)));
                }
                view::Entry::Masked { at, dir } => later.push((at.clone(), Bind::Empty(*dir))),
            }
        }
        c.args(["--dev", "/dev", "--proc", "/proc"]);
        // Its own `/tmp` and `/dev/shm`: each a tmpfs sized to the memory cap, counted against
        // it by the watch with the run's resident memory (CONTRACT.md section 15.4).
        let size = self.limits.memory_bytes().to_string();
        for at in ["/tmp", "/dev/shm"] {
            c.args(["--size", &size, "--tmpfs", at]);
        }
        later.push((view.home.clone(), Bind::Rw(&self.home)));
        later.push((view.tree.clone(), Bind::Rw(&self.tree)));
        if let Some(r) = receipts {
            later.push((RECEIPTS_INSIDE.into(), Bind::Rw(r)));
        }
        if let Some(git_dir) = &self.git_dir {
            let from = self
                .sources
                .iter()
                .find(|(inside, _)| inside == git_dir)
                .map_or(git_dir.as_path(), |(_, from)| from.as_path());
            later.push((view.tree.join(".git"), Bind::Ro(from)));
            // Its config can hold a token (`actions/checkout`'s `extraheader`).
            later.push((view.tree.join(".git/config"), Bind::Empty(false)));
        }
        later.sort_by_key(|(at, _)| at.components().count());
        let empty_dir = self.dir.path().join("empty");
        let empty_file = self.dir.path().join("empty-file");
        for (at, bind) in later {
            match bind {
                Bind::Rw(from) => c.arg("--bind").arg(from).arg(&at),
                Bind::Ro(from) => c.arg("--ro-bind").arg(from).arg(&at),
                Bind::RoOwned(from) => c.arg("--ro-bind").arg(from).arg(&at),
                Bind::Empty(true) => c.arg("--ro-bind").arg(&empty_dir).arg(&at),
                Bind::Empty(false) => c.arg("--ro-bind").arg(&empty_file).arg(&at),
            };
        }
        // What bubblewrap made to hold the mounts (`/`, `/dev`, the directories above each
        // bind) is a tmpfs in memory no cap counts: read-only, so nothing is written there
        // (CONTRACT.md section 15.4).
        c.args(["--remount-ro", "/dev", "--remount-ro", "/"]);
    }
}
