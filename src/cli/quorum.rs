//! `patchgate quorum`: builds the `/quorum` request from the files a repository already has
//! (catalog, changed files or a git range, results, ledger, seal files) and decides it locally
//! or asks a server. Exit codes 0/1/2/3 as the contract says.

use std::path::{Path, PathBuf};

use clap::Args;
use serde_json::{Map, Value, json};

use super::error::{CliError, CliResult};
use super::{ChangedFilesArgs, RemoteArgs, git, output, read_input, remote};
use crate::core::digest::Digest;
use crate::core::quorum::{DEFAULT_DEBT_CAP, QuorumAnswer, decide, parse_request};
use crate::exit::Exit;

#[derive(Debug, Args)]
pub struct QuorumArgs {
    /// The property catalog (YAML or JSON): `properties: [{id, strength, locality, fixtures?, introduced?, admitted?}]`.
    #[arg(long)]
    pub catalog: PathBuf,
    /// The changed files; `--head` is also the commit ledger budgets are counted to.
    #[command(flatten)]
    pub changed: ChangedFilesArgs,
    /// Results (JSON or YAML): `{"<property id>": {"runs": [0, 0]}, ...}`.
    #[arg(long)]
    pub results: Option<PathBuf>,
    /// The freeze ledger (JSON or YAML): a list of rows. Required (a forgotten ledger would
    /// hide every freeze); give --no-ledger when there is none.
    #[arg(
        long,
        required_unless_present = "no_ledger",
        conflicts_with = "no_ledger"
    )]
    pub ledger: Option<PathBuf>,
    /// There is no freeze ledger: nothing is frozen, and debt is 0.
    #[arg(long)]
    pub no_ledger: bool,
    /// The seal computed now: a seal file (`HEX  -`, as `sha256sum` prints it).
    #[arg(long, requires = "expected")]
    pub seal: PathBuf,
    /// The committed seal file (`fixtures.seal.expected`).
    #[arg(long)]
    pub expected: PathBuf,
    /// The freeze-debt cap (default: the server's setting; 5 locally).
    #[arg(long)]
    pub debt_cap: Option<u64>,
    /// An exit code that is a catch, a stable failure (repeatable; default 1, pytest's; a Rust
    /// repository gives 101, `cargo test`'s). Any other code every run shares is an `error`.
    #[arg(long = "catch-exit-code", value_name = "CODE")]
    pub catch_exit_codes: Vec<u8>,
    /// A strong property votes only with its two-commit proof (`admitted` in its catalog row,
    /// from `patchgate admit`); without one it votes as weak and is marked unproven.
    #[arg(long)]
    pub require_admission: bool,
    /// Echoed in the answer.
    #[arg(long)]
    pub patch_id: Option<String>,
    /// Print the full answer as JSON.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub remote: RemoteArgs,
}

fn data(msg: impl Into<String>) -> CliError {
    CliError::data(msg)
}

pub fn run(args: QuorumArgs) -> CliResult {
    let request = build_request(&args)?;
    match &args.remote.server {
        Some(server) => remote_quorum(server, &args, &request),
        None => local_quorum(&args, &request),
    }
}

/// Reads a JSON or YAML document (JSON when the file says so by name or first character).
fn read_document(path: &Path, what: &str) -> Result<Value, CliError> {
    let bytes = read_input(&path.to_path_buf())
        .map_err(|e| data(format!("cannot read the {what} {}: {e}", path.display())))?;
    parse_document(&bytes, &path.display().to_string(), what)
}

/// Parses a JSON or YAML document named `name` (JSON when the name or the first character
/// says so), strictly: a key given twice is refused, never resolved.
pub fn parse_document(bytes: &[u8], name: &str, what: &str) -> Result<Value, CliError> {
    let text =
        std::str::from_utf8(bytes).map_err(|_| data(format!("the {what} {name} is not UTF-8")))?;
    let looks_json = name.ends_with(".json") || text.trim_start().starts_with(['{', '[']);
    if looks_json {
        crate::core::json::strict_value(text.as_bytes())
            .map_err(|e| data(format!("the {what} {name} is not valid JSON: {e}")))
    } else {
        crate::core::json::strict_from(serde_norway::Deserializer::from_str(text))
            .map_err(|e| data(format!("the {what} {name} is not valid YAML: {e}")))
    }
}

/// Reads a seal file: `HEX  -` (what `sha256sum` prints for stdin), or a bare digest.
pub fn read_seal_file(path: &Path) -> Result<Digest, CliError> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| data(format!("cannot read the seal file {}: {e}", path.display())))?;
    parse_seal_text(&text, &path.display().to_string())
}

/// Parses a seal file's text (`HEX  -`, or a bare digest) named `name`.
pub fn parse_seal_text(text: &str, name: &str) -> Result<Digest, CliError> {
    let first = text.lines().next().unwrap_or("").trim();
    let hex = first
        .strip_suffix("  -")
        .or_else(|| first.strip_suffix(" -"))
        .unwrap_or(first)
        .trim();
    Digest::parse_hex(hex).map_err(|e| {
        data(format!(
            "the seal file {name} does not hold `HEX  -`: the digest {e}"
        ))
    })
}

/// Fills `commits_since_open` for open rows that name `opened_against_commit` and lack it,
/// counting commits with git from that commit to the head (inside a repository only).
pub fn fill_commit_counts(ledger: &mut Value, head: &str) -> Result<(), CliError> {
    let Some(rows) = ledger.as_array_mut() else {
        return Ok(());
    };
    let needs_git = rows
        .iter()
        .any(|r| r.get("opened_against_commit").is_some() && r.get("commits_since_open").is_none());
    if !needs_git || git(&["rev-parse", "--git-dir"]).is_err() {
        return Ok(());
    }
    for (i, row) in rows.iter_mut().enumerate() {
        let Some(obj) = row.as_object_mut() else {
            continue;
        };
        if obj.contains_key("commits_since_open") {
            continue;
        }
        let Some(commit) = obj
            .get("opened_against_commit")
            .and_then(Value::as_str)
            .map(str::to_owned)
        else {
            continue;
        };
        if !commit.bytes().all(|b| b.is_ascii_hexdigit()) {
            // Left for validation to refuse with its pointer.
            continue;
        }
        let out = git(&["rev-list", "--count", &format!("{commit}..{head}")]).map_err(|e| {
            data(format!(
                "ledger row {i}: cannot count commits since {commit}: {}",
                e.message
            ))
        })?;
        let n: u64 = String::from_utf8_lossy(&out)
            .trim()
            .parse()
            .map_err(|_| data(format!("ledger row {i}: git gave no commit count")))?;
        obj.insert("commits_since_open".into(), json!(n));
    }
    Ok(())
}

fn build_request(args: &QuorumArgs) -> Result<Value, CliError> {
    let catalog = read_document(&args.catalog, "catalog")?;
    let changed = args.changed.resolve()?;
    let results = match &args.results {
        Some(p) => read_document(p, "results")?,
        None => Value::Object(Map::new()),
    };
    let mut ledger = match &args.ledger {
        Some(p) => read_document(p, "ledger")?,
        None => Value::Array(Vec::new()),
    };
    let head = args.changed.head.as_deref().unwrap_or("HEAD");
    fill_commit_counts(&mut ledger, head)?;
    let actual = read_seal_file(&args.seal)?;
    let expected = read_seal_file(&args.expected)?;
    let mut doc = json!({
        "changed_files": changed,
        "catalog": catalog,
        "results": results,
        "ledger": ledger,
        "seal": {"actual": actual.to_hex(), "expected": expected.to_hex()},
    });
    if let Some(id) = &args.patch_id {
        doc["patch_id"] = json!(id);
    }
    if let Some(cap) = args.debt_cap {
        doc["debt_cap"] = json!(cap);
    }
    if !args.catch_exit_codes.is_empty() {
        doc["catch_exit_codes"] = json!(args.catch_exit_codes);
    }
    if args.require_admission {
        doc["require_admission"] = json!(true);
    }
    Ok(doc)
}

fn print(answer: &QuorumAnswer, as_json: bool) -> Result<(), CliError> {
    if as_json {
        let s = serde_json::to_string_pretty(answer)
            .map_err(|e| CliError::software(format!("cannot print the answer: {e}")))?;
        return output::stdout(&(s + "\n"));
    }
    let mut text = format!(
        "{} reason={}\n",
        answer.outcome.as_str(),
        answer.reason.as_str()
    );
    for p in &answer.properties {
        text.push_str(&format!(
            "  {:<40} {:<6} {:<15} {:<8} {}{}\n",
            p.id,
            p.strength.as_str(),
            if p.in_locality {
                "in-locality"
            } else {
                "not-in-locality"
            },
            p.state.as_str(),
            p.vote.as_str(),
            if p.unproven {
                " (unproven: votes as weak)"
            } else {
                ""
            },
        ));
    }
    let d = &answer.debt;
    text.push_str(&format!(
        "debt: {} open, {} spent, counted {}, cap {}\n",
        d.open, d.spent, d.counted, d.cap
    ));
    output::stdout(&text)
}

fn local_quorum(args: &QuorumArgs, doc: &Value) -> CliResult {
    let request = parse_request(doc).map_err(|errors| {
        CliError::problem(
            Exit::DataErr,
            "the quorum request built from these files is invalid:",
            &crate::core::problem::Problem::invalid(errors),
        )
    })?;
    let decision = decide(&request, DEFAULT_DEBT_CAP);
    let answer = decision.answer(&request, crate::ids::new_decision_id());
    print(&answer, args.json)?;
    Ok(Exit::from_decision(answer.exit_code).unwrap_or(Exit::Software))
}

fn remote_quorum(server: &str, args: &QuorumArgs, doc: &Value) -> CliResult {
    let body = serde_json::to_vec(doc).unwrap_or_default();
    let reply = remote::post(&args.remote, server, "/quorum", "application/json", body)?;
    let (answer, exit) = remote::decision::<QuorumAnswer>(&reply, |a| a.exit_code)?;
    print(&answer, args.json)?;
    Ok(exit)
}
