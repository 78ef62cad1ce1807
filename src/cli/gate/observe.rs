//! The observe step's runner side (issue 52; docs/design/observe.md): the suite's first run is
//! the observed run. pytest runs under coverage.py (branches, one context per test function,
//! the project's own coverage config ignored), measuring only the patch's changed code files;
//! the report is written beside the run's receipt, outside the copy, and read like one. The
//! core decides from what it says ([`crate::core::gate::ObserveFacts`]).

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use serde::Deserialize;

use super::super::config::ObserveConfig;
use super::super::error::CliError;
use crate::core::gate::{
    MAX_CHECK_ID_CHARS, MAX_LINE_CHECKS, MAX_OBSERVED_LINES, MAX_UNTAKEN, ObserveFacts,
    ObservedLine, UntakenBranch,
};

/// The program the observed run is (`python -c DRIVER OUT FILE... -- PYTEST-ARGS`): pytest
/// in-process under coverage.py, the JSON report written to `OUT` when pytest returns. A run
/// that never returns (an exit under test) writes none: then nothing is known to be observed.
/// A patch mutant's run is `python -c DRIVER --select ID... -- PYTEST-ARGS`: pytest with only
/// the tests named (JUnit's `module::function`, `module.Class::function`) kept.
const DRIVER: &str = r#"import sys
split = sys.argv.index("--")
head, args = sys.argv[1:split], sys.argv[split + 1:]
cov, plugins = None, []
def ident(item):
    mod = getattr(getattr(item, "module", None), "__name__", "")
    cls = getattr(item, "cls", None)
    owner = mod + ("." + cls.__qualname__ if cls is not None else "")
    return owner + "::" + (getattr(item, "originalname", None) or item.name)
if head[:1] == ["--select"]:
    keep, files = set(head[1:]), []
    class Select:
        def pytest_collection_modifyitems(self, config, items):
            dropped = [i for i in items if ident(i) not in keep]
            items[:] = [i for i in items if ident(i) in keep]
            config.hook.pytest_deselected(items=dropped)
    plugins.append(Select())
else:
    out, files = head[0], head[1:]
try:
    if not files:
        raise LookupError("nothing to observe")
    import coverage
    cov = coverage.Coverage(data_file=None, branch=True, config_file=False,
                            source=sorted({f.rpartition("/")[0] or "." for f in files}))
    cov.start()
except LookupError:
    cov = None
except Exception as e:
    cov = None
    print("patchgate observe: coverage.py cannot observe this run (%s): the change is not known to be observed" % e, file=sys.stderr)
import pytest
if cov is not None:
    class Contexts:
        # One context per test, switched by pytest's own protocol (setup, call, teardown):
        # once a test, not on every call as coverage.py's `test_function` contexts are.
        @pytest.hookimpl(hookwrapper=True)
        def pytest_runtest_protocol(self, item, nextitem):
            cov.switch_context(ident(item))
            yield
            cov.switch_context("")
    plugins.append(Contexts())
try:
    code = pytest.main(args, plugins=plugins)
finally:
    if cov is not None:
        cov.stop()
        try:
            cov.json_report(outfile=out, include=files, show_contexts=True, ignore_errors=True)
        except Exception as e:
            print("patchgate observe: no coverage report: %s" % e, file=sys.stderr)
sys.exit(int(code))
"#;

/// The check id of code run when its module was imported (no test ran it).
pub(super) const IMPORT: &str = "(import)";

/// Where the observed run writes its report: beside its receipt (`{junit}` + this).
pub(super) const REPORT_SUFFIX: &str = ".observe.json";

/// The largest coverage report read.
const MAX_REPORT_BYTES: u64 = 64 << 20;

/// The suite command `argv` (`python [flags] -m pytest ARGS`) as the observed run of `files`:
/// the same interpreter and flags, pytest's same arguments. `None` when it does not run pytest
/// that way.
pub fn observed_argv(argv: &[String], files: &[String]) -> Option<Vec<String>> {
    let at = crate::cli::runner::pytest_module_at(argv)?;
    let (python, rest) = argv.split_at(at);
    let pytest_args = rest.get(2..)?;
    let mut out: Vec<String> = python.to_vec();
    out.extend(["-c".to_owned(), DRIVER.to_owned()]);
    // (The report's path is the first argument: it is never `--select`.)
    out.push(format!("{}{REPORT_SUFFIX}", crate::cli::runner::JUNIT));
    out.extend(files.iter().cloned());
    out.push("--".to_owned());
    out.extend(pytest_args.iter().cloned());
    Some(out)
}

/// The suite command `argv` as a patch mutant's run: the same interpreter, flags and pytest
/// arguments, only the tests `checks` kept. `None` when it does not run pytest that way, or
/// there is no test to keep.
pub(super) fn selecting_argv(argv: &[String], checks: &[String]) -> Option<Vec<String>> {
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
    /// only they run is run by no check, and they never kill a patch mutant.
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

    /// The files to measure.
    pub fn file_list(&self) -> Vec<String> {
        self.files.keys().cloned().collect()
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

    /// The facts from coverage.py's JSON report at `report` (`None`, or unreadable: nothing
    /// read).
    pub fn read_report_at(&self, report: Option<&Path>) -> Option<ObserveFacts> {
        let mut facts = self.unread()?;
        if self.files.is_empty() {
            // No changed code file: nothing to observe, and nothing unread.
            facts.read = true;
            return Some(facts);
        }
        let Some(report) = report.and_then(|r| read_report(r).ok()) else {
            return Some(facts);
        };
        facts.read = true;
        let mut line_count = 0u64;
        for (file, added) in &self.files {
            // A file the run never imported is not in the report: its lines are not known to
            // be statements, and none ran (counted once the report says they are code).
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

/// A coverage.py context as a check id: the driver names each test's context by its id
/// already (`tests.test_x::test_y`, JUnit's, the census's); coverage.py's own `test_function`
/// context `tests.test_x.test_y` is turned into it; the empty context is code run on import.
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

/// coverage.py's JSON report (format 3), the parts read.
#[derive(Debug, Deserialize)]
struct Report {
    files: BTreeMap<String, FileCoverage>,
}

#[derive(Debug, Deserialize)]
struct FileCoverage {
    #[serde(default)]
    executed_lines: BTreeSet<u32>,
    #[serde(default)]
    missing_lines: BTreeSet<u32>,
    #[serde(default)]
    contexts: BTreeMap<String, Vec<String>>,
    #[serde(default)]
    missing_branches: Vec<(i64, i64)>,
}

/// coverage.py's JSON report at `path`, read with the strict reader (duplicate keys refused)
/// and a size cap: it was written by the code under test's process.
fn read_report(path: &Path) -> Result<Report, CliError> {
    use std::io::Read;
    let file = crate::cli::runner::open_report(path)
        .map_err(|e| CliError::data(format!("no coverage report: {e}")))?;
    let mut bytes = Vec::new();
    file.take(MAX_REPORT_BYTES)
        .read_to_end(&mut bytes)
        .map_err(|e| CliError::data(format!("cannot read the coverage report: {e}")))?;
    let value = crate::core::json::strict_value(&bytes)
        .map_err(|e| CliError::data(format!("the coverage report is not JSON: {e}")))?;
    serde_json::from_value(value)
        .map_err(|e| CliError::data(format!("the coverage report is not coverage.py's: {e}")))
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
        return Ok(Watched::default());
    };
    let mut files = BTreeMap::new();
    for f in super::super::git::added_lines(base, tree)? {
        let inert_path = inert.iter().any(|p| {
            crate::core::path::RepoPath::parse(p).is_ok_and(|p| {
                crate::core::path::RepoPath::parse(&f.path).is_ok_and(|f| p.covers(&f))
            })
        });
        if f.path.ends_with(".py") && !is_test(&f.path) && !inert_path {
            files.insert(f.path.clone(), f.lines.iter().map(|(n, _)| *n).collect());
        }
    }
    Ok(Watched {
        config: Some(c),
        files,
        frozen,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The observed run keeps the interpreter, its flags and pytest's arguments.
    #[test]
    fn the_observed_run_is_the_suite_under_coverage() {
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
        let out = observed_argv(&argv, &["shop/a.py".to_owned()]).unwrap();
        assert_eq!(out[..4], ["python3", "-P", "-s", "-c"]);
        assert_eq!(
            out[5..],
            [
                "{junit}.observe.json",
                "shop/a.py",
                "--",
                "-q",
                "--junitxml={junit}",
                "tests"
            ]
        );
        let cargo: Vec<String> = ["cargo", "test"].map(String::from).to_vec();
        assert!(observed_argv(&cargo, &[]).is_none());
        // `-m pytest` must be the module pytest, not an argument that says so.
        let odd: Vec<String> = ["python3", "-m", "pytest_x"].map(String::from).to_vec();
        assert!(observed_argv(&odd, &[]).is_none());
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
            config: Some(ObserveConfig {
                changes: crate::core::gate::ObserveRule::Required,
                branches: crate::core::gate::ObserveRule::Listed,
                mutants: 0,
            }),
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
