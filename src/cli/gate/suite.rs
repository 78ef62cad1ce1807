//! The `suite` and `rerun` steps: the fixture suite (t2) in a room, what its report says as
//! the facts' `fixture_suite` (and `rerun`), and the suite started early in its own copy
//! beside the other runs when the plan allows it (`suite_beside`).

use std::collections::BTreeSet;
use std::path::Path;

use super::super::error::CliError;
use super::super::junit;
use super::super::output;
use super::super::progress::{self, Event, Report};
use super::super::runner::{
    Outcome, Place, ReceiptRead, Run, argv_for, open_report, receipt_of, receipted,
};
use super::super::sandbox::Room;
use super::base_census as census;
use super::gather::{Gathered, integrity_after};
use crate::core::gate::{ChangedTest, IntegrityFinding, Rerun, SuiteFacts, fit_test_id};
use crate::core::ladder::T2;
use crate::core::path::RepoPath;

/// A run of the fixture suite: its facts (catch codes aside), the seconds it took, its receipt
/// (whose failures go into the facts' `failures`), and what it changed that it may not.
/// `None` from [`run_suite`] when it was stopped (no longer needed).
pub(super) struct SuiteDone {
    pub run: SuiteFacts,
    pub seconds: f64,
    pub read: Option<ReceiptRead>,
    pub finding: Option<IntegrityFinding>,
    /// What the observed run saw of the patch's lines (the suite's first run, `[observe]`
    /// on).
    pub observe: Option<crate::core::gate::ObserveFacts>,
    /// Its recorded calls made again in a plain program (the observed run, `[replay]` on).
    pub behavior: Option<crate::core::gate::BehaviorFacts>,
    /// Where its receipt was written (what the observed run writes beside it is read there).
    pub receipt_at: Option<std::path::PathBuf>,
    /// The observed run's build with the Rust patch mutants switched in, for their runs
    /// (issue 68).
    pub built: Option<std::sync::Arc<super::observe_rust::Built>>,
}

impl SuiteDone {
    /// As the suite's re-run.
    pub fn rerun(&self) -> Rerun {
        Rerun {
            exit_code: self.run.exit_code,
            failed_tests: self.run.failed_tests.clone(),
            report_disagrees: self.run.report_disagrees.clone(),
            receipt: self.run.receipt.clone(),
        }
    }
}

/// Runs the fixture suite (t2) in `room`, with `extra` arguments after its command (the tests
/// a re-run leaves out), then checks what it changed; stopped when `cancel` is set (`None`).
/// A first run (`first`) is held to the census; a re-run is not.
pub(super) fn run_suite(
    g: &Gathered,
    room: &Room,
    label: &str,
    extra: &[String],
    first: bool,
    cancel: Option<&std::sync::atomic::AtomicBool>,
) -> Result<Option<SuiteDone>, CliError> {
    let argv: Vec<String> = g
        .config
        .suite
        .command
        .iter()
        .chain(extra)
        .cloned()
        .collect();
    // A first run leaves the open frozen tests out where pytest runs (see [`left_out`]).
    let frozen = left_out(g).filter(|_| first);
    if let Some(one) = frozen.and_then(|f| f.first()) {
        progress::say(Event::Plan(format!(
            "{label}: the open frozen tests left out of its run ({one}{}): their failures are the ledger's, so no re-run is needed to discard them",
            match frozen.map_or(0, BTreeSet::len) {
                0 | 1 => String::new(),
                n => format!(" and {} more", n - 1),
            }
        )));
    }
    // The first run is the observed one (issue 52): pytest with the changed lines' probes,
    // when the patch changes a code file (else there is nothing to observe, and it runs as it
    // is).
    // A Rust suite: the probes are compiled into the run's copy of the changed `.rs` files.
    let watching = g.watched.unread().is_some() && first;
    let mut observed = (watching && !g.watched.files.is_empty())
        .then(|| {
            super::observe::observed_argv(&argv, &g.watched.files, super::plain_replay::record(g))
        })
        .flatten();
    // (Built by the build step, when there is one: the observed run compiles nothing.)
    let rust_observed = watching && observed.is_none();
    let fresh = match rust_observed && g.observed_build.get().is_none() {
        true => super::observe_rust::instrument(g, room, false)?,
        false => None,
    };
    let rust = match rust_observed {
        true => g.observed_build.get().or(fresh.as_ref()),
        false => None,
    };
    // (A Python run's failures under the observer are run again without it.)
    let plain = observed.is_some().then(|| argv.clone());
    if let Some(r) = &rust {
        observed = Some(r.argv(&argv));
    }
    // A shard runs its share (issue 53), observed or not, first run or re-run; the frozen
    // tests are left out with the tests other shards own, by their JUnit ids.
    let argv = observed.unwrap_or(argv);
    let argv = match (&g.shard, frozen) {
        (None, None) => argv,
        (Some(s), None) => s.argv(&argv),
        (shard, Some(frozen)) => {
            let others = shard.iter().flat_map(|s| s.others.iter());
            super::observe::except_argv(&argv, frozen.iter().chain(others).cloned()).unwrap_or(argv)
        }
    };
    let mut done = run_as_suite(g, room, label, &argv, first, (cancel, rust))?;
    if let (Some(plain), Some(d)) = (plain, done.as_mut()) {
        d.run.plain = plain_check(g, room, label, &plain, d, cancel)?;
    }
    if let Some(d) = done.as_mut().filter(|_| first) {
        d.run.changed_tests = changed_tests(g, d.run.failed_tests.as_deref().unwrap_or_default())?;
    }
    if let Some(d) = done.as_mut().filter(|_| watching) {
        d.observe = match &rust {
            Some(r) => {
                let cases: Vec<String> = match &d.read {
                    Some(Ok(report)) => report.cases.iter().map(|(id, _)| id.clone()).collect(),
                    _ => Vec::new(),
                };
                g.watched
                    .of_report(r.report(d.receipt_at.as_deref(), &cases))
            }
            None => g.watched.read(d.receipt_at.as_deref()),
        };
        // Its recorded calls, made again outside the tests (issue 66): Python's observed run.
        if rust.is_none() {
            let (behavior, finding) = super::plain_replay::replay(
                g,
                room,
                d.receipt_at.as_deref(),
                (label, d.seconds),
                cancel,
            )?;
            // The patch's edited test files' calls join these (never a verdict).
            let behavior = match behavior {
                Some(mut b) => {
                    let (own, finding) = edited_recorded(g)?;
                    if let Some(own) = own {
                        b.absorb(own);
                    }
                    if d.finding.is_none() {
                        d.finding = finding;
                    }
                    Some(b)
                }
                None => None,
            };
            // Asked here only when no added test runs later: that run's calls join these,
            // and the base is asked once for all of them (`drive::added_tests`).
            d.behavior = match added_command(g) {
                Some(_) if super::plain_replay::record(g).is_some() => behavior,
                _ => behavior.map(|b| added_fail_on_base(g, b)).transpose()?,
            };
            if d.finding.is_none() {
                d.finding = finding;
            }
        } else {
            // Rust's changed `pub fn`s against the base's (CONTRACT.md 16.5).
            let (behavior, finding) =
                super::rust_replay::replay(g, room, (label, d.seconds), cancel)?;
            d.behavior = match added_command(g) {
                Some(_) if super::plain_replay::record(g).is_some() => behavior,
                _ => behavior.map(|b| added_fail_on_base(g, b)).transpose()?,
            };
            if d.finding.is_none() {
                d.finding = finding;
            }
        }
        let wanted = g.watched.config.map_or(0, |c| usize::from(c.mutants));
        if let Some(o) = d.observe.as_mut().filter(|o| o.read && wanted > 0) {
            o.mutants = super::patch_mutant_runs::make(&g.tree, o, wanted)?;
        }
    }
    Ok(done)
}

/// The open frozen tests a first run of the suite leaves out: all of them, when the suite runs
/// pytest (`python -m pytest`), by their exact JUnit ids (the driver's `--except`: pytest's own
/// `--deselect` also drops every test whose node id the frozen one's begins). A frozen test's
/// failure is the ledger's; left out up front, it needs no re-run of the whole suite to be
/// discarded (section 12.4: the first run is the run without them, and it must pass), and a
/// report that still names one as failed is re-run and judged as before. Other runners
/// (libtest's `--skip` matches names by substring) keep the re-run. `None` when nothing is
/// left out.
fn left_out(g: &Gathered) -> Option<&BTreeSet<String>> {
    (crate::cli::runner::pytest_module_at(&g.config.suite.command).is_some()
        && !g.watched.frozen.is_empty())
    .then_some(&g.watched.frozen)
}

/// The most failures of the observed run run again without the observer: more is a patch that
/// breaks the suite, not an observer that trips a few tests.
const MAX_PLAIN: usize = 100;

/// The tests the observed run `d` failed (frozen tests aside), run again in `room` without the
/// observer (issue 64): the suite command `argv` keeping only them. A test that fails only
/// under the observer is never the patch's failure (the core reads what this says). `None`
/// when none failed, too many did, an id was cut to fit, or the run was stopped.
fn plain_check(
    g: &Gathered,
    room: &Room,
    label: &str,
    argv: &[String],
    d: &mut SuiteDone,
    cancel: Option<&std::sync::atomic::AtomicBool>,
) -> Result<Option<Rerun>, CliError> {
    let failed: Vec<String> = d
        .run
        .failed_tests
        .iter()
        .flatten()
        .filter(|id| !g.watched.frozen.contains(*id))
        .cloned()
        .collect();
    if failed.is_empty() || failed.len() > MAX_PLAIN || failed.iter().any(|id| id.ends_with('…'))
    {
        return Ok(None);
    }
    let Some(argv) = super::observe::plain_argv(argv, &failed) else {
        return Ok(None);
    };
    let label = format!(
        "{label}: its {} failures run again without the observer",
        failed.len()
    );
    let Some(done) = run_as_suite(g, room, &label, &argv, false, (cancel, None))? else {
        return Ok(None);
    };
    if d.finding.is_none() {
        d.finding = done.finding.clone();
    }
    Ok(Some(done.rerun()))
}

/// The failed tests whose definition the patch changes (issue 65): the test files and source
/// files whose tests run as the base has them, read on both sides by syntax, each failure
/// matched by its id. At most [`MAX_CHANGED_TESTS`](crate::core::gate::MAX_CHANGED_TESTS).
fn changed_tests(g: &Gathered, failed: &[String]) -> Result<Vec<ChangedTest>, CliError> {
    use crate::cli::reading::test_defs::{changed_defs, names};
    let tree = g.facts.judged.as_ref().map(|j| j.tree.as_str());
    let (Some(tree), false) = (tree, failed.is_empty()) else {
        return Ok(Vec::new());
    };
    let files: BTreeSet<&str> = g
        .facts
        .tests_from_base
        .iter()
        .chain(&g.facts.test_lines_from_base)
        .map(String::as_str)
        .collect();
    let files: Vec<&str> = files.into_iter().collect();
    let before = crate::cli::git::blobs(&g.base, &files, MAX_TEST_FILE_BYTES)?;
    let after = crate::cli::git::blobs(tree, &files, MAX_TEST_FILE_BYTES)?;
    let mut defs = Vec::new();
    for (file, pair) in files.iter().zip(before.iter().zip(&after)) {
        // A test file the patch deletes: each of its tests is removed.
        if let (Some(b), a) = pair {
            let a = a.as_deref().unwrap_or_default();
            defs.extend(changed_defs(file, b, a).into_iter().map(|d| (*file, d)));
        }
    }
    Ok(failed
        .iter()
        .filter_map(|id| {
            let (_, d) = defs.iter().find(|(file, d)| names(id, file, d))?;
            Some(ChangedTest {
                id: id.clone(),
                base: d.base.clone(),
                patch: d.patch.clone(),
            })
        })
        .take(crate::core::gate::MAX_CHANGED_TESTS)
        .collect())
}

/// A test file larger than this is not read for its changed tests (their failures stand).
const MAX_TEST_FILE_BYTES: usize = 4 << 20;

/// The placeholder of `[suite] added`: the argument holding it is repeated once per file.
pub(super) const ADDED_FILES: &str = "{files}";

/// The run of the test files the patch adds (issue 50) by `[suite] added`, as the runner
/// starts it and `--dry-run` says it: its label, its command, and the tree it runs on (the run
/// tree with them in, so their imports reach nothing of the suite's run). `None` when there
/// are none, or no command to run them.
pub(super) fn added_command(g: &Gathered) -> Option<(String, Vec<String>, &str)> {
    let (Some(template), Some(tree)) = (g.config.suite.added.as_deref(), g.added_tree.as_deref())
    else {
        return None;
    };
    let argv = files_argv(template, &g.added);
    Some((format!("{T2} the tests the patch adds"), argv, tree))
}

/// `[suite] added` (`template`) for the test files among `files` (`.py`, `.rs`): the argument
/// holding `{files}` is repeated once per file (none starts with `-`: the gather leaves such a
/// file in the suite's tree, a scope hit).
fn files_argv(template: &[String], files: &[String]) -> Vec<String> {
    let files: Vec<&String> = files
        .iter()
        .filter(|f| f.ends_with(".py") || f.ends_with(".rs"))
        .collect();
    template
        .iter()
        .flat_map(|a| match a.contains(ADDED_FILES) {
            true => files.iter().map(|f| a.replace(ADDED_FILES, f)).collect(),
            false => vec![a.clone()],
        })
        .collect()
}

/// With `[replay]` on (issue 66): the test files the base holds that the patch edits, run as
/// the patch has them (the judged tree, a room of its own) by `[suite] added` under the
/// recorder, their calls made again in plain programs and against the base. Never a verdict:
/// the base's version of each file judges; a run that does not pass is not counted (noted),
/// and one that passes only says where the patch's own tests look. `None` without such files
/// (Python), changed code or `[suite] added`.
fn edited_recorded(
    g: &Gathered,
) -> Result<
    (
        Option<crate::core::gate::BehaviorFacts>,
        Option<IntegrityFinding>,
    ),
    CliError,
> {
    let files: Vec<String> = g
        .edited
        .iter()
        .filter(|f| f.ends_with(".py"))
        .cloned()
        .collect();
    let (Some(template), Some(n)) = (
        g.config.suite.added.as_deref(),
        super::plain_replay::record(g),
    ) else {
        return Ok((None, None));
    };
    if files.is_empty() || g.watched.files.is_empty() {
        return Ok((None, None));
    }
    let Some(argv) =
        super::observe::observed_argv(&files_argv(template, &files), &g.watched.files, Some(n))
    else {
        return Ok((None, None));
    };
    let room = super::super::runner::open_room(&g.config.sandbox, &g.judged, g.cache.as_ref())?;
    let label = format!("{T2} the test files the patch edits, as it has them");
    let Some(d) = run_as_suite(g, &room, &label, &argv, false, (None, None))? else {
        return Ok((None, None));
    };
    if d.finding.is_some() || d.run.exit_code != Some(0) {
        if d.finding.is_none() {
            progress::say(Event::Plan(format!(
                "{label}: did not pass; its calls are not compared (the base's version judges)"
            )));
        }
        return Ok((None, d.finding));
    }
    super::plain_replay::replay(g, &room, d.receipt_at.as_deref(), (&label, d.seconds), None)
}

/// The test files the patch adds, run in a room of their own ([`added_command`]). With
/// `[replay]` on and code changed, the run records its calls like the suite's observed run,
/// and they are made again in plain programs and against the base (issue 66: where a test the
/// patch adds looks, the checks look); a run that fails under the recorder is run again
/// without it, and that run is the one read (the recorder never fails a test).
pub(super) fn run_added(g: &Gathered) -> Result<Option<SuiteDone>, CliError> {
    let Some((label, argv, tree)) = added_command(g) else {
        return Ok(None);
    };
    let room = super::super::runner::open_room(&g.config.sandbox, tree, g.cache.as_ref())?;
    let recording = super::plain_replay::record(g)
        .filter(|_| !g.watched.files.is_empty())
        .and_then(|n| super::observe::observed_argv(&argv, &g.watched.files, Some(n)));
    let Some(recording) = recording else {
        return run_as_suite(g, &room, &label, &argv, false, (None, None));
    };
    let mut done = run_as_suite(g, &room, &label, &recording, false, (None, None))?;
    match done.as_mut() {
        Some(d) if d.run.exit_code == Some(0) => {
            let (behavior, finding) = super::plain_replay::replay(
                g,
                &room,
                d.receipt_at.as_deref(),
                (&label, d.seconds),
                None,
            )?;
            d.behavior = behavior;
            if d.finding.is_none() {
                d.finding = finding;
            }
            Ok(done)
        }
        Some(d) if d.finding.is_some() => Ok(done),
        _ => run_as_suite(g, &room, &label, &argv, false, (None, None)),
    }
}

/// Whether a test the patch adds fails on the base's tree (the base with the test files the
/// patch adds, and the Python ones it edits as it has them: a test new in an edited file is a
/// test it adds), asked when the patch answers otherwise than the base on a recorded call
/// (CONTRACT.md 16.3: a test that fails there shows the change is asserted, a fix with its
/// test); left `None` when there are none that a command runs.
pub(super) fn added_fail_on_base(
    g: &Gathered,
    mut b: crate::core::gate::BehaviorFacts,
) -> Result<crate::core::gate::BehaviorFacts, CliError> {
    let asked = b.unasserted_difference != crate::core::gate::ObserveRule::Off
        && b.against_base
            .iter()
            .any(|r| r.recorded == crate::core::gate::BaseState::Differs);
    // The test files the patch adds and those it edits (Python's, with `[replay]` on: their
    // run as the patch has them is observed), as the patch has them, on the base's tree.
    let edited: Vec<String> = match super::plain_replay::record(g) {
        Some(_) => g
            .edited
            .iter()
            .filter(|f| f.ends_with(".py"))
            .cloned()
            .collect(),
        None => Vec::new(),
    };
    let files: Vec<String> = g.added.iter().chain(&edited).cloned().collect();
    let Some(template) = g.config.suite.added.as_deref().filter(|_| asked) else {
        return Ok(b);
    };
    if files.is_empty() {
        return Ok(b);
    }
    let argv = files_argv(template, &files);
    // Taken from the judged tree (the run tree leaves the added files out and holds the
    // edited ones as the base has them: taken from there, an added file would be missing,
    // and pytest's "file not found" is no failing test).
    let tree = crate::cli::git::tree_with(&g.base, &g.judged, &files, &[], &[])?;
    let room = crate::cli::runner::open_room(&g.config.sandbox, &tree, g.cache.as_ref())?;
    let label = format!("{T2} the tests the patch adds or edits, on the base");
    let done = run_as_suite(g, &room, &label, &argv, false, (None, None))?;
    // Fails: exits with a catch, its receipt listing a failed test (a harness error, or a run
    // that collects nothing, proves nothing either way).
    if let Some(d) = done {
        let failed = match d.run.exit_code {
            Some(c) if g.config.suite.catch.contains(c) => d.run.failed_tests.unwrap_or_default(),
            _ => Vec::new(),
        };
        b.added_fail_on_base = Some(!failed.is_empty());
        b.failing_on_base = failed
            .into_iter()
            .take(crate::core::gate::MAX_FAILING_ON_BASE)
            .collect();
    }
    Ok(b)
}

/// One run of a suite command `argv` in `room`, read as the suite's (see [`run_suite`]);
/// the Rust probes in the copy, when there are, are taken out as soon as it ends.
fn run_as_suite(
    g: &Gathered,
    room: &Room,
    label: &str,
    argv: &[String],
    first: bool,
    (cancel, probes): (
        Option<&std::sync::atomic::AtomicBool>,
        Option<&super::observe_rust::RustProbes>,
    ),
) -> Result<Option<SuiteDone>, CliError> {
    let s = &g.config.suite;
    let receipts = receipted(argv);
    // Without a receipt: a report left from before (or committed by the patch) must never be
    // read as this run's: only a report the suite writes now counts. A report path through a
    // symbolic link the patch committed (`.patchgate -> /elsewhere`) is neither cleared nor
    // read: the runner never deletes or reads outside the copy.
    let junit = match s.junit.as_deref().filter(|_| !receipts) {
        Some(j) => match output::link_inside(&room.tree.join(j), Some(&room.tree)) {
            Some(link) => {
                say_report(
                    label,
                    Report::ThroughLink {
                        report: j.to_owned(),
                        link: link.display().to_string(),
                    },
                );
                None
            }
            None => Some((j, room.tree.join(j))),
        },
        None => None,
    };
    if let Some((j, path)) = &junit {
        match std::fs::remove_file(path) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => {
                return Err(CliError::software(format!(
                    "cannot remove the stale JUnit report {j}: {e}"
                )));
            }
        }
    }
    let mut command = Run::new(label, argv, s.timeout(), Place::Room(room));
    if let Some(flag) = cancel {
        command = command.cancel(flag);
    }
    let started = command.start();
    // The mutants' runs start from the build step's build, their switches in it.
    let built = match (probes, &started) {
        (Some(p), Ok(Outcome::Ran(_))) => p.built().map(std::sync::Arc::new),
        _ => None,
    };
    if let Some(p) = probes {
        p.restore(room)?;
    }
    let ran = match started? {
        Outcome::Ran(ran) => ran,
        Outcome::Cancelled => return Ok(None),
    };
    let mut run = SuiteFacts {
        exit_code: ran.run,
        ..SuiteFacts::default()
    };
    let read = if receipts {
        let read = ran.receipt.unwrap_or_else(|| Err("no receipt".to_owned()));
        run.receipt = Some(receipt_of(&read));
        if let Ok(report) = &read {
            if let Some(why) = &report.disagrees {
                say_report(label, Report::ReceiptDisagrees { why: why.clone() });
            }
            // The base's tests must still run (section 11.2); a re-run leaves some out.
            if let Some(base) = g.census.as_ref().filter(|_| first) {
                // (The frozen tests it left out did not vanish: they were never asked for.)
                let out = left_out(g);
                let gone: Vec<String> = census::vanished(base, report)
                    .into_iter()
                    .filter(|id| out.is_none_or(|o| !o.contains(id)))
                    .collect();
                if let Some(first) = gone.first() {
                    say_report(
                        label,
                        Report::Vanished {
                            count: gone.len(),
                            first: first.clone(),
                        },
                    );
                }
                run.vanished_count = Some(gone.len() as u64);
                run.vanished = gone.into_iter().take(100).map(fit_test_id).collect();
            }
            run.failed_tests = Some(report.failed.iter().cloned().map(fit_test_id).collect());
        }
        Some(read)
    } else {
        if let Some((j, path)) = junit {
            read_named_report(label, j, &path, &mut run);
        }
        None
    };
    let finding = integrity_after(g, room, label)?;
    Ok(Some(SuiteDone {
        run,
        seconds: ran.seconds,
        read,
        finding,
        observe: None,
        behavior: None,
        receipt_at: ran.receipt_at,
        built,
    }))
}

/// The suite's report at `[suite] junit` (no receipts): its failed tests, and how it disagrees
/// with itself, into `run`; an unreadable one is said, and nothing is discarded.
fn read_named_report(label: &str, j: &str, path: &Path, run: &mut SuiteFacts) {
    match open_report(path) {
        Ok(f) => match junit::read_report(std::io::BufReader::new(f)) {
            Ok(report) => {
                run.failed_tests = Some(report.failed.into_iter().map(fit_test_id).collect());
                if let Some(why) = report.disagrees {
                    say_report(
                        label,
                        Report::JunitDisagrees {
                            report: j.to_owned(),
                            why: why.clone(),
                        },
                    );
                    run.report_disagrees = Some(fit_test_id(why));
                }
            }
            Err(e) => say_report(
                label,
                Report::Unreadable {
                    report: j.to_owned(),
                    why: e.to_string(),
                },
            ),
        },
        Err(e) => say_report(
            label,
            Report::Missing {
                report: j.to_owned(),
                why: e.to_string(),
            },
        ),
    }
}

/// Says what the suite run `label`'s report says that is not a result.
fn say_report(label: &str, said: Report) {
    progress::say(Event::Report {
        label: label.to_owned(),
        said,
    });
}

/// The arguments that leave `ids` out of a suite run: `[suite] deselect` once per test, with
/// `{nodeid}` the test's pytest node id, found in the copy (see [`pytest_node_id`]).
pub(super) fn deselect_args(template: &[String], ids: &[String], tree: &Path) -> Vec<String> {
    ids.iter()
        .flat_map(|id| {
            let node = pytest_node_id(id, tree);
            argv_for(template, id)
                .into_iter()
                .map(move |a| a.replace("{nodeid}", &node))
        })
        .collect()
}

/// pytest's node id of a JUnit test id `classname::name` (CONTRACT.md section 12.4): pytest
/// writes the classname as the module's dotted path, then any classes (`tests.test_api` or
/// `tests.test_api.TestRetry`). The longest dotted prefix that is a file `a/b.py` in `tree` is
/// the module; the rest are classes: `tests/test_api.py::TestRetry::name`. An id with no such
/// file is given as it is.
fn pytest_node_id(id: &str, tree: &Path) -> String {
    let Some((classname, name)) = id.rsplit_once("::") else {
        return id.to_owned();
    };
    let parts: Vec<&str> = classname.split('.').collect();
    for k in (1..=parts.len()).rev() {
        let (module, classes) = parts.split_at(k);
        let file = format!("{}.py", module.join("/"));
        if RepoPath::parse(&file).is_ok() && tree.join(&file).is_file() {
            let mut node = file;
            for class in classes {
                node.push_str("::");
                node.push_str(class);
            }
            return format!("{node}::{name}");
        }
    }
    id.to_owned()
}

/// What the suite run beside the others gives back: its copy, and its run (`None`: stopped).
type SuiteBesideResult = Result<(Room, Option<SuiteDone>), CliError>;

/// The suite run beside the canary and the property runs (the plan's `suite_beside`), in its
/// own copy; it gives its copy back with its result (for a re-run). Dropped unjoined (an
/// error, a signal), it is stopped.
pub(super) struct SuiteBeside<'scope, 'env> {
    handle: Option<std::thread::ScopedJoinHandle<'scope, SuiteBesideResult>>,
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
    /// Set once its run ended (its core is free again).
    ended: std::sync::Arc<std::sync::atomic::AtomicBool>,
    _env: std::marker::PhantomData<&'env ()>,
}

impl<'scope, 'env> SuiteBeside<'scope, 'env> {
    /// Starts it in `copy`, or (none given) in the spare copy, or a fresh one it makes first.
    pub fn start(
        scope: &'scope std::thread::Scope<'scope, 'env>,
        g: &'env Gathered,
        copy: Option<Room>,
        first_run: bool,
    ) -> Self {
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let ended = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let (flag, end) = (std::sync::Arc::clone(&stop), std::sync::Arc::clone(&ended));
        progress::say(Event::SuiteAhead { holds: first_run });
        let handle = scope.spawn(move || {
            let ran = (|| {
                let room = match copy.map(Ok).or_else(|| g.spare.take()) {
                    Some(room) => room?,
                    None => super::super::runner::open_room(
                        &g.config.sandbox,
                        &g.tree,
                        g.cache.as_ref(),
                    )?,
                };
                let done = run_suite(g, &room, T2, &[], true, Some(&flag))?;
                Ok((room, done))
            })();
            end.store(true, std::sync::atomic::Ordering::SeqCst);
            ran
        });
        SuiteBeside {
            handle: Some(handle),
            stop,
            ended,
            _env: std::marker::PhantomData,
        }
    }

    /// The flag its thread sets once its run ended: a core the other runs left it is free.
    pub fn ended(&self) -> std::sync::Arc<std::sync::atomic::AtomicBool> {
        std::sync::Arc::clone(&self.ended)
    }

    /// Its result, once it ended.
    pub fn join(mut self) -> Result<(Room, SuiteDone), CliError> {
        let (room, done) = self
            .handle
            .take()
            .ok_or_else(|| CliError::software("the suite was joined twice"))?
            .join()
            .unwrap_or_else(|_| Err(CliError::software("the suite's thread panicked")))?;
        let done =
            done.ok_or_else(|| CliError::software("the suite was stopped before it was joined"))?;
        Ok((room, done))
    }

    /// Stops it (killed if it still runs); what it did is not recorded: it did not run.
    pub fn stop(mut self) {
        self.stop.store(true, std::sync::atomic::Ordering::SeqCst);
        if let Some(Ok(Ok((_, done)))) = self.handle.take().map(std::thread::ScopedJoinHandle::join)
        {
            progress::say(Event::SuiteDropped {
                stopped: done.is_none(),
            });
        }
    }
}

impl Drop for SuiteBeside<'_, '_> {
    fn drop(&mut self) {
        self.stop.store(true, std::sync::atomic::Ordering::SeqCst);
    }
}

#[cfg(test)]
mod tests {
    use super::pytest_node_id;

    #[test]
    fn a_junit_id_maps_to_the_pytest_node_id_of_its_file() {
        let tree = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(tree.path().join("tests/api")).unwrap();
        std::fs::write(tree.path().join("tests/test_legacy.py"), "").unwrap();
        std::fs::write(tree.path().join("tests/api/test_retry.py"), "").unwrap();
        for (id, node) in [
            (
                "tests.test_legacy::test_legacy_export",
                "tests/test_legacy.py::test_legacy_export",
            ),
            (
                "tests.api.test_retry.TestRetry::test_timeout[2]",
                "tests/api/test_retry.py::TestRetry::test_timeout[2]",
            ),
            // No such file: given as it is, never guessed.
            ("tests.test_gone::test_x", "tests.test_gone::test_x"),
            ("no_separator", "no_separator"),
        ] {
            assert_eq!(pytest_node_id(id, tree.path()), node, "{id}");
        }
    }
}
