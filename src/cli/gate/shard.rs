//! `patchgate gate --shard K/N` (issue 53): this job's share of the suite, split from the
//! base's census by the core ([`crate::core::gate::partition`]), and the argv that runs it.
//! A shard runs every test but those other shards own: a test the census does not name (a new
//! parametrized case, a doctest whose line moved) runs in every shard, never in none, so the
//! shards together run all one machine would. pytest leaves them out by their JUnit ids (the
//! observed run's driver, `--except`); any other suite is taken to be libtest's, which gets
//! `--exact` and `--skip NAME` for each after its arguments (where `[suite] deselect`'s go).

use std::collections::{BTreeMap, BTreeSet};

use super::super::config::GateConfig;
use super::super::error::CliError;
use super::base_census::Census;
use crate::core::catalog::Property;
use crate::core::gate::{Shard, ShardFacts, Unit, partition, partition_digest};

/// What one run of a property's command or of the canary costs besides its cases: a process
/// started (an interpreter, its test runner, the receipt written). An estimate, measured at
/// 0.4–0.7 s for pytest in a room on this project's 2-core machine.
const START_SECONDS: f64 = 0.5;

/// The checker's unit id: the canary, with the test files the patch adds.
const CHECKER: &str = "checker";

/// The units of a split gate's work besides the suite's own tests (issue 67), as the split
/// weighs them, and which unit each census test goes with.
#[derive(Debug, Clone, Default)]
pub(super) struct Units {
    /// `property:ID` for a property, `checker` for the canary and the added tests.
    pub ids: Vec<String>,
    pub seconds: Vec<f64>,
    /// A property's cases, when the suite runs them as its run 1: they go with it.
    pub case_of: BTreeMap<String, usize>,
    /// The property unit the checker goes with (the heaviest), when there is one; otherwise
    /// the checker is a unit of its own (the last).
    pub checker_with: Option<usize>,
}

/// The units of the gate of `changed`: each catalog property whose locality the change is in
/// (its runs past the suite's and its re-proof when admitted, each a run of its cases' census
/// seconds and a process's start), and the checker (the canary's run and the added tests'
/// one). The checker goes with the heaviest property: the canary rides in that shard's
/// property runs as a property's own test turned (`[canary] twin`), which a canary run alone
/// is not. Every shard reads the same base and patch, and makes the same units.
pub(super) fn units(
    config: &GateConfig,
    properties: &[Property],
    changed: &[String],
    census: &Census,
) -> Units {
    let (outcomes, seconds) = census;
    let paths: Vec<crate::core::path::RepoPath> = changed
        .iter()
        .filter_map(|c| crate::core::path::RepoPath::parse(c).ok())
        .collect();
    let trie = crate::core::path::PrefixTrie::new(&paths);
    let in_suite = super::base_census::property_cases(outcomes, config, properties);
    let mut out = Units::default();
    for p in properties
        .iter()
        .filter(|p| trie.any_covered_by(&p.locality))
    {
        let index = out.ids.len();
        let prefix = config
            .properties
            .case
            .as_deref()
            .map(|c| c.replace("{id}", &p.id));
        let cases: Vec<&str> = outcomes
            .keys()
            .map(String::as_str)
            .filter(|id| {
                prefix
                    .as_deref()
                    .is_some_and(|pre| crate::core::runs::case_of(id, pre))
            })
            .collect();
        let case_seconds: f64 = cases.iter().filter_map(|id| seconds.get(*id)).sum();
        let suite_runs_one = cases.iter().any(|id| in_suite.contains(id));
        if suite_runs_one {
            for id in &cases {
                out.case_of.insert((*id).to_owned(), index);
            }
        }
        let runs = u32::from(config.properties.runs).saturating_sub(u32::from(suite_runs_one))
            + u32::from(p.admitted.is_some() && config.properties.reprove > 0);
        out.ids.push(format!("property:{}", p.id));
        out.seconds
            .push(f64::from(runs) * (case_seconds + START_SECONDS));
    }
    let heaviest = out.seconds.iter().enumerate().fold(
        None,
        |best: Option<(usize, f64)>, (i, s)| match best {
            Some((_, b)) if b >= *s => best,
            _ => Some((i, *s)),
        },
    );
    match heaviest {
        Some((i, _)) => {
            out.checker_with = Some(i);
            if let Some(s) = out.seconds.get_mut(i) {
                *s += 2.0 * START_SECONDS;
            }
        }
        None => {
            out.ids.push(CHECKER.to_owned());
            out.seconds.push(2.0 * START_SECONDS);
        }
    }
    out
}

/// This job's shard: its own facts, the census tests it owns, and those other shards own.
#[derive(Debug, Clone)]
pub(super) struct ShardRun {
    pub facts: ShardFacts,
    pub owned: BTreeSet<String>,
    pub others: BTreeSet<String>,
}

/// The share of `shard` in `census` and the units it runs, and the shard's facts (`config`:
/// the base's config file). A property's cases go with it (issues 64, 67).
pub(super) fn plan(
    shard: Shard,
    census: &Census,
    config: &[u8],
    units: &Units,
) -> Result<ShardRun, CliError> {
    let (outcomes, seconds) = census;
    let tests: Vec<(&str, Option<f64>)> = outcomes
        .keys()
        .map(|id| (id.as_str(), seconds.get(id).copied()))
        .collect();
    let weighed: Vec<Unit<'_>> = units
        .ids
        .iter()
        .zip(&units.seconds)
        .map(|(id, s)| Unit { id, seconds: *s })
        .collect();
    let split = partition(&tests, shard.total, &weighed, |id| {
        units.case_of.get(id).copied()
    });
    let mine: Vec<&str> = units
        .ids
        .iter()
        .zip(&split.units)
        .filter(|(_, k)| **k == shard.index)
        .map(|(id, _)| id.as_str())
        .collect();
    let (mut owned, mut others) = (BTreeSet::new(), BTreeSet::new());
    for ((id, _), k) in tests.iter().zip(&split.tests) {
        match *k == shard.index {
            true => owned.insert((*id).to_owned()),
            false => others.insert((*id).to_owned()),
        };
    }
    if owned.is_empty() {
        return Err(CliError::usage(format!(
            "shard {}/{} owns no test of the base's census ({} tests): split it into fewer shards",
            shard.index,
            shard.total,
            outcomes.len()
        )));
    }
    // The units are in the split's digest too: every shard must have placed them alike.
    let unit_lines: Vec<String> = units.ids.iter().map(|id| format!("unit\t{id}")).collect();
    let digest = partition_digest(
        tests
            .iter()
            .zip(&split.tests)
            .map(|((id, _), k)| (*id, *k))
            .chain(
                unit_lines
                    .iter()
                    .map(String::as_str)
                    .zip(split.units.iter().copied()),
            ),
    );
    Ok(ShardRun {
        facts: ShardFacts {
            index: shard.index,
            total: shard.total,
            partition: digest,
            owned: owned.len() as u64,
            census: outcomes.len() as u64,
            config: {
                use sha2::Digest as _;
                crate::core::digest::Digest(sha2::Sha256::digest(config).into()).to_hex()
            },
            version: env!("CARGO_PKG_VERSION").to_owned(),
            digest: None,
            properties: Some(
                mine.iter()
                    .filter_map(|u| u.strip_prefix("property:"))
                    .map(str::to_owned)
                    .collect(),
            ),
            checker: Some(match units.checker_with {
                Some(i) => split.units.get(i) == Some(&shard.index),
                None => mine.contains(&CHECKER),
            }),
        },
        owned,
        others,
    })
}

impl ShardRun {
    /// The census restricted to the share: what this shard's run is held to.
    pub fn share_of(&self, census: &BTreeMap<String, String>) -> BTreeMap<String, String> {
        census
            .iter()
            .filter(|(id, _)| self.owned.contains(*id))
            .map(|(a, b)| (a.clone(), b.clone()))
            .collect()
    }

    /// The suite's `argv` (as run: plain, or already the observed run's driver) running all
    /// but what other shards own.
    pub fn argv(&self, argv: &[String]) -> Vec<String> {
        match super::observe::except_argv(argv, self.others.iter().cloned()) {
            Some(out) => out,
            None => {
                // A name one of this shard's tests may have too is not skipped: it runs here
                // as well as where it is owned.
                let mine: BTreeSet<String> =
                    self.owned.iter().flat_map(|id| libtest_names(id)).collect();
                let skip: BTreeSet<String> = self
                    .others
                    .iter()
                    .flat_map(|id| libtest_names(id))
                    .filter(|n| !mine.contains(n))
                    .collect();
                let mut out = argv.to_vec();
                out.push("--exact".to_owned());
                for name in skip {
                    out.extend(["--skip".to_owned(), name]);
                }
                out
            }
        }
    }
}

/// The names libtest may know a census id's test by: libtest's JUnit classname is a unit
/// test's module (`tests::t`), or the crate's name for a test at its root (`zeroize::t`), or
/// `integration` (or the binary's tag) for an integration test (`integration::t`), so both
/// the id and its part after the first `::` are given. None for a doctest (`src/lib.rs::item
/// (line 7)`): rustdoc's harness, given `--skip` with a doctest's name (`src/lib.rs - item
/// (line 7)`), runs none of the crate's doctests (seen on 1.95), and a doctest's name moves
/// with its line. So every shard runs the doctests, each still held to its owner's share.
fn libtest_names(id: &str) -> Vec<String> {
    if super::base_census::doctest_key(id) != id {
        return Vec::new();
    }
    match id.split_once("::") {
        Some((_, rest)) => vec![id.to_owned(), rest.to_owned()],
        None => vec![id.to_owned()],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Written by hand: 4 timed tests over 2 shards (3 → 1, 2 → 2, 1 → 2, 1 → 1), the
    /// untimed one by its hash; the facts say how many each owns and the census's size.
    #[test]
    fn a_shard_owns_its_share_of_the_census() {
        let ids = ["t::a", "t::b", "t::c", "t::d"];
        let outcomes: BTreeMap<String, String> = ids
            .iter()
            .map(|i| ((*i).to_owned(), "pass".to_owned()))
            .collect();
        let seconds: BTreeMap<String, f64> =
            [("t::a", 3.0), ("t::b", 2.0), ("t::c", 1.0), ("t::d", 1.0)]
                .into_iter()
                .map(|(i, s)| (i.to_owned(), s))
                .collect();
        let census = (outcomes, seconds);
        let one = plan(
            Shard { index: 1, total: 2 },
            &census,
            b"x",
            &Default::default(),
        )
        .unwrap();
        let two = plan(
            Shard { index: 2, total: 2 },
            &census,
            b"x",
            &Default::default(),
        )
        .unwrap();
        assert_eq!(one.owned.iter().collect::<Vec<_>>(), ["t::a", "t::d"]);
        assert_eq!(two.owned.iter().collect::<Vec<_>>(), ["t::b", "t::c"]);
        assert_eq!(one.others, two.owned);
        // libtest: every name of another shard's tests skipped, exactly; pytest: the driver's
        // `--except` with their ids.
        let cargo = [
            "sh".to_owned(),
            "-c".to_owned(),
            "cargo test -- \"$@\"".to_owned(),
        ];
        assert_eq!(
            one.argv(&cargo)[3..],
            [
                "--exact", "--skip", "b", "--skip", "c", "--skip", "t::b", "--skip", "t::c"
            ]
        );
        let pytest: Vec<String> = ["python3", "-m", "pytest", "-q"]
            .map(str::to_owned)
            .to_vec();
        let argv = two.argv(&pytest);
        assert_eq!(argv[..2], ["python3", "-c"]);
        assert_eq!(argv[3..], ["--except", "t::a", "t::d", "--", "-q"]);
        assert_eq!((one.facts.owned, one.facts.census), (2, 4));
        assert_eq!(one.facts.partition, two.facts.partition);
        // `printf x | sha256sum`
        assert_eq!(
            one.facts.config,
            "2d711642b726b04401627ca9fbac32f5c8530fb1903cc4db02258717921a4881"
        );
        let err = plan(
            Shard { index: 5, total: 5 },
            &census,
            b"x",
            &Default::default(),
        )
        .unwrap_err();
        assert!(err.message.contains("owns no test"), "{}", err.message);
    }

    #[test]
    fn libtest_is_given_every_name_the_test_may_have() {
        assert_eq!(libtest_names("tests::t"), ["tests::t", "t"]);
        assert_eq!(libtest_names("integration::t"), ["integration::t", "t"]);
        assert!(libtest_names("src/lib.rs::zeroize_bytes (line 722)").is_empty());
        assert!(libtest_names("src/lib.rs::(line 258)").is_empty());
        assert_eq!(libtest_names("t"), ["t"]);
    }

    /// The units of a gate, by hand from the starter's config (`runs = 2`, `reprove = 1`, the
    /// suite writing receipts): `a` (admitted, its locality `src/a`, two cases of 1.0 and 0.5
    /// s, which the suite runs as its run 1) weighs (2 - 1 + 1) × (1.5 + 0.5) = 4.0 s and takes
    /// its cases along; `b` (not admitted) weighs (2 - 1) × (0.25 + 0.5) = 0.75 s; `c`, whose
    /// locality the change is not in, is no unit; the checker (2 × 0.5 = 1.0 s) goes with `a`,
    /// the heaviest: 5.0 s.
    #[test]
    fn the_units_are_the_changed_properties_and_the_checker() {
        let config =
            crate::cli::config::GateConfig::parse(crate::cli::config::STARTER, "patchgate.toml")
                .unwrap();
        let tests = [
            ("properties.test_a::test_a", 1.0),
            ("properties.test_a::test_a_more", 0.5),
            ("properties.test_b::test_b", 0.25),
            ("properties.test_c::test_c", 9.0),
            ("tests.test_x::test_x", 3.0),
        ];
        let census: Census = (
            tests
                .iter()
                .map(|(id, _)| ((*id).to_owned(), "pass".to_owned()))
                .collect(),
            tests.iter().map(|(id, s)| ((*id).to_owned(), *s)).collect(),
        );
        let admitted = format!(
            r#"{{"seal": "{}", "mutant": "m", "base_runs": [0, 0], "mutant_runs": [1, 1]}}"#,
            "a".repeat(64)
        );
        let doc: serde_json::Value = serde_json::from_str(&format!(
            r#"{{"properties": [
                {{"id": "a", "strength": "strong", "locality": ["src/a"], "admitted": {admitted}}},
                {{"id": "b", "strength": "strong", "locality": ["src/b.py"]}},
                {{"id": "c", "strength": "strong", "locality": ["src/c"]}}
            ]}}"#
        ))
        .unwrap();
        let (properties, errors) =
            crate::cli::documents::catalog_properties(&doc, &config.properties.catch);
        assert!(errors.is_empty(), "{errors:?}");
        let changed = ["src/a/x.py".to_owned(), "src/b.py".to_owned()];
        let u = units(&config, &properties, &changed, &census);
        assert_eq!(u.ids, ["property:a", "property:b"]);
        assert_eq!(u.seconds, [5.0, 0.75]);
        assert_eq!(u.checker_with, Some(0));
        let case_of: Vec<(&str, usize)> = u.case_of.iter().map(|(k, v)| (k.as_str(), *v)).collect();
        assert_eq!(
            case_of,
            [
                ("properties.test_a::test_a", 0),
                ("properties.test_a::test_a_more", 0),
                ("properties.test_b::test_b", 1)
            ]
        );
        // Split in two, longest first: `c`'s case, a test of no unit (9) → 1; `a` (5 + 1.5 =
        // 6.5) → 2, the checker with it; `tests.test_x` (3) → 2 (9.5); `b` (0.75 + 0.25 =
        // 1.0) → 1 (10).
        let one = plan(Shard { index: 1, total: 2 }, &census, b"x", &u).unwrap();
        assert_eq!(one.facts.properties, Some(vec!["b".to_owned()]));
        assert_eq!(one.facts.checker, Some(false));
        let two = plan(Shard { index: 2, total: 2 }, &census, b"x", &u).unwrap();
        assert_eq!(two.facts.properties, Some(vec!["a".to_owned()]));
        assert_eq!(two.facts.checker, Some(true));
        assert_eq!(
            one.owned.iter().collect::<Vec<_>>(),
            ["properties.test_b::test_b", "properties.test_c::test_c"]
        );
        assert_eq!(one.facts.partition, two.facts.partition);
        // No property in the change's locality: the checker is a unit of its own.
        let none = units(&config, &properties, &["docs/x.md".to_owned()], &census);
        assert_eq!(
            (none.ids, none.checker_with),
            (vec!["checker".to_owned()], None)
        );
    }
}
