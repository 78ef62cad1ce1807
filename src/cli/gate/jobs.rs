//! The `runs` step: the canary and the property runs the plan asks for, up to `--jobs` at once
//! in the room, and what they saw as the facts' `canary`, `property_runs` and
//! `property_receipts`.

use std::collections::BTreeMap;

use super::super::config::GateConfig;
use super::super::error::CliError;
use super::super::runner::{
    Outcome, Place, Ran, Run, batched, canary_run, property_argv, property_receipt, receipt_of,
    receipted,
};
use super::gather::{Gathered, integrity_after};
use super::outputs::add_failures;
use crate::core::gate::{CanaryFacts, Facts, IntegrityFinding, Phase, PropertyRuns};
use crate::core::ladder::T1;
use crate::core::runs::Receipt;

/// One run of the `runs` step: they do not depend on each other, and run up to `--jobs` at
/// once in the room.
pub(super) enum Job {
    Canary,
    /// Run `n` of these properties (one process for all of them when batched).
    Properties {
        n: u8,
        ids: Vec<String>,
    },
}

/// A job run: how it ended, and what it changed that it may not.
pub(super) struct Done<'j> {
    job: &'j Job,
    ran: Ran,
    finding: Option<IntegrityFinding>,
}

/// The jobs of a `runs` step: the canary first when asked, then one process per run of a
/// batch (every property at once), or per property and run; in run order.
pub(super) fn jobs(config: &GateConfig, canary: bool, ids: &[String]) -> Vec<Job> {
    let p = &config.properties;
    let mut work = Vec::new();
    if canary {
        work.push(Job::Canary);
    }
    if ids.is_empty() {
        return work;
    }
    if batched(&p.command) {
        work.extend((1..=p.runs).map(|n| Job::Properties {
            n,
            ids: ids.to_vec(),
        }));
    } else {
        work.extend(ids.iter().flat_map(|id| {
            (1..=p.runs).map(move |n| Job::Properties {
                n,
                ids: vec![id.clone()],
            })
        }));
    }
    work
}

/// Runs `work` in the room, up to `slots` at once, in order of start. Once one changes the
/// tree (section 11.3), or the canary does not fail as it must, or one fails, or a signal
/// comes, nothing more starts and what runs is stopped: the jobs stopped or never started are
/// not in the result.
pub(super) fn run_jobs<'j>(
    g: &Gathered,
    work: &'j [Job],
    slots: usize,
) -> Result<Vec<Done<'j>>, CliError> {
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
    let stop = AtomicBool::new(false);
    let next = AtomicUsize::new(0);
    let results = std::sync::Mutex::new(Vec::new());
    let p = &g.config.properties;
    let one = |job: &'j Job| -> Result<Option<Done<'j>>, CliError> {
        let (label, argv, timeout) = match job {
            Job::Canary => {
                let c = g.config.canary.as_ref().ok_or_else(|| {
                    CliError::software("the plan asks for a canary the config has not")
                })?;
                ("canary".to_owned(), c.command.clone(), c.timeout())
            }
            Job::Properties { n, ids } => (
                match ids.as_slice() {
                    [id] => format!("{T1} {id} run {n}/{}", p.runs),
                    _ => format!("{T1} run {n}/{} ({} properties)", p.runs, ids.len()),
                },
                property_argv(&p.command, ids),
                p.timeout(),
            ),
        };
        let ran = match Run::new(&label, &argv, timeout, Place::Room(&g.room))
            .cancel(&stop)
            .start()?
        {
            Outcome::Ran(ran) => ran,
            Outcome::Cancelled => return Ok(None),
        };
        // A canary that did not fail as it must decides (the core's rule, section 11.5): no
        // property run counts after it, so none more is started.
        if let (Job::Canary, Some(c)) = (job, &g.config.canary)
            && !canary_run(&ran, c.catch.clone()).sang()
        {
            stop.store(true, Ordering::SeqCst);
        }
        let finding = integrity_after(g, &g.room, &label)?;
        if finding.is_some() {
            // Nothing more runs: the runs so far are reported, and the core decides.
            stop.store(true, Ordering::SeqCst);
        }
        Ok(Some(Done { job, ran, finding }))
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
                        results
                            .lock()
                            .unwrap_or_else(std::sync::PoisonError::into_inner)
                            .push((i, done));
                    }
                }
            });
        }
    });
    let mut results = results
        .into_inner()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    results.sort_by_key(|(i, _)| *i);
    results.into_iter().map(|(_, r)| r).collect()
}

/// What the jobs saw, into the facts: the canary's run, each property's exit codes in run
/// order (a batch's for every property in it) and, with receipts, each its own cases'
/// receipt; the failing cases the property runs' reports give; the first integrity finding.
/// A property not every run of which finished (the tree changed) is left out. Gives the
/// seconds the property runs took.
pub(super) fn record(
    g: &Gathered,
    facts: &mut Facts,
    asked: &[String],
    done: Vec<Done<'_>>,
) -> f64 {
    let p = &g.config.properties;
    let on = receipted(&p.command);
    let mut codes: BTreeMap<&str, Vec<(u8, Option<u8>)>> = BTreeMap::new();
    let mut theirs: BTreeMap<&str, Vec<(u8, Option<Receipt>)>> = BTreeMap::new();
    let mut seconds = 0.0;
    for d in &done {
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
                });
                facts.timings_ms.add(Phase::Canary, d.ran.seconds);
            }
            Job::Properties { n, ids } => {
                seconds += d.ran.seconds;
                for id in ids {
                    codes.entry(id).or_default().push((*n, d.ran.run));
                    if let Some(read) = &d.ran.receipt {
                        let receipt = property_receipt(read, p.case.as_deref(), id);
                        theirs.entry(id).or_default().push((*n, receipt));
                    }
                }
                if let Some(read) = &d.ran.receipt {
                    add_failures(facts, read);
                }
            }
        }
    }
    if asked.is_empty() {
        return seconds;
    }
    let mut runs = BTreeMap::new();
    let mut receipts = BTreeMap::new();
    for (id, mut ran) in codes {
        if ran.len() != usize::from(p.runs) {
            continue;
        }
        ran.sort_by_key(|(n, _)| *n);
        runs.insert(
            id.to_owned(),
            PropertyRuns {
                runs: ran.into_iter().map(|(_, r)| r).collect(),
            },
        );
        if on {
            let mut mine = theirs.remove(id).unwrap_or_default();
            mine.sort_by_key(|(n, _)| *n);
            receipts.insert(id.to_owned(), mine.into_iter().map(|(_, r)| r).collect());
        }
    }
    facts.property_runs = Some(runs);
    if on {
        facts.property_receipts = Some(receipts);
    }
    facts.batched = batched(&p.command);
    seconds
}
