//! The clean room (CONTRACT.md section 12.2): where the code under test runs. One throw-away
//! directory per gate holds a fresh copy of the judged tree (from git's objects, no `.git`),
//! a private `HOME` and a private `/tmp`; every run starts there, inside bubblewrap (new PID,
//! IPC and network namespaces, everything else read-only, `--die-with-parent`, a new
//! session) with an allowlisted environment. `[sandbox] mode = "off"` keeps the copy and the
//! environment but runs without the namespaces, and says so in every answer.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde::Deserialize;

use super::build_cache::BuildCache;
use super::error::CliError;
// How the runs are isolated, as every answer says it (`sandbox`): the core's one type.
use crate::core::gate::SandboxBackend as Backend;

/// `[sandbox]`: how every run is isolated from the runner and the machine.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SandboxConfig {
    /// `required` (the default and the starter's): no run without a working sandbox (69);
    /// `off`: runs as the runner's user, and every answer says `sandbox: off`.
    #[serde(default)]
    pub mode: SandboxMode,
    /// Give the runs the network (default: none).
    #[serde(default)]
    pub network: bool,
    /// More of the environment the runs see: `NAME` (passed when the runner has it) or
    /// `NAME=value`. `PATCHGATE_*` never passes.
    #[serde(default)]
    pub env: Vec<String>,
    /// `none` (the default): the copy has no `.git`; `read-only`: the repository's git
    /// directory is mounted read-only at the copy's `.git`.
    #[serde(default)]
    pub git: SandboxGit,
}

/// `[sandbox] mode`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SandboxMode {
    #[default]
    Required,
    Off,
}

/// `[sandbox] git`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SandboxGit {
    #[default]
    None,
    ReadOnly,
}

/// What every run sees of the runner's environment, beside what `[sandbox] env` names: the
/// search path, the language, and where the toolchains live (never a secret).
pub const ENV_ALLOWED: [&str; 10] = [
    "PATH",
    "LANG",
    "LC_ALL",
    "TZ",
    "PYENV_ROOT",
    "PYENV_VERSION",
    "VIRTUAL_ENV",
    "RUSTUP_HOME",
    "RUSTUP_TOOLCHAIN",
    "CARGO_HOME",
];

/// Toolchain homes that default to a directory in the user's `HOME`: with the runs' `HOME`
/// private, the runner names the real one (read-only to the runs).
const HOME_DEFAULTS: [(&str, &str); 3] = [
    ("RUSTUP_HOME", ".rustup"),
    ("CARGO_HOME", ".cargo"),
    ("PYENV_ROOT", ".pyenv"),
];

/// One gate's clean room: the copy of the judged tree the runs share, and how they start.
pub struct Room {
    _dir: tempfile::TempDir,
    /// The copy of the judged tree: every run's working directory.
    pub tree: PathBuf,
    /// Every file of the copy as it was written: what a run may not change.
    tracked: Vec<super::export::Tracked>,
    /// Every directory of the copy and its `lstat` key, taken before any run: a directory
    /// whose key is the same had nothing added, removed or renamed in it.
    dirs: Vec<(PathBuf, super::export::StatKey)>,
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
}

impl Room {
    /// Makes the room for `tree` (a tree id of the repository in the current directory),
    /// with a working sandbox or, under `mode = "required"`, not at all (69, saying what to
    /// install).
    /// With a build `cache`, the files the cache's tree has too get its source time and the
    /// cache is copied in (see [`super::build_cache`]).
    pub fn open(
        config: &SandboxConfig,
        tree: &str,
        cache: Option<&BuildCache>,
    ) -> Result<Room, CliError> {
        let bwrap = find_program("bwrap");
        let backend = match config.mode {
            SandboxMode::Off => Backend::Off,
            SandboxMode::Required => {
                let bwrap = bwrap.as_deref().ok_or_else(|| {
                    CliError::unavailable(
                        "[sandbox] mode = \"required\" and bubblewrap is not installed: install it (Debian/Ubuntu: apt-get install bubblewrap), or set mode = \"off\" in the base's config to run the code under test unconfined",
                    )
                })?;
                probe(bwrap)?;
                Backend::Bubblewrap
            }
        };
        let places = Places::make(&room_parent(tree))?;
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
        super::output::error(&format!(
            "clean room: tree {} copied ({files} files, {:.2} s){}; runs in {}",
            short(tree),
            started.elapsed().as_secs_f64(),
            match restored {
                None => String::new(),
                Some((c, Ok(()))) =>
                    format!(", the build cache of tree {} restored", short(&c.tree)),
                Some((c, Err(why))) => format!(
                    ", the build cache of tree {} not restored ({why}): the build starts cold",
                    short(&c.tree)
                ),
            },
            match backend {
                Backend::Bubblewrap => "bubblewrap",
                Backend::Off => "no sandbox ([sandbox] mode = \"off\")",
            }
        ));
        let git_dir = match config.git {
            SandboxGit::None => None,
            SandboxGit::ReadOnly => {
                let out = super::git::git(&["rev-parse", "--absolute-git-dir"])?;
                Some(PathBuf::from(String::from_utf8_lossy(&out).trim()))
            }
        };
        let launch = Launch {
            env: environment(&config.env, &places.home, &places.tmp, backend),
            backend,
            bwrap: bwrap.unwrap_or_else(|| PathBuf::from("bwrap")),
            network: config.network,
            git_dir,
        };
        Ok(Room::assemble(places, copy, tracked, launch))
    }

    /// The command that runs `argv` in the room: in the copy, with the room's environment,
    /// inside the sandbox unless it is off; `receipts`, the run's own receipt directory, is
    /// all of the receipts it can write.
    pub fn command(&self, argv: &[String], receipts: Option<&Path>) -> Result<Command, CliError> {
        let (program, args) = argv
            .split_first()
            .ok_or_else(|| CliError::software("empty command"))?;
        let mut command = match self.backend {
            Backend::Off => {
                let mut c = Command::new(program);
                c.args(args).current_dir(&self.tree);
                c
            }
            Backend::Bubblewrap => {
                let mut c = Command::new(&self.bwrap);
                c.args(isolation(self.network));
                c.arg("--bind").arg(&self.tree).arg(TREE_INSIDE);
                for writable in [Some(self.home.as_path()), receipts].into_iter().flatten() {
                    c.arg("--bind").arg(writable).arg(writable);
                }
                if let Some(git_dir) = &self.git_dir {
                    c.arg("--ro-bind")
                        .arg(git_dir)
                        .arg(Path::new(TREE_INSIDE).join(".git"));
                }
                c.arg("--chdir")
                    .arg(TREE_INSIDE)
                    .arg("--")
                    .arg(program)
                    .args(args);
                c
            }
        };
        command
            .env_clear()
            .envs(self.env.iter().map(|(k, v)| (k, v)));
        Ok(command)
    }
}

/// Where every sandboxed run sees the copy of the judged tree, whichever room holds it: one
/// path for the build of the base (`patchgate warm`) and every run after it, so what a build
/// tool keeps by absolute path (rustc's incremental data, dep-info) is the same in each room,
/// and the paths in failure messages are the same from one gate to the next. In the run's own
/// `/tmp` (a fresh tmpfs); the room's real path is not bound.
pub const TREE_INSIDE: &str = "/tmp/tree";

impl Room {
    /// The tracked files of the copy a run changed, deleted or changed the mode of, by
    /// content against the judged tree (CONTRACT.md section 11.3).
    pub fn changed_files(&self) -> Result<Vec<String>, CliError> {
        super::export::changed_since_export(&self.tracked, &self.tree)
    }

    /// Whether `dir` (a directory of the copy) holds anything but tracked files and
    /// directories: a file, link or other entry a run added. With no tracked file changed
    /// ([`Room::changed_files`]) and none added, what `dir` holds is what was judged, and
    /// its seal with it, without hashing it again. An unreadable entry counts as added.
    pub fn added_under(&self, dir: &str) -> bool {
        let top = self.tree.join(dir);
        let mut under = self
            .dirs
            .iter()
            .filter(|(d, _)| d.starts_with(&top))
            .peekable();
        if under.peek().is_some()
            && under.all(|(d, key)| super::export::StatKey::of(d).is_ok_and(|now| now == *key))
        {
            return false;
        }
        let tracked: std::collections::HashSet<&Path> =
            self.tracked.iter().map(|t| t.path.as_path()).collect();
        let mut pending = vec![self.tree.join(dir)];
        while let Some(d) = pending.pop() {
            let entries = match std::fs::read_dir(&d) {
                Ok(e) => e,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
                Err(_) => return true,
            };
            for entry in entries {
                let Ok(entry) = entry else { return true };
                let path = entry.path();
                match entry.file_type() {
                    Ok(t) if t.is_dir() => pending.push(path),
                    Ok(_) if tracked.contains(path.as_path()) => {}
                    _ => return true,
                }
            }
        }
        false
    }

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
        let from = self.tree.parent().unwrap_or(&self.tree);
        let places = Places::make(from.parent().unwrap_or(from))?;
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
        super::output::error(&format!(
            "clean room: a second copy for {purpose} ({:.2} s)",
            started.elapsed().as_secs_f64()
        ));
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
        };
        Ok(Room::assemble(places, copy, tracked, launch))
    }
}

/// A room's directory (removed when dropped) and where its parts go: `tree` (not made: the
/// copy is written there), and `home`, `tmp` and `receipts` (made, empty).
/// How a room's runs start: what [`Room::open`] finds out and [`Room::fork`] keeps.
struct Launch {
    env: Vec<(OsString, OsString)>,
    backend: Backend,
    bwrap: PathBuf,
    network: bool,
    git_dir: Option<PathBuf>,
}

impl Room {
    /// The room in `places`, its copy at `copy` written as `tracked` says.
    fn assemble(
        places: Places,
        copy: PathBuf,
        tracked: Vec<super::export::Tracked>,
        launch: Launch,
    ) -> Room {
        Room {
            _dir: places.dir,
            dirs: directories(&copy),
            tree: copy,
            tracked,
            home: places.home,
            receipts: places.receipts,
            issued: std::sync::atomic::AtomicU32::new(0),
            backend: launch.backend,
            bwrap: launch.bwrap,
            env: launch.env,
            network: launch.network,
            git_dir: launch.git_dir,
        }
    }
}

struct Places {
    dir: tempfile::TempDir,
    tree: PathBuf,
    home: PathBuf,
    tmp: PathBuf,
    receipts: PathBuf,
}

impl Places {
    fn make(parent: &Path) -> Result<Places, CliError> {
        let dir = tempfile::Builder::new()
            .prefix("patchgate-room-")
            .tempdir_in(parent)
            .map_err(|e| CliError::software(format!("cannot make the gate's directory: {e}")))?;
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

/// A tree id as the messages show it.
fn short(tree: &str) -> &str {
    &tree[..tree.len().min(12)]
}

/// Every directory under `root` (itself included) and its `lstat` key, each key taken before
/// its directory is read.
fn directories(root: &Path) -> Vec<(PathBuf, super::export::StatKey)> {
    let mut found = Vec::new();
    let mut pending = vec![root.to_path_buf()];
    while let Some(d) = pending.pop() {
        let Ok(key) = super::export::StatKey::of(&d) else {
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

/// Where rooms are made: `$TMPDIR` when set (the machine's owner chose); else `/dev/shm`
/// when it has room for the tree with plenty to spare ([`SHM_SPARE`] beside twice the tree:
/// the runs write there too); else `/var/tmp`, else the system's temporary directory.
/// Measured on the CI machines (`scripts/bench_gate.py`): a 20,000-file tree is written to
/// tmpfs in 0.3 s and to their disk in 1 to 17 s, as the disk's state goes.
fn room_parent(tree: &str) -> PathBuf {
    if let Some(dir) = std::env::var_os("TMPDIR")
        .map(PathBuf::from)
        .filter(|p| p.is_dir())
    {
        return dir;
    }
    let shm = Path::new("/dev/shm");
    let free = rustix::fs::statvfs(shm)
        .ok()
        .map(|s| s.f_bavail.saturating_mul(s.f_frsize));
    let need = super::git::tree_bytes(tree)
        .unwrap_or(u64::MAX / 4)
        .saturating_mul(2)
        .saturating_add(SHM_SPARE);
    if shm.is_dir() && free.is_some_and(|f| f >= need) {
        return shm.to_path_buf();
    }
    Some(PathBuf::from("/var/tmp"))
        .filter(|p| p.is_dir())
        .unwrap_or_else(std::env::temp_dir)
}

/// What a room on `/dev/shm` must leave free beside twice its tree (memory is shared with
/// everything else the machine runs).
const SHM_SPARE: u64 = 2 << 30;

/// bubblewrap's arguments for one run, before the writable binds: everything read-only,
/// fresh `/dev`, `/proc` and `/tmp`, new PID, IPC and (unless given) network namespaces,
/// killed with its parent, in a new session (no terminal to push input into), and no
/// capability left: bubblewrap started by root keeps every capability unless told, and with
/// `CAP_SYS_ADMIN` a run remounted `/` read-write and wrote to the machine.
fn isolation(network: bool) -> Vec<&'static str> {
    let mut args = vec![
        "--cap-drop",
        "ALL",
        "--ro-bind",
        "/",
        "/",
        "--dev",
        "/dev",
        "--proc",
        "/proc",
        "--tmpfs",
        "/tmp",
        "--unshare-pid",
        "--unshare-ipc",
        "--unshare-uts",
        "--die-with-parent",
        "--new-session",
    ];
    if !network {
        args.push("--unshare-net");
    }
    args
}

/// Runs `true` in the sandbox once: bubblewrap installed is not bubblewrap working (a CI
/// runner may forbid unprivileged user namespaces).
fn probe(bwrap: &Path) -> Result<(), CliError> {
    let out = Command::new(bwrap)
        .args(isolation(false))
        .args(["--", "true"])
        .env_clear()
        .stdin(Stdio::null())
        .output()
        .map_err(|e| CliError::unavailable(format!("cannot start {}: {e}", bwrap.display())))?;
    if out.status.success() {
        return Ok(());
    }
    Err(CliError::unavailable(format!(
        "[sandbox] mode = \"required\" and bubblewrap cannot make its namespaces here ({}): run the gate as root or allow unprivileged user namespaces (sysctl kernel.unprivileged_userns_clone=1; on Ubuntu 24.04 also kernel.apparmor_restrict_unprivileged_userns=0), or set mode = \"off\" in the base's config",
        String::from_utf8_lossy(&out.stderr).trim()
    )))
}

/// The runs' environment: the allowlist from the runner's, what `[sandbox] env` names or
/// sets, a private `HOME` and `TMPDIR`; never a `PATCHGATE_*` variable.
fn environment(
    extra: &[String],
    home: &Path,
    tmp: &Path,
    backend: Backend,
) -> Vec<(OsString, OsString)> {
    let mut env: Vec<(OsString, OsString)> = Vec::new();
    let mut set = |name: &str, value: OsString| {
        if name.starts_with("PATCHGATE_") {
            return;
        }
        env.retain(|(k, _)| k != name);
        env.push((name.into(), value));
    };
    let real_home = std::env::var_os("HOME").map(PathBuf::from);
    for (name, dir) in HOME_DEFAULTS {
        if let Some(home) = &real_home
            && std::env::var_os(name).is_none()
            && home.join(dir).is_dir()
        {
            set(name, home.join(dir).into_os_string());
        }
    }
    for name in ENV_ALLOWED {
        if let Some(v) = std::env::var_os(name) {
            set(name, v);
        }
    }
    for e in extra {
        match e.split_once('=') {
            Some((name, value)) => set(name, value.into()),
            None => {
                if let Some(v) = std::env::var_os(e) {
                    set(e, v);
                }
            }
        }
    }
    set("HOME", home.as_os_str().to_owned());
    let tmp = match backend {
        Backend::Bubblewrap => PathBuf::from("/tmp"),
        Backend::Off => tmp.to_path_buf(),
    };
    set("TMPDIR", tmp.into_os_string());
    env
}

/// The first `name` on the runner's `PATH` that is a file.
fn find_program(name: &str) -> Option<PathBuf> {
    std::env::split_paths(&std::env::var_os("PATH")?)
        .map(|dir| dir.join(name))
        .find(|p| p.is_file())
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
