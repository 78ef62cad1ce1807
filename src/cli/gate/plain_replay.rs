//! The changed code judged by what it does (issue 66; CONTRACT.md 16.1, 16.2;
//! docs/design/replay.md), the runner's side: the observed run records each call into a
//! function the patch changes (the driver's `--record`), and here each recorded call is made
//! again, twice, by a plain program in the suite's room — a fresh interpreter, no test runner,
//! its own empty working directory and a script's `argv` (programs/replay_plain.py). Every
//! result is written down by the same Python code (programs/replay_canon.py: type and data,
//! never the value's own methods) and compared here by its SHA-256; the core decides
//! ([`crate::core::gate::BehaviorFacts`]).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::gather::{Gathered, integrity_after};
use super::observe::REPORT_SUFFIX;
use super::plain_program::{PlainLine, PlainRun, interpreter, result};
use crate::cli::error::CliError;
use crate::cli::sandbox::Room;
use crate::core::gate::{
    BehaviorFacts, CallEnd, CallResult, IntegrityFinding, MAX_REPLAYED_CALLS, MAX_UNRECORDED,
    ReplayedCall, UnrecordedCalls,
};

/// The most bytes of recorded calls one plain program is handed (its `argv`): beyond, the calls
/// left are not replayed (said so).
const MAX_ARGV_BYTES: usize = 1 << 20;

/// How many calls each changed function records in the observed run: `[replay] calls`, when
/// `[replay]` is on.
pub(super) fn record(g: &Gathered) -> Option<u8> {
    g.config.replay.filter(|r| r.on()).map(|r| r.calls)
}

/// One call as the observed run recorded it (the driver's `calls`).
#[derive(Debug, Clone, Deserialize, Serialize)]
struct RecordedCall {
    function: String,
    line: u32,
    file: String,
    module: String,
    root: String,
    path: String,
    firstline: u32,
    /// The calling module's name: the plain program calls from a frame of that name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    caller: Option<String>,
    #[serde(default)]
    generator: bool,
    args: String,
    #[serde(default, skip_serializing)]
    shown: String,
    #[serde(default, skip_serializing)]
    check: String,
    #[serde(default, skip_serializing)]
    result: Option<String>,
    #[serde(default, skip_serializing)]
    raised: Option<String>,
    #[serde(default, skip_serializing)]
    uncomparable: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    take: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    ended: Option<String>,
}

/// Calls the observed run could not record (the driver's `unrecorded`).
#[derive(Debug, Deserialize)]
struct Lost {
    file: String,
    function: String,
    why: String,
    count: u32,
}

/// The parts of the observed run's report read here.
#[derive(Debug, Default, Deserialize)]
struct Recorded {
    #[serde(default)]
    calls: Vec<RecordedCall>,
    #[serde(default)]
    unrecorded: Vec<Lost>,
}

/// The behaviour's facts before any call: the base config's rules, nothing found.
pub(super) fn no_calls(config: &crate::cli::config_observe::ReplayConfig) -> BehaviorFacts {
    BehaviorFacts {
        behaves_under_test: config.behaves_under_test,
        calls: Vec::new(),
        unrecorded: Vec::new(),
        unobserved_difference: config.unobserved_difference,
        special_case: config.special_case,
        unasserted_difference: config.unasserted_difference,
        against_base: Vec::new(),
        added_fail_on_base: None,
        failing_on_base: Vec::new(),
    }
}

/// Replays the calls the suite's observed run recorded (its receipt at `receipt_at`), twice,
/// in `room`; `None` when `[replay]` is off. A finding: what the plain programs changed in the
/// tree.
pub(super) fn replay(
    g: &Gathered,
    room: &Room,
    receipt_at: Option<&Path>,
    (label, seconds): (&str, f64),
    cancel: Option<&std::sync::atomic::AtomicBool>,
) -> Result<(Option<BehaviorFacts>, Option<IntegrityFinding>), CliError> {
    let Some(config) = g.config.replay.filter(|r| r.on()) else {
        return Ok((None, None));
    };
    let mut facts = no_calls(&config);
    let recorded: Recorded = receipt_at
        .map(|r| {
            let mut path = r.as_os_str().to_owned();
            path.push(REPORT_SUFFIX);
            PathBuf::from(path)
        })
        .and_then(|p| super::observe::read_report(&p).ok())
        .unwrap_or_default();
    facts.unrecorded = recorded
        .unrecorded
        .iter()
        .filter(|l| l.count > 0)
        .take(MAX_UNRECORDED)
        .map(|l| UnrecordedCalls {
            file: l.file.clone(),
            function: l.function.chars().take(512).collect(),
            why: l.why.chars().take(200).collect(),
            count: l.count,
        })
        .collect();
    let calls: Vec<&RecordedCall> = recorded.calls.iter().take(MAX_REPLAYED_CALLS).collect();
    // The calls to make: those with a result to compare, as many as the argv holds.
    let mut specs: Vec<(usize, String)> = Vec::new();
    let mut bytes = 0;
    for (i, c) in calls.iter().enumerate() {
        if c.uncomparable.is_some() {
            continue;
        }
        let spec = serde_json::to_string(c).unwrap_or_default();
        bytes += spec.len();
        if bytes > MAX_ARGV_BYTES {
            break;
        }
        specs.push((i, spec));
    }
    let mut plain: [BTreeMap<usize, CallResult>; 2] = [BTreeMap::new(), BTreeMap::new()];
    if !specs.is_empty() {
        let run = PlainRun {
            room,
            interpreter: interpreter(&g.config.suite.command).ok_or_else(|| {
                CliError::software("the suite command runs no Python interpreter")
            })?,
            timeout: std::time::Duration::from_secs_f64(
                (seconds * 2.0).clamp(30.0, g.config.suite.timeout().as_secs_f64()),
            ),
            label,
            cancel,
            neighbours: match config.against_base() {
                true => Some((super::base_replay::literals(g)?, config.neighbours)),
                false => None,
            },
        };
        // The base's programs (in a room of their own) beside the patch's.
        let (patch, base) = std::thread::scope(|s| {
            let base = config
                .against_base()
                .then(|| s.spawn(|| super::base_replay::on_the_base(g, &run, &specs)));
            let patch = run.twice(room, "the patch", &specs, false);
            let base = base.map(|h| {
                h.join()
                    .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
            });
            (patch, base)
        });
        let Some(patch) = patch? else {
            return Ok((None, None));
        };
        for (into, lines) in plain.iter_mut().zip(&patch) {
            *into = results(lines, &specs);
        }
        if let Some(base) = base {
            let Some(base) = base? else {
                return Ok((None, None));
            };
            let shown = |i: usize| {
                calls.get(i).map_or(String::new(), |c| {
                    result(CallEnd::Unreplayed, &c.shown).shown
                })
            };
            facts.against_base = super::base_replay::compare(&patch, &base, &specs, &shown);
        }
    }
    let finding = integrity_after(g, room, label)?;
    for (i, c) in calls.iter().enumerate() {
        let recorded = match (&c.uncomparable, &c.result, &c.raised) {
            (Some(why), _, _) => result(
                CallEnd::Unreplayed,
                &format!("its result cannot be compared: {why}"),
            ),
            (None, Some(r), _) => result(CallEnd::Returned, r),
            (None, None, Some(t)) => result(CallEnd::Raised, t),
            (None, None, None) => result(CallEnd::Unreplayed, "no result recorded"),
        };
        let not_made = || {
            result(
                CallEnd::Unreplayed,
                "not made: over the plain program's argument limit",
            )
        };
        facts.calls.push(ReplayedCall {
            function: c.function.chars().take(512).collect(),
            file: c.file.clone(),
            line: c.line.max(1),
            check: c.check.chars().take(512).collect(),
            arguments: result(CallEnd::Unreplayed, &c.shown).shown,
            recorded,
            plain: plain
                .iter()
                .map(|p| p.get(&i).cloned().unwrap_or_else(not_made))
                .collect(),
        });
    }
    Ok((Some(facts), finding))
}

/// Each call's result, by its index in the recorded calls: a call the program reached and
/// never finished `did-not-return`; the calls after it, when the program ended there, not made.
fn results(lines: &[PlainLine], specs: &[(usize, String)]) -> BTreeMap<usize, CallResult> {
    let mut out = BTreeMap::new();
    for l in lines.iter().filter(|l| l.n.unwrap_or(0) == 0) {
        let Some((call, _)) = l.i.and_then(|i| specs.get(i)) else {
            continue;
        };
        let r = match (&l.result, &l.raised, &l.unreplayed) {
            (Some(r), _, _) => result(CallEnd::Returned, r),
            (None, Some(t), _) => result(CallEnd::Raised, t),
            (None, None, Some(why)) => result(CallEnd::Unreplayed, why),
            (None, None, None) => continue,
        };
        out.insert(*call, r);
    }
    let started = lines.iter().any(|l| l.start.is_some());
    let ended = lines.iter().any(|l| l.end.is_some());
    if !started {
        // (The program never reached its first call: nothing is known of any.)
        for (call, _) in specs {
            out.insert(
                *call,
                result(
                    CallEnd::Unreplayed,
                    "not made: the plain program did not start",
                ),
            );
        }
    } else if !ended {
        let mut first = true;
        for (call, _) in specs {
            if out.contains_key(call) {
                continue;
            }
            let r = match std::mem::take(&mut first) {
                true => result(
                    CallEnd::DidNotReturn,
                    "did not return: the plain program hung or ended in it",
                ),
                false => result(
                    CallEnd::Unreplayed,
                    "not made: the plain program ended before it",
                ),
            };
            out.insert(*call, r);
        }
    }
    out
}
