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
use sha2::Digest as _;

use super::gather::{Gathered, integrity_after};
use super::observe::REPORT_SUFFIX;
use crate::cli::error::CliError;
use crate::cli::runner::{Outcome, Place, Run};
use crate::cli::sandbox::Room;
use crate::core::gate::{
    BehaviorFacts, CallEnd, CallResult, IntegrityFinding, MAX_REPLAYED_CALLS, MAX_UNRECORDED,
    ReplayedCall, UnrecordedCalls,
};

/// The plain program: replay_canon.py, then replay_plain.py.
const PLAIN: &str = concat!(
    include_str!("programs/replay_canon.py"),
    include_str!("programs/replay_plain.py")
);

/// The most bytes of recorded calls one plain program is handed (its `argv`): beyond, the calls
/// left are not replayed (said so).
const MAX_ARGV_BYTES: usize = 1 << 20;

/// The most bytes of a plain program's results read.
const MAX_RESULT_BYTES: u64 = 16 << 20;

/// The most characters of a result shown.
const SHOWN_CHARS: usize = 200;

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

/// A result as the facts hold it: the end, the text shown (cut), the digest of the whole.
fn result(end: CallEnd, text: &str) -> CallResult {
    let digest = match end {
        CallEnd::Returned | CallEnd::Raised => {
            Some(crate::core::digest::Digest(sha2::Sha256::digest(text.as_bytes()).into()).to_hex())
        }
        CallEnd::DidNotReturn | CallEnd::Unreplayed => None,
    };
    // (Redacted and its controls escaped first, then cut to fit.)
    let said = crate::cli::redact::text(text);
    let mut shown: String = said.chars().take(SHOWN_CHARS).collect();
    if said.chars().nth(SHOWN_CHARS).is_some() {
        shown.pop();
        shown.push('…');
    }
    CallResult { end, shown, digest }
}

/// One plain program's line for a call.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct PlainLine {
    i: Option<usize>,
    result: Option<String>,
    raised: Option<String>,
    unreplayed: Option<String>,
    start: Option<usize>,
    end: Option<usize>,
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
    let mut facts = BehaviorFacts {
        behaves_under_test: config.behaves_under_test,
        calls: Vec::new(),
        unrecorded: Vec::new(),
    };
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
        let argv = plain_argv(
            &g.config.suite.command,
            specs.iter().map(|(_, s)| s.clone()),
        )
        .ok_or_else(|| CliError::software("the suite command runs no Python interpreter"))?;
        let timeout = std::time::Duration::from_secs_f64(
            (seconds * 2.0).clamp(30.0, g.config.suite.timeout().as_secs_f64()),
        );
        for (n, into) in plain.iter_mut().enumerate() {
            let label = format!(
                "{label}: its recorded calls made again in a plain program ({} of 2)",
                n + 1
            );
            let mut run = Run::new(&label, &argv, timeout, Place::Room(room));
            if let Some(flag) = cancel {
                run = run.cancel(flag);
            }
            let ran = match run.start()? {
                Outcome::Ran(ran) => ran,
                Outcome::Cancelled => return Ok((None, None)),
            };
            let lines = ran
                .receipt_at
                .as_deref()
                .map(read_lines)
                .unwrap_or_default();
            *into = results(&lines, &specs);
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

/// The suite command's interpreter (its own flags, but `-W`: warnings as a plain script has
/// them) running the plain program on `specs`.
fn plain_argv(suite: &[String], specs: impl Iterator<Item = String>) -> Option<Vec<String>> {
    let at = crate::cli::runner::pytest_module_at(suite)?;
    let mut out: Vec<String> = Vec::new();
    let mut skip = false;
    for a in suite.get(..at)? {
        if std::mem::take(&mut skip) {
            continue;
        }
        if a == "-W" {
            skip = true;
            continue;
        }
        if !a.starts_with("-W") {
            out.push(a.clone());
        }
    }
    out.extend([
        "-c".to_owned(),
        PLAIN.to_owned(),
        crate::cli::runner::JUNIT.to_owned(),
    ]);
    out.extend(specs);
    Some(out)
}

/// The plain program's lines (beside its receipt), size-capped, each read strictly; a line that
/// is not one is left out.
fn read_lines(receipt: &Path) -> Vec<PlainLine> {
    use std::io::{BufRead, Read};
    let mut path = receipt.as_os_str().to_owned();
    path.push(".replay");
    let Ok(file) = crate::cli::runner::open_report(Path::new(&path)) else {
        return Vec::new();
    };
    std::io::BufReader::new(file.take(MAX_RESULT_BYTES))
        .lines()
        .map_while(Result::ok)
        .filter_map(|l| {
            let v = crate::core::json::strict_value(l.as_bytes()).ok()?;
            serde_json::from_value(v).ok()
        })
        .collect()
}

/// Each call's result, by its index in the recorded calls: a call the program reached and
/// never finished `did-not-return`; the calls after it, when the program ended there, not made.
fn results(lines: &[PlainLine], specs: &[(usize, String)]) -> BTreeMap<usize, CallResult> {
    let mut out = BTreeMap::new();
    for l in lines {
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
