//! The clean room (CONTRACT.md sections 12.2 and 13): where the code under test runs. One
//! throw-away directory per gate holds a fresh copy of the judged tree (from git's objects, no
//! `.git`), a private `HOME` and each run's private `/tmp`; every run starts there, inside
//! bubblewrap (new user, PID, IPC and network namespaces, no capability, `--die-with-parent`,
//! a new session) with an allowlisted environment and an allowlisted filesystem ([`view`]):
//! the copy at the checkout's own path, `HOME` at the runner's home path. Started by root, a
//! room's runs are a uid of their own outside too, and the room is a tmpfs of its own sized to
//! its disk cap ([`limits`]). `[sandbox] mode = "off"` keeps the copy and the environment but
//! runs without the namespaces or caps, and says so in every answer.

mod bwrap;
mod env;
mod idmap;
mod integrity;
pub mod limits;
mod place;
mod settings;
mod uid;
pub mod view;

pub use settings::{SandboxConfig, SandboxGit, SandboxMode};
pub use uid::private_mounts_now;
use uid::{hand_over, private_mounts, room_uid};

use env::{environment, find_program};
use place::{Places, directories, room_parent, tmpfs};

use super::process::Invocation;
use super::progress::{Cache, Event};
use std::ffi::OsString;
use std::path::{Path, PathBuf};

use super::build_cache::BuildCache;
use super::error::CliError;
// How the runs are isolated, as every answer says it (`sandbox`): the core's one type.
use crate::core::gate::SandboxBackend as Backend;

/// One gate's clean room: the copy of the judged tree the runs share, and how they start.
pub struct Room {
    dir: tempfile::TempDir,
    /// The copy of the judged tree: every run's working directory.
    pub tree: PathBuf,
    /// Every file of the copy as it was written: what a run may not change.
    tracked: Vec<super::export::Tracked>,
    /// Every directory of the copy and its `lstat` key, taken before any run: a directory
    /// whose key is the same had nothing added, removed or renamed in it.
    dirs: Vec<(PathBuf, super::export::StatKey)>,
    /// Files the runner itself wrote into the copy (a turned twin): never counted as created
    /// by a run ([`Room::created_files`]).
    placed: std::sync::Mutex<Vec<PathBuf>>,
    home: PathBuf,
    /// Where runs write their receipts (CONTRACT.md section 11.1): outside the copy, a fresh
    /// directory for every run.
    receipts: PathBuf,
    /// How many receipt directories were handed out.
    issued: std::sync::atomic::AtomicU32,
    pub backend: Backend,
    bwrap: PathBuf,
    env: Vec<(OsString, OsString)>,
    network: bool,
    git_dir: Option<PathBuf>,
    /// What the runs see (bubblewrap only).
    view: Option<view::View>,
    /// Where each toolchain directory of the view is bound from: itself, or (started by root)
    /// its bind in the room, which the room's uid can reach.
    sources: Vec<(PathBuf, PathBuf)>,
    /// Started by root with a mount namespace of its own: whether the toolchain directories
    /// are bound id-mapped (read as the runner reads them) or, where the kernel or filesystem
    /// cannot, plainly (read as their modes allow the room's uid), and why.
    mapped: Option<Result<(), String>>,
    /// Started by root: the uid (and gid) outside that the room's runs are, its own.
    uid: Option<u32>,
    limits: limits::Limits,
    /// The room is a tmpfs of its own, sized to its disk cap (unmounted when dropped).
    own_fs: bool,
}

impl Drop for Room {
    fn drop(&mut self) {
        if self.own_fs {
            // Lazily, with every bind in it: what a run left open cannot keep it.
            let _ = rustix::mount::unmount(self.dir.path(), rustix::mount::UnmountFlags::DETACH);
        }
    }
}

/// Where a run sees its receipt directory (a bubblewrap run; outside it is in the room).
const RECEIPTS_INSIDE: &str = "/tmp/junit";

impl Room {
    /// Makes the room for `tree` (a tree id of the repository in the current directory), or,
    /// under `mode = "required"` without bubblewrap, not at all (69, saying what to install).
    /// Whether bubblewrap can seal it here is the runner's first run in it
    /// (`open_room` in `cli/runner.rs`, the one way a room is opened).
    /// With a build `cache`, the files the cache's tree has too get its source time and the
    /// cache is copied in (see [`super::build_cache`]).
    pub fn unprobed(
        config: &SandboxConfig,
        tree: &str,
        cache: Option<&BuildCache>,
    ) -> Result<Room, CliError> {
        let bwrap = find_program("bwrap");
        let backend = match config.mode {
            SandboxMode::Off => Backend::Off,
            SandboxMode::Required => {
                if bwrap.is_none() {
                    return Err(CliError::unavailable(
                        "[sandbox] mode = \"required\" and bubblewrap is not installed: install it (Debian/Ubuntu: apt-get install bubblewrap), or set mode = \"off\" in the base's config to run the code under test unconfined",
                    ));
                }
                Backend::Bubblewrap
            }
        };
        let limits = config.limits().map_err(CliError::data)?;
        let sealed = backend == Backend::Bubblewrap;
        let view = if sealed {
            let checkout = super::git::git(&["rev-parse", "--show-toplevel"])?;
            let checkout = PathBuf::from(String::from_utf8_lossy(&checkout).trim());
            let home = std::env::var_os("HOME").map(PathBuf::from);
            let programs: Vec<&str> = config.programs.iter().map(String::as_str).collect();
            let var = |n: &str| std::env::var_os(n);
            Some(
                view::plan(&view::Inputs {
                    checkout: &checkout,
                    home: home.as_deref(),
                    programs: &programs,
                    expose: &config.expose,
                    mask: &config.mask,
                    var: &var,
                })
                .map_err(CliError::data)?,
            )
        } else {
            None
        };
        let root = sealed && rustix::process::geteuid().is_root();
        let (parent, fits) = room_parent(tree, root);
        let own_fs = root && fits && private_mounts();
        let places = Places::make(&parent, own_fs.then_some(limits))?;
        let copy = places.tree.clone();
        std::fs::create_dir(&copy)
            .map_err(|e| CliError::software(format!("cannot make {}: {e}", copy.display())))?;
        let started = std::time::Instant::now();
        let aged = cache.map(|c| move |e: &super::export::TreeEntry| c.unchanged(e));
        let tracked = super::export::export_tree(
            tree,
            &copy,
            aged.as_ref()
                .map(|f| f as &dyn Fn(&super::export::TreeEntry) -> bool),
        )?;
        let files = tracked.len();
        let restored = cache.map(|c| (c, c.restore(&copy)));
        super::progress::say(Event::RoomCopied {
            tree: short(tree).to_owned(),
            files,
            seconds: started.elapsed().as_secs_f64(),
            cache: match restored {
                None => Cache::None,
                Some((c, Ok(()))) => Cache::Restored {
                    tree: short(&c.tree).to_owned(),
                },
                Some((c, Err(why))) => Cache::NotRestored {
                    tree: short(&c.tree).to_owned(),
                    why: why.to_string(),
                },
            },
            backend: match backend {
                Backend::Bubblewrap => "bubblewrap",
                Backend::Off => "no sandbox ([sandbox] mode = \"off\")",
            },
        });
        let git_dir = match config.git {
            SandboxGit::None => None,
            SandboxGit::ReadOnly => {
                let out = super::git::git(&["rev-parse", "--absolute-git-dir"])?;
                Some(PathBuf::from(String::from_utf8_lossy(&out).trim()))
            }
        };
        let mut env = environment(
            &config.env,
            view.as_ref().map_or(&places.home, |v| &v.home),
            &places.tmp,
            backend,
        );
        if git_dir.is_some() && root {
            // The git directory is root's and the copy the room's uid's: git's ownership
            // check would refuse the repository it was mounted for.
            for (k, v) in [
                ("GIT_CONFIG_COUNT", "1"),
                ("GIT_CONFIG_KEY_0", "safe.directory"),
                ("GIT_CONFIG_VALUE_0", "*"),
            ] {
                env.push((k.into(), v.into()));
            }
        }
        let launch = Launch {
            env,
            backend,
            bwrap: bwrap.unwrap_or_else(|| PathBuf::from("bwrap")),
            network: config.network,
            git_dir,
            view,
            uid: root.then(room_uid),
            limits,
            own_fs,
        };
        Room::assemble(places, copy, tracked, launch)
    }

    /// The command that runs `argv` in the room: in the copy, with the room's environment,
    /// inside the sandbox unless it is off; `receipts`, the run's own receipt directory, is
    /// all of the receipts it can write.
    pub fn invocation(
        &self,
        argv: &[String],
        receipts: Option<&Path>,
    ) -> Result<Invocation, CliError> {
        let (program, args) = argv
            .split_first()
            .ok_or_else(|| CliError::software("empty command"))?;
        let mut command = match (&self.view, self.backend) {
            (Some(view), Backend::Bubblewrap) => {
                let mut c = Invocation::new(&self.bwrap);
                self.sealed(&mut c, view, receipts);
                c.arg("--chdir")
                    .arg(&view.tree)
                    .arg("--")
                    .arg(program)
                    .args(args);
                if let Some(uid) = self.uid {
                    c.uid(uid);
                }
                let limits = self.limits;
                let nproc = self.uid.is_some();
                // SAFETY: `apply` makes only setrlimit calls, async-signal-safe.
                unsafe {
                    c.before_exec(move || limits::apply(limits, nproc));
                }
                c
            }
            _ => {
                let mut c = Invocation::new(program);
                c.args(args).dir(&self.tree);
                c
            }
        };
        command.env_only(&self.env);
        Ok(command)
    }

    /// The caps a run here has (none with the sandbox off).
    pub fn limits(&self) -> Option<limits::Limits> {
        self.view.as_ref().map(|_| self.limits)
    }

    /// Whether the room's own filesystem is full: a run that ended so went over its disk cap.
    pub fn disk_full(&self) -> bool {
        self.own_fs
            && rustix::fs::statvfs(self.dir.path())
                .is_ok_and(|s| s.f_bavail.saturating_mul(s.f_frsize) < DISK_FULL)
    }

    /// Which mechanism holds each cap here.
    pub fn mechanisms(&self) -> limits::Mechanisms {
        limits::Mechanisms::of(self.uid.is_some(), self.own_fs)
    }

    /// The directories a run sees and the credential paths masked in them (empty with the
    /// sandbox off).
    pub fn seen(&self) -> (Vec<String>, Vec<String>) {
        self.view
            .as_ref()
            .map(|v| (v.saw(), v.masked()))
            .unwrap_or_default()
    }

    /// The room as the facts say it (CONTRACT.md section 13), with the runs `over` ended;
    /// `None` with the sandbox off.
    pub fn facts(&self, over: &[(String, limits::Over)]) -> Option<crate::core::gate::RoomFacts> {
        use crate::core::gate::{OverLimit, RoomFacts, RoomUid};
        let (saw, masked) = self.seen();
        self.view.as_ref()?;
        let m = self.mechanisms();
        Some(RoomFacts {
            saw,
            masked,
            uid: if self.uid.is_some() {
                RoomUid::Own
            } else {
                RoomUid::Runner
            },
            memory_mib: self.limits.memory_mib,
            pids: self.limits.pids,
            disk_mib: self.limits.disk_mib,
            held_by: crate::core::gate::HeldBy {
                memory: m.memory.to_owned(),
                pids: m.pids.to_owned(),
                disk: m.disk.to_owned(),
            },
            over: over
                .iter()
                .take(100)
                .map(|(run, o)| OverLimit {
                    run: run.clone(),
                    limit: *o,
                })
                .collect(),
        })
    }

    /// A file for a run's output, in the room (on its capped filesystem when it has one),
    /// removed when closed.
    pub fn log_file(&self) -> std::io::Result<std::fs::File> {
        tempfile::tempfile_in(self.dir.path())
    }

    /// Where a run sees its receipt `path` (given in its command).
    pub fn receipt_inside(&self, path: &Path) -> PathBuf {
        match (&self.view, path.file_name()) {
            (Some(_), Some(name)) => Path::new(RECEIPTS_INSIDE).join(name),
            _ => path.to_path_buf(),
        }
    }

    /// The room is sealed by bubblewrap: before its first run, the runner starts `true` in it
    /// once (bubblewrap installed is not bubblewrap working: a CI runner may forbid
    /// unprivileged user namespaces), [`Room::unsealable`] when it fails, and says what the
    /// runs see ([`Room::say_view`]) before any run counts.
    pub fn sealed_by_bubblewrap(&self) -> bool {
        self.view.is_some() && self.backend == Backend::Bubblewrap
    }

    /// Bubblewrap could not make the room (`said`: what it said): why, and what to change.
    pub fn unsealable(&self, said: &str) -> CliError {
        let hint = if self.uid.is_some() && !private_mounts() {
            " (the runner is root without a mount namespace of its own, so the room's uid must reach every toolchain directory by itself: one below a 0700 home cannot be; give the runner CAP_SYS_ADMIN, or install the toolchains where any user can read them)"
        } else {
            ""
        };
        CliError::unavailable(format!(
            "[sandbox] mode = \"required\" and bubblewrap cannot make its room here ({}){hint}: allow unprivileged user namespaces (sysctl kernel.unprivileged_userns_clone=1; on Ubuntu 24.04 also kernel.apparmor_restrict_unprivileged_userns=0; in a container, run it with --security-opt seccomp=unconfined or a profile allowing clone and unshare), or set mode = \"off\" in the base's config",
            said.trim()
        ))
    }

    /// Says on stderr what the runs see and what caps them.
    pub fn say_view(&self) {
        let (_, masked) = self.seen();
        let m = self.mechanisms();
        super::progress::say(Event::RoomSealed {
            view: format!(
                "{}{}; as {}; caps: memory {} MiB ({}), {} processes ({}), {} MiB written ({})",
                self.view
                    .as_ref()
                    .map_or_else(String::new, view::View::said),
                if masked.is_empty() {
                    String::new()
                } else {
                    format!("; masked: {}", masked.join(", "))
                },
                match (self.uid, &self.mapped) {
                    (Some(uid), Some(Ok(()))) => format!(
                        "uid {uid} (the room's own), which reads the toolchain directories as the runner does (id-mapped, read-only)"
                    ),
                    (Some(uid), Some(Err(why))) => format!(
                        "uid {uid} (the room's own), which reads the toolchain directories as their modes allow it (no id-mapped mount here: {why})"
                    ),
                    (Some(uid), None) => format!("uid {uid} (the room's own)"),
                    (None, _) => "the runner's uid in a user namespace".to_owned(),
                },
                self.limits.memory_mib,
                m.memory,
                self.limits.pids,
                m.pids,
                self.limits.disk_mib,
                m.disk,
            ),
        });
    }
}

/// Free bytes below which a room's filesystem counts as full.
const DISK_FULL: u64 = 1 << 20;

impl Room {
    /// A fresh path for the next run's receipt: in a directory of its own, new and empty
    /// (whatever an earlier run left, or planted for this one, is gone), which only this run
    /// can write.
    pub fn fresh_receipt(&self) -> Result<PathBuf, CliError> {
        let n = self
            .issued
            .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        let dir = self.receipts.join(format!("run-{n}"));
        match std::fs::remove_dir_all(&dir) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => {
                return Err(CliError::software(format!(
                    "cannot empty the receipt directory {}: {e}",
                    dir.display()
                )));
            }
        }
        std::fs::create_dir(&dir).map_err(|e| {
            CliError::software(format!(
                "cannot make the receipt directory {}: {e}",
                dir.display()
            ))
        })?;
        self.own(&dir)?;
        Ok(dir.join("junit.xml"))
    }

    /// A second room holding a copy of this one's tree as it is now (the build's output with
    /// it: `cp -a`, reflinks where the file system has them), its own `HOME`, `/tmp` and
    /// receipts: where a run goes whose evidence must not depend on the runs in this one (the
    /// suite, started while the properties run; a re-proof, its mutant applied to the built
    /// copy, CONTRACT.md section 11.10). Not hard links (`cp -al`, 5 times faster):
    /// a file written in place in one would be written in both, and a suite that rewrites a
    /// source file would change what the property runs beside it see. The tracked files must
    /// be unchanged (checked just before): they are what a run there may not change either.
    pub fn fork(&self, purpose: &str) -> Result<Room, CliError> {
        let started = std::time::Instant::now();
        let from = self.dir.path();
        let parent = from.parent().unwrap_or(from);
        let places = Places::make(parent, self.own_fs.then_some(self.limits))?;
        let copy = places.tree.clone();
        super::build_cache::copy_keeping_times(&self.tree, &copy)
            .map_err(|why| CliError::software(format!("cannot copy the room's tree: {why}")))?;
        // The same files, their keys taken in the copy.
        let mut tracked: Vec<super::export::Tracked> = self
            .tracked
            .iter()
            .map(|t| t.moved(&self.tree, &copy))
            .collect();
        super::export::Tracked::restat(&mut tracked);
        super::progress::say(Event::RoomForked {
            purpose: purpose.to_owned(),
            seconds: started.elapsed().as_secs_f64(),
        });
        let env = self
            .env
            .iter()
            .map(|(k, v)| {
                let v = if v == self.home.as_os_str() {
                    places.home.clone().into_os_string()
                } else if v == from.join("tmp").as_os_str() {
                    places.tmp.clone().into_os_string()
                } else {
                    v.clone()
                };
                (k.clone(), v)
            })
            .collect();
        let launch = Launch {
            env,
            backend: self.backend,
            bwrap: self.bwrap.clone(),
            network: self.network,
            git_dir: self.git_dir.clone(),
            view: self.view.clone(),
            uid: self.uid.map(|_| room_uid()),
            limits: self.limits,
            own_fs: self.own_fs,
        };
        // What the runner placed or the build built is the fork's own too, where the copy has it.
        let placed: Vec<PathBuf> = self
            .placed
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .iter()
            .filter_map(|p| p.strip_prefix(&self.tree).ok().map(|r| copy.join(r)))
            .collect();
        let room = Room::assemble(places, copy, tracked, launch)?;
        room.placed
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .extend(placed);
        Ok(room)
    }
}

/// How a room's runs start: what [`Room::open`] finds out and [`Room::fork`] keeps.
struct Launch {
    env: Vec<(OsString, OsString)>,
    backend: Backend,
    bwrap: PathBuf,
    network: bool,
    git_dir: Option<PathBuf>,
    view: Option<view::View>,
    uid: Option<u32>,
    limits: limits::Limits,
    own_fs: bool,
}

impl Room {
    /// The room in `places`, its copy at `copy` written as `tracked` says: its filesystem
    /// sized to what the copy holds plus the disk cap, the copy and `HOME` handed to the
    /// room's uid, and (started by root) each toolchain directory bound inside the room,
    /// where that uid reaches it whatever the modes of the directories above it (a home is
    /// 0700).
    fn assemble(
        places: Places,
        copy: PathBuf,
        mut tracked: Vec<super::export::Tracked>,
        launch: Launch,
    ) -> Result<Room, CliError> {
        if let Some(uid) = launch.uid {
            // Before the keys a run is checked against are taken: a new owner is a new ctime.
            hand_over(&copy, uid)
                .map_err(|e| CliError::software(format!("cannot hand the copy over: {e}")))?;
            super::export::Tracked::restat(&mut tracked);
        }
        let mut room = Room {
            dirs: directories(&copy),
            placed: std::sync::Mutex::default(),
            tree: copy,
            tracked,
            home: places.home,
            receipts: places.receipts,
            dir: places.dir,
            issued: std::sync::atomic::AtomicU32::new(0),
            backend: launch.backend,
            bwrap: launch.bwrap,
            env: launch.env,
            network: launch.network,
            git_dir: launch.git_dir,
            view: launch.view,
            sources: Vec::new(),
            mapped: None,
            uid: launch.uid,
            limits: launch.limits,
            own_fs: launch.own_fs,
        };
        let fail = |what: &str, e: &dyn std::fmt::Display| {
            CliError::software(format!("cannot {what} the room: {e}"))
        };
        if room.own_fs {
            let used = rustix::fs::statvfs(room.dir.path())
                .map(|s| (s.f_blocks - s.f_bfree).saturating_mul(s.f_frsize))
                .map_err(|e| fail("measure", &e))?;
            tmpfs(room.dir.path(), used + room.limits.disk_bytes(), true)
                .map_err(|e| fail("size", &e))?;
        }
        if room.view.is_some() {
            std::fs::create_dir(room.dir.path().join("empty")).map_err(|e| fail("make", &e))?;
            std::fs::write(room.dir.path().join("empty-file"), "").map_err(|e| fail("make", &e))?;
        }
        if let Some(uid) = room.uid {
            use std::os::unix::fs::PermissionsExt;
            // The room's uid crosses the room's directory to its parts, and reads nothing
            // else in it.
            std::fs::set_permissions(room.dir.path(), std::fs::Permissions::from_mode(0o711))
                .map_err(|e| fail("open", &e))?;
            for p in [&room.home, &room.receipts] {
                hand_over(p, uid).map_err(|e| fail("hand over", &e))?;
            }
            if private_mounts() {
                let toolchains: Vec<PathBuf> = room
                    .view
                    .iter()
                    .flat_map(|v| v.toolchains().map(Path::to_path_buf))
                    .collect();
                // One mapping for the room's binds; a failure to make one is said, and the
                // binds are plain.
                let mut mapping = (!toolchains.is_empty())
                    .then(|| idmap::Mapping::to(uid).map_err(|e| e.to_string()));
                let git = room.git_dir.iter().map(|d| (d.clone(), false));
                let dirs: Vec<(PathBuf, bool)> = toolchains
                    .into_iter()
                    .map(|d| (d, true))
                    .chain(git)
                    .collect();
                for (n, (d, toolchain)) in dirs.into_iter().enumerate() {
                    let at = room.dir.path().join("ro").join(n.to_string());
                    std::fs::create_dir_all(&at).map_err(|e| fail("make", &e))?;
                    let mapped = match &mapping {
                        Some(Ok(m)) if toolchain => {
                            m.bind(&d, &at).map_err(|e| format!("{}: {e}", d.display()))
                        }
                        _ => Err(String::new()),
                    };
                    if let Err(why) = mapped {
                        if !why.is_empty() {
                            mapping = Some(Err(why));
                        }
                        rustix::mount::mount_bind_recursive(&d, &at)
                            .map_err(|e| fail(&format!("bind {} in", d.display()), &e))?;
                    }
                    room.sources.push((d, at));
                }
                room.mapped = mapping.map(|m| m.map(drop));
            }
        }
        Ok(room)
    }
}

/// A tree id as the messages show it.
fn short(tree: &str) -> &str {
    &tree[..tree.len().min(12)]
}

/// Before anything runs: makes the runner unreadable to the code it runs
/// (`PR_SET_DUMPABLE` 0: no ptrace, no `/proc/PID/mem` or `environ` for a process of the same
/// user), and the child subreaper of everything it starts (`PR_SET_CHILD_SUBREAPER`: a process
/// a run leaves behind, even after `setsid` or a double fork, becomes the runner's child, so
/// the runner can end it after each run; CONTRACT.md section 11.4).
pub fn harden_runner() {
    let _ = nix::sys::prctl::set_dumpable(false);
    let _ = nix::sys::prctl::set_child_subreaper(true);
}
