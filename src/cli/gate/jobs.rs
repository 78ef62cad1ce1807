//! The `runs` step: the canary and the property runs the plan asks for, up to `--jobs` at once
//! in the room, and what they saw as the facts' `canary`, `property_runs` and
//! `property_receipts`.

use std::collections::BTreeMap;

use super::super::config::GateConfig;
use super::super::error::CliError;
use super::super::runner::{
    BaseSkips, Outcome, Place, Ran, ReceiptRead, Run, batch_argv, batched, property_argv,
    property_receipt, receipt_of, receipted,
};
use super::super::sandbox::Room;
use super::gather::{Gathered, integrity_after};
use super::outputs::add_failures;
use super::twin::CanaryTwin;
use crate::core::gate::{
    BehaviorFacts, CanaryFacts, CanaryPart, Facts, IntegrityFinding, MAX_PROPERTY_CASES, Phase,
    PropertyRuns, Replay, WorkItem, WorkKind,
};
use crate::core::ladder::T1;
use crate::core::runs::Receipt;

/// One run of the `runs` step: they do not depend on each other, and run up to `--jobs` at
/// once in the room.
pub(super) enum Job {
    Canary,
    /// Run `n` of these properties (one process for all of them when batched), the canary's
    /// case one more case of it when it rides (`[canary] in_batch`).
    Properties {
        n: u8,
        ids: Vec<String>,
        canary: bool,
    },
}

impl Job {
    /// What the job runs, as the runner starts it and `--dry-run` says it: its label, its
    /// command and its timeout.
    pub(super) fn command(
        &self,
        config: &GateConfig,
        ride: Option<&Ride>,
    ) -> Result<(String, Vec<String>, std::time::Duration), CliError> {
        let p = &config.properties;
        Ok(match self {
            Job::Canary => {
                let c = config.canary.as_ref().ok_or_else(|| {
                    CliError::software("the plan asks for a canary the config has not")
                })?;
                ("canary".to_owned(), c.command.clone(), c.timeout())
            }
            Job::Properties { n, ids, canary } => (
                match (ids.as_slice(), canary) {
                    ([id], false) => format!("{T1} {id} run {n}/{}", p.runs),
                    (_, false) => format!("{T1} run {n}/{} ({} properties)", p.runs, ids.len()),
                    (_, true) => format!(
                        "{T1} run {n}/{} ({} properties and the canary)",
                        p.runs,
                        ids.len()
                    ),
                },
                match (canary, ride) {
                    (true, Some(r)) => {
                        let with: Vec<String> = ids.iter().chain(&r.id).cloned().collect();
                        batch_argv(&p.command, &with, &r.args)
                    }
                    _ => batch_argv(&p.command, ids, &[]),
                },
                p.timeout(),
            ),
        })
    }
}

/// A job run: how it ended, and what it changed that it may not; its label when it recorded
/// the changed functions' calls (run 1 of the properties, issue 66).
pub(super) struct Done<'j> {
    job: &'j Job,
    ran: Ran,
    finding: Option<IntegrityFinding>,
    recorded: Option<String>,
}

/// `argv` (run `n` of the properties) as the observed run that records the changed
/// functions' calls (CONTRACT.md 16.1: the in-locality properties' first runs are observed
/// runs too), when `[replay]` is on, the patch changes code and the command runs pytest.
pub(super) fn recording(g: &Gathered, job: &Job, argv: &[String]) -> Option<Vec<String>> {
    let Job::Properties { n: 1, .. } = job else {
        return None;
    };
    let calls = super::plain_replay::record(g)?;
    if g.watched.files.is_empty() || g.watched.unread().is_none() {
        return None;
    }
    super::observe::observed_argv(argv, &g.watched.files, Some(calls))
}

/// The calls the recording runs in `done` made, each made again in plain programs and on the
/// base ([`super::plain_replay::replay`]), joined into one behaviour; what those programs
/// changed in the room.
pub(super) fn replayed(
    g: &Gathered,
    done: &[Done<'_>],
) -> Result<(Option<BehaviorFacts>, Option<IntegrityFinding>), CliError> {
    let mut joined: Option<BehaviorFacts> = None;
    let mut changed = None;
    for d in done {
        let Some(label) = &d.recorded else { continue };
        let (own, finding) = super::plain_replay::replay(
            g,
            &g.room,
            d.ran.receipt_at.as_deref(),
            (label, d.ran.seconds),
            None,
        )?;
        changed = changed.or(finding);
        joined = match (joined, own) {
            (Some(mut b), Some(own)) => {
                b.absorb(own);
                Some(b)
            }
            (b, own) => b.or(own),
        };
    }
    Ok((joined, changed))
}

/// How the canary rides in a batched property run: the arguments or the id (its turned twin,
/// CONTRACT.md section 15.3) that add its cases, and their prefix in the run's receipt.
pub(super) struct Ride {
    args: Vec<String>,
    id: Option<String>,
    case: String,
    twin_of: Option<String>,
}

/// How the canary rides, if it can: as its twin (`[canary] twin`, made for these runs), or
/// as `[canary] in_batch` and `case` say.
pub(super) fn ride(config: &GateConfig, twin: Option<&CanaryTwin>) -> Option<Ride> {
    if let Some(t) = twin {
        return Some(Ride {
            args: Vec::new(),
            id: Some(t.id.clone()),
            case: t.case.clone(),
            twin_of: Some(t.of.clone()),
        });
    }
    let c = config.canary.as_ref()?;
    let case = c.case.clone()?;
    (!c.in_batch.is_empty()).then(|| Ride {
        args: c.in_batch.clone(),
        id: None,
        case,
        twin_of: None,
    })
}

/// The jobs of a `runs` step, in run order: the canary in a process of its own when asked
/// and it cannot ride; then one process per run of a batch (every property at once, the
/// canary riding in each when asked and it can), or per property and run; runs `from` on (2
/// when the suite is run 1, CONTRACT.md section 15.3).
pub(super) fn jobs(
    config: &GateConfig,
    canary: bool,
    ids: &[String],
    from: u8,
    ride: Option<&Ride>,
) -> Vec<Job> {
    let p = &config.properties;
    let rides =
        canary && !ids.is_empty() && from <= p.runs && batched(&p.command) && ride.is_some();
    let mut work = Vec::new();
    if canary && !rides {
        work.push(Job::Canary);
    }
    if ids.is_empty() {
        return work;
    }
    if batched(&p.command) {
        work.extend((from..=p.runs).map(|n| Job::Properties {
            n,
            ids: ids.to_vec(),
            canary: rides,
        }));
    } else {
        work.extend(ids.iter().flat_map(|id| {
            (from..=p.runs).map(move |n| Job::Properties {
                n,
                ids: vec![id.clone()],
                canary: false,
            })
        }));
    }
    work
}

/// The jobs of the canary and property-runs work items `items`, as [`jobs`] orders them,
/// with the canary's turned twin (section 15.3) when it is one, its file in the copy for these
/// runs only (removed when dropped), and how the canary rides. The runner runs these;
/// `--dry-run` says them.
pub(super) fn of_items(g: &Gathered, items: &[&WorkItem]) -> Result<RunsStep, CliError> {
    let canary = items.iter().any(|w| w.kind == WorkKind::Canary);
    let ids: Vec<String> = items
        .iter()
        .filter(|w| w.kind == WorkKind::PropertyRuns)
        .filter_map(|w| w.property.clone())
        .collect();
    // Every property's runs start at the same run (2 when the suite is run 1).
    let from = items.iter().find_map(|w| w.from_run).unwrap_or(1);
    let twin = match &g.config.canary {
        Some(c) if c.twin && canary && !ids.is_empty() => super::twin::canary_twin(g, &ids)?,
        _ => None,
    };
    let ride = ride(&g.config, twin.as_ref());
    let work = jobs(&g.config, canary, &ids, from, ride.as_ref());
    Ok(RunsStep { twin, ride, work })
}

/// The canary's and the property runs' jobs: see [`of_items`].
pub(super) struct RunsStep {
    pub twin: Option<CanaryTwin>,
    pub ride: Option<Ride>,
    pub work: Vec<Job>,
}

/// The canary's part of a batched run it rode in: the run's exit code, its own cases' receipt.
fn canary_part(ride: &Ride, ran: &Ran) -> CanaryPart {
    CanaryPart {
        exit_code: ran.run,
        receipt: ran
            .receipt
            .as_ref()
            .and_then(|read| property_receipt(read, Some(&ride.case), "", &BaseSkips::new())),
    }
}

/// Runs `work` in the room, up to `slots` at once, in order of start. `ended` is told the jobs
/// ended so far, in order of start, each time one ends (one call at a time): it rewrites
/// `--facts-out` from them and asks the core, and when it answers that they decide already (a
/// canary that did not fail, a tree a run changed: section 11.3, 11.5), nothing more starts
/// and what runs is stopped; so too on a signal or an error. The jobs stopped or never started
/// are not in the result.
pub(super) fn run_jobs<'j>(
    g: &Gathered,
    work: &'j [Job],
    slots: usize,
    ride: Option<&Ride>,
    ended: &(dyn Fn(&[&Done<'j>]) -> Result<bool, CliError> + Sync),
) -> Result<Vec<Done<'j>>, CliError> {
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
    let stop = AtomicBool::new(false);
    let next = AtomicUsize::new(0);
    let results = std::sync::Mutex::new(Vec::new());
    // The first error asking the core: the step's error once its runs are stopped.
    let asked_failed: std::sync::Mutex<Option<CliError>> = std::sync::Mutex::new(None);
    let one = |job: &'j Job| -> Result<Option<Done<'j>>, CliError> {
        let (label, argv, timeout) = job.command(&g.config, ride)?;
        let record = recording(g, job, &argv);
        let argv = record.as_ref().unwrap_or(&argv);
        let mut run = Run::new(&label, argv, timeout, Place::Room(&g.room)).cancel(&stop);
        if matches!(job, Job::Canary) {
            run = run.must_fail();
        }
        let ran = match run.start()? {
            Outcome::Ran(ran) => ran,
            Outcome::Cancelled => return Ok(None),
        };
        let finding = integrity_after(g, &g.room, &label)?;
        let recorded = record.map(|_| label);
        Ok(Some(Done {
            job,
            ran,
            finding,
            recorded,
        }))
    };
    std::thread::scope(|scope| {
        for _ in 0..slots.clamp(1, work.len().max(1)) {
            scope.spawn(|| {
                while !stop.load(Ordering::SeqCst) {
                    let i = next.fetch_add(1, Ordering::SeqCst);
                    let Some(job) = work.get(i) else { break };
                    let done = one(job);
                    if done.is_err() {
                        stop.store(true, Ordering::SeqCst);
                    }
                    if let Some(done) = done.transpose() {
                        let mut all = results
                            .lock()
                            .unwrap_or_else(std::sync::PoisonError::into_inner);
                        all.push((i, done));
                        let mut so_far: Vec<&(usize, Result<Done<'j>, CliError>)> =
                            all.iter().collect();
                        so_far.sort_by_key(|(i, _)| *i);
                        let so_far: Vec<&Done<'j>> =
                            so_far.iter().filter_map(|(_, d)| d.as_ref().ok()).collect();
                        match ended(&so_far) {
                            Ok(false) => {}
                            Ok(true) => stop.store(true, Ordering::SeqCst),
                            Err(e) => {
                                stop.store(true, Ordering::SeqCst);
                                asked_failed
                                    .lock()
                                    .unwrap_or_else(std::sync::PoisonError::into_inner)
                                    .get_or_insert(e);
                            }
                        }
                    }
                }
            });
        }
    });
    if let Some(e) = asked_failed
        .into_inner()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
    {
        return Err(e);
    }
    let mut results = results
        .into_inner()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    results.sort_by_key(|(i, _)| *i);
    results.into_iter().map(|(_, r)| r).collect()
}

/// What the jobs saw, into the facts: the canary's run, each property's exit codes in run
/// order (a batch's for every property in it) and, with receipts, each its own cases'
/// receipt; the failing cases the property runs' reports give; the first integrity finding.
/// With `suite` (the suite's receipt: it was run 1, CONTRACT.md section 15.3), each asked
/// property's run 1 is its cases there: a catch if one failed, 0 if they passed, `null` if
/// the suite left no report. A property not every run of which finished (the tree changed)
/// is left out; `so_far` (the step still under way, for `--facts-out`) keeps it, each run not
/// ended yet before its last ended one `null`. Gives the seconds the property runs took.
pub(super) fn record(
    g: &Gathered,
    facts: &mut Facts,
    asked: &[String],
    done: &[&Done<'_>],
    suite: Option<&ReceiptRead>,
    ride: Option<&Ride>,
    so_far: bool,
) -> f64 {
    let p = &g.config.properties;
    let on = receipted(&p.command);
    let mut codes: BTreeMap<&str, Vec<(u8, Option<u8>)>> = BTreeMap::new();
    let mut theirs: BTreeMap<&str, Vec<(u8, Option<Receipt>)>> = BTreeMap::new();
    let mut seconds = 0.0;
    let mut rode: Vec<(u8, CanaryPart)> = Vec::new();
    if let Some(read) = suite {
        let catch = p.catch.as_slice().first().copied().unwrap_or(1);
        for id in asked {
            let receipt = property_receipt(read, p.case.as_deref(), id, &g.base_skips);
            let run = match &receipt {
                None => None,
                Some(r) if r.failed > 0 => Some(catch),
                Some(_) => Some(0),
            };
            codes.entry(id).or_default().push((1, run));
            theirs.entry(id).or_default().push((1, receipt));
        }
        facts.suite_runs = asked.iter().take(MAX_PROPERTY_CASES).cloned().collect();
    }
    for d in done {
        if let Some(finding) = &d.finding
            && facts.integrity.is_empty()
        {
            facts.integrity.push(finding.clone());
        }
        match d.job {
            Job::Canary => {
                facts.canary = Some(CanaryFacts {
                    exit_code: d.ran.run,
                    catch_exit_codes: g.config.canary.as_ref().map(|c| c.catch.clone()),
                    receipt: d.ran.receipt.as_ref().and_then(receipt_of),
                    in_runs: Vec::new(),
                    twin_of: None,
                });
                facts.timings_ms.add(Phase::Canary, d.ran.seconds);
            }
            Job::Properties { n, ids, canary } => {
                seconds += d.ran.seconds;
                if *canary && let Some(r) = ride {
                    rode.push((*n, canary_part(r, &d.ran)));
                }
                for id in ids {
                    codes.entry(id).or_default().push((*n, d.ran.run));
                    if let Some(read) = &d.ran.receipt {
                        let receipt = property_receipt(read, p.case.as_deref(), id, &g.base_skips);
                        theirs.entry(id).or_default().push((*n, receipt));
                    }
                }
                if let Some(read) = &d.ran.receipt {
                    let theirs = ride.map(|r| r.case.as_str()).filter(|_| *canary);
                    add_failures(facts, read, theirs);
                }
            }
        }
    }
    if !rode.is_empty() {
        rode.sort_by_key(|(n, _)| *n);
        let parts: Vec<CanaryPart> = rode.into_iter().map(|(_, part)| part).collect();
        let (exit_code, receipt) = parts
            .first()
            .map(|p| (p.exit_code, p.receipt.clone()))
            .unwrap_or_default();
        facts.canary = Some(CanaryFacts {
            exit_code,
            catch_exit_codes: g.config.canary.as_ref().map(|c| c.catch.clone()),
            receipt,
            in_runs: parts,
            twin_of: ride.and_then(|r| r.twin_of.clone()),
        });
    }
    if asked.is_empty() {
        return seconds;
    }
    let mut runs = BTreeMap::new();
    let mut receipts = BTreeMap::new();
    for (id, mut ran) in codes {
        if ran.len() != usize::from(p.runs) && !so_far {
            continue;
        }
        ran.sort_by_key(|(n, _)| *n);
        let last = ran.last().map_or(0, |(n, _)| *n);
        let at = |n: u8| ran.iter().find(|(m, _)| *m == n).and_then(|(_, r)| *r);
        runs.insert(
            id.to_owned(),
            PropertyRuns {
                runs: (1..=last).map(at).collect(),
            },
        );
        if on {
            let mine = theirs.remove(id).unwrap_or_default();
            let at = |n: u8| {
                mine.iter()
                    .find(|(m, _)| *m == n)
                    .and_then(|(_, r)| r.clone())
            };
            receipts.insert(id.to_owned(), (1..=last).map(at).collect());
        }
    }
    facts.property_runs = Some(runs);
    if on {
        facts.property_receipts = Some(receipts);
    }
    facts.batched = batched(&p.command);
    seconds
}

/// The `replay` step (CONTRACT.md section 15.5): each property whose runs split, run once
/// more in the room its first failing run ran in — the suite's copy when that was the suite's
/// run 1, else the property runs' — where its engine saved the failing examples and tries
/// them first (hypothesis's example database in the copy, proptest's persisted failures).
/// One process per property, one after another; a run that changes the tree stops the rest.
pub(super) fn replay(
    g: &Gathered,
    facts: &mut Facts,
    ids: &[String],
    suite_room: Option<&Room>,
) -> Result<f64, CliError> {
    let p = &g.config.properties;
    let mut seconds = 0.0;
    for id in ids {
        let runs = facts
            .property_runs
            .as_ref()
            .and_then(|r| r.get(id))
            .map(|r| r.runs.as_slice())
            .unwrap_or_default();
        let Some(first) = runs.iter().position(|r| p.catch.caught(*r)) else {
            continue;
        };
        let in_suite = first == 0 && facts.suite_runs.contains(id);
        let room = match (in_suite, suite_room) {
            (true, Some(r)) => r,
            _ => &g.room,
        };
        let label = format!(
            "{T1} {id} replay (run {}'s failing examples first)",
            first + 1
        );
        let argv = property_argv(&p.command, std::slice::from_ref(id));
        let ran = Run::new(&label, &argv, p.timeout(), Place::Room(room))
            .start()?
            .ran()?;
        seconds += ran.seconds;
        if let Some(read) = &ran.receipt {
            add_failures(facts, read, None);
        }
        facts.replays.push(Replay {
            property: id.clone(),
            exit_code: ran.run,
            receipt: receipted(&p.command).then(|| {
                ran.receipt
                    .as_ref()
                    .and_then(|read| property_receipt(read, p.case.as_deref(), id, &g.base_skips))
            }),
        });
        if let Some(finding) = integrity_after(g, room, &label)? {
            if facts.integrity.is_empty() {
                facts.integrity.push(finding);
            }
            break;
        }
    }
    Ok(seconds)
}
