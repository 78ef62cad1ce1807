//! The runs' environment (CONTRACT.md sections 12.2 and 13.4): the runner's cleared but for an
//! allowlist (the search path, the language, where the toolchains live) and what `[sandbox]
//! env` names or sets, with a private `HOME` and `TMPDIR`; never a `PATCHGATE_*` variable.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use super::view;
use crate::core::gate::SandboxBackend as Backend;

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

/// The runs' environment: the allowlist from the runner's, what `[sandbox] env` names or
/// sets, a private `HOME` and `TMPDIR`; never a `PATCHGATE_*` variable.
pub(super) fn environment(
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
    for (name, dir) in view::TOOLCHAIN_HOMES {
        if let (Some(home), Some(dir)) = (&real_home, dir)
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
pub(super) fn find_program(name: &str) -> Option<PathBuf> {
    std::env::split_paths(&std::env::var_os("PATH")?)
        .map(|dir| dir.join(name))
        .find(|p| p.is_file())
}
