//! Identifiers made at the edge (the core takes them as values): decision ids and request ids,
//! UUIDv7s, time-ordered so log lines sort by them. One place for the server and the CLI.

/// A new, unique decision id (a UUIDv7: time-ordered, so log lines sort by it).
pub fn new_decision_id() -> String {
    let mut buf = [0u8; uuid::fmt::Hyphenated::LENGTH];
    new_uuid_v7(&mut buf).to_owned()
}

/// A new UUIDv7 (time-ordered to the millisecond, then random), formatted without allocating
/// more than the result.
pub fn new_uuid_v7(buf: &mut [u8; uuid::fmt::Hyphenated::LENGTH]) -> &mut str {
    // `NoContext`: no process-wide counter (and no lock) behind each id; 74 random bits keep
    // ids unique, and within one millisecond their order does not matter.
    let ts = uuid::Timestamp::now(uuid::NoContext);
    uuid::Uuid::new_v7(ts).hyphenated().encode_lower(buf)
}
