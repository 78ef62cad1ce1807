//! `patchgate gate`: the runner of the patch gate (CONTRACT.md section 8.2), and
//! `patchgate init`.
//!
//! It gathers the facts of one patch and has the core (or a server, `--server`) decide them.
//! Its first rule: a patch is never judged by rules it brought along. The config, catalog,
//! ledger and expected seal are read from the *base* commit with `git show`, and they are
//! always guarded. Its second: the code under test is hostile. What is judged is the merge of
//! the head into the base, copied from git's objects into a clean room where every run
//! happens in a sandbox ([`super::sandbox`]). It stops as soon as the answer is known:
//! nothing runs on a conflict, a seal mismatch, debt over the cap, a guard hit or a binary.

mod census;
mod config;
mod shadows;

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};

use clap::Args;
use serde_json::{Map, Value, json};

use super::documents::{parse_document, parse_seal_text};
use super::error::{CliError, CliResult};
use super::git::{
    added_lines, base_file, binary_content, commit_of, enter_repository, fill_commit_counts,
    git_changed, git_made_executable, judged_tree,
};
use super::junit;
use super::runner::{
    Place, ReceiptRead, argv_for, batched, open_report, property_argv, property_receipt,
    receipt_fact, receipted, run_check_tail, run_receipted, run_receipted_in,
};
use super::sandbox::Room;
use super::{RemoteArgs, output, remote};
use crate::core::decision::{Decision as _, Defaults};
use crate::core::freeze_ledger::DEFAULT_DEBT_CAP;
use crate::core::gate::{
    GateAnswer, GateDecision, GateDisposition, GateNext, GateRuleName, MAX_FAILURE_BYTES,
    MAX_FAILURES, NextStep, Step, clip_failure, fit_test_id, markdown, next_step,
    parse_gate_request, step_name,
};
use crate::core::ladder::{T1, T2, TierVerdict};
use crate::core::path::RepoPath;
use crate::core::problem::Problem;
use crate::exit::Exit;
use config::{CANARY_PY, CANARY_RS, STARTER, STARTER_RUST};
pub(super) use config::{CONFIG_FILE, GateConfig};

#[derive(Debug, Args)]
pub struct GateArgs {
    /// The base the patch targets (a branch, tag or commit): the config, catalog, ledger and
    /// expected seal are read from it, never from the patch.
    #[arg(long, required_unless_present = "facts")]
    pub base: Option<String>,
    /// The patch's head commit. The gate judges it merged into the base, from git's objects,
    /// in a clean room: the worktree and its uncommitted changes are never read.
    #[arg(long, default_value = "HEAD")]
    pub head: String,
    /// The config file's path in the base commit.
    #[arg(long, default_value = CONFIG_FILE)]
    pub config: String,
    /// Run as if started in this directory (inside the repository).
    #[arg(short = 'C', long = "directory")]
    pub directory: Option<PathBuf>,
    /// Append one ladder-ledger row (JSONL, the tier ledger of `patchgate ladder`; not the
    /// freeze ledger) per tier reached to this file. `--ledger` is its older name.
    #[arg(long = "tier-ledger", visible_alias = "ledger")]
    pub tier_ledger: Option<PathBuf>,
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
    /// How many runs may be under way at once (default: the number of cores): the canary and
    /// the property runs, and the suite started beside them in its own copy (used only if the
    /// core asks for it). 1 runs each in turn in one copy, the suite only once the core asks.
    #[arg(long, short = 'j')]
    pub jobs: Option<std::num::NonZeroU8>,
    /// Write the facts gathered (the `POST /gate` body) here, to audit or replay them.
    #[arg(long)]
    pub facts_out: Option<PathBuf>,
    /// Shadow mode (also `shadow = true` in the base's config): the real decision is made and
    /// written to every output, headed "would BLOCK" (or ESCALATE, STOP_QUEUE), and the exit
    /// code is 0 — watch the gate before it blocks anyone. The gate's own failures (64, 65,
    /// 69, 70) still fail.
    #[arg(long)]
    pub shadow: bool,
    /// Append the decision to this decision log (one JSON line, as `patchgate serve` writes
    /// it, with `"shadow":true` in shadow mode): `patchgate review FILE` over a shadow period
    /// counts what enforcing would have done. (With `--server`, the server's log has it.)
    #[arg(long)]
    pub decision_log: Option<PathBuf>,
    /// Decide a facts document (a `POST /gate` body) instead of gathering one: no git, nothing
    /// run.
    #[arg(long, conflicts_with_all = ["base", "dry_run", "tier_ledger"])]
    pub facts: Option<PathBuf>,
    #[command(flatten)]
    pub remote: RemoteArgs,
}

impl GateArgs {
    /// How many runs may be under way at once: `--jobs`, else the number of cores.
    fn jobs(&self) -> usize {
        self.jobs.map_or_else(
            || std::thread::available_parallelism().map_or(1, std::num::NonZero::get),
            |j| usize::from(j.get()),
        )
    }
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
    /// The starter for a Rust repository (cargo test, its build step, libtest's JUnit
    /// receipts) and its canary `tests/patchgate_canary.rs`, instead of pytest's.
    #[arg(long)]
    pub rust: bool,
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
    let (starter, canary_file, canary_text) = if args.rust {
        (STARTER_RUST, "tests/patchgate_canary.rs", CANARY_RS)
    } else {
        (STARTER, "properties/test_patchgate_canary.py", CANARY_PY)
    };
    let text = if args.require_admission {
        starter.replace("require_admission = false", "require_admission = true")
    } else {
        starter.to_owned()
    };
    file.write_all(text.as_bytes())
        .map_err(|e| CliError::software(format!("cannot write {}: {e}", args.path.display())))?;
    // The canary beside it (section 11.5), where the starter's `[canary]` runs it; an existing
    // one is kept unless `--force`.
    let canary = args
        .path
        .parent()
        .unwrap_or(Path::new(""))
        .join(canary_file);
    let wrote_canary = if canary.exists() && !args.force {
        false
    } else {
        if let Some(dir) = canary.parent() {
            std::fs::create_dir_all(dir)
                .map_err(|e| CliError::software(format!("cannot make {}: {e}", dir.display())))?;
        }
        std::fs::write(&canary, canary_text)
            .map_err(|e| CliError::software(format!("cannot write {}: {e}", canary.display())))?;
        true
    };
    output::error(&format!(
        "wrote {}{}: edit them, commit them to the base branch, then `patchgate census --write` (commit suite.census too) and `patchgate gate --base <branch> --dry-run`",
        args.path.display(),
        if wrote_canary {
            format!(" and the canary {}", canary.display())
        } else {
            String::new()
        }
    ));
    Ok(Exit::Go)
}

/// The config as the base commit `base` (named `base_ref` for people) holds it at `path`.
pub(super) fn base_config(base: &str, base_ref: &str, path: &str) -> Result<GateConfig, CliError> {
    let text = base_file(base, path)?.ok_or_else(|| {
        CliError::data(format!(
            "the base commit {base_ref} has no {path}: run `patchgate init`, then commit it to the base branch"
        ))
    })?;
    let text =
        String::from_utf8(text).map_err(|_| CliError::data(format!("{path} is not UTF-8")))?;
    GateConfig::parse(&text, &format!("{base_ref}:{path}")).map_err(CliError::data)
}

/// What the runner knows before running anything.
struct Gathered {
    config: GateConfig,
    /// The request without runs or suite.
    doc: Value,
    head: String,
    changed: Vec<String>,
    /// Where every run happens.
    room: Room,
    /// The build cache the rooms start from (`patchgate warm`), if any.
    cache: Option<crate::cli::build_cache::BuildCache>,
    /// The suite's own copy, being made (see [`Spare`]).
    spare: Spare,
    /// The fixtures' seal before anything ran.
    seal: String,
    /// The base commit and the judged tree.
    base: String,
    tree: String,
    /// The base's census (section 11.2): test id → outcome.
    census: Option<std::collections::BTreeMap<String, String>>,
    /// The integrity checks after runs so far, and the seconds they took (said at the end).
    checked: std::sync::Mutex<(u32, f64)>,
}

fn gather(args: &GateArgs) -> Result<Gathered, CliError> {
    enter_repository(args.directory.as_deref())?;

    let base_ref = args.base.as_deref().unwrap_or("HEAD");
    let base = commit_of(base_ref)?;
    let head = commit_of(&args.head)?;
    // What is judged is the tree that would land (section 12.1), from git's objects: neither
    // the worktree nor its uncommitted changes are read, and nothing runs in it.
    let judged = judged_tree(&base, &head)?;

    // The config, from the base commit.
    let config = base_config(&base, base_ref, &args.config)?;

    let changed = git_changed(&base, &judged.tree)?;
    let mut binaries = git_made_executable(&base, &judged.tree)?;
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
    // The census (section 11.2), from the base commit; the ledger's tests must be in it.
    let census = match &config.suite.census {
        None => None,
        Some(path) => {
            let bytes = base_file(&base, path)?.ok_or_else(|| {
                CliError::data(format!(
                    "the base commit {base_ref} has no census {path} (`[suite] census`): write it with `patchgate census --base {base_ref} --write` and commit it"
                ))
            })?;
            let census = census::parse_census(&bytes, &format!("{base_ref}:{path}"))?;
            for (i, row) in ledger.as_array().into_iter().flatten().enumerate() {
                if let Some(id) = row.get("test_id").and_then(Value::as_str)
                    && !census.contains_key(id)
                {
                    return Err(CliError::data(format!(
                        "{base_ref}:{} row {i} freezes the test {id:?}, which the census {path} does not know: a ledger test id is a census id (`classname::name`)",
                        config.ledger
                    )));
                }
            }
            Some(census)
        }
    };
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
    // The clean room: a fresh copy of the judged tree, where every run happens (69 under
    // `mode = "required"` without a working sandbox, before anything runs).
    // The build cache (`patchgate warm`), copied in unless nothing will run.
    let cache = config.build_cache();
    let room = Room::open(
        &config.sandbox,
        &judged.tree,
        cache.as_ref().filter(|_| !args.dry_run),
    )?;
    // The suite's own copy (runs at once, no build step to copy after): written beside the
    // rest of the gathering, on another core.
    let spare = Spare::start(
        (args.jobs() > 1 && config.build.is_none() && !args.dry_run)
            .then(|| (config.sandbox.clone(), judged.tree.clone())),
    );
    for file in binary_content(&room.tree, &changed) {
        if !binaries.contains(&file) {
            binaries.push(file);
        }
    }
    // The seal of the judged tree's fixtures, before anything runs.
    let actual = fixtures_seal(&room, &config)?;

    let mut doc = json!({
        "patch_id": args.patch_id.clone().unwrap_or_else(|| head.clone()),
        "changed_files": changed,
        "guarded": config.guarded(&args.config),
        "seal": {"actual": actual, "expected": expected.to_hex()},
        "catalog": catalog,
        "ledger": ledger,
        "catch_exit_codes": config.properties.catch,
        "require_admission": config.require_admission,
        "binaries": binaries,
        "judged": {"base": judged.base, "head": judged.head, "tree": judged.tree},
        "merge_conflicts": judged.conflicts,
        "sandbox": room.backend.as_str(),
        "shadows": shadows::shadows(&room, &changed),
        "suspicious": suspicious_lines(&config, &base, &judged.tree)?,
    });
    if let Some(cap) = config.debt_cap {
        doc["debt_cap"] = json!(cap);
    }
    if !config.inert.is_empty() {
        doc["inert"] = json!(config.inert);
    }
    Ok(Gathered {
        config,
        doc,
        head,
        changed,
        room,
        cache,
        spare,
        seal: actual,
        base: base.clone(),
        tree: judged.tree.clone(),
        census,
        checked: std::sync::Mutex::new((0, 0.0)),
    })
}

/// The seal of the fixtures directory in the room's copy, in hex.
fn fixtures_seal(room: &Room, config: &GateConfig) -> Result<String, CliError> {
    super::seal::seal_of(&room.tree, &config.fixtures, "judged")
}

/// After a run (CONTRACT.md section 11.3): what it changed that it may not, by content against
/// the judged tree, as the facts' `integrity` finding; `None` when nothing.
fn integrity_after(g: &Gathered, room: &Room, label: &str) -> Result<Option<Value>, CliError> {
    let started = std::time::Instant::now();
    let files = room.changed_files()?;
    // The fixtures hold what was judged when no tracked file changed and nothing was added
    // among them: then their seal is the one taken before (hashing 20,000 files after every
    // run is what this saves). Else it is taken again; one that cannot be computed any more
    // (the directory replaced by a file, say) changed.
    let fixtures = g.config.fixtures.trim_end_matches('/');
    let touched = files
        .iter()
        .any(|f| f == fixtures || f.starts_with(&format!("{fixtures}/")))
        || room.added_under(fixtures);
    let seal_changed = touched && fixtures_seal(room, &g.config).map_or(true, |s| s != g.seal);
    // A signal that came meanwhile (the seal stops for it) is the answer, not a finding.
    super::interrupt::check()?;
    {
        let mut checked = g
            .checked
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        checked.0 += 1;
        checked.1 += started.elapsed().as_secs_f64();
    }
    if files.is_empty() && !seal_changed {
        return Ok(None);
    }
    output::error(&format!(
        "{label}: changed {} tracked file(s){}{}: nothing more runs",
        files.len(),
        if seal_changed {
            " and the fixtures' seal"
        } else {
            ""
        },
        files
            .first()
            .map(|f| format!(" (first: {f})"))
            .unwrap_or_default()
    ));
    Ok(Some(json!({
        "run": label,
        "count": files.len(),
        "files": files.iter().take(100).collect::<Vec<_>>(),
        "seal_changed": seal_changed,
    })))
}

/// The re-proof (CONTRACT.md section 11.5): up to `[properties] reprove` admitted properties
/// that ran on this patch, in a random order, each run once on a fresh copy of the judged tree
/// with its admission mutant (stored in the base by `patchgate admit --write`) applied. A
/// mutant that does not apply, or a run that neither passes nor catches, is noted and the next
/// is tried. What each did is the facts' `reproof`; the core decides.
fn reprove(g: &Gathered, doc: &Value) -> Result<Vec<Value>, CliError> {
    let p = &g.config.properties;
    let ran = doc["property_runs"].as_object();
    let mut candidates: Vec<String> = doc["catalog"]["properties"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|row| row.get("admitted").is_some())
        .filter_map(|row| row["id"].as_str())
        .filter(|id| ran.is_some_and(|r| r.contains_key(*id)))
        .map(str::to_owned)
        .collect();
    if p.reprove == 0 || candidates.is_empty() {
        return Ok(Vec::new());
    }
    shuffle(&mut candidates);
    let mut tried = Vec::new();
    let mut proven = 0;
    for id in candidates {
        if proven == p.reprove {
            break;
        }
        let path = p.mutant_path(&id);
        let Some(diff) = base_file(&g.base, &path)? else {
            tried.push(json!({"property": id, "applied": false, "note": format!(
                "no mutant stored at {path} in the base: `patchgate admit {id} --mutant REF --write` stores it"
            )}));
            continue;
        };
        let room = Room::open(&g.config.sandbox, &g.tree, g.cache.as_ref())?;
        if let Err(why) = apply_diff(&room.tree, &diff) {
            output::error(&format!(
                "re-proof {id}: its mutant does not apply here ({why})"
            ));
            tried.push(json!({"property": id, "applied": false, "note": format!(
                "its mutant does not apply to this tree: {why}"
            )}));
            continue;
        }
        let label = format!("re-proof {id} (mutant applied)");
        let argv = property_argv(&p.command, std::slice::from_ref(&id));
        let (code, _, read) = run_receipted(&label, &argv, p.timeout(), &room)?;
        let mut entry = json!({"property": id, "applied": true, "exit_code": code});
        let receipt = read
            .as_ref()
            .and_then(|r| property_receipt(r, p.case.as_deref(), &id));
        if read.is_some() {
            entry["receipt"] = json!(receipt);
        }
        let (run, _) = crate::core::runs::counted(code, receipt.as_ref(), &p.catch, false);
        let run = if read.is_some() { run } else { code };
        if run == Some(0) || p.catch.caught(run) {
            proven += 1;
        } else {
            entry["note"] = json!("neither a pass nor a catch: another is tried");
        }
        tried.push(entry);
    }
    Ok(tried)
}

/// Puts `items` in a random order (the re-proof's choice: an attacker cannot know which
/// admitted property will be re-proven).
fn shuffle(items: &mut [String]) {
    use std::hash::{BuildHasher, Hasher};
    let mut state = std::collections::hash_map::RandomState::new().build_hasher();
    state.write_u128(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos()),
    );
    let mut x = state.finish() | 1;
    for i in (1..items.len()).rev() {
        // xorshift64
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let j = usize::try_from(x % (i as u64 + 1)).unwrap_or(0);
        items.swap(i, j);
    }
}

/// Applies a diff to the files under `tree` (not a repository: `git apply` works as `patch`
/// there, and looks no further up for one).
fn apply_diff(tree: &Path, diff: &[u8]) -> Result<(), String> {
    use std::io::Write as _;
    let mut child = super::git::git_command()
        .current_dir(tree)
        .env("GIT_CEILING_DIRECTORIES", tree.parent().unwrap_or(tree))
        .env_remove("GIT_DIR")
        .env_remove("GIT_WORK_TREE")
        .args(["apply", "--whitespace=nowarn", "-"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot run git apply: {e}"))?;
    if let Some(mut stdin) = child.stdin.take() {
        let _ = stdin.write_all(diff);
    }
    let out = child
        .wait_with_output()
        .map_err(|e| format!("git apply: {e}"))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(String::from_utf8_lossy(&out.stderr).trim().to_owned())
    }
}

/// The failing cases a receipt lists (CONTRACT.md section 11.8), added to the facts'
/// `failures`: each once, its message clipped to 2 KiB, at most 20 in all.
fn add_failures(doc: &mut Value, read: &ReceiptRead) {
    let Ok(report) = read else { return };
    if report.messages.is_empty() {
        return;
    }
    let list = doc
        .as_object_mut()
        .map(|o| o.entry("failures").or_insert_with(|| json!([])));
    let Some(Value::Array(list)) = list else {
        return;
    };
    for (id, message) in &report.messages {
        if list.len() >= MAX_FAILURES {
            break;
        }
        let id = fit_test_id(id.clone());
        if list.iter().any(|f| f["id"] == json!(id)) {
            continue;
        }
        list.push(json!({"id": id, "message": clip_failure(message, MAX_FAILURE_BYTES)}));
    }
}

/// The message of facts the runner gathered that do not validate: they came from the base.
const GATHERED_INVALID: &str = "the gate's inputs (read from the base commit) are invalid:";

/// The core the runner asks: this process's, or a server's (`--server`). Either way the same
/// code decides, with the same debt cap: a remote gate runs the steps the server plans.
struct Core<'a> {
    remote: &'a RemoteArgs,
}

impl Core<'_> {
    /// A request validated locally; an invalid one is refused field by field (65).
    fn parse(doc: &Value, invalid: &str) -> Result<crate::core::gate::GateRequest, CliError> {
        parse_gate_request(doc)
            .map_err(|errors| CliError::problem(Exit::DataErr, invalid, &Problem::invalid(errors)))
    }

    /// What the gate needs next on the facts gathered so far.
    fn next(&self, doc: &Value) -> Result<GateNext, CliError> {
        match &self.remote.server {
            Some(server) => {
                let body = serde_json::to_vec(doc).unwrap_or_default();
                let reply =
                    remote::post(self.remote, server, "/gate/next", "application/json", body)?;
                if reply.status != 200 {
                    return Err(remote::failure(&reply));
                }
                serde_json::from_slice(&reply.body).map_err(|e| {
                    CliError::unavailable(format!(
                        "the server's /gate/next answer is not a plan: {e}"
                    ))
                })
            }
            None => Ok(next_step(
                &Self::parse(doc, GATHERED_INVALID)?,
                DEFAULT_DEBT_CAP,
            )),
        }
    }

    /// The decision on every fact gathered.
    fn decide(&self, doc: &Value, invalid: &str) -> Result<GateAnswer, CliError> {
        let body = serde_json::to_vec(doc).unwrap_or_default();
        remote::decide::<GateDecision>(self.remote, body, |problem| {
            CliError::problem(Exit::DataErr, invalid, &problem)
        })
    }
}

pub fn run(args: GateArgs) -> CliResult {
    let core = Core {
        remote: &args.remote,
    };
    if let Some(path) = &args.facts {
        let bytes = super::read_input(path)
            .map_err(|e| CliError::data(format!("cannot read {}: {e}", path.display())))?;
        let doc = crate::core::json::strict_value(&bytes)
            .map_err(|e| CliError::data(format!("{} is not valid JSON: {e}", path.display())))?;
        return finish(
            &args,
            &core,
            &doc,
            "the facts document is invalid:",
            args.shadow,
        )
        .map(|(exit, _)| exit);
    }
    // Ctrl-C kills the running check's whole group and exits 130: no test outlives the gate.
    super::interrupt::catch()?;
    super::sandbox::harden_runner();
    let started = std::time::Instant::now();
    let gathered = gather(&args)?;
    let g = &gathered;
    // Where the time goes, by phase (milliseconds), into the facts and the report.
    let mut timings = Map::new();
    timed(&mut timings, "gather", started);
    if args.dry_run {
        return dry_run(&args, g, &core.next(&g.doc)?);
    }
    let mut doc = g.doc.clone();
    let mut seconds = Seconds::default();
    let jobs = args.jobs();
    // With `--jobs` over 1, the suite in its own copy of the tree, started at once beside the
    // other runs (the copy kept for its re-run). With 1, each run in turn in the one copy, the
    // suite last, as the core asks.
    let suite_room: std::sync::OnceLock<Room> = std::sync::OnceLock::new();
    std::thread::scope(|scope| -> Result<(), CliError> {
        let mut early: Option<Early<'_, '_>> = None;
        let mut early_tried = false;
        let mut said_t1 = false;
        // Each step at most once: the build (when configured), then the canary and the runs
        // the core asks for, then the suite, then (when only frozen tests failed) the suite's
        // re-run without them, then a decision. A run that changes the tree stops it (section
        // 11.3).
        for round in 0..8 {
            let plan = core.next(&doc)?;
            // Said once: t1's verdict after its runs, or the scope hit that skipped it.
            if let Some(Step::Properties { ran, summary, .. }) = plan
                .steps
                .iter()
                .find(|s| matches!(s, Step::Properties { .. }))
                .filter(|_| plan.next != NextStep::Runs)
            {
                if *ran && doc.get("property_runs").is_some() && !said_t1 {
                    said_t1 = true;
                    output::error(&format!("{T1}: {summary}"));
                } else if !*ran && round == 0 {
                    output::error(&format!("{T1}: {summary}"));
                }
            }
            let phase = std::time::Instant::now();
            let running = matches!(plan.next, NextStep::Runs | NextStep::Suite);
            // The build step, once, before anything of the code under test runs (section 11.8).
            if running
                && let Some(build) = &g.config.build
                && doc.get("build").is_none()
            {
                let (code, _, tail) = run_check_tail(
                    "build",
                    &build.command,
                    build.timeout(),
                    Place::Room(&g.room),
                    2048,
                )?;
                doc["build"] = json!({
                    "exit_code": code,
                    "catch_exit_codes": build.catch,
                    "tail": clip_failure(&tail, 2048),
                });
                if let Some(finding) = integrity_after(g, &g.room, "build")? {
                    doc["integrity"] = json!([finding]);
                }
                timed(&mut timings, "build", phase);
                continue;
            }
            // After the build, before any other run: the suite started in its own copy when
            // there are cores to spare (`--jobs`): its evidence cannot depend on the other
            // runs, and it is used only if the core asks for the suite. After a build step the
            // copy is the room as the build left it, made now; without one, a fresh copy from
            // git's objects, made while the gate gathered (`Spare`).
            if running && jobs > 1 && !early_tried {
                early_tried = true;
                let copy = match &g.config.build {
                    Some(_) => Some(g.room.fork()?),
                    None => None,
                };
                early = Some(Early::start(scope, g, copy));
            }
            // The canary (once, before any property counts: section 11.5) and the property
            // runs, up to `jobs` at once (one slot is the early suite's).
            let canary = g
                .config
                .canary
                .as_ref()
                .filter(|_| doc.get("canary").is_none());
            let properties = plan.next == NextStep::Runs && doc.get("property_runs").is_none();
            if running && (canary.is_some() || properties) {
                let mut work = Vec::new();
                if canary.is_some() {
                    work.push(Job::Canary);
                }
                if properties {
                    work.extend(property_jobs(&g.config.properties, &plan.property_ids));
                }
                let slots = jobs.saturating_sub(usize::from(early.is_some())).max(1);
                let done = run_jobs(g, &work, slots);
                let mut done = done.into_iter().collect::<Result<Vec<_>, _>>()?;
                if let Some(finding) = done.iter_mut().find_map(|d| d.finding.take()) {
                    doc["integrity"] = json!([finding]);
                }
                let (canaries, runs): (Vec<_>, Vec<_>) =
                    done.into_iter().partition(|d| matches!(d.job, Job::Canary));
                if let (Some(c), Some(d)) = (canary, canaries.into_iter().next()) {
                    let read = d.read.unwrap_or_else(|| Err("no receipt".to_owned()));
                    doc["canary"] = json!({
                        "exit_code": d.ran.run,
                        "catch_exit_codes": c.catch,
                        "receipt": receipt_fact(&read),
                    });
                    insert_ms(&mut timings, "canary", d.ran.seconds);
                }
                // The property runs count only if the core, knowing the canary, still asks
                // for them: as if they had run after it.
                if properties && core.next(&doc)?.next == NextStep::Runs {
                    seconds.t1 += runs.iter().map(|d| d.ran.seconds).sum::<f64>();
                    record_properties(g, &mut doc, runs);
                    timed(&mut timings, "properties", phase);
                } else if properties {
                    output::error(&format!(
                        "{T1}: decided before its runs counted (the canary, or a run that changed the tree): not counted"
                    ));
                }
                continue;
            }
            // The re-proof, once, after the properties passed and before the suite (section
            // 11.5).
            if plan.next == NextStep::Suite
                && doc.get("property_runs").is_some()
                && doc.get("reproof").is_none()
            {
                let tried = reprove(g, &doc)?;
                if !tried.is_empty() {
                    timed(&mut timings, "reproof", phase);
                }
                doc["reproof"] = Value::Array(tried);
                continue;
            }
            match plan.next {
                NextStep::Runs => {
                    return Err(CliError::software(
                        "the core asked for the properties twice",
                    ));
                }
                NextStep::Suite => {
                    if doc.get("fixture_suite").is_some() {
                        return Err(CliError::software("the core asked for the suite twice"));
                    }
                    let done = match early.take() {
                        Some(e) => {
                            let (room, done) = e.join()?;
                            let _ = suite_room.set(room);
                            done
                        }
                        None => run_suite(g, &g.room, T2, &[], None)?,
                    };
                    seconds.t2 = done.seconds;
                    insert_ms(&mut timings, "suite", done.seconds);
                    let mut suite = done.record(&mut doc);
                    suite["catch_exit_codes"] = json!(g.config.suite.catch);
                    doc["fixture_suite"] = suite;
                }
                NextStep::Rerun => {
                    let Some(template) = &g.config.suite.deselect else {
                        output::error(&format!(
                            "{T2}: only frozen tests failed, but the base's config has no `[suite] deselect` to re-run the suite without them: nothing is discarded"
                        ));
                        break;
                    };
                    if doc["fixture_suite"].get("rerun").is_some() {
                        return Err(CliError::software("the core asked for the re-run twice"));
                    }
                    let room = suite_room.get().unwrap_or(&g.room);
                    let extra = deselect_args(template, &plan.deselect, &room.tree);
                    let label = format!("{T2} re-run without {}", plan.deselect.join(", "));
                    let done = run_suite(g, room, &label, &extra, None)?;
                    seconds.t2 += done.seconds;
                    doc["fixture_suite"]["rerun"] = done.record(&mut doc);
                    timed(&mut timings, "rerun", phase);
                }
                NextStep::Decide => break,
            }
        }
        // A suite started early that the decision did not need: stopped, not run.
        if let Some(e) = early.take() {
            e.stop();
        }
        Ok(())
    })?;
    timed(&mut timings, "total", started);
    let left = super::runner::left_behind();
    if left > 0 {
        doc["left_behind"] = json!(left);
    }
    doc["timings_ms"] = Value::Object(timings);
    let (checks, spent) = *g
        .checked
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if checks > 0 {
        output::error(&format!(
            "integrity: the copy checked after {checks} run{} ({spent:.3} s)",
            if checks == 1 { "" } else { "s" }
        ));
    }
    let answer = finish(
        &args,
        &core,
        &doc,
        GATHERED_INVALID,
        args.shadow || g.config.shadow,
    );
    let exit = answer.and_then(|(exit, answer)| {
        if let Some(path) = &args.tier_ledger {
            append_rows(path, &g.head, &g.changed, &tier_rows(&answer, seconds))?;
        }
        Ok(exit)
    });
    // The copies removed at once, each on its own core (20,000 files take a while).
    std::thread::scope(|s| {
        if let Some(room) = suite_room.into_inner() {
            s.spawn(move || drop(room));
        }
        drop(gathered);
    });
    exit
}

/// Adds the time since `since` to `phase` in `timings` (milliseconds).
fn timed(timings: &mut Map<String, Value>, phase: &str, since: std::time::Instant) {
    insert_ms(timings, phase, since.elapsed().as_secs_f64());
}

/// Adds `seconds` to `phase` in `timings` (milliseconds).
fn insert_ms(timings: &mut Map<String, Value>, phase: &str, seconds: f64) {
    let ms = (seconds * 1000.0).round().clamp(0.0, f64::from(u32::MAX)) as u64;
    let before = timings.get(phase).and_then(Value::as_u64).unwrap_or(0);
    timings.insert(phase.to_owned(), json!(before.saturating_add(ms)));
}

/// One run of the canary-and-properties phase: they do not depend on each other, and run up
/// to `--jobs` at once in the room.
enum Job {
    Canary,
    /// Run `n` of these properties (one process for all of them when batched).
    Properties {
        n: u8,
        ids: Vec<String>,
    },
}

/// A job run: how it ended, its receipt, and what it changed that it may not.
struct Done<'j> {
    job: &'j Job,
    ran: super::runner::Ran,
    read: Option<ReceiptRead>,
    finding: Option<Value>,
}

/// The property runs the plan asks for: one process per run of a batch (every property at
/// once), or per property and run; in run order.
fn property_jobs(p: &config::PropertiesConfig, ids: &[String]) -> Vec<Job> {
    if batched(&p.command) {
        (1..=p.runs)
            .map(|n| Job::Properties {
                n,
                ids: ids.to_vec(),
            })
            .collect()
    } else {
        ids.iter()
            .flat_map(|id| {
                (1..=p.runs).map(move |n| Job::Properties {
                    n,
                    ids: vec![id.clone()],
                })
            })
            .collect()
    }
}

/// Runs `work` in the room, up to `slots` at once, in order of start. Once one changes the
/// tree (section 11.3), or fails, or a signal comes, nothing more starts and what runs is
/// stopped: the jobs stopped or never started are not in the result.
fn run_jobs<'j>(g: &Gathered, work: &'j [Job], slots: usize) -> Vec<Result<Done<'j>, CliError>> {
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
    let stop = AtomicBool::new(false);
    let next = AtomicUsize::new(0);
    let results = std::sync::Mutex::new(Vec::new());
    let p = &g.config.properties;
    let one = |job: &'j Job| -> Result<Option<Done<'j>>, CliError> {
        let (label, argv, timeout) = match job {
            Job::Canary => {
                let c = g
                    .config
                    .canary
                    .as_ref()
                    .ok_or_else(|| CliError::software("no canary"))?;
                ("canary".to_owned(), c.command.clone(), c.timeout())
            }
            Job::Properties { n, ids } => (
                match ids.as_slice() {
                    [id] => format!("{T1} {id} run {n}/{}", p.runs),
                    _ => format!("{T1} run {n}/{} ({} properties)", p.runs, ids.len()),
                },
                property_argv(&p.command, ids),
                p.timeout(),
            ),
        };
        let (ran, read) = run_receipted_in(&label, &argv, timeout, &g.room, Some(&stop))?;
        if ran.cancelled {
            return Ok(None);
        }
        // A canary that did not fail as it must decides (section 11.5): no property run
        // counts after it, so none more is started.
        if let (Job::Canary, Some(c)) = (job, &g.config.canary) {
            let sang = crate::core::gate::CanaryRun {
                exit_code: ran.run,
                catch_exit_codes: c.catch.clone(),
                receipt: read.as_ref().and_then(super::runner::receipt_of),
            }
            .sang();
            if !sang {
                stop.store(true, Ordering::SeqCst);
            }
        }
        let finding = integrity_after(g, &g.room, &label)?;
        if finding.is_some() {
            // Nothing more runs: the runs so far are reported, and the core decides.
            stop.store(true, Ordering::SeqCst);
        }
        Ok(Some(Done {
            job,
            ran,
            read,
            finding,
        }))
    };
    std::thread::scope(|scope| {
        for _ in 0..slots.clamp(1, work.len().max(1)) {
            scope.spawn(|| {
                while !stop.load(Ordering::SeqCst) {
                    let i = next.fetch_add(1, Ordering::SeqCst);
                    let Some(job) = work.get(i) else { break };
                    let done = one(job);
                    if done.is_err() {
                        stop.store(true, Ordering::SeqCst);
                    }
                    if let Some(done) = done.transpose() {
                        results
                            .lock()
                            .unwrap_or_else(std::sync::PoisonError::into_inner)
                            .push((i, done));
                    }
                }
            });
        }
    });
    let mut results = results
        .into_inner()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    results.sort_by_key(|(i, _)| *i);
    results.into_iter().map(|(_, r)| r).collect()
}

/// The property runs done, as the facts hold them: each property's exit codes in run order
/// (a batch's for every property in it) and, with receipts, each its own cases' receipt. A
/// property not every run of which finished (the tree changed) is left out.
fn record_properties(g: &Gathered, doc: &mut Value, done: Vec<Done<'_>>) {
    let p = &g.config.properties;
    let on = receipted(&p.command);
    let mut codes: BTreeMap<&str, Vec<(u8, Value)>> = BTreeMap::new();
    let mut theirs: BTreeMap<&str, Vec<(u8, Value)>> = BTreeMap::new();
    for d in &done {
        let Job::Properties { n, ids } = d.job else {
            continue;
        };
        for id in ids {
            codes.entry(id).or_default().push((*n, json!(d.ran.run)));
            if let Some(read) = &d.read {
                let receipt = property_receipt(read, p.case.as_deref(), id);
                theirs.entry(id).or_default().push((*n, json!(receipt)));
            }
        }
        if let Some(read) = &d.read {
            add_failures(doc, read);
        }
    }
    let in_order = |mut runs: Vec<(u8, Value)>| {
        runs.sort_by_key(|(n, _)| *n);
        Value::Array(runs.into_iter().map(|(_, v)| v).collect())
    };
    let mut runs = Map::new();
    let mut receipts = Map::new();
    for (id, ran) in codes {
        if ran.len() != usize::from(p.runs) {
            continue;
        }
        runs.insert(id.to_owned(), json!({ "runs": in_order(ran) }));
        if on {
            receipts.insert(
                id.to_owned(),
                in_order(theirs.remove(id).unwrap_or_default()),
            );
        }
    }
    doc["property_runs"] = Value::Object(runs);
    if on {
        doc["property_receipts"] = Value::Object(receipts);
    }
    if batched(&p.command) {
        doc["batched"] = json!(true);
    }
}

/// A second copy of the judged tree, made in a thread of its own while the gate gathers:
/// where the suite runs when runs are at once and there is no build step (whose output the
/// copy would need). Taken by the suite; a gate that never runs it waits for it on drop, so
/// the copy is removed before the gate exits.
struct Spare(std::sync::Mutex<Option<std::thread::JoinHandle<Result<Room, CliError>>>>);

impl Spare {
    fn start(what: Option<(super::sandbox::SandboxConfig, String)>) -> Spare {
        Spare(std::sync::Mutex::new(what.map(|(sandbox, tree)| {
            std::thread::spawn(move || Room::open(&sandbox, &tree, None))
        })))
    }

    /// The copy, once made; `None` when none was started (or it was taken).
    fn take(&self) -> Option<Result<Room, CliError>> {
        let handle = self
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .take()?;
        Some(
            handle
                .join()
                .unwrap_or_else(|_| Err(CliError::software("the suite's copy panicked"))),
        )
    }
}

impl Drop for Spare {
    fn drop(&mut self) {
        drop(self.take());
    }
}

/// The suite started early, in its own copy, while the canary and the properties run; it
/// gives its copy back with its result (for a re-run). Dropped unjoined (an error, a signal),
/// it is stopped.
struct Early<'scope, 'env> {
    handle: Option<std::thread::ScopedJoinHandle<'scope, Result<(Room, SuiteDone), CliError>>>,
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
    _env: std::marker::PhantomData<&'env ()>,
}

impl<'scope, 'env> Early<'scope, 'env> {
    /// Starts it in `copy`, or (none given) in the spare copy, or a fresh one it makes first.
    fn start(
        scope: &'scope std::thread::Scope<'scope, 'env>,
        g: &'env Gathered,
        copy: Option<Room>,
    ) -> Self {
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let flag = std::sync::Arc::clone(&stop);
        output::error(&format!(
            "{T2}: started now in its own copy, beside the other runs; used only if {T1} passes"
        ));
        let handle = scope.spawn(move || {
            let room = match copy.map(Ok).or_else(|| g.spare.take()) {
                Some(room) => room?,
                None => Room::open(&g.config.sandbox, &g.tree, g.cache.as_ref())?,
            };
            let done = run_suite(g, &room, T2, &[], Some(&flag))?;
            Ok((room, done))
        });
        Early {
            handle: Some(handle),
            stop,
            _env: std::marker::PhantomData,
        }
    }

    /// Its result, once it ended.
    fn join(mut self) -> Result<(Room, SuiteDone), CliError> {
        self.handle
            .take()
            .ok_or_else(|| CliError::software("the suite was joined twice"))?
            .join()
            .unwrap_or_else(|_| Err(CliError::software("the suite's thread panicked")))
    }

    /// Stops it (killed if it still runs); what it did is not recorded: it did not run.
    fn stop(mut self) {
        self.stop.store(true, std::sync::atomic::Ordering::SeqCst);
        if let Some(Ok(Ok((_, done)))) = self.handle.take().map(std::thread::ScopedJoinHandle::join)
        {
            output::error(&format!(
                "{T2}: {}: the decision came before the suite, which is recorded as not run",
                if done.cancelled {
                    "its early run was stopped"
                } else {
                    "its early run is not counted"
                }
            ));
        }
    }
}

impl Drop for Early<'_, '_> {
    fn drop(&mut self) {
        self.stop.store(true, std::sync::atomic::Ordering::SeqCst);
    }
}

/// The seconds each tier's runs took, as the runner measured them.
#[derive(Debug, Default, Clone, Copy)]
struct Seconds {
    t1: f64,
    t2: f64,
}

/// A ladder-ledger row (section 4).
struct TierRow {
    tier: &'static str,
    verdict: TierVerdict,
    seconds: f64,
    exit_code: Option<u8>,
}

/// The ladder-ledger rows of the tiers the decision reached, with the verdicts the core gave
/// them: one row per tier that ran, so the ledger never disagrees with the answer.
fn tier_rows(answer: &GateAnswer, seconds: Seconds) -> Vec<TierRow> {
    answer
        .steps
        .iter()
        .filter_map(|s| match s {
            Step::Properties {
                ran: true,
                tier: Some(t),
                ..
            } => Some(TierRow {
                tier: T1,
                verdict: *t,
                seconds: seconds.t1,
                exit_code: None,
            }),
            Step::Fixtures {
                ran: true,
                tier: Some(t),
                exit_code,
                ..
            } => Some(TierRow {
                tier: T2,
                verdict: *t,
                seconds: seconds.t2,
                exit_code: *exit_code,
            }),
            _ => None,
        })
        .collect()
}

/// Decides the facts (locally, or with `--server`), writes what was asked for, prints the
/// answer and gives its exit code.
fn finish(
    args: &GateArgs,
    core: &Core<'_>,
    doc: &Value,
    invalid: &str,
    shadow: bool,
) -> Result<(Exit, GateAnswer), CliError> {
    if let Some(path) = &args.facts_out {
        let text = serde_json::to_string_pretty(doc).unwrap_or_default() + "\n";
        write_file(path, &text, false)?;
    }
    let answer = core.decide(doc, invalid)?;
    write_outputs(args, &answer, shadow)?;
    if let Some(path) = &args.decision_log {
        if args.remote.server.is_some() {
            output::error(&format!(
                "--decision-log {}: the server decided, and its own decision log has the line",
                path.display()
            ));
        } else {
            // The same decision the local core made (deciding is pure), for its log fields.
            let request = Core::parse(doc, invalid)?;
            let decision = GateDecision::decide(&request, &Defaults::default());
            let line = crate::telemetry::decision_line_of(
                &answer.decision_id,
                &request,
                &decision,
                shadow,
            );
            write_file(path, &line, true)?;
        }
    }
    // GitHub reads workflow commands from both streams: with `--json` the annotation goes to
    // stderr, so stdout stays one JSON document a script can parse.
    if std::env::var("GITHUB_ACTIONS").is_ok_and(|v| v == "true") {
        if args.json {
            let _ = std::io::stderr()
                .lock()
                .write_all(annotation(&answer, shadow).as_bytes());
        } else {
            output::stdout(&annotation(&answer, shadow))?;
        }
    }
    if !shadow {
        let exit = remote::print::<GateDecision>(&answer, args.json)?;
        return Ok((exit, answer));
    }
    // Shadow mode: the same answer, said as what enforcing would do; the exit is 0.
    if args.json {
        output::stdout(
            &(serde_json::to_string_pretty(&shadowed(&answer)).unwrap_or_default() + "\n"),
        )?;
    } else {
        output::stdout(&format!(
            "would {} reason={} (shadow mode: exit 0; enforced, exit {})\n",
            answer.disposition.as_str(),
            answer.reason.as_str(),
            answer.exit_code
        ))?;
    }
    Ok((Exit::Go, answer))
}

/// The JSON answer in shadow mode: the decision as made, and `"shadow": true`.
fn shadowed(answer: &GateAnswer) -> Value {
    let mut v = serde_json::to_value(answer).unwrap_or(Value::Null);
    v["shadow"] = json!(true);
    v
}

/// The lines the patch adds to files that are not test-adjacent and that match a
/// `[suspicious]` pattern (CONTRACT.md section 11.6): the first pattern each matches, at most
/// 1,000 lines (the core lists 100 and counts them all).
fn suspicious_lines(config: &GateConfig, base: &str, tree: &str) -> Result<Value, CliError> {
    let patterns = config.suspicious.compiled().map_err(CliError::data)?;
    if patterns.is_empty() {
        return Ok(json!([]));
    }
    let markers = crate::core::ladder::ScopeMarkers::default();
    let mut hits = Vec::new();
    for (file, line, text) in added_lines(base, tree)? {
        if RepoPath::parse(&file).is_ok_and(|p| markers.is_test_adjacent(&p)) {
            continue;
        }
        if let Some((pattern, _)) = patterns.iter().find(|(_, r)| r.is_match(&text)) {
            hits.push(json!({"file": file, "line": line, "pattern": pattern}));
            if hits.len() == 1000 {
                break;
            }
        }
    }
    Ok(Value::Array(hits))
}

/// A run of the fixture suite: its facts (`{exit_code, receipt?, failed_tests?, ...}`), the
/// seconds it took, its receipt (whose failures go into the facts' `failures`), and what it
/// changed that it may not.
struct SuiteDone {
    run: Value,
    seconds: f64,
    read: Option<ReceiptRead>,
    finding: Option<Value>,
    cancelled: bool,
}

impl SuiteDone {
    /// Its failures and its integrity finding into the facts; its own facts, to be put where
    /// they go.
    fn record(self, doc: &mut Value) -> Value {
        if let Some(read) = &self.read {
            add_failures(doc, read);
        }
        if let Some(finding) = self.finding {
            doc["integrity"] = json!([finding]);
        }
        self.run
    }
}

/// Runs the fixture suite (t2) in `room`, with `extra` arguments after its command (the
/// deselected tests of a re-run), then checks what it changed; stopped when `cancel` is set.
fn run_suite(
    g: &Gathered,
    room: &Room,
    label: &str,
    extra: &[String],
    cancel: Option<&std::sync::atomic::AtomicBool>,
) -> Result<SuiteDone, CliError> {
    let s = &g.config.suite;
    let argv: Vec<String> = s.command.iter().chain(extra).cloned().collect();
    if receipted(&s.command) {
        let (ran, read) = run_receipted_in(label, &argv, s.timeout(), room, cancel)?;
        let read = if ran.cancelled {
            None
        } else {
            Some(read.unwrap_or_else(|| Err("no receipt".to_owned())))
        };
        let mut run = json!({ "exit_code": ran.run });
        if let Some(read) = &read {
            run["receipt"] = receipt_fact(read);
        }
        if let Some(Ok(report)) = &read {
            if let Some(why) = &report.disagrees {
                output::error(&format!("{label}: its report disagrees with itself: {why}"));
            }
            // The base's tests must still run (section 11.2); a re-run leaves some out.
            if let Some(census) = g.census.as_ref().filter(|_| extra.is_empty()) {
                let gone = census::vanished(census, report);
                if !gone.is_empty() {
                    output::error(&format!(
                        "{label}: {} census tests that passed on the base did not run (first: {})",
                        gone.len(),
                        gone[0]
                    ));
                }
                run["vanished_count"] = json!(gone.len());
                run["vanished"] = json!(
                    gone.into_iter()
                        .take(100)
                        .map(fit_test_id)
                        .collect::<Vec<_>>()
                );
            }
            let ids: Vec<String> = report.failed.iter().cloned().map(fit_test_id).collect();
            run["failed_tests"] = json!(ids);
        }
        let finding = if ran.cancelled {
            None
        } else {
            integrity_after(g, room, label)?
        };
        return Ok(SuiteDone {
            run,
            seconds: ran.seconds,
            read,
            finding,
            cancelled: ran.cancelled,
        });
    }
    // A report left from before (or committed by the patch) must never be read as this
    // run's: only a report the suite writes now counts.
    // A report path through a symbolic link the patch committed (`.patchgate -> /elsewhere`)
    // is neither cleared nor read: the runner never deletes or reads outside the copy.
    let junit = match s.junit.as_deref() {
        Some(j) => match output::link_inside(&room.tree.join(j), Some(&room.tree)) {
            Some(link) => {
                output::error(&format!(
                    "{label}: the JUnit report {j} is reached through the symbolic link {} in the checkout: not read, no failure is discarded",
                    link.display()
                ));
                None
            }
            None => Some((j, room.tree.join(j))),
        },
        None => None,
    };
    if let Some((j, path)) = &junit {
        match std::fs::remove_file(path) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => {
                return Err(CliError::software(format!(
                    "cannot remove the stale JUnit report {j}: {e}"
                )));
            }
        }
    }
    let ran = super::runner::run_check_in(label, &argv, s.timeout(), Place::Room(room), cancel)?;
    let mut run = json!({ "exit_code": ran.run });
    if let Some((j, path)) = junit.filter(|_| !ran.cancelled) {
        match open_report(&path) {
            Ok(f) => match junit::read_report(std::io::BufReader::new(f)) {
                Ok(report) => {
                    let ids: Vec<String> = report.failed.into_iter().map(fit_test_id).collect();
                    run["failed_tests"] = json!(ids);
                    if let Some(why) = report.disagrees {
                        output::error(&format!(
                            "{label}: the JUnit report {j} disagrees with itself: {why}"
                        ));
                        run["report_disagrees"] = json!(fit_test_id(why));
                    }
                }
                Err(e) => output::error(&format!(
                    "{label}: the JUnit report {j} cannot be read ({e}): no failure is discarded"
                )),
            },
            Err(e) => output::error(&format!(
                "{label}: no JUnit report read at {j} ({e}): no failure is discarded"
            )),
        }
    }
    let finding = if ran.cancelled {
        None
    } else {
        integrity_after(g, room, label)?
    };
    Ok(SuiteDone {
        run,
        seconds: ran.seconds,
        read: None,
        finding,
        cancelled: ran.cancelled,
    })
}

/// The arguments that leave `ids` out of a suite run: `[suite] deselect` once per test, with
/// `{nodeid}` the test's pytest node id, found in the copy (see [`pytest_node_id`]).
fn deselect_args(template: &[String], ids: &[String], tree: &Path) -> Vec<String> {
    ids.iter()
        .flat_map(|id| {
            let node = pytest_node_id(id, tree);
            argv_for(template, id)
                .into_iter()
                .map(move |a| a.replace("{nodeid}", &node))
        })
        .collect()
}

/// pytest's node id of a JUnit test id `classname::name` (CONTRACT.md section 12.4): pytest
/// writes the classname as the module's dotted path, then any classes (`tests.test_api` or
/// `tests.test_api.TestRetry`). The longest dotted prefix that is a file `a/b.py` in `tree` is
/// the module; the rest are classes: `tests/test_api.py::TestRetry::name`. An id with no such
/// file is given as it is.
fn pytest_node_id(id: &str, tree: &Path) -> String {
    let Some((classname, name)) = id.rsplit_once("::") else {
        return id.to_owned();
    };
    let parts: Vec<&str> = classname.split('.').collect();
    for k in (1..=parts.len()).rev() {
        let file = format!("{}.py", parts[..k].join("/"));
        if RepoPath::parse(&file).is_ok() && tree.join(&file).is_file() {
            let mut node = file;
            for class in &parts[k..] {
                node.push_str("::");
                node.push_str(class);
            }
            return format!("{node}::{name}");
        }
    }
    id.to_owned()
}

fn append_rows(
    path: &Path,
    head: &str,
    files: &[String],
    rows: &[TierRow],
) -> Result<(), CliError> {
    let mut file = output::create(path, true, checkout().as_deref())?;
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

/// The checkout the gate runs in (the repository's top, where `gather` changed to), whose
/// symbolic links may be the patch's: outputs are never written through them. `None` with
/// `--facts` (no checkout is read).
fn checkout() -> Option<PathBuf> {
    super::git::git(&["rev-parse", "--show-toplevel"])
        .ok()
        .map(|out| PathBuf::from(String::from_utf8_lossy(&out).trim()))
}

fn write_file(path: &Path, text: &str, append: bool) -> Result<(), CliError> {
    output::create(path, append, checkout().as_deref())?
        .write_all(text.as_bytes())
        .map_err(|e| CliError::software(format!("cannot write {}: {e}", path.display())))
}

fn write_outputs(args: &GateArgs, answer: &GateAnswer, shadow: bool) -> Result<(), CliError> {
    if let Some(path) = &args.json_out {
        let text = if shadow {
            serde_json::to_string_pretty(&shadowed(answer))
        } else {
            serde_json::to_string_pretty(answer)
        };
        write_file(path, &(text.unwrap_or_default() + "\n"), false)?;
    }
    if let Some(path) = &args.markdown_out {
        let report = markdown(answer);
        let report = if shadow {
            // The headline says what enforcing would do.
            let rest = report.split_once('\n').map_or("", |(_, rest)| rest);
            format!(
                "## patchgate (shadow mode): would {} (exit {} when enforced; exit 0 now)\n{rest}",
                answer.disposition.as_str(),
                answer.exit_code
            )
        } else {
            report
        };
        write_file(path, &report, true)?;
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
                output::remove(path, checkout().as_deref());
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
fn annotation(answer: &GateAnswer, shadow: bool) -> String {
    let level = match answer.disposition {
        _ if shadow => "notice",
        GateDisposition::MergeOk => "notice",
        GateDisposition::Escalate => "warning",
        GateDisposition::Block | GateDisposition::StopQueue => "error",
    };
    format!(
        "::{level} title=patchgate {}{}::{} reason={} (exit {}, gate rule {})\n",
        if shadow { "(shadow) would " } else { "" },
        answer.disposition.as_str(),
        answer.disposition.as_str(),
        answer.reason.as_str(),
        answer.exit_code,
        <&str>::from(answer.rule)
    )
}

/// `--dry-run`: what would run, in order, and why (as the core plans it); nothing runs.
fn dry_run(args: &GateArgs, g: &Gathered, plan: &GateNext) -> CliResult {
    let mut out = format!(
        "patchgate gate --dry-run: base {}, head {}, config {} (from the base)\n",
        args.base.as_deref().unwrap_or_default(),
        g.head,
        args.config
    );
    // The steps known before anything runs; the later ones are the plan below.
    for step in &plan.steps {
        if matches!(
            step,
            Step::Merge { .. }
                | Step::Seal { .. }
                | Step::Debt { .. }
                | Step::Guard { .. }
                | Step::Binary { .. }
                | Step::Scope { .. }
        ) {
            let (name, summary) = step_name(step);
            out.push_str(&format!("  {name}: {summary}\n"));
        }
    }
    let p = &g.config.properties;
    let suite = g.config.suite.command.join(" ");
    if matches!(plan.next, NextStep::Runs | NextStep::Suite) {
        if let Some(build) = &g.config.build {
            out.push_str(&format!(
                "  build: would run first, once (timeout {} s): {}{}\n",
                build.timeout_s,
                build.command.join(" "),
                match (&g.cache, build.cache.is_empty()) {
                    (Some(c), _) => format!(
                        "; from the build cache of tree {} (`patchgate warm`)",
                        &c.tree[..12]
                    ),
                    (None, false) => {
                        "; no build cache yet (`patchgate warm` on the base keeps one)".to_owned()
                    }
                    (None, true) => String::new(),
                }
            ));
        }
        if let Some(canary) = &g.config.canary {
            out.push_str(&format!(
                "  canary: would run next; it must fail, with its failure in its receipt: {}\n",
                canary.command.join(" ")
            ));
        }
    }
    match plan.next {
        NextStep::Decide if plan.rule != GateRuleName::Route => {
            out.push_str(&format!(
                "  stops here: {} reason={} (gate rule {}); nothing would run\n",
                plan.disposition.as_str(),
                plan.reason.as_str(),
                <&str>::from(plan.rule)
            ));
        }
        NextStep::Decide => {
            out.push_str(&format!(
                "  {T1}: no voting property is in locality: the quorum would be empty (ESCALATE), and the suite would not run\n"
            ));
            let unobserved = plan.steps.iter().find_map(|s| match s {
                Step::Properties { unobserved, .. } if !unobserved.is_empty() => Some(unobserved),
                _ => None,
            });
            if let Some(files) = unobserved {
                out.push_str(&format!(
                    "  warning: no strong property observes {}: add one whose `locality` covers them (then `patchgate admit ID --mutant REF --write`), or list them under `inert` if no property could (docs)\n",
                    files.join(", ")
                ));
            }
        }
        NextStep::Runs => {
            out.push_str(&format!(
                "  {T1}: would run {} properties {} times each (timeout {} s):\n",
                plan.property_ids.len(),
                p.runs,
                p.timeout_s
            ));
            if batched(&p.command) {
                out.push_str(&format!(
                    "    {} (each run one process; each property's outcome from its own cases)\n",
                    property_argv(&p.command, &plan.property_ids).join(" ")
                ));
            } else {
                for id in &plan.property_ids {
                    out.push_str(&format!(
                        "    {}\n",
                        property_argv(&p.command, std::slice::from_ref(id)).join(" ")
                    ));
                }
            }
            let jobs = args.jobs();
            if jobs > 1 {
                out.push_str(&format!(
                    "  {T2}: started at the same time in its own copy (--jobs {jobs}), used only if {T1} passes: {suite}\n"
                ));
            } else {
                out.push_str(&format!("  {T2}: then, if {T1} passes: {suite}\n"));
            }
        }
        NextStep::Suite => out.push_str(&format!(
            "  {T1}: skipped (scope hit)\n  {T2}: would run {suite}\n"
        )),
        NextStep::Rerun => out.push_str(&format!(
            "  {T2}: would re-run without {}\n",
            plan.deselect.join(", ")
        )),
    }
    if g.config.require_admission {
        let unproven: Vec<&str> = plan
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

#[cfg(test)]
mod tests {
    use super::pytest_node_id;

    #[test]
    fn a_junit_id_maps_to_the_pytest_node_id_of_its_file() {
        let tree = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(tree.path().join("tests/api")).unwrap();
        std::fs::write(tree.path().join("tests/test_legacy.py"), "").unwrap();
        std::fs::write(tree.path().join("tests/api/test_retry.py"), "").unwrap();
        for (id, node) in [
            (
                "tests.test_legacy::test_legacy_export",
                "tests/test_legacy.py::test_legacy_export",
            ),
            (
                "tests.api.test_retry.TestRetry::test_timeout[2]",
                "tests/api/test_retry.py::TestRetry::test_timeout[2]",
            ),
            // No such file: given as it is, never guessed.
            ("tests.test_gone::test_x", "tests.test_gone::test_x"),
            ("no_separator", "no_separator"),
        ] {
            assert_eq!(pytest_node_id(id, tree.path()), node, "{id}");
        }
    }
}
