//! One gate over many CI jobs (issue 53): which shard runs which test of the suite, and (issue
//! 67) which runs each unit of the rest of the work: a property's runs, replay and re-proof,
//! with its cases; the canary with the test files the patch adds. The split is decided from
//! what every shard reads alike (the base's census, config and catalog, the patch's changed
//! files), so every shard computes the same one: each census test and each unit in exactly one
//! shard, balanced by their seconds (longest first, each to the shard with the least so far),
//! and a test the census has no duration for placed by a stable hash of its id (its SHA-256's
//! first eight bytes, modulo the shard count).

use sha2::{Digest, Sha256};

/// The most shards a gate is split into.
pub const MAX_SHARDS: u32 = 256;

/// Shard `index` of `total` (`--shard K/N`, both from 1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shard {
    pub index: u32,
    pub total: u32,
}

impl Shard {
    /// `K/N`, with `1 <= K <= N <= MAX_SHARDS`; the error says what is wrong.
    pub fn parse(text: &str) -> Result<Shard, String> {
        let (k, n) = text
            .split_once('/')
            .ok_or_else(|| format!("{text:?} is not K/N (this shard and how many there are)"))?;
        let number = |s: &str, what: &str| {
            s.parse::<u32>()
                .map_err(|_| format!("{what} {s:?} is not a whole number"))
        };
        let (index, total) = (number(k, "K")?, number(n, "N")?);
        if total == 0 || total > MAX_SHARDS {
            return Err(format!("N is {total}: from 1 to {MAX_SHARDS} shards"));
        }
        if index == 0 || index > total {
            return Err(format!("K is {index}: from 1 to N ({total})"));
        }
        Ok(Shard { index, total })
    }
}

/// The shard (from 1) a test with no recorded duration goes to: its id's SHA-256, first eight
/// bytes big-endian, modulo `total`, plus one.
pub fn hashed_shard(id: &str, total: u32) -> u32 {
    let digest = Sha256::digest(id.as_bytes());
    let mut first = [0u8; 8];
    first.copy_from_slice(digest.get(..8).unwrap_or(&[0; 8]));
    let n = u64::from(total.max(1));
    u32::try_from(u64::from_be_bytes(first) % n).unwrap_or(0) + 1
}

/// A unit of a split gate's work besides the suite's own tests (issue 67): a property (its
/// runs past the suite's, its replay, its re-proof) or the checker (the canary, the test files
/// the patch adds). The census tests it takes along (a property's cases: the suite's run of
/// them is its run 1) go to its shard; `seconds` is its own work besides them (not a finite
/// number of seconds from 0: none).
#[derive(Debug, Clone, PartialEq)]
pub struct Unit<'a> {
    pub id: &'a str,
    pub seconds: f64,
}

/// Where a split puts each census test and each unit (shards from 1), in their order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Split {
    pub tests: Vec<u32>,
    pub units: Vec<u32>,
}

/// A duration as the split counts it: a finite number of seconds from 0, or none.
fn counted(d: Option<f64>) -> Option<f64> {
    d.filter(|d| d.is_finite() && *d >= 0.0)
}

/// The shard (from 1) of each of `tests` (id, the census's duration in seconds) and of each of
/// `units` over `total` shards, `unit_of` naming the unit a test goes with. Each unit weighs
/// its own seconds and its tests' together; the units and the timed tests of no unit are
/// placed longest first (ties: units first, then by id), each to the shard whose work so far
/// adds up to the least (ties to the one with fewest items, then the lowest). A unit's tests
/// go where it goes. A test of no unit without a duration (or with one that is not a finite
/// number of seconds from 0): [`hashed_shard`].
pub fn partition(
    tests: &[(&str, Option<f64>)],
    total: u32,
    units: &[Unit<'_>],
    unit_of: impl Fn(&str) -> Option<usize>,
) -> Split {
    let total = total.clamp(1, MAX_SHARDS);
    let of: Vec<Option<usize>> = tests
        .iter()
        .map(|(id, _)| unit_of(id).filter(|u| *u < units.len()))
        .collect();
    let mut weight: Vec<f64> = units
        .iter()
        .map(|u| counted(Some(u.seconds)).unwrap_or(0.0))
        .collect();
    for ((_, d), u) in tests.iter().zip(&of) {
        if let (Some(u), Some(d)) = (u, counted(*d))
            && let Some(w) = weight.get_mut(*u)
        {
            *w += d;
        }
    }
    // (seconds, 0 for a unit and 1 for a test, id, index)
    let mut items: Vec<(f64, u8, &str, usize)> = units
        .iter()
        .zip(&weight)
        .enumerate()
        .map(|(i, (u, w))| (*w, 0, u.id, i))
        .collect();
    items.extend(
        tests
            .iter()
            .zip(&of)
            .enumerate()
            .filter(|(_, (_, u))| u.is_none())
            .filter_map(|(i, ((id, d), _))| counted(*d).map(|d| (d, 1, *id, i))),
    );
    items.sort_by(|a, b| {
        b.0.total_cmp(&a.0)
            .then(a.1.cmp(&b.1))
            .then_with(|| a.2.cmp(b.2))
    });
    // Each shard's seconds so far, and how many items: equal seconds (tests too quick to
    // time) are spread by count.
    let mut load = vec![(0.0f64, 0usize); total as usize];
    let mut unit_shard = vec![1u32; units.len()];
    let mut out: Vec<u32> = tests
        .iter()
        .map(|(id, _)| hashed_shard(id, total))
        .collect();
    for (d, kind, _, i) in items {
        let least = (0..load.len())
            .min_by(|a, b| {
                let (la, lb) = (load.get(*a), load.get(*b));
                la.zip(lb)
                    .map_or(std::cmp::Ordering::Equal, |(la, lb)| {
                        la.0.total_cmp(&lb.0).then(la.1.cmp(&lb.1))
                    })
                    .then(a.cmp(b))
            })
            .unwrap_or(0);
        if let Some(l) = load.get_mut(least) {
            l.0 += d;
            l.1 += 1;
        }
        let shard = u32::try_from(least).unwrap_or(0) + 1;
        let slot = match kind {
            0 => unit_shard.get_mut(i),
            _ => out.get_mut(i),
        };
        if let Some(s) = slot {
            *s = shard;
        }
    }
    for (o, u) in out.iter_mut().zip(&of) {
        if let Some(s) = u.and_then(|u| unit_shard.get(u)) {
            *o = *s;
        }
    }
    give_each_a_test(&mut out, tests, &of, &unit_shard, total);
    Split {
        tests: out,
        units: unit_shard,
    }
}

/// A shard that runs a unit owns a census test too, where there are enough of no unit (a unit
/// may outweigh a whole share, and a shard's suite runs its share): one left with none takes,
/// from the shard owning the most (at least two; ties to the lowest), its shortest test of no
/// unit (an untimed one as 0 s; ties by id). A shard with neither is refused at start, as
/// before units.
fn give_each_a_test(
    out: &mut [u32],
    tests: &[(&str, Option<f64>)],
    of: &[Option<usize>],
    unit_shard: &[u32],
    total: u32,
) {
    let mut with_units: Vec<u32> = unit_shard.to_vec();
    with_units.sort_unstable();
    with_units.dedup();
    for shard in with_units {
        let count = |k: u32, out: &[u32]| out.iter().filter(|s| **s == k).count();
        if count(shard, out) > 0 {
            continue;
        }
        let Some(donor) = (1..=total)
            .filter(|k| count(*k, out) >= 2)
            .max_by(|a, b| count(*a, out).cmp(&count(*b, out)).then(b.cmp(a)))
        else {
            return;
        };
        let shortest = out
            .iter()
            .zip(tests.iter().zip(of))
            .enumerate()
            .filter(|(_, (s, (_, u)))| **s == donor && u.is_none())
            .map(|(i, (_, ((id, d), _)))| (i, counted(*d).unwrap_or(0.0), *id))
            .min_by(|a, b| a.1.total_cmp(&b.1).then_with(|| a.2.cmp(b.2)));
        if let Some(slot) = shortest.and_then(|(i, ..)| out.get_mut(i)) {
            *slot = shard;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_shard_is_k_of_n() {
        assert_eq!(Shard::parse("1/3"), Ok(Shard { index: 1, total: 3 }));
        assert_eq!(Shard::parse("256/256").map(|s| s.index), Ok(256));
        for (text, says) in [
            ("3", "is not K/N"),
            ("0/3", "K is 0"),
            ("4/3", "K is 4"),
            ("1/0", "N is 0"),
            ("1/257", "N is 257"),
            ("a/3", "K \"a\""),
            ("1/-2", "N \"-2\""),
        ] {
            let err = Shard::parse(text).expect_err(text);
            assert!(err.contains(says), "{text}: {err}");
        }
    }

    /// Longest first, each to the least-loaded shard (ties to the lowest), written out by hand:
    /// 5 → 1 (5); 4 → 2 (4); 3 (a) → 2 (7); 3 (b) → 1 (8); 2 → 2 (9); 1 → 1 (9).
    #[test]
    fn durations_are_balanced_longest_first() {
        let tests = [
            ("t.one", Some(1.0)),
            ("t.three_b", Some(3.0)),
            ("t.five", Some(5.0)),
            ("t.two", Some(2.0)),
            ("t.three_a", Some(3.0)),
            ("t.four", Some(4.0)),
        ];
        assert_eq!(
            partition(&tests, 2, &[], |_| None).tests,
            [1, 1, 1, 2, 2, 2]
        );
        // One shard holds everything.
        assert_eq!(partition(&tests, 1, &[], |_| None).tests, [1; 6]);
        // Tests too quick to time (0 s): spread by count, in id order (a, b, c, d).
        let quick = [
            ("d", Some(0.0)),
            ("a", Some(0.0)),
            ("c", Some(0.0)),
            ("b", Some(0.0)),
        ];
        assert_eq!(partition(&quick, 2, &[], |_| None).tests, [2, 1, 1, 2]);
    }

    /// Without durations: the first eight bytes of each id's SHA-256 (`sha256sum`, by hand),
    /// modulo 3, plus one.
    #[test]
    fn no_duration_is_a_stable_hash() {
        let tests = [
            ("tests.test_api::test_retry", None), // 89e1071481ac60ef
            ("tests.test_api::test_once", None),  // e559f98766f565c2
            ("tests.test_cases::test_case[discount_half]", Some(f64::NAN)), // 4184ea6659908289
            ("integration::fixture_cases", Some(-1.0)), // a03efefdd203a358
        ];
        assert_eq!(partition(&tests, 3, &[], |_| None).tests, [3, 1, 2, 3]);
        // A timed test beside them is balanced among the timed ones only.
        let mixed = [
            ("a", Some(2.0)),
            ("tests.test_api::test_once", None),
            ("b", Some(1.0)),
        ];
        assert_eq!(partition(&mixed, 3, &[], |_| None).tests, [1, 1, 2]);
    }

    /// Units (issue 67), by hand: `p` weighs 2 + its cases `p.a` (4) and `p.b` (untimed) = 6,
    /// `q` 3 + `q.a` (1) = 4, the checker `c` 0.5. Longest first: `p` (6) → 1; `t.five` (5)
    /// → 2; `q` (4) → 3; `t.three` (3) → 3 (7); `t.one` (1) → 2 (6); `c` (0.5) → 1 (6.5: as
    /// loaded as shard 2, with fewer items).
    /// Each case goes with its unit, the untimed one too.
    #[test]
    fn a_unit_takes_its_cases_and_is_placed_by_its_seconds() {
        let tests = [
            ("t.five", Some(5.0)),
            ("p.a", Some(4.0)),
            ("t.three", Some(3.0)),
            ("p.b", None),
            ("t.one", Some(1.0)),
            ("q.a", Some(1.0)),
        ];
        let units = [
            Unit {
                id: "p",
                seconds: 2.0,
            },
            Unit {
                id: "q",
                seconds: 3.0,
            },
            Unit {
                id: "c",
                seconds: 0.5,
            },
        ];
        let unit_of = |id: &str| match id.split_once('.') {
            Some(("p", _)) => Some(0),
            Some(("q", _)) => Some(1),
            _ => None,
        };
        let split = partition(&tests, 3, &units, unit_of);
        assert_eq!(split.tests, [2, 1, 3, 1, 2, 3]);
        assert_eq!(split.units, [1, 3, 1]);
        // One shard: everything is its.
        let one = partition(&tests, 1, &units, unit_of);
        assert_eq!((one.tests, one.units), (vec![1; 6], vec![1; 3]));
        // A unit's seconds that are no duration count as none; a unit index past the list
        // is no unit.
        let odd = [Unit {
            id: "p",
            seconds: f64::NAN,
        }];
        let split = partition(&[("p.a", Some(1.0)), ("x", Some(2.0))], 2, &odd, |id| {
            (id == "p.a").then_some(0).or((id == "x").then_some(7))
        });
        assert_eq!((split.tests, split.units), (vec![2, 1], vec![2]));
    }

    /// A unit that outweighs a share leaves its shard no test; it takes the shortest test of
    /// no unit from the shard owning the most, by hand: `p` (10, no case) → 1; `t.a` (3),
    /// `t.b` (2), `t.c` (1) → 2: shard 1 owns none, and takes `t.c` from shard 2.
    #[test]
    fn a_shard_with_a_unit_owns_a_test_where_there_are_enough() {
        let tests = [("t.a", Some(3.0)), ("t.b", Some(2.0)), ("t.c", Some(1.0))];
        let units = [Unit {
            id: "p",
            seconds: 10.0,
        }];
        let split = partition(&tests, 2, &units, |_| None);
        assert_eq!((split.tests, split.units), (vec![2, 2, 1], vec![1]));
        // Too few tests of no unit to give one: the shard owns none.
        let few = partition(&tests[..1], 2, &units, |_| None);
        assert_eq!(few.tests, [2]);
    }
}
