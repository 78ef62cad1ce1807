//! What a run sees of the machine (CONTRACT.md sections 13.1 and 13.4): a filesystem built
//! from an allowlist, not `/` minus a few paths. The system's read-only trees, the toolchain
//! directories the configured commands resolve to (read-only, their credential files masked),
//! a private `/tmp`, `/dev` and `/proc`, the copy of the judged tree at the checkout's own path
//! and an empty, private `HOME` at the runner's home path. Nothing else: no home, `/root`,
//! `/var`, `/run`, the host's `/tmp` or `/dev/shm`, the checkout, other rooms, and so no host
//! socket.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// The system's trees every run sees read-only (a symlink, as merged-`/usr` systems have
/// `/bin -> usr/bin`, is made as the same symlink).
pub const SYSTEM: [&str; 8] = [
    "/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc",
];

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
/// the directory (read-only) at its own path, and the variable names it.
pub const TOOLCHAIN_HOMES: [(&str, Option<&str>); 4] = [
    ("RUSTUP_HOME", Some(".rustup")),
    ("CARGO_HOME", Some(".cargo")),
    ("PYENV_ROOT", Some(".pyenv")),
    ("VIRTUAL_ENV", None),
];

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
    /// Where the copy of the tree is seen: the checkout's own path.
    pub tree: PathBuf,
    /// Where `HOME` is seen: the runner's home path.
    pub home: PathBuf,
}

impl View {
    /// The directories a run sees (the step lists them), in mount order: the system's trees,
    /// the toolchain directories, the tree and `HOME`.
    pub fn saw(&self) -> Vec<String> {
        let mut saw: Vec<String> = self
            .entries
            .iter()
            .filter_map(|e| match e {
                Entry::ReadOnly(p) => Some(p.display().to_string()),
                _ => None,
            })
            .collect();
        saw.push(self.tree.display().to_string());
        saw.push(self.home.display().to_string());
        saw.extend(["/tmp", "/dev", "/proc"].map(str::to_owned));
        saw
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

    /// The toolchain directories (what is seen read-only and is not a system tree).
    pub fn toolchains(&self) -> impl Iterator<Item = &Path> {
        self.entries.iter().filter_map(|e| match e {
            Entry::ReadOnly(p) if !is_system(p) => Some(p.as_path()),
            _ => None,
        })
    }
}

/// Whether `p` is in one of the system's trees.
pub fn is_system(p: &Path) -> bool {
    SYSTEM.iter().any(|s| p.starts_with(s))
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
    // A directory that holds the home or the checkout would show them: never.
    let forbidden = |d: &Path| home.starts_with(d) || tree.starts_with(d);
    let mut toolchains: Vec<PathBuf> = Vec::new();
    let add = |d: PathBuf, toolchains: &mut Vec<PathBuf>| {
        if d.is_absolute() && d.is_dir() && !is_system(&d) && !forbidden(&d) {
            toolchains.push(d);
        }
    };
    for (name, default) in TOOLCHAIN_HOMES {
        match (inputs.var)(name) {
            Some(v) => add(PathBuf::from(v), &mut toolchains),
            None => {
                if let (Some(h), Some(d)) = (inputs.home, default) {
                    add(h.join(d), &mut toolchains);
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
                add(prefix, &mut toolchains);
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
        add(d, &mut toolchains);
    }
    // One entry per directory, and none inside another already seen.
    toolchains.sort();
    toolchains.dedup();
    let mut kept: Vec<PathBuf> = Vec::new();
    for d in toolchains {
        if !kept.iter().any(|k| d.starts_with(k)) {
            kept.push(d);
        }
    }
    let mut masks = Vec::new();
    for d in &kept {
        for name in MASKED.iter().copied().chain(
            inputs
                .mask
                .iter()
                .map(String::as_str)
                .filter(|m| !m.starts_with('/')),
        ) {
            masks.push(d.join(name));
        }
        entries.push(Entry::ReadOnly(d.clone()));
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
        let seen = kept.iter().any(|k| at.starts_with(k)) || is_system(&at);
        if seen && !entries.iter().any(|e| e.inside() == at) {
            entries.push(Entry::Masked {
                dir: meta.is_dir(),
                at,
            });
        }
    }
    Ok(View {
        entries,
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

    #[test]
    fn a_toolchain_home_is_seen_with_its_credentials_masked_and_the_home_is_not() {
        let t = tempfile::tempdir().unwrap();
        let home = t.path().join("home");
        let cargo = home.join(".cargo");
        std::fs::create_dir_all(cargo.join("registry")).unwrap();
        std::fs::write(cargo.join("credentials.toml"), "token = \"x\"").unwrap();
        std::fs::create_dir_all(home.join(".ssh")).unwrap();
        let v = view(&home, &t.path().join("checkout"), &[], &[]);
        let saw = v.saw();
        assert!(saw.contains(&cargo.display().to_string()), "{saw:?}");
        assert!(!saw.contains(&home.display().to_string()) || v.home == home);
        assert_eq!(
            v.masked(),
            vec![cargo.join("credentials.toml").display().to_string()]
        );
        // The home's own .ssh is not masked: the home is never seen, only the private one.
        assert!(v.entries.iter().all(|e| e.inside() != home.join(".ssh")));
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
        assert_eq!(v.home, Path::new(NO_HOME));
        assert!(v.entries.contains(&Entry::ReadOnly(PathBuf::from("/usr"))));
        assert!(
            !v.saw()
                .iter()
                .any(|s| s == "/var" || s == "/run" || s == "/root")
        );
    }
}
