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

/// The program the observed run is (`python -c DRIVER OUT FILE:LINES... -- PYTEST-ARGS`,
/// `LINES` as `3,9-12`): pytest in-process with the changed lines' probes, the JSON report
/// written to `OUT` when pytest returns. A run that never returns (an exit under test) writes
/// none: then nothing is known to be observed. A file imported other than through the import
/// system (read and `exec`'d) has no probes: its lines are unrun, never run by a check. A
/// patch mutant's run is `python -c DRIVER --select ID... -- PYTEST-ARGS`: pytest with only the
/// tests named (JUnit's `module::function`, `module.Class::function`) kept, and only the files
/// that may hold them collected.
const DRIVER: &str = r#"import sys
split = sys.argv.index("--")
head, args = sys.argv[1:split], sys.argv[split + 1:]
plugins, watch = [], {}
def ident(item):
    mod = getattr(getattr(item, "module", None), "__name__", "")
    cls = getattr(item, "cls", None)
    owner = mod + ("." + cls.__qualname__ if cls is not None else "")
    return owner + "::" + (getattr(item, "originalname", None) or item.name)
MUTANT = None
if head[:1] == ["--select"] and head[1:2] == ["--mutant"]:
    # A patch mutant, applied as the import system loads its file: the bytes `start:end` of
    # the file's text replaced, the file on disk left as it is (what the code reads of its own
    # file is the judged text: no mutant can be told apart by it).
    path, start, end, replacement = head[2:6]
    MUTANT = (path, int(start), int(end), bytes.fromhex(replacement))
    head = head[:1] + head[6:]
if head[:1] == ["--select"]:
    keep = set(head[1:])
    # Only the files that may hold a test kept are collected (a name of the test's module or
    # class); every file when a test has no module (a doctest).
    owners = [k.partition("::")[0] for k in keep]
    stems = None if "" in owners else {p for o in owners for p in o.split(".")}
    import pytest
    class Select:
        # First: a project's own hook may answer "collect" (False) and end the asking.
        @pytest.hookimpl(tryfirst=True)
        def pytest_ignore_collect(self, collection_path, config):
            if stems is not None and collection_path.suffix == ".py" and collection_path.stem not in stems \
                    and collection_path.name not in ("conftest.py", "__init__.py") and collection_path.is_file():
                return True
        def pytest_collection_modifyitems(self, config, items):
            dropped = [i for i in items if ident(i) not in keep]
            items[:] = [i for i in items if ident(i) in keep]
            config.hook.pytest_deselected(items=dropped)
    plugins.append(Select())
else:
    out = head[0]
    for spec in head[1:]:
        path, _, ranges = spec.rpartition(":")
        lines = set()
        for r in filter(None, ranges.split(",")):
            a, _, b = r.partition("-")
            lines.update(range(int(a), int(b or a) + 1))
        watch[path] = lines
import ast, json, os, importlib.abc, importlib.machinery
# A probe is `NAME.add(id)`, compiled into a changed module as it is imported, before each
# statement a changed line is part of (id: its first line) and at the head of each way out of
# a changed `if`, `while`, `for`, `match` (id: the pair of lines, -1 for leaving the function).
NAME = "__patchgate_%s__" % os.urandom(8).hex()
PLANS = {}
def probe(node, value):
    call = ast.Expr(ast.Call(ast.Attribute(ast.Name(NAME, ast.Load()), "add", ast.Load()), [ast.Constant(value)], []))
    return ast.fix_missing_locations(ast.copy_location(call, node))
def visit(tree, lines, edit):
    """The probes of `lines` in `tree` ({statement line: its changed lines}, {(from, to)}),
    put into the tree when `edit`."""
    stmts, branches = {}, set()
    def own(start, end):
        return [n for n in range(start, end + 1) if n in lines]
    def first(items):
        return items[0].lineno if items else None
    def head(s):
        # The last line of a statement's own part: a compound statement's head (its test, its
        # target, its arguments), not the comments between it and its body.
        end = getattr(s, "lineno", 0)  # (a `case` has none of its own: its pattern's)
        for field, value in ast.iter_fields(s):
            if field not in ("body", "orelse", "finalbody", "handlers", "cases"):
                for v in value if isinstance(value, list) else [value]:
                    if isinstance(v, ast.AST):
                        end = max([end] + [getattr(n, "end_lineno", None) or end for n in ast.walk(v)])
        return end
    def block(items, after, entry=()):
        out = [probe(items[0], v) for v in entry] if edit and items else []
        for i, s in enumerate(items):
            nxt = items[i + 1].lineno if i + 1 < len(items) else after
            if isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant) and isinstance(s.value.value, str):
                out.append(s)
                continue
            subs = [b for b in (getattr(s, "body", None), getattr(s, "orelse", None), getattr(s, "finalbody", None))
                    if isinstance(b, list) and b]
            subs += [h.body for h in getattr(s, "handlers", [])] + [c.body for c in getattr(s, "cases", [])]
            start = min([s.lineno] + [d.lineno for d in getattr(s, "decorator_list", [])])
            mine = own(start, head(s) if subs else (s.end_lineno or s.lineno))
            if mine:
                stmts[s.lineno] = mine
                if edit:
                    out.append(probe(s, s.lineno))
            if isinstance(s, (ast.If, ast.While, ast.For, ast.AsyncFor)):
                loop = not isinstance(s, ast.If)
                taken, other = (s.lineno, s.body[0].lineno), (s.lineno, first(s.orelse) or nxt)
                # `while True:` has no way out but `break`.
                endless = isinstance(s, ast.While) and isinstance(s.test, ast.Constant) and bool(s.test.value)
                if mine:
                    branches.update((taken,) if endless else (taken, other))
                s.body = block(s.body, s.lineno if loop else nxt, [taken] if mine else [])
                if s.orelse:
                    s.orelse = block(s.orelse, nxt, [other] if mine else [])
                elif mine and edit and not endless:
                    s.orelse = [probe(s, other)]
            elif isinstance(s, ast.Match):
                for c in s.cases:
                    way, case = (s.lineno, c.body[0].lineno), c.pattern.lineno
                    cmine = own(case, head(c))
                    if cmine:
                        stmts[case] = cmine
                    if mine:
                        branches.add(way)
                    c.body = block(c.body, nxt, ([way] if mine else []) + ([case] if cmine else []))
            else:
                for h in getattr(s, "handlers", []):
                    hmine = own(h.lineno, head(h))
                    if hmine:
                        stmts[h.lineno] = hmine
                    h.body = block(h.body, nxt, [h.lineno] if hmine else [])
                leaves = isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef))
                for field in ("body", "orelse", "finalbody"):
                    sub = getattr(s, field, None)
                    if isinstance(sub, list) and sub:
                        setattr(s, field, block(sub, -1 if leaves else nxt))
            out.append(s)
        return out
    # `from __future__` imports stay first: probes of what precedes them go after them.
    at = max((i + 1 for i, s in enumerate(tree.body) if isinstance(s, ast.ImportFrom) and s.module == "__future__"), default=0)
    early = block(tree.body[:at], first(tree.body[at:]) or -1)
    rest = block(tree.body[at:], -1)
    moved = [s for s in early if s.__class__ is ast.Expr and getattr(getattr(s.value, "func", None), "value", None) is not None
             and getattr(s.value.func.value, "id", None) == NAME]
    tree.body = [s for s in early if not any(s is m for m in moved)] + moved + rest
    return stmts, branches
class Loader(importlib.machinery.SourceFileLoader):
    def get_code(self, fullname):
        # Compiled from the source every time: no bytecode cache read or written.
        real = os.path.realpath(self.path)
        if real == MUTATED:
            text = self.get_data(self.path)
            return compile(text[:MUTANT[1]] + MUTANT[3] + text[MUTANT[2]:], self.path, "exec", dont_inherit=True)
        try:
            tree = ast.parse(self.get_data(self.path), self.path)
            PLANS[real] = visit(tree, WATCHED[real], True)
            return compile(tree, self.path, "exec", dont_inherit=True)
        except Exception:
            # Whatever the probes cannot be put into loads as it is, and none of its changed
            # lines counts as run: never a failure the plain run would not have.
            PLANS[real] = ({n: [n] for n in WATCHED[real]}, set())
            return super().get_code(fullname)
    def exec_module(self, module):
        real = os.path.realpath(self.path)
        if real in HITS:
            module.__dict__[NAME] = HITS[real]
        super().exec_module(module)
class Finder(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        spec = importlib.machinery.PathFinder.find_spec(name, path, target)
        if spec is not None and spec.origin and os.path.realpath(spec.origin) in LOADED:
            spec.loader = Loader(name, spec.origin)
        return spec
MUTATED = os.path.realpath(MUTANT[0]) if MUTANT else None
WATCHED = {os.path.realpath(p): lines for p, lines in watch.items()}
LOADED = set(WATCHED) | ({MUTATED} if MUTATED else set())
NAMES = {os.path.realpath(p): p for p in watch}
# Each file's own hits, and by test: two files' line 3 are two statements.
HITS = {real: set() for real in WATCHED}
SEEN = {real: {} for real in WATCHED}
FINDER = Finder()
if LOADED:
    sys.meta_path.insert(0, FINDER)
import pytest
CONTEXT = ""
def switch(ctx):
    global CONTEXT
    for real, hits in HITS.items():
        for h in hits:
            SEEN[real].setdefault(h, set()).add(CONTEXT)
        hits.clear()
    CONTEXT = ctx
if LOADED:
    class First:
        # First again once pytest's assertion rewriter is in: it takes the files named on the
        # command line (`--doctest-modules pkg/mod.py`), and would load them without probes.
        @pytest.hookimpl(tryfirst=True)
        def pytest_sessionstart(self, session):
            if FINDER in sys.meta_path:
                sys.meta_path.remove(FINDER)
            sys.meta_path.insert(0, FINDER)
    plugins.append(First())
if watch:
    class Contexts:
        # One context per test, switched by pytest's own protocol (setup, call, teardown).
        @pytest.hookimpl(hookwrapper=True)
        def pytest_runtest_protocol(self, item, nextitem):
            switch(ident(item))
            yield
            switch("")
    plugins.append(Contexts())
# The code under test sees the argv a plain `python -m pytest ARGS` gives it: neither this
# driver's arguments nor whether it keeps only a mutant's tests.
sys.argv = [os.path.join(os.path.dirname(pytest.__file__), "__main__.py")] + args
try:
    code = pytest.main(args, plugins=plugins)
finally:
    if watch:
        switch("")
        files = {}
        for real, lines in WATCHED.items():
            if real not in PLANS:
                # Never imported: its probes as its text has them, none of them hit.
                try:
                    PLANS[real] = visit(ast.parse(open(real, "rb").read(), real), lines, False)
                except (OSError, SyntaxError, ValueError, RecursionError):
                    # Not read as Python reads it: every changed line is code no check ran.
                    PLANS[real] = ({n: [n] for n in lines}, set())
            stmts, branches = PLANS[real]
            executed, missing, contexts = [], [], {}
            for at, mine in stmts.items():
                ran = SEEN[real].get(at)
                for n in mine:
                    (executed if ran else missing).append(n)
                    if ran:
                        contexts[str(n)] = sorted(ran)
            files[NAMES[real]] = {
                "executed_lines": sorted(executed), "missing_lines": sorted(missing), "contexts": contexts,
                "missing_branches": sorted([f, t] for (f, t) in branches if (f, t) not in SEEN[real])}
        with open(out, "w") as f:
            json.dump({"files": files}, f)
sys.exit(int(code))
"#;

/// The check id of code run when its module was imported (no test ran it).
pub(super) const IMPORT: &str = "(import)";

/// Where the observed run writes its report: beside its receipt (`{junit}` + this).
pub(super) const REPORT_SUFFIX: &str = ".observe.json";

/// The largest observed-run report read.
const MAX_REPORT_BYTES: u64 = 64 << 20;

/// The suite command `argv` (`python [flags] -m pytest ARGS`) as the observed run of the
/// changed lines `files` (by file): the same interpreter and flags, pytest's same arguments.
/// `None` when it does not run pytest that way.
pub fn observed_argv(
    argv: &[String],
    files: &BTreeMap<String, BTreeSet<u32>>,
) -> Option<Vec<String>> {
    let at = crate::cli::runner::pytest_module_at(argv)?;
    let (python, rest) = argv.split_at(at);
    let pytest_args = rest.get(2..)?;
    let mut out: Vec<String> = python.to_vec();
    out.extend(["-c".to_owned(), DRIVER.to_owned()]);
    // (The report's path is the first argument: it is never `--select`.)
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

/// The suite command `argv` as a patch mutant's run: the same interpreter, flags and pytest
/// arguments, only the tests `checks` kept, and the mutant (`file`'s bytes `start..end`
/// replaced) applied as the import system loads the file, never written to it. `None` when it
/// does not run pytest that way, or there is no test to keep.
pub(super) fn selecting_argv(
    argv: &[String],
    checks: &[String],
    (file, m): (&str, &crate::cli::reading::patch_mutants::PatchMutant),
) -> Option<Vec<String>> {
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
    let hex: String = m.replacement.bytes().map(|b| format!("{b:02x}")).collect();
    out.extend([
        "--mutant".to_owned(),
        file.to_owned(),
        m.start.to_string(),
        m.end.to_string(),
        hex,
    ]);
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
fn read_report(path: &Path) -> Result<Report, CliError> {
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
        return Ok(Watched::default());
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
        let out = observed_argv(&argv, &files).unwrap();
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
        assert!(observed_argv(&cargo, &files).is_none());
        // `-m pytest` must be the module pytest, not an argument that says so.
        let odd: Vec<String> = ["python3", "-m", "pytest_x"].map(String::from).to_vec();
        assert!(observed_argv(&odd, &files).is_none());
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
            observed_argv(&argv, &w.files).unwrap(),
            &receipt,
        );
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stdout)
        );
        let w = Watched {
            config: Some(ObserveConfig {
                changes: crate::core::gate::ObserveRule::Required,
                branches: crate::core::gate::ObserveRule::Listed,
                mutants: 0,
            }),
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
