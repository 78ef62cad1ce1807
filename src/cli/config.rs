//! `patchgate.toml`: the gate's configuration, always read from the base commit.

use std::time::Duration;

use crate::core::runs::CatchCodes;
use serde::Deserialize;

pub use super::config_observe::{ObserveConfig, ReplayConfig};

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
    /// Whether the checks ran the patch's changed code lines (issue 52): off when absent.
    pub observe: Option<ObserveConfig>,
    /// The changed code's calls made again outside the tests (issue 66): off when absent.
    pub replay: Option<ReplayConfig>,
}

/// `[suspicious]` (CONTRACT.md section 14.2): what the reading of the patch's code accepts
/// (`allow`) and the spelled checks it adds (`patterns`). The reading rules themselves are
/// always on.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SuspiciousConfig {
    /// Regular expressions matched against each line the patch adds to a file that is not
    /// test-adjacent (an extra, spelled check; none by default).
    pub patterns: Option<Vec<String>>,
    /// A reading rule accepted for a path (a file, or a directory and what is under it).
    #[serde(default)]
    pub allow: Vec<AllowRule>,
}

/// One `[suspicious] allow` entry: `{ path = "src/settings.py", rule = "environment" }`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AllowRule {
    pub path: String,
    pub rule: String,
}

impl SuspiciousConfig {
    /// The patterns in force.
    pub fn patterns(&self) -> Vec<String> {
        self.patterns.clone().unwrap_or_default()
    }

    /// Each `allow` entry names a rule the reading has and a repository path (normalised).
    pub fn checked(&mut self) -> Result<(), String> {
        for (i, a) in self.allow.iter_mut().enumerate() {
            if !super::reading::table::is_rule(&a.rule) {
                return Err(invalid(
                    &format!("suspicious.allow[{i}].rule"),
                    &format!(
                        "{:?} is not a reading rule (docs/reference/reading-rules.md lists them)",
                        a.rule
                    ),
                ));
            }
            let path = RepoPath::parse(&a.path).map_err(|e| {
                invalid(
                    &format!("suspicious.allow[{i}].path"),
                    &format!("{:?} {e}", a.path),
                )
            })?;
            a.path = path.as_str().to_owned();
        }
        Ok(())
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
    /// The arguments that add the canary's case to a batched property run (`{ids}`): with
    /// them, the canary rides in each property run instead of a process of its own, and
    /// each run must show its case failed.
    #[serde(default)]
    pub in_batch: Vec<String>,
    /// The canary's test cases in a property run's receipt (`classname::name`, the case or a
    /// prefix of it up to `::` or `.`), needed with `in_batch`.
    pub case: Option<String>,
    /// The canary is the turned twin of one of the properties it rides with (CONTRACT.md
    /// section 15.3): that property's own test file, its assertions turned, under a name
    /// drawn per gate, added to each batched property run by `{ids}`; it must fail there on
    /// the package's own values. Needs `{ids}` and `[properties] case`. When no property that
    /// runs has a Python test file to turn, the canary rides (or runs) as `in_batch` and
    /// `command` say.
    #[serde(default)]
    pub twin: bool,
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
    /// argv running the test files a patch adds (issue 50), in a room of their own: the
    /// argument holding `{files}` is repeated once per added `.py`/`.rs` test file; `{junit}`
    /// as in `command`. Without it, a patch that adds a test file is a scope hit.
    pub added: Option<Vec<String>>,
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
        // toml's message spans lines (it quotes the source) and does not name the key: one
        // line here, with the line and the key (`properties.catch`) the value stands at.
        let one_line = |e: &toml::de::Error, key: Option<String>| {
            let msg = e.message();
            let line = e
                .span()
                .map(|s| text[..s.start.min(text.len())].matches('\n').count() + 1);
            let key = key.map(|k| format!("`{k}`: ")).unwrap_or_default();
            match line {
                Some(l) => format!("{name} line {l}: {key}{msg}"),
                None => format!("{name}: {key}{msg}"),
            }
        };
        let de = toml::Deserializer::parse(text).map_err(|e| one_line(&e, None))?;
        let mut config: GateConfig = serde_path_to_error::deserialize(de).map_err(|e| {
            let key = e.path().to_string();
            one_line(e.inner(), (key != ".").then_some(key))
        })?;
        config.check()?;
        config.suspicious.checked()?;
        config.sandbox.limits()?;
        // The programs the commands start: their installation prefixes are what the sealed
        // room shows beside the system (CONTRACT.md section 13.1).
        let mut programs: Vec<String> = [
            config.build.as_ref().map(|b| &b.command),
            config.canary.as_ref().map(|c| &c.command),
            Some(&config.properties.command),
            Some(&config.suite.command),
            config.suite.test_command.as_ref(),
        ]
        .into_iter()
        .flatten()
        .filter_map(|argv| argv.first().cloned())
        .collect();
        programs.sort();
        programs.dedup();
        config.sandbox.programs = programs;
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
        if let Some(a) = &self.suite.added
            && (a.is_empty()
                || !a.iter().any(|x| x.contains("{files}"))
                || !crate::cli::runner::receipted(a))
        {
            return Err(invalid(
                "suite.added",
                "must name a program and contain `{files}` (the test files the patch adds) and `{junit}` (its receipt: the run can only block when its receipt lists the failure)",
            ));
        }
        if self
            .observe
            .is_some_and(|o| usize::from(o.mutants) > crate::core::gate::MAX_PATCH_MUTANTS)
        {
            return Err(invalid("observe.mutants", "is at most 100"));
        }
        // Rust: cargo's test binaries, whose extra arguments reach libtest (as `deselect`'s).
        let cargo = self.suite.command.iter().any(|a| {
            a.split_whitespace()
                .any(|w| w == "cargo" || w.ends_with("/cargo"))
        });
        if self.observe.is_some_and(|o| o.on())
            && ((crate::cli::runner::pytest_module_at(&self.suite.command).is_none() && !cargo)
                || !crate::cli::runner::receipted(&self.suite.command))
        {
            return Err(invalid(
                "observe",
                "needs a suite command with `{junit}` that runs pytest as `python ... -m pytest`, or cargo's tests (its extra arguments reaching libtest, as `deselect`'s do): the runner observes it with probes on the changed lines",
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
            if c.twin
                && (!crate::cli::runner::batched(&p.command)
                    || !p.case.as_deref().is_some_and(|t| t.contains("{id}")))
            {
                return Err(invalid(
                    "canary.twin",
                    "rides in batched property runs under a name of its own: `[properties] command` needs `{ids}` and `[properties] case` needs `{id}`",
                ));
            }
            match (c.in_batch.is_empty(), &c.case) {
                (true, None) => {}
                (true, Some(_)) => {
                    return Err(invalid(
                        "canary.case",
                        "names the canary's cases in a property run: it needs `in_batch`, the arguments that add them",
                    ));
                }
                (false, None) => {
                    return Err(invalid(
                        "canary.case",
                        "is needed with `in_batch`: it names the canary's cases in a property run's receipt (pytest: \"properties.patchgate_canary\")",
                    ));
                }
                (false, Some(case)) => {
                    if !crate::cli::runner::batched(&p.command) {
                        return Err(invalid(
                            "canary.in_batch",
                            "rides in batched property runs: `[properties] command` needs `{ids}`",
                        ));
                    }
                    // What every property's cases start with: a canary case that does could be
                    // a property's, and be counted as its.
                    let theirs = p
                        .case
                        .as_deref()
                        .and_then(|t| t.split("{id}").next())
                        .unwrap_or("");
                    if case.is_empty() || case.starts_with(theirs) {
                        return Err(invalid(
                            "canary.case",
                            &format!(
                                "{case:?} could name a property's cases (they start {theirs:?}): it must name the canary's alone"
                            ),
                        ));
                    }
                }
            }
        }
        for c in self.build.iter().flat_map(|b| &b.cache) {
            RepoPath::parse(c).map_err(|e| invalid("build.cache", &format!("{c:?} {e}")))?;
        }
        for c in &self.sandbox.scratch {
            RepoPath::parse(c).map_err(|e| invalid("sandbox.scratch", &format!("{c:?} {e}")))?;
        }
        if self.build.as_ref().is_some_and(|b| b.command.is_empty()) {
            return Err(invalid(
                "build.command",
                "must name a program (an argv list)",
            ));
        }
        Ok(())
    }

    /// Where runs may write in the copy beside the toolchains' own caches (CONTRACT.md
    /// section 11.3): the build's cache directories and `[sandbox] scratch` the suite's report at its fixed path, `[suite] junit`, which its run writes).
    pub fn scratch(&self) -> Vec<String> {
        let build = self.build.iter().flat_map(|b| &b.cache);
        build
            .chain(&self.sandbox.scratch)
            .chain(&self.suite.junit)
            .cloned()
            .collect()
    }

    /// The build cache `patchgate warm` kept for `[build] cache`, if any.
    /// The config as the base commit `base` (named `base_ref` for people) holds it at `path`.
    pub fn from_base(
        base: &str,
        base_ref: &str,
        path: &str,
    ) -> Result<Self, crate::cli::error::CliError> {
        use crate::cli::error::CliError;
        let text = crate::cli::git::base_file(base, path)?.ok_or_else(|| {
            CliError::data(format!(
                "the base commit {base_ref} has no {path}: run `patchgate init`, then commit it to the base branch"
            ))
        })?;
        let text =
            String::from_utf8(text).map_err(|_| CliError::data(format!("{path} is not UTF-8")))?;
        Self::parse(&text, &format!("{base_ref}:{path}")).map_err(CliError::data)
    }

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
pub const CANARY_RS: &str = include_str!("starters/patchgate_canary.rs");

/// What `patchgate init --rust` writes: the starter for a Rust repository (cargo test; its
/// receipts from libtest's JUnit output).
pub const STARTER_RUST: &str = include_str!("starters/patchgate-rust.toml");

/// The canary `patchgate init` writes beside the starter (Python: pytest + hypothesis).
pub const CANARY_PY: &str = include_str!("starters/patchgate_canary.py");
/// The starter catalog `patchgate init` writes beside the config when there is none (issue
/// 64): empty, its comments saying what a property is and what naming one guards.
pub const CATALOG: &str = include_str!("starters/catalog.yaml");

pub const STARTER: &str = include_str!("starters/patchgate.toml");

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
                "properties/patchgate_canary.py",
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

    /// Issue 40: the canary rides in the batched property runs with `in_batch` and `case`;
    /// each needs the other, a batched property command, and a case no property's could be.
    #[test]
    fn a_riding_canary_needs_its_case_and_a_batched_command() {
        let c = GateConfig::parse(STARTER, "patchgate.toml").unwrap();
        let canary = c.canary.as_ref().unwrap();
        assert!(
            canary.twin,
            "the starter's canary is a property's twin (issue 49)"
        );
        assert_eq!(canary.in_batch, ["properties/patchgate_canary.py"]);
        assert_eq!(canary.case.as_deref(), Some("properties.patchgate_canary"));
        let case = "case = \"properties.patchgate_canary\"\n";
        let in_batch = "in_batch = [\"properties/patchgate_canary.py\"]\n";
        for (edit, key, what) in [
            (STARTER.replace(case, ""), "`canary.case`", "is needed"),
            (
                STARTER.replace(in_batch, ""),
                "`canary.case`",
                "needs `in_batch`",
            ),
            (
                STARTER.replace(case, "case = \"properties.test_canary\"\n"),
                "`canary.case`",
                "could name a property's",
            ),
            (
                STARTER.replace("properties/test_{ids}.py", "properties/test_{id}.py"),
                "`canary.twin`",
                "needs `{ids}`",
            ),
            (
                STARTER
                    .replace("properties/test_{ids}.py", "properties/test_{id}.py")
                    .replace("twin = true\n", ""),
                "`canary.in_batch`",
                "needs `{ids}`",
            ),
        ] {
            let e = GateConfig::parse(&edit, "patchgate.toml").unwrap_err();
            assert!(e.contains(key) && e.contains(what), "{key}: {e}");
        }
        // Without both, the canary keeps a process of its own.
        let own = STARTER.replace(case, "").replace(in_batch, "");
        let c = GateConfig::parse(&own, "patchgate.toml").unwrap();
        assert!(c.canary.unwrap().in_batch.is_empty());
    }

    /// Issue 35: a config error names the key and the line, in one line (cargo's habit).
    /// Before: "patchgate.toml line 3: invalid type: integer `101`, expected a sequence".
    #[test]
    fn a_config_error_names_the_key() {
        for (text, key, line) in [
            (
                "fixtures = \"f\"\n[properties]\ncatch = 101\n",
                "`properties.catch`",
                "line 3",
            ),
            ("debt_cap = \"five\"\n", "`debt_cap`", "line 1"),
            (
                "[suite]\ncommand = [\"pytest\"]\ntimeout_s = \"long\"\n",
                "`suite.timeout_s`",
                "line 3",
            ),
        ] {
            let e = GateConfig::parse(text, "patchgate.toml").unwrap_err();
            assert!(
                e.starts_with("patchgate.toml ") && e.contains(key) && e.contains(line),
                "{key}: {e}"
            );
            assert!(!e.contains('\n'), "{e}");
        }
    }
}
