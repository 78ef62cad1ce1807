//! The observe step's runner side (issue 52; docs/design/observe.md): the suite's first run is
//! the observed run. pytest runs in-process with a probe compiled into each changed code file as
//! it is imported: before each statement a changed line is part of, and at the head of each way
//! out of a changed `if`, `while`, `for` or `match`. One context per test function; the report
//! (coverage.py's JSON shape, the parts read) is written beside the run's receipt, outside the
//! copy, and read like one. The core decides from what it says
//! ([`crate::core::gate::ObserveFacts`]).
//!
//! Why probes and not coverage.py's tracer: on CPython 3.11 a `sys.settrace` tracer costs every
//! call in every file, measured or not (the plain suite 1.6x on boltons, 2.4x on toolz, whose
//! properties call the changed file thousands of times); probes on the changed lines only cost
//! those lines (within noise of the plain run on both). docs/design/observe.md has the figures.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use serde::Deserialize;

use super::super::config::ObserveConfig;
use super::super::error::CliError;
use crate::core::gate::{
    MAX_CHECK_ID_CHARS, MAX_LINE_CHECKS, MAX_OBSERVED_LINES, MAX_UNTAKEN, ObserveFacts,
    ObservedLine, UntakenBranch,
};

use super::observe_driver::DRIVER;

/// The check id of code run when its module was imported (no test ran it).
pub(super) const IMPORT: &str = "(import)";

/// Where the observed run writes its report: beside its receipt (`{junit}` + this).
pub(super) const REPORT_SUFFIX: &str = ".observe.json";

/// The largest file whose change is read for arid parts (larger: observed as it is).
const MAX_ARID_BYTES: usize = 4 << 20;

/// The largest observed-run report read.
const MAX_REPORT_BYTES: u64 = 64 << 20;

/// The suite command `argv` (`python [flags] -m pytest ARGS`) as the observed run of the
/// changed lines `files` (by file): the same interpreter and flags, pytest's same arguments;
/// with `record`, the changed functions' calls recorded too, at most that many each (issue
/// 66). `None` when it does not run pytest that way.
pub fn observed_argv(
    argv: &[String],
    files: &BTreeMap<String, BTreeSet<u32>>,
    record: Option<u8>,
) -> Option<Vec<String>> {
    let at = crate::cli::runner::pytest_module_at(argv)?;
    let (python, rest) = argv.split_at(at);
    let pytest_args = rest.get(2..)?;
    let mut out: Vec<String> = python.to_vec();
    out.extend(["-c".to_owned(), DRIVER.to_owned()]);
    if let Some(n) = record {
        out.extend(["--record".to_owned(), n.to_string()]);
    }
    // (The report's path is the first argument after them: it is never `--select`.)
    out.push(format!("{}{REPORT_SUFFIX}", crate::cli::runner::JUNIT));
    out.extend(
        files
            .iter()
            .map(|(file, lines)| format!("{file}:{}", ranges(lines))),
    );
    out.push("--".to_owned());
    out.extend(pytest_args.iter().cloned());
    Some(out)
}

/// `lines` as the driver reads them: runs of consecutive lines as `a-b`, comma-separated (a
/// file's every line stays a short argument).
fn ranges(lines: &BTreeSet<u32>) -> String {
    let mut runs: Vec<(u32, u32)> = Vec::new();
    for &n in lines {
        match runs.last_mut() {
            Some((_, end)) if end.checked_add(1) == Some(n) => *end = n,
            _ => runs.push((n, n)),
        }
    }
    runs.iter()
        .map(|(a, b)| {
            if a == b {
                a.to_string()
            } else {
                format!("{a}-{b}")
            }
        })
        .collect::<Vec<_>>()
        .join(",")
}

/// The suite's `argv` (pytest's, or already the observed run's) running every test but `ids`
/// (by their JUnit ids: a shard's run leaves out the tests other shards own, issue 53): the
/// driver's `--except`, before the observed run's own arguments when it is one. `None` when it
/// does not run pytest either way.
pub(super) fn except_argv(
    argv: &[String],
    ids: impl Iterator<Item = String>,
) -> Option<Vec<String>> {
    let driver = argv.iter().position(|a| a == DRIVER);
    let mut out: Vec<String>;
    match driver {
        Some(at) => {
            let (before, after) = argv.split_at(at + 1);
            out = before.to_vec();
            out.push("--except".to_owned());
            out.extend(ids);
            out.push("--observe".to_owned());
            out.extend(after.iter().cloned());
        }
        None => {
            let at = crate::cli::runner::pytest_module_at(argv)?;
            let (python, rest) = argv.split_at(at);
            out = python.to_vec();
            out.extend(["-c".to_owned(), DRIVER.to_owned(), "--except".to_owned()]);
            out.extend(ids);
            out.push("--".to_owned());
            out.extend(rest.get(2..)?.iter().cloned());
        }
    }
    Some(out)
}

/// The suite command `argv` as a patch mutant's run: the same interpreter, flags and pytest
/// arguments, only the tests `checks` kept, and the mutant (`file`'s bytes `start..end`
/// replaced) applied as the import system loads the file, never written to it. `None` when it
/// does not run pytest that way, or there is no test to keep.
pub(super) fn selecting_argv(
    argv: &[String],
    checks: &[String],
    (file, m): (&str, &crate::cli::rewriting::patch_mutants::PatchMutant),
) -> Option<Vec<String>> {
    let hex: String = m.replacement.bytes().map(|b| format!("{b:02x}")).collect();
    let mutant = [
        "--mutant".to_owned(),
        file.to_owned(),
        m.start.to_string(),
        m.end.to_string(),
        hex,
    ];
    keeping(argv, checks, &mutant)
}

/// The suite command `argv` keeping only the tests `ids` (JUnit ids: the observed run's
/// failures), run plainly: no probe, no mutant (issue 64). `None` when it does not run pytest
/// that way, or there is no test to keep.
pub(super) fn plain_argv(argv: &[String], ids: &[String]) -> Option<Vec<String>> {
    keeping(argv, ids, &[])
}

/// `argv` as the driver's run keeping only `checks` (the driver's own check ids, or JUnit
/// ids), with `mutant`'s arguments when there is one.
fn keeping(argv: &[String], checks: &[String], mutant: &[String]) -> Option<Vec<String>> {
    let at = crate::cli::runner::pytest_module_at(argv)?;
    let (python, rest) = argv.split_at(at);
    let pytest_args = rest.get(2..)?;
    let tests: Vec<&String> = checks
        .iter()
        .filter(|c| c.as_str() != IMPORT && !c.starts_with('-'))
        .collect();
    if tests.is_empty() {
        return None;
    }
    let mut out: Vec<String> = python.to_vec();
    out.extend(["-c".to_owned(), DRIVER.to_owned(), "--select".to_owned()]);
    out.extend(mutant.iter().cloned());
    out.extend(tests.into_iter().cloned());
    out.push("--".to_owned());
    out.extend(pytest_args.iter().cloned());
    Some(out)
}

/// The patch's changed code lines, by file: what the observed run measures.
#[derive(Debug, Clone, Default)]
pub(super) struct Watched {
    pub config: Option<ObserveConfig>,
    pub files: BTreeMap<String, BTreeSet<u32>>,
    /// The tests the base's ledger freezes (open rows): their verdict is unknown, so a line
    /// only they run is run by no check, and they never kill a patch mutant (kept with
    /// observing off: the suite's first run leaves them out).
    pub frozen: BTreeSet<String>,
}

impl Watched {
    /// The facts before the observed run has ended: nothing read.
    pub fn unread(&self) -> Option<ObserveFacts> {
        let c = self.config.filter(ObserveConfig::on)?;
        Some(ObserveFacts {
            changes: c.changes,
            branches: c.branches,
            read: false,
            line_count: 0,
            run_count: 0,
            lines: Vec::new(),
            untaken: Vec::new(),
            mutants: Vec::new(),
        })
    }

    /// The facts from the report the observed run wrote next to its receipt at `receipt`
    /// (`None`: receipts off, or the run was not observed).
    pub fn read(&self, receipt: Option<&Path>) -> Option<ObserveFacts> {
        let report = receipt.map(|r| {
            let mut path = r.as_os_str().to_owned();
            path.push(REPORT_SUFFIX);
            std::path::PathBuf::from(path)
        });
        self.read_report_at(report.as_deref())
    }

    /// The facts from the report (coverage.py's JSON shape) at `report` (`None`, or unreadable: nothing
    /// read).
    pub fn read_report_at(&self, report: Option<&Path>) -> Option<ObserveFacts> {
        self.of_report(report.and_then(|r| read_report(r).ok()))
    }

    /// The facts from an observed run's report (`None`: none could be read).
    pub fn of_report(&self, report: Option<Report>) -> Option<ObserveFacts> {
        let mut facts = self.unread()?;
        if self.files.is_empty() {
            // No changed code file: nothing to observe, and nothing unread.
            facts.read = true;
            return Some(facts);
        }
        let Some(report) = report else {
            return Some(facts);
        };
        facts.read = true;
        let mut line_count = 0u64;
        for (file, added) in &self.files {
            // A file not in the report (the driver could not parse it; coverage.py leaves out
            // a file never imported): its lines are not known to be statements, and none ran.
            let Some(cov) = report.files.get(file) else {
                continue;
            };
            let statements: BTreeSet<u32> = cov
                .executed_lines
                .iter()
                .chain(&cov.missing_lines)
                .copied()
                .collect();
            for line in added.intersection(&statements) {
                line_count += 1;
                // Code run with no test under way ran on import; a frozen test is no check.
                let checks: Vec<String> = match cov.contexts.get(&line.to_string()) {
                    Some(c) => c.iter().map(|c| check_id(c)).collect::<BTreeSet<_>>(),
                    None if cov.executed_lines.contains(line) => BTreeSet::from([check_id("")]),
                    None => BTreeSet::new(),
                }
                .into_iter()
                .filter(|c| !self.frozen.contains(c))
                .take(MAX_LINE_CHECKS)
                .collect();
                if !checks.is_empty() {
                    facts.run_count += 1;
                }
                if facts.lines.len() < MAX_OBSERVED_LINES {
                    facts.lines.push(ObservedLine {
                        file: file.clone(),
                        line: *line,
                        checks,
                    });
                }
            }
            for (from, to) in &cov.missing_branches {
                let from = u32::try_from(*from).ok();
                if let Some(from) =
                    from.filter(|f| added.contains(f) && cov.executed_lines.contains(f))
                    && facts.untaken.len() < MAX_UNTAKEN
                {
                    facts.untaken.push(UntakenBranch {
                        file: file.clone(),
                        line: from,
                        to: u32::try_from(*to).ok().filter(|t| *t > 0),
                    });
                }
            }
        }
        facts.line_count = line_count;
        Some(facts)
    }
}

/// A context as a check id: the driver names each test's context by its id already
/// (`tests.test_x::test_y`, JUnit's, the census's); coverage.py's own `test_function` context
/// `tests.test_x.test_y` (a report given to `patchgate observe --coverage`) is turned into it;
/// the empty context is code run on import.
fn check_id(context: &str) -> String {
    let id = match context.rsplit_once('.') {
        _ if context.is_empty() => IMPORT.to_owned(),
        // The driver's own contexts are ids already.
        _ if context.contains("::") => context.to_owned(),
        Some((module, name)) => format!("{module}::{name}"),
        None => context.to_owned(),
    };
    id.chars().take(MAX_CHECK_ID_CHARS).collect()
}

/// The observed run's report: coverage.py's JSON report (format 3), the parts read; the
/// driver writes only these.
#[derive(Debug, Default, Deserialize)]
pub(super) struct Report {
    pub files: BTreeMap<String, FileCoverage>,
}

#[derive(Debug, Default, Deserialize)]
pub(super) struct FileCoverage {
    #[serde(default)]
    pub executed_lines: BTreeSet<u32>,
    #[serde(default)]
    pub missing_lines: BTreeSet<u32>,
    /// The tests (contexts) that ran each line, by its number as text; `""` is no test.
    #[serde(default)]
    pub contexts: BTreeMap<String, Vec<String>>,
    #[serde(default)]
    pub missing_branches: Vec<(i64, i64)>,
}

/// The report at `path`, read with the strict reader (duplicate keys refused)
/// and a size cap: it was written by the code under test's process.
pub(super) fn read_report<T: serde::de::DeserializeOwned>(path: &Path) -> Result<T, CliError> {
    use std::io::Read;
    let file = crate::cli::runner::open_report(path)
        .map_err(|e| CliError::data(format!("no observed-run report: {e}")))?;
    let mut bytes = Vec::new();
    file.take(MAX_REPORT_BYTES)
        .read_to_end(&mut bytes)
        .map_err(|e| CliError::data(format!("cannot read the observed-run report: {e}")))?;
    let value = crate::core::json::strict_value(&bytes)
        .map_err(|e| CliError::data(format!("the observed-run report is not JSON: {e}")))?;
    serde_json::from_value(value).map_err(|e| {
        CliError::data(format!(
            "the observed-run report is not in coverage.py's JSON shape: {e}"
        ))
    })
}

/// The changed code files and lines to watch: the lines the patch adds to each `.py` file of
/// the run tree that is not test code (test-adjacent, the test toolchain), not `inert` and not
/// under `fixtures`.
pub(super) fn watched(
    config: Option<ObserveConfig>,
    base: &str,
    tree: &str,
    (inert, fixtures): (&[String], &str),
    frozen: BTreeSet<String>,
) -> Result<Watched, CliError> {
    let markers = crate::core::ladder::ScopeMarkers::default();
    let fixtures = format!("{}/", fixtures.trim_end_matches('/'));
    let is_test = |f: &str| {
        f.starts_with(&fixtures)
            || crate::core::path::RepoPath::parse(f).is_ok_and(|p| {
                crate::core::gate::is_test_file(&p, &markers) || markers.is_scope_hit(&p)
            })
    };
    let Some(c) = config.filter(ObserveConfig::on) else {
        return Ok(Watched {
            frozen,
            ..Watched::default()
        });
    };
    let mut files = BTreeMap::new();
    for f in super::super::git::added_lines(base, tree)? {
        let inert_path = inert.iter().any(|p| {
            crate::core::path::RepoPath::parse(p).is_ok_and(|p| {
                crate::core::path::RepoPath::parse(&f.path).is_ok_and(|f| p.covers(&f))
            })
        });
        if (f.path.ends_with(".py") || f.path.ends_with(".rs")) && !is_test(&f.path) && !inert_path
        {
            files.insert(f.path.clone(), f.lines.iter().map(|(n, _)| *n).collect());
        }
    }
    // A file changed only where no check need run (comments, docstrings, messages: issue 65)
    // has nothing to observe.
    let paths: Vec<&str> = files.keys().map(String::as_str).collect();
    let before = super::super::git::blobs(base, &paths, MAX_ARID_BYTES)?;
    let after = super::super::git::blobs(tree, &paths, MAX_ARID_BYTES)?;
    let arid: Vec<String> = paths
        .iter()
        .zip(before.iter().zip(&after))
        .filter_map(|(p, pair)| match pair {
            (Some(b), Some(a)) if crate::cli::reading::arid::only_arid(p, b, a) => {
                Some((*p).to_owned())
            }
            _ => None,
        })
        .collect();
    for p in &arid {
        files.remove(p);
        crate::cli::progress::say(crate::cli::progress::Event::Plan(format!(
            "observe: {p} changed only in comments, docstrings or raised, warned or logged messages: nothing of it to observe"
        )));
    }
    Ok(Watched {
        config: Some(c),
        files,
        frozen,
    })
}

/// What the driver's tests share: a file written under a directory, and a run there.
#[cfg(test)]
pub(super) mod test_support {
    use std::path::Path;

    pub fn write_in(dir: &Path, path: &str, text: &str) {
        let path = dir.join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    /// `python3 -m pytest -q -p no:cacheprovider` and `args`.
    pub fn pytest(args: &[&str]) -> Vec<String> {
        ["python3", "-m", "pytest", "-q", "-p", "no:cacheprovider"]
            .iter()
            .chain(args)
            .map(|a| (*a).to_owned())
            .collect()
    }

    /// `argv` run in `dir`, its `{junit}` at `receipt`, pytest's plugin autoload off.
    pub fn run_in(dir: &Path, argv: Vec<String>, receipt: &Path) -> std::process::Output {
        let argv: Vec<String> = argv
            .into_iter()
            .map(|a| a.replace(crate::cli::runner::JUNIT, receipt.to_str().unwrap()))
            .collect();
        std::process::Command::new(&argv[0])
            .args(&argv[1..])
            .current_dir(dir)
            .env("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
            .output()
            .unwrap()
    }
}

#[cfg(test)]
mod tests {
    use super::test_support::{pytest, run_in, write_in};
    use super::*;

    /// The starter's rules, no patch mutants: what the driver's tests read reports under.
    const REQUIRED_NO_MUTANTS: ObserveConfig = ObserveConfig {
        changes: crate::core::gate::ObserveRule::Required,
        branches: crate::core::gate::ObserveRule::Listed,
        mutants: 0,
    };

    /// The observed run keeps the interpreter, its flags and pytest's arguments; the changed
    /// lines go as runs.
    #[test]
    fn the_observed_run_is_the_suite_with_probes() {
        let argv: Vec<String> = [
            "python3",
            "-P",
            "-s",
            "-m",
            "pytest",
            "-q",
            "--junitxml={junit}",
            "tests",
        ]
        .map(String::from)
        .to_vec();
        let files = BTreeMap::from([
            ("shop/a.py".to_owned(), BTreeSet::from([3, 5, 6, 7, 9])),
            ("shop/b:c.py".to_owned(), BTreeSet::from([1])),
        ]);
        let out = observed_argv(&argv, &files, None).unwrap();
        assert_eq!(out[..4], ["python3", "-P", "-s", "-c"]);
        assert_eq!(
            out[5..],
            [
                "{junit}.observe.json",
                "shop/a.py:3,5-7,9",
                "shop/b:c.py:1",
                "--",
                "-q",
                "--junitxml={junit}",
                "tests"
            ]
        );
        let cargo: Vec<String> = ["cargo", "test"].map(String::from).to_vec();
        assert!(observed_argv(&cargo, &files, None).is_none());
        // `-m pytest` must be the module pytest, not an argument that says so.
        let odd: Vec<String> = ["python3", "-m", "pytest_x"].map(String::from).to_vec();
        assert!(observed_argv(&odd, &files, None).is_none());
    }

    /// The driver on a small module, every line changed: which statements ran under which
    /// test, and which ways out of the changed conditions and loops none took, written by hand.
    #[test]
    fn the_probes_see_what_ran() {
        let dir = tempfile::tempdir().unwrap();
        let module = r#""""Prices."""
from __future__ import annotations
import math


def price(items, percent=0):
    if isinstance(items, list):
        total = sum(items)
    elif isinstance(items, tuple):
        total = sum(items) * 2
    else:
        total = 0
    while True:
        break
    for _ in ():
        pass
    try:
        math.sqrt(-1)
    except ValueError:
        total += 0
    return (total
            * (100 - percent) // 100)


def unused(x):
    # a comment is no statement
    if x: return 1
    return 2
"#;
        let tests = "import sys\nfrom shop.p import price\n\ndef test_list():\n    assert price([1, 2]) == 3\n\ndef test_other():\n    assert price('ab') == 0\n    open('argv', 'w').write(repr(sys.argv))\n\ndef test_kind():\n    from shop.m import kind\n    assert kind(0) == 'zero'\n";
        for (path, text) in [
            ("shop/__init__.py", ""),
            ("shop/p.py", module),
            ("tests/__init__.py", ""),
            ("tests/test_p.py", tests),
            ("shop/broken.py", "def f(:\n    return 1\n"),
            (
                "shop/m.py",
                "def kind(x):\n    match x:\n        case 0:\n            return 'zero'\n        case [a, *_] if a:\n            return 'list'\n        case _:\n            return 'other'\n",
            ),
        ] {
            write_in(dir.path(), path, text);
        }
        let receipt = dir.path().join("report.xml");
        // The module named on the command line too (its doctests): pytest's assertion rewriter
        // would take it, and load it without probes.
        let argv = pytest(&["--doctest-modules", "shop/p.py", "tests"]);
        let w = Watched {
            config: None,
            files: BTreeMap::from([
                ("shop/p.py".to_owned(), (1..=28).collect()),
                ("shop/broken.py".to_owned(), BTreeSet::from([2])),
                ("shop/m.py".to_owned(), (1..=8).collect()),
            ]),
            frozen: BTreeSet::new(),
        };
        let out = run_in(
            dir.path(),
            observed_argv(&argv, &w.files, None).unwrap(),
            &receipt,
        );
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stdout)
        );
        let w = Watched {
            config: Some(REQUIRED_NO_MUTANTS),
            ..w
        };
        // The tests saw a plain `python -m pytest`'s argv.
        let argv = std::fs::read_to_string(dir.path().join("argv")).unwrap();
        assert!(
            argv.contains(
                "pytest/__main__.py', '-q', '-p', 'no:cacheprovider', '--doctest-modules', 'shop/p.py', 'tests']"
            ),
            "{argv}"
        );
        let f = w.read(Some(&receipt)).unwrap();
        let (list, other) = ("tests.test_p::test_list", "tests.test_p::test_other");
        let kind = "tests.test_p::test_kind";
        let both = vec![list, other];
        let expected: Vec<(u32, Vec<&str>)> = vec![
            // A file the driver cannot parse: its changed lines are code no check ran.
            (2, vec![]),
            // `match`: the case entered, and those not (the module is imported inside the
            // test, so its `def` ran under it).
            (1, vec![kind]),
            (2, vec![kind]),
            (3, vec![kind]),
            (4, vec![kind]),
            (5, vec![]),
            (6, vec![]),
            (7, vec![]),
            (8, vec![]),
            // Run on import: the `__future__` import's probe goes after it.
            (2, vec!["(import)"]),
            (3, vec!["(import)"]),
            (6, vec!["(import)"]),
            (7, both.clone()),
            (8, vec![list]),
            (9, vec![other]),
            (10, vec![]),
            // (11, `else:`, is not a statement.)
            (12, vec![other]),
            (13, both.clone()),
            (14, both.clone()),
            (15, both.clone()),
            (16, vec![]),
            (17, both.clone()),
            (18, both.clone()),
            (19, both.clone()),
            (20, both.clone()),
            (21, both.clone()),
            // A statement's second line is the statement's.
            (22, both.clone()),
            (25, vec!["(import)"]),
            // (26, a comment, is not a statement.)
            (27, vec![]),
            (28, vec![]),
        ];
        let lines: Vec<(u32, Vec<&str>)> = f
            .lines
            .iter()
            .map(|l| (l.line, l.checks.iter().map(String::as_str).collect()))
            .collect();
        assert_eq!(lines, expected);
        assert_eq!((f.line_count, f.run_count), (30, 21));
        // No tuple, and an empty loop; `while True:` has no way out but `break`, and line 27
        // never ran.
        let untaken: Vec<(u32, Option<u32>)> = f.untaken.iter().map(|u| (u.line, u.to)).collect();
        assert_eq!(
            untaken,
            [(2, Some(6)), (2, Some(8)), (9, Some(10)), (15, Some(16))]
        );
    }

    /// Issue 64: the observed run is the suite as pytest runs it. Tests that read pytest's
    /// assertion introspection (the "where" lines its rewriter writes), under both import
    /// modes (attrs's `--import-mode=importlib` among them), and a changed helper module the
    /// project registers for rewriting: every test passes under a plain `pytest`, so each must
    /// pass observed, and the helper's changed lines still carry probes. Expectations from
    /// pytest's documented behaviour, not from the driver.
    #[test]
    fn the_observed_run_keeps_pytest_s_assertion_rewriting() {
        let checks = "def check_double(f, x):\n    got = f(x)\n    assert got == 2 * x\n";
        let code = "def double(x):\n    if x == 1:\n        return 3\n    return x * 2\n";
        let tests = "import pytest\nfrom shop.s import double\nfrom shop.checks import check_double\n\n\ndef test_introspected():\n    with pytest.raises(AssertionError, match=r\"where 3 = double\\(1\\)\"):\n        assert double(1) == 2\n\n\ndef test_helper_rewritten():\n    with pytest.raises(AssertionError, match=r\"assert 3 == \\(2 \\* 1\\)\"):\n        check_double(double, 1)\n    assert double(4) == 8\n";
        for mode in ["prepend", "importlib"] {
            let dir = tempfile::tempdir().unwrap();
            for (path, text) in [
                ("shop/__init__.py", ""),
                ("shop/s.py", code),
                ("shop/checks.py", checks),
                ("tests/__init__.py", ""),
                (
                    "tests/conftest.py",
                    "import pytest\npytest.register_assert_rewrite(\"shop.checks\")\n",
                ),
                ("tests/test_s.py", tests),
                (
                    "pytest.ini",
                    &format!("[pytest]\npythonpath = .\naddopts = --import-mode={mode}\n"),
                ),
            ] {
                write_in(dir.path(), path, text);
            }
            let receipt = dir.path().join("report.xml");
            let argv = pytest(&["--junitxml={junit}", "tests"]);
            let plain = run_in(dir.path(), argv.clone(), &receipt);
            assert!(
                plain.status.success(),
                "{mode}, plain: {}",
                String::from_utf8_lossy(&plain.stdout)
            );
            let files = BTreeMap::from([
                ("shop/s.py".to_owned(), BTreeSet::from([2, 3])),
                ("shop/checks.py".to_owned(), BTreeSet::from([2, 3])),
            ]);
            let out = run_in(
                dir.path(),
                observed_argv(&argv, &files, None).unwrap(),
                &receipt,
            );
            assert!(
                out.status.success(),
                "{mode}, observed: {}",
                String::from_utf8_lossy(&out.stdout)
            );
            let w = Watched {
                config: Some(REQUIRED_NO_MUTANTS),
                files,
                frozen: BTreeSet::new(),
            };
            let f = w.read(Some(&receipt)).unwrap();
            let helper = "tests.test_s::test_helper_rewritten";
            let lines: Vec<(u32, Vec<&str>)> = f
                .lines
                .iter()
                .map(|l| (l.line, l.checks.iter().map(String::as_str).collect()))
                .collect();
            // shop/checks.py's two lines, then shop/s.py's (the `if` and its `return 3`).
            let both = vec![helper, "tests.test_s::test_introspected"];
            assert_eq!(
                lines,
                [
                    (2, vec![helper]),
                    (3, vec![helper]),
                    (2, both.clone()),
                    (3, both)
                ],
                "{mode}"
            );
        }
    }

    #[test]
    fn contexts_are_junit_ids() {
        assert_eq!(
            check_id("tests.test_cases.test_case"),
            "tests.test_cases::test_case"
        );
        assert_eq!(
            check_id("tests.test_api.TestRetry.test_once"),
            "tests.test_api.TestRetry::test_once"
        );
        assert_eq!(check_id(""), "(import)");
    }

    /// A report as coverage.py writes it, read into the facts by hand-written expectations:
    /// line 9 (added, never run) is counted and unrun, 10 ran under one test, the branch from
    /// 10 to 11 was never taken, and line 4 (added, not a statement) is not code.
    #[test]
    fn a_report_becomes_the_facts() {
        let dir = tempfile::tempdir().unwrap();
        let receipt = dir.path().join("report.xml");
        std::fs::write(
            dir.path().join("report.xml.observe.json"),
            r#"{"meta": {"format": 3}, "files": {"shop/p.py": {
                "executed_lines": [3, 10, 12], "missing_lines": [9, 11],
                "contexts": {"3": [""], "10": ["tests.test_cases.test_case"],
                             "12": ["tests.test_legacy.test_export"]},
                "missing_branches": [[10, 11], [8, 9]]}}}"#,
        )
        .unwrap();
        let w = Watched {
            config: Some(REQUIRED_NO_MUTANTS),
            files: BTreeMap::from([("shop/p.py".to_owned(), BTreeSet::from([3, 4, 9, 10, 12]))]),
            frozen: BTreeSet::from(["tests.test_legacy::test_export".to_owned()]),
        };
        let f = w.read(Some(&receipt)).unwrap();
        assert!(f.read);
        // Line 12 ran under a frozen test only: no check ran it.
        assert_eq!((f.line_count, f.run_count), (4, 2));
        let lines: Vec<(u32, Vec<&str>)> = f
            .lines
            .iter()
            .map(|l| (l.line, l.checks.iter().map(String::as_str).collect()))
            .collect();
        assert_eq!(
            lines,
            [
                (3, vec!["(import)"]),
                (9, vec![]),
                (10, vec!["tests.test_cases::test_case"]),
                (12, vec![])
            ]
        );
        assert_eq!(
            f.untaken,
            [UntakenBranch {
                file: "shop/p.py".into(),
                line: 10,
                to: Some(11)
            }]
        );
        // No report: nothing is known to be observed.
        let none = w.read(Some(&dir.path().join("other.xml"))).unwrap();
        assert!(!none.read);
    }
}
