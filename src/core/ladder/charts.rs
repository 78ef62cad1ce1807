//! The review drawn for a CI job summary: Mermaid blocks, which GitHub renders in Markdown
//! (`xychart-beta` for series over weeks and tiers, `pie` for shares; both are in the Mermaid
//! GitHub runs), each followed by its table, so the figures stay readable where Mermaid is not
//! drawn.

use std::fmt::Write;

use super::*;

/// A label Mermaid reads in a quoted list: our words and dates only, quotes removed.
fn label(s: &str) -> String {
    format!("\"{}\"", s.replace('"', ""))
}

fn pct(v: Option<f64>) -> String {
    v.map_or("-".to_owned(), |v| format!("{:.1}%", v * 100.0))
}

/// A line chart of `series` over the `x` labels (`xychart-beta`).
fn xy(out: &mut String, title: &str, x: &[String], y_label: &str, series: &[(&str, Vec<f64>)]) {
    let top = series
        .iter()
        .flat_map(|(_, v)| v.iter().copied())
        .fold(0.0_f64, f64::max);
    let top = if top > 0.0 { top } else { 1.0 };
    let _ = writeln!(out, "```mermaid\nxychart-beta\n    title {}", label(title));
    let xs: Vec<String> = x.iter().map(|l| label(l)).collect();
    let _ = writeln!(out, "    x-axis [{}]", xs.join(", "));
    let _ = writeln!(out, "    y-axis {} 0 --> {}", label(y_label), fmt_num(top));
    for (_, values) in series {
        let v: Vec<String> = values.iter().map(|v| fmt_num(*v)).collect();
        let _ = writeln!(out, "    line [{}]", v.join(", "));
    }
    out.push_str("```\n");
}

fn fmt_num(v: f64) -> String {
    let s = format!("{v:.3}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    if s.is_empty() {
        "0".to_owned()
    } else {
        s.to_owned()
    }
}

/// The review as Markdown with charts: the escalation rate per week against the 40% line,
/// dispositions per week, attributions, freeze debt per week, and, given a ladder report, the
/// yield per tier side by side.
pub fn review_markdown(review: &Review, ladder: Option<&Report>) -> String {
    let mut out = String::from("## patchgate review\n\n");
    let _ = writeln!(
        out,
        "{} decisions; escalation rate {}; escalated on inadmissible-evidence {}.\n",
        review.decisions,
        pct(review.escalation_rate),
        pct(review.inadmissible_share)
    );
    if let Some(w) = &review.warning {
        let _ = writeln!(out, "> **Warning:** {w}\n");
    }
    let decided: Vec<&ReviewWeek> = review.by_week.iter().filter(|w| w.decisions > 0).collect();
    if !decided.is_empty() {
        let x: Vec<String> = decided.iter().map(|w| w.week.clone()).collect();
        out.push_str("### Escalation rate per week\n\nThe first line is the escalation rate; the second, the share escalated on `inadmissible-evidence`; the third, the 40% line at which the freeze set is too broad.\n\n");
        xy(
            &mut out,
            "Escalation rate per week",
            &x,
            "share of decisions",
            &[
                (
                    "escalation",
                    decided
                        .iter()
                        .map(|w| w.escalation_rate.unwrap_or(0.0))
                        .collect(),
                ),
                (
                    "inadmissible",
                    decided
                        .iter()
                        .map(|w| w.inadmissible_share.unwrap_or(0.0))
                        .collect(),
                ),
                (
                    "40%",
                    decided.iter().map(|_| INADMISSIBLE_WARNING_SHARE).collect(),
                ),
            ],
        );
        out.push_str("\n| week | decisions | escalation rate | inadmissible-evidence |\n|---|---:|---:|---:|\n");
        for w in &decided {
            let _ = writeln!(
                out,
                "| {} | {} | {} | {} |",
                w.week,
                w.decisions,
                pct(w.escalation_rate),
                pct(w.inadmissible_share)
            );
        }
        let dispositions: Vec<&String> = review.by_disposition.keys().collect();
        let _ = writeln!(
            out,
            "\n### Dispositions per week\n\nOne line per disposition, in this order: {}.\n",
            dispositions
                .iter()
                .map(|d| format!("`{d}`"))
                .collect::<Vec<_>>()
                .join(", ")
        );
        let series: Vec<(&str, Vec<f64>)> = dispositions
            .iter()
            .map(|d| {
                (
                    d.as_str(),
                    decided
                        .iter()
                        .map(|w| w.by_disposition.get(*d).copied().unwrap_or(0) as f64)
                        .collect(),
                )
            })
            .collect();
        xy(&mut out, "Dispositions per week", &x, "decisions", &series);
        let _ = write!(out, "\n| week |");
        for d in &dispositions {
            let _ = write!(out, " {d} |");
        }
        let _ = write!(out, "\n|---|{}\n", "---:|".repeat(dispositions.len()));
        for w in &decided {
            let _ = write!(out, "| {} |", w.week);
            for d in &dispositions {
                let _ = write!(out, " {} |", w.by_disposition.get(*d).copied().unwrap_or(0));
            }
            out.push('\n');
        }
    }
    // Every decision by its reason: the router's attribution, or the gate rule's reason (a
    // guard hit, a reading): the pie and the table add up to `decisions` (issue 67).
    if !review.by_reason.is_empty() {
        out.push_str("\n### Attributions\n\n```mermaid\npie title Attributions\n");
        for (a, n) in &review.by_reason {
            let _ = writeln!(out, "    {} : {n}", label(a));
        }
        out.push_str("```\n\n| attribution | decisions |\n|---|---:|\n");
        for (a, n) in &review.by_reason {
            let _ = writeln!(out, "| `{a}` | {n} |");
        }
    }
    let debt: Vec<&ReviewWeek> = review
        .by_week
        .iter()
        .filter(|w| w.freeze_debt.is_some())
        .collect();
    if !debt.is_empty() {
        out.push_str("\n### Freeze debt per week\n\nThe first line is the debt the week's last decision counted; the second, its cap.\n\n");
        let x: Vec<String> = debt.iter().map(|w| w.week.clone()).collect();
        xy(
            &mut out,
            "Freeze debt per week",
            &x,
            "open rows",
            &[
                (
                    "debt",
                    debt.iter()
                        .map(|w| w.freeze_debt.unwrap_or(0) as f64)
                        .collect(),
                ),
                (
                    "cap",
                    debt.iter()
                        .map(|w| w.debt_cap.unwrap_or(0) as f64)
                        .collect(),
                ),
            ],
        );
        out.push_str("\n| week | freeze debt | cap |\n|---|---:|---:|\n");
        for w in &debt {
            let cap = w.debt_cap.map_or("-".to_owned(), |c| c.to_string());
            let _ = writeln!(
                out,
                "| {} | {} | {cap} |",
                w.week,
                w.freeze_debt.unwrap_or(0)
            );
        }
    }
    if let Some(report) = ladder {
        let tiers: Vec<&TierReport> = report
            .tiers
            .iter()
            .filter(|t| t.yield_per_s.is_some())
            .collect();
        if !tiers.is_empty() {
            out.push_str("\n### Yield per tier (caught per second)\n\nRead as the ratio between tiers.\n\n```mermaid\nxychart-beta\n    title \"Yield per tier\"\n");
            let names: Vec<String> = tiers.iter().map(|t| label(&t.tier)).collect();
            let values: Vec<f64> = tiers.iter().map(|t| t.yield_per_s.unwrap_or(0.0)).collect();
            let top = values.iter().copied().fold(0.0_f64, f64::max);
            let _ = writeln!(out, "    x-axis [{}]", names.join(", "));
            let _ = writeln!(
                out,
                "    y-axis \"caught per second\" 0 --> {}",
                fmt_num(if top > 0.0 { top } else { 1.0 })
            );
            let v: Vec<String> = values.iter().map(|v| fmt_num(*v)).collect();
            let _ = writeln!(out, "    bar [{}]\n```", v.join(", "));
        }
        out.push_str("\n| tier | runs | caught | errors | total s | caught per second |\n|---|---:|---:|---:|---:|---:|\n");
        for t in &report.tiers {
            let y = t.yield_per_s.map_or("-".to_owned(), |y| format!("{y:.4}"));
            let _ = writeln!(
                out,
                "| `{}` | {} | {} | {} | {:.1} | {y} |",
                t.tier, t.runs, t.caught, t.errors, t.total_s
            );
        }
    }
    out
}
