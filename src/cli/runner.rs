//! The one runner that starts the code under test: each command in its own process group with
//! its timeout, the whole group killed when it ends or times out, and a caught Ctrl-C killing
//! it at once. The gate, the ladder and admission all run their checks through it, and read
//! what it saw as the core's one run model ([`RunOutcome`]).

use std::path::Path;
use std::path::PathBuf;
use std::process::{Command, ExitStatus};
use std::time::{Duration, Instant};

use super::error::CliError;
use super::interrupt;
use super::progress::Event;
use super::sandbox::Room;
use super::sandbox::limits::Over;
use crate::core::runs::RunOutcome;
use crate::exit::Exit;

/// The longest a check may be given, in seconds (a day).
pub const MAX_TIMEOUT_S: f64 = 86_400.0;

/// A configured timeout as a duration, or why it is not one: more than 0 and at most
/// [`MAX_TIMEOUT_S`] seconds (a larger one cannot be waited for, and is a typo).
pub fn timeout(seconds: f64) -> Result<Duration, String> {
    if seconds.is_finite() && seconds > 0.0 && seconds <= MAX_TIMEOUT_S {
        Ok(Duration::from_secs_f64(seconds))
    } else {
        Err(format!(
            "must be more than 0 and at most {MAX_TIMEOUT_S:.0} seconds, not {seconds:?}"
        ))
    }
}

/// A command template with a check's id put in: `{id}` is the whole id; for a test id
/// `classname::name`, `{classname}` and `{name}` are its two halves (a property id is all
/// `{name}`).
pub fn argv_for(template: &[String], id: &str) -> Vec<String> {
    let (classname, name) = id.rsplit_once("::").unwrap_or(("", id));
    template
        .iter()
        .map(|a| {
            a.replace("{id}", id)
                .replace("{classname}", classname)
                .replace("{name}", name)
        })
        .collect()
}

/// The placeholder of a batched property command: the argument holding it is repeated once
/// per property of the batch, with `{ids}` replaced by the property's id.
pub const IDS: &str = "{ids}";

/// A property command for `ids` (one process): an argument with `{ids}` is repeated once per
/// id; with a single id, `{id}` (and its halves) is put in as [`argv_for`] does.
pub fn property_argv(template: &[String], ids: &[String]) -> Vec<String> {
    batch_argv(template, ids, &[])
}

/// A batched property run's argv with `extra` (the canary's `[canary] in_batch`) right after
/// the arguments `{ids}` gave: one more case of the same run.
pub fn batch_argv(template: &[String], ids: &[String], extra: &[String]) -> Vec<String> {
    let mut argv = Vec::with_capacity(template.len() + ids.len() + extra.len());
    let mut extra = Some(extra);
    for a in template {
        if a.contains(IDS) {
            argv.extend(ids.iter().map(|id| a.replace(IDS, id)));
            argv.extend(extra.take().into_iter().flatten().cloned());
        } else if let [id] = ids {
            argv.extend(argv_for(std::slice::from_ref(a), id));
        } else {
            argv.push(a.clone());
        }
    }
    argv
}

/// Whether a command template runs several properties in one process.
pub fn batched(template: &[String]) -> bool {
    template.iter().any(|a| a.contains(IDS))
}

/// Where a command runs: always a clean room (CONTRACT.md sections 12.2 and 13: the copy of
/// the judged tree, inside the sandbox); nothing of the code under test runs in place.
#[derive(Clone, Copy)]
pub enum Place<'a> {
    Room(&'a Room),
    /// In the room, with this run's own receipt directory writable (and no other run's).
    Receipted(&'a Room, &'a Path),
}

impl<'a> Place<'a> {
    /// The command.
    fn command(self, argv: &[String]) -> std::io::Result<Command> {
        let (room, receipts) = match self {
            Place::Room(room) => (room, None),
            Place::Receipted(room, receipts) => (room, Some(receipts)),
        };
        room.invocation(argv, receipts)
            .map(super::process::Invocation::command)
            .map_err(|e| std::io::Error::other(e.message))
    }

    fn room(self) -> &'a Room {
        match self {
            Place::Room(room) | Place::Receipted(room, _) => room,
        }
    }
}

/// Opens the room for `tree` ([`Room::unprobed`]) and, when bubblewrap seals it, starts
/// `true` in it first: a room bubblewrap cannot make here is 69, saying why, before any check
/// runs in it (the probe is a run like any other: its timeout, its process group).
pub fn open_room(
    config: &super::sandbox::SandboxConfig,
    tree: &str,
    cache: Option<&super::build_cache::BuildCache>,
) -> Result<Room, CliError> {
    let room = Room::unprobed(config, tree, cache)?;
    if room.sealed_by_bubblewrap() {
        let argv = ["true".to_owned()];
        let probe = Run::new("sandbox probe", &argv, PROBE_TIMEOUT, Place::Room(&room))
            .quiet()
            .tail(4096)
            .start()?
            .ran()?;
        if probe.run != Some(0) {
            return Err(room.unsealable(&format!("{}; {}", probe.how, probe.tail)));
        }
        room.say_view();
    }
    Ok(room)
}

/// How long bubblewrap may take to start `true` in a room.
const PROBE_TIMEOUT: Duration = Duration::from_secs(60);

/// The process groups of the runs under way (their leaders' pids): what
/// [`end_leftovers`] never ends. Held while a run starts, so a run just started is never
/// taken for a leftover.
static LIVE: std::sync::Mutex<Vec<i32>> = std::sync::Mutex::new(Vec::new());

fn live() -> std::sync::MutexGuard<'static, Vec<i32>> {
    LIVE.lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// How a process group ended: its status (`None`: timed out), or stopped because its run was
/// cancelled (no longer needed).
enum Ended {
    Exited(Option<ExitStatus>),
    /// Ended by the runner: it went over a cap of its room (CONTRACT.md section 13.3).
    Over(Over),
    Cancelled,
}

/// Runs `argv` in its own process group, at `place`; on timeout the whole group is killed
/// (in the sandbox, its PID namespace with it), so no test runner it spawned outlives it. The
/// command's stdout goes to patchgate's stderr (patchgate's stdout carries its answer only),
/// or both to `log`. A signal caught by [`crate::cli::interrupt`] kills the group at once and
/// ends the run with an `Interrupted` error; `cancel` set kills it and ends it as cancelled.
fn run_group(
    argv: &[String],
    timeout: Duration,
    place: Place<'_>,
    log: Option<std::fs::File>,
    cancel: Option<&std::sync::atomic::AtomicBool>,
) -> std::io::Result<Ended> {
    use std::os::fd::AsFd;
    use std::os::unix::process::CommandExt;
    let (stdout, stderr): (std::process::Stdio, std::process::Stdio) = match log {
        Some(file) => (file.try_clone()?.into(), file.into()),
        None => (
            std::io::stderr().as_fd().try_clone_to_owned()?.into(),
            std::process::Stdio::inherit(),
        ),
    };
    let started = Instant::now();
    let mut command = place.command(argv)?;
    let limits = place.room().limits();
    command
        .stdin(std::process::Stdio::null())
        .stdout(stdout)
        .stderr(stderr)
        .process_group(0);
    let mut child = {
        let mut live = live();
        let child = command.spawn()?;
        live.push(i32::try_from(child.id()).unwrap_or(i32::MAX));
        child
    };
    let leader = i32::try_from(child.id()).unwrap_or(i32::MAX);
    let pgid = nix::unistd::Pid::from_raw(leader);
    // Waited for in slices, so a caught Ctrl-C is seen within one (and a room's caps are
    // watched between them).
    let slice = Duration::from_millis(if limits.is_some() { 50 } else { 100 });
    let mut over = None;
    let status = loop {
        let left = timeout.saturating_sub(started.elapsed());
        if left.is_zero() {
            break None;
        }
        if let Some(status) = wait_timeout::ChildExt::wait_timeout(&mut child, left.min(slice))? {
            break Some(status);
        }
        // The room's caps, watched between slices: over one, the run ends here.
        if let Some(limits) = limits
            && let Some(o) =
                super::sandbox::limits::over(limits, super::sandbox::limits::usage(child.id()))
        {
            over = Some(o);
            break None;
        }
        let cancelled = cancel.is_some_and(|c| c.load(std::sync::atomic::Ordering::SeqCst));
        if crate::cli::interrupt::requested() || cancelled {
            let _ = nix::sys::signal::killpg(pgid, nix::sys::signal::Signal::SIGKILL);
            let _ = child.wait();
            // And whatever left its group: nothing the runner started outlives it.
            ended(leader);
            if crate::cli::interrupt::requested() {
                return Err(std::io::Error::new(
                    std::io::ErrorKind::Interrupted,
                    "interrupted",
                ));
            }
            return Ok(Ended::Cancelled);
        }
    };
    // Whatever the leader did, nothing of its group outlives the run.
    let _ = nix::sys::signal::killpg(pgid, nix::sys::signal::Signal::SIGKILL);
    if status.is_none() {
        let _ = child.wait();
    }
    let left = ended(leader);
    LEFT_BEHIND.fetch_add(left, std::sync::atomic::Ordering::Relaxed);
    if left > 0 {
        super::progress::say(Event::LeftBehind {
            command: argv.first().cloned().unwrap_or_default(),
            count: left,
        });
    }
    // A file over the size rlimit ends its writer with SIGXFSZ (bubblewrap reports it as
    // 128 + the signal when it ended the command itself); a full room filesystem is the run's
    // writes too.
    use std::os::unix::process::ExitStatusExt;
    let room = place.room();
    let xfsz = status.is_some_and(|s| {
        s.signal() == Some(libc::SIGXFSZ) || s.code() == Some(128 + libc::SIGXFSZ)
    });
    if over.is_none() && room.limits().is_some() && (xfsz || room.disk_full()) {
        over = Some(Over::OverDisk);
    }
    Ok(match over {
        Some(o) => Ended::Over(o),
        None => Ended::Exited(status),
    })
}

/// A run whose leader was `leader` ended: when it was the last under way, whatever runs left
/// behind is ended ([`end_leftovers`]; while others run, a process that left its group may
/// be theirs, so the last run to end does it). How many were found.
fn ended(leader: i32) -> usize {
    let mut live = live();
    live.retain(|pid| *pid != leader);
    if live.is_empty() { end_leftovers() } else { 0 }
}

/// How many processes runs left behind so far (each killed): the gate's facts carry it.
static LEFT_BEHIND: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// How many processes the runs of this process left behind, all killed (CONTRACT.md section
/// 11.4).
pub fn left_behind() -> usize {
    LEFT_BEHIND.load(std::sync::atomic::Ordering::Relaxed)
}

/// Kills and reaps every process a finished run left behind (CONTRACT.md section 11.4): with
/// the runner their subreaper ([`crate::cli::sandbox::harden_runner`]), a daemon that left
/// the run's process group with `setsid`, or double-forked, is re-parented to the runner when
/// its parent dies, and found here as its child. Repeated until none is left (killing one may
/// orphan its own children). How many were found, bubblewrap's own processes not counted: when
/// the sandbox's outer process exits, its inner ones (dying with it) pass through the runner.
pub fn end_leftovers() -> usize {
    use nix::sys::wait::{WaitPidFlag, waitpid};
    let me = std::process::id();
    // The runner's own helpers (git, making a copy meanwhile) are in its process group; what a
    // run started is in the run's group, or left it.
    let own_group = nix::unistd::getpgrp().as_raw();
    let mut ended = 0;
    for _ in 0..64 {
        let children: Vec<(i32, String)> = children_of(me)
            .into_iter()
            .filter(|(pid, _)| {
                nix::unistd::getpgid(Some(nix::unistd::Pid::from_raw(*pid)))
                    .map_or(true, |g| g.as_raw() != own_group)
            })
            .collect();
        if children.is_empty() {
            break;
        }
        for (pid, command) in children {
            let pid = nix::unistd::Pid::from_raw(pid);
            let _ = nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGKILL);
            let _ = waitpid(pid, Some(WaitPidFlag::empty()));
            if command != "bwrap" {
                ended += 1;
            }
        }
    }
    // (Exited ones, unreaped, were among the children: reaped above. Never `waitpid(-1)`:
    // it would reap a helper another thread is waiting for.)
    ended
}

/// The processes whose parent is `parent`, and their command names, from `/proc` (zombies
/// included: they are reaped).
fn children_of(parent: u32) -> Vec<(i32, String)> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter_map(|e| {
            let pid: i32 = e.file_name().to_str()?.parse().ok()?;
            let stat = std::fs::read_to_string(e.path().join("stat")).ok()?;
            // `PID (COMM) STATE PPID ...`: the command may hold spaces and parentheses.
            let (head, tail) = stat.rsplit_once(')')?;
            let ppid: u32 = tail.split_whitespace().nth(1)?.parse().ok()?;
            let command = head.split_once('(')?.1.to_owned();
            (ppid == parent).then_some((pid, command))
        })
        .collect()
}

/// How a tier's command ended, for people: `exit 0`, `exit 137, as signal 9 would end it` (in
/// the room; bubblewrap reports a signal so), `killed by signal 9`, or `timed out after 120 s`.
pub fn describe(status: Option<ExitStatus>, timeout_s: f64) -> String {
    use std::os::unix::process::ExitStatusExt;
    match status {
        None => format!("timed out after {timeout_s:.0} s"),
        Some(s) => match (s.code(), s.signal()) {
            // bubblewrap ends with 128 + the signal that ended its command, as a shell says it.
            (Some(c), _) if (129..=128 + 64).contains(&c) => {
                format!("exit {c}, as signal {} would end it", c - 128)
            }
            (Some(c), _) => format!("exit {c}"),
            (None, Some(sig)) => format!("killed by signal {sig}"),
            (None, None) => "ended without an exit code".to_owned(),
        },
    }
}

/// The placeholder a command template writes its JUnit report to (CONTRACT.md section 11.1).
pub const JUNIT: &str = "{junit}";

/// Whether a command template asks for a receipt.
pub fn receipted(template: &[String]) -> bool {
    template.iter().any(|a| a.contains(JUNIT))
}

/// What a run's receipt was: its report, or why none could be read.
/// Where a command runs pytest as a module (`python [flags] -m pytest ...`): the index of its
/// `-m`. `None` when it does not.
pub fn pytest_module_at(argv: &[String]) -> Option<usize> {
    argv.windows(2).position(|w| {
        w.first().is_some_and(|a| a == "-m") && w.get(1).is_some_and(|b| b == "pytest")
    })
}

pub type ReceiptRead = Result<super::junit::Report, String>;

/// How one run ended: its run outcome (`None` when killed by its timeout or a signal, or
/// when it could not start: a broken harness), in words for people, the seconds it took, its
/// receipt (`None`: receipts off) and, when asked for, the last lines of its output.
pub struct Ran {
    pub run: RunOutcome,
    pub how: String,
    pub seconds: f64,
    pub receipt: Option<ReceiptRead>,
    pub tail: String,
    /// The cap it went over, if the room ended it (its `run` is then `None`).
    pub over: Option<Over>,
    /// Where its receipt was to be written (outside the copy), with receipts on: what else
    /// the run writes beside it (`{junit}.observe.json`) is read from there.
    pub receipt_at: Option<PathBuf>,
}

/// Every run a room ended over a cap so far, by label: the gate's facts carry them.
static OVER: std::sync::Mutex<Vec<(String, Over)>> = std::sync::Mutex::new(Vec::new());

/// The runs of this process the room ended over a cap (CONTRACT.md section 13.3), by label.
pub fn over_limits() -> Vec<(String, Over)> {
    OVER.lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .clone()
}

/// A run ended: it ran, or it was stopped because its gate no longer needed it (no run at
/// all, nothing to report).
pub enum Outcome {
    Ran(Ran),
    Cancelled,
}

/// One command to run: the one way the gate, the ladder, admission, the census and `warm`
/// start a command. Built with [`Run::new`], set with the methods below, started with
/// [`Run::start`]:
///
/// - in its own process group with its timeout, the whole group killed when it ends;
/// - at its place (here, or in a clean room's sandbox);
/// - with `{junit}` in the command (in a room), at a fresh path outside the copy, only that
///   directory writable, and the report it wrote read as its receipt;
/// - stopped as soon as `cancel` is set ([`Outcome::Cancelled`]);
/// - its output kept, and its last `tail` bytes (whole lines) given, when asked;
/// - said on stderr under its label, unless quiet.
///
/// A caught Ctrl-C (SIGINT, SIGTERM, SIGHUP) kills the run's group and is the error (130).
pub struct Run<'a> {
    label: &'a str,
    argv: &'a [String],
    timeout: Duration,
    place: Place<'a>,
    cancel: Option<&'a std::sync::atomic::AtomicBool>,
    tail: Option<usize>,
    quiet: bool,
    output: Option<&'a std::fs::File>,
    /// A run that must fail (the canary, a re-proof): its output is headed so.
    must_fail: bool,
}

impl<'a> Run<'a> {
    pub fn new(label: &'a str, argv: &'a [String], timeout: Duration, place: Place<'a>) -> Self {
        Self {
            label,
            argv,
            timeout,
            place,
            cancel: None,
            tail: None,
            quiet: false,
            output: None,
            must_fail: false,
        }
    }

    /// A run that must fail (the canary, a re-proof): its echoed output is headed by a line
    /// that says so, so a test tool's "error: test failed" reads as the checker working.
    pub fn must_fail(mut self) -> Self {
        self.must_fail = true;
        self
    }

    /// Its output appended to `log` instead of said on stderr (`patchgate admit` keeps the
    /// test output in a log file; `--verbose` shows it).
    pub fn output_to(mut self, log: &'a std::fs::File) -> Self {
        self.output = Some(log);
        self
    }

    /// Stopped (killed, [`Outcome::Cancelled`]) as soon as `flag` is set: a run started before
    /// the gate knew whether it needs it.
    pub fn cancel(mut self, flag: &'a std::sync::atomic::AtomicBool) -> Self {
        self.cancel = Some(flag);
        self
    }

    /// Its output captured (and echoed to stderr when it ends), its last `max_bytes` (whole
    /// lines) given as [`Ran::tail`].
    pub fn tail(mut self, max_bytes: usize) -> Self {
        self.tail = Some(max_bytes);
        self
    }

    /// Not said on stderr when it ends (the caller says it in its own words).
    pub fn quiet(mut self) -> Self {
        self.quiet = true;
        self
    }

    pub fn start(self) -> Result<Outcome, CliError> {
        let room = self.place.room();
        if !receipted(self.argv) {
            return self.run(self.argv, self.place, None);
        }
        let path = room.fresh_receipt()?;
        let dir = path.parent().unwrap_or(&path).to_path_buf();
        let inside = room.receipt_inside(&path);
        let shown = inside.to_string_lossy();
        let argv: Vec<String> = self.argv.iter().map(|a| a.replace(JUNIT, &shown)).collect();
        self.run(&argv, Place::Receipted(room, &dir), Some(&path))
    }

    fn run(
        &self,
        argv: &[String],
        place: Place<'_>,
        receipt: Option<&Path>,
    ) -> Result<Outcome, CliError> {
        // A room's run is the patch's code: its output is kept (in the room, on its capped
        // filesystem) and echoed when it ends, redacted and fenced (CONTRACT.md section 13.5),
        // never streamed to the CI log as it comes.
        let room = Some(place.room()).filter(|r| r.limits().is_some());
        let mut log = match (self.tail, room, self.output) {
            (Some(_), _, _) | (None, Some(_), None) => Some(
                room.map_or_else(tempfile::tempfile, |r| r.log_file())
                    .map_err(|e| CliError::software(format!("cannot make a log file: {e}")))?,
            ),
            _ => None,
        };
        let handle = match log.as_ref().or(self.output) {
            Some(file) => Some(
                file.try_clone()
                    .map_err(|e| CliError::software(format!("cannot make a log file: {e}")))?,
            ),
            None => None,
        };
        let started = Instant::now();
        let mut over = None;
        let (run, how) = match run_group(argv, self.timeout, place, handle, self.cancel) {
            Ok(Ended::Cancelled) => return Ok(Outcome::Cancelled),
            Ok(Ended::Over(o)) => {
                over = Some(o);
                let limits = place.room().limits();
                (
                    None,
                    format!(
                        "{}: ended by the room, over its cap{}",
                        <&str>::from(o),
                        limits.map_or(String::new(), |l| match o {
                            Over::OverMemory => format!(" of {} MiB", l.memory_mib),
                            Over::OverPids => format!(" of {} processes", l.pids),
                            Over::OverDisk => format!(" of {} MiB written", l.disk_mib),
                        })
                    ),
                )
            }
            Ok(Ended::Exited(status)) => (
                status
                    .and_then(|s| s.code())
                    .and_then(|c| u8::try_from(c).ok()),
                describe(status, self.timeout.as_secs_f64()),
            ),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {
                interrupt::check()?;
                return Err(CliError::new(Exit::Interrupted(2), "interrupted"));
            }
            Err(e) => (
                None,
                format!(
                    "cannot start {:?}: {e}, a broken harness",
                    argv.first().map(String::as_str).unwrap_or_default()
                ),
            ),
        };
        let seconds = started.elapsed().as_secs_f64();
        let tail = match log.as_mut() {
            Some(log) => {
                super::relay::relay(log, room.is_some(), (self.label, self.must_fail), self.tail)
            }
            None => String::new(),
        };
        if !self.quiet {
            super::progress::say(Event::RunEnded {
                label: self.label.to_owned(),
                how: how.clone(),
                seconds,
            });
        }
        let receipt_path = receipt;
        let receipt = receipt.map(|path| {
            let read = open_report(path).and_then(|f| {
                super::junit::read_report(std::io::BufReader::new(f)).map_err(|e| e.to_string())
            });
            if let Err(why) = &read {
                super::progress::say(Event::NoReceipt {
                    label: self.label.to_owned(),
                    why: why.clone(),
                });
            }
            read
        });
        if let Some(o) = over {
            OVER.lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .push((self.label.to_owned(), o));
        }
        Ok(Outcome::Ran(Ran {
            run,
            how,
            seconds,
            receipt,
            tail,
            over,
            receipt_at: receipt_path.map(Path::to_path_buf),
        }))
    }
}

impl Outcome {
    /// The run, for a caller that never cancels it.
    pub fn ran(self) -> Result<Ran, CliError> {
        match self {
            Outcome::Ran(ran) => Ok(ran),
            Outcome::Cancelled => Err(CliError::software("a run nobody cancelled was cancelled")),
        }
    }
}

/// A receipt as the core reads it (`None`: no report read).
/// The canary's run as the core reads it (a gate's, and the census's check on the base).
pub fn canary_run(ran: &Ran, catch: crate::core::runs::CatchCodes) -> crate::core::gate::CanaryRun {
    crate::core::gate::CanaryRun {
        exit_code: ran.run,
        catch_exit_codes: catch,
        receipt: ran.receipt.as_ref().and_then(receipt_of),
        in_runs: Vec::new(),
        twin_of: None,
    }
}

pub fn receipt_of(read: &ReceiptRead) -> Option<crate::core::runs::Receipt> {
    let report = read.as_ref().ok()?;
    Some(crate::core::runs::Receipt {
        executed: report.executed(),
        failed: report.failed.len() as u64,
        skipped: report.skipped(),
        disagrees: report.disagrees.clone().map(crate::core::gate::fit_test_id),
    })
}

/// The census ids whose base outcome is `skip` (issue 64): a case the base's own suite skips
/// (a version-dependent `skipif`) is not a property's, and stays out of its receipt where it is
/// skipped again. Any other skip still makes a run no run (CONTRACT.md section 11.1).
pub type BaseSkips = std::collections::BTreeSet<String>;

/// [`BaseSkips`] of a census (id → outcome word).
pub fn base_skips(census: Option<&std::collections::BTreeMap<String, String>>) -> BaseSkips {
    census
        .into_iter()
        .flatten()
        .filter(|(_, outcome)| outcome.as_str() == "skip")
        .map(|(id, _)| id.clone())
        .collect()
}

/// Property `id`'s part of a receipt: only its own test cases, those `case` (the
/// `[properties] case` template) names with `{id}` put in ([`crate::core::runs::case_of`]);
/// without a `case`, the whole report. A case skipped here that the base skips too
/// (`skips`) is not the property's.
pub fn property_receipt(
    read: &ReceiptRead,
    case: Option<&str>,
    id: &str,
    skips: &BaseSkips,
) -> Option<crate::core::runs::Receipt> {
    let Some(case) = case else {
        return receipt_of(read);
    };
    let report = read.as_ref().ok()?;
    let prefix = case.replace("{id}", id);
    let (mut executed, mut failed, mut skipped) = (0, 0, 0);
    for (case_id, how) in &report.cases {
        if !crate::core::runs::case_of(case_id, &prefix) {
            continue;
        }
        match how {
            super::junit::Case::Passed => executed += 1,
            super::junit::Case::Failed => {
                executed += 1;
                failed += 1;
            }
            super::junit::Case::Skipped if skips.contains(case_id) => {}
            super::junit::Case::Skipped => skipped += 1,
        }
    }
    Some(crate::core::runs::Receipt {
        executed,
        failed,
        skipped,
        disagrees: report.disagrees.clone().map(crate::core::gate::fit_test_id),
    })
}

/// The largest report the runner reads from a run, in bytes.
pub const MAX_REPORT_BYTES: u64 = 64 * 1024 * 1024;

/// Opens a report the code under test wrote, as hostile input (CONTRACT.md section 12.2): not
/// through a symlink (`O_NOFOLLOW`: a report swapped for a link to `/dev/zero` or to a file
/// elsewhere is refused), without blocking (`O_NONBLOCK`: a FIFO never hangs the runner), only
/// a regular file, and at most [`MAX_REPORT_BYTES`] (what is read stops there too, should it
/// grow). The error says what the file is instead.
pub fn open_report(path: &Path) -> Result<std::io::Take<std::fs::File>, String> {
    use std::io::Read;
    use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(path)
        .map_err(|e| match e.raw_os_error() {
            Some(libc::ELOOP) => "it is a symbolic link".to_owned(),
            _ => e.to_string(),
        })?;
    let meta = file.metadata().map_err(|e| e.to_string())?;
    let kind = meta.file_type();
    if !kind.is_file() {
        return Err(format!(
            "it is not a regular file but {}",
            if kind.is_fifo() {
                "a FIFO"
            } else if kind.is_char_device() || kind.is_block_device() {
                "a device"
            } else if kind.is_socket() {
                "a socket"
            } else if kind.is_dir() {
                "a directory"
            } else {
                "something else"
            }
        ));
    }
    if meta.len() > MAX_REPORT_BYTES {
        return Err(format!(
            "it holds {} bytes, more than the {MAX_REPORT_BYTES} a report may",
            meta.len()
        ));
    }
    Ok(file.take(MAX_REPORT_BYTES))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 64, by hand: a property module whose one case the base's suite skips (a
    /// version-dependent `skipif`) is admitted on its other cases; a skip the base did not
    /// have still counts, and so does a case of another module.
    #[test]
    fn a_case_the_base_skips_is_not_the_property_s() {
        let xml = r#"<testsuites><testsuite name="pytest" tests="4" failures="0" errors="0" skipped="2">
<testcase classname="tests.test_funcs.TestEvolve" name="test_keeps"/>
<testcase classname="tests.test_funcs.TestEvolve" name="test_py313"><skipped message="requires Python 3.13+"/></testcase>
<testcase classname="tests.test_funcs.TestEvolve" name="test_new_skip"><skipped message="skip"/></testcase>
<testcase classname="tests.test_other" name="test_x"><skipped message="skip"/></testcase>
</testsuite></testsuites>"#;
        let read: ReceiptRead =
            super::super::junit::read_report(xml.as_bytes()).map_err(|e| e.to_string());
        let case = Some("tests.test_funcs.TestEvolve");
        let census = std::collections::BTreeMap::from([
            (
                "tests.test_funcs.TestEvolve::test_keeps".to_owned(),
                "pass".to_owned(),
            ),
            (
                "tests.test_funcs.TestEvolve::test_py313".to_owned(),
                "skip".to_owned(),
            ),
            (
                "tests.test_funcs.TestEvolve::test_new_skip".to_owned(),
                "pass".to_owned(),
            ),
        ]);
        let skips = base_skips(Some(&census));
        assert_eq!(
            skips.iter().collect::<Vec<_>>(),
            ["tests.test_funcs.TestEvolve::test_py313"]
        );
        let r = property_receipt(&read, case, "", &skips).unwrap();
        // test_keeps ran; test_py313 is the base's skip, left out; test_new_skip still counts.
        assert_eq!((r.executed, r.failed, r.skipped), (1, 0, 1));
        let r = property_receipt(&read, case, "", &BaseSkips::new()).unwrap();
        assert_eq!((r.executed, r.failed, r.skipped), (1, 0, 2));
    }
}
