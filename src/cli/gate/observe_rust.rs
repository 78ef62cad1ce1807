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
use super::super::rewriting::rust_probes::{self, Site};
use super::super::sandbox::Room;
use super::gather::Gathered;
use super::observe::{FileCoverage, Report};

/// Where the probes write: beside the run's receipt (`{junit}` + this).
const HITS_SUFFIX: &str = ".observe.tsv";

/// The largest probed file, and the most of the hits file read.
const MAX_FILE_BYTES: u64 = 4 << 20;
const MAX_HITS_BYTES: u64 = 16 << 20;

/// The changed Rust files of one observed run, probed.
#[derive(Debug, Default)]
pub(super) struct RustProbes {
    /// The probe's name (a macro's and the environment variable's), drawn per gate.
    name: String,
    /// Each file written: its judged text and its probed text.
    written: Vec<(String, Vec<u8>, Vec<u8>)>,
    /// Every probe, by its number: the file and what it marks.
    sites: Vec<(String, Site)>,
    /// Changed lines no probe can be put before, by file (a whole file that did not parse).
    unprobed: BTreeMap<String, BTreeSet<u32>>,
}

/// Probes the changed `.rs` files of `g` in `room`'s copy; `None` when there are none.
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
        let Some(probed) = rust_probes::probe(&text, lines, &p.name, first) else {
            // Not parsed: its changed lines are code never known to run.
            p.unprobed.insert(file.clone(), lines.clone());
            continue;
        };
        p.unprobed
            .entry(file.clone())
            .or_default()
            .extend(probed.unprobed);
        if probed.sites.is_empty() {
            continue;
        }
        p.sites
            .extend(probed.sites.into_iter().map(|s| (file.clone(), s)));
        std::fs::write(&path, &probed.text)
            .map_err(|e| CliError::software(format!("cannot write {}: {e}", path.display())))?;
        p.written.push((file.clone(), text, probed.text));
    }
    room.settle()?;
    Ok(Some(p))
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
        out.extend(argv.iter().cloned());
        out
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
