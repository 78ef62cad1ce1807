//! The `reproof` step (CONTRACT.md section 11.5): the admitted property the plan names, run
//! once on a fresh copy of the judged tree with its admission mutant (stored in the base by
//! `patchgate admit --write`) applied. What it did is one entry of the facts' `reproof`; what
//! it proves, and whether another is tried, is the core's to say.

use std::path::Path;

use super::super::error::CliError;
use super::super::git::base_file;
use super::super::output;
use super::super::runner::{Place, Run, property_argv, property_receipt};
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
    let room = Room::open(&g.config.sandbox, &g.tree, g.cache.as_ref())?;
    if let Err(why) = apply_diff(&room.tree, &diff) {
        output::error(&format!(
            "re-proof {id}: its mutant does not apply here ({why})"
        ));
        return Ok(not_applied(format!(
            "its mutant does not apply to this tree: {why}"
        )));
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

/// Applies a diff to the files under `tree` (not a repository: `git apply` works as `patch`
/// there, and looks no further up for one).
fn apply_diff(tree: &Path, diff: &[u8]) -> Result<(), String> {
    use std::io::Write as _;
    let mut child = super::super::git::git_command()
        .current_dir(tree)
        .env("GIT_CEILING_DIRECTORIES", tree.parent().unwrap_or(tree))
        .env_remove("GIT_DIR")
        .env_remove("GIT_WORK_TREE")
        .args(["apply", "--whitespace=nowarn", "-"])
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
