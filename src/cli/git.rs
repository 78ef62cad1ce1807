//! Git, for the runners: the one place the CLI asks git anything (revisions, the files a
//! patch changes, a base commit's files, commit counts).

use std::path::{Path, PathBuf};

use super::error::CliError;
use crate::core::freeze_ledger::FreezeRow;

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

/// Git started by `command` (from [`git_command`]) with `input` written to its stdin from a
/// thread of its own, so input and output longer than a pipe holds cannot deadlock: the one
/// way the runner feeds git. Read its stdout from [`Fed::child`], then [`Fed::finish`].
pub struct Fed {
    pub child: std::process::Child,
    feeder: std::thread::JoinHandle<std::io::Result<()>>,
}

impl Fed {
    pub fn start(command: &mut std::process::Command, input: Vec<u8>) -> std::io::Result<Fed> {
        use std::io::Write;
        let mut child = command
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .spawn()?;
        let mut stdin = child
            .stdin
            .take()
            .ok_or_else(|| std::io::Error::other("git's stdin was not piped"))?;
        let feeder = std::thread::spawn(move || {
            let written = stdin.write_all(&input);
            drop(stdin);
            written
        });
        Ok(Fed { child, feeder })
    }

    /// Its stdout, to read as it comes.
    pub fn stdout(&mut self) -> std::io::Result<std::process::ChildStdout> {
        self.child
            .stdout
            .take()
            .ok_or_else(|| std::io::Error::other("git's stdout was taken"))
    }

    /// Waits for git: its output (what was not read already), and whether all the input was
    /// written (git may end before it reads it all).
    pub fn finish(self) -> std::io::Result<(std::process::Output, bool)> {
        let out = self.child.wait_with_output()?;
        let written = self.feeder.join().is_ok_and(|w| w.is_ok());
        Ok((out, written))
    }
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

/// `git diff HOW BASE TREE` as the gate reads a patch: no rename pairing (both paths of a
/// rename count), and nothing the repository configures runs (no external diff, no text
/// conversion).
fn tree_diff<'a>(how: &[&'a str], base: &'a str, tree: &'a str) -> Vec<&'a str> {
    let mut args = vec!["diff"];
    args.extend_from_slice(how);
    args.extend(["--no-renames", "--no-ext-diff", "--no-textconv", base, tree]);
    args
}

/// The files `git diff --name-only BASE TREE` names: two-dot, against the judged tree
/// (CONTRACT.md section 12.1), NUL-separated so any name survives. Rename detection is off,
/// so a rename counts both paths: a patch cannot move a guarded or test file out of sight.
pub fn git_changed(base: &str, tree: &str) -> Result<Vec<String>, CliError> {
    let out = git(&tree_diff(&["-z", "--name-only"], base, tree))?;
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

/// The digest of a property's source in `commit` (issue 50): sha256 over git's listing of the
/// files under `paths` (each file's mode, blob id and path, in git's order), 64 hex digits;
/// `None` with no path. What admission records and the gate compares.
pub fn source_digest(commit: &str, paths: &[String]) -> Result<Option<String>, CliError> {
    use sha2::Digest;
    if paths.is_empty() {
        return Ok(None);
    }
    let mut args = vec!["ls-tree", "-r", "-z", "--full-tree", commit, "--"];
    args.extend(paths.iter().map(String::as_str));
    let listing = git(&args)?;
    let digest = sha2::Sha256::digest(&listing);
    Ok(Some(digest.iter().map(|b| format!("{b:02x}")).collect()))
}

/// `tree` with the files `from_base` as `base` has them and the files `without` left out
/// (issue 50: the base's tests judge; the tests a patch adds run apart): a tree object written
/// through a scratch index, the repository's own index untouched. `tree` itself when there is
/// nothing to change.
pub fn tree_with(
    tree: &str,
    base: &str,
    from_base: &[String],
    without: &[String],
    contents: &[(String, Vec<u8>)],
) -> Result<String, CliError> {
    if from_base.is_empty() && without.is_empty() && contents.is_empty() {
        return Ok(tree.to_owned());
    }
    let scratch = tempfile::tempdir()
        .map_err(|e| CliError::software(format!("cannot make a scratch index: {e}")))?;
    let index = scratch.path().join("index");
    let indexed = |args: &[&str], input: &[u8]| -> Result<Vec<u8>, CliError> {
        let cannot = |e: std::io::Error| CliError::data(format!("cannot run git: {e}"));
        let (out, written) = Fed::start(
            git_command()
                .env("GIT_INDEX_FILE", &index)
                .env("GIT_LITERAL_PATHSPECS", "1")
                .args(args)
                .stderr(std::process::Stdio::piped()),
            input.to_vec(),
        )
        .and_then(Fed::finish)
        .map_err(cannot)?;
        if !out.status.success() || !written {
            return Err(CliError::data(format!(
                "git {} failed: {}",
                args.join(" "),
                git_said(&String::from_utf8_lossy(&out.stderr))
            )));
        }
        Ok(out.stdout)
    };
    indexed(&["read-tree", tree], b"")?;
    let nul_list = |paths: &[String]| -> Vec<u8> {
        paths
            .iter()
            .flat_map(|p| p.as_bytes().iter().copied().chain([0]))
            .collect()
    };
    if !without.is_empty() {
        indexed(
            &["update-index", "-z", "--force-remove", "--stdin"],
            &nul_list(without),
        )?;
    }
    if !from_base.is_empty() {
        let mut args = vec!["ls-tree", "-r", "-z", "--full-tree", base, "--"];
        args.extend(from_base.iter().map(String::as_str));
        let listing = indexed(&args, b"")?;
        indexed(
            &["update-index", "-z", "--force-remove", "--stdin"],
            &nul_list(from_base),
        )?;
        indexed(&["update-index", "-z", "--index-info"], &listing)?;
    }
    // Files with a content of their own (a source file with the base's test lines): written
    // as blobs, each keeping the mode the tree gives it.
    if !contents.is_empty() {
        let names: Vec<&str> = contents.iter().map(|(p, _)| p.as_str()).collect();
        let held = ls_blobs(tree, &names)?;
        let mut info = Vec::new();
        for (path, bytes) in contents {
            let Some(blob) = held.get(path) else {
                continue;
            };
            let id = indexed(&["hash-object", "-w", "--stdin", "--no-filters"], bytes)?;
            let id = String::from_utf8_lossy(&id);
            info.extend_from_slice(format!("{} {}\t{path}\0", blob.mode, id.trim()).as_bytes());
        }
        indexed(&["update-index", "-z", "--index-info"], &info)?;
    }
    let written = indexed(&["write-tree"], b"")?;
    Ok(String::from_utf8_lossy(&written).trim().to_owned())
}

/// A file in a tree: its mode and blob id, as `git ls-tree` gives them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Blob {
    pub mode: String,
    pub id: String,
}

/// The files among `paths` that `rev` holds, by path (a path it does not hold as a file is
/// absent; literal paths, no pattern).
pub fn ls_blobs(
    rev: &str,
    paths: &[&str],
) -> Result<std::collections::HashMap<String, Blob>, CliError> {
    if paths.is_empty() {
        return Ok(std::collections::HashMap::new());
    }
    let mut args = vec![
        "--literal-pathspecs",
        "ls-tree",
        "-r",
        "-z",
        "--full-tree",
        rev,
        "--",
    ];
    args.extend(paths.iter().copied());
    Ok(git(&args)?
        .split(|b| *b == 0)
        .filter_map(|entry| {
            let (meta, path) = entry.split_at(entry.iter().position(|b| *b == b'\t')?);
            let meta = String::from_utf8_lossy(meta);
            let mut fields = meta.split(' ');
            let (mode, kind, id) = (fields.next()?, fields.next()?, fields.next()?);
            let path = String::from_utf8_lossy(path.get(1..)?).into_owned();
            (kind == "blob" && paths.contains(&path.as_str())).then(|| {
                let blob = Blob {
                    mode: mode.to_owned(),
                    id: id.to_owned(),
                };
                (path, blob)
            })
        })
        .collect())
}

/// The hunks of `git diff -U0` between two blobs, `(old start, old count, new start, new
/// count)`: blob to blob, so no path's attributes apply, every file is text, and no text
/// conversion or external diff runs.
pub fn diff_hunks(old: &str, new: &str) -> Result<Vec<(usize, usize, usize, usize)>, CliError> {
    let out = git(&[
        "diff",
        "-U0",
        "--text",
        "--no-textconv",
        "--no-ext-diff",
        "--no-color",
        "--diff-algorithm=myers",
        old,
        new,
    ])?;
    let size = |n: u64| usize::try_from(n).unwrap_or(usize::MAX);
    Ok(crate::core::patch::read(&out)
        .iter()
        .flat_map(|part| &part.hunks)
        .map(|h| {
            (
                size(h.old_start),
                size(h.old_len),
                size(h.new_start),
                size(h.new_len),
            )
        })
        .collect())
}

/// Whether `base` is an ancestor of `head` (or the same commit).
pub fn is_ancestor(base: &str, head: &str) -> Result<bool, CliError> {
    let status = git_command()
        .args(["merge-base", "--is-ancestor", base, head])
        .status()
        .map_err(|e| CliError::data(format!("cannot run git: {e}")))?;
    match status.code() {
        Some(0) => Ok(true),
        Some(1) => Ok(false),
        _ => Err(CliError::data(format!(
            "git merge-base --is-ancestor {base} {head} failed"
        ))),
    }
}

/// The tree that would land: HEAD's when it already contains BASE, else the merge of the
/// two (no worktree, no index touched).
pub fn judged_tree(base: &str, head: &str) -> Result<Judged, CliError> {
    let (tree, conflicts) = if is_ancestor(base, head)? {
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
                String::from_utf8_lossy(r.get(..tab)?)
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
    if !object_exists(&spec)? {
        return Ok(None);
    }
    git(&["cat-file", "blob", &spec]).map(Some)
}

/// Whether the object `spec` names exists (`REV:PATH`, `REV^{commit}`): `cat-file -e` says so
/// without printing git's error for one that is simply absent.
pub fn object_exists(spec: &str) -> Result<bool, CliError> {
    Ok(git_command()
        .args(["cat-file", "-e", spec])
        .stderr(std::process::Stdio::null())
        .status()
        .map_err(|e| CliError::data(format!("cannot run git: {e}")))?
        .success())
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
    Ok(raw_records(&raw)
        .into_iter()
        .filter(|(fields, _)| {
            matches!(fields.as_slice(), [old, new, ..] if new == "100755" && old != "100755")
        })
        .map(|(_, path)| path)
        .collect())
}

/// The records of `git diff -z --raw`, once per file: its fields (`<old mode> <new mode>
/// <old id> <new id> <status>`) and its path.
fn raw_records(raw: &[u8]) -> Vec<(Vec<String>, String)> {
    let mut out = Vec::new();
    let mut records = raw.split(|b| *b == 0).filter(|r| !r.is_empty());
    while let (Some(meta), Some(path)) = (records.next(), records.next()) {
        let fields = String::from_utf8_lossy(meta)
            .trim_start_matches(':')
            .split(' ')
            .map(str::to_owned)
            .collect();
        out.push((fields, String::from_utf8_lossy(path).into_owned()));
    }
    out
}

/// The lines a patch adds, per file, read from git's own structure (CONTRACT.md section 14.1):
/// the file names from a NUL-separated list (`-z`, so every name keeps its bytes: non-ASCII,
/// spaces, newlines), then the patch text file by file in that order, each hunk read by the
/// counts its header gives, so no line inside a hunk is ever taken for a header (an added
/// line `++ b/tests/x.py` is an added line). Lines are clipped to 1,000 bytes. Every file is
/// text (`--text`), no text conversion runs, and attributes are the base's, never the tree's
/// (section 15.1: a patch's `.gitattributes` marking `*.py -diff` would hide every line).
pub fn added_lines(base: &str, tree: &str) -> Result<Vec<AddedFile>, CliError> {
    let diff_git =
        |args: &[&str]| run_git(git_command().env("GIT_ATTR_SOURCE", base).args(args), args);
    // `--raw`: each file's new mode (a link, say); a type change (a file made a link) is one
    // name there and two file headers in the patch (the old removed, the new added).
    let listed = diff_git(&tree_diff(&["-z", "--raw", "--no-abbrev"], base, tree))?;
    let mut files = Vec::new();
    for (parts, path) in raw_records(&listed) {
        let mode = parts
            .get(1)
            .and_then(|m| u32::from_str_radix(m, 8).ok())
            .unwrap_or(0);
        let headers = if parts.get(4).is_some_and(|s| s.starts_with('T')) {
            2
        } else {
            1
        };
        files.push((path, mode, headers));
    }
    let diff = diff_git(&[
        "-c",
        "core.quotePath=false",
        "diff",
        "-U0",
        "--text",
        "--no-renames",
        "--no-ext-diff",
        "--no-textconv",
        "--no-color",
        "--src-prefix=a/",
        "--dst-prefix=b/",
        base,
        tree,
    ])?;
    Ok(parse_added(&diff, files))
}

/// The lines one file of a patch adds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AddedFile {
    pub path: String,
    /// Its mode in the judged tree (`0o120000`: a symbolic link; 0: deleted).
    pub mode: u32,
    /// (1-based line in the new file, its text).
    pub lines: Vec<(u32, String)>,
}

/// Reads `diff` (git's patch text, `-U0`) for `files` (its `-z` name list, in git's order,
/// each with the number of file headers it has in the patch): each `diff --git` header
/// outside a hunk starts the next file; inside a hunk exactly the lines its header counts
/// are read.
fn parse_added(diff: &[u8], files: Vec<(String, u32, u8)>) -> Vec<AddedFile> {
    let mut out: Vec<AddedFile> = Vec::with_capacity(files.len());
    let mut names = files.into_iter();
    let mut headers_left = 0u8;
    for part in crate::core::patch::read(diff) {
        if headers_left > 0 {
            // The second header of a type change: the same file's.
            headers_left -= 1;
        } else {
            let Some((path, mode, headers)) = names.next() else {
                break;
            };
            headers_left = headers.saturating_sub(1);
            out.push(AddedFile {
                path,
                mode,
                lines: Vec::new(),
            });
        }
        let Some(file) = out.last_mut() else { break };
        for hunk in &part.hunks {
            for (at, text) in hunk.added() {
                let text = text.get(..text.len().min(1000)).unwrap_or_default();
                file.lines.push((
                    u32::try_from(at).unwrap_or(u32::MAX),
                    String::from_utf8_lossy(text).into_owned(),
                ));
            }
        }
    }
    // One file may have two headers (a type change): its lines are one file's.
    out.retain(|f| !f.lines.is_empty());
    out
}

/// The files `paths` of `rev`, each as git holds it, through one `git cat-file --batch`:
/// `None` for a path that is not a file there, one longer than `max` bytes, or one whose
/// name holds a line break (the batch protocol is line by line).
pub fn blobs(rev: &str, paths: &[&str], max: usize) -> Result<Vec<Option<Vec<u8>>>, CliError> {
    use std::io::{BufRead, BufReader, Read};
    if paths.is_empty() {
        return Ok(Vec::new());
    }
    let asked: Vec<Option<String>> = paths
        .iter()
        .map(|p| (!p.contains('\n')).then(|| format!("{rev}:{p}")))
        .collect();
    let specs: Vec<u8> = asked
        .iter()
        .flatten()
        .flat_map(|spec| spec.bytes().chain([b'\n']))
        .collect();
    let mut fed = Fed::start(
        git_command()
            .args(["cat-file", "--batch"])
            .stderr(std::process::Stdio::null()),
        specs,
    )
    .map_err(|e| CliError::data(format!("cannot run git: {e}")))?;
    let failed = |e: std::io::Error| CliError::software(format!("cannot read files of {rev}: {e}"));
    let mut out = BufReader::with_capacity(1 << 16, fed.stdout().map_err(failed)?);
    let mut files = Vec::with_capacity(paths.len());
    for spec in &asked {
        if spec.is_none() {
            files.push(None);
            continue;
        }
        let mut header = String::new();
        out.read_line(&mut header).map_err(failed)?;
        // `<oid> blob <size>`, or `<spec> missing`.
        let header = header.trim_end();
        let size = header
            .rsplit(' ')
            .next()
            .and_then(|s| s.parse::<u64>().ok())
            .filter(|_| !header.ends_with(" missing"));
        let Some(size) = size else {
            files.push(None);
            continue;
        };
        // The object and its line break; one too large is read past, never held.
        if !header.contains(" blob ") || size > max as u64 {
            std::io::copy(&mut (&mut out).take(size + 1), &mut std::io::sink()).map_err(failed)?;
            files.push(None);
            continue;
        }
        let mut content = vec![0; size as usize + 1];
        out.read_exact(&mut content).map_err(failed)?;
        content.truncate(size as usize);
        files.push(Some(content));
    }
    drop(out);
    let _ = fed.finish();
    Ok(files)
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
pub fn fill_commit_counts(rows: &mut [FreezeRow], head: &str) -> Result<(), CliError> {
    let needs_git = rows
        .iter()
        .any(|r| r.opened_against_commit.is_some() && r.commits_since_open.is_none());
    if !needs_git || git(&["rev-parse", "--git-dir"]).is_err() {
        return Ok(());
    }
    for (i, row) in rows.iter_mut().enumerate() {
        let Some(commit) = row
            .opened_against_commit
            .clone()
            .filter(|_| row.commits_since_open.is_none())
        else {
            continue;
        };
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
        row.commits_since_open = Some(n);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Section 14.1: hunks are read by their counts, so lines that look like headers are
    /// added lines, and every name (from the `-z` list) keeps its lines.
    #[test]
    fn added_lines_are_read_by_the_hunk_counts() {
        let diff = b"diff --git a/src/a.py b/src/a.py\n\
index 1..2 100644\n\
--- a/src/a.py\n\
+++ b/src/a.py\n\
@@ -1,0 +2,3 @@\n\
+++ b/tests/x.py\n\
+diff --git a/tests/x.py b/tests/x.py\n\
+@@ -1 +1 @@\n\
@@ -9 +12 @@\n\
-old\n\
+new\n\
\\ No newline at end of file\n\
diff --git \"a/\\303\\251.py\" \"b/\\303\\251.py\"\n\
new file mode 100644\n\
--- /dev/null\n\
+++ \"b/\\303\\251.py\"\n\
@@ -0,0 +1 @@\n\
+x = 1\n";
        let files = parse_added(
            diff,
            vec![
                ("src/a.py".into(), 0o100644, 1),
                ("\u{e9}.py".into(), 0o100644, 1),
            ],
        );
        assert_eq!(
            files,
            [
                AddedFile {
                    path: "src/a.py".into(),
                    mode: 0o100644,
                    lines: vec![
                        (2, "++ b/tests/x.py".into()),
                        (3, "diff --git a/tests/x.py b/tests/x.py".into()),
                        (4, "@@ -1 +1 @@".into()),
                        (12, "new".into()),
                    ],
                },
                AddedFile {
                    path: "\u{e9}.py".into(),
                    mode: 0o100644,
                    lines: vec![(1, "x = 1".into())],
                },
            ]
        );
    }
}
