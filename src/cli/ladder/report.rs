//! `patchgate ladder report`: the yield report of a ledger.

use super::*;

/// The yield report of a ladder ledger (JSONL, `-` for stdin): made here, or by the server.
pub(super) fn report_of(ledger: &PathBuf, remote: &RemoteArgs) -> Result<Report, CliError> {
    let body = read_input(ledger)
        .map_err(|e| CliError::data(format!("cannot read {}: {e}", ledger.display())))?;
    let report: Report = match &remote.server {
        Some(server) => ask(
            remote,
            server,
            "/ladder/report",
            "application/x-ndjson",
            body,
        )?,
        None => ladder::report_of_ledger(&body, true)
            .map_err(|errors| refuse(&Problem::from(errors)))?,
    };
    ladder::check_report(&report).map_err(|problem| refuse(&problem))?;
    Ok(report)
}

pub(super) fn report(args: ReportArgs) -> CliResult {
    let report = report_of(&args.ledger, &args.remote)?;
    if args.json {
        print_json(&report)?;
        return Ok(Exit::Go);
    }
    let mut text = format!(
        "{:<16} {:>6} {:>6} {:>6} {:>6} {:>10} {:>10} {:>12}\n",
        "tier", "runs", "passes", "caught", "errors", "median_s", "total_s", "yield_per_s"
    );
    for t in &report.tiers {
        text.push_str(&format!(
            "{:<16} {:>6} {:>6} {:>6} {:>6} {:>10.3} {:>10.3} {:>12}\n",
            t.tier,
            t.runs,
            t.passes,
            t.caught,
            t.errors,
            t.median_s,
            t.total_s,
            t.yield_per_s.map_or("-".to_owned(), |y| format!("{y:.4}"))
        ));
    }
    for n in &report.notes {
        text.push_str(&format!("\n- {n}"));
    }
    text.push('\n');
    output::stdout(&text)?;
    Ok(Exit::Go)
}
