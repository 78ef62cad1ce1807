//! `patchgate quorum`: builds the `/quorum` request from the files a repository already has
//! (catalog, changed files or a git range, results, ledger, seal files) and decides it locally
//! or asks a server. Exit codes 0/1/2/3 as the contract says.

use std::path::{Path, PathBuf};

use clap::Args;
use serde_json::{Map, Value};

use super::documents::{parse_document, read_seal_file};
use super::error::{CliError, CliResult};
use super::git::fill_commit_counts;
use super::{AnswerArgs, ChangedFilesArgs, output, read_input, remote};
use crate::core::decision::Decision;
use crate::core::quorum::{QuorumAnswer, QuorumDecision};
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
    #[command(flatten)]
    pub answer: AnswerArgs,
}

fn data(msg: impl Into<String>) -> CliError {
    CliError::data(msg)
}

pub fn run(args: QuorumArgs) -> CliResult {
    let request = build_request(&args)?;
    decide(&args, request)
}

/// Reads a JSON or YAML document (JSON when the file says so by name or first character).
fn read_document(path: &Path, what: &str) -> Result<Value, CliError> {
    let bytes = read_input(&path.to_path_buf())
        .map_err(|e| data(format!("cannot read the {what} {}: {e}", path.display())))?;
    parse_document(&bytes, &path.display().to_string(), what)
}

fn build_request(args: &QuorumArgs) -> Result<Vec<u8>, CliError> {
    let catalog = read_document(&args.catalog, "catalog")?;
    let changed = args.changed.resolve()?;
    let results = match &args.results {
        Some(p) => read_document(p, "results")?,
        None => Value::Object(Map::new()),
    };
    let mut ledger = match &args.ledger {
        Some(p) => super::documents::ledger_rows(
            &read_document(p, "ledger")?,
            &format!("the ledger {} is invalid:", p.display()),
        )?,
        None => Vec::new(),
    };
    let head = args.changed.head.as_deref().unwrap_or("HEAD");
    fill_commit_counts(&mut ledger, head)?;
    let actual = read_seal_file(&args.seal)?;
    let expected = read_seal_file(&args.expected)?;
    let body = super::wire::QuorumBody {
        changed_files: &changed,
        catalog: &catalog,
        results: &results,
        ledger: &ledger,
        seal: super::wire::SealPair {
            actual: actual.to_hex(),
            expected: expected.to_hex(),
        },
        patch_id: args.answer.patch_id.as_deref(),
        debt_cap: args.debt_cap,
        catch_exit_codes: (!args.catch_exit_codes.is_empty()).then_some(&args.catch_exit_codes[..]),
        require_admission: args.require_admission.then_some(true),
    };
    Ok(serde_json::to_vec(&body).unwrap_or_default())
}

/// The one line, then a row per property and the debt.
fn print(answer: &QuorumAnswer) -> Result<(), CliError> {
    let mut text = <QuorumDecision as Decision>::line(answer);
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

fn decide(args: &QuorumArgs, body: Vec<u8>) -> CliResult {
    let answer = remote::decide::<QuorumDecision>(&args.answer.remote, body, |problem| {
        CliError::problem(
            Exit::DataErr,
            "the quorum request built from these files is invalid:",
            &problem,
        )
    })?;
    if args.answer.json {
        return remote::print::<QuorumDecision>(&answer, true);
    }
    print(&answer)?;
    Ok(Exit::from_decision(answer.exit_code).unwrap_or(Exit::Software))
}
