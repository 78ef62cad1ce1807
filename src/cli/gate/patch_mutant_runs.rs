//! The patch mutants (issue 52; docs/design/observe.md): made from the observed run's facts
//! (one per changed code line a check ran, the syntax tree's operators), then each run on a
//! copy of the judged tree with it applied, against only the checks that ran its line, its
//! receipt read: a failure listed is a kill, a pass a survivor, anything else void.

use std::collections::{BTreeMap, BTreeSet};

use super::super::error::CliError;
use super::super::progress::{self, Event};
use super::super::rewriting::patch_mutants::{self, PatchMutant};
use super::super::runner::{Outcome, Place, Run};
use super::super::sandbox::Room;
use super::gather::Gathered;
use crate::core::gate::{
    MAX_PATCH_MUTANTS, MutantOperator, MutantState, ObserveFacts, PatchMutantFacts,
};

/// The largest file mutated.
const MAX_FILE_BYTES: usize = 4 << 20;

/// The text of each of `files` in `tree`.
fn texts(tree: &str, files: &[&str]) -> Result<BTreeMap<String, Vec<u8>>, CliError> {
    let blobs = super::super::git::blobs(tree, files, MAX_FILE_BYTES)?;
    Ok(files
        .iter()
        .zip(blobs)
        .filter_map(|(f, b)| Some(((*f).to_owned(), b?)))
        .collect())
}

/// The mutants of the lines some test ran, at most `max`: the added conditions first (the
/// survivor that says "this condition can be removed"), then by file and line, one per line.
pub(super) fn make(
    tree: &str,
    observed: &ObserveFacts,
    max: usize,
) -> Result<Vec<PatchMutantFacts>, CliError> {
    Ok(made(tree, observed, max)?
        .into_iter()
        .map(|(f, _)| f)
        .collect())
}

/// [`make`], each with the mutant itself (what `patchgate observe` shows).
pub(super) fn made(
    tree: &str,
    observed: &ObserveFacts,
    max: usize,
) -> Result<Vec<(PatchMutantFacts, PatchMutant)>, CliError> {
    let mut by_file: BTreeMap<&str, BTreeMap<u32, Vec<String>>> = BTreeMap::new();
    for l in &observed.lines {
        let checks: Vec<String> = l
            .checks
            .iter()
            .filter(|c| *c != super::observe::IMPORT)
            .cloned()
            .collect();
        if !checks.is_empty() {
            by_file
                .entry(l.file.as_str())
                .or_default()
                .insert(l.line, checks);
        }
    }
    let files: Vec<&str> = by_file.keys().copied().collect();
    let texts = texts(tree, &files)?;
    let mut made: Vec<(PatchMutantFacts, PatchMutant)> = Vec::new();
    for (file, lines) in &by_file {
        let Some(text) = texts.get(*file) else {
            continue;
        };
        let wanted: BTreeSet<u32> = lines.keys().copied().collect();
        for m in patch_mutants::of_file(file, text, &wanted) {
            made.push((
                PatchMutantFacts {
                    file: (*file).to_owned(),
                    line: m.line,
                    operator: m.operator,
                    code: shown_line(text, &m),
                    checks: lines.get(&m.line).cloned().unwrap_or_default(),
                    state: MutantState::Pending,
                    killed_by: Vec::new(),
                },
                m,
            ));
        }
    }
    made.sort_by_key(|(m, _)| m.operator != MutantOperator::ConditionTrue);
    made.truncate(max.min(MAX_PATCH_MUTANTS));
    Ok(made)
}

/// The mutated line as it reads, at most 200 characters.
fn shown_line(text: &[u8], m: &PatchMutant) -> String {
    let after = m.apply(text);
    let line = String::from_utf8_lossy(&after)
        .lines()
        .nth(m.line as usize - 1)
        .unwrap_or_default()
        .trim()
        .to_owned();
    crate::core::text::visible(&line)
        .chars()
        .take(200)
        .collect()
}

/// The mutant `facts` describe, made again from the judged tree (the same operators on the
/// same line give the same mutant).
fn remade(
    g: &Gathered,
    facts: &PatchMutantFacts,
) -> Result<Option<(Vec<u8>, PatchMutant)>, CliError> {
    let texts = texts(&g.tree, &[facts.file.as_str()])?;
    let Some(text) = texts.get(&facts.file) else {
        return Ok(None);
    };
    let m = patch_mutants::of_file(&facts.file, text, &BTreeSet::from([facts.line]))
        .into_iter()
        .find(|m| m.operator == facts.operator);
    Ok(m.map(|m| (text.clone(), m)))
}

/// A copy of the judged tree as the runs start from it (built, when there is a build step),
/// made before any run of the judged code: every patch mutant's run starts from it, so no run
/// remembers another. Code that wrote down what it saw in the observed run (its environment,
/// in a scratch directory the runs share) could otherwise tell a mutant's run from it by the
/// one thing that differs, and fail it on purpose: a surviving mutant counted as killed.
pub(super) struct Pristine {
    room: Room,
    /// Held to read while a run's copy is made of `room`; the last run holds it to write,
    /// and runs in `room` itself (nothing runs there after it).
    copying: std::sync::RwLock<()>,
    /// The mutants' runs still to start ([`Pristine::expect`]); `usize::MAX` once the last
    /// one ran in `room` (it is spent).
    left: std::sync::atomic::AtomicUsize,
}

impl Pristine {
    /// A copy of `g`'s room now, when the gate may run patch mutants (observing on, some
    /// asked for, a changed file); `None` otherwise.
    pub fn keep(g: &Gathered) -> Result<Option<Self>, CliError> {
        let wanted = g.watched.unread().is_some()
            && g.watched.config.is_some_and(|c| c.mutants > 0)
            && !g.watched.files.is_empty();
        if !wanted {
            return Ok(None);
        }
        Ok(Some(Self {
            room: g.room.fork("the patch mutants, before any run")?,
            copying: std::sync::RwLock::new(()),
            left: std::sync::atomic::AtomicUsize::new(0),
        }))
    }

    /// The number of mutants' runs about to start.
    pub fn expect(&self, runs: usize) {
        use std::sync::atomic::Ordering::SeqCst;
        let _ = self
            .left
            .fetch_update(SeqCst, SeqCst, |l| (l != usize::MAX).then_some(runs));
    }

    /// `run` in a fork of the copy, or, for the last of the runs [`Pristine::expect`] said,
    /// in the copy itself, once every other run's fork is made; `None` once it is spent.
    fn in_room<T>(
        &self,
        label: &str,
        run: impl FnOnce(&Room) -> Result<T, CliError>,
    ) -> Option<Result<T, CliError>> {
        use std::sync::atomic::Ordering::SeqCst;
        let reading = self
            .copying
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let before = self
            .left
            .fetch_update(SeqCst, SeqCst, |l| match l {
                usize::MAX => None,
                0 | 1 => Some(usize::MAX),
                l => Some(l - 1),
            })
            .ok()?;
        if before > 1 {
            let room = match self.room.fork(label) {
                Ok(room) => room,
                Err(e) => return Some(Err(e)),
            };
            drop(reading);
            return Some(run(&room));
        }
        drop(reading);
        let _writing = self
            .copying
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        Some(run(&self.room))
    }
}

/// What a mutant's run (and its decoy's) is given: its timeout, the build step's build with
/// the mutants switched in (if any), and the room no run touched.
pub(super) type Rooms<'a> = (
    std::time::Duration,
    Option<&'a super::observe_rust::Built>,
    Option<&'a Pristine>,
);

/// Runs patch mutant `facts` (number `n`) in a copy of the [`Pristine`] tree with it applied
/// (a Rust one switched in where it was `built` in: its switch on, nothing written or
/// rebuilt), the observed run's command selecting only its checks, under `timeout`. What
/// became of it.
pub(super) fn run_one(
    g: &Gathered,
    n: u32,
    facts: &PatchMutantFacts,
    (timeout, built, pristine): Rooms<'_>,
) -> Result<PatchMutantFacts, CliError> {
    let mut out = facts.clone();
    out.state = MutantState::Void;
    let Some((text, m)) = remade(g, facts)? else {
        return Ok(out);
    };
    // A Rust mutant is compiled from the copy's file; a Python one is applied as the import
    // system loads the file, which stays the judged text (code that reads its own file, its
    // size or its hash cannot tell a mutant's run from any other).
    let rust = facts.file.ends_with(".rs");
    let selecting = match rust {
        true => super::observe_rust::selecting_argv,
        false => super::observe::selecting_argv,
    };
    let Some(argv) = selecting(&g.config.suite.command, &facts.checks, (&facts.file, &m)) else {
        return Ok(out);
    };
    let label = format!(
        "patch mutant {} ({}:{} {})",
        n + 1,
        facts.file,
        facts.line,
        <&str>::from(facts.operator)
    );
    let switched = built
        .filter(|_| rust)
        .and_then(|b| b.argv(&facts.file, facts.line, facts.operator, &argv));
    let ran = pristine.and_then(|p| {
        p.in_room(&label, |room| {
            if switched.is_none() && rust {
                let path = room.tree.join(&facts.file);
                std::fs::write(&path, m.apply(&text)).map_err(|e| {
                    CliError::software(format!("cannot write {}: {e}", path.display()))
                })?;
                room.settle()?;
            }
            let argv = switched.as_ref().unwrap_or(&argv);
            Run::new(&label, argv, timeout, Place::Room(room)).start()
        })
    });
    match ran {
        Some(ran) => Ok(fate(out, ran?)),
        None => {
            progress::say(Event::Plan(format!(
                "{label}: no copy of the tree that no run touched is left for it: void"
            )));
            Ok(out)
        }
    }
}

/// A killed Rust mutant's run made again with no mutant on: the same command with a switch's
/// value that turns none on where it was switched in (the same kind of value), the copy's own
/// build where it was built on its own, in a copy of the [`Pristine`] tree. Code that tells a
/// mutant's run by what it is given (its command line selects tests; the observed run's does
/// not) and fails it on purpose fails this one too. Whether it passed (not run: no).
pub(super) fn decoy(
    g: &Gathered,
    n: u32,
    facts: &PatchMutantFacts,
    (timeout, built, pristine): Rooms<'_>,
) -> Result<bool, CliError> {
    let Some((_, m)) = remade(g, facts)? else {
        return Ok(false);
    };
    let suite = &g.config.suite.command;
    let Some(argv) = super::observe_rust::selecting_argv(suite, &facts.checks, (&facts.file, &m))
    else {
        return Ok(false);
    };
    let argv = built
        .filter(|b| {
            b.argv(&facts.file, facts.line, facts.operator, &[])
                .is_some()
        })
        .map_or(argv.clone(), |b| b.decoy_argv(&argv));
    let label = format!("the decoy of patch mutant {}", n + 1);
    let ran = pristine.and_then(|p| {
        p.in_room(&label, |room| {
            Run::new(&label, &argv, timeout, Place::Room(room)).start()
        })
    });
    let Some(Outcome::Ran(ran)) = ran.transpose()? else {
        return Ok(false);
    };
    Ok(ran.run == Some(0)
        && matches!(ran.receipt, Some(Ok(r)) if r.disagrees.is_none() && r.failed.is_empty() && r.executed() > 0))
}

/// What became of a mutant (`out`, void until its run says otherwise) by its run's outcome.
fn fate(mut out: PatchMutantFacts, ran: Outcome) -> PatchMutantFacts {
    let ran = match ran {
        Outcome::Ran(ran) => ran,
        Outcome::Cancelled => return out,
    };
    // The same checks passed on the judged tree, and the mutant is all that differs: a run
    // that does not pass and whose receipt lists failed or errored checks is a kill, whether
    // its exit says "caught" or "interrupted" (a module the mutant breaks at import is a
    // collection error: pytest exits 2).
    let failed = ran.run.is_some_and(|c| c != 0);
    match ran.receipt {
        Some(Ok(report)) if report.disagrees.is_none() => {
            if failed && !report.failed.is_empty() {
                out.state = MutantState::Killed;
                out.killed_by = report
                    .failed
                    .iter()
                    .take(10)
                    .map(|f| {
                        f.chars()
                            .take(crate::core::gate::MAX_CHECK_ID_CHARS)
                            .collect()
                    })
                    .collect();
            } else if ran.run == Some(0) && report.failed.is_empty() && report.executed() > 0 {
                out.state = MutantState::Survived;
            }
        }
        _ => {}
    }
    out
}

#[cfg(test)]
mod tests {
    use super::super::observe::test_support::{pytest, run_in, write_in};
    use super::*;

    /// A Python patch mutant is applied as the import system loads its file, never written:
    /// code that reads its own file (its size, here) sees the judged text, and the mutant's
    /// behaviour is what the tests see. Only the tests kept run.
    #[test]
    fn a_python_mutant_is_applied_as_its_module_loads() {
        let dir = tempfile::tempdir().unwrap();
        let module = "import os\nSIZE = os.path.getsize(__file__)\n\n\ndef sign(x):\n    if x > 0:\n        return 1\n    return 0\n";
        let tests = "import os\nfrom shop.s import SIZE, sign\n\n\ndef test_positive():\n    assert sign(5) == 1\n    open('seen', 'w').write(f\"{SIZE} {os.path.getsize('shop/s.py')}\")\n\n\ndef test_negative():\n    assert sign(-1) == 0\n\n\ndef test_left_out():\n    open('left-out', 'w').write('ran')\n";
        for (path, text) in [
            ("shop/__init__.py", ""),
            ("shop/s.py", module),
            ("tests/__init__.py", ""),
            ("tests/test_s.py", tests),
        ] {
            write_in(dir.path(), path, text);
        }
        // `if x > 0:` made `if True:`, as the gate makes it.
        let m = patch_mutants::python(module.as_bytes(), &BTreeSet::from([6]))
            .pop()
            .expect("a mutant of line 6");
        assert_eq!(m.operator, MutantOperator::ConditionTrue);
        let receipt = dir.path().join("report.xml");
        let suite = pytest(&["--junitxml={junit}", "tests"]);
        let checks = [
            "tests.test_s::test_positive".to_owned(),
            "tests.test_s::test_negative".to_owned(),
        ];
        let argv = super::super::observe::selecting_argv(&suite, &checks, ("shop/s.py", &m));
        let out = run_in(dir.path(), argv.unwrap(), &receipt);
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert_eq!(out.status.code(), Some(1), "{stdout}");
        let report = std::fs::read_to_string(&receipt).unwrap();
        assert!(
            report.contains(r#"name="test_negative""#) && report.contains("<failure"),
            "{report}"
        );
        assert!(!report.contains("test_left_out"), "{report}");
        assert!(!dir.path().join("left-out").exists());
        let size = module.len();
        assert_eq!(
            std::fs::read_to_string(dir.path().join("seen")).unwrap(),
            format!("{size} {size}"),
            "the module read its own file as the judged text"
        );
        assert_eq!(
            std::fs::read_to_string(dir.path().join("shop/s.py")).unwrap(),
            module
        );
    }
}
