//! `patchgate review` and `patchgate calibrate`: the router's decision log, and where the
//! fixes for its attributions landed.

use super::*;

pub fn review(args: RowsArgs) -> CliResult {
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
        for (k, v) in &review.by_attribution {
            text.push_str(&format!("  {k:<38} {v}\n"));
        }
        if let Some(w) = &review.warning {
            text.push_str(&format!("warning: {w}\n"));
        }
        output::stdout(&text)?;
    }
    Ok(Exit::Go)
}

pub fn calibrate(args: RowsArgs) -> CliResult {
    let body = read_input(&args.file)
        .map_err(|e| CliError::data(format!("cannot read {}: {e}", args.file.display())))?;
    let classes: Vec<CalibrationClass> = match &args.remote.server {
        Some(server) => ask(
            &args.remote,
            server,
            "/calibrate",
            "application/x-ndjson",
            body,
        )?,
        None => ladder::parse_rows(&body, true, ladder::parse_calibration_row)
            .map(|rows| ladder::calibrate(&rows))
            .map_err(|errors| refuse(&Problem::from(errors)))?,
    };
    if args.json {
        print_json(&classes)?;
    } else {
        let mut text = format!(
            "{:<38} {:>6} {:>11} {:>7} {:>7}\n",
            "attribution", "count", "production", "check", "both"
        );
        for c in &classes {
            text.push_str(&format!(
                "{:<38} {:>6} {:>10.1}% {:>6.1}% {:>6.1}%\n",
                c.attribution,
                c.count,
                c.production * 100.0,
                c.check * 100.0,
                c.both * 100.0
            ));
        }
        output::stdout(&text)?;
    }
    Ok(Exit::Go)
}
