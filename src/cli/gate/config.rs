//! `patchgate.toml`: the gate's configuration, always read from the base commit.

use std::time::Duration;

use crate::core::runs::CatchCodes;
use serde::Deserialize;

use crate::cli::sandbox::SandboxConfig;
use crate::core::path::RepoPath;

/// The default config file name, at the repository root.
pub const CONFIG_FILE: &str = "patchgate.toml";

/// `patchgate.toml`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GateConfig {
    /// The fixtures directory, sealed as the coreutils pipeline seals it.
    #[serde(default = "default_fixtures")]
    pub fixtures: String,
    /// The committed seal file of the fixtures (`HEX  -`).
    #[serde(default = "default_expected_seal")]
    pub expected_seal: String,
    /// The property catalog (YAML or JSON).
    #[serde(default = "default_catalog")]
    pub catalog: String,
    /// The freeze ledger (YAML or JSON); absent from the base commit means empty.
    #[serde(default = "default_ledger")]
    pub ledger: String,
    /// The freeze-debt cap (default: the server's setting; 5 locally).
    pub debt_cap: Option<u64>,
    /// More paths (files or directories) a patch may not edit, beside the config, catalog,
    /// ledger and expected seal, which always are.
    #[serde(default)]
    pub guarded: Vec<String>,
    /// Paths (files or directories) no property could observe (docs): a patch that changes
    /// only these, and that no property observes, skips the property tier; the suite decides.
    #[serde(default)]
    pub inert: Vec<String>,
    /// A strong property votes only with its two-commit proof (`admitted` in the catalog,
    /// written by `patchgate admit --write`); without one it votes as weak.
    #[serde(default)]
    pub require_admission: bool,
    /// Shadow mode for every gate on this base (`patchgate gate --shadow`): decisions are made
    /// and reported as "would ...", and the exit code is 0.
    #[serde(default)]
    pub shadow: bool,
    /// Built once on the judged tree before any property runs (CONTRACT.md section 11.8).
    pub build: Option<BuildConfig>,
    /// A check that fails in the base and must still fail on the patch (section 11.5).
    pub canary: Option<CanaryConfig>,
    pub properties: PropertiesConfig,
    pub suite: SuiteConfig,
    /// Where the code under test runs (CONTRACT.md section 12.2).
    #[serde(default)]
    pub sandbox: SandboxConfig,
    /// Code that behaves differently under test (CONTRACT.md section 11.6).
    #[serde(default)]
    pub suspicious: SuspiciousConfig,
}

/// `[suspicious]`: regular expressions matched against the lines a patch adds to files that
/// are not test-adjacent.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SuspiciousConfig {
    /// Absent: [`SUSPICIOUS_DEFAULTS`]; `[]` turns the rule off.
    pub patterns: Option<Vec<String>>,
}

/// The default `[suspicious] patterns`, for Python and Rust: code that asks whether a test
/// runner is loaded or what test is running, inspects its callers, or leaves the process
/// before the runner can report.
pub const SUSPICIOUS_DEFAULTS: [&str; 9] = [
    r"^\s*(import|from)\s+(pytest|_pytest|hypothesis|unittest)\b",
    r#"["'](pytest|_pytest|hypothesis|unittest)["']"#,
    r"PYTEST_CURRENT_TEST|PYTEST_VERSION",
    r"sys\.modules\b",
    r"\bos\._exit\b",
    r"sys\.excepthook|sys\._getframe|inspect\.(stack|currentframe)",
    r"\bcfg!\s*\(\s*test\b",
    r"RUST_TEST_THREADS|NEXTEST",
    r"std::process::exit\s*\(\s*0\s*\)",
];

impl SuspiciousConfig {
    /// The patterns in force.
    pub fn patterns(&self) -> Vec<String> {
        self.patterns.clone().unwrap_or_else(|| {
            SUSPICIOUS_DEFAULTS
                .iter()
                .map(|p| (*p).to_owned())
                .collect()
        })
    }

    /// The patterns, compiled (an invalid one is a config error naming it).
    pub fn compiled(&self) -> Result<Vec<(String, regex::Regex)>, String> {
        self.patterns()
            .into_iter()
            .map(|p| match regex::Regex::new(&p) {
                Ok(r) => Ok((p, r)),
                Err(e) => Err(invalid(
                    "suspicious.patterns",
                    &format!("{p:?} is not a regular expression: {e}"),
                )),
            })
            .collect()
    }
}

/// `[build]`: the build step.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BuildConfig {
    /// argv (no shell), e.g. `cargo test --no-run`.
    pub command: Vec<String>,
    /// Its own timeout, outside the property timeouts (a cold compile takes long).
    #[serde(default = "default_suite_timeout")]
    pub timeout_s: f64,
    /// The exit codes that mean the code does not build (default: cargo's 101).
    #[serde(default = "default_build_catch")]
    pub catch: CatchCodes,
    /// Directories the build writes that a later build can start from (cargo: `target`):
    /// kept by `patchgate warm` from a build of the base, copied into every room.
    #[serde(default)]
    pub cache: Vec<String>,
}

fn default_build_catch() -> CatchCodes {
    CatchCodes::new([101]).unwrap_or_default()
}

impl BuildConfig {
    /// The build's timeout (checked when the config was read).
    pub fn timeout(&self) -> Duration {
        crate::cli::runner::timeout(self.timeout_s).unwrap_or(Duration::ZERO)
    }
}

/// `[canary]`: the check that proves the checker can still fail.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CanaryConfig {
    /// argv (no shell), with `{junit}`: its receipt must list its failure.
    pub command: Vec<String>,
    #[serde(default = "default_property_timeout")]
    pub timeout_s: f64,
    #[serde(default)]
    pub catch: CatchCodes,
    /// The canary's files: guarded, like a property's source.
    #[serde(default)]
    pub source: Vec<String>,
}

impl CanaryConfig {
    /// The canary's timeout (checked when the config was read).
    pub fn timeout(&self) -> Duration {
        crate::cli::runner::timeout(self.timeout_s).unwrap_or(Duration::ZERO)
    }
}

/// How each property runs.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PropertiesConfig {
    /// argv (no shell); `{id}` in any argument is replaced by the property id.
    pub command: Vec<String>,
    /// Runs per property, 2 to 10.
    #[serde(default = "default_runs")]
    pub runs: u8,
    /// Timeout of one run, in seconds.
    #[serde(default = "default_property_timeout")]
    pub timeout_s: f64,
    /// The exit codes that are a catch (default `[1]`; `cargo test`'s is 101).
    #[serde(default)]
    pub catch: CatchCodes,
    /// The test cases of property `{id}` in a run's receipt (`classname::name`, the case or
    /// a prefix of it up to `::` or `.`; pytest: `properties.test_{id}`, libtest:
    /// `integration::{id}`). Needed by a batched command (`{ids}`); when set, a property's
    /// run counts only as its own cases show it.
    pub case: Option<String>,
    /// Where `patchgate admit --write` stores each admitted property's mutant
    /// (`<mutants>/<id>.diff`), for the re-proof. Guarded.
    #[serde(default = "default_mutants")]
    pub mutants: String,
    /// How many admitted, in-locality properties are run again on the patch with their
    /// mutant applied, chosen at random (CONTRACT.md section 11.5): each must still catch.
    /// 0 turns the re-proof off.
    #[serde(default = "default_reprove")]
    pub reprove: u8,
}

fn default_mutants() -> String {
    "mutants".into()
}
fn default_reprove() -> u8 {
    1
}

/// How the fixture suite runs.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SuiteConfig {
    /// argv (no shell).
    pub command: Vec<String>,
    #[serde(default = "default_suite_timeout")]
    pub timeout_s: f64,
    #[serde(default)]
    pub catch: CatchCodes,
    /// The JUnit XML report the suite writes (repo-relative): failed test ids are read from
    /// it, as `classname::name`.
    pub junit: Option<String>,
    /// argv running one test (`patchgate admit --test ID`): `{id}` is the test id,
    /// `{classname}` and `{name}` its halves.
    pub test_command: Option<Vec<String>>,
    /// Arguments added to the suite's command once per frozen test, to re-run it without
    /// them (CONTRACT.md section 12.4): failures only frozen tests explain are discarded
    /// only when that re-run passes. `{nodeid}` is pytest's node id of the test
    /// (`tests/test_x.py::name`, found from the JUnit `classname::name` in the judged
    /// tree); `{id}`, `{classname}` and `{name}` as in `test_command`.
    pub deselect: Option<Vec<String>>,
    /// The census file (CONTRACT.md section 11.2, written by `patchgate census --write`):
    /// every test that passed on the base must run on the head. Guarded.
    pub census: Option<String>,
}

fn default_fixtures() -> String {
    "fixtures".into()
}
fn default_expected_seal() -> String {
    "fixtures.seal.expected".into()
}
fn default_catalog() -> String {
    "catalog.yaml".into()
}
fn default_ledger() -> String {
    "freeze-ledger.json".into()
}
fn default_runs() -> u8 {
    2
}
fn default_property_timeout() -> f64 {
    120.0
}
fn default_suite_timeout() -> f64 {
    900.0
}

impl PropertiesConfig {
    /// Where the mutant of property `id` is stored.
    pub fn mutant_path(&self, id: &str) -> String {
        format!("{}/{id}.diff", self.mutants.trim_end_matches('/'))
    }

    /// One run's timeout (checked when the config was read).
    pub fn timeout(&self) -> Duration {
        crate::cli::runner::timeout(self.timeout_s).unwrap_or(Duration::ZERO)
    }
}

impl SuiteConfig {
    /// The suite's timeout (checked when the config was read).
    pub fn timeout(&self) -> Duration {
        crate::cli::runner::timeout(self.timeout_s).unwrap_or(Duration::ZERO)
    }
}

/// A config error: the key, and what is wrong with it.
pub fn invalid(key: &str, what: &str) -> String {
    format!("{CONFIG_FILE}: `{key}` {what}")
}

impl GateConfig {
    /// Parses and checks a config; the error is one line naming the key.
    pub fn parse(text: &str, name: &str) -> Result<Self, String> {
        let config: GateConfig = toml::from_str(text).map_err(|e| {
            // toml's message spans lines (it quotes the source); one line is enough here.
            let msg = e.message().to_owned();
            let line = e
                .span()
                .map(|s| text[..s.start.min(text.len())].matches('\n').count() + 1);
            match line {
                Some(l) => format!("{name} line {l}: {msg}"),
                None => format!("{name}: {msg}"),
            }
        })?;
        config.check()?;
        Ok(config)
    }

    fn check(&self) -> Result<(), String> {
        for (key, path) in [
            ("fixtures", &self.fixtures),
            ("expected_seal", &self.expected_seal),
            ("catalog", &self.catalog),
            ("ledger", &self.ledger),
            ("properties.mutants", &self.properties.mutants),
        ] {
            RepoPath::parse(path).map_err(|e| invalid(key, &format!("{path:?} {e}")))?;
        }
        if let Some(j) = &self.suite.junit {
            RepoPath::parse(j).map_err(|e| invalid("suite.junit", &format!("{j:?} {e}")))?;
            if crate::cli::runner::receipted(&self.suite.command) {
                return Err(invalid(
                    "suite.junit",
                    "is for a command without `{junit}`: this one writes its report to the receipt path",
                ));
            }
        }
        for g in &self.guarded {
            RepoPath::parse(g).map_err(|e| invalid("guarded", &format!("{g:?} {e}")))?;
        }
        for i in &self.inert {
            RepoPath::parse(i).map_err(|e| invalid("inert", &format!("{i:?} {e}")))?;
        }
        if let Some(c) = &self.suite.census {
            RepoPath::parse(c).map_err(|e| invalid("suite.census", &format!("{c:?} {e}")))?;
            if !crate::cli::runner::receipted(&self.suite.command) {
                return Err(invalid(
                    "suite.census",
                    "needs the suite's receipt: put `{junit}` in `[suite] command`",
                ));
            }
        }
        let p = &self.properties;
        if p.command.is_empty() {
            return Err(invalid(
                "properties.command",
                "must name a program (an argv list)",
            ));
        }
        let batched = crate::cli::runner::batched(&p.command);
        if !batched && !p.command.iter().any(|a| a.contains("{id}")) {
            return Err(invalid(
                "properties.command",
                "must contain `{id}` (replaced by each property's id) or `{ids}` (one argument per property, several in one run), or every property would run the same command",
            ));
        }
        if batched {
            if p.command.iter().any(|a| a.contains("{id}")) {
                return Err(invalid(
                    "properties.command",
                    "holds both `{ids}` and `{id}`: a batched command names its properties with `{ids}` only",
                ));
            }
            if !crate::cli::runner::receipted(&p.command) {
                return Err(invalid(
                    "properties.command",
                    "with `{ids}` must contain `{junit}`: in a batch, each property's outcome is read from its own test cases in the receipt",
                ));
            }
            if p.case.is_none() {
                return Err(invalid(
                    "properties.case",
                    "is needed with `{ids}`: it names a property's test cases in the receipt (pytest: \"properties.test_{id}\")",
                ));
            }
        }
        if let Some(case) = &p.case {
            if !case.contains("{id}") {
                return Err(invalid(
                    "properties.case",
                    &format!("{case:?} must contain `{{id}}` (each property's cases are its own)"),
                ));
            }
            if !crate::cli::runner::receipted(&p.command) {
                return Err(invalid(
                    "properties.case",
                    "names test cases in the receipt: put `{junit}` in `[properties] command`",
                ));
            }
        }
        if !(2..=10).contains(&p.runs) {
            return Err(invalid("properties.runs", "must be 2 to 10"));
        }
        if let Some(t) = &self.suite.test_command
            && (t.is_empty()
                || !t.iter().any(|a| {
                    ["{id}", "{classname}", "{name}"]
                        .iter()
                        .any(|p| a.contains(p))
                }))
        {
            return Err(invalid(
                "suite.test_command",
                "must name a program and contain `{id}`, `{classname}` or `{name}` (the test to run)",
            ));
        }
        if self.suite.command.is_empty() {
            return Err(invalid(
                "suite.command",
                "must name a program (an argv list)",
            ));
        }
        for e in &self.sandbox.env {
            let name = e.split_once('=').map_or(e.as_str(), |(n, _)| n);
            if name.is_empty() || !name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_') {
                return Err(invalid(
                    "sandbox.env",
                    &format!("{e:?} is not NAME or NAME=value"),
                ));
            }
            if name.starts_with("PATCHGATE_") {
                return Err(invalid(
                    "sandbox.env",
                    &format!("{e:?}: the runner's own settings never reach the code under test"),
                ));
            }
        }
        if let Some(d) = &self.suite.deselect
            && (d.is_empty() || !d.iter().any(|a| a.contains('{')))
        {
            return Err(invalid(
                "suite.deselect",
                "must contain `{id}`, `{classname}`, `{name}` or `{nodeid}` (the frozen test to leave out)",
            ));
        }
        self.suspicious.compiled()?;
        for (key, t) in [
            ("properties.timeout_s", p.timeout_s),
            ("suite.timeout_s", self.suite.timeout_s),
            (
                "build.timeout_s",
                self.build.as_ref().map_or(1.0, |b| b.timeout_s),
            ),
        ] {
            crate::cli::runner::timeout(t).map_err(|why| invalid(key, &why))?;
        }
        if let Some(c) = &self.canary {
            if !crate::cli::runner::receipted(&c.command) {
                return Err(invalid(
                    "canary.command",
                    "must contain `{junit}`: a canary counts only when its receipt lists its failure",
                ));
            }
            crate::cli::runner::timeout(c.timeout_s)
                .map_err(|why| invalid("canary.timeout_s", &why))?;
            for p in &c.source {
                RepoPath::parse(p).map_err(|e| invalid("canary.source", &format!("{p:?} {e}")))?;
            }
        }
        for c in self.build.iter().flat_map(|b| &b.cache) {
            RepoPath::parse(c).map_err(|e| invalid("build.cache", &format!("{c:?} {e}")))?;
        }
        if self.build.as_ref().is_some_and(|b| b.command.is_empty()) {
            return Err(invalid(
                "build.command",
                "must name a program (an argv list)",
            ));
        }
        Ok(())
    }

    /// The build cache `patchgate warm` kept for `[build] cache`, if any.
    pub fn build_cache(&self) -> Option<crate::cli::build_cache::BuildCache> {
        crate::cli::build_cache::BuildCache::find(self.build.as_ref().map_or(&[], |b| &b.cache))
    }

    /// Every guarded path: the config itself, the catalog, the ledger, the expected seal, and
    /// the extra ones.
    pub fn guarded(&self, config_path: &str) -> Vec<String> {
        let mut all = vec![
            config_path.to_owned(),
            self.catalog.clone(),
            self.ledger.clone(),
            self.expected_seal.clone(),
        ];
        all.extend(self.suite.census.clone());
        all.push(self.properties.mutants.clone());
        for c in self.canary.iter().flat_map(|c| &c.source) {
            if !all.contains(c) {
                all.push(c.clone());
            }
        }
        for g in &self.guarded {
            if !all.contains(g) {
                all.push(g.clone());
            }
        }
        all
    }
}

/// What `patchgate init` writes: a commented starter for a Python repository (pytest), with a
/// Rust (`cargo test`) variant in comments.
/// The canary `patchgate init --rust` writes (`tests/patchgate_canary.rs`).
pub const CANARY_RS: &str = r#"//! patchgate's canary (CONTRACT.md section 11.5): this test must FAIL.
//!
//! The gate runs it on every patch before any property. If it passes, or leaves no report,
//! something in the patch switched the checker off (an exit under test, a harness turned off),
//! and the gate escalates `checker-neutered`. Call into your crate below: whatever it does
//! under test, it then does here too.

#[test]
fn patchgate_canary() {
    // let _ = mycrate::some_function();  // your crate: make the canary see what it does
    let n: u64 = std::hint::black_box(10);
    assert!(n < 10, "the canary fails, as it must");
}
"#;

/// What `patchgate init --rust` writes: the starter for a Rust repository (cargo test; its
/// receipts from libtest's JUnit output).
pub const STARTER_RUST: &str = r#"# patchgate.toml for a Rust repository: the patch gate's configuration, read FROM THE BASE
# COMMIT, never from the patch (see the Python starter, `patchgate init`, for every key).
fixtures = "fixtures"
expected_seal = "fixtures.seal.expected"
catalog = "catalog.yaml"
ledger = "freeze-ledger.json"
debt_cap = 5
guarded = [".github/workflows"]
inert = ["docs"]          # a patch only here that no property observes: the suite decides
require_admission = false

# Built once, before any property, with its own timeout (CONTRACT.md section 11.8): a patch that
# does not compile is BLOCK does-not-build (the compiler's last lines in the report), never a
# broken invariant, and a cold compile never times a property out.
# `cache`: what `patchgate warm` keeps from a build of the base (run it where main moves) and
# every room starts from, so a gate compiles what the patch changed; a gate never writes it.
[build]
command = ["cargo", "test", "--no-run", "--quiet", "--offline"]
catch = [101]
timeout_s = 900
cache = ["target"]

# Receipts (section 11.1): libtest writes its JUnit report to stdout with
# `-Z unstable-options --format junit` (RUSTC_BOOTSTRAP=1 below lets a stable toolchain's test
# binaries take it), redirected to `{junit}`, a fresh path outside the tree. A run that leaves
# no report (a mutant that does not compile, `process::exit` under test, a test binary with
# `harness = false`) ran nothing: it counts as null. One property is one test: `{ids}` gives
# every property of a run to one test binary (`--exact a b`), and `case` finds each one's case.
[properties]
command = ["sh", "-c", "out=$1; shift; exec cargo test --quiet --offline --test properties -- -Z unstable-options --format junit --exact \"$@\" > \"$out\"", "sh", "{junit}", "{ids}"]
case = "integration::{id}"
runs = 2
timeout_s = 300
catch = [101]        # cargo test fails with 101
reprove = 1
mutants = "mutants"

[suite]
# Every test of the crate but the canary; a re-run's deselected tests arrive as "$@".
command = ["sh", "-c", "out=$1; shift; exec cargo test --quiet --offline -- -Z unstable-options --format junit --skip patchgate_canary \"$@\" > \"$out\"", "sh", "{junit}"]
timeout_s = 900
catch = [101]
census = "suite.census"
test_command = ["sh", "-c", "exec cargo test --quiet --offline -- -Z unstable-options --format junit --exact \"$1\" > \"$2\"", "sh", "{name}", "{junit}"]
deselect = ["--skip", "{name}"]

[canary]
# tests/patchgate_canary.rs, written by `patchgate init --rust`: a test that must fail. Make it
# call into your crate. Guarded.
command = ["sh", "-c", "exec cargo test --quiet --offline --test patchgate_canary -- -Z unstable-options --format junit > \"$1\"", "sh", "{junit}"]
catch = [101]
timeout_s = 300
source = ["tests/patchgate_canary.rs"]

[sandbox]
mode = "required"
network = false
env = ["RUSTC_BOOTSTRAP=1"]
"#;

/// The canary `patchgate init` writes beside the starter (Python: pytest + hypothesis).
pub const CANARY_PY: &str = r#""""patchgate's canary (CONTRACT.md section 11.5): this test must FAIL.

The gate runs it on every patch before any property. If it passes, is skipped, or leaves no
report, something in the patch switched the checker off, and the gate escalates
`checker-neutered`. Import your package below: whatever it does when imported under test
(leave early, patch the test runner, empty the property engine), it then does here too.
"""

from hypothesis import given, settings, strategies as st

# import mypackage  # noqa: F401  (your package: make the canary see what it does at import)


@settings(database=None, derandomize=True)
@given(st.integers(min_value=0))
def test_patchgate_canary(n):
    assert n < 10, "the canary fails, as it must"
"#;

pub const STARTER: &str = r#"# patchgate.toml: the patch gate's configuration.
#
# patchgate reads this file FROM THE BASE COMMIT (`git show BASE:patchgate.toml`), never from
# the patch: a patch cannot loosen its own gate. The same holds for the catalog, the ledger and
# the expected seal named below; a patch that edits any of them (or a path in `guarded`, or a
# property's `source` in the catalog) escalates to a human.
#
#   patchgate gate --base origin/main            # gate the checked-out patch
#   patchgate gate --base origin/main --dry-run  # print the plan, run nothing

# The fixtures directory, sealed exactly as
#   LC_ALL=C find fixtures -type f ! -name '*.seal' -print0 | LC_ALL=C sort -z | xargs -0 sha256sum | sha256sum
# and its committed seal (write it with `patchgate seal fixtures > fixtures.seal.expected`).
fixtures = "fixtures"
expected_seal = "fixtures.seal.expected"

# The property catalog (YAML or JSON):
#   properties:
#     - id: sort_is_ordered
#       strength: strong            # strong properties fill the quorum; weak ones may only reject
#       locality: [src/mypkg/sort]  # path prefixes (whole segments) the property observes
#       source: [properties/test_sort_is_ordered.py]   # guarded like the catalog
catalog = "catalog.yaml"

# The freeze ledger (YAML or JSON): a list of rows, each freezing a property
# ({property_id, state}) or a test of the suite ({test_id, covers, state}). Absent = empty.
ledger = "freeze-ledger.json"

# The queue stops (exit 3) when freeze debt goes over this.
debt_cap = 5

# More paths a patch may not edit (files or directories).
guarded = [".github/workflows"]

# Paths no property could observe (files or directories). A patch that changes only these, and
# that no property's locality covers, skips the property tier: the suite decides (the seal,
# debt, guard, receipts and canary still apply). Any other change no strong property observes
# escalates and the report names the files: add a property whose locality covers them.
inert = ["docs"]

# Admission (off by default). When true, a strong property votes only with its two-commit
# proof: the `admitted` record that `patchgate admit ID --mutant REF --write` adds to its
# catalog row once the property passed on the base and failed on a commit that deletes its
# invariant, on the same sealed fixtures. A strong property without one votes as weak (it may
# reject a patch, it never fills the quorum) and the report lists it as unproven. Admit your
# strong properties first, then turn this on.
require_admission = false

# Shadow mode: every gate on this base makes its real decision and reports it as "would BLOCK"
# (or ESCALATE, STOP_QUEUE) with exit 0, so a team can watch it before it blocks anyone (also
# `patchgate gate --shadow`). Set it back to false to enforce.
shadow = false

[properties]
# argv, no shell. `{ids}` names the properties to run: the argument holding it is repeated once
# per in-locality, not-frozen property, so each of the `runs` runs is one process for all of
# them (a pytest start is paid once, not once per property); `case` names a property's test
# cases in the receipt (pytest's classname of properties/test_X.py is properties.test_X), and
# each property's outcome in a run is its own cases'. (`{id}` instead runs one process per
# property and run.) Every run is in its own process group, in the sandbox below, on a copy of
# the tree that would land (the merge of the patch into the base).
# Python runs with a safe import path: `-P` (the working directory is not first on sys.path, so
# a committed `pytest.py` cannot shadow pytest), `-s` (no user site), hash-checked bytecode, and
# pytest's plugin autoload off (see [sandbox] env) with the plugins it needs named (`-p`). With
# `-P`, make your package importable the way pytest documents: installed, a `pythonpath` in its
# config, or an `__init__.py` in the test directories (rootdir-based import).
# `{junit}` is the run's receipt: a fresh path outside the tree where it must write its JUnit
# report. A run counts only as its report shows it: exit 0 with at least one test run and none
# failed or skipped; a failure with the failed test listed. Anything else is a run nobody can
# vouch for (null). Without `{junit}` exit codes are read as they are (`receipts: off`).
command = ["python3", "-P", "-s", "--check-hash-based-pycs", "always", "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "_hypothesis_pytestplugin", "--junitxml={junit}", "properties/test_{ids}.py"]
case = "properties.test_{id}"
runs = 2
timeout_s = 120
catch = [1]          # pytest fails with 1; its 2-5 are a broken harness, never a failure
# The re-proof: before a pass is trusted, `reprove` admitted, in-locality properties (chosen at
# random) run once more on the patch with their admission mutant applied, and must still catch
# it: a property that can no longer fail (an `__eq__` that always agrees) escalates
# `checker-neutered`. `patchgate admit ID --mutant REF --write` stores each mutant in
# `mutants/ID.diff`, guarded; commit it with the catalog. 0 turns the re-proof off.
reprove = 1
mutants = "mutants"

[suite]
# The fixture suite (t2), with its receipt (`{junit}`, as above): failed test ids come from
# it, as classname::name (pytest: `tests.test_api::test_retry`); a ledger test row names a test
# the same way. Its skips are allowed (the census judges them).
command = ["python3", "-P", "-s", "--check-hash-based-pycs", "always", "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "_hypothesis_pytestplugin", "--junitxml={junit}", "tests"]
timeout_s = 900
catch = [1]
# The census: every test that passed on the base must run on the patch (absent or skipped, it
# vanished, and the suite proves nothing). Write it with `patchgate census --write`, commit it
# beside the expected seal, and refresh it when the base's tests change; it is guarded.
census = "suite.census"
# One test of the suite, for `patchgate admit --test ID` (the freeze rule's seeded-bug proof):
# `{id}` is the test id (classname::name), `{classname}` and `{name}` its two halves.
test_command = ["python3", "-P", "-s", "--check-hash-based-pycs", "always", "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "_hypothesis_pytestplugin", "--junitxml={junit}", "tests", "-k", "{name}"]
# Added once per frozen test to re-run the suite without them: a failure only frozen tests
# explain is discarded only when that re-run passes (`{nodeid}`: pytest's node id of the test).
deselect = ["--deselect", "{nodeid}"]

[canary]
# A check that must fail (CONTRACT.md section 11.5): run on the patch before any property, it
# must still fail, with its failure listed in its receipt. If the patch switches the checker off
# (an early exit under test, the property engine's phases emptied, failures turned into skips,
# a plugin or config that runs nothing), the canary stops failing, and the gate escalates
# `checker-neutered`. `patchgate init` writes the canary file; make it import your package, so
# whatever the package does at import time, it does to the canary too. Its files are guarded.
command = ["python3", "-P", "-s", "--check-hash-based-pycs", "always", "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "_hypothesis_pytestplugin", "--junitxml={junit}", "properties/test_patchgate_canary.py"]
catch = [1]
timeout_s = 120
source = ["properties/test_patchgate_canary.py"]

[sandbox]
# Every run happens in a sandbox (bubblewrap: `apt-get install bubblewrap`): a fresh copy of the
# tree, no `.git`, new PID/IPC/network namespaces, a private HOME and /tmp, the rest of the
# machine read-only, the environment cleared but for PATH, LANG, the toolchain locations and
# what `env` names (never PATCHGATE_*). "required" refuses to run without it (exit 69); "off"
# runs the code under test with your user and files, and every answer says `sandbox: off`.
# Runs may be under way at once (`patchgate gate --jobs`, default: the cores): the property runs
# share the copy, as re-runs on one checkout do, and each has its own /tmp, where hypothesis
# keeps its example database here, so no run replays what another found.
mode = "required"
network = false
env = ["PYTEST_DISABLE_PLUGIN_AUTOLOAD=1", "HYPOTHESIS_STORAGE_DIRECTORY=/tmp/hypothesis"]

[suspicious]
# A line the patch adds to code (a file that is not test-adjacent) that matches one of these
# regular expressions escalates `test-aware-code` before anything runs, naming file, line and
# pattern: code that asks whether a test runner is loaded, inspects its callers, or leaves the
# process early can be right under test and wrong in production, and no run can see that.
# (These are the defaults when the section is absent; `patterns = []` turns the rule off.)
patterns = [
  '^\s*(import|from)\s+(pytest|_pytest|hypothesis|unittest)\b',
  '''["'](pytest|_pytest|hypothesis|unittest)["']''',
  'PYTEST_CURRENT_TEST|PYTEST_VERSION',
  'sys\.modules\b',
  '\bos\._exit\b',
  'sys\.excepthook|sys\._getframe|inspect\.(stack|currentframe)',
  '\bcfg!\s*\(\s*test\b',
  'RUST_TEST_THREADS|NEXTEST',
  'std::process::exit\s*\(\s*0\s*\)',
]

# A Rust repository instead (examples/gate-rust): build once, then read libtest's JUnit output
# as the receipt (RUSTC_BOOTSTRAP=1 lets a stable toolchain's test binaries write it):
# [build]
# command = ["cargo", "test", "--no-run", "--quiet", "--offline"]
# catch = [101]      # a compile error: BLOCK does-not-build
# timeout_s = 900
# cache = ["target"]  # kept by `patchgate warm` from a build of the base
# [properties]
# command = ["sh", "-c", "out=$1; shift; exec cargo test --quiet --offline --test properties -- -Z unstable-options --format junit --exact \"$@\" > \"$out\"", "sh", "{junit}", "{ids}"]
# case = "integration::{id}"   # libtest's classname of an integration test
# catch = [101]      # cargo test fails with 101
# [suite]
# command = ["sh", "-c", "out=$1; shift; exec cargo test --quiet --offline -- -Z unstable-options --format junit \"$@\" > \"$out\"", "sh", "{junit}"]
# catch = [101]      # (a re-run's deselected tests arrive as "$@")
# test_command = ["sh", "-c", "exec cargo test --quiet --offline -- -Z unstable-options --format junit --exact \"$1\" > \"$2\"", "sh", "{name}", "{junit}"]
# deselect = ["--skip", "{name}"]
# [canary]           # tests/patchgate_canary.rs: #[test] fn patchgate_canary() { assert!(false, "must fail") }
# command = ["sh", "-c", "exec cargo test --quiet --offline --test patchgate_canary -- -Z unstable-options --format junit > \"$1\"", "sh", "{junit}"]
# catch = [101]
# source = ["tests/patchgate_canary.rs"]
# [sandbox]
# env = ["RUSTC_BOOTSTRAP=1"]
# (cargo-nextest writes JUnit to a path its config names, `[profile.ci.junit]` in
# .config/nextest.toml: point a wrapper at {junit}, or use the libtest form above.)
"#;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::sandbox::SandboxMode;

    #[test]
    fn the_starter_is_a_valid_config() {
        let c = GateConfig::parse(STARTER, "patchgate.toml").unwrap();
        assert_eq!(c.properties.runs, 2);
        assert!(!c.require_admission, "admission is off by default");
        assert!(c.suite.test_command.is_some());
        assert_eq!(
            c.sandbox.mode,
            SandboxMode::Required,
            "the starter's sandbox is required"
        );
        assert!(!c.sandbox.network);
        let canary = c.canary.as_ref().expect("the starter's canary");
        for argv in [&c.properties.command, &c.suite.command, &canary.command] {
            assert!(crate::cli::runner::receipted(argv), "{{junit}} in {argv:?}");
            for safe in [
                "-P",
                "-s",
                "--check-hash-based-pycs",
                "_hypothesis_pytestplugin",
            ] {
                assert!(argv.iter().any(|a| a == safe), "{safe} in {argv:?}");
            }
        }
        assert_eq!(
            c.guarded("patchgate.toml"),
            [
                "patchgate.toml",
                "catalog.yaml",
                "freeze-ledger.json",
                "fixtures.seal.expected",
                "suite.census",
                "mutants",
                "properties/test_patchgate_canary.py",
                ".github/workflows"
            ]
        );
    }

    #[test]
    fn the_rust_starter_is_a_valid_config() {
        let c = GateConfig::parse(STARTER_RUST, "patchgate.toml").unwrap();
        let canary = c.canary.as_ref().expect("its canary");
        for argv in [&c.properties.command, &c.suite.command, &canary.command] {
            assert!(crate::cli::runner::receipted(argv), "{{junit}} in {argv:?}");
        }
        assert_eq!(
            c.build.as_ref().map(|b| b.catch.as_slice()),
            Some(&[101][..])
        );
        assert_eq!(c.properties.catch.as_slice(), &[101]);
        assert!(
            c.guarded("patchgate.toml")
                .contains(&"tests/patchgate_canary.rs".to_owned())
        );
    }

    #[test]
    fn an_error_names_the_key() {
        let base = STARTER.replace("runs = 2", "runs = 1");
        let e = GateConfig::parse(&base, "patchgate.toml").unwrap_err();
        assert!(e.contains("`properties.runs`"), "{e}");
        let typo = STARTER.replace("debt_cap = 5", "debt_cpa = 5");
        let e = GateConfig::parse(&typo, "patchgate.toml").unwrap_err();
        assert!(e.contains("debt_cpa") && !e.contains('\n'), "{e}");
        let bare = STARTER.replace("\"tests\", \"-k\", \"{name}\"]", "\"tests\"]");
        let e = GateConfig::parse(&bare, "patchgate.toml").unwrap_err();
        assert!(e.contains("`suite.test_command`"), "{e}");
        let abs = STARTER.replace("fixtures = \"fixtures\"", "fixtures = \"/etc\"");
        let e = GateConfig::parse(&abs, "patchgate.toml").unwrap_err();
        assert!(e.contains("`fixtures`"), "{e}");
    }

    /// Issue 26: a batched property command, and what it needs.
    #[test]
    fn a_batched_command_needs_its_receipt_and_its_case() {
        for starter in [STARTER, STARTER_RUST] {
            let c = GateConfig::parse(starter, "patchgate.toml").unwrap();
            assert!(crate::cli::runner::batched(&c.properties.command));
            assert!(c.properties.case.as_deref().unwrap().contains("{id}"));
        }
        let case = "case = \"properties.test_{id}\"\n";
        for (edit, key, what) in [
            (
                STARTER.replace(
                    "\"--junitxml={junit}\", \"properties/test_{ids}",
                    "\"properties/test_{ids}",
                ),
                "`properties.command`",
                "`{junit}`",
            ),
            (STARTER.replace(case, ""), "`properties.case`", "is needed"),
            (
                STARTER.replace(case, "case = \"properties.test\"\n"),
                "`properties.case`",
                "must contain `{id}`",
            ),
            (
                STARTER.replace(
                    "\"properties/test_{ids}.py\"]",
                    "\"properties/test_{ids}.py\", \"-k\", \"{id}\"]",
                ),
                "`properties.command`",
                "both",
            ),
        ] {
            let e = GateConfig::parse(&edit, "patchgate.toml").unwrap_err();
            assert!(e.contains(key) && e.contains(what), "{key}: {e}");
        }
    }
}
