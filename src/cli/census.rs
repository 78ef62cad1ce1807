//! `patchgate census`: the base's tests, recorded so the gate can tell when one stops running
//! (CONTRACT.md section 11.2). The suite runs on the base in a clean room, as the gate runs it;
//! its receipt lists every test case and how it ended, and the census is that list: one JSON
//! line per test id, `{"id": "tests.test_api::test_retry", "outcome": "pass", "seconds":
//! 0.012}`, sorted by id (`seconds` where the report gives a case's `time`: a split gate
//! balances its shards by them, issue 53).
//! Committed beside the expected seal and named by `[suite] census`, it is guarded like it.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::PathBuf;

use clap::Args;

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
fn outcome_of(case: Case) -> crate::cli::gate::CensusOutcome {
    use crate::cli::gate::CensusOutcome;
    match case {
        Case::Passed => CensusOutcome::Pass,
        Case::Failed => CensusOutcome::Fail,
        Case::Skipped => CensusOutcome::Skip,
    }
}

/// A suite's cases as the census records them: how each ended, and the milliseconds each took
/// where the report says.
type Cases = (
    BTreeMap<String, Case>,
    std::collections::HashMap<String, u64>,
);

/// Runs the suite in `room` and reads its cases from its receipt: each id once, a case listed
/// twice keeping its worst outcome (fail, then skip); the suite's exit code with them.
fn suite_cases(
    room: &Room,
    suite: &super::config::SuiteConfig,
    base: &str,
    label: &str,
) -> Result<(Option<u8>, Cases), CliError> {
    let ran = Run::new(label, &suite.command, suite.timeout(), Place::Room(room))
        .start()?
        .ran()?;
    let (run, read) = (ran.run, ran.receipt);
    interrupt::check()?;
    let report = match read {
        Some(Ok(report)) => report,
        Some(Err(why)) => {
            return Err(CliError::data(format!(
                "the suite on {base} wrote no readable report ({why}): no census"
            )));
        }
        None => return Err(CliError::software("the suite ran without a receipt")),
    };
    if let Some(why) = &report.disagrees {
        return Err(CliError::data(format!(
            "the suite's report on {base} disagrees with itself ({why}): no census"
        )));
    }
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
            "the suite on {base} ran no test: no census"
        )));
    }
    let mut millis = std::collections::HashMap::new();
    for (id, ms) in report.millis {
        let slot: &mut u64 = millis.entry(id).or_default();
        *slot = slot.saturating_add(ms);
    }
    Ok((run, (cases, millis)))
}

/// The test ids the base's ledger freezes (open test rows): failures the gate discards.
fn frozen_tests(
    base: &str,
    base_ref: &str,
    config: &super::config::GateConfig,
) -> Result<std::collections::HashSet<String>, CliError> {
    use crate::core::freeze_ledger::{Frozen, LedgerState};
    let Some(bytes) = super::git::base_file(base, &config.ledger)? else {
        return Ok(Default::default());
    };
    let at = format!("{base_ref}:{}", config.ledger);
    let doc = super::documents::parse_document(&bytes, &at, "ledger")?;
    let rows = super::documents::ledger_rows(&doc, &format!("{at} is not a ledger"))?;
    Ok(rows
        .into_iter()
        .filter(|r| r.state == LedgerState::Open)
        .filter_map(|r| match r.frozen {
            Frozen::Test { id, .. } => Some(id),
            Frozen::Property(_) => None,
        })
        .collect())
}

/// The ids only the first run named, and those only the second did, each sorted.
fn unstable_ids<'a>(
    first: &'a BTreeMap<String, Case>,
    second: &'a BTreeMap<String, Case>,
) -> (Vec<&'a String>, Vec<&'a String>) {
    (
        first
            .keys()
            .filter(|id| !second.contains_key(*id))
            .collect(),
        second
            .keys()
            .filter(|id| !first.contains_key(*id))
            .collect(),
    )
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
    let room = super::runner::open_room(&config.sandbox, &base, config.build_cache().as_ref())?;
    // As the gate's suite step runs it (issue 64): in a room whose build step ran first.
    if let Some(build) = &config.build {
        let ran = Run::new("build", &build.command, build.timeout(), Place::Room(&room))
            .tail(2048)
            .start()?
            .ran()?;
        interrupt::check()?;
        if ran.run != Some(0) {
            return Err(CliError::data(format!(
                "the build step on {} does not pass (exit {}): every gate would fail at it. Fix the base first; no census written. Its last lines:\n{}",
                args.on.base,
                ran.run.map_or("none: killed".to_owned(), |c| c.to_string()),
                ran.tail
            )));
        }
    }
    let (run, (cases, millis)) = suite_cases(&room, suite, &args.on.base, "census")?;
    // A census is written of a suite that passes (issue 64): a base test that fails would
    // fail every gate. Only a test the base's ledger freezes (an open row) may fail, as the
    // gate discards it.
    let frozen = frozen_tests(&base, &args.on.base, &config)?;
    let failing: Vec<&String> = cases
        .iter()
        .filter(|(id, c)| **c == Case::Failed && !frozen.contains(*id))
        .map(|(id, _)| id)
        .collect();
    let any_failed = cases.values().any(|c| *c == Case::Failed);
    let caught = run.is_some_and(|c| suite.catch.contains(c)) && any_failed;
    if args.write && (!failing.is_empty() || !(run == Some(0) || caught)) {
        let mut named: Vec<String> = failing.iter().take(10).map(|i| format!("{i:?}")).collect();
        if failing.len() > 10 {
            named.push(format!("and {} more", failing.len() - 10));
        }
        return Err(CliError::data(format!(
            "the suite fails on {} (exit {}){}. Every gate would BLOCK on it: fix the base, or freeze the failing tests in the ledger ({}: a test row, `{{\"test_id\": ID, \"covers\": [...], \"state\": \"open\", ...}}`). No census written",
            args.on.base,
            run.map_or("none: killed".to_owned(), |c| c.to_string()),
            if named.is_empty() {
                String::new()
            } else {
                format!("; failing: {}", named.join(", "))
            },
            config.ledger
        )));
    }
    // Written to be committed, the census must name the same tests every run: the suite runs
    // twice, and ids that differ between the runs (a parameter drawn from the clock, a random
    // value, a set's order) are refused, or every gate would find tests vanished.
    if args.write {
        let (_, (again, _)) = suite_cases(&room, suite, &args.on.base, "census (run 2)")?;
        let (only_first, only_second) = unstable_ids(&cases, &again);
        if !only_first.is_empty() || !only_second.is_empty() {
            let list = |ids: &[&String]| {
                let mut s: Vec<String> = ids.iter().take(5).map(|i| format!("{i:?}")).collect();
                if ids.len() > 5 {
                    s.push(format!("and {} more", ids.len() - 5));
                }
                s.join(", ")
            };
            return Err(CliError::data(format!(
                "the suite on {} names different tests on two runs: {} only in run 1 ({}), {} only in run 2 ({}). Every gate would find them vanished: pin what the ids are made of (parametrize over fixed values, give `ids=` names that do not hold the clock, a random value or a set's order). No census written",
                args.on.base,
                only_first.len(),
                list(&only_first),
                only_second.len(),
                list(&only_second)
            )));
        }
    }
    let mut text = String::new();
    for (id, case) in &cases {
        // The seconds it took (issue 53: a split gate balances its shards by them).
        let line = crate::cli::gate::CensusLine {
            id: id.clone(),
            outcome: outcome_of(*case),
            seconds: millis.get(id).map(|ms| *ms as f64 / 1000.0),
        };
        text.push_str(&serde_json::to_string(&line).unwrap_or_default());
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Written by hand: the same ids in another order are stable; an id drawn from the clock
    /// differs on each side.
    #[test]
    fn ids_that_differ_between_two_runs_are_named() {
        let run = |ids: &[&str]| -> BTreeMap<String, Case> {
            ids.iter()
                .map(|i| ((*i).to_owned(), Case::Passed))
                .collect()
        };
        let a = run(&["t::a", "t::b[2026-12-03T10:00:01]"]);
        let b = run(&["t::b[2026-12-03T10:00:07]", "t::a"]);
        let (first, second) = unstable_ids(&a, &b);
        assert_eq!(first, ["t::b[2026-12-03T10:00:01]"]);
        assert_eq!(second, ["t::b[2026-12-03T10:00:07]"]);
        let (first, second) = unstable_ids(&a, &a);
        assert!(first.is_empty() && second.is_empty());
    }
}
