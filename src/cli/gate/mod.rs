//! `patchgate gate`: the runner of the patch gate (CONTRACT.md section 8.2), and
//! `patchgate init`.
//!
//! It gathers the facts of one patch and has the core (or a server, `--server`) decide them.
//! Its first rule: a patch is never judged by rules it brought along. The config, catalog,
//! ledger and expected seal are read from the *base* commit with `git show`, and they are
//! always guarded. It stops as soon as the answer is known: nothing runs on a seal mismatch,
//! debt over the cap or a guard hit.

mod config;
mod junit;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Duration;

use clap::Args;
use serde_json::{Map, Value, json};

use super::error::{CliError, CliResult};
use super::ladder::{describe, run_tier};
use super::quorum::{fill_commit_counts, parse_document, parse_seal_text};
use super::{RemoteArgs, git, git_changed, output, remote};
use crate::core::gate::{
    GateAnswer, GateDisposition, GateRuleName, Step, decide_gate, markdown, parse_gate_request,
    step_name, text_line,
};
use crate::core::ladder::{SCOPE_TIER, T1, T2, TierVerdict};
use crate::core::problem::Problem;
use crate::core::quorum::{DEFAULT_DEBT_CAP, Vote};
use crate::core::route::Verdict;
use crate::exit::Exit;
use config::STARTER;
pub(super) use config::{CONFIG_FILE, GateConfig};

#[derive(Debug, Args)]
pub struct GateArgs {
    /// The base the patch targets (a branch, tag or commit): the config, catalog, ledger and
    /// expected seal are read from it, never from the patch.
    #[arg(long, required_unless_present = "facts")]
    pub base: Option<String>,
    /// The patch's head commit; it must be what is checked out (the tests run in this
    /// worktree).
    #[arg(long, default_value = "HEAD")]
    pub head: String,
    /// The config file's path in the base commit.
    #[arg(long, default_value = CONFIG_FILE)]
    pub config: String,
    /// Run as if started in this directory (inside the repository).
    #[arg(short = 'C', long = "directory")]
    pub directory: Option<PathBuf>,
    /// Append one ladder-ledger row (JSONL) per tier reached to this file.
    #[arg(long)]
    pub ledger: Option<PathBuf>,
    /// Write the evidence document (the `/route` body a merge bot can replay) here; only a
    /// decision the router made has one.
    #[arg(long)]
    pub evidence_out: Option<PathBuf>,
    /// Write the full JSON answer here.
    #[arg(long)]
    pub json_out: Option<PathBuf>,
    /// Write the Markdown report here (e.g. `$GITHUB_STEP_SUMMARY`; appended to, as GitHub
    /// expects, when the file exists).
    #[arg(long)]
    pub markdown_out: Option<PathBuf>,
    /// Print the plan (what would run, in order, and why) and run nothing (exit 0).
    #[arg(long)]
    pub dry_run: bool,
    /// Echoed in the answer (default: the head commit id).
    #[arg(long)]
    pub patch_id: Option<String>,
    /// Print the full answer as JSON instead of the one line.
    #[arg(long)]
    pub json: bool,
    /// Write the facts gathered (the `POST /gate` body) here, to audit or replay them.
    #[arg(long)]
    pub facts_out: Option<PathBuf>,
    /// Decide a facts document (a `POST /gate` body) instead of gathering one: no git, nothing
    /// run.
    #[arg(long, conflicts_with_all = ["base", "dry_run", "ledger"])]
    pub facts: Option<PathBuf>,
    #[command(flatten)]
    pub remote: RemoteArgs,
}

#[derive(Debug, Args)]
pub struct InitArgs {
    /// Where to write the starter config.
    #[arg(default_value = CONFIG_FILE)]
    pub path: PathBuf,
    /// Overwrite an existing file.
    #[arg(long)]
    pub force: bool,
    /// Start with `require_admission = true`: a strong property votes only with its
    /// two-commit proof (`patchgate admit`). Off by default.
    #[arg(long)]
    pub require_admission: bool,
}

/// `patchgate init`: writes the commented starter config.
pub fn init(args: InitArgs) -> CliResult {
    let mut options = std::fs::OpenOptions::new();
    options.write(true);
    if args.force {
        options.create(true).truncate(true);
    } else {
        options.create_new(true);
    }
    let mut file = options.open(&args.path).map_err(|e| {
        if e.kind() == std::io::ErrorKind::AlreadyExists {
            CliError::usage(format!(
                "{} exists; give --force to overwrite it",
                args.path.display()
            ))
        } else {
            CliError::software(format!("cannot write {}: {e}", args.path.display()))
        }
    })?;
    let text = if args.require_admission {
        STARTER.replace("require_admission = false", "require_admission = true")
    } else {
        STARTER.to_owned()
    };
    file.write_all(text.as_bytes())
        .map_err(|e| CliError::software(format!("cannot write {}: {e}", args.path.display())))?;
    output::error(&format!(
        "wrote {}: edit it, commit it to the base branch, then `patchgate gate --base <branch> --dry-run`",
        args.path.display()
    ));
    Ok(Exit::Go)
}

/// Changes to `directory` (`-C`), then to the top of the git repository it is in: the
/// config's paths are repository-relative.
pub(super) fn enter_repository(directory: Option<&Path>) -> Result<(), CliError> {
    if let Some(dir) = directory {
        std::env::set_current_dir(dir)
            .map_err(|e| CliError::usage(format!("cannot change to {}: {e}", dir.display())))?;
    }
    let top = git(&["rev-parse", "--show-toplevel"])
        .map_err(|_| CliError::usage("not inside a git repository (or give -C REPO)"))?;
    let top = PathBuf::from(String::from_utf8_lossy(&top).trim());
    std::env::set_current_dir(&top)
        .map_err(|e| CliError::usage(format!("cannot change to {}: {e}", top.display())))
}

/// The base commit's file at `path`, or `None` when it has none.
pub(super) fn base_file(base: &str, path: &str) -> Result<Option<Vec<u8>>, CliError> {
    let spec = format!("{base}:{path}");
    // `cat-file -e` says whether the object exists without printing git's error for a file
    // that is simply absent.
    let exists = std::process::Command::new("git")
        .args(["cat-file", "-e", &spec])
        .stderr(std::process::Stdio::null())
        .status()
        .map_err(|e| CliError::data(format!("cannot run git: {e}")))?
        .success();
    if !exists {
        return Ok(None);
    }
    git(&["cat-file", "blob", &spec]).map(Some)
}

pub(super) fn commit_of(rev: &str) -> Result<String, CliError> {
    let out = git(&[
        "rev-parse",
        "--verify",
        "--quiet",
        &format!("{rev}^{{commit}}"),
    ])
    .map_err(|_| CliError::usage(format!("{rev:?} is not a commit in this repository")))?;
    Ok(String::from_utf8_lossy(&out).trim().to_owned())
}

/// What the runner knows before running anything.
struct Gathered {
    config: GateConfig,
    /// The request without runs or suite.
    doc: Value,
    head: String,
    changed: Vec<String>,
}

fn gather(args: &GateArgs) -> Result<Gathered, CliError> {
    enter_repository(args.directory.as_deref())?;

    let base_ref = args.base.as_deref().unwrap_or("HEAD");
    let base = commit_of(base_ref)?;
    let head = commit_of(&args.head)?;
    let checked_out = commit_of("HEAD")?;
    if head != checked_out {
        return Err(CliError::usage(format!(
            "--head {} is not what is checked out ({}): the gate runs the tests in this worktree, so check the head out first",
            args.head, checked_out
        )));
    }
    let dirty = git(&["status", "--porcelain", "-z", "--untracked-files=no"])?;
    if !dirty.is_empty() {
        return Err(CliError::usage(
            "the worktree has uncommitted changes to tracked files: the gate judges commits, so commit or stash them",
        ));
    }

    // The config, from the base commit.
    let text = base_file(&base, &args.config)?.ok_or_else(|| {
        CliError::data(format!(
            "the base commit {} has no {}: run `patchgate init`, then commit it to the base branch",
            base_ref, args.config
        ))
    })?;
    let text = String::from_utf8(text)
        .map_err(|_| CliError::data(format!("{} is not UTF-8", args.config)))?;
    let name = format!("{}:{}", base_ref, args.config);
    let config = GateConfig::parse(&text, &name).map_err(CliError::data)?;

    let changed = git_changed(&base, &head)?;
    // The catalog and the ledger, from the base commit.
    let catalog_bytes = base_file(&base, &config.catalog)?.ok_or_else(|| {
        CliError::data(format!(
            "the base commit {} has no catalog {} (the `catalog` key of {})",
            base_ref, config.catalog, args.config
        ))
    })?;
    let catalog = parse_document(
        &catalog_bytes,
        &format!("{base_ref}:{}", config.catalog),
        "catalog",
    )?;
    let mut ledger = match base_file(&base, &config.ledger)? {
        Some(bytes) => parse_document(&bytes, &format!("{base_ref}:{}", config.ledger), "ledger")?,
        None => Value::Array(Vec::new()),
    };
    fill_commit_counts(&mut ledger, &head)?;
    let expected = base_file(&base, &config.expected_seal)?.ok_or_else(|| {
        CliError::data(format!(
            "the base commit {} has no expected seal {}: write it with `patchgate seal {} > {}` and commit it",
            base_ref, config.expected_seal, config.fixtures, config.expected_seal
        ))
    })?;
    let expected = parse_seal_text(
        &String::from_utf8_lossy(&expected),
        &format!("{base_ref}:{}", config.expected_seal),
    )?;
    // The seal of the worktree's fixtures, before anything runs.
    let threads = std::thread::available_parallelism().map_or(2, |n| n.get());
    let tree = crate::tree::read_dir_tree(
        Path::new(&config.fixtures),
        config.fixtures.as_bytes(),
        threads,
    )
    .map_err(|e| {
        CliError::data(format!(
            "cannot seal the fixtures directory {}: {e}",
            config.fixtures
        ))
    })?;
    let actual = crate::core::seal::seal(&tree.entries).seal;

    let mut doc = json!({
        "patch_id": args.patch_id.clone().unwrap_or_else(|| head.clone()),
        "changed_files": changed,
        "guarded": config.guarded(&args.config),
        "seal": {"actual": actual.to_hex(), "expected": expected.to_hex()},
        "catalog": catalog,
        "ledger": ledger,
        "catch_exit_codes": config.properties.catch,
        "require_admission": config.require_admission,
    });
    if let Some(cap) = config.debt_cap {
        doc["debt_cap"] = json!(cap);
    }
    Ok(Gathered {
        config,
        doc,
        head,
        changed,
    })
}

/// The message of facts the runner gathered that do not validate: they came from the base.
const GATHERED_INVALID: &str = "the gate's inputs (read from the base commit) are invalid:";

/// Decides `doc` with the local core; an invalid `doc` is refused field by field (65) with
/// `invalid` as the headline.
fn decide_local(doc: &Value, invalid: &str) -> Result<GateAnswer, CliError> {
    let request = parse_gate_request(doc)
        .map_err(|errors| CliError::problem(Exit::DataErr, invalid, &Problem::invalid(errors)))?;
    let decision = decide_gate(&request, DEFAULT_DEBT_CAP);
    Ok(decision.answer(&request, crate::ids::new_decision_id()))
}

/// The properties t1 runs: in locality, voting (not frozen), from the catalog's order.
fn properties_to_run(answer: &GateAnswer) -> Option<Vec<String>> {
    answer.steps.iter().find_map(|s| match s {
        Step::Properties {
            ran: true,
            properties,
            ..
        } => Some(
            properties
                .iter()
                .filter(|p| p.in_locality && p.vote == Vote::No)
                .map(|p| p.id.clone())
                .collect(),
        ),
        _ => None,
    })
}

fn property_verdict(answer: &GateAnswer) -> Option<Verdict> {
    answer.steps.iter().find_map(|s| match s {
        Step::Properties {
            ran: true, verdict, ..
        } => Some(*verdict),
        _ => None,
    })
}

/// A command template with a check's id put in: `{id}` is the whole id; for a test id
/// `classname::name`, `{classname}` and `{name}` are its two halves (a property id is all
/// `{name}`).
pub(super) fn argv_for(template: &[String], id: &str) -> Vec<String> {
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

/// Runs one command as a ladder tier: its exit code (`None` when killed by its timeout or a
/// signal, or when it could not start), and the seconds it took.
fn run_one(label: &str, argv: &[String], timeout_s: f64) -> (Option<u8>, f64) {
    match run_tier(argv, Duration::from_secs_f64(timeout_s)) {
        Ok((status, seconds)) => {
            let code = status
                .and_then(|s| s.code())
                .and_then(|c| u8::try_from(c).ok());
            output::error(&format!(
                "{label}: {} ({seconds:.1} s)",
                describe(status, timeout_s)
            ));
            (code, seconds)
        }
        Err(e) => {
            output::error(&format!(
                "{label}: cannot start {:?}: {e} (a broken harness)",
                argv.first().map(String::as_str).unwrap_or_default()
            ));
            (None, 0.0)
        }
    }
}

/// A ladder-ledger row (section 4).
struct TierRow {
    tier: &'static str,
    verdict: TierVerdict,
    seconds: f64,
    exit_code: Option<u8>,
}

pub fn run(args: GateArgs) -> CliResult {
    if let Some(path) = &args.facts {
        let bytes = super::read_input(path)
            .map_err(|e| CliError::data(format!("cannot read {}: {e}", path.display())))?;
        let doc = crate::core::json::strict_value(&bytes)
            .map_err(|e| CliError::data(format!("{} is not valid JSON: {e}", path.display())))?;
        return finish(&args, &doc, None);
    }
    let g = gather(&args)?;
    let first = decide_local(&g.doc, GATHERED_INVALID)?;
    if args.dry_run {
        return dry_run(&args, &g, &first);
    }
    let mut doc = g.doc.clone();
    let mut rows: Vec<TierRow> = Vec::new();
    if first.rule == GateRuleName::Route {
        let scope_hit = first
            .steps
            .iter()
            .any(|s| matches!(s, Step::Scope { scope_hits, .. } if !scope_hits.is_empty()));
        let mut run_suite = true;
        if let Some(ids) = properties_to_run(&first).filter(|_| !scope_hit) {
            let p = &g.config.properties;
            let mut runs = Map::new();
            let mut seconds = 0.0;
            for id in &ids {
                let argv = argv_for(&p.command, id);
                let mut codes = Vec::with_capacity(usize::from(p.runs));
                for n in 1..=p.runs {
                    let label = format!("{T1} {id} run {n}/{}", p.runs);
                    let (code, s) = run_one(&label, &argv, p.timeout_s);
                    seconds += s;
                    codes.push(code);
                }
                runs.insert(id.clone(), json!({ "runs": codes }));
            }
            doc["property_runs"] = Value::Object(runs);
            let after = decide_local(&doc, GATHERED_INVALID)?;
            let verdict = property_verdict(&after).unwrap_or(Verdict::Unknown);
            let tier = match verdict {
                Verdict::Pass => TierVerdict::Pass,
                Verdict::Fail => TierVerdict::Caught,
                _ => TierVerdict::Error,
            };
            output::error(&format!(
                "{T1}: {} ({} properties run)",
                verdict.as_str(),
                ids.len()
            ));
            rows.push(TierRow {
                tier: T1,
                verdict: tier,
                seconds,
                exit_code: None,
            });
            // The ladder stops at the first tier that does not pass.
            run_suite = verdict == Verdict::Pass;
        } else if scope_hit {
            output::error(&format!(
                "{SCOPE_TIER}: scope hit (test-adjacent files changed): {T1} skipped"
            ));
        }
        if run_suite {
            let (suite, row) = run_suite_tier(&g.config)?;
            doc["fixture_suite"] = suite;
            rows.push(row);
        }
    }
    if let Some(path) = &args.ledger {
        append_rows(path, &g.head, &g.changed, &rows)?;
    }
    finish(&args, &doc, Some(&g))
}

/// Decides the facts (locally, or with `--server`), writes what was asked for, prints the
/// answer and gives its exit code.
fn finish(args: &GateArgs, doc: &Value, gathered: Option<&Gathered>) -> CliResult {
    if let Some(path) = &args.facts_out {
        let text = serde_json::to_string_pretty(doc).unwrap_or_default() + "\n";
        write_file(path, &text, false)?;
    }
    let answer = match &args.remote.server {
        Some(server) => {
            let body = serde_json::to_vec(doc).unwrap_or_default();
            let reply = remote::post(&args.remote, server, "/gate", "application/json", body)?;
            remote::decision::<GateAnswer>(&reply, |a| a.exit_code)?.0
        }
        None if gathered.is_some() => decide_local(doc, GATHERED_INVALID)?,
        None => decide_local(doc, "the facts document is invalid:")?,
    };
    write_outputs(args, &answer)?;
    if std::env::var("GITHUB_ACTIONS").is_ok_and(|v| v == "true") {
        output::stdout(&annotation(&answer))?;
    }
    if args.json {
        output::stdout(&format!(
            "{}\n",
            serde_json::to_string_pretty(&answer).unwrap_or_default()
        ))?;
    } else {
        output::stdout(&text_line(&answer))?;
    }
    Ok(Exit::from_decision(answer.exit_code).unwrap_or(Exit::Software))
}

/// Runs the fixture suite (t2): its `fixture_suite` fact and its ledger row.
fn run_suite_tier(config: &GateConfig) -> Result<(Value, TierRow), CliError> {
    let s = &config.suite;
    // A report left from before (or committed by the patch) must never be read as this
    // run's: only a report the suite writes now counts.
    if let Some(j) = &s.junit {
        match std::fs::remove_file(j) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => {
                return Err(CliError::software(format!(
                    "cannot remove the stale JUnit report {j}: {e}"
                )));
            }
        }
    }
    let (code, seconds) = run_one(T2, &s.command, s.timeout_s);
    let mut suite = json!({ "exit_code": code, "catch_exit_codes": s.catch });
    if let Some(j) = &s.junit {
        match std::fs::File::open(j) {
            Ok(f) => match junit::failed_tests(std::io::BufReader::new(f)) {
                Ok(ids) => suite["failed_tests"] = json!(ids),
                Err(e) => output::error(&format!(
                    "{T2}: the JUnit report {j} cannot be read ({e}): no failure is discarded"
                )),
            },
            Err(e) => output::error(&format!(
                "{T2}: no JUnit report at {j} ({e}): no failure is discarded"
            )),
        }
    }
    let catch: Vec<i32> = s.catch.iter().map(|c| i32::from(*c)).collect();
    let verdict = TierVerdict::of_exit(code.map(i32::from), code.is_none(), &catch);
    Ok((
        suite,
        TierRow {
            tier: T2,
            verdict,
            seconds,
            exit_code: code,
        },
    ))
}

fn append_rows(
    path: &Path,
    head: &str,
    files: &[String],
    rows: &[TierRow],
) -> Result<(), CliError> {
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .map_err(|e| {
            CliError::software(format!("cannot open the ledger {}: {e}", path.display()))
        })?;
    for r in rows {
        let mut row = json!({
            "patch": head, "tier": r.tier, "verdict": r.verdict.as_str(),
            "seconds": r.seconds, "files": files,
        });
        if let Some(c) = r.exit_code {
            row["exit_code"] = json!(c);
        }
        writeln!(file, "{row}")
            .map_err(|e| CliError::software(format!("cannot append to the ledger: {e}")))?;
    }
    file.flush()
        .map_err(|e| CliError::software(format!("cannot append to the ledger: {e}")))
}

fn write_file(path: &Path, text: &str, append: bool) -> Result<(), CliError> {
    let mut options = std::fs::OpenOptions::new();
    options.create(true);
    if append {
        options.append(true);
    } else {
        options.write(true).truncate(true);
    }
    options
        .open(path)
        .and_then(|mut f| f.write_all(text.as_bytes()))
        .map_err(|e| CliError::software(format!("cannot write {}: {e}", path.display())))
}

fn write_outputs(args: &GateArgs, answer: &GateAnswer) -> Result<(), CliError> {
    if let Some(path) = &args.json_out {
        let text = serde_json::to_string_pretty(answer).unwrap_or_default() + "\n";
        write_file(path, &text, false)?;
    }
    if let Some(path) = &args.markdown_out {
        write_file(path, &markdown(answer), true)?;
    }
    if let Some(path) = &args.evidence_out {
        match &answer.evidence {
            Some(v) => {
                let mut ev = json!({
                    "property_check": v.property_check,
                    "fixture_check": v.fixture_check,
                    "flaky_freeze": v.flaky_freeze,
                });
                if let Some(id) = &answer.patch_id {
                    ev["patch_id"] = json!(id);
                }
                write_file(path, &format!("{ev}\n"), false)?;
            }
            None => {
                // No evidence was routed: a file left from before must not be replayed.
                let _ = std::fs::remove_file(path);
                output::error(&format!(
                    "no evidence to write to {}: gate rule {} decided before the router",
                    path.display(),
                    <&str>::from(answer.rule)
                ));
            }
        }
    }
    Ok(())
}

/// One GitHub Actions workflow command, so the pull request shows why, not just a red cross.
fn annotation(answer: &GateAnswer) -> String {
    let level = match answer.disposition {
        GateDisposition::MergeOk => "notice",
        GateDisposition::Escalate => "warning",
        GateDisposition::Block | GateDisposition::StopQueue => "error",
    };
    format!(
        "::{level} title=patchgate {}::{} reason={} (exit {}, gate rule {})\n",
        answer.disposition.as_str(),
        answer.disposition.as_str(),
        answer.reason.as_str(),
        answer.exit_code,
        <&str>::from(answer.rule)
    )
}

/// `--dry-run`: what would run, in order, and why; nothing runs.
fn dry_run(args: &GateArgs, g: &Gathered, first: &GateAnswer) -> CliResult {
    let mut out = format!(
        "patchgate gate --dry-run: base {}, head {}, config {} (from the base)\n",
        args.base.as_deref().unwrap_or_default(),
        g.head,
        args.config
    );
    // The steps known before anything runs; the later ones are the plan below.
    for step in &first.steps {
        if matches!(
            step,
            Step::Seal { .. } | Step::Debt { .. } | Step::Guard { .. } | Step::Scope { .. }
        ) {
            let (name, summary) = step_name(step);
            out.push_str(&format!("  {name}: {summary}\n"));
        }
    }
    if first.rule != GateRuleName::Route {
        out.push_str(&format!(
            "  stops here: {} reason={} (gate rule {}); nothing would run\n",
            first.disposition.as_str(),
            first.reason.as_str(),
            <&str>::from(first.rule)
        ));
        output::stdout(&out)?;
        return Ok(Exit::Go);
    }
    let scope_hit = first
        .steps
        .iter()
        .any(|s| matches!(s, Step::Scope { scope_hits, .. } if !scope_hits.is_empty()));
    let p = &g.config.properties;
    match properties_to_run(first).filter(|_| !scope_hit) {
        Some(ids) if ids.is_empty() => out.push_str(&format!(
            "  {T1}: no voting property is in locality: the quorum would be empty (ESCALATE), and the suite would not run\n"
        )),
        Some(ids) => {
            out.push_str(&format!(
                "  {T1}: would run {} properties {} times each (timeout {} s):\n",
                ids.len(),
                p.runs,
                p.timeout_s
            ));
            for id in &ids {
                out.push_str(&format!("    {}\n", argv_for(&p.command, id).join(" ")));
            }
            out.push_str(&format!(
                "  {T2}: then, if {T1} passes: {}\n",
                g.config.suite.command.join(" ")
            ));
        }
        None => out.push_str(&format!(
            "  {T1}: skipped (scope hit)\n  {T2}: would run {}\n",
            g.config.suite.command.join(" ")
        )),
    }
    if g.config.require_admission {
        let unproven: Vec<&str> = first
            .steps
            .iter()
            .filter_map(|s| match s {
                Step::Properties { properties, .. } => Some(properties),
                _ => None,
            })
            .flatten()
            .filter(|p| p.unproven && p.in_locality)
            .map(|p| p.id.as_str())
            .collect();
        if !unproven.is_empty() {
            out.push_str(&format!(
                "  admission is required: {} in locality without a proof would vote as weak: {}\n",
                unproven.len(),
                unproven.join(", ")
            ));
        }
    }
    output::stdout(&out)?;
    Ok(Exit::Go)
}
