//! The gate's loop: ask the core (or the server) for the work items of its plan, run them
//! (one arm per kind of item), report what each saw as typed facts the moment it ends, and
//! ask again, until the plan has nothing to run (it says `decide`). The loop knows how to run
//! each kind of item, never which follows which, nor when to stop: that is the core's answer.

use std::collections::HashSet;
use std::time::Instant;

use super::super::error::CliError;
use super::super::progress::{self, Event};
use super::super::runner::{Outcome, Place, Run};
use super::super::sandbox::Room;
use super::gather::{Gathered, integrity_after};
use super::outputs::{Seconds, add_failures, write_facts};
use super::suite::{SuiteBeside, SuiteDone, deselect_args, run_suite};
use super::{GateArgs, Planner, jobs, reproof};
use crate::core::gate::{
    BuildFacts, Facts, GateRuleName, NextStep, Phase, WorkItem, WorkKind, clip_failure,
};
use crate::core::ladder::T2;

/// The most steps one gate takes (the plan asks each at most once; re-proofs at most 100).
const MAX_STEPS: usize = 128;

/// What the loop leaves: the rooms it used for the suite (removed at the end, on their own
/// core), and the seconds each tier's runs took.
pub(super) struct Drove {
    pub suite_room: Option<Room>,
    pub seconds: Seconds,
}

/// Executes the plan's work items on `facts` until the plan has none (it says `decide`).
pub(super) fn drive(
    args: &GateArgs,
    planner: &Planner<'_>,
    g: &Gathered,
    facts: &mut Facts,
) -> Result<Drove, CliError> {
    std::thread::scope(|scope| {
        let mut runner = Runner {
            args,
            planner,
            g,
            jobs: args.jobs(),
            scope,
            suite_beside: None,
            reproof_beside: None,
            built: None,
            pristine: None,
            suite_room: None,
            seconds: Seconds::default(),
            ended: HashSet::new(),
        };
        let ran = runner.answers(facts);
        // A suite or re-proof started beside the others that the decision did not need:
        // stopped, not run.
        if let Some(e) = runner.suite_beside.take() {
            e.stop();
        }
        if let Some(other) = runner.reproof_beside.take() {
            other.stop();
        }
        ran.map(|()| Drove {
            suite_room: runner.suite_room.take(),
            seconds: runner.seconds,
        })
    })
}

/// How one answer's items run, in its order: the canary and the property runs together up to
/// `--jobs` (with the suite that holds their run 1, section 15.3), the patch mutants together,
/// every other item alone. The grouping is by the kinds and fields the core set; which item
/// follows which is the answer's.
enum Batch<'w> {
    Runs {
        runs: Vec<&'w WorkItem>,
        holds: Option<&'w WorkItem>,
    },
    Mutants(Vec<&'w WorkItem>),
    One(&'w WorkItem),
}

fn batches<'w>(now: &[&'w WorkItem]) -> Vec<Batch<'w>> {
    let of = |f: fn(&WorkItem) -> bool| -> Vec<&'w WorkItem> {
        now.iter().copied().filter(|w| f(w)).collect()
    };
    let runs = of(|w| matches!(w.kind, WorkKind::Canary | WorkKind::PropertyRuns));
    let mutants = of(|w| w.kind == WorkKind::PatchMutant);
    let holds = now
        .iter()
        .copied()
        .find(|w| w.kind == WorkKind::Suite && !w.holds.is_empty())
        .filter(|_| !runs.is_empty());
    let batched: HashSet<&str> = runs
        .iter()
        .chain(&mutants)
        .chain(&holds)
        .map(|w| w.id.as_str())
        .collect();
    let mut out = Vec::new();
    if !runs.is_empty() {
        out.push(Batch::Runs { runs, holds });
    }
    if !mutants.is_empty() {
        out.push(Batch::Mutants(mutants));
    }
    out.extend(
        now.iter()
            .copied()
            .filter(|w| !batched.contains(w.id.as_str()))
            .map(Batch::One),
    );
    out
}

/// The loop's state from one answer to the next: what runs beside the others, the room the
/// suite ran in, the seconds each tier's runs took, the items ended (what `needs` names).
struct Runner<'a, 'scope, 'env> {
    args: &'a GateArgs,
    planner: &'a Planner<'a>,
    g: &'env Gathered,
    jobs: usize,
    scope: &'scope std::thread::Scope<'scope, 'env>,
    suite_beside: Option<SuiteBeside<'scope, 'env>>,
    reproof_beside: Option<reproof::ReproofBeside<'scope>>,
    /// The observed run's build with the Rust patch mutants switched in (issue 68).
    built: Option<std::sync::Arc<super::observe_rust::Built>>,
    /// The room as the runs start from it, kept for the patch mutants' runs before any run.
    pristine: Option<Option<super::patch_mutant_runs::Pristine>>,
    suite_room: Option<Room>,
    seconds: Seconds,
    ended: HashSet<String>,
}

impl Runner<'_, '_, '_> {
    /// Asks for the plan's items, runs them, reports, and asks again, until it says `decide`.
    fn answers(&mut self, facts: &mut Facts) -> Result<(), CliError> {
        let mut said = HashSet::new();
        for _ in 0..MAX_STEPS {
            let plan = self.planner.next(facts)?;
            for line in &plan.say {
                if said.insert(line.clone()) {
                    progress::say(Event::Plan(line.clone()));
                }
            }
            let now: Vec<&WorkItem> = plan.work.iter().filter(|w| !w.speculative).collect();
            // An answer with nothing to run is the decision; a step with no items is a plan
            // this runner cannot read (a server older than its work items): never a decision.
            if now.is_empty() {
                if plan.next != NextStep::Decide {
                    return Err(CliError::unavailable(format!(
                        "the plan asks for the step {} and lists no work item to run: a server older than this runner? Nothing is decided",
                        <&str>::from(plan.next)
                    )));
                }
                return Ok(());
            }
            // Each item at most once: a plan that asks for one again is a bug, not a loop.
            if let Some(again) = now.iter().find(|w| self.ended.contains(&w.id)) {
                return Err(CliError::software(format!(
                    "the core asked for {} again",
                    again.id
                )));
            }
            needs_met(&plan.work, &self.ended)?;
            self.start_beside(&plan.work, facts)?;
            let batches = batches(&now);
            let last = batches.len().saturating_sub(1);
            for (i, batch) in batches.into_iter().enumerate() {
                let build = matches!(&batch, Batch::One(w) if w.kind == WorkKind::Build);
                if !build && self.pristine.is_none() {
                    self.pristine = Some(super::patch_mutant_runs::Pristine::keep(self.g)?);
                }
                let ids: Vec<String> = match &batch {
                    Batch::Runs { runs, holds } => {
                        self.property_runs(facts, runs, *holds)?;
                        runs.iter().chain(holds).map(|w| w.id.clone()).collect()
                    }
                    Batch::Mutants(items) => {
                        self.patch_mutants(facts, items)?;
                        items.iter().map(|w| w.id.clone()).collect()
                    }
                    Batch::One(item) => {
                        self.one(facts, item)?;
                        vec![item.id.clone()]
                    }
                };
                let alone = matches!(batch, Batch::One(_));
                self.ended.extend(ids);
                write_facts(self.args, facts)?;
                // Between the items run alone, the core is asked whether what ended decides.
                if alone && i < last && decides(self.planner, facts)? {
                    break;
                }
            }
        }
        Ok(())
    }

    /// What may run beside the items that must, each in a copy of its own, when there are
    /// cores to spare: the suite the core marks speculative or as holding the property runs'
    /// run 1 (after a build, the room as the build left it, copied now; without one, the fresh
    /// copy made while the gate gathered), and the speculative re-proof (copied before the
    /// runs touch the room).
    fn start_beside(&mut self, work: &[WorkItem], facts: &Facts) -> Result<(), CliError> {
        for item in work.iter().take_while(|_| self.jobs > 1) {
            match item.kind {
                WorkKind::Suite
                    if (item.speculative || !item.holds.is_empty())
                        && self.suite_beside.is_none()
                        && facts.fixture_suite.is_none() =>
                {
                    let copy = match &facts.build {
                        Some(_) => Some(self.g.room.fork("the suite")?),
                        None => None,
                    };
                    self.suite_beside = Some(SuiteBeside::start(
                        self.scope,
                        self.g,
                        copy,
                        !item.holds.is_empty(),
                    ));
                }
                WorkKind::Reproof if item.speculative && self.reproof_beside.is_none() => {
                    let freed = self.suite_beside.as_ref().map(SuiteBeside::ended);
                    self.reproof_beside =
                        Some(reproof::beside(self.scope, self.g, property(item)?, freed)?);
                }
                _ => {}
            }
        }
        Ok(())
    }

    /// The canary and the property runs, up to `--jobs` at once; `holds`, the suite as run 1
    /// of the properties (section 15.3): beside the property command's runs 2 and on, or
    /// first, alone.
    fn property_runs(
        &mut self,
        facts: &mut Facts,
        runs: &[&WorkItem],
        holds: Option<&WorkItem>,
    ) -> Result<(), CliError> {
        let (g, args, planner) = (self.g, self.args, self.planner);
        let phase = Instant::now();
        let ids: Vec<String> = runs.iter().filter_map(|w| w.property.clone()).collect();
        let mut suite = None;
        if holds.is_some() && self.suite_beside.is_none() {
            suite = Some(run_suite(g, &g.room, T2, &[], true, None)?.ok_or_else(|| {
                CliError::software("the suite was stopped though nothing stopped it")
            })?);
        }
        let jobs::RunsStep { twin, ride, work } = jobs::of_items(g, runs)?;
        let slots = self
            .jobs
            .saturating_sub(usize::from(self.suite_beside.is_some()))
            .max(1);
        // As each run ends: the facts with the runs ended so far (the step not) to
        // `--facts-out`, and to the core, whose answer says whether they decide already (a
        // canary that did not fail, a tree a run changed): then nothing more runs. The
        // runner never reads a result to stop by itself.
        let before = facts.clone();
        let ended_runs = |so_far: &[&jobs::Done<'_>]| -> Result<bool, CliError> {
            // `--facts-out` lists every run ended (a property's runs not ended yet `null`);
            // the core is asked on the properties whose runs all ended.
            let with = |partial: bool| {
                let mut f = before.clone();
                jobs::record(g, &mut f, &ids, so_far, None, ride.as_ref(), partial);
                f
            };
            if args.facts_out.is_some() {
                let _ = write_facts(args, &with(true));
            }
            decides(planner, &with(false))
        };
        let done = jobs::run_jobs(g, &work, slots, ride.as_ref(), &ended_runs)?;
        drop(twin);
        if holds.is_some() && suite.is_none() {
            // The property runs are done and the suite (their run 1) still runs: the
            // re-proof readied beside them takes the core they left.
            if let Some(a) = &self.reproof_beside {
                a.release();
            }
            let (room, done) = self
                .suite_beside
                .take()
                .ok_or_else(|| CliError::software("the suite was not started"))?
                .join()?;
            self.suite_room.get_or_insert(room);
            suite = Some(done);
        }
        let first = suite.as_ref().map(|s| {
            s.read
                .clone()
                .unwrap_or_else(|| Err("the suite wrote no receipt".to_owned()))
        });
        self.seconds.t1 += jobs::record(
            g,
            facts,
            &ids,
            &done.iter().collect::<Vec<_>>(),
            first.as_ref(),
            ride.as_ref(),
            false,
        );
        // Run 1's recorded calls (issue 66), made again outside the tests.
        let (own, finding) = jobs::replayed(g, &done)?;
        if let Some(own) = own {
            join_behavior(g, facts, own, Join::Properties)?;
        }
        if let Some(f) = finding.filter(|_| facts.integrity.is_empty()) {
            facts.integrity.push(f);
        }
        if let Some(mut done) = suite {
            self.built = done.built.take();
            self.seconds.t2 = the_suite(g, facts, done)?;
        }
        if !ids.is_empty() {
            facts
                .timings_ms
                .add(Phase::Properties, phase.elapsed().as_secs_f64());
        }
        Ok(())
    }

    /// The patch mutants together, up to `--jobs`, each reported as it ends.
    fn patch_mutants(&mut self, facts: &mut Facts, items: &[&WorkItem]) -> Result<(), CliError> {
        let phase = Instant::now();
        let rooms = (
            self.built.as_deref(),
            self.pristine.as_ref().and_then(Option::as_ref),
        );
        patch_mutants(self.args, self.g, facts, items, (self.jobs, rooms))?;
        facts
            .timings_ms
            .add(Phase::Mutants, phase.elapsed().as_secs_f64());
        Ok(())
    }

    /// One item run alone: one arm per kind.
    fn one(&mut self, facts: &mut Facts, item: &WorkItem) -> Result<(), CliError> {
        let g = self.g;
        let phase = Instant::now();
        let took = || phase.elapsed().as_secs_f64();
        match item.kind {
            WorkKind::Canary | WorkKind::PropertyRuns | WorkKind::PatchMutant => {
                return Err(CliError::software(format!(
                    "{} runs with its batch, never alone",
                    item.id
                )));
            }
            WorkKind::Build => {
                build(g, facts)?;
                facts.timings_ms.add(Phase::Build, took());
            }
            WorkKind::Replay => {
                self.seconds.t1 += jobs::replay(
                    g,
                    facts,
                    std::slice::from_ref(&property(item)?.to_owned()),
                    self.suite_room.as_ref(),
                )?;
                facts.timings_ms.add(Phase::Properties, took());
            }
            WorkKind::Reproof => {
                self.reproof(facts, property(item)?)?;
                facts.timings_ms.add(Phase::Reproof, took());
            }
            WorkKind::Suite => {
                let mut done = match self.suite_beside.take() {
                    Some(e) => {
                        let (room, done) = e.join()?;
                        self.suite_room.get_or_insert(room);
                        done
                    }
                    None => run_suite(g, &g.room, T2, &[], true, None)?.ok_or_else(|| {
                        CliError::software("the suite was stopped though nothing stopped it")
                    })?,
                };
                self.built = done.built.take();
                self.seconds.t2 = the_suite(g, facts, done)?;
            }
            WorkKind::AddedTests => {
                self.seconds.t2 += added_tests(g, facts)?;
            }
            WorkKind::Rerun => {
                self.seconds.t2 += rerun(g, facts, &item.deselect, self.suite_room.as_ref())?;
                facts.timings_ms.add(Phase::Rerun, took());
            }
        }
        Ok(())
    }

    /// The re-proof of `id`: the one started beside the runs when it is this property's, or
    /// one run now.
    fn reproof(&mut self, facts: &mut Facts, id: &str) -> Result<(), CliError> {
        let started = match self.reproof_beside.take() {
            Some(a) if a.id == id => Some(a),
            Some(other) => {
                other.stop();
                None
            }
            None => None,
        };
        let done = match started {
            Some(a) => a.join()?,
            None => reproof::reprove(self.g, id, None, None)?,
        };
        facts.reproof.push(done.ok_or_else(|| {
            CliError::software("the re-proof was stopped though nothing stopped it")
        })?);
        Ok(())
    }
}

/// Runs the patch mutants `items` names (issue 52), up to `jobs` at once, each in its own copy
/// of the `pristine` room (its switch on, where the build step `built` it in), each written into
/// `observe.mutants` (and `--facts-out`) the moment it ends. A mutant's run has three times the
/// observed run's time, at least 10 s, at most the suite's timeout.
fn patch_mutants(
    args: &GateArgs,
    g: &Gathered,
    facts: &mut Facts,
    items: &[&WorkItem],
    (jobs, (built, pristine)): (
        usize,
        (
            Option<&super::observe_rust::Built>,
            Option<&super::patch_mutant_runs::Pristine>,
        ),
    ),
) -> Result<(), CliError> {
    let observed = facts.observe.clone().ok_or_else(|| {
        CliError::software("the core asked for patch mutants the facts do not list")
    })?;
    let mut todo: Vec<(u32, crate::core::gate::PatchMutantFacts)> = Vec::new();
    for item in items {
        let n = item.mutant.ok_or_else(|| {
            CliError::software(format!("the core asked for {} of no mutant", item.id))
        })?;
        let m = observed.mutants.get(n as usize).ok_or_else(|| {
            CliError::software(format!(
                "the core asked for {}, which the facts do not list",
                item.id
            ))
        })?;
        todo.push((n, m.clone()));
    }
    let suite_ms = facts.timings_ms.of(Phase::Suite);
    let timeout = std::time::Duration::from_millis(suite_ms.saturating_mul(3))
        .max(std::time::Duration::from_secs(10))
        .min(g.config.suite.timeout());
    // (One more run, a Rust mutant's decoy, when one is killed.)
    let rust = todo.iter().any(|(_, m)| m.file.ends_with(".rs"));
    if let Some(p) = pristine {
        p.expect(todo.len() + usize::from(rust));
    }
    let rooms = (timeout, built, pristine);
    // A lone Rust mutant leaves a core idle: its decoy runs there, beside it, and counts if it
    // is killed (the decoy's command is the mutant's, known before it runs; no other mutant's
    // kill can need a decoy of its own).
    let beside = match todo.as_slice() {
        [(n, m)] if rust && jobs > 1 => Some((*n, m.clone())),
        _ => None,
    };
    let queue = std::sync::Mutex::new(todo.into_iter());
    let (tx, rx) = std::sync::mpsc::channel();
    let decoy = std::thread::scope(|s| -> Result<Option<(u32, bool)>, CliError> {
        let decoy = beside.map(|(n, m)| {
            s.spawn(move || super::patch_mutant_runs::decoy(g, n, &m, rooms).map(|p| (n, p)))
        });
        for _ in 0..jobs.clamp(1, items.len()) {
            let tx = tx.clone();
            let queue = &queue;
            s.spawn(move || {
                loop {
                    let next = queue
                        .lock()
                        .unwrap_or_else(std::sync::PoisonError::into_inner)
                        .next();
                    let Some((n, m)) = next else { break };
                    let done = super::patch_mutant_runs::run_one(g, n, &m, rooms);
                    let failed = done.is_err();
                    if tx.send((n, done)).is_err() || failed {
                        break;
                    }
                }
            });
        }
        drop(tx);
        for (n, done) in rx {
            let done = match done {
                Ok(done) => done,
                Err(e) => {
                    // Nothing more starts; the runs under way end on their own.
                    *queue
                        .lock()
                        .unwrap_or_else(std::sync::PoisonError::into_inner) =
                        Vec::new().into_iter();
                    return Err(e);
                }
            };
            if let Some(slot) = facts
                .observe
                .as_mut()
                .and_then(|o| o.mutants.get_mut(n as usize))
            {
                *slot = done;
            }
            write_facts(args, facts)?;
        }
        decoy
            .map(|d| {
                d.join()
                    .map_err(|_| CliError::software("a patch mutant's decoy run panicked"))?
            })
            .transpose()
    })?;
    decoy_kills(args, g, facts, rooms, decoy)
}

/// A kill stands only where its checks pass with no mutant on (issue 68): the first killed
/// Rust mutant's run is made again as its decoy (`patch_mutant_runs::decoy`; `ran`: mutant
/// number and whether its decoy passed, where it ran beside the mutant); where that does not
/// pass, the checks fail whatever the code is, and every kill is void.
fn decoy_kills(
    args: &GateArgs,
    g: &Gathered,
    facts: &mut Facts,
    rooms: super::patch_mutant_runs::Rooms<'_>,
    ran: Option<(u32, bool)>,
) -> Result<(), CliError> {
    use crate::core::gate::MutantState::{Killed, Void};
    let killed = facts.observe.as_ref().and_then(|o| {
        o.mutants
            .iter()
            .enumerate()
            .find(|(_, m)| m.state == Killed && m.file.ends_with(".rs"))
            .map(|(n, m)| (u32::try_from(n).unwrap_or(u32::MAX), m.clone()))
    });
    let Some((n, m)) = killed else {
        return Ok(());
    };
    let passed = match ran {
        Some((beside, passed)) if beside == n => passed,
        _ => super::patch_mutant_runs::decoy(g, n, &m, rooms)?,
    };
    if passed {
        return Ok(());
    }
    progress::say(Event::Plan(format!(
        "patch mutant {}: the checks that killed it fail with no mutant on too (its decoy: the same command, a value that turns none on): no kill stands",
        n + 1
    )));
    for m in facts.observe.iter_mut().flat_map(|o| o.mutants.iter_mut()) {
        if m.state == Killed {
            m.state = Void;
            m.killed_by.clear();
        }
    }
    write_facts(args, facts)
}

/// Whether the facts so far decide already: the core's answer is `decide` by a gate rule (a
/// canary that did not fail, a tree a run changed), so nothing more of this answer runs.
fn decides(planner: &Planner<'_>, facts: &Facts) -> Result<bool, CliError> {
    let now = planner.next(facts)?;
    Ok(now.next == NextStep::Decide && now.rule != GateRuleName::Route)
}

/// The property a work item runs.
fn property(item: &WorkItem) -> Result<&str, CliError> {
    item.property
        .as_deref()
        .ok_or_else(|| CliError::software(format!("the core asked for {} of no property", item.id)))
}

/// Every item waits only for items that ended, or that this answer runs.
fn needs_met(work: &[WorkItem], ended: &HashSet<String>) -> Result<(), CliError> {
    for item in work {
        if let Some(n) = item
            .needs
            .iter()
            .find(|n| !ended.contains(*n) && !work.iter().any(|w| &w.id == *n))
        {
            return Err(CliError::software(format!(
                "the core asked for {} before {n}, which it waits for",
                item.id
            )));
        }
    }
    Ok(())
}

/// The re-run (section 12.4): the suite's run again, where it ran, less the frozen tests
/// `deselect`; its facts into `fixture_suite.rerun`. Gives the seconds it took.
fn rerun(
    g: &Gathered,
    facts: &mut Facts,
    deselect: &[String],
    suite_room: Option<&Room>,
) -> Result<f64, CliError> {
    let template =
        g.config.suite.deselect.as_deref().ok_or_else(|| {
            CliError::software("the core asked for a re-run the config cannot make")
        })?;
    let room = suite_room.unwrap_or(&g.room);
    let extra = deselect_args(template, deselect, &room.tree);
    let label = format!("{T2} re-run without {}", deselect.join(", "));
    let done = run_suite(g, room, &label, &extra, false, None)?
        .ok_or_else(|| CliError::software("the re-run was stopped though nothing stopped it"))?;
    let seconds = done.seconds;
    let rerun = done.rerun();
    record_suite(facts, done);
    if let Some(suite) = facts.fixture_suite.as_mut() {
        suite.rerun = Some(rerun);
    }
    Ok(seconds)
}

/// The build step (section 11.8): once, in the room, its last lines kept for the report.
fn build(g: &Gathered, facts: &mut Facts) -> Result<(), CliError> {
    let build = g
        .config
        .build
        .as_ref()
        .ok_or_else(|| CliError::software("the core asked for a build the config has not"))?;
    let once = || match Run::new(
        "build",
        &build.command,
        build.timeout(),
        Place::Room(&g.room),
    )
    .tail(2048)
    .start()?
    {
        Outcome::Ran(ran) => Ok(ran),
        Outcome::Cancelled => Err(CliError::software("the build was cancelled")),
    };
    // The observed run's probes and the patch mutants' switches built here, once (issue 68);
    // the judged text alone decides whether the patch builds where that text does not.
    let probed = super::observe_rust::for_build(g)?;
    let mut ran = once()?;
    if let Some(p) = probed {
        if ran.run == Some(0) {
            let _ = g.observed_build.set(p.keep_built(&g.room)?);
        } else {
            p.restore(&g.room)?;
            g.switches_refused
                .store(true, std::sync::atomic::Ordering::SeqCst);
            progress::say(Event::Plan(
                "build: the changed lines with the observed run's probes and the patch mutants' switches did not build; the judged text is built, the observed run builds the probes alone, and each patch mutant is built on its own".to_owned(),
            ));
            ran = once()?;
        }
    }
    // A build that fails on the base too is a fault of the machine or the base, never the
    // patch's (issue 50): no answer blames the patch for it.
    if ran.run != Some(0)
        && let Some(why) = fails_on_the_base(g, build, &ran.tail)?
    {
        return Err(CliError::unavailable(why));
    }
    facts.build = Some(BuildFacts {
        exit_code: ran.run,
        catch_exit_codes: Some(build.catch.clone()),
        tail: clip_failure(&ran.tail, 2048),
    });
    // What it built is the tree the runs start from (a toolchain file it wrote aside).
    let built = g.room.accept_built(&g.config.scratch());
    if built > 0 {
        progress::say(Event::Plan(format!(
            "build: {built} file(s) it created are the built tree the runs start from"
        )));
    }
    if let Some(finding) = integrity_after(g, &g.room, "build")? {
        facts.integrity.push(finding);
    }
    Ok(())
}

/// Builds the base in a room of its own, as the judged tree was built: why the failure is not
/// the patch's when the base fails too (its exit, the line that says a file could not be read
/// when one does, its last lines); `None` when the base builds.
fn fails_on_the_base(
    g: &Gathered,
    build: &super::super::config::BuildConfig,
    tail: &str,
) -> Result<Option<String>, CliError> {
    progress::say(Event::BuildingTheBase);
    let room = super::super::runner::open_room(&g.config.sandbox, &g.base, g.cache.as_ref())?;
    let ran = match Run::new(
        "build (the base)",
        &build.command,
        build.timeout(),
        Place::Room(&room),
    )
    .tail(2048)
    .start()?
    {
        Outcome::Ran(ran) => ran,
        Outcome::Cancelled => return Err(CliError::software("the base's build was cancelled")),
    };
    if ran.run == Some(0) {
        return Ok(None);
    }
    let unreadable = tail
        .lines()
        .find(|l| l.contains("Permission denied"))
        .map(|l| {
            format!(
                "; a file the build needs cannot be read by the room's runs ({}): {}",
                room.uid_said(),
                l.trim()
            )
        })
        .unwrap_or_default();
    Ok(Some(format!(
        "the build fails on the base {} too ({}): a fault of the machine or the base, not the patch's; no answer{unreadable}. Its last lines:\n{}",
        g.base,
        ran.run
            .map_or("killed or timed out".to_owned(), |c| format!("exit {c}")),
        clip_failure(ran.tail.trim_end(), 2048)
    )))
}

/// The suite's first run into the facts (`fixture_suite`); the seconds it took.
fn the_suite(g: &Gathered, facts: &mut Facts, mut done: SuiteDone) -> Result<f64, CliError> {
    facts.timings_ms.add(Phase::Suite, done.seconds);
    let seconds = done.seconds;
    if let Some(observed) = done.observe.take() {
        facts.observe = Some(observed);
    }
    if let Some(behavior) = done.behavior.take() {
        join_behavior(g, facts, behavior, Join::Suite)?;
    }
    let mut run = record_suite(facts, done);
    run.catch_exit_codes = Some(g.config.suite.catch.clone());
    facts.fixture_suite = Some(run);
    Ok(seconds)
}

/// The run of the test files the patch adds, in a room of their own, into the facts
/// (`fixture_suite.added`, issue 50); the seconds it took.
fn added_tests(g: &Gathered, facts: &mut Facts) -> Result<f64, CliError> {
    let mut added = super::suite::run_added(g)?.ok_or_else(|| {
        CliError::software(
            "the core asked for the added tests, and the config has no `[suite] added`",
        )
    })?;
    let seconds = added.seconds;
    // Its recorded calls join the suite's (issue 66), and the base is asked once whether a
    // test the patch adds fails there.
    match added.behavior.take() {
        Some(own) => join_behavior(g, facts, own, Join::Added)?,
        None => {
            if let Some(b) = facts.behavior.take() {
                facts.behavior = Some(match b.added_fail_on_base.is_some() {
                    true => b,
                    false => super::suite::added_fail_on_base(g, b)?,
                });
            }
        }
    }
    facts.timings_ms.add(Phase::Suite, seconds);
    let rerun = added.rerun();
    record_suite(facts, added);
    if let Some(suite) = facts.fixture_suite.as_mut() {
        suite.added = Some(rerun);
    }
    Ok(seconds)
}

/// One observed run's recorded calls (`own`) joined to the facts' (issue 66), the suite's
/// first (`Join::Suite`: a reader checks its concrete inputs first); then, once the added
/// tests have run or when none will, the base asked whether a test the patch adds fails
/// there, unless it was asked already.
fn join_behavior(
    g: &Gathered,
    facts: &mut Facts,
    mut own: crate::core::gate::BehaviorFacts,
    from: Join,
) -> Result<(), CliError> {
    let mut b = match (facts.behavior.take(), from) {
        (Some(earlier), Join::Suite) => {
            own.absorb(earlier);
            own
        }
        (Some(mut b), _) => {
            b.absorb(own);
            b
        }
        (None, _) => own,
    };
    let added_ran = from == Join::Added;
    if b.added_fail_on_base.is_none() && (added_ran || super::suite::added_command(g).is_none()) {
        b = super::suite::added_fail_on_base(g, b)?;
    }
    facts.behavior = Some(b);
    Ok(())
}

/// Which observed run's calls [`join_behavior`] joins.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Join {
    Suite,
    Properties,
    Added,
}

/// A suite run's failing cases and integrity finding into the facts; its own facts, to be
/// put where they go.
fn record_suite(facts: &mut Facts, done: SuiteDone) -> crate::core::gate::SuiteFacts {
    if let Some(read) = &done.read {
        add_failures(facts, read, None);
    }
    if let Some(finding) = done.finding
        && facts.integrity.is_empty()
    {
        facts.integrity.push(finding);
    }
    done.run
}
