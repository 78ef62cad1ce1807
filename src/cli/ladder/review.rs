//! `patchgate review` and `patchgate calibrate`: the router's decision log, and where the
//! fixes for its attributions landed.

use super::*;

#[derive(Args, Debug)]
pub struct ReviewArgs {
    /// The decision log (JSONL, `-` for stdin).
    pub file: PathBuf,
    /// Print the full answer as JSON instead of the table.
    #[arg(long)]
    pub json: bool,
    /// Append the review drawn as Markdown with Mermaid charts here (`$GITHUB_STEP_SUMMARY`,
    /// say): the escalation rate per week against the 40% line, dispositions per week,
    /// attributions, freeze debt per week, and the yield per tier with `--ledger`.
    #[arg(long)]
    pub markdown_out: Option<PathBuf>,
    /// A ladder ledger (JSONL) whose yield per tier the Markdown draws too.
    #[arg(long, requires = "markdown_out")]
    pub ledger: Option<PathBuf>,
    #[command(flatten)]
    pub remote: RemoteArgs,
}

pub fn review(args: ReviewArgs) -> CliResult {
    let body = read_input(&args.file)
        .map_err(|e| CliError::data(format!("cannot read {}: {e}", args.file.display())))?;
    let review: Review = match &args.remote.server {
        Some(server) => ask(
            &args.remote,
            server,
            "/review",
            "application/x-ndjson",
            body,
        )?,
        None => ladder::review(&body).map_err(|errors| refuse(&Problem::invalid(errors)))?,
    };
    if let Some(path) = &args.markdown_out {
        let ladder = match &args.ledger {
            None => None,
            Some(ledger) => Some(super::report::report_of(ledger, &args.remote)?),
        };
        output::create(path, true, None)?
            .write_all(ladder::review_markdown(&review, ladder.as_ref()).as_bytes())
            .map_err(|e| CliError::software(format!("cannot write {}: {e}", path.display())))?;
    }
    if args.json {
        print_json(&review)?;
    } else {
        let pct = |v: Option<f64>| v.map_or("-".to_owned(), |x| format!("{:.1}%", x * 100.0));
        let mut text = format!(
            "decisions: {}\nescalation rate: {}\nescalated on inadmissible-evidence: {}\n",
            review.decisions,
            pct(review.escalation_rate),
            pct(review.inadmissible_share)
        );
        for (k, v) in &review.by_disposition {
            text.push_str(&format!("  {k:<10} {v}\n"));
        }
        // Every decision by its reason, gate rules' included: they add up to `decisions`.
        for (k, v) in &review.by_reason {
            text.push_str(&format!("  {k:<38} {v}\n"));
        }
        if !review.by_week.is_empty() {
            text.push_str("week        decisions  escalation  inadmissible  freeze debt\n");
            for w in &review.by_week {
                text.push_str(&format!(
                    "{}  {:>9}  {:>10}  {:>12}  {:>11}\n",
                    w.week,
                    w.decisions,
                    pct(w.escalation_rate),
                    pct(w.inadmissible_share),
                    w.freeze_debt.map_or("-".to_owned(), |d| d.to_string())
                ));
            }
        }
        if let Some(w) = &review.warning {
            text.push_str(&format!("warning: {w}\n"));
        }
        output::stdout(&text)?;
    }
    Ok(Exit::Go)
}
