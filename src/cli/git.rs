//! Git, for the runners: the one place the CLI asks git anything (revisions, the files a
//! patch changes, a base commit's files, commit counts).

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use super::error::CliError;

/// Git as the runners run it, whatever the repository's or the user's git config says
/// (CONTRACT.md section 11.3): no hooks, no fsmonitor, no external diff or textconv driver,
/// no replace refs. A patch (or a run before it) cannot make git run its code or lie about
/// an object.
pub fn git_command() -> std::process::Command {
    let mut command = std::process::Command::new("git");
    command
        .args([
            "--no-replace-objects",
            "-c",
            "core.hooksPath=/dev/null",
            "-c",
            "core.fsmonitor=false",
            "-c",
            "diff.external=",
            "-c",
            "core.attributesFile=/dev/null",
        ])
        .env("GIT_NO_REPLACE_OBJECTS", "1")
        .env_remove("GIT_EXTERNAL_DIFF");
    command
}

/// Runs git and returns its stdout, or its stderr as the error (65: what was asked of git
/// came from the input).
pub fn git(args: &[&str]) -> Result<Vec<u8>, CliError> {
    run_git(git_command().args(args), args)
}

fn run_git(command: &mut std::process::Command, args: &[&str]) -> Result<Vec<u8>, CliError> {
    let out = command
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

/// The files `git diff --name-only BASE TREE` names: two-dot, against the judged tree
/// (CONTRACT.md section 12.1), NUL-separated so any name survives. Rename detection is off,
/// so a rename counts both paths: a patch cannot move a guarded or test file out of sight.
pub fn git_changed(base: &str, tree: &str) -> Result<Vec<String>, CliError> {
    let out = git(&[
        "diff",
        "-z",
        "--name-only",
        "--no-renames",
        "--no-ext-diff",
        "--no-textconv",
        base,
        tree,
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

/// What is judged (CONTRACT.md section 12.1): the merge of HEAD into BASE, as commit and
/// tree ids, and the files that merge conflicts on.
#[derive(Debug, Clone)]
pub struct Judged {
    pub base: String,
    pub head: String,
    /// HEAD's tree when HEAD already contains BASE; else the tree `git merge-tree
    /// --write-tree` wrote (with conflict markers, when it has conflicts).
    pub tree: String,
    pub conflicts: Vec<String>,
}

/// The tree that would land: HEAD's when it already contains BASE, else the merge of the
/// two (no worktree, no index touched).
pub fn judged_tree(base: &str, head: &str) -> Result<Judged, CliError> {
    let contains = git_command()
        .args(["merge-base", "--is-ancestor", base, head])
        .status()
        .map_err(|e| CliError::data(format!("cannot run git: {e}")))?;
    let (tree, conflicts) = if contains.success() {
        let tree = git(&["rev-parse", "--verify", &format!("{head}^{{tree}}")])?;
        (String::from_utf8_lossy(&tree).trim().to_owned(), Vec::new())
    } else {
        let out = git_command()
            .args([
                "merge-tree",
                "--write-tree",
                "--name-only",
                "--no-messages",
                "-z",
                base,
                head,
            ])
            .output()
            .map_err(|e| CliError::data(format!("cannot run git: {e}")))?;
        // 0: clean, 1: conflicts (the tree still written); anything else is an error.
        if !matches!(out.status.code(), Some(0 | 1)) {
            return Err(CliError::data(format!(
                "git merge-tree {base} {head} failed: {}",
                git_said(&String::from_utf8_lossy(&out.stderr))
            )));
        }
        let mut fields = out
            .stdout
            .split(|b| *b == 0)
            .filter(|f| !f.is_empty())
            .map(|f| String::from_utf8_lossy(f).into_owned());
        let tree = fields.next().unwrap_or_default();
        let mut conflicts: Vec<String> = fields.collect();
        conflicts.dedup();
        (tree, conflicts)
    };
    Ok(Judged {
        base: base.to_owned(),
        head: head.to_owned(),
        tree,
        conflicts,
    })
}

/// The bytes of every file in `tree` (`git ls-tree -l`), or `None` when git cannot say.
pub fn tree_bytes(tree: &str) -> Option<u64> {
    let listing = git(&["ls-tree", "-r", "-l", "-z", "--full-tree", tree]).ok()?;
    Some(
        listing
            .split(|b| *b == 0)
            .filter_map(|r| {
                // `<mode> SP <type> SP <object> SP+ <size> TAB <path>`
                let tab = r.iter().position(|b| *b == b'\t')?;
                String::from_utf8_lossy(&r[..tab])
                    .split_whitespace()
                    .nth(3)?
                    .parse::<u64>()
                    .ok()
            })
            .sum(),
    )
}

/// The base commit's file at `path`, or `None` when it has none.
/// patchgate's own directory in the repository's common git directory (`patchgate/`): shared
/// by its worktrees, never in a checkout's status, never inside a room. The build caches
/// (`build/`) and the admission logs (`logs/`) are kept there.
pub fn state_dir() -> Result<std::path::PathBuf, CliError> {
    let out = git(&["rev-parse", "--path-format=absolute", "--git-common-dir"])?;
    Ok(std::path::PathBuf::from(String::from_utf8_lossy(&out).trim()).join("patchgate"))
}

pub fn base_file(base: &str, path: &str) -> Result<Option<Vec<u8>>, CliError> {
    let spec = format!("{base}:{path}");
    // `cat-file -e` says whether the object exists without printing git's error for a file
    // that is simply absent.
    let exists = git_command()
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

/// The files of `BASE TREE` (the judged tree) that the patch makes executable (a new mode
/// 100755): with [`binary_content`], the runner's facts for the gate's `binary-added` rule.
/// Deleted files are not counted.
pub fn git_made_executable(base: &str, tree: &str) -> Result<Vec<String>, CliError> {
    let raw = git(&[
        "diff",
        "-z",
        "--raw",
        "--no-renames",
        "--no-abbrev",
        base,
        tree,
    ])?;
    let mut out = Vec::new();
    // `:OLD NEW OLDSHA NEWSHA STATUS\0PATH\0`, once per file.
    let mut records = raw.split(|b| *b == 0).filter(|r| !r.is_empty());
    while let (Some(meta), Some(path)) = (records.next(), records.next()) {
        let meta = String::from_utf8_lossy(meta);
        let fields: Vec<&str> = meta.trim_start_matches(':').split(' ').collect();
        if let [old, "100755", ..] = fields.as_slice()
            && *old != "100755"
        {
            out.push(String::from_utf8_lossy(path).into_owned());
        }
    }
    Ok(out)
}

/// The lines `tree` adds to `base`, as `(file, line number in tree, text)`: `git diff -U0`
/// read hunk by hunk (binary files have none). Text is cut at 1,000 bytes.
pub fn added_lines(base: &str, tree: &str) -> Result<Vec<(String, u64, String)>, CliError> {
    let diff = git(&[
        "diff",
        "-U0",
        "--no-renames",
        "--no-ext-diff",
        "--no-textconv",
        "--no-color",
        "--src-prefix=a/",
        "--dst-prefix=b/",
        base,
        tree,
    ])?;
    let mut out = Vec::new();
    let (mut file, mut line) = (None::<String>, 0u64);
    for raw in diff.split(|b| *b == b'\n') {
        let text = String::from_utf8_lossy(raw);
        if let Some(path) = text.strip_prefix("+++ ") {
            file = path.strip_prefix("b/").map(str::to_owned);
        } else if let Some(hunk) = text.strip_prefix("@@ ") {
            // `@@ -a,b +c,d @@`: added lines start at c.
            line = hunk
                .split_whitespace()
                .find_map(|h| h.strip_prefix('+'))
                .and_then(|c| c.split(',').next()?.parse().ok())
                .unwrap_or(0);
        } else if let (Some(f), Some(added)) = (&file, raw.strip_prefix(b"+")) {
            let added = String::from_utf8_lossy(&added[..added.len().min(1000)]).into_owned();
            out.push((f.clone(), line, added));
            line += 1;
        }
    }
    Ok(out)
}

/// The `changed` files whose content in the copy `tree` is binary by git's own test (a NUL
/// byte in the first 8,000 bytes), read from the bytes themselves: no attribute (`diff`,
/// `-binary`, a textconv) can make git call a binary text. Deleted files and links are not
/// counted.
pub fn binary_content(tree: &Path, changed: &[String]) -> Vec<String> {
    use std::io::Read;
    use std::os::unix::fs::OpenOptionsExt;
    changed
        .iter()
        .filter(|path| {
            let mut head = Vec::with_capacity(8000);
            std::fs::OpenOptions::new()
                .read(true)
                .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
                .open(tree.join(path))
                .ok()
                .filter(|f| f.metadata().is_ok_and(|m| m.is_file()))
                .and_then(|f| f.take(8000).read_to_end(&mut head).ok())
                .is_some_and(|_| head.contains(&0))
        })
        .cloned()
        .collect()
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
