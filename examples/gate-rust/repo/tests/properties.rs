//! Properties, one test each; patchgate runs them by name (`--exact {id}`).

use budget::split;

fn cases() -> impl Iterator<Item = (u64, u64)> {
    (0..200u64).flat_map(|t| (1..12u64).map(move |p| (t * 7919 % 100_000, p)))
}

#[test]
fn split_adds_up() {
    for (total, parts) in cases() {
        assert_eq!(split(total, parts).iter().sum::<u64>(), total, "{total} / {parts}");
    }
}

#[test]
fn split_is_fair() {
    for (total, parts) in cases() {
        let s = split(total, parts);
        let (lo, hi) = (s.iter().min().unwrap(), s.iter().max().unwrap());
        assert!(hi - lo <= 1, "{total} / {parts}: {s:?}");
    }
}
