//! Printing for the CLI: a closed pipe (`patchgate route x | head -0`) is not an error, and
//! errors are one line on stderr, with their whole cause chain.

use std::io::Write;

/// Writes to stdout. A closed pipe is not an error (the reader had what it wanted); any other
/// failure (a full disk) is, so a command never exits 0 on an answer that was not written.
pub fn stdout(text: &str) -> Result<(), super::error::CliError> {
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        Err(e) => Err(super::error::CliError::software(format!(
            "cannot write the answer to stdout: {e}"
        ))),
    }
}

/// One line on stderr, `patchgate: message` (written by the error module, which has no
/// other dependency here).
pub use super::error::say as error;

/// An error and its sources, joined with `: `.
pub fn chain(err: &dyn std::error::Error) -> String {
    let mut s = err.to_string();
    let mut source = err.source();
    while let Some(e) = source {
        let msg = e.to_string();
        if !s.contains(&msg) {
            s.push_str(": ");
            s.push_str(&msg);
        }
        source = e.source();
    }
    s
}

/// Opens a file the CLI writes (an answer, a report, a ledger) so that nothing in the checkout
/// can redirect it (CONTRACT.md section 12.2): its last component is opened with `O_NOFOLLOW`,
/// and a path that passes through a symbolic link inside `checkout` (one a patch may have
/// committed) is refused. Paths outside the checkout are the caller's own and may pass
/// through links (`$GITHUB_STEP_SUMMARY`'s directory, say), but not end in one.
pub fn create(
    path: &std::path::Path,
    append: bool,
    checkout: Option<&std::path::Path>,
) -> Result<std::fs::File, super::error::CliError> {
    use std::os::unix::fs::OpenOptionsExt;
    let refused = |why: String| {
        super::error::CliError::data(format!("refusing to write {}: {why}", path.display()))
    };
    if let Some(link) = link_inside(path, checkout) {
        return Err(refused(format!(
            "{} is a symbolic link in the checkout (a patch may have committed it)",
            link.display()
        )));
    }
    let mut options = std::fs::OpenOptions::new();
    options.create(true).custom_flags(libc::O_NOFOLLOW);
    if append {
        options.append(true);
    } else {
        options.write(true).truncate(true);
    }
    options.open(path).map_err(|e| match e.raw_os_error() {
        Some(libc::ELOOP) => refused("it is a symbolic link".to_owned()),
        _ => super::error::CliError::software(format!("cannot write {}: {e}", path.display())),
    })
}

/// Replaces the file at `path` whole with `text` (written beside it, then renamed over it: a
/// reader never sees half of it), under [`create`]'s rule: never through a symbolic link in
/// `checkout`, and a link at `path` itself is replaced, never followed.
pub fn replace(
    path: &std::path::Path,
    text: &[u8],
    checkout: Option<&std::path::Path>,
) -> Result<(), super::error::CliError> {
    use std::io::Write;
    if let Some(link) = link_inside(path, checkout) {
        return Err(super::error::CliError::data(format!(
            "refusing to write {}: {} is a symbolic link in the checkout (a patch may have committed it)",
            path.display(),
            link.display()
        )));
    }
    let cannot = |e: &dyn std::fmt::Display| {
        super::error::CliError::software(format!("cannot write {}: {e}", path.display()))
    };
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(std::path::Path::new("."));
    let mut staged = tempfile::NamedTempFile::new_in(dir).map_err(|e| cannot(&e))?;
    staged.write_all(text).map_err(|e| cannot(&e))?;
    staged.persist(path).map_err(|e| cannot(&e.error))?;
    Ok(())
}

/// Removes a file the CLI wrote before (a stale answer), not through a link in the checkout.
pub fn remove(path: &std::path::Path, checkout: Option<&std::path::Path>) {
    if link_inside(path, checkout).is_none() {
        let _ = std::fs::remove_file(path);
    }
}

/// The first existing component of `path` (made absolute) that lies inside `checkout` and is a
/// symbolic link.
pub fn link_inside(
    path: &std::path::Path,
    checkout: Option<&std::path::Path>,
) -> Option<std::path::PathBuf> {
    let checkout = checkout?;
    let absolute = if path.is_absolute() {
        path.to_path_buf()
    } else {
        std::env::current_dir().ok()?.join(path)
    };
    let inside = absolute.strip_prefix(checkout).ok()?;
    let mut at = checkout.to_path_buf();
    for part in inside.components() {
        at.push(part);
        match std::fs::symlink_metadata(&at) {
            Ok(meta) if meta.file_type().is_symlink() => return Some(at),
            Ok(_) => {}
            Err(_) => return None,
        }
    }
    None
}
