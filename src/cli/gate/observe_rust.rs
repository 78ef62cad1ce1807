//! The observe step for Rust (issue 52; docs/design/observe.md, O.3): the suite's first run
//! with probes compiled into the changed `.rs` files ([`crate::cli::rewriting::rust_probes`]).
//! The probed text is written into the run's copy just before the run (cargo rebuilds what it
//! touches), and the judged text put back as soon as it ends, before the copy is checked:
//! a file the run itself changed is left as the run left it, for the check to find. The
//! probes write `number<TAB>thread` to the file an environment variable of a name drawn per
//! gate names (beside the run's receipt, outside the copy); libtest runs each test on a thread
//! named after it, and the receipt's cases turn a thread's name into the test's id.
//!
//! Why probes and not `-C instrument-coverage`: changing `RUSTFLAGS` rebuilds every dependency
//! (cargo's fingerprint holds the flags), and LLVM's counters are per process, not per test
//! (libtest runs the tests of a binary as threads of one process): cargo-llvm-cov has no
//! per-test report. A probe costs the rebuild of the crates a change touches, which any run of
//! the patch pays once.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use super::super::error::CliError;
use super::super::progress::{self, Event};
use super::super::rewriting::patch_mutants::{self, PatchMutant};
use super::super::rewriting::rust_probes::{self, Site};
use super::super::rewriting::rust_schemata;
use super::super::sandbox::Room;
use super::gather::Gathered;
use super::observe::{FileCoverage, Report};
use crate::core::gate::MutantOperator;

pub(super) use super::rust_probed::{RustProbes, Switches};

/// Where the probes write: beside the run's receipt (`{junit}` + this).
const HITS_SUFFIX: &str = ".observe.tsv";

/// The largest probed file, and the most of the hits file read.
const MAX_FILE_BYTES: u64 = 4 << 20;
const MAX_HITS_BYTES: u64 = 16 << 20;

/// What a patch mutant's run needs of the observed run's build: a copy of the room as that
/// run left it (the switched text in, built), the variable and each mutant's value.
pub(super) struct Built {
    /// The observed run's room as it left it (the switched text in, built); `None` when the
    /// build step built it, and every room forked since holds that build.
    room: Option<Room>,
    /// Held to read while a run's copy is made of `room`; the last run holds it to write,
    /// and runs in `room` itself (nothing runs there after it).
    copying: std::sync::RwLock<()>,
    /// The switched mutants' runs still to start ([`Built::expect`]); `usize::MAX` once the
    /// last one ran in `room` (it is spent).
    left: std::sync::atomic::AtomicUsize,
    /// The probes' variable (a mutant's run carries it too, as the observed run does).
    probes: String,
    var: String,
    mutants: Vec<(String, u32, MutantOperator, u32)>,
}

impl Built {
    /// The suite command `argv` of a mutant's run in `room` (a fork of [`Self::room`]) with
    /// the mutant on; `None` when the mutant was not switched in (it is built on its own).
    pub fn argv(
        &self,
        file: &str,
        line: u32,
        operator: MutantOperator,
        argv: &[String],
    ) -> Option<Vec<String>> {
        let (.., value) = self
            .mutants
            .iter()
            .find(|(f, l, o, _)| f == file && *l == line && *o == operator)?;
        // Every variable the observed run carried, the switch's value aside.
        let mut out = vec![
            "env".to_owned(),
            format!("{}={}{HITS_SUFFIX}", self.probes, crate::cli::runner::JUNIT),
            format!("{}={value}", self.var),
        ];
        out.extend(argv.iter().cloned());
        Some(out)
    }

    /// Whether the mutant is switched in.
    pub fn holds(&self, file: &str, line: u32, operator: MutantOperator) -> bool {
        self.argv(file, line, operator, &[]).is_some()
    }

    /// The number of switched mutants' runs about to start.
    pub fn expect(&self, runs: usize) {
        use std::sync::atomic::Ordering::SeqCst;
        let _ = self
            .left
            .fetch_update(SeqCst, SeqCst, |l| (l != usize::MAX).then_some(runs));
    }

    /// `run` in a copy of the observed run's build: a fork of it, or, for the last of the runs
    /// [`Built::expect`] said, the copy itself, once every other run's fork is made; a fork of
    /// `from` (the room the observed run ran in) when the build step built the switches. `None`
    /// once that copy is spent (the mutant is then built on its own).
    pub fn in_room<T>(
        &self,
        (label, from): (&str, &Room),
        run: impl FnOnce(&Room) -> Result<T, CliError>,
    ) -> Option<Result<T, CliError>> {
        use std::sync::atomic::Ordering::SeqCst;
        let Some(own) = &self.room else {
            return Some(from.fork(label).and_then(|room| run(&room)));
        };
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
            let room = match own.fork(label) {
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
        Some(run(own))
    }
}

/// Probes the changed `.rs` files of `g` in `room`'s copy; `None` when there are none. With
/// patch mutants asked for, every mutant of the changed lines a switch can hold is compiled in
/// behind its switch beside the probes.
pub(super) fn instrument(g: &Gathered, room: &Room) -> Result<Option<RustProbes>, CliError> {
    let rust: Vec<(&String, &BTreeSet<u32>)> = g
        .watched
        .files
        .iter()
        .filter(|(f, _)| f.ends_with(".rs"))
        .collect();
    if rust.is_empty() {
        return Ok(None);
    }
    let seed = g.facts.configured.as_ref().map_or(0, |c| c.seed);
    let mut p = RustProbes {
        name: format!("{}__", super::twin::drawn(seed, "__patchgate", "observe")),
        ..RustProbes::default()
    };
    let wanted = g.watched.config.is_some_and(|c| c.mutants > 0)
        && !g.switches_refused.load(std::sync::atomic::Ordering::SeqCst);
    let mut switches = wanted.then(|| Switches {
        var: format!("{}__", super::twin::drawn(seed, "__patchgate", "switch")),
        none: drawn_value(seed),
        mutants: Vec::new(),
    });
    // The next switch's value (each mutant's is this gate's own).
    let mut next = switches.as_ref().map_or(0, |s| s.none + 7);
    for (file, lines) in rust {
        let path = room.tree.join(file);
        let text = match read_capped(&path, MAX_FILE_BYTES) {
            Some(t) => t,
            None => {
                p.unprobed.insert(file.clone(), lines.clone());
                continue;
            }
        };
        let first = u32::try_from(p.sites.len()).unwrap_or(u32::MAX);
        let candidates: Vec<PatchMutant> = match &switches {
            Some(_) => patch_mutants::rust(&text, lines),
            None => Vec::new(),
        };
        let mut switched = Vec::new();
        let probed = match &mut switches {
            Some(sw) if !candidates.is_empty() => {
                let valued: Vec<(u32, &PatchMutant)> = candidates
                    .iter()
                    .map(|m| {
                        next = next.saturating_add(7);
                        (next, m)
                    })
                    .collect();
                let var = sw.var.clone();
                let probed = rust_probes::probe_with(&text, lines, &p.name, first, |root| {
                    let (edits, s) = rust_schemata::edits(&text, root, &var, &valued);
                    switched = s
                        .into_iter()
                        .filter_map(|(i, v)| valued.get(i).map(|(_, m)| (*m, v)))
                        .map(|(m, v)| (file.clone(), m.line, m.operator, v))
                        .collect();
                    (edits, Some(rust_schemata::definition(&var, &var)))
                });
                if !switched.is_empty()
                    && let Some(plain) = rust_probes::probe(&text, lines, &p.name, first)
                {
                    p.alone.push((file.clone(), plain.text));
                }
                probed
            }
            _ => rust_probes::probe(&text, lines, &p.name, first),
        };
        let Some(probed) = probed else {
            // Not parsed: its changed lines are code never known to run.
            p.unprobed.insert(file.clone(), lines.clone());
            continue;
        };
        if let Some(sw) = &mut switches {
            sw.mutants.extend(switched);
        }
        p.unprobed
            .entry(file.clone())
            .or_default()
            .extend(probed.unprobed);
        if probed.sites.is_empty() && probed.text == text {
            continue;
        }
        p.sites
            .extend(probed.sites.into_iter().map(|s| (file.clone(), s)));
        std::fs::write(&path, &probed.text)
            .map_err(|e| CliError::software(format!("cannot write {}: {e}", path.display())))?;
        p.written.push((file.clone(), text, probed.text));
    }
    room.settle()?;
    p.switches = switches.filter(|s| !s.mutants.is_empty());
    if let Some(sw) = &p.switches {
        progress::say(Event::Plan(format!(
            "observe: {} patch mutant(s) of the changed lines compiled into the observed run's build beside the probes, each behind a switch: a mutant's run rebuilds nothing",
            sw.mutants.len()
        )));
    }
    Ok(Some(p))
}

/// The probes and patch mutant switches written into `g`'s room for the build step to build
/// (issue 68), when the suite's first run will be Rust's observed run; `None` otherwise.
pub(super) fn for_build(g: &Gathered) -> Result<Option<RustProbes>, CliError> {
    let python = super::observe::observed_argv(
        &g.config.suite.command,
        &g.watched.files,
        super::plain_replay::record(g),
    );
    match g.watched.unread().is_some() && !g.watched.files.is_empty() && python.is_none() {
        true => instrument(g, &g.room),
        false => Ok(None),
    }
}

/// The value a run carries when no mutant is on: drawn per gate, as the variable's name is.
fn drawn_value(seed: u64) -> u32 {
    let drawn = super::twin::drawn(seed, "v", "switch-values");
    let low = drawn
        .rsplit('_')
        .next()
        .and_then(|h| u32::from_str_radix(h, 16).ok())
        .unwrap_or(0);
    1_000 + (low & 0xf_ffff) * 64
}

/// At most `max` bytes of the file at `path`, `None` when it is longer or unreadable (or not a
/// plain file: the copy's file is the patch's).
fn read_capped(path: &Path, max: u64) -> Option<Vec<u8>> {
    let meta = std::fs::symlink_metadata(path).ok()?;
    if !meta.is_file() || meta.len() > max {
        return None;
    }
    std::fs::read(path).ok()
}

impl RustProbes {
    /// The suite command `argv` as the observed run: the same command, with the probes'
    /// variable naming the hits file beside the receipt.
    pub fn argv(&self, argv: &[String]) -> Vec<String> {
        let mut out = vec![
            "env".to_owned(),
            format!("{}={}{HITS_SUFFIX}", self.name, crate::cli::runner::JUNIT),
        ];
        if let Some(sw) = &self.switches {
            out.push(format!("{}={}", sw.var, sw.none));
        }
        out.extend(argv.iter().cloned());
        out
    }

    /// A copy of `room` as the observed run left it (the switched text in, built), for the
    /// mutants' runs: `None` when no mutant was switched in.
    pub fn built(&self, room: &Room) -> Result<Option<Built>, CliError> {
        let Some(sw) = self.switches.as_ref().filter(|_| !self.fell_back()) else {
            return Ok(None);
        };
        Ok(Some(Built {
            room: match self.prebuilt {
                true => None,
                false => Some(room.fork("the patch mutants' build")?),
            },
            copying: std::sync::RwLock::new(()),
            left: std::sync::atomic::AtomicUsize::new(0),
            probes: self.name.clone(),
            var: sw.var.clone(),
            mutants: sw.mutants.clone(),
        }))
    }

    /// Whether a run with switches in is to be made again with the probes alone: the
    /// switched text is the observed run's only where it passed (a failure is never the
    /// switches': the run that judges it is the probes' alone, as before issue 68).
    pub fn switched(&self) -> bool {
        self.switches.is_some() && !self.fell_back() && !self.prebuilt
    }

    /// After the build step built the probed (and switched) text in `room`: the judged text
    /// put back with the probed file's modification time, which the build's fingerprints are
    /// newer than, so cargo rebuilds none of it for any run that starts from this room (a run
    /// that writes the file, a re-proof's mutant, makes it newer, and it is rebuilt). Every run
    /// then runs the one build: with no variable set, the probes write nothing and every switch
    /// is off, which is the judged code.
    pub fn keep_built(mut self, room: &Room) -> Result<Self, CliError> {
        for (file, judged, probed) in &self.written {
            let path = room.tree.join(file);
            let meta = std::fs::metadata(&path);
            if read_capped(&path, MAX_FILE_BYTES).as_deref() != Some(probed.as_slice()) {
                continue;
            }
            let failed = |e: std::io::Error| {
                CliError::software(format!("cannot write {}: {e}", path.display()))
            };
            let built_at = meta.and_then(|m| m.modified()).map_err(failed)?;
            std::fs::write(&path, judged).map_err(failed)?;
            std::fs::File::options()
                .write(true)
                .open(&path)
                .and_then(|f| f.set_modified(built_at))
                .map_err(failed)?;
        }
        room.settle()?;
        self.prebuilt = true;
        Ok(self)
    }

    fn fell_back(&self) -> bool {
        self.fell_back.load(std::sync::atomic::Ordering::SeqCst)
    }

    /// The probes alone written in `room` where the switched text still is: each patch mutant
    /// is then built on its own.
    pub fn fall_back(&self, room: &Room) -> Result<(), CliError> {
        self.fell_back
            .store(true, std::sync::atomic::Ordering::SeqCst);
        progress::say(Event::Plan(
            "observe: the run with the patch mutants switched in did not pass; it is made again with the probes alone (each patch mutant then built on its own)".to_owned(),
        ));
        for (file, alone) in &self.alone {
            let path = room.tree.join(file);
            let switched = self.written.iter().find(|w| &w.0 == file).map(|w| &w.2);
            if read_capped(&path, MAX_FILE_BYTES).as_ref() == switched {
                std::fs::write(&path, alone).map_err(|e| {
                    CliError::software(format!("cannot write {}: {e}", path.display()))
                })?;
            }
        }
        room.settle()
    }

    /// Puts the judged text back where the probed text still is (before the copy is checked:
    /// a file the run changed stays as it left it, for the check to find).
    pub fn restore(&self, room: &Room) -> Result<(), CliError> {
        for (file, judged, probed) in &self.written {
            let path = room.tree.join(file);
            let now = read_capped(&path, MAX_FILE_BYTES);
            let alone = self.alone.iter().find(|a| &a.0 == file).map(|a| &a.1);
            if now.as_deref() == Some(probed.as_slice()) || (now.is_some() && now.as_ref() == alone)
            {
                std::fs::write(&path, judged).map_err(|e| {
                    CliError::software(format!("cannot write {}: {e}", path.display()))
                })?;
            }
        }
        room.settle()
    }

    /// The observed run's report, from the hits beside the receipt at `receipt` and the
    /// receipt's test cases `cases`: `None` without a receipt (nothing is known to have run).
    pub fn report(&self, receipt: Option<&Path>, cases: &[String]) -> Option<Report> {
        let receipt = receipt?;
        let mut path = receipt.as_os_str().to_owned();
        path.push(HITS_SUFFIX);
        // No file: no probe was reached.
        let text = read_hits(Path::new(&path)).unwrap_or_default();
        Some(self.report_of(&text, cases))
    }

    /// [`Self::report`] from the hits' text.
    fn report_of(&self, hits: &str, cases: &[String]) -> Report {
        let mut reached: BTreeMap<usize, BTreeSet<String>> = BTreeMap::new();
        for line in hits.lines() {
            let mut fields = line.splitn(3, '\t');
            let (Some(n), Some(exe), Some(thread)) = (fields.next(), fields.next(), fields.next())
            else {
                continue;
            };
            let Some(n) = n.parse::<usize>().ok().filter(|n| *n < self.sites.len()) else {
                continue;
            };
            let tests = tests_of(exe, thread, cases);
            let entry = reached.entry(n).or_default();
            if tests.is_empty() {
                // A thread no test is named after: code run, by no check.
                entry.insert(String::new());
            }
            entry.extend(tests);
        }
        let mut report = Report::default();
        for (file, lines) in &self.unprobed {
            let f = report.files.entry(file.clone()).or_default();
            f.missing_lines.extend(lines);
        }
        for (n, (file, site)) in self.sites.iter().enumerate() {
            let f: &mut FileCoverage = report.files.entry(file.clone()).or_default();
            let by = reached.get(&n);
            match site {
                Site::Lines(lines) => {
                    for l in lines {
                        match by {
                            Some(tests) => {
                                f.executed_lines.insert(*l);
                                f.contexts
                                    .entry(l.to_string())
                                    .or_default()
                                    .extend(tests.iter().cloned());
                            }
                            None => {
                                f.missing_lines.insert(*l);
                            }
                        }
                    }
                }
                Site::Branch { from, to } if by.is_none() => {
                    f.missing_branches.push((i64::from(*from), i64::from(*to)));
                }
                Site::Branch { .. } => {}
            }
        }
        for f in report.files.values_mut() {
            let ran = f.executed_lines.clone();
            f.missing_lines.retain(|l| !ran.contains(l));
        }
        report
    }
}

/// The hits file, at most [`MAX_HITS_BYTES`] of it, as text (`None`: none was written).
fn read_hits(path: &Path) -> Option<String> {
    use std::io::Read;
    let file = crate::cli::runner::open_report(path).ok()?;
    let mut bytes = Vec::new();
    file.take(MAX_HITS_BYTES).read_to_end(&mut bytes).ok()?;
    Some(String::from_utf8_lossy(&bytes).into_owned())
}

/// The receipt's test ids a libtest thread's name `thread` in the test binary `exe` (its file
/// name) is: libtest's JUnit writes a unit test `a::b::t` as `a::b::t`, a top-level one as
/// `crate::t`, an integration test `t` (or `m::t`) as `integration::t` (or `integration::m::t`),
/// and the starter's runner tag puts the binary's name for `integration` (`pinned::t`): a
/// tagged id is the thread's only in its own binary.
fn tests_of(exe: &str, thread: &str, cases: &[String]) -> Vec<String> {
    if thread.is_empty() {
        return Vec::new();
    }
    let binary = crate::cli::junit::binary_name(exe);
    cases
        .iter()
        .filter(|id| {
            id.as_str() == thread
                || id.split_once("::").is_some_and(|(c, rest)| {
                    rest == thread
                        && (c == "integration" || c == "crate" || Some(c) == binary.as_deref())
                })
        })
        .cloned()
        .collect()
}

/// The suite command `argv` as a Rust patch mutant's run: libtest's own selection (`--exact`
/// and each test's name, as its thread was named) after it, as `[suite] deselect`'s arguments
/// go; the mutant is written into the copy (cargo compiles files). `None` when there is no
/// test to keep.
pub(super) fn selecting_argv(
    argv: &[String],
    checks: &[String],
    _written: (&str, &crate::cli::rewriting::patch_mutants::PatchMutant),
) -> Option<Vec<String>> {
    let mut names: BTreeSet<&str> = BTreeSet::new();
    for c in checks {
        if c.as_str() == super::observe::IMPORT || c.starts_with('-') {
            continue;
        }
        names.insert(c);
        if let Some((_, rest)) = c.split_once("::") {
            names.insert(rest);
        }
    }
    if names.is_empty() {
        return None;
    }
    let mut out = argv.to_vec();
    out.push("--exact".to_owned());
    out.extend(names.into_iter().map(str::to_owned));
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Hits become the report the reader reads: each statement's lines run by the tests whose
    /// threads reached it (a tagged id only in its own binary), a thread no test is named after
    /// as no test, an untaken way out.
    #[test]
    fn hits_become_the_report() {
        let p = RustProbes {
            name: "p".to_owned(),
            sites: vec![
                ("src/lib.rs".to_owned(), Site::Lines(vec![3, 4])),
                ("src/lib.rs".to_owned(), Site::Lines(vec![6])),
                ("src/lib.rs".to_owned(), Site::Lines(vec![8])),
                ("src/lib.rs".to_owned(), Site::Branch { from: 3, to: 6 }),
                ("src/lib.rs".to_owned(), Site::Branch { from: 3, to: 0 }),
            ],
            unprobed: BTreeMap::from([("src/c.rs".to_owned(), BTreeSet::from([2]))]),
            ..RustProbes::default()
        };
        let cases = [
            "tests::a",
            "integration::top",
            "integration::m::inner",
            "pinned::same",
            "cases::same",
        ]
        .map(String::from);
        let hits = "0\tlib-0123456789abcdef\ttests::a\n0\tit-0123456789abcdef\ttop\n\
                    1\tit\tm::inner\n1\tcases-0123456789abcdef\tsame\n2\tlib\tworker\n\
                    3\tlib\ttests::a\n99\tlib\tx\nnonsense\n";
        let r = p.report_of(hits, &cases);
        let f = &r.files["src/lib.rs"];
        assert_eq!(f.executed_lines, BTreeSet::from([3, 4, 6, 8]));
        assert!(f.missing_lines.is_empty());
        assert_eq!(f.contexts["3"], ["integration::top", "tests::a"]);
        // `same` ran in the `cases` binary, not in `pinned`.
        assert_eq!(f.contexts["6"], ["cases::same", "integration::m::inner"]);
        assert_eq!(f.contexts["8"], [""]);
        assert_eq!(f.missing_branches, [(3, 0)]);
        assert_eq!(r.files["src/c.rs"].missing_lines, BTreeSet::from([2]));
    }

    /// A mutant's run keeps the suite's command and selects its tests by libtest's names.
    #[test]
    fn a_rust_mutant_selects_its_tests() {
        let argv = ["sh", "-c", "x", "sh", "{junit}"].map(String::from);
        let checks = ["tests::a", "integration::top", "(import)"].map(String::from);
        let m = crate::cli::rewriting::patch_mutants::PatchMutant {
            line: 1,
            operator: crate::core::gate::MutantOperator::DeleteStatement,
            start: 0,
            end: 1,
            replacement: String::new(),
        };
        let out = selecting_argv(&argv, &checks, ("src/lib.rs", &m)).unwrap();
        assert_eq!(
            out[5..],
            ["--exact", "a", "integration::top", "tests::a", "top"]
        );
        assert!(selecting_argv(&argv, &["(import)".to_owned()], ("src/lib.rs", &m)).is_none());
    }
}
