//! Splitting a budget in cents between parties.

/// Splits `total` cents into `parts` shares that differ by at most one cent and add up to
/// `total`; the first shares take the remainder.
pub fn split(total: u64, parts: u64) -> Vec<u64> {
    if parts == 0 {
        return Vec::new();
    }
    let (share, rest) = (total / parts, total % parts);
    (0..parts).map(|i| share + u64::from(i < rest)).collect()
}

/// How many cents the shares hand out. No parts, no shares, nothing handed out:
///
/// ```
/// assert_eq!(budget::handed_out(&budget::split(5, 0)), 0);
/// ```
pub fn handed_out(shares: &[u64]) -> u64 {
    shares.iter().sum()
}

#[cfg(test)]
mod tests {
    use super::split;

    #[test]
    fn no_parts_no_shares() {
        assert!(split(5, 0).is_empty());
    }
}
