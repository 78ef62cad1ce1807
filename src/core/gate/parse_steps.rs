//! Validation of what each step of a `/gate` body says it saw: the receipts, the failing
//! cases, integrity findings, the build, the canary, the re-proofs, the suite and its re-run,
//! the judged commits, the merge group and the room. The document's reader (`parse.rs`) calls
//! these, one per field.

use serde_json::Value;

use std::collections::HashMap;

use super::request::{
    BuildRun, CanaryPart, CanaryRun, ChangedTest, FailingCase, FixtureSuite, IntegrityFinding,
    Judged, MergeGroup, MergeQueue, OverLimit, Replay, Reproof, Rerun, RoomFacts,
};
use super::shape::*;
use crate::core::fields::{self, Errors, object};
use crate::core::problem::pointer_key;
use crate::core::runs::{CatchCodes, Receipt, parse_catch_codes, parse_receipt};

/// `property_receipts`: property id → one receipt (or `null`) per run.
pub(super) fn parse_property_receipts(
    v: &Value,
    e: &mut Errors,
) -> Option<HashMap<String, Vec<Option<Receipt>>>> {
    let Some(map) = v.as_object() else {
        e.push(
            "/property_receipts",
            format!(
                "`property_receipts` must be an object of property id → [receipt or null, ...], not {}",
                fields::kind_of(v)
            ),
        );
        return None;
    };
    let mut out = HashMap::with_capacity(map.len());
    for (id, list) in map {
        let at = pointer_key("/property_receipts", id);
        let receipts = fields::array(list, &at, "a property's receipts", e, |x, p, e| {
            parse_receipt(x, &p, e)
        })?;
        out.insert(id.clone(), receipts);
    }
    Some(out)
}

/// `configured.mutant_files`: property id → the files its mutant touches, at most 1,000
/// properties and 100 files each.
pub(super) fn parse_mutant_files(
    v: &Value,
    e: &mut Errors,
) -> Option<std::collections::BTreeMap<String, Vec<String>>> {
    const AT: &str = "/configured/mutant_files";
    let Some(map) = v.as_object() else {
        e.push(
            AT,
            format!(
                "`mutant_files` must be an object of property id → [path, ...], not {}",
                fields::kind_of(v)
            ),
        );
        return None;
    };
    if map.len() > 1000 {
        e.push(AT, format!("{} properties; at most 1000", map.len()));
        return None;
    }
    let mut out = std::collections::BTreeMap::new();
    for (id, list) in map {
        let at = pointer_key(AT, id);
        if id.is_empty() || id.chars().count() > fields::MAX_ID_CHARS {
            e.push(
                &at,
                format!("a property id is 1 to {} characters", fields::MAX_ID_CHARS),
            );
            continue;
        }
        if list.as_array().is_some_and(|l| l.len() > 100) {
            e.push(&at, "at most 100 files per mutant");
            continue;
        }
        if let Some(paths) = fields::paths(list, &at, false, e) {
            out.insert(
                id.clone(),
                paths.iter().map(|p| p.as_str().to_owned()).collect(),
            );
        }
    }
    Some(out)
}

/// `failures`: at most [`MAX_FAILURES`] cases, each message at most [`MAX_FAILURE_BYTES`].
pub(super) fn parse_failures(v: &Value, e: &mut Errors) -> Option<Vec<FailingCase>> {
    let n = v.as_array().map_or(0, Vec::len);
    if n > MAX_FAILURES {
        e.push(
            "/failures",
            format!("`failures` holds {n} cases; at most {MAX_FAILURES} are carried"),
        );
        return None;
    }
    fields::array(v, "/failures", "`failures`", e, |x, p, e| {
        let case = object(x, &p, "a failing case", &FAILURE_FIELDS, e)?;
        let id = case.req_string("id", MAX_TEST_ID_CHARS, e);
        let message = case.required("message", e).and_then(|m| {
            fields::string(m, &case.pointer("message"), "message", MAX_FAILURE_BYTES, e)
        });
        if let Some(m) = &message
            && m.len() > MAX_FAILURE_BYTES
        {
            e.push(
                case.pointer("message"),
                format!(
                    "`message` holds {} bytes; at most {MAX_FAILURE_BYTES}",
                    m.len()
                ),
            );
            return None;
        }
        Some(FailingCase {
            id: id?,
            message: message?,
        })
    })
}

pub(super) fn parse_finding(x: &Value, p: String, e: &mut Errors) -> Option<IntegrityFinding> {
    let f = object(x, &p, "an integrity finding", &INTEGRITY_FIELDS, e)?;
    let run = f.req_string("run", 1024, e);
    let files = f
        .required("files", e)
        .and_then(|v| fields::paths(v, &f.pointer("files"), false, e));
    let count = f
        .required("count", e)
        .and_then(|v| fields::uint(v, &f.pointer("count"), "count", u64::from(u32::MAX), e));
    let seal_changed = f.opt_bool("seal_changed", e).unwrap_or(false);
    let created = match f.get("created") {
        Some(v) => fields::paths(v, &f.pointer("created"), false, e),
        None => Some(Vec::new()),
    };
    let created_count = match f.get("created_count") {
        Some(v) => fields::uint(
            v,
            &f.pointer("created_count"),
            "created_count",
            u64::from(u32::MAX),
            e,
        ),
        None => Some(0),
    };
    let files: Vec<String> = files?.iter().map(|p| p.as_str().to_owned()).collect();
    let created: Vec<String> = created?.iter().map(|p| p.as_str().to_owned()).collect();
    for (field, listed) in [("files", files.len()), ("created", created.len())] {
        if listed > 100 {
            e.push(
                f.pointer(field),
                format!("at most 100 files are listed; `{field}` lists {listed}"),
            );
            return None;
        }
    }
    let (count, created_count) = (count?, created_count?);
    if created_count < created.len() as u64 {
        e.push(
            f.pointer("created_count"),
            format!(
                "`created_count` is {created_count}: it counts every file listed in `created` (there are {})",
                created.len()
            ),
        );
        return None;
    }
    if count < files.len() as u64 || (count == 0 && created_count == 0 && !seal_changed) {
        e.push(
            f.pointer("count"),
            format!(
                "`count` is {count}: it counts every file listed (there are {}), and a finding changes a file, creates one or changes the seal",
                files.len()
            ),
        );
        return None;
    }
    Some(IntegrityFinding {
        run: run?,
        files,
        count,
        seal_changed,
        created,
        created_count,
    })
}

pub(super) fn parse_reproof(x: &Value, p: String, e: &mut Errors) -> Option<Reproof> {
    let r = object(x, &p, "a re-proof", &REPROOF_FIELDS, e)?;
    let property = r.req_string("property", 256, e);
    let applied = r.opt_bool("applied", e);
    let turned = r.opt_bool("turned", e);
    let exit_code = match r.get("exit_code") {
        Some(_) => exit_code_of(&r, "the re-proof", e)?,
        None => None,
    };
    let receipt = match r.get("receipt") {
        Some(v) => Some(parse_receipt(v, &r.pointer("receipt"), e)?),
        None => None,
    };
    let note = r.opt_string("note", 4096, e);
    Some(Reproof {
        property: property?,
        applied: applied.unwrap_or(false),
        turned: turned.unwrap_or(false),
        exit_code,
        receipt,
        note,
    })
}

pub(super) fn parse_replay(x: &Value, p: String, e: &mut Errors) -> Option<Replay> {
    let r = object(x, &p, "a replay", &REPLAY_FIELDS, e)?;
    let property = r.req_string("property", 256, e);
    let exit_code = exit_code_of(&r, "the replay", e);
    let receipt = match r.get("receipt") {
        Some(v) => Some(parse_receipt(v, &r.pointer("receipt"), e)?),
        None => None,
    };
    Some(Replay {
        property: property?,
        exit_code: exit_code?,
        receipt,
    })
}

pub(super) fn parse_canary(v: &Value, e: &mut Errors) -> Option<CanaryRun> {
    let c = object(v, "/canary", "`canary`", &CANARY_FIELDS, e)?;
    let exit_code = exit_code_of(&c, "the canary", e)?;
    let catch_exit_codes = match c.get("catch_exit_codes") {
        Some(x) => parse_catch_codes(x, &c.pointer("catch_exit_codes"), e)?,
        None => CatchCodes::default(),
    };
    let receipt = parse_receipt(c.required("receipt", e)?, &c.pointer("receipt"), e)?;
    let in_runs = match c.get("in_runs") {
        None => Vec::new(),
        Some(x) => {
            let at = c.pointer("in_runs");
            if x.as_array().is_some_and(|a| a.len() > 10) {
                e.push(
                    &at,
                    "`in_runs` holds the canary's part of each property run: at most 10 (`runs` is 2 to 10)",
                );
                return None;
            }
            fields::array(x, &at, "`in_runs`", e, |item, at, e| {
                let part = object(item, &at, "a run's canary part", &CANARY_PART_FIELDS, e)?;
                let exit_code = exit_code_of(&part, "the property run", e)?;
                let receipt =
                    parse_receipt(part.required("receipt", e)?, &part.pointer("receipt"), e)?;
                Some(CanaryPart { exit_code, receipt })
            })?
        }
    };
    let twin_of = match c.get("twin_of") {
        Some(_) => Some(c.req_string("twin_of", 256, e)?),
        None => None,
    };
    Some(CanaryRun {
        exit_code,
        catch_exit_codes,
        receipt,
        in_runs,
        twin_of,
    })
}

/// A required `exit_code`: 0-255, or null when `what` was killed. `None` when invalid.
fn exit_code_of(o: &fields::Obj<'_>, what: &str, e: &mut Errors) -> Option<Option<u8>> {
    match o.required("exit_code", e)? {
        Value::Null => Some(None),
        x => match fields::whole_u64(x).map(u8::try_from) {
            Some(Ok(c)) => Some(Some(c)),
            _ => {
                e.push(
                    o.pointer("exit_code"),
                    format!(
                        "{x} is not an exit code; `exit_code` is an integer from 0 to 255, or null when {what} was killed"
                    ),
                );
                None
            }
        },
    }
}

pub(super) fn parse_build(v: &Value, e: &mut Errors) -> Option<BuildRun> {
    let b = object(v, "/build", "`build`", &BUILD_FIELDS, e)?;
    let exit_code = exit_code_of(&b, "the build", e)?;
    let catch_exit_codes = match b.get("catch_exit_codes") {
        Some(c) => parse_catch_codes(c, &b.pointer("catch_exit_codes"), e)?,
        None => CatchCodes::default(),
    };
    let tail = match b.get("tail") {
        Some(t) => fields::string(t, &b.pointer("tail"), "tail", MAX_TAIL_BYTES, e)?,
        None => String::new(),
    };
    Some(BuildRun {
        exit_code,
        catch_exit_codes,
        tail,
    })
}

pub(super) fn parse_suite(v: &Value, e: &mut Errors) -> Option<FixtureSuite> {
    let at = "/fixture_suite";
    let suite = object(v, at, "`fixture_suite`", &SUITE_FIELDS, e)?;
    let (exit_code, failed_tests, report_disagrees) = parse_run(&suite, "the suite", e)?;
    let catch_exit_codes = match suite.get("catch_exit_codes") {
        Some(c) => parse_catch_codes(c, &suite.pointer("catch_exit_codes"), e)?,
        None => CatchCodes::default(),
    };
    let rerun = suite_run(&suite, "rerun", "the re-run", e)?;
    let added = suite_run(&suite, "added", "the added tests' run", e)?;
    let plain = suite_run(
        &suite,
        "plain",
        "the observed run's failures run plainly",
        e,
    )?;
    let changed_tests = match suite.get("changed_tests") {
        Some(list) => parse_changed_tests(list, &suite.pointer("changed_tests"), e)?,
        None => Vec::new(),
    };
    let receipt = match suite.get("receipt") {
        Some(x) => Some(parse_receipt(x, &suite.pointer("receipt"), e)?),
        None => None,
    };
    let vanished: Vec<String> = match suite.get("vanished") {
        Some(list) => fields::array(
            list,
            &suite.pointer("vanished"),
            "`vanished`",
            e,
            |x, p, e| fields::string(x, &p, "a vanished test id", MAX_TEST_ID_CHARS, e),
        )?,
        None => Vec::new(),
    };
    if vanished.len() > 100 {
        e.push(
            suite.pointer("vanished"),
            "at most 100 vanished ids are listed; `vanished_count` counts them all",
        );
        return None;
    }
    let vanished_count = suite
        .opt_uint("vanished_count", u64::from(u32::MAX), e)
        .unwrap_or(vanished.len() as u64);
    if vanished_count < vanished.len() as u64 {
        e.push(
            suite.pointer("vanished_count"),
            format!(
                "`vanished_count` is {vanished_count}, fewer than the {} ids listed",
                vanished.len()
            ),
        );
        return None;
    }
    Some(FixtureSuite {
        exit_code,
        failed_tests,
        report_disagrees,
        catch_exit_codes,
        rerun,
        added,
        plain,
        changed_tests,
        receipt,
        vanished,
        vanished_count,
    })
}

/// `fixture_suite.changed_tests`: at most 20 rows of an id and two clipped sides.
fn parse_changed_tests(v: &Value, at: &str, e: &mut Errors) -> Option<Vec<ChangedTest>> {
    let n = v.as_array().map_or(0, Vec::len);
    if n > MAX_CHANGED_TESTS {
        e.push(
            at,
            format!("`changed_tests` holds {n} tests; at most {MAX_CHANGED_TESTS} are carried"),
        );
        return None;
    }
    fields::array(v, at, "`changed_tests`", e, |x, p, e| {
        let row = object(x, &p, "a changed test", &CHANGED_TEST_FIELDS, e)?;
        let id = row.req_string("id", MAX_TEST_ID_CHARS, e);
        // A side may be empty (lines only added, or only taken out).
        let side = |key: &str, e: &mut Errors| {
            row.required(key, e)
                .and_then(|v| fields::string(v, &row.pointer(key), key, MAX_FAILURE_BYTES, e))
        };
        let base = side("base", e);
        let patch = side("patch", e);
        Some(ChangedTest {
            id: id?,
            base: base?,
            patch: patch?,
        })
    })
}

/// A run of the suite's command beside its first (`rerun`, `added`).
/// The run `suite[key]` (a re-run's shape): `Some(None)` when absent, `None` when refused.
fn suite_run(
    suite: &fields::Obj<'_>,
    key: &str,
    what: &str,
    e: &mut Errors,
) -> Option<Option<Rerun>> {
    match suite.get(key) {
        Some(r) => parse_rerun(r, &suite.pointer(key), key, what, e).map(Some),
        None => Some(None),
    }
}

fn parse_rerun(v: &Value, at: &str, key: &str, what: &str, e: &mut Errors) -> Option<Rerun> {
    let run = object(v, at, &format!("`{key}`"), &RERUN_FIELDS, e)?;
    let (exit_code, failed_tests, report_disagrees) = parse_run(&run, what, e)?;
    let receipt = match run.get("receipt") {
        Some(x) => Some(parse_receipt(x, &run.pointer("receipt"), e)?),
        None => None,
    };
    Some(Rerun {
        exit_code,
        failed_tests,
        report_disagrees,
        receipt,
    })
}

/// A suite run: its `exit_code` (null when killed), and optional `failed_tests` and
/// `report_disagrees`.
type SuiteRun = (Option<u8>, Option<Vec<String>>, Option<String>);

/// A suite run's fields (see [`SuiteRun`]).
pub(super) fn parse_run(run: &fields::Obj<'_>, what: &str, e: &mut Errors) -> Option<SuiteRun> {
    let exit_code = exit_code_of(run, what, e)?;
    let failed_tests = match run.get("failed_tests") {
        None => None,
        Some(list) => Some(fields::array(
            list,
            &run.pointer("failed_tests"),
            "`failed_tests`",
            e,
            |x, p, e| {
                let id = fields::string(x, &p, "a failed test id", MAX_TEST_ID_CHARS, e)?;
                if id.is_empty() {
                    e.push(p, "a failed test id must not be empty");
                    return None;
                }
                Some(id)
            },
        )?),
    };
    let report_disagrees = run.opt_string("report_disagrees", MAX_TEST_ID_CHARS, e);
    Some((exit_code, failed_tests, report_disagrees))
}

/// `merge_group`: the queue, the group's ref, the pull requests in it.
pub(super) fn parse_merge_group(v: &Value, e: &mut Errors) -> Option<MergeGroup> {
    let group = object(v, "/merge_group", "`merge_group`", &MERGE_GROUP_FIELDS, e)?;
    let queue = group.req_enum::<MergeQueue>("queue", e);
    let group_ref = group.req_string("ref", 1024, e);
    let pull_requests = match group.map.get("pull_requests") {
        None => Some(Vec::new()),
        Some(list) => {
            let at = group.pointer("pull_requests");
            if list
                .as_array()
                .is_some_and(|l| l.len() > MAX_GROUP_PULL_REQUESTS)
            {
                e.push(
                    at.clone(),
                    format!("`pull_requests` lists more than {MAX_GROUP_PULL_REQUESTS}"),
                );
            }
            fields::array(list, &at, "`pull_requests`", e, |x, p, e| {
                fields::uint(x, &p, "pull_requests", MAX_PULL_REQUEST, e)
                    .and_then(|n| u32::try_from(n).ok())
            })
        }
    };
    Some(MergeGroup {
        queue: queue?,
        group_ref: group_ref?,
        pull_requests: pull_requests?,
    })
}

/// `judged`: three git object ids (40 or 64 hex digits).
pub(super) fn parse_judged(v: &Value, e: &mut Errors) -> Option<Judged> {
    let judged = object(v, "/judged", "`judged`", &JUDGED_FIELDS, e)?;
    let mut id = |key: &str| -> Option<String> {
        let s = judged.req_string(key, 64, e)?;
        if crate::core::fields::is_object_id(&s) {
            Some(s)
        } else {
            e.push(
                judged.pointer(key),
                format!("`{key}` is {s:?}; it must be a git object id (40 or 64 hex digits)"),
            );
            None
        }
    };
    let (base, head, tree) = (id("base"), id("head"), id("tree"));
    Some(Judged {
        base: base?,
        head: head?,
        tree: tree?,
    })
}

/// `room`: what the runs saw and what capped them (CONTRACT.md section 13).
pub(super) fn parse_room(v: &Value, e: &mut Errors) -> Option<RoomFacts> {
    const AT: &str = "/room";
    let r = object(v, AT, "`room`", &ROOM_FIELDS, e)?;
    let strings = |key: &str, e: &mut Errors| -> Option<Vec<String>> {
        let at = format!("{AT}/{key}");
        let Some(v) = r.get(key) else {
            return Some(Vec::new());
        };
        let Some(items) = v.as_array() else {
            e.push(
                at.as_str(),
                format!("`room.{key}` must be an array of paths"),
            );
            return None;
        };
        if items.len() > 200 {
            e.push(
                &at,
                format!("`room.{key}` holds {} entries; at most 200", items.len()),
            );
            return None;
        }
        let mut out = Vec::new();
        for (i, item) in items.iter().enumerate() {
            match item.as_str() {
                Some(s) if !s.is_empty() && s.chars().count() <= 4096 => out.push(s.to_owned()),
                _ => e.push(
                    format!("{at}/{i}"),
                    "must be a non-empty string of at most 4,096 characters",
                ),
            }
        }
        Some(out)
    };
    if r.get("saw").is_none() {
        e.push(AT, "`room` needs `saw`");
    }
    let saw = strings("saw", e);
    let masked = strings("masked", e);
    let uid = r.req_enum::<super::request::RoomUid>("uid", e);
    let cap = |key: &str, e: &mut Errors| {
        if r.get(key).is_none() {
            e.push(AT, format!("`room` needs `{key}`"));
        }
        let n = r.opt_uint(key, 1 << 20, e)?;
        if n == 0 {
            e.push(
                format!("{AT}/{key}"),
                format!("`room.{key}` must be at least 1"),
            );
            return None;
        }
        Some(n)
    };
    let memory_mib = cap("memory_mib", e);
    let pids = cap("pids", e);
    let disk_mib = cap("disk_mib", e);
    let held_by = r.get("held_by").and_then(|v| {
        let h = object(v, "/room/held_by", "`room.held_by`", &ROOM_CAPS, e)?;
        let one = |cap: &str, e: &mut Errors| {
            if h.get(cap).is_none() {
                e.push("/room/held_by", format!("`room.held_by` needs `{cap}`"));
            }
            h.opt_string(cap, 40, e).filter(|s| {
                let ok = !s.is_empty();
                if !ok {
                    e.push(format!("/room/held_by/{cap}"), "must not be empty");
                }
                ok
            })
        };
        let memory = one("memory", e);
        let pids = one("pids", e);
        let disk = one("disk", e);
        Some(super::request::HeldBy {
            memory: memory?,
            pids: pids?,
            disk: disk?,
        })
    });
    if r.get("held_by").is_none() {
        e.push(AT, "`room` needs `held_by`");
    }
    let over = match r.get("over") {
        Some(v) if v.as_array().is_some_and(|a| a.len() > 100) => {
            e.push("/room/over", "`room.over` holds more than 100 entries");
            None
        }
        Some(v) => fields::array(v, "/room/over", "`room.over`", e, |item, at, e| {
            let o = object(item, &at, "an entry of `room.over`", &OVER_FIELDS, e)?;
            let run = o.req_string("run", 4096, e);
            let limit = o.req_enum::<super::request::Limit>("limit", e);
            Some(OverLimit {
                run: run?,
                limit: limit?,
            })
        }),
        None => Some(Vec::new()),
    };
    Some(RoomFacts {
        saw: saw?,
        masked: masked?,
        uid: uid?,
        memory_mib: memory_mib?,
        pids: pids?,
        disk_mib: disk_mib?,
        held_by: held_by?,
        over: over?,
    })
}
