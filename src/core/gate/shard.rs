//! One gate over many CI jobs (issue 53): which shard runs which test of the suite. The split
//! is decided from the base's census alone, so every shard computes the same one: each census
//! test in exactly one shard, balanced by the durations the census records (longest first, each
//! to the shard with the least so far), and a test the census has no duration for placed by a
//! stable hash of its id (its SHA-256's first eight bytes, modulo the shard count).

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

/// The shard (from 1) of each of `tests` (id, the census's duration in seconds), in their
/// order, over `total` shards. Tests with a duration: longest first (ties by id), each to the
/// shard whose tests so far add up to the least (ties to the one with fewest tests, then the
/// lowest). Tests without one
/// (or with a duration that is not a finite number of seconds from 0): [`hashed_shard`].
/// A test `pinned` says is a property's case (issue 64) is shard 1's, its seconds counted
/// there first: shard 1 runs the properties, and its share of the suite is their run 1 as one
/// machine's suite is.
pub fn partition(
    tests: &[(&str, Option<f64>)],
    total: u32,
    pinned: impl Fn(&str) -> bool,
) -> Vec<u32> {
    let total = total.clamp(1, MAX_SHARDS);
    let mut out: Vec<u32> = tests
        .iter()
        .map(|(id, _)| match pinned(id) {
            true => 1,
            false => hashed_shard(id, total),
        })
        .collect();
    // Each shard's seconds so far, and how many tests: equal seconds (tests too quick to
    // time) are spread by count.
    let mut load = vec![(0.0f64, 0usize); total as usize];
    if let Some(first) = load.first_mut() {
        for (_, d) in tests.iter().filter(|(id, _)| pinned(id)) {
            first.0 += d.filter(|d| d.is_finite() && *d >= 0.0).unwrap_or(0.0);
            first.1 += 1;
        }
    }
    let mut timed: Vec<(usize, f64)> = tests
        .iter()
        .enumerate()
        .filter(|(_, (id, _))| !pinned(id))
        .filter_map(|(i, (_, d))| d.filter(|d| d.is_finite() && *d >= 0.0).map(|d| (i, d)))
        .collect();
    timed.sort_by(|(a, da), (b, db)| {
        db.total_cmp(da)
            .then_with(|| tests.get(*a).map(|t| t.0).cmp(&tests.get(*b).map(|t| t.0)))
    });
    for (i, d) in timed {
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
        if let Some(o) = out.get_mut(i) {
            *o = u32::try_from(least).unwrap_or(0) + 1;
        }
    }
    out
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
        assert_eq!(partition(&tests, 2, |_| false), [1, 1, 1, 2, 2, 2]);
        // One shard holds everything.
        assert_eq!(partition(&tests, 1, |_| false), [1; 6]);
        // Tests too quick to time (0 s): spread by count, in id order (a, b, c, d).
        let quick = [
            ("d", Some(0.0)),
            ("a", Some(0.0)),
            ("c", Some(0.0)),
            ("b", Some(0.0)),
        ];
        assert_eq!(partition(&quick, 2, |_| false), [2, 1, 1, 2]);
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
        assert_eq!(partition(&tests, 3, |_| false), [3, 1, 2, 3]);
        // A timed test beside them is balanced among the timed ones only.
        let mixed = [
            ("a", Some(2.0)),
            ("tests.test_api::test_once", None),
            ("b", Some(1.0)),
        ];
        assert_eq!(partition(&mixed, 3, |_| false), [1, 1, 2]);
    }

    /// A property's cases are shard 1's, their seconds counted there first (issue 64), by hand:
    /// `p.a` (4) and `p.b` (untimed) pinned → 1 (4); 5 → 2 (5); 3 → 1 (7); 1 → 2 (6).
    #[test]
    fn a_property_s_cases_are_shard_one_s() {
        let tests = [
            ("t.five", Some(5.0)),
            ("p.a", Some(4.0)),
            ("t.three", Some(3.0)),
            ("p.b", None),
            ("t.one", Some(1.0)),
        ];
        let pinned = |id: &str| id.starts_with("p.");
        assert_eq!(partition(&tests, 2, pinned), [2, 1, 1, 1, 2]);
        // Without the pin: 5 → 1; 4 → 2; 3 → 2 (7); 1 → 1 (6); `p.b` by its hash.
        let unpinned = partition(&tests, 2, |_| false);
        assert_eq!(unpinned.get(..3), Some(&[1, 2, 2][..]));
    }
}
