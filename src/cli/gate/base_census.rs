//! The census file as the gate reads it from the base (CONTRACT.md section 11.2; written by
//! `patchgate census --write`): one JSON line per test id and its base outcome.

use std::collections::BTreeMap;

use crate::cli::error::CliError;
use crate::cli::junit::{Case, Report};

/// The base's census as the gate reads it: test id → outcome word, and the seconds each test
/// took where the census records them (`"seconds"`, written by `patchgate census` since issue
/// 53; a split balances the shards by them).
pub type Census = (BTreeMap<String, String>, BTreeMap<String, f64>);

/// One line of a census file: a test id, its outcome on the base, and the seconds it took
/// where recorded (written by `patchgate census --write`, read by the gate from the base).
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CensusLine {
    pub id: String,
    pub outcome: CensusOutcome,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seconds: Option<f64>,
}

/// A test's outcome on the base, as a census line says it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CensusOutcome {
    Pass,
    Skip,
    Fail,
}

impl CensusOutcome {
    pub fn as_str(self) -> &'static str {
        match self {
            CensusOutcome::Pass => "pass",
            CensusOutcome::Skip => "skip",
            CensusOutcome::Fail => "fail",
        }
    }
}

/// A census file as the gate reads it from the base, or why it is not one (naming the line).
pub fn parse_census(bytes: &[u8], name: &str) -> Result<Census, CliError> {
    let text = std::str::from_utf8(bytes)
        .map_err(|_| CliError::data(format!("the census {name} is not UTF-8")))?;
    let (mut out, mut seconds) = (BTreeMap::new(), BTreeMap::new());
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let bad = |why: String| CliError::data(format!("the census {name} line {}: {why}", i + 1));
        let v = crate::core::json::strict_value(line.as_bytes())
            .map_err(|e| bad(format!("not JSON: {e}")))?;
        let line = serde_json::from_value::<CensusLine>(v)
            .ok()
            .filter(|l: &CensusLine| l.seconds.is_none_or(|s| s.is_finite() && s >= 0.0))
            .ok_or_else(|| {
                bad("must be {\"id\": \"classname::name\", \"outcome\": \"pass\"|\"skip\"|\"fail\", \"seconds\": 0.25} (seconds optional, from 0; no other field)".to_owned())
            })?;
        if let Some(s) = line.seconds {
            seconds.insert(line.id.clone(), s);
        }
        out.insert(line.id, line.outcome.as_str().to_owned());
    }
    Ok((out, seconds))
}

/// A doctest's id without its line (`src/lib.rs::zeroize_bytes (line 722)` →
/// `src/lib.rs::zeroize_bytes`, `src/lib.rs::(line 258)` → `src/lib.rs::`): rustdoc names a doctest by the line its example starts on,
/// which moves with every line added above it. Any other id as it is.
pub(super) fn doctest_key(id: &str) -> &str {
    match id.rsplit_once("(line ") {
        Some((item, line))
            if (item.ends_with(' ') || item.ends_with("::"))
                && line
                    .strip_suffix(')')
                    .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit())) =>
        {
            item.trim_end()
        }
        _ => id,
    }
}

/// Whether the base's suite runs property cases too, so that it can be their first run
/// (CONTRACT.md section 15.3): its census lists a passing case of a catalog property (see
/// [`property_cases`]).
pub fn lists_property_cases(
    census: &BTreeMap<String, String>,
    config: &crate::cli::config::GateConfig,
    properties: &[crate::core::catalog::Property],
) -> bool {
    property_cases(census, config, properties)
        .iter()
        .any(|id| census.get(*id).is_some_and(|o| o == "pass"))
}

/// The census tests that are a catalog property's cases (by `[properties] case`), when the
/// suite can be their first run: both the batched property runs and the suite write receipts
/// (a property's outcome is read from its own cases in the suite's). Empty otherwise.
pub fn property_cases<'a>(
    census: &'a BTreeMap<String, String>,
    config: &crate::cli::config::GateConfig,
    properties: &[crate::core::catalog::Property],
) -> std::collections::BTreeSet<&'a str> {
    let Some(case) = config.properties.case.as_deref() else {
        return Default::default();
    };
    let runner = |c: &[String]| crate::cli::runner::receipted(c);
    if !runner(&config.properties.command)
        || !crate::cli::runner::batched(&config.properties.command)
        || !runner(&config.suite.command)
    {
        return Default::default();
    }
    let prefixes: Vec<String> = properties
        .iter()
        .take(10_000)
        .map(|row| case.replace("{id}", &row.id))
        .collect();
    census
        .keys()
        .filter(|id| prefixes.iter().any(|p| crate::core::runs::case_of(id, p)))
        .map(String::as_str)
        .collect()
}

/// The census tests that passed on the base and did not run in `report` (absent, or skipped):
/// sorted, all of them. Doctests are counted by their item, not their line (see
/// [`doctest_key`]): as many of an item's doctests must run as passed on the base; when fewer
/// do, the base's ids of that item are the vanished ones.
pub fn vanished(census: &BTreeMap<String, String>, report: &Report) -> Vec<String> {
    use std::collections::HashMap;
    let mut ran: HashMap<&str, usize> = HashMap::new();
    let here = report.cases.iter().filter(|(_, c)| *c != Case::Skipped);
    for id in here.map(|(id, _)| id) {
        *ran.entry(doctest_key(id)).or_default() += 1;
    }
    let mut passed: HashMap<&str, usize> = HashMap::new();
    for (id, _) in census.iter().filter(|(_, outcome)| *outcome == "pass") {
        *passed.entry(doctest_key(id)).or_default() += 1;
    }
    census
        .iter()
        .filter(|(id, outcome)| {
            let key = doctest_key(id);
            *outcome == "pass"
                && ran.get(key).copied().unwrap_or(0) < passed.get(key).copied().unwrap_or(0)
        })
        .map(|(id, _)| id.clone())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A census line, written by hand: what the gate reads and what it refuses; and the line
    /// `census --write` writes for a test, byte for byte (CONTRACT.md 11.2).
    #[test]
    fn a_census_line_is_read_and_written_as_the_contract_says() {
        type Row<'a> = (&'a str, Option<(&'a str, Option<f64>)>);
        let rows: [Row<'_>; 8] = [
            (r#"{"id":"a::b","outcome":"pass"}"#, Some(("pass", None))),
            (
                r#"{"id":"a::b","outcome":"skip","seconds":0.25}"#,
                Some(("skip", Some(0.25))),
            ),
            (r#"{"id":"a::b","outcome":"passed"}"#, None),
            (r#"{"id":"a::b","outcome":"pass","extra":1}"#, None),
            (r#"{"id":"a::b","outcome":"pass","seconds":-1}"#, None),
            (r#"{"id":1,"outcome":"pass"}"#, None),
            (r#"{"id":"a::b","id":"c::d","outcome":"fail"}"#, None),
            (r#"{"outcome":"fail"}"#, None),
        ];
        for (line, want) in rows {
            let got = parse_census(line.as_bytes(), "t").ok().map(|(o, s)| {
                let outcome = o.get("a::b").cloned().unwrap_or_default();
                (outcome, s.get("a::b").copied())
            });
            let want = want.map(|(o, s)| (o.to_owned(), s));
            assert_eq!(got, want, "{line}");
        }
        let line = CensusLine {
            id: "a::b".to_owned(),
            outcome: CensusOutcome::Fail,
            seconds: Some(1.5),
        };
        assert_eq!(
            serde_json::to_string(&line).unwrap(),
            r#"{"id":"a::b","outcome":"fail","seconds":1.5}"#
        );
    }

    /// Written by hand: a doctest moved by a line is the same doctest; one that is gone, or
    /// one of two on an item that is gone, vanished; an ordinary id is compared as it is.
    #[test]
    fn doctests_are_counted_by_their_item() {
        let census: BTreeMap<String, String> = [
            ("src/lib.rs::zeroize_bytes (line 722)", "pass"),
            ("src/lib.rs::(line 258)", "pass"),
            ("src/lib.rs::(line 385)", "pass"),
            ("zeroize::non_zero", "pass"),
            ("zeroize::flaky (line 3)", "skip"),
        ]
        .into_iter()
        .map(|(a, b)| (a.to_owned(), b.to_owned()))
        .collect();
        let report = |ids: &[&str]| Report {
            cases: ids
                .iter()
                .map(|id| ((*id).to_owned(), Case::Passed))
                .collect(),
            ..Report::default()
        };
        let moved = report(&[
            "src/lib.rs::zeroize_bytes (line 723)",
            "src/lib.rs::(line 259)",
            "src/lib.rs::(line 386)",
            "zeroize::non_zero",
        ]);
        assert!(vanished(&census, &moved).is_empty());
        let one_gone = report(&[
            "src/lib.rs::zeroize_bytes (line 723)",
            "src/lib.rs::(line 259)",
            "zeroize::non_zero",
        ]);
        assert_eq!(
            vanished(&census, &one_gone),
            ["src/lib.rs::(line 258)", "src/lib.rs::(line 385)"]
        );
        let renamed = report(&[
            "src/lib.rs::(line 259)",
            "src/lib.rs::(line 386)",
            "zeroize::non_zero_renamed",
        ]);
        assert_eq!(
            vanished(&census, &renamed),
            ["src/lib.rs::zeroize_bytes (line 722)", "zeroize::non_zero"]
        );
        assert_eq!(doctest_key("a::b (line x)"), "a::b (line x)");
    }
    /// A property case the suite did not run vanished, whoever else ran it (CONTRACT.md
    /// section 15.3: nothing is left out of the suite on the strength of another run);
    /// `lists_property_cases` sees the base's suite running a property's case by
    /// `[properties] case`.
    #[test]
    fn a_property_case_the_suite_did_not_run_vanished() {
        let census: BTreeMap<String, String> = [
            ("properties.test_roundtrip::test_roundtrip", "pass"),
            ("tests.test_api::test_get", "pass"),
        ]
        .into_iter()
        .map(|(a, b)| (a.to_owned(), b.to_owned()))
        .collect();
        let report = Report {
            cases: vec![("tests.test_api::test_get".to_owned(), Case::Passed)],
            ..Report::default()
        };
        assert_eq!(
            vanished(&census, &report),
            ["properties.test_roundtrip::test_roundtrip"]
        );
        let config =
            crate::cli::config::GateConfig::parse(crate::cli::config::STARTER, "patchgate.toml")
                .unwrap();
        let catalog = |id: &str| {
            let doc = serde_json::json!({"properties": [{"id": id, "strength": "strong", "locality": ["src"]}]});
            let (rows, errors) =
                crate::cli::documents::catalog_properties(&doc, &config.properties.catch);
            assert!(errors.is_empty());
            rows
        };
        assert!(lists_property_cases(
            &census,
            &config,
            &catalog("roundtrip")
        ));
        assert!(!lists_property_cases(&census, &config, &catalog("unique")));
        let failing: BTreeMap<String, String> = census
            .keys()
            .map(|k| (k.clone(), "fail".to_owned()))
            .collect();
        assert!(!lists_property_cases(
            &failing,
            &config,
            &catalog("roundtrip")
        ));
    }
}
