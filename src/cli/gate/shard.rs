//! `patchgate gate --shard K/N` (issue 53): this job's share of the suite, split from the
//! base's census by the core ([`crate::core::gate::partition`]), and the argv that runs it.
//! A shard runs every test but those other shards own: a test the census does not name (a new
//! parametrized case, a doctest whose line moved) runs in every shard, never in none, so the
//! shards together run all one machine would. pytest leaves them out by their JUnit ids (the
//! observed run's driver, `--except`); any other suite is taken to be libtest's, which gets
//! `--exact` and `--skip NAME` for each after its arguments (where `[suite] deselect`'s go).

use std::collections::{BTreeMap, BTreeSet};

use super::super::error::CliError;
use super::base_census::Census;
use crate::core::gate::{Shard, ShardFacts, partition, partition_digest};

/// This job's shard: its own facts, the census tests it owns, and those other shards own.
#[derive(Debug, Clone)]
pub(super) struct ShardRun {
    pub facts: ShardFacts,
    pub owned: BTreeSet<String>,
    pub others: BTreeSet<String>,
}

/// The share of `shard` in `census`, and the shard's facts (`config`: the base's config file).
/// The census tests in `cases` (the properties' cases, issue 64) are shard 1's.
pub(super) fn plan(
    shard: Shard,
    census: &Census,
    config: &[u8],
    cases: &BTreeSet<&str>,
) -> Result<ShardRun, CliError> {
    let (outcomes, seconds) = census;
    let tests: Vec<(&str, Option<f64>)> = outcomes
        .keys()
        .map(|id| (id.as_str(), seconds.get(id).copied()))
        .collect();
    let split = partition(&tests, shard.total, |id| cases.contains(id));
    let (mut owned, mut others) = (BTreeSet::new(), BTreeSet::new());
    for ((id, _), k) in tests.iter().zip(&split) {
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
    let digest = partition_digest(tests.iter().zip(&split).map(|((id, _), k)| (*id, *k)));
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
}
