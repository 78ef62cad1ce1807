//! Splitting a budget in cents between parties.

/// Splits `total` cents into `parts` shares that differ by at most one cent and add up to
/// `total`; the first shares take the remainder, one cent each.
pub fn split(total: u64, parts: u64) -> Vec<u64> {
    if parts == 0 {
        return Vec::new();
    }
    let (share, rest) = (total / parts, total % parts);
    (0..parts).map(|i| share + u64::from(i < rest)).collect()
}
