//! The `reproof` step (CONTRACT.md section 11.5): the admitted property the plan names, run
//! once on a fresh copy of the judged tree with its admission mutant (stored in the base by
//! `patchgate admit --write`) applied. What it did is one entry of the facts' `reproof`; what
//! it proves, and whether another is tried, is the core's to say.

use std::path::Path;

use super::super::error::CliError;
use super::super::git::base_file;
use super::super::output;
use super::super::runner::{Outcome, Place, Run, property_argv, property_receipt};
use super::super::sandbox::Room;
use super::gather::Gathered;
use crate::core::gate::Reproof;

/// Re-proves `id`: its mutant applied to a fresh copy, its property run once there.
pub(super) fn reprove(g: &Gathered, id: &str) -> Result<Reproof, CliError> {
    let p = &g.config.properties;
    let not_applied = |note: String| Reproof {
        property: id.to_owned(),
        applied: false,
        exit_code: None,
        receipt: None,
        note: Some(note),
    };
    let path = p.mutant_path(id);
    let Some(diff) = base_file(&g.base, &path)? else {
        return Ok(not_applied(format!(
            "no mutant stored at {path} in the base: `patchgate admit {id} --mutant REF --write` stores it"
        )));
    };
    // A compiled project's re-proof starts from the build step's output (section 11.10): the
    // built copy, its mutant applied, an incremental build under the build step's timeout.
    // Otherwise a fresh copy of the judged tree.
    let room = match &g.config.build {
        Some(_) => g.room.fork(&format!("the re-proof of {id}"))?,
        None => Room::open(&g.config.sandbox, &g.tree, g.cache.as_ref())?,
    };
    if let Err(why) = apply_mutant(&room.tree, &diff, &g.base) {
        output::error(&format!(
            "re-proof {id}: its mutant does not apply here ({why})"
        ));
        return Ok(not_applied(format!(
            "its mutant does not apply to this tree: {why}"
        )));
    }
    if let Some(build) = &g.config.build {
        let built = match Run::new(
            &format!("re-proof {id}: build (mutant applied)"),
            &build.command,
            build.timeout(),
            Place::Room(&room),
        )
        .tail(2048)
        .start()?
        {
            Outcome::Ran(ran) => ran,
            Outcome::Cancelled => return Err(CliError::software("the re-proof was cancelled")),
        };
        if built.run != Some(0) {
            return Ok(Reproof {
                property: id.to_owned(),
                applied: true,
                exit_code: None,
                receipt: None,
                note: Some(match built.run {
                    Some(code) => format!("its mutant applied does not build (build exit {code})"),
                    None => "its build, the mutant applied, timed out or was killed".to_owned(),
                }),
            });
        }
    }
    let label = format!("re-proof {id} (mutant applied)");
    let argv = property_argv(&p.command, &[id.to_owned()]);
    let ran = Run::new(&label, &argv, p.timeout(), Place::Room(&room))
        .start()?
        .ran()?;
    Ok(Reproof {
        property: id.to_owned(),
        applied: true,
        exit_code: ran.run,
        receipt: ran
            .receipt
            .as_ref()
            .map(|read| property_receipt(read, p.case.as_deref(), id)),
        note: None,
    })
}

/// The files each admitted property's stored mutant touches (its diff's `---`/`+++` paths,
/// through the path normaliser), for the core to try first the mutants the patch is about.
/// Nothing when re-proofs are off; a mutant the base does not hold touches nothing.
pub(super) fn mutant_files(
    config: &crate::cli::config::GateConfig,
    base: &str,
    catalog: &serde_json::Value,
) -> Result<std::collections::BTreeMap<String, Vec<String>>, CliError> {
    let mut out = std::collections::BTreeMap::new();
    if config.properties.reprove == 0 {
        return Ok(out);
    }
    let rows = catalog
        .get("properties")
        .or(Some(catalog))
        .and_then(serde_json::Value::as_array);
    for row in rows.into_iter().flatten().take(1000) {
        let (Some(id), Some(_)) = (row.get("id").and_then(|v| v.as_str()), row.get("admitted"))
        else {
            continue;
        };
        let Some(diff) = base_file(base, &config.properties.mutant_path(id))? else {
            continue;
        };
        let mut files = touched(&diff);
        files.truncate(100);
        out.insert(id.to_owned(), files);
    }
    Ok(out)
}

/// The files a diff touches (its `--- a/` and `+++ b/` paths, through the path normaliser),
/// each once, in order.
fn touched(diff: &[u8]) -> Vec<String> {
    let mut files: Vec<String> = Vec::new();
    for line in String::from_utf8_lossy(diff).lines() {
        let Some(path) = line
            .strip_prefix("+++ b/")
            .or_else(|| line.strip_prefix("--- a/"))
        else {
            continue;
        };
        if let Ok(p) = crate::core::path::RepoPath::parse(path.trim_end())
            && !files.iter().any(|f| f == p.as_str())
        {
            files.push(p.as_str().to_owned());
        }
    }
    files
}

/// Applies the mutant (a diff from the base) to the judged tree's copy (CONTRACT.md section
/// 11.10): as it is; else by a three-way merge of each file it touches (the base's version,
/// the base with the mutant, the judged tree's: `git merge-file`, clean merges only); else,
/// when every hunk removes a line, with no context required (the lines it removes must still
/// be there, word for word: the mutant still deletes what it deleted, the patch only moved or
/// added lines beside it). Otherwise it does not apply, and why.
fn apply_mutant(tree: &Path, diff: &[u8], base: &str) -> Result<(), String> {
    let Err(why) = apply_diff(tree, diff, &[]) else {
        return Ok(());
    };
    if three_way(tree, diff, base).is_ok() {
        output::error("re-proof: the mutant applied by a three-way merge");
        return Ok(());
    }
    if every_hunk_removes(diff) && apply_diff(tree, diff, &["-C0"]).is_ok() {
        output::error(
            "re-proof: the mutant applied with its context loosened (the lines it removes are there)",
        );
        return Ok(());
    }
    Err(why)
}

/// Whether each hunk of `diff` removes at least one line.
fn every_hunk_removes(diff: &[u8]) -> bool {
    let text = String::from_utf8_lossy(diff);
    let mut hunks = 0;
    let mut current_removes = true;
    for line in text.lines() {
        if line.starts_with("@@") {
            if !current_removes {
                return false;
            }
            hunks += 1;
            current_removes = false;
        } else if line.starts_with('-') && !line.starts_with("--- ") {
            current_removes = true;
        } else if line.starts_with("diff --git") && !current_removes {
            return false;
        }
    }
    hunks > 0 && current_removes
}

/// The three-way apply: each touched file merged from the base's version, the base's with
/// the mutant applied, and the tree's; written only when every file merges cleanly.
fn three_way(tree: &Path, diff: &[u8], base: &str) -> Result<(), String> {
    let scratch = tempfile::tempdir().map_err(|e| e.to_string())?;
    let (old, new) = (scratch.path().join("base"), scratch.path().join("mutant"));
    let files = touched(diff);
    for f in &files {
        let content = base_file(base, f)
            .map_err(|e| e.message)?
            .ok_or_else(|| format!("{f} is not in the base"))?;
        for dir in [&old, &new] {
            let at = dir.join(f);
            if let Some(parent) = at.parent() {
                std::fs::create_dir_all(parent).map_err(|e| e.to_string())?;
            }
            std::fs::write(&at, &content).map_err(|e| e.to_string())?;
        }
    }
    apply_diff(&new, diff, &[])?;
    let mut merged = Vec::with_capacity(files.len());
    for f in &files {
        // A regular file under real directories: never through a link the patch planted
        // (git apply refuses to write beyond one too).
        let ours = tree.join(f);
        let mut at = tree.to_path_buf();
        for part in Path::new(f).components() {
            at.push(part);
            let kind = std::fs::symlink_metadata(&at).map(|m| m.file_type());
            let fine = match kind {
                Ok(k) if at == ours => k.is_file(),
                Ok(k) => k.is_dir(),
                Err(_) => false,
            };
            if !fine {
                return Err(format!("{f} is not a regular file of the judged tree"));
            }
        }
        let out = super::super::git::git_command()
            .arg("merge-file")
            .arg("-p")
            .arg(&ours)
            .arg(old.join(f))
            .arg(new.join(f))
            .stdin(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .output()
            .map_err(|e| format!("cannot run git merge-file: {e}"))?;
        if !out.status.success() {
            return Err(format!("{f}: the three-way merge conflicts"));
        }
        merged.push((ours, out.stdout));
    }
    for (path, content) in merged {
        std::fs::write(&path, content).map_err(|e| format!("{}: {e}", path.display()))?;
    }
    Ok(())
}

/// Applies a diff to the files under `tree` (not a repository: `git apply` works as `patch`
/// there, and looks no further up for one).
fn apply_diff(tree: &Path, diff: &[u8], options: &[&str]) -> Result<(), String> {
    use std::io::Write as _;
    let mut child = super::super::git::git_command()
        .current_dir(tree)
        .env("GIT_CEILING_DIRECTORIES", tree.parent().unwrap_or(tree))
        .env_remove("GIT_DIR")
        .env_remove("GIT_WORK_TREE")
        .args(["apply", "--whitespace=nowarn"])
        .args(options)
        .arg("-")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot run git apply: {e}"))?;
    if let Some(mut stdin) = child.stdin.take() {
        let _ = stdin.write_all(diff);
    }
    let out = child
        .wait_with_output()
        .map_err(|e| format!("git apply: {e}"))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(String::from_utf8_lossy(&out.stderr).trim().to_owned())
    }
}
