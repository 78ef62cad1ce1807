//! The census file as the gate reads it from the base (CONTRACT.md section 11.2; written by
//! `patchgate census --write`): one JSON line per test id and its base outcome.

use std::collections::BTreeMap;

use crate::cli::error::CliError;
use crate::cli::junit::{Case, Report};

/// A census file as the gate reads it from the base: test id → outcome word, or why it is not
/// one (naming the line).
pub fn parse_census(bytes: &[u8], name: &str) -> Result<BTreeMap<String, String>, CliError> {
    let text = std::str::from_utf8(bytes)
        .map_err(|_| CliError::data(format!("the census {name} is not UTF-8")))?;
    let mut out = BTreeMap::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let bad = |why: String| CliError::data(format!("the census {name} line {}: {why}", i + 1));
        let v = crate::core::json::strict_value(line.as_bytes())
            .map_err(|e| bad(format!("not JSON: {e}")))?;
        let (Some(id), Some(outcome)) = (v["id"].as_str(), v["outcome"].as_str()) else {
            return Err(bad(
                "must be {\"id\": \"classname::name\", \"outcome\": \"pass\"|\"skip\"|\"fail\"}"
                    .to_owned(),
            ));
        };
        if !matches!(outcome, "pass" | "skip" | "fail")
            || v.as_object().is_some_and(|o| o.len() != 2)
        {
            return Err(bad(format!(
                "{outcome:?} is not pass, skip or fail (or the line has other fields)"
            )));
        }
        out.insert(id.to_owned(), outcome.to_owned());
    }
    Ok(out)
}

/// The census tests that passed on the base and did not run in `report` (absent, or skipped):
/// sorted, all of them.
pub fn vanished(census: &BTreeMap<String, String>, report: &Report) -> Vec<String> {
    let ran: std::collections::HashSet<&str> = report
        .cases
        .iter()
        .filter(|(_, c)| *c != Case::Skipped)
        .map(|(id, _)| id.as_str())
        .collect();
    census
        .iter()
        .filter(|(id, outcome)| *outcome == "pass" && !ran.contains(id.as_str()))
        .map(|(id, _)| id.clone())
        .collect()
}
