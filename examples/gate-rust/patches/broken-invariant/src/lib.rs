//! Splitting a budget in cents between parties.

/// Splits `total` cents into `parts` shares that differ by at most one cent and add up to
/// `total`; the first shares take the remainder.
pub fn split(total: u64, parts: u64) -> Vec<u64> {
    if parts == 0 {
        return Vec::new();
    }
    let (share, rest) = (total / parts, total % parts);
    // The remainder goes to the first share.
    (0..parts).map(|i| if i == 0 { share + rest } else { share }).collect()
}
