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

/// What a patch mutant's run needs of the build the build step made with the mutants switched
/// in: the variables the observed run carried and each mutant's value.
pub(super) struct Built {
    /// The probes' variable (a mutant's run carries it too, as the observed run does).
    probes: String,
    var: String,
    decoy: u32,
    mutants: Vec<(String, u32, MutantOperator, u32)>,
}

impl Built {
    /// The suite command `argv` of a mutant's run with the mutant on; `None` when the mutant
    /// was not switched in (it is built on its own).
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
        Some(self.with_value(*value, argv))
    }

    /// The same command as [`Built::argv`] gives, its switch's value one that turns no mutant
    /// on: the decoy's run.
    pub fn decoy_argv(&self, argv: &[String]) -> Vec<String> {
        self.with_value(self.decoy, argv)
    }

    fn with_value(&self, value: u32, argv: &[String]) -> Vec<String> {
        // Every variable the observed run carried, the switch's value aside.
        let mut out = vec![
            "env".to_owned(),
            format!("{}={}{HITS_SUFFIX}", self.probes, crate::cli::runner::JUNIT),
            format!("{}={value}", self.var),
        ];
        out.extend(argv.iter().cloned());
        out
    }
}

/// Probes the changed `.rs` files of `g` in `room`'s copy; `None` when there are none. For the
/// build step (`switched`) with patch mutants asked for, every mutant of the changed lines a
/// switch can hold is compiled in behind its switch beside the probes. (Without a build step
/// each mutant is built on its own: the build the observed run makes is in the room it ran
/// in, beside whatever it wrote, and a mutant's run starts from a room no run touched.)
pub(super) fn instrument(
    g: &Gathered,
    room: &Room,
    switched: bool,
) -> Result<Option<RustProbes>, CliError> {
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
    let wanted = switched
        && g.watched.config.is_some_and(|c| c.mutants > 0)
        && !g.switches_refused.load(std::sync::atomic::Ordering::SeqCst);
    // Every switch's value, and the one that turns none on, drawn alike.
    let mut values = Values::new(seed);
    let mut switches = wanted.then(|| Switches {
        var: format!("{}__", super::twin::drawn(seed, "__patchgate", "switch")),
        none: values.next(),
        decoy: values.next(),
        mutants: Vec::new(),
    });
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
                let valued: Vec<(u32, &PatchMutant)> =
                    candidates.iter().map(|m| (values.next(), m)).collect();
                let var = sw.var.clone();
                rust_probes::probe_with(&text, lines, &p.name, first, |root| {
                    let (edits, s) = rust_schemata::edits(&text, root, &var, &valued);
                    switched = s
                        .into_iter()
                        .filter_map(|(i, v)| valued.get(i).map(|(_, m)| (*m, v)))
                        .map(|(m, v)| (file.clone(), m.line, m.operator, v))
                        .collect();
                    (edits, Some(rust_schemata::definition(&var, &var)))
                })
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
        true => instrument(g, &g.room, true),
        false => Ok(None),
    }
}

/// The values the switches of one gate take, the one that turns none on among them: each
/// drawn from the gate's seed alone, independently, distinct and never 0 (what the switch
/// reads where its variable is unset), so that no value's size, residue or distance from
/// another tells whether it turns a mutant on. (Issue 68's first draw spaced them 7 apart
/// above a multiple of 64: code that read its run's value could tell the observed run from
/// a mutant's by its residue alone, and fail every mutant's run on purpose.)
struct Values {
    seed: u64,
    drawn: BTreeSet<u32>,
}

impl Values {
    fn new(seed: u64) -> Self {
        Self {
            seed,
            drawn: BTreeSet::from([0]),
        }
    }

    fn next(&mut self) -> u32 {
        use std::hash::{Hash, Hasher};
        let mut n = self.drawn.len();
        loop {
            let mut h = std::collections::hash_map::DefaultHasher::new();
            (self.seed, "switch-value", n).hash(&mut h);
            let v = u32::try_from(h.finish() >> 32).unwrap_or(0);
            if self.drawn.insert(v) {
                return v;
            }
            n += 1;
        }
    }
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

    /// What the mutants' runs need of the build step's build: `None` when no mutant was
    /// switched in.
    pub fn built(&self) -> Option<Built> {
        let sw = self.switches.as_ref()?;
        Some(Built {
            probes: self.name.clone(),
            var: sw.var.clone(),
            decoy: sw.decoy,
            mutants: sw.mutants.clone(),
        })
    }

    /// After the build step built the probed (and switched) text in `room`: the judged text
    /// put back with the probed file's modification time, which the build's fingerprints are
    /// newer than, so cargo rebuilds none of it for any run that starts from this room (a run
    /// that writes the file, a re-proof's mutant, makes it newer, and it is rebuilt). Every run
    /// then runs the one build: with no variable set, the probes write nothing and every switch
    /// is off, which is the judged code.
    pub fn keep_built(self, room: &Room) -> Result<Self, CliError> {
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
        Ok(self)
    }

    /// Puts the judged text back where the probed text still is (before the copy is checked:
    /// a file the run changed stays as it left it, for the check to find).
    pub fn restore(&self, room: &Room) -> Result<(), CliError> {
        for (file, judged, probed) in &self.written {
            let path = room.tree.join(file);
            if read_capped(&path, MAX_FILE_BYTES).as_deref() == Some(probed.as_slice()) {
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

    /// The value that turns no switch on is told by nothing but being the one a real run
    /// carries: over 512 gates' seeds, the values are distinct and never 0, and none of a
    /// residue (modulo each power of two to 2^16, and 7), its rank among the gate's values, or
    /// its distance to the next drawn is the same for every gate. (Issue 68's first draw put
    /// it at 40 modulo 64 and each mutant's 7 above the one before, for every gate.)
    #[test]
    fn no_residue_rank_or_distance_tells_the_value_that_turns_none_on() {
        let mut residues: BTreeMap<u32, BTreeSet<u32>> = BTreeMap::new();
        let (mut ranks, mut distances) = (BTreeSet::new(), BTreeSet::new());
        for seed in 0..512 {
            let mut values = Values::new(seed);
            let drawn: Vec<u32> = (0..6).map(|_| values.next()).collect();
            let set: BTreeSet<u32> = drawn.iter().copied().collect();
            assert_eq!(set.len(), 6, "distinct: {drawn:?}");
            assert!(!set.contains(&0), "0 is what an unset variable reads");
            let none = drawn[0];
            for m in (1..=16).map(|k| 1u32 << k).chain([7]) {
                residues.entry(m).or_default().insert(none % m);
            }
            ranks.insert(set.iter().position(|v| *v == none));
            distances.insert(drawn[1].wrapping_sub(none));
        }
        for (m, seen) in &residues {
            assert!(seen.len() > 1, "every gate's value is {seen:?} modulo {m}");
        }
        assert!(ranks.len() > 1 && distances.len() > 1);
    }

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
