//! `patchgate census`: the base's tests, recorded so the gate can tell when one stops running
//! (CONTRACT.md section 11.2). The suite runs on the base in a clean room, as the gate runs it;
//! its receipt lists every test case and how it ended, and the census is that list: one JSON
//! line per test id, `{"id": "tests.test_api::test_retry", "outcome": "pass"}`, sorted by id.
//! Committed beside the expected seal and named by `[suite] census`, it is guarded like it.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::PathBuf;

use clap::Args;
use serde_json::json;

use super::error::{CliError, CliResult};
use super::junit::Case;
use super::runner::{Place, Run, canary_run, receipted};
use super::sandbox::Room;
use super::{interrupt, output};
use crate::exit::Exit;

/// Where the census is written when the config names none.
pub const DEFAULT_CENSUS: &str = "suite.census";

#[derive(Debug, Args)]
pub struct CensusArgs {
    /// The commit (and its config) recorded or built.
    #[command(flatten)]
    pub on: super::BaseArgs,
    /// Write the census file into this checkout (`[suite] census`, default `suite.census`) to
    /// commit, instead of printing it.
    #[arg(long)]
    pub write: bool,
}

/// A census outcome word.
fn word(case: Case) -> &'static str {
    match case {
        Case::Passed => "pass",
        Case::Failed => "fail",
        Case::Skipped => "skip",
    }
}

pub fn run(args: CensusArgs) -> CliResult {
    interrupt::catch()?;
    super::sandbox::harden_runner();
    let (base, config) = args.on.open()?;
    let suite = &config.suite;
    if !receipted(&suite.command) {
        return Err(CliError::data(format!(
            "{}: the census reads the suite's receipt: put `--junitxml={{junit}}` (or your runner's JUnit option with {{junit}}) in `[suite] command`",
            args.on.config
        )));
    }
    let room = Room::open(&config.sandbox, &base, config.build_cache().as_ref())?;
    let ran = Run::new(
        "census",
        &suite.command,
        suite.timeout(),
        Place::Room(&room),
    )
    .start()?
    .ran()?;
    let (run, read) = (ran.run, ran.receipt);
    interrupt::check()?;
    let report = match read {
        Some(Ok(report)) => report,
        Some(Err(why)) => {
            return Err(CliError::data(format!(
                "the suite on {} wrote no readable report ({why}): no census",
                args.on.base
            )));
        }
        None => return Err(CliError::software("the suite ran without a receipt")),
    };
    if let Some(why) = &report.disagrees {
        return Err(CliError::data(format!(
            "the suite's report on {} disagrees with itself ({why}): no census",
            args.on.base
        )));
    }
    // Each id once; a case listed twice keeps its worst outcome (fail, then skip).
    let mut cases: BTreeMap<String, Case> = BTreeMap::new();
    for (id, case) in report.cases {
        let rank = |c: Case| match c {
            Case::Failed => 2,
            Case::Skipped => 1,
            Case::Passed => 0,
        };
        let e = cases.entry(id).or_insert(case);
        if rank(case) > rank(*e) {
            *e = case;
        }
    }
    if cases.is_empty() {
        return Err(CliError::data(format!(
            "the suite on {} ran no test: no census",
            args.on.base
        )));
    }
    let mut text = String::new();
    for (id, case) in &cases {
        text.push_str(&json!({"id": id, "outcome": word(*case)}).to_string());
        text.push('\n');
    }
    let count = |c: Case| cases.values().filter(|x| **x == c).count();
    let summary = format!(
        "{} tests ({} pass, {} skip, {} fail; the suite exited {})",
        cases.len(),
        count(Case::Passed),
        count(Case::Skipped),
        count(Case::Failed),
        run.map_or("killed".to_owned(), |c| c.to_string())
    );
    if !args.write {
        output::error(&format!("census of {}: {summary}", args.on.base));
        output::stdout(&text)?;
        return Ok(Exit::Go);
    }
    // The canary must fail on the base the way the gate needs (section 11.5): a canary that
    // cannot is found at set-up, not blamed on the first patch as `checker-neutered`.
    if let Some(canary) = &config.canary {
        let ran = Run::new(
            "canary",
            &canary.command,
            canary.timeout(),
            Place::Room(&room),
        )
        .quiet()
        .start()?
        .ran()?;
        interrupt::check()?;
        if let Some(why) = canary_run(&ran, canary.catch.clone()).why_not() {
            return Err(CliError::data(format!(
                "the canary on {} does not fail as the gate needs: {why}. Every patch would escalate `checker-neutered`: fix the canary ([canary] command, {}) on the base first. No census written",
                args.on.base,
                canary.source.join(", ")
            )));
        }
        output::error(&format!(
            "the canary fails on {}, as the gate needs",
            args.on.base
        ));
    }
    let path = PathBuf::from(suite.census.as_deref().unwrap_or(DEFAULT_CENSUS));
    let top = super::git::git(&["rev-parse", "--show-toplevel"])
        .ok()
        .map(|out| PathBuf::from(String::from_utf8_lossy(&out).trim()));
    output::create(&path, false, top.as_deref())?
        .write_all(text.as_bytes())
        .map_err(|e| CliError::software(format!("cannot write {}: {e}", path.display())))?;
    output::error(&format!(
        "wrote {}: {summary}. Commit it beside the expected seal{}",
        path.display(),
        if suite.census.is_none() {
            ", and name it in the config: [suite] census = \"suite.census\""
        } else {
            ""
        }
    ));
    Ok(Exit::Go)
}
