//! The shape of a `/gate` body: the fields of each of its objects and the bounds the strict
//! reader (`parse.rs`, `parse_steps.rs`) holds them to, and how an id or a message too long
//! for them is fitted.

/// The fields of a `/gate` body.
pub const GATE_FIELDS: [&str; 43] = [
    "patch_id",
    "changed_files",
    "guarded",
    "inert",
    "seal",
    "catalog",
    "ledger",
    "debt_cap",
    "property_runs",
    "catch_exit_codes",
    "fixture_suite",
    "require_admission",
    "binaries",
    "judged",
    "merge_group",
    "merge_conflicts",
    "sandbox",
    "shadows",
    "tests_from_base",
    "added_tests",
    "metadata_only",
    "test_lines_from_base",
    "test_lines_mixed",
    "suspicious",
    "unread",
    "property_receipts",
    "batched",
    "suite_runs",
    "failures",
    "integrity",
    "build",
    "canary",
    "reproof",
    "replays",
    "admitted_sources",
    "left_behind",
    "timings_ms",
    "configured",
    "room",
    "observe",
    "behavior",
    "shard",
    "shards",
];
/// The fields of `room`.
pub const ROOM_FIELDS: [&str; 8] = [
    "saw",
    "masked",
    "uid",
    "memory_mib",
    "pids",
    "disk_mib",
    "held_by",
    "over",
];
/// The caps `room.held_by` names.
pub const ROOM_CAPS: [&str; 3] = ["memory", "pids", "disk"];
/// The fields of an entry of `room.over`.
pub const OVER_FIELDS: [&str; 2] = ["run", "limit"];
/// The fields of `configured`.
pub const CONFIGURED_FIELDS: [&str; 7] = [
    "properties_in_suite",
    "build",
    "canary",
    "reprove",
    "deselect",
    "seed",
    "mutant_files",
];
/// The runner's phases a request may time (`timings_ms`), in pipeline order.
pub const TIMING_STEPS: [&str; 9] = [
    "gather",
    "build",
    "canary",
    "properties",
    "reproof",
    "suite",
    "rerun",
    "mutants",
    "total",
];
/// The fields of a re-proof.
pub const REPROOF_FIELDS: [&str; 6] = [
    "property",
    "applied",
    "turned",
    "exit_code",
    "receipt",
    "note",
];
/// The fields of a replay.
pub const REPLAY_FIELDS: [&str; 3] = ["property", "exit_code", "receipt"];
/// The fields of `canary`.
pub const CANARY_FIELDS: [&str; 5] = [
    "exit_code",
    "catch_exit_codes",
    "receipt",
    "in_runs",
    "twin_of",
];
/// The fields of the canary's part of a batched property run.
pub const CANARY_PART_FIELDS: [&str; 2] = ["exit_code", "receipt"];
/// The fields of a failing case.
pub const FAILURE_FIELDS: [&str; 2] = ["id", "message"];
/// Most properties `suite_runs` lists.
pub const MAX_PROPERTY_CASES: usize = 1000;
/// Most re-proofs a request carries (section 11.5): the plan asks for no more.
pub const MAX_REPROOFS: usize = 100;
/// Most failing cases a request carries (section 11.8).
pub const MAX_FAILURES: usize = 20;
/// Longest failing case message, in bytes (section 11.8).
pub const MAX_FAILURE_BYTES: usize = 2048;
/// The fields of an integrity finding.
pub const INTEGRITY_FIELDS: [&str; 6] = [
    "run",
    "files",
    "count",
    "seal_changed",
    "created",
    "created_count",
];
/// The fields of `build`.
pub const BUILD_FIELDS: [&str; 3] = ["exit_code", "catch_exit_codes", "tail"];
/// Longest build tail, in bytes.
pub const MAX_TAIL_BYTES: usize = 4096;
/// The fields of a `suspicious` line.
pub const SUSPICIOUS_FIELDS: [&str; 7] = [
    "file", "line", "rule", "class", "code", "pattern", "seen_in",
];
/// The fields of `merge_group`.
/// The fields of an `unread` entry.
pub const UNREAD_FIELDS: [&str; 3] = ["file", "reason", "detail"];
/// At most this many unread files are listed.
pub const MAX_UNREAD: usize = 100;
pub const MERGE_GROUP_FIELDS: [&str; 3] = ["queue", "ref", "pull_requests"];
/// The largest pull request number (GitHub's and GitLab's are 32-bit signed integers).
pub const MAX_PULL_REQUEST: u64 = i32::MAX as u64;
/// Most pull requests a merge group names.
pub const MAX_GROUP_PULL_REQUESTS: usize = 1000;
/// The fields of `judged`.
pub const JUDGED_FIELDS: [&str; 3] = ["base", "head", "tree"];
/// The fields of `fixture_suite`.
pub const SUITE_FIELDS: [&str; 11] = [
    "exit_code",
    "failed_tests",
    "report_disagrees",
    "catch_exit_codes",
    "rerun",
    "receipt",
    "vanished",
    "vanished_count",
    "added",
    "plain",
    "changed_tests",
];
/// The fields of a `fixture_suite.changed_tests` row.
pub const CHANGED_TEST_FIELDS: [&str; 3] = ["id", "base", "patch"];
/// At most this many changed tests are carried.
pub const MAX_CHANGED_TESTS: usize = 20;
/// The fields of `fixture_suite.rerun` (and `fixture_suite.added`, `fixture_suite.plain`).
pub const RERUN_FIELDS: [&str; 4] = ["exit_code", "failed_tests", "report_disagrees", "receipt"];
/// Longest failed-test id a request may name (a parametrised test's id can be long).
pub const MAX_TEST_ID_CHARS: usize = 4096;

/// A failed test's id as the runner reports it: a longer one than a request may hold is cut to
/// fit and marked with `…`. It still counts as a failure, and it can never match a frozen test
/// (a ledger `test_id` holds at most 256 characters): the runner never refuses its own report.
pub fn fit_test_id(id: String) -> String {
    match id.char_indices().nth(MAX_TEST_ID_CHARS - 1) {
        Some((end, _)) if id.chars().count() > MAX_TEST_ID_CHARS => {
            let mut cut = id[..end].to_owned();
            cut.push('…');
            cut
        }
        _ => id,
    }
}

/// `text` cut to at most `max` bytes on a character boundary, marked with `…` when cut.
pub fn clip_failure(text: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_owned();
    }
    let mut end = max.saturating_sub('…'.len_utf8());
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &text[..end])
}
