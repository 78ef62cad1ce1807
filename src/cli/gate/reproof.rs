//! The `reproof` step (CONTRACT.md sections 11.5 and 15.3): the admitted property the plan
//! names, run once on a fresh copy of the judged tree. A property whose test files are Python
//! is re-proven on the judged tree's code byte for byte with its own assertions turned (its
//! twin, [`super::twin`]), which must fail: a self-test of the code finds nothing to tell the
//! re-proof from a plain run. Its admission mutant (stored in the base by `patchgate admit
//! --write`) must still apply to the tree (section 11.10), in a scratch copy of the files it
//! touches. Any other property (a compiled test, Rust's) runs with its mutant applied. What it
//! did is one entry of the facts' `reproof`; what it proves, and whether another is tried, is
//! the core's to say.

use std::path::Path;

use super::super::error::CliError;
use super::super::git::base_file;
use super::super::progress::{self, Event};
use super::super::runner::{Outcome, Place, Run, property_argv, property_receipt};
use super::super::sandbox::Room;
use super::gather::Gathered;
use super::mutants::touched;
use crate::core::gate::Reproof;

/// The copy a re-proof of `id` starts from (section 11.10): a compiled project's built copy
/// (the room as the build step left it), otherwise a fresh copy of the judged tree.
pub(super) fn room_for(g: &Gathered, id: &str) -> Result<Room, CliError> {
    match &g.config.build {
        Some(_) => g.room.fork(&format!("the re-proof of {id}")),
        None => super::super::runner::open_room(&g.config.sandbox, &g.tree, g.cache.as_ref()),
    }
}

/// A re-proof started beside the property runs (the plan's `reproof_ahead`), in its own copy
/// made before they start: its result used only if the plan's `reproof` names the same
/// property; otherwise (or dropped: an error, a signal) it is stopped.
pub(super) struct ReproofBeside<'scope> {
    pub id: String,
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
    go: std::sync::Arc<std::sync::atomic::AtomicBool>,
    handle: Option<std::thread::ScopedJoinHandle<'scope, Result<Option<Reproof>, CliError>>>,
}

impl ReproofBeside<'_> {
    /// Lets it run its property now, on a core the other runs left free (the suite still
    /// running as the properties' run 1): its result is still used only if the plan names it.
    pub fn release(&self) {
        self.go.store(true, std::sync::atomic::Ordering::SeqCst);
    }

    /// Lets it run its property (it waited, prepared, for the plan to ask), and gives its
    /// result once it ended (`None`: it was stopped).
    pub fn join(mut self) -> Result<Option<Reproof>, CliError> {
        self.go.store(true, std::sync::atomic::Ordering::SeqCst);
        self.handle
            .take()
            .ok_or_else(|| CliError::software("the re-proof was joined twice"))?
            .join()
            .unwrap_or_else(|_| Err(CliError::software("the re-proof's thread panicked")))
    }

    /// Stops it (killed if it still runs); what it did is not recorded.
    pub fn stop(mut self) {
        self.stop.store(true, std::sync::atomic::Ordering::SeqCst);
        if let Some(Ok(Ok(Some(_)))) = self.handle.take().map(std::thread::ScopedJoinHandle::join) {
            progress::say(Event::ReproofDropped {
                property: self.id.clone(),
            });
        }
    }
}

impl Drop for ReproofBeside<'_> {
    fn drop(&mut self) {
        self.stop.store(true, std::sync::atomic::Ordering::SeqCst);
    }
}

/// Starts the re-proof of `id` beside the property runs (see [`ReproofBeside`]). Its
/// property runs once the runner lets it go, or, sooner, once `freed` is set: the suite
/// started beside the property runs ended, and its core is free (issue 68: a re-proof that
/// costs no wall time of its own).
pub(super) fn beside<'scope, 'env>(
    scope: &'scope std::thread::Scope<'scope, 'env>,
    g: &'env Gathered,
    id: &str,
    freed: Option<std::sync::Arc<std::sync::atomic::AtomicBool>>,
) -> Result<ReproofBeside<'scope>, CliError> {
    let room = room_for(g, id)?;
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let go = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let (flag, start) = (std::sync::Arc::clone(&stop), std::sync::Arc::clone(&go));
    let owned = id.to_owned();
    progress::say(Event::ReproofAhead {
        property: id.to_owned(),
    });
    let handle = scope.spawn(move || {
        reprove(
            g,
            &owned,
            Some(room),
            Some(StopGo {
                stop: &flag,
                go: &start,
                freed: freed.as_deref(),
            }),
        )
    });
    Ok(ReproofBeside {
        id: id.to_owned(),
        stop,
        go,
        handle: Some(handle),
    })
}

/// How a re-proof started ahead is held: stopped when `stop` is set; its property run waits,
/// once its mutant is built, until `go` (or `freed`) is.
pub(super) struct StopGo<'a> {
    stop: &'a std::sync::atomic::AtomicBool,
    go: &'a std::sync::atomic::AtomicBool,
    freed: Option<&'a std::sync::atomic::AtomicBool>,
}

impl StopGo<'_> {
    /// Waits until it may run (`go`, or a core `freed`): `false` when it was stopped first.
    fn waited(&self) -> bool {
        use std::sync::atomic::Ordering;
        while !self.go.load(Ordering::SeqCst)
            && !self.freed.is_some_and(|f| f.load(Ordering::SeqCst))
        {
            if self.stop.load(Ordering::SeqCst) {
                return false;
            }
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        true
    }
}

/// Re-proves `id`: its mutant applied to `room` (or a copy made now, [`room_for`]), its
/// property run once there. `None` when `hold` stopped it.
pub(super) fn reprove(
    g: &Gathered,
    id: &str,
    room: Option<Room>,
    hold: Option<StopGo<'_>>,
) -> Result<Option<Reproof>, CliError> {
    let cancel = hold.as_ref().map(|h| h.stop);
    let p = &g.config.properties;
    let not_applied = |note: String| Reproof {
        property: id.to_owned(),
        applied: false,
        turned: false,
        exit_code: None,
        receipt: None,
        note: Some(note),
    };
    let path = p.mutant_path(id);
    let Some(diff) = base_file(&g.base, &path)? else {
        return Ok(Some(not_applied(format!(
            "no mutant stored at {path} in the base: `patchgate admit {id} --mutant REF --write` stores it"
        ))));
    };
    let sources = super::twin::python_sources(g, id)?;
    if !sources.is_empty() {
        return turned(g, id, &diff, &sources, room, hold);
    }
    // A compiled project's re-proof starts from the build step's output (section 11.10): the
    // built copy, its mutant applied, an incremental build under the build step's timeout.
    // Otherwise a fresh copy of the judged tree.
    let room = match room {
        Some(room) => room,
        None => room_for(g, id)?,
    };
    if let Err(why) = apply_mutant(&room.tree, &diff, &g.base) {
        progress::say(Event::MutantDoesNotApply {
            property: id.to_owned(),
            why: why.clone(),
        });
        return Ok(Some(not_applied(format!(
            "not as written, not by a three-way merge, not with its context loosened: {why}"
        ))));
    }
    // What `git apply` wrote is the room's runs' to write again.
    room.settle()?;
    if let Some(build) = &g.config.build {
        let label = build_label(id);
        let mut run =
            Run::new(&label, &build.command, build.timeout(), Place::Room(&room)).tail(2048);
        if let Some(flag) = cancel {
            run = run.cancel(flag);
        }
        let built = match run.start()? {
            Outcome::Ran(ran) => ran,
            Outcome::Cancelled if cancel.is_some() => return Ok(None),
            Outcome::Cancelled => return Err(CliError::software("the re-proof was cancelled")),
        };
        if built.run != Some(0) {
            return Ok(Some(Reproof {
                property: id.to_owned(),
                applied: true,
                turned: false,
                exit_code: None,
                receipt: None,
                note: Some(match (built.run, built.over) {
                    (Some(code), _) => {
                        format!("its mutant applied does not build (build exit {code})")
                    }
                    (None, Some(over)) => {
                        format!("its build, the mutant applied, went {}", <&str>::from(over))
                    }
                    (None, None) => {
                        "its build, the mutant applied, timed out or was killed".to_owned()
                    }
                }),
            }));
        }
    }
    run_property(g, id, &room, hold, false)
}

/// The re-proof's property run, as the runner labels it: its assertions turned (a Python
/// property) or its admission mutant applied.
fn run_label(id: &str, turned: bool) -> String {
    match turned {
        true => format!("re-proof {id} (its assertions turned)"),
        false => format!("re-proof {id} (mutant applied)"),
    }
}

/// The build of a re-proof's mutant, as the runner labels it.
fn build_label(id: &str) -> String {
    format!("re-proof {id}: build (mutant applied)")
}

/// The runs a re-proof of `id` makes, in order, by their labels (`--dry-run` says them): its
/// property with its assertions turned when its sources are Python; else, its admission
/// mutant applied, the build step first when there is one; none without a stored mutant.
pub(super) fn planned_runs(g: &Gathered, id: &str) -> Result<Vec<String>, CliError> {
    if base_file(&g.base, &g.config.properties.mutant_path(id))?.is_none() {
        // No mutant stored: nothing runs, and the re-proof is void.
        return Ok(Vec::new());
    }
    if !super::twin::python_sources(g, id)?.is_empty() {
        return Ok(vec![run_label(id, true)]);
    }
    let build = g.config.build.as_ref().map(|_| build_label(id));
    Ok(build.into_iter().chain([run_label(id, false)]).collect())
}

/// The property's own command, once, in `room`, once `hold` lets it (`None`: stopped), as a
/// re-proof: `turned` says how its check was changed.
fn run_property(
    g: &Gathered,
    id: &str,
    room: &Room,
    hold: Option<StopGo<'_>>,
    turned: bool,
) -> Result<Option<Reproof>, CliError> {
    let cancel = hold.as_ref().map(|h| h.stop);
    if hold.as_ref().is_some_and(|h| !h.waited()) {
        return Ok(None);
    }
    let p = &g.config.properties;
    let label = run_label(id, turned);
    let argv = property_argv(&p.command, &[id.to_owned()]);
    let mut run = Run::new(&label, &argv, p.timeout(), Place::Room(room)).must_fail();
    if let Some(flag) = cancel {
        run = run.cancel(flag);
    }
    let ran = match run.start()? {
        Outcome::Cancelled if cancel.is_some() => return Ok(None),
        outcome => outcome.ran()?,
    };
    Ok(Some(Reproof {
        property: id.to_owned(),
        applied: true,
        turned,
        exit_code: ran.run,
        receipt: ran
            .receipt
            .as_ref()
            .map(|read| property_receipt(read, p.case.as_deref(), id, &g.base_skips)),
        note: ran
            .over
            .map(|o| format!("its run went {} (the room ended it)", <&str>::from(o))),
    }))
}

/// The re-proof of a property whose test files are Python (CONTRACT.md section 15.3): its
/// mutant must still apply to the judged tree (in a scratch copy of the files it touches,
/// section 11.10); then, in a copy of the judged tree, its test files are its twins (every
/// assertion turned) and its own command runs, as a property run does. `None` when `hold`
/// stopped it.
fn turned(
    g: &Gathered,
    id: &str,
    diff: &[u8],
    sources: &[String],
    room: Option<Room>,
    hold: Option<StopGo<'_>>,
) -> Result<Option<Reproof>, CliError> {
    let void = |note: String| {
        Ok(Some(Reproof {
            property: id.to_owned(),
            applied: false,
            turned: true,
            exit_code: None,
            receipt: None,
            note: Some(note),
        }))
    };
    if let Err(why) = mutant_applies(g, diff) {
        progress::say(Event::MutantDoesNotApply {
            property: id.to_owned(),
            why: why.clone(),
        });
        return void(format!(
            "its mutant, not as written, not by a three-way merge, not with its context loosened: {why}"
        ));
    }
    let seed = g.facts.configured.as_ref().map_or(0, |c| c.seed);
    let helper = super::twin::drawn(seed, "_check", "helper");
    let twins = super::twin::twins(g, sources, &helper)?;
    if twins.iter().all(|(_, t)| t.is_none()) {
        return void(format!(
            "no assertion of its test files ({}) to turn",
            sources.join(", ")
        ));
    }
    let room = match room {
        Some(room) => room,
        None => room_for(g, id)?,
    };
    for (path, twin) in &twins {
        if let Some(twin) = twin {
            // A re-proof detects, it does not shrink (issue 50): the process runs this
            // property's files alone, so its hypothesis default may drop the shrink phase.
            let twin = super::twin::without_shrinking(twin);
            let at = super::twin::write_in(&room.tree, path, &twin)
                .map_err(|why| CliError::software(format!("cannot write a twin: {why}")))?;
            room.placed(&at);
        }
    }
    run_property(g, id, &room, hold, true)
}

/// Whether the mutant (a diff from the base) still applies to the judged tree (section 11.10),
/// tried on a scratch copy of the files it touches: the code the re-proof runs stays the judged
/// tree's.
fn mutant_applies(g: &Gathered, diff: &[u8]) -> Result<(), String> {
    let scratch = tempfile::tempdir().map_err(|e| e.to_string())?;
    let files = touched(diff);
    let names: Vec<&str> = files.iter().map(String::as_str).collect();
    let contents = super::super::git::blobs(&g.tree, &names, 64 << 20).map_err(|e| e.message)?;
    for (f, content) in files.iter().zip(contents) {
        let Some(content) = content else { continue };
        let at = scratch.path().join(f);
        if let Some(parent) = at.parent() {
            std::fs::create_dir_all(parent).map_err(|e| e.to_string())?;
        }
        std::fs::write(&at, content).map_err(|e| e.to_string())?;
    }
    apply_mutant(scratch.path(), diff, &g.base)
}

/// Applies the mutant (a diff from the base) to the judged tree's copy (CONTRACT.md section
/// 11.10): as it is; else by a three-way merge of each file it touches (the base's version,
/// the base with the mutant, the judged tree's: `git merge-file`, clean merges only); else,
/// when every hunk removes lines found exactly once in the base's file and in the judged
/// one, with no context
/// required (the lines it removes are still there, word for word, and nowhere else: the
/// mutant still deletes what it deleted, the patch only added lines beside it). Otherwise it
/// does not apply, and why.
fn apply_mutant(tree: &Path, diff: &[u8], base: &str) -> Result<(), String> {
    let Err(why) = apply_diff(tree, diff, &[]) else {
        return Ok(());
    };
    if three_way(tree, diff, base).is_ok() {
        progress::say(Event::MutantApplied {
            how: "by a three-way merge",
        });
        return Ok(());
    }
    if removals_are_unambiguous(tree, diff, base) && apply_diff(tree, diff, &["-C0"]).is_ok() {
        progress::say(Event::MutantApplied {
            how: "with its context loosened (the lines it removes are there)",
        });
        return Ok(());
    }
    Err(why)
}

/// Whether the mutant may apply with no context: every hunk removes lines, and each run of
/// lines it removes is found exactly once in the base's file and exactly once in the judged
/// tree's (so it can land nowhere but on the lines it was written for: a run found twice, a
/// `self.iter_mut().zeroize();` body in two impls, say, could apply to the wrong one once the
/// patch changed the right one, and prove nothing).
fn removals_are_unambiguous(tree: &Path, diff: &[u8], base: &str) -> bool {
    let parts = crate::core::patch::read(diff);
    let once = |content: &str, run: &[&[u8]]| {
        let lines: Vec<&[u8]> = content.lines().map(str::as_bytes).collect();
        lines.windows(run.len()).filter(|w| *w == run).count() == 1
    };
    !parts.is_empty()
        && parts.iter().all(|part| {
            let path = part.new_path().unwrap_or_default().trim_end().to_owned();
            let (Ok(judged), Ok(Some(before))) = (
                std::fs::read_to_string(tree.join(&path)),
                base_file(base, &path),
            ) else {
                return false;
            };
            let before = String::from_utf8_lossy(&before);
            !part.hunks.is_empty()
                && part.hunks.iter().all(|hunk| {
                    // Each run as `str::lines` gives lines: a `\r` before the break is not
                    // the line's.
                    let runs: Vec<Vec<&[u8]>> = hunk
                        .removed_runs()
                        .into_iter()
                        .map(|r| {
                            r.into_iter()
                                .map(|l| l.strip_suffix(b"\r").unwrap_or(l))
                                .collect()
                        })
                        .collect();
                    !runs.is_empty()
                        && runs
                            .iter()
                            .all(|run| once(&before, run) && once(&judged, run))
                })
        })
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Whether a re-proof held by `stop`, `go` and `freed` may run (see [`StopGo::waited`]).
    fn waits(
        stop: &std::sync::atomic::AtomicBool,
        go: &std::sync::atomic::AtomicBool,
        freed: Option<&std::sync::atomic::AtomicBool>,
    ) -> bool {
        StopGo { stop, go, freed }.waited()
    }

    /// A re-proof held beside the property runs runs once the runner lets it go, or once the
    /// suite beside them ended (a core freed, issue 68), and never once it was stopped.
    #[test]
    fn a_held_re_proof_runs_when_a_core_is_freed() {
        use std::sync::atomic::{AtomicBool, Ordering};
        let flag = AtomicBool::new;
        let (stop, go, freed) = (flag(false), flag(false), flag(true));
        assert!(waits(&stop, &go, Some(&freed)));
        freed.store(false, Ordering::SeqCst);
        stop.store(true, Ordering::SeqCst);
        assert!(!waits(&stop, &go, Some(&freed)));
        assert!(!waits(&stop, &go, None));
        go.store(true, Ordering::SeqCst);
        assert!(waits(&stop, &go, None));
        // A core freed later lets a waiting one go.
        let (stop, go, later) = (flag(false), flag(false), flag(false));
        std::thread::scope(|s| {
            let waiting = s.spawn(|| waits(&stop, &go, Some(&later)));
            later.store(true, Ordering::SeqCst);
            assert!(waiting.join().unwrap());
        });
    }
}
