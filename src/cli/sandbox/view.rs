//! What a run sees of the machine (CONTRACT.md sections 13.1, 13.4 and 15.4): a filesystem
//! built from an allowlist, not `/` minus a few paths. The system's read-only trees, of `/etc`
//! what a runner needs ([`ETC_KEPT`]: never `pip.conf`, `gitconfig`, `npmrc`, `environment`),
//! of each toolchain directory the configured commands resolve to what runs need (its
//! binaries, libraries and registry sources, [`kept`]: never its configuration, cargo's
//! `config.toml`, a venv's `pip.conf`), read-only, credential files inside masked as a second
//! line; a private `/tmp`, `/dev` and `/proc`, the copy of the judged tree at the checkout's
//! own path and an empty, private `HOME` at the runner's home path. Nothing else: no home,
//! `/root`, `/var`, `/run`, the host's `/tmp` or `/dev/shm`, the checkout, other rooms, and so
//! no host socket.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// The system's trees every run sees read-only (a symlink, as merged-`/usr` systems have
/// `/bin -> usr/bin`, is made as the same symlink).
pub const SYSTEM: [&str; 7] = [
    "/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32",
];

/// What a run sees of `/etc`: what the dynamic loader, the C library (users, groups, names,
/// time zone, locale), TLS, the alternatives links (`cc`) and the distribution's Python need.
/// Names ending in `*` are prefixes (`python3*`: Debian's `/etc/python3.11`). Never seen: a
/// tool's configuration that may hold a credential (`pip.conf`, `gitconfig`, `npmrc`,
/// `netrc`, `wgetrc`, `environment`, `apt/`, `docker/`, `ssh/`), nor anything not listed.
pub const ETC_KEPT: [&str; 38] = [
    "alternatives",
    "ca-certificates",
    "ca-certificates.conf",
    "crypto-policies",
    "debian_version",
    "alpine-release",
    "redhat-release",
    "system-release",
    "lsb-release",
    "os-release",
    "fonts",
    "gai.conf",
    "group",
    "host.conf",
    "hostname",
    "hosts",
    "inputrc",
    "ld.so.cache",
    "ld.so.conf",
    "ld.so.conf.d",
    "locale.alias",
    "localtime",
    "magic",
    "magic.mime",
    "mime.types",
    "mtab",
    "nsswitch.conf",
    "passwd",
    "pki",
    "protocols",
    "python*",
    "perl",
    "resolv.conf",
    "services",
    "ssl/certs",
    "ssl/openssl.cnf",
    "terminfo",
    "timezone",
];

/// Of an installation prefix (a virtual environment, a pyenv version, a Rust toolchain, a
/// hosted tool cache's version): what runs need, never its configuration (`pip.conf`, `etc/`).
const PREFIX_KEPT: [&str; 9] = [
    "bin",
    "sbin",
    "lib",
    "lib32",
    "lib64",
    "libexec",
    "include",
    "share",
    "pyvenv.cfg",
];

/// Of `CARGO_HOME`: its binaries and the registry's and git's sources a build reads, never
/// `config.toml`, `credentials*` or `env`.
const CARGO_KEPT: [&str; 6] = [
    "bin",
    "registry/index",
    "registry/cache",
    "registry/src",
    "git/db",
    "git/checkouts",
];

/// Of `PYENV_ROOT`: pyenv itself (its shims run `libexec/pyenv exec`), the global version
/// file, and of each version what a prefix keeps.
const PYENV_KEPT: [&str; 6] = ["bin", "libexec", "plugins", "pyenv.d", "shims", "version"];

/// What a toolchain directory is, and so what of it a run sees ([`kept`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// An installation prefix ([`PREFIX_KEPT`]).
    Prefix,
    Cargo,
    /// `RUSTUP_HOME`: `settings.toml` (the default toolchain) and each toolchain as a prefix.
    Rustup,
    Pyenv,
    /// A directory `[sandbox] expose` names: the whole of it, as its owner chose.
    Whole,
}

/// Credential files and directories masked inside every toolchain directory a run sees
/// (CONTRACT.md section 13.1), beside what `[sandbox] mask` adds: a run reads them as empty.
pub const MASKED: [&str; 12] = [
    "credentials",
    "credentials.toml",
    ".git-credentials",
    ".netrc",
    ".pypirc",
    ".npmrc",
    ".ssh",
    ".docker",
    ".aws",
    ".kube",
    ".config/gh",
    ".gnupg",
];

/// Toolchain variables and the directory in the user's `HOME` each defaults to: a run sees
/// what runs need of the directory (read-only) at its own path, and the variable names it.
pub const TOOLCHAIN_HOMES: [(&str, Option<&str>); 4] = [
    ("RUSTUP_HOME", Some(".rustup")),
    ("CARGO_HOME", Some(".cargo")),
    ("PYENV_ROOT", Some(".pyenv")),
    ("VIRTUAL_ENV", None),
];

/// The kind of the directory each of [`TOOLCHAIN_HOMES`] names.
fn kind_of_home(name: &str) -> Kind {
    match name {
        "RUSTUP_HOME" => Kind::Rustup,
        "CARGO_HOME" => Kind::Cargo,
        "PYENV_ROOT" => Kind::Pyenv,
        _ => Kind::Prefix,
    }
}

/// What a run sees of the toolchain directory `root` of kind `kind`: the paths that exist.
fn kept(root: &Path, kind: Kind) -> Vec<PathBuf> {
    let existing = |names: &[&str], under: &Path| -> Vec<PathBuf> {
        names
            .iter()
            .map(|n| under.join(n))
            .filter(|p| std::fs::symlink_metadata(p).is_ok())
            .collect()
    };
    // Each directory under `dir` as a prefix (a pyenv version, a Rust toolchain); a link
    // among them (`1.95.0-x86_64... -> stable-...`) is kept as the link.
    let prefixes = |dir: PathBuf| -> Vec<PathBuf> {
        let mut children: Vec<PathBuf> = std::fs::read_dir(&dir)
            .map(|d| d.flatten().map(|e| e.path()).collect())
            .unwrap_or_default();
        children.sort();
        children
            .into_iter()
            .flat_map(|c| match std::fs::symlink_metadata(&c) {
                Ok(m) if m.file_type().is_symlink() => vec![c],
                Ok(m) if m.is_dir() => existing(&PREFIX_KEPT, &c),
                _ => Vec::new(),
            })
            .collect()
    };
    match kind {
        Kind::Whole => vec![root.to_path_buf()],
        Kind::Prefix => existing(&PREFIX_KEPT, root),
        Kind::Cargo => existing(&CARGO_KEPT, root),
        Kind::Rustup => {
            let mut out = existing(&["settings.toml"], root);
            out.extend(prefixes(root.join("toolchains")));
            out
        }
        Kind::Pyenv => {
            let mut out = existing(&PYENV_KEPT, root);
            out.extend(prefixes(root.join("versions")));
            out
        }
    }
}

/// One entry of a run's filesystem, outside path to inside path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Entry {
    /// A system tree or a toolchain directory, read-only at its own path.
    ReadOnly(PathBuf),
    /// A symlink, as the system has it (`/bin -> usr/bin`).
    Link(OsString, PathBuf),
    /// A credential file or directory read as empty.
    Masked { at: PathBuf, dir: bool },
}

impl Entry {
    pub fn inside(&self) -> &Path {
        match self {
            Entry::ReadOnly(p) | Entry::Link(_, p) | Entry::Masked { at: p, .. } => p,
        }
    }
}

/// A run's view: what it sees besides its own places (the copy, `HOME`, `/tmp`, its report
/// directory), and where those are seen.
#[derive(Debug, Clone)]
pub struct View {
    pub entries: Vec<Entry>,
    /// The toolchain directories, whole (what of each is seen is in `entries`).
    pub roots: Vec<PathBuf>,
    /// Where the copy of the tree is seen: the checkout's own path.
    pub tree: PathBuf,
    /// Where `HOME` is seen: the runner's home path.
    pub home: PathBuf,
}

impl View {
    /// What a run sees (the step lists it, at most 200), in mount order: the system's trees,
    /// what is kept of `/etc` and of the toolchain directories, the tree and `HOME`.
    pub fn saw(&self) -> Vec<String> {
        let mut saw: Vec<String> = self
            .entries
            .iter()
            .filter_map(|e| match e {
                Entry::ReadOnly(p) => Some(p.display().to_string()),
                _ => None,
            })
            .take(195)
            .collect();
        saw.push(self.tree.display().to_string());
        saw.push(self.home.display().to_string());
        saw.extend(["/tmp", "/dev", "/proc"].map(str::to_owned));
        saw
    }

    /// What a run sees, in one line: the system's trees, how much of `/etc`, each toolchain
    /// directory with what of it, the tree, `HOME` and the run's own places.
    pub fn said(&self) -> String {
        let read_only = |p: &Path| {
            self.entries
                .iter()
                .any(|e| matches!(e, Entry::ReadOnly(r) if r == p))
        };
        let mut parts: Vec<String> = SYSTEM
            .iter()
            .filter(|s| read_only(Path::new(s)))
            .map(|s| (*s).to_owned())
            .collect();
        let etc = self
            .entries
            .iter()
            .filter(|e| e.inside().starts_with("/etc"))
            .count();
        parts.push(format!("/etc ({etc} of it)"));
        for root in &self.roots {
            let mut kept: Vec<String> = Vec::new();
            for e in &self.entries {
                let Ok(rel) = e.inside().strip_prefix(root) else {
                    continue;
                };
                let first = rel.components().next().map_or_else(String::new, |c| {
                    c.as_os_str().to_string_lossy().into_owned()
                });
                if !kept.contains(&first) {
                    kept.push(first);
                }
            }
            parts.push(match kept.as_slice() {
                [only] if only.is_empty() => root.display().to_string(),
                [] => format!("{} (nothing of it)", root.display()),
                _ => format!("{} ({})", root.display(), kept.join(", ")),
            });
        }
        parts.push(self.tree.display().to_string());
        parts.push(self.home.display().to_string());
        parts.extend(["/tmp", "/dev", "/proc"].map(str::to_owned));
        parts.join(", ")
    }

    /// The credential paths masked in it.
    pub fn masked(&self) -> Vec<String> {
        self.entries
            .iter()
            .filter_map(|e| match e {
                Entry::Masked { at, .. } => Some(at.display().to_string()),
                _ => None,
            })
            .collect()
    }

    /// The toolchain directories, whole.
    pub fn toolchains(&self) -> impl Iterator<Item = &Path> {
        self.roots.iter().map(PathBuf::as_path)
    }
}

/// Whether `p` is in one of the system's trees or `/etc`.
pub fn is_system(p: &Path) -> bool {
    SYSTEM.iter().chain(&["/etc"]).any(|s| p.starts_with(s))
}

/// What a run sees of `/etc` ([`ETC_KEPT`]): each kept path that exists, read-only, or the
/// same symbolic link.
fn etc_entries(etc: &Path) -> Vec<Entry> {
    let mut names: Vec<PathBuf> = Vec::new();
    for kept in ETC_KEPT {
        match kept.strip_suffix('*') {
            Some(prefix) => {
                let mut found: Vec<PathBuf> = std::fs::read_dir(etc)
                    .map(|d| {
                        d.flatten()
                            .filter(|e| e.file_name().to_string_lossy().starts_with(prefix))
                            .map(|e| e.path())
                            .collect()
                    })
                    .unwrap_or_default();
                found.sort();
                names.extend(found);
            }
            None => names.push(etc.join(kept)),
        }
    }
    names
        .into_iter()
        .filter_map(|p| entry_for(&p, &p))
        .collect()
}

/// `from`, seen at `at`: the same symbolic link, or read-only; `None` when it is not there.
fn entry_for(from: &Path, at: &Path) -> Option<Entry> {
    let meta = std::fs::symlink_metadata(from).ok()?;
    if meta.file_type().is_symlink() {
        let target = std::fs::read_link(from).ok()?;
        Some(Entry::Link(target.into_os_string(), at.to_path_buf()))
    } else {
        Some(Entry::ReadOnly(at.to_path_buf()))
    }
}

/// What [`plan`] is given: the runner's environment as it matters here.
pub struct Inputs<'a> {
    /// The checkout's absolute path (where the copy is seen).
    pub checkout: &'a Path,
    /// The runner's `HOME` (where the private one is seen), if it has one.
    pub home: Option<&'a Path>,
    /// The programs the configured commands start (their first words).
    pub programs: &'a [&'a str],
    /// `[sandbox] expose`: more directories seen read-only.
    pub expose: &'a [String],
    /// `[sandbox] mask`: more paths masked (absolute, or relative to each toolchain
    /// directory).
    pub mask: &'a [String],
    /// A variable of the runner's environment.
    pub var: &'a dyn Fn(&str) -> Option<OsString>,
}

/// Where the private `HOME` is seen when the runner has none (or `/`).
const NO_HOME: &str = "/home/user";

/// The view for `inputs`, or why a configured directory may not be seen (a home, or what holds
/// the checkout: CONTRACT.md section 13.1 never shows them).
pub fn plan(inputs: &Inputs<'_>) -> Result<View, String> {
    let home = inputs
        .home
        .filter(|h| h.is_absolute() && *h != Path::new("/"))
        .map_or_else(|| PathBuf::from(NO_HOME), Path::to_path_buf);
    let tree = inputs.checkout.to_path_buf();
    let mut entries = Vec::new();
    for s in SYSTEM {
        let p = Path::new(s);
        match std::fs::symlink_metadata(p) {
            Ok(m) if m.file_type().is_symlink() => {
                if let Ok(target) = std::fs::read_link(p) {
                    entries.push(Entry::Link(target.into_os_string(), p.to_path_buf()));
                }
            }
            Ok(m) if m.is_dir() => entries.push(Entry::ReadOnly(p.to_path_buf())),
            _ => {}
        }
    }
    entries.extend(etc_entries(Path::new("/etc")));
    // A directory that holds the home or the checkout would show them: never.
    let forbidden = |d: &Path| home.starts_with(d) || tree.starts_with(d);
    let mut toolchains: Vec<(PathBuf, Kind)> = Vec::new();
    let add = |d: PathBuf, kind: Kind, toolchains: &mut Vec<(PathBuf, Kind)>| {
        if d.is_absolute() && d.is_dir() && !is_system(&d) && !forbidden(&d) {
            toolchains.push((d, kind));
        }
    };
    for (name, default) in TOOLCHAIN_HOMES {
        match (inputs.var)(name) {
            Some(v) => add(PathBuf::from(v), kind_of_home(name), &mut toolchains),
            None => {
                if let (Some(h), Some(d)) = (inputs.home, default) {
                    add(h.join(d), kind_of_home(name), &mut toolchains);
                }
            }
        }
    }
    let path = (inputs.var)("PATH");
    for program in inputs.programs {
        let Some(found) = resolve(program, path.as_deref()) else {
            continue;
        };
        let real = std::fs::canonicalize(&found).unwrap_or_else(|_| found.clone());
        for p in [found, real] {
            if let Some(prefix) = prefix_of(&p, &forbidden) {
                add(prefix, Kind::Prefix, &mut toolchains);
            }
        }
    }
    for e in inputs.expose {
        let d = PathBuf::from(e);
        if !d.is_absolute() {
            return Err(format!(
                "[sandbox] expose: {e:?} is not an absolute path (a directory runs see read-only)"
            ));
        }
        if forbidden(&d) {
            return Err(format!(
                "[sandbox] expose: {e:?} holds the runner's home or the checkout, which no run may see (CONTRACT.md section 13.1); name the toolchain directory inside it"
            ));
        }
        add(d, Kind::Whole, &mut toolchains);
    }
    // One entry per directory, and none inside another already seen; a directory named by a
    // toolchain variable (or exposed) is read as what it is, before it is a program's prefix.
    toolchains.sort_by(|a, b| {
        a.0.cmp(&b.0)
            .then((a.1 == Kind::Prefix).cmp(&(b.1 == Kind::Prefix)))
    });
    toolchains.dedup_by(|b, a| a.0 == b.0);
    let mut roots: Vec<(PathBuf, Kind)> = Vec::new();
    for (d, kind) in toolchains {
        if !roots.iter().any(|(k, _)| d.starts_with(k)) {
            roots.push((d, kind));
        }
    }
    let mut seen: Vec<PathBuf> = Vec::new();
    let mut masks = Vec::new();
    for (d, kind) in &roots {
        for name in MASKED.iter().copied().chain(
            inputs
                .mask
                .iter()
                .map(String::as_str)
                .filter(|m| !m.starts_with('/')),
        ) {
            masks.push(d.join(name));
        }
        for p in kept(d, *kind) {
            if let Some(entry) = entry_for(&p, &p) {
                if let Entry::ReadOnly(at) = &entry {
                    seen.push(at.clone());
                }
                entries.push(entry);
            }
        }
    }
    masks.extend(
        inputs
            .mask
            .iter()
            .filter(|m| m.starts_with('/'))
            .map(PathBuf::from),
    );
    for at in masks {
        // Only what exists can be masked (and needs to be); a mask outside what is seen hides
        // nothing that is there.
        let Ok(meta) = std::fs::symlink_metadata(&at) else {
            continue;
        };
        let visible = seen.iter().any(|k| at.starts_with(k)) || is_system(&at);
        if visible && !entries.iter().any(|e| e.inside() == at) {
            entries.push(Entry::Masked {
                dir: meta.is_dir(),
                at,
            });
        }
    }
    Ok(View {
        entries,
        roots: roots.into_iter().map(|(d, _)| d).collect(),
        tree,
        home,
    })
}

/// The first `program` on `path` that is a file (a program given with a `/` is itself).
fn resolve(program: &str, path: Option<&std::ffi::OsStr>) -> Option<PathBuf> {
    if program.contains('/') {
        let p = PathBuf::from(program);
        return (p.is_absolute() && p.is_file()).then_some(p);
    }
    std::env::split_paths(path?)
        .map(|dir| dir.join(program))
        .find(|p| p.is_file())
}

/// The installation prefix of a program at `p`: the directory above its `bin` (a virtual
/// environment, a pyenv or rustup home, a hosted tool cache's version); its own directory when
/// that prefix is forbidden (a program in `~/bin` shows `~/bin`, never the home).
fn prefix_of(p: &Path, forbidden: &dyn Fn(&Path) -> bool) -> Option<PathBuf> {
    let dir = p.parent()?;
    let prefix = if dir.file_name().is_some_and(|n| n == "bin" || n == "shims") {
        dir.parent()?
    } else {
        dir
    };
    if !forbidden(prefix) {
        Some(prefix.to_path_buf())
    } else if !forbidden(dir) {
        Some(dir.to_path_buf())
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn view(home: &Path, checkout: &Path, vars: &[(&str, &Path)], expose: &[String]) -> View {
        let vars: Vec<(String, OsString)> = vars
            .iter()
            .map(|(k, v)| ((*k).to_owned(), v.as_os_str().to_owned()))
            .collect();
        let var = move |n: &str| vars.iter().find(|(k, _)| k == n).map(|(_, v)| v.clone());
        plan(&Inputs {
            checkout,
            home: Some(home),
            programs: &[],
            expose,
            mask: &[],
            var: &var,
        })
        .unwrap()
    }

    /// CONTRACT.md section 15.4: of a toolchain directory a run sees what runs need, never
    /// its configuration (cargo's `config.toml`, `credentials*`, a venv's `pip.conf`); the home
    /// itself never.
    #[test]
    fn of_a_toolchain_home_a_run_sees_what_runs_need_and_never_its_configuration() {
        let t = tempfile::tempdir().unwrap();
        let home = t.path().join("home");
        let cargo = home.join(".cargo");
        for d in [
            "bin",
            "registry/src/index-1/fnv-1.0.7",
            "registry/cache",
            "git/checkouts",
        ] {
            std::fs::create_dir_all(cargo.join(d)).unwrap();
        }
        std::fs::write(cargo.join("config.toml"), "[registry]\ntoken = \"x\"").unwrap();
        std::fs::write(cargo.join("credentials.toml"), "token = \"x\"").unwrap();
        std::fs::write(cargo.join("env"), "").unwrap();
        let venv = t.path().join("venv");
        for d in ["bin", "lib/python3.11/site-packages", "include"] {
            std::fs::create_dir_all(venv.join(d)).unwrap();
        }
        std::fs::write(venv.join("pyvenv.cfg"), "home = /usr/bin\n").unwrap();
        std::fs::write(
            venv.join("pip.conf"),
            "[global]\nindex-url = https://u:p@x/",
        )
        .unwrap();
        std::fs::create_dir_all(home.join(".ssh")).unwrap();
        let v = view(
            &home,
            &t.path().join("checkout"),
            &[("VIRTUAL_ENV", &venv)],
            &[],
        );
        let saw = v.saw();
        let sees = |p: &Path| saw.contains(&p.display().to_string());
        for p in [
            cargo.join("bin"),
            cargo.join("registry/src"),
            cargo.join("registry/cache"),
            cargo.join("git/checkouts"),
            venv.join("bin"),
            venv.join("lib"),
            venv.join("include"),
            venv.join("pyvenv.cfg"),
        ] {
            assert!(sees(&p), "{} in {saw:?}", p.display());
        }
        for p in [
            cargo.clone(),
            cargo.join("config.toml"),
            cargo.join("credentials.toml"),
            cargo.join("env"),
            venv.clone(),
            venv.join("pip.conf"),
        ] {
            assert!(!sees(&p), "{} in {saw:?}", p.display());
            assert!(v.entries.iter().all(|e| e.inside() != p), "{}", p.display());
        }
        // The home is seen only as the private, empty one at its path.
        assert!(v.entries.iter().all(|e| e.inside() != home));
        // Nothing kept holds a credential file, so none needs masking; the home's own .ssh
        // is never seen at all.
        assert_eq!(v.masked(), Vec::<String>::new());
        assert_eq!(
            v.toolchains().collect::<Vec<_>>(),
            vec![cargo.as_path(), venv.as_path()]
        );
    }

    /// Of `/etc`, what [`ETC_KEPT`] names: a tool's configuration is never seen.
    #[test]
    fn of_etc_a_run_sees_what_a_runner_needs() {
        let t = tempfile::tempdir().unwrap();
        let etc = t.path();
        for d in ["python3.11", "ssl/certs", "ssl/private", "apt/auth.conf.d"] {
            std::fs::create_dir_all(etc.join(d)).unwrap();
        }
        for f in [
            "passwd",
            "group",
            "pip.conf",
            "gitconfig",
            "npmrc",
            "environment",
            "ssl/openssl.cnf",
        ] {
            std::fs::write(etc.join(f), "").unwrap();
        }
        std::os::unix::fs::symlink("/usr/share/zoneinfo/Etc/UTC", etc.join("localtime")).unwrap();
        let entries = etc_entries(etc);
        let inside: Vec<&Path> = entries.iter().map(Entry::inside).collect();
        for kept in [
            "passwd",
            "group",
            "python3.11",
            "ssl/certs",
            "ssl/openssl.cnf",
            "localtime",
        ] {
            assert!(
                inside.contains(&etc.join(kept).as_path()),
                "{kept}: {inside:?}"
            );
        }
        for never in [
            "pip.conf",
            "gitconfig",
            "npmrc",
            "environment",
            "ssl/private",
            "apt",
            "ssl",
        ] {
            assert!(
                !inside.contains(&etc.join(never).as_path()),
                "{never}: {inside:?}"
            );
        }
        assert!(entries.contains(&Entry::Link(
            "/usr/share/zoneinfo/Etc/UTC".into(),
            etc.join("localtime")
        )));
    }

    #[test]
    fn a_directory_holding_the_home_or_the_checkout_is_never_exposed() {
        let t = tempfile::tempdir().unwrap();
        let home = t.path().join("home");
        std::fs::create_dir_all(&home).unwrap();
        let checkout = t.path().join("work/repo");
        std::fs::create_dir_all(&checkout).unwrap();
        let var = |_: &str| None;
        for bad in [t.path().to_path_buf(), home.clone(), t.path().join("work")] {
            let e = plan(&Inputs {
                checkout: &checkout,
                home: Some(&home),
                programs: &[],
                expose: &[bad.display().to_string()],
                mask: &[],
                var: &var,
            })
            .unwrap_err();
            assert!(e.contains("[sandbox] expose"), "{e}");
        }
        // A toolchain variable pointing at the home itself is not followed.
        let v = view(&home, &checkout, &[("CARGO_HOME", &home)], &[]);
        assert_eq!(v.toolchains().count(), 0);
    }

    #[test]
    fn a_programs_prefix_is_seen_and_the_system_trees_are_links_or_binds() {
        let t = tempfile::tempdir().unwrap();
        let venv = t.path().join("venv");
        std::fs::create_dir_all(venv.join("bin")).unwrap();
        std::fs::write(venv.join("bin/python3"), "").unwrap();
        let program = venv.join("bin/python3").display().to_string();
        let var = |_: &str| None;
        let v = plan(&Inputs {
            checkout: &t.path().join("c"),
            home: None,
            programs: &[&program],
            expose: &[],
            mask: &[],
            var: &var,
        })
        .unwrap();
        assert_eq!(v.toolchains().collect::<Vec<_>>(), vec![venv.as_path()]);
        assert!(v.entries.contains(&Entry::ReadOnly(venv.join("bin"))));
        assert_eq!(v.home, Path::new(NO_HOME));
        assert!(v.entries.contains(&Entry::ReadOnly(PathBuf::from("/usr"))));
        assert!(
            !v.saw()
                .iter()
                .any(|s| s == "/var" || s == "/run" || s == "/root")
        );
    }
}
