//! Identifiers made at the edge (the core takes them as values): decision ids and request ids,
//! UUIDv7s, time-ordered so log lines sort by them. One place for the server and the CLI.

use std::cell::Cell;

/// A new, unique decision id (a UUIDv7: time-ordered, so log lines sort by it).
pub fn new_decision_id() -> String {
    let mut buf = [0u8; uuid::fmt::Hyphenated::LENGTH];
    new_uuid_v7(&mut buf).to_owned()
}

thread_local! {
    /// Each thread's generator of the ids' random bits, seeded from the operating system's
    /// randomness when the thread makes its first id.
    static RANDOM: Cell<u64> = Cell::new(seed());
}

/// 64 bits from the operating system's randomness (through the uuid crate's generator).
fn seed() -> u64 {
    let bytes = uuid::Uuid::new_v4().into_bytes();
    let mut seed = [0u8; 8];
    if let Some(first) = bytes.first_chunk::<8>() {
        seed = *first;
    }
    u64::from_le_bytes(seed)
}

/// wyrand: the next 64 bits of this thread's sequence. Ids need uniqueness, not secrecy: a
/// sequence seeded with 64 random bits, 74 bits of it in each id, keeps ids from two threads
/// or two servers apart as well as fresh randomness would, at a tenth of the cost.
fn next_random() -> u64 {
    RANDOM
        .try_with(|state| {
            let s = state.get().wrapping_add(0xa076_1d64_78bd_642f);
            state.set(s);
            let t = u128::from(s) * u128::from(s ^ 0xe703_7ed1_a0b4_28db);
            ((t >> 64) as u64) ^ (t as u64)
        })
        // The thread is ending: a fresh seed for this one id.
        .unwrap_or_else(|_| seed())
}

/// A new UUIDv7 (the Unix time in milliseconds, then 74 random bits), formatted into `buf`.
pub fn new_uuid_v7(buf: &mut [u8; uuid::fmt::Hyphenated::LENGTH]) -> &mut str {
    let millis = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64);
    let mut random = [0u8; 10];
    let (high, low) = random.split_at_mut(8);
    high.copy_from_slice(&next_random().to_le_bytes());
    low.copy_from_slice(&next_random().to_le_bytes()[..2]);
    uuid::Builder::from_unix_timestamp_millis(millis, &random)
        .into_uuid()
        .hyphenated()
        .encode_lower(buf)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_uuid_v7_time_ordered_and_distinct() {
        let before = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_millis() as u64);
        let ids: Vec<String> = (0..10_000).map(|_| new_decision_id()).collect();
        let unique: std::collections::HashSet<&String> = ids.iter().collect();
        assert_eq!(unique.len(), ids.len(), "every id is new");
        for id in &ids {
            let parsed = uuid::Uuid::parse_str(id).unwrap_or_else(|e| panic!("{id}: {e}"));
            assert_eq!(parsed.get_version_num(), 7, "{id}");
            assert_eq!(parsed.get_variant(), uuid::Variant::RFC4122, "{id}");
            let (secs, nanos) = parsed
                .get_timestamp()
                .map(|t| t.to_unix())
                .unwrap_or_else(|| panic!("{id} has no time"));
            let millis = secs * 1000 + u64::from(nanos) / 1_000_000;
            assert!(millis >= before && millis < before + 60_000, "{id}");
            assert_eq!(
                id,
                &parsed.hyphenated().to_string(),
                "lower-case, hyphenated"
            );
        }
        // Ids of two threads differ too (each thread has its own seed).
        let other = std::thread::spawn(|| (0..1000).map(|_| new_decision_id()).collect::<Vec<_>>())
            .join()
            .unwrap_or_default();
        assert_eq!(other.len(), 1000);
        assert!(other.iter().all(|id| !unique.contains(id)));
    }
}
