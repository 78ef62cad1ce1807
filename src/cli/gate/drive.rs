//! The gate's loop: ask the core (or the server) for the next step of its plan, execute it,
//! report what it saw as typed facts, and again, until the plan says `decide`. The loop knows
//! how to run each step, never which step follows which.

use std::collections::HashSet;
use std::time::Instant;

use super::super::error::CliError;
use super::super::output;
use super::super::runner::{Outcome, Place, Run};
use super::super::sandbox::Room;
use super::gather::{Gathered, integrity_after};
use super::outputs::{Seconds, add_failures, write_facts};
use super::suite::{SuiteBeside, SuiteDone, deselect_args, run_suite};
use super::{GateArgs, Planner, jobs, reproof};
use crate::core::gate::{BuildFacts, Facts, GateNext, GateRuleName, NextStep, Phase, clip_failure};
use crate::core::ladder::T2;

/// The most steps one gate takes (the plan asks each at most once; re-proofs at most 100).
const MAX_STEPS: usize = 128;

/// What the loop leaves: the rooms it used for the suite (removed at the end, on their own
/// core), and the seconds each tier's runs took.
pub(super) struct Drove {
    pub suite_room: Option<Room>,
    pub seconds: Seconds,
}

/// Executes the plan's steps on `facts` until it says `decide`.
pub(super) fn drive(
    args: &GateArgs,
    planner: &Planner<'_>,
    g: &Gathered,
    facts: &mut Facts,
) -> Result<Drove, CliError> {
    let jobs = args.jobs();
    let suite_room: std::sync::OnceLock<Room> = std::sync::OnceLock::new();
    let mut seconds = Seconds::default();
    std::thread::scope(|scope| -> Result<(), CliError> {
        let mut early: Option<SuiteBeside<'_, '_>> = None;
        let mut ahead: Option<reproof::ReproofBeside<'_>> = None;
        let mut said = HashSet::new();
        let mut asked = HashSet::new();
        for _ in 0..MAX_STEPS {
            let plan = planner.next(facts)?;
            for line in &plan.say {
                if said.insert(line.clone()) {
                    output::error(line);
                }
            }
            // Each step at most once: a plan that asks for a step again is a bug, not a loop.
            if !asked.insert(step_key(&plan)) {
                return Err(CliError::software(format!(
                    "the core asked for the step {:?} twice",
                    <&str>::from(plan.next)
                )));
            }
            // The suite in its own copy, beside the other runs, when the plan allows it and
            // there are cores to spare: after a build, the room as the build left it (made
            // now); without one, the fresh copy made while the gate gathered.
            if plan.suite_beside && jobs > 1 && early.is_none() && facts.fixture_suite.is_none() {
                let copy = match &facts.build {
                    Some(_) => Some(g.room.fork("the suite")?),
                    None => None,
                };
                early = Some(SuiteBeside::start(scope, g, copy, plan.suite_first));
            }
            let phase = Instant::now();
            match plan.next {
                NextStep::Build => {
                    build(g, facts)?;
                    facts
                        .timings_ms
                        .add(Phase::Build, phase.elapsed().as_secs_f64());
                }
                NextStep::Runs => {
                    // The re-proof the plan will ask for once these runs pass, started now in
                    // a copy made before they touch the room.
                    if let Some(id) = plan.reproof_ahead.as_deref().filter(|_| jobs > 1) {
                        ahead = Some(reproof::ahead(scope, g, id)?);
                    }
                    // The suite as run 1 of the properties it holds (section 15.3): beside the
                    // property command's runs 2 and on, or first, alone.
                    let mut suite = None;
                    if plan.suite_first && early.is_none() {
                        suite =
                            Some(run_suite(g, &g.room, T2, &[], true, None)?.ok_or_else(|| {
                                CliError::software(
                                    "the suite was stopped though nothing stopped it",
                                )
                            })?);
                    }
                    let jobs::RunsStep { twin, ride, work } = jobs::of_plan(g, &plan)?;
                    let slots = jobs.saturating_sub(usize::from(early.is_some())).max(1);
                    // As each run ends: the facts with the runs ended so far (the step not) to
                    // `--facts-out`, and to the core, whose answer says whether they decide
                    // already (a canary that did not fail, a tree a run changed): then nothing
                    // more runs. The runner never reads a result to stop by itself.
                    let before = facts.clone();
                    let ended = |so_far: &[&jobs::Done<'_>]| -> Result<bool, CliError> {
                        // `--facts-out` lists every run ended (a property's runs not ended yet
                        // `null`); the core is asked on the properties whose runs all ended.
                        let with = |partial: bool| {
                            let mut f = before.clone();
                            jobs::record(
                                g,
                                &mut f,
                                &plan.property_ids,
                                so_far,
                                None,
                                ride.as_ref(),
                                partial,
                            );
                            f
                        };
                        if args.facts_out.is_some() {
                            let _ = write_facts(args, &with(true));
                        }
                        let now = planner.next(&with(false))?;
                        Ok(now.next == NextStep::Decide && now.rule != GateRuleName::Route)
                    };
                    let done = jobs::run_jobs(g, &work, slots, ride.as_ref(), &ended)?;
                    drop(twin);
                    if plan.suite_first && suite.is_none() {
                        // The property runs are done and the suite (their run 1) still runs:
                        // the re-proof readied beside them takes the core they left.
                        if let Some(a) = &ahead {
                            a.release();
                        }
                        let (room, done) = early
                            .take()
                            .ok_or_else(|| CliError::software("the suite was not started"))?
                            .join()?;
                        let _ = suite_room.set(room);
                        suite = Some(done);
                    }
                    let first = suite.as_ref().map(|s| {
                        s.read
                            .clone()
                            .unwrap_or_else(|| Err("the suite wrote no receipt".to_owned()))
                    });
                    seconds.t1 += jobs::record(
                        g,
                        facts,
                        &plan.property_ids,
                        &done.iter().collect::<Vec<_>>(),
                        first.as_ref(),
                        ride.as_ref(),
                        false,
                    );
                    if let Some(done) = suite {
                        seconds.t2 = the_suite(g, facts, done)?;
                    }
                    if !plan.property_ids.is_empty() {
                        facts
                            .timings_ms
                            .add(Phase::Properties, phase.elapsed().as_secs_f64());
                    }
                }
                NextStep::Replay => {
                    seconds.t1 += jobs::replay(g, facts, &plan.replay, suite_room.get())?;
                    facts
                        .timings_ms
                        .add(Phase::Properties, phase.elapsed().as_secs_f64());
                }
                NextStep::Reproof => {
                    let id = plan.reprove.as_deref().ok_or_else(|| {
                        CliError::software("the core asked for a re-proof of no property")
                    })?;
                    let started = match ahead.take() {
                        Some(a) if a.id == id => Some(a),
                        Some(other) => {
                            other.stop();
                            None
                        }
                        None => None,
                    };
                    let done = match started {
                        Some(a) => a.join()?,
                        None => reproof::reprove(g, id, None, None)?,
                    };
                    facts.reproof.push(done.ok_or_else(|| {
                        CliError::software("the re-proof was stopped though nothing stopped it")
                    })?);
                    facts
                        .timings_ms
                        .add(Phase::Reproof, phase.elapsed().as_secs_f64());
                }
                NextStep::Suite => {
                    let done = match early.take() {
                        Some(e) => {
                            let (room, done) = e.join()?;
                            let _ = suite_room.set(room);
                            done
                        }
                        None => run_suite(g, &g.room, T2, &[], true, None)?.ok_or_else(|| {
                            CliError::software("the suite was stopped though nothing stopped it")
                        })?,
                    };
                    seconds.t2 = the_suite(g, facts, done)?;
                }
                NextStep::Rerun => {
                    let template = g.config.suite.deselect.as_deref().ok_or_else(|| {
                        CliError::software("the core asked for a re-run the config cannot make")
                    })?;
                    let room = suite_room.get().unwrap_or(&g.room);
                    // The same run as the suite's, less the frozen tests.
                    let extra = deselect_args(template, &plan.deselect, &room.tree);
                    let label = format!("{T2} re-run without {}", plan.deselect.join(", "));
                    let done =
                        run_suite(g, room, &label, &extra, false, None)?.ok_or_else(|| {
                            CliError::software("the re-run was stopped though nothing stopped it")
                        })?;
                    seconds.t2 += done.seconds;
                    let rerun = done.rerun();
                    record_suite(facts, done);
                    if let Some(suite) = facts.fixture_suite.as_mut() {
                        suite.rerun = Some(rerun);
                    }
                    facts
                        .timings_ms
                        .add(Phase::Rerun, phase.elapsed().as_secs_f64());
                }
                NextStep::Decide => break,
            }
            write_facts(args, facts)?;
        }
        // A suite or re-proof started early that the decision did not need: stopped, not run.
        if let Some(e) = early.take() {
            e.stop();
        }
        if let Some(other) = ahead.take() {
            other.stop();
        }
        Ok(())
    })?;
    Ok(Drove {
        suite_room: suite_room.into_inner(),
        seconds,
    })
}

/// What identifies a step of the plan: its kind and what it is asked to run.
fn step_key(plan: &GateNext) -> String {
    format!(
        "{} {:?} {:?} {} {:?} {:?}",
        <&str>::from(plan.next),
        plan.property_ids,
        plan.replay,
        plan.canary,
        plan.reprove,
        plan.deselect
    )
}

/// The build step (section 11.8): once, in the room, its last lines kept for the report.
fn build(g: &Gathered, facts: &mut Facts) -> Result<(), CliError> {
    let build = g
        .config
        .build
        .as_ref()
        .ok_or_else(|| CliError::software("the core asked for a build the config has not"))?;
    let ran = match Run::new(
        "build",
        &build.command,
        build.timeout(),
        Place::Room(&g.room),
    )
    .tail(2048)
    .start()?
    {
        Outcome::Ran(ran) => ran,
        Outcome::Cancelled => return Err(CliError::software("the build was cancelled")),
    };
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
    output::error(
        "build: it failed; the base is built too, to tell the patch's fault from the machine's",
    );
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

/// The suite's first run into the facts (`fixture_suite`), and the run of the test files the
/// patch adds beside it (`fixture_suite.added`, issue 50); the seconds they took.
fn the_suite(g: &Gathered, facts: &mut Facts, done: SuiteDone) -> Result<f64, CliError> {
    let mut seconds = done.seconds;
    facts.timings_ms.add(Phase::Suite, done.seconds);
    let mut run = record_suite(facts, done);
    run.catch_exit_codes = Some(g.config.suite.catch.clone());
    if let Some(added) = super::suite::run_added(g)? {
        seconds += added.seconds;
        facts.timings_ms.add(Phase::Suite, added.seconds);
        run.added = Some(added.rerun());
        record_suite(facts, added);
    }
    facts.fixture_suite = Some(run);
    Ok(seconds)
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
