//! Git, for the runners: the one place the CLI asks git anything (revisions, the files a
//! patch changes, a base commit's files, commit counts).

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use super::error::CliError;

/// Runs git and returns its stdout, or its stderr as the error (65: what was asked of git
/// came from the input).
pub fn git(args: &[&str]) -> Result<Vec<u8>, CliError> {
    let out = std::process::Command::new("git")
        .args(args)
        .output()
        .map_err(|e| CliError::data(format!("cannot run git: {e}")))?;
    if !out.status.success() {
        return Err(CliError::data(format!(
            "git {} failed: {}",
            args.join(" "),
            git_said(&String::from_utf8_lossy(&out.stderr))
        )));
    }
    Ok(out.stdout)
}

/// What git said, in one line: its first `fatal:` or `error:` line (git follows a bad
/// revision with its whole usage text), else its first line.
fn git_said(stderr: &str) -> String {
    let lines = || stderr.lines().map(str::trim).filter(|l| !l.is_empty());
    lines()
        .find(|l| l.starts_with("fatal:") || l.starts_with("error:"))
        .or_else(|| lines().next())
        .unwrap_or("(no message)")
        .to_owned()
}

/// The files `git diff --name-only BASE...HEAD` names (NUL-separated, so any name survives).
/// Rename detection is off, so a rename counts both paths: a patch cannot move a guarded or
/// test file out of sight.
pub fn git_changed(base: &str, head: &str) -> Result<Vec<String>, CliError> {
    let out = git(&[
        "diff",
        "-z",
        "--name-only",
        "--no-renames",
        &format!("{base}...{head}"),
    ])?;
    Ok(out
        .split(|b| *b == 0)
        .filter(|p| !p.is_empty())
        .map(|p| String::from_utf8_lossy(p).into_owned())
        .collect())
}

/// Changes to `directory` (`-C`), then to the top of the git repository it is in: the
/// config's paths are repository-relative.
pub fn enter_repository(directory: Option<&Path>) -> Result<(), CliError> {
    if let Some(dir) = directory {
        std::env::set_current_dir(dir)
            .map_err(|e| CliError::usage(format!("cannot change to {}: {e}", dir.display())))?;
    }
    let top = git(&["rev-parse", "--show-toplevel"])
        .map_err(|_| CliError::usage("not inside a git repository (or give -C REPO)"))?;
    let top = PathBuf::from(String::from_utf8_lossy(&top).trim());
    std::env::set_current_dir(&top)
        .map_err(|e| CliError::usage(format!("cannot change to {}: {e}", top.display())))
}

/// The base commit's file at `path`, or `None` when it has none.
pub fn base_file(base: &str, path: &str) -> Result<Option<Vec<u8>>, CliError> {
    let spec = format!("{base}:{path}");
    // `cat-file -e` says whether the object exists without printing git's error for a file
    // that is simply absent.
    let exists = std::process::Command::new("git")
        .args(["cat-file", "-e", &spec])
        .stderr(std::process::Stdio::null())
        .status()
        .map_err(|e| CliError::data(format!("cannot run git: {e}")))?
        .success();
    if !exists {
        return Ok(None);
    }
    git(&["cat-file", "blob", &spec]).map(Some)
}

/// The files of `base...head` that the patch adds or changes as binary (git reads their
/// content as binary) or makes executable (a new mode 100755): the runner's facts for the
/// gate's `binary-added` rule. Deleted files are not counted.
pub fn git_binaries(base: &str, head: &str) -> Result<Vec<String>, CliError> {
    let range = format!("{base}...{head}");
    let raw = git(&["diff", "-z", "--raw", "--no-renames", "--no-abbrev", &range])?;
    let mut deleted = std::collections::HashSet::new();
    let mut out = Vec::new();
    // `:OLD NEW OLDSHA NEWSHA STATUS\0PATH\0`, once per file.
    let mut records = raw.split(|b| *b == 0).filter(|r| !r.is_empty());
    while let (Some(meta), Some(path)) = (records.next(), records.next()) {
        let meta = String::from_utf8_lossy(meta);
        let path = String::from_utf8_lossy(path).into_owned();
        let fields: Vec<&str> = meta.trim_start_matches(':').split(' ').collect();
        match fields.as_slice() {
            [_, _, _, _, status] if status.starts_with('D') => {
                deleted.insert(path);
            }
            [old, "100755", ..] if *old != "100755" => out.push(path),
            _ => {}
        }
    }
    let numstat = git(&["diff", "-z", "--numstat", "--no-renames", &range])?;
    for record in numstat.split(|b| *b == 0).filter(|r| !r.is_empty()) {
        let record = String::from_utf8_lossy(record);
        let mut parts = record.splitn(3, '\t');
        if let (Some("-"), Some("-"), Some(path)) = (parts.next(), parts.next(), parts.next())
            && !deleted.contains(path)
            && !out.iter().any(|p| p == path)
        {
            out.push(path.to_owned());
        }
    }
    Ok(out)
}

/// The commit `rev` names, resolved unambiguously (CONTRACT.md section 12.1). git resolves a
/// short name by trying `NAME`, `refs/NAME`, `refs/tags/NAME`, `refs/heads/NAME`,
/// `refs/remotes/NAME` and `refs/remotes/NAME/HEAD` in turn, so a patch that adds a tag named
/// like the base branch (`main`, `origin/main`) would choose what a later gate judges against.
/// A name that more than one of those refs (or a commit id and a ref) answers to is refused
/// (64), naming them; a full ref name or a commit id always resolves.
pub fn commit_of(rev: &str) -> Result<String, CliError> {
    let named = ambiguous_names(rev)?;
    if named.len() > 1 {
        return Err(CliError::usage(format!(
            "{rev:?} is ambiguous in this repository: it names {}; give the full ref name or a commit id",
            named.join(", ")
        )));
    }
    let out = git(&[
        "rev-parse",
        "--verify",
        "--quiet",
        &format!("{rev}^{{commit}}"),
    ])
    .map_err(|_| CliError::usage(format!("{rev:?} is not a commit in this repository")))?;
    Ok(String::from_utf8_lossy(&out).trim().to_owned())
}

/// Everything the name at the start of `rev` (before `~`, `^`, `@{` or `:`) could mean to
/// git: the refs it would try, and the objects it is a prefix of.
fn ambiguous_names(rev: &str) -> Result<Vec<String>, CliError> {
    let name = rev
        .split(['~', '^', ':'])
        .next()
        .unwrap_or(rev)
        .split("@{")
        .next()
        .unwrap_or(rev);
    if name.is_empty() {
        return Ok(Vec::new());
    }
    let refs = git(&["for-each-ref", "--format=%(refname)"])?;
    let refs: std::collections::HashSet<String> = String::from_utf8_lossy(&refs)
        .lines()
        .map(str::to_owned)
        .collect();
    let mut named: Vec<String> = Vec::new();
    // `HEAD` and its kin are files in the git directory; a full name is itself.
    let special = name.bytes().all(|b| b.is_ascii_uppercase() || b == b'_');
    if special
        && git(&["rev-parse", "--verify", "--quiet", "--no-revs", name]).is_ok()
        && git(&["rev-parse", "--git-path", name])
            .map(|p| std::path::Path::new(String::from_utf8_lossy(&p).trim()).exists())
            .unwrap_or(false)
    {
        named.push(name.to_owned());
    }
    for candidate in [
        name.to_owned(),
        format!("refs/{name}"),
        format!("refs/tags/{name}"),
        format!("refs/heads/{name}"),
        format!("refs/remotes/{name}"),
        format!("refs/remotes/{name}/HEAD"),
    ] {
        if refs.contains(&candidate) && !named.contains(&candidate) {
            named.push(candidate);
        }
    }
    // A hex name may also be a commit id (or the prefix of objects).
    if (4..=64).contains(&name.len()) && name.bytes().all(|b| b.is_ascii_hexdigit()) {
        let objects = git(&["rev-parse", &format!("--disambiguate={name}")]).unwrap_or_default();
        if !objects.is_empty() {
            named.push(format!("the object {name}"));
        }
    }
    Ok(named)
}

/// Fills `commits_since_open` for open rows that name `opened_against_commit` and lack it,
/// counting commits with git from that commit to the head (inside a repository only).
pub fn fill_commit_counts(ledger: &mut Value, head: &str) -> Result<(), CliError> {
    let Some(rows) = ledger.as_array_mut() else {
        return Ok(());
    };
    let needs_git = rows
        .iter()
        .any(|r| r.get("opened_against_commit").is_some() && r.get("commits_since_open").is_none());
    if !needs_git || git(&["rev-parse", "--git-dir"]).is_err() {
        return Ok(());
    }
    for (i, row) in rows.iter_mut().enumerate() {
        let Some(obj) = row.as_object_mut() else {
            continue;
        };
        if obj.contains_key("commits_since_open") {
            continue;
        }
        let Some(commit) = obj
            .get("opened_against_commit")
            .and_then(Value::as_str)
            .map(str::to_owned)
        else {
            continue;
        };
        if !commit.bytes().all(|b| b.is_ascii_hexdigit()) {
            // Left for validation to refuse with its pointer.
            continue;
        }
        let out = git(&["rev-list", "--count", &format!("{commit}..{head}")]).map_err(|e| {
            CliError::data(format!(
                "ledger row {i}: cannot count commits since {commit}: {}",
                e.message
            ))
        })?;
        let n: u64 = String::from_utf8_lossy(&out)
            .trim()
            .parse()
            .map_err(|_| CliError::data(format!("ledger row {i}: git gave no commit count")))?;
        obj.insert("commits_since_open".into(), json!(n));
    }
    Ok(())
}
