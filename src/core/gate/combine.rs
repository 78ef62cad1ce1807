//! One gate from N shards' facts (issue 53): `patchgate gate --combine` and `POST /gate` with
//! `{"shards": [...]}`. The shards must be all there, each once, finished as written (their
//! digests), on one head, base config, split and version; then their facts are merged into
//! the facts one machine would have gathered, and decided once. Anything wrong is a gap,
//! named by shard: the decision is ESCALATE `evidence-gap` ([`shards_step`]), never a pass.
//!
//! Each shard runs its share of the suite (its re-run, its observed run and its patch mutants
//! with it) and the units the split gave it (issue 67): each property's runs, replay and
//! re-proof with the property's cases in its share (so its share's run of them is their run
//! 1, issue 64), and, on one shard, the canary and the added tests. Shard 1's facts are the
//! spine; each unit's facts are merged in from the shard that ran it, and the suites are
//! merged: one exit (0 only when every share's was; a run that was no catch wins over a
//! catch), the failures and receipts summed, the census tests vanished in any share. When a
//! shard's plan decided before its suite (its property failed, a rule stopped it), the
//! combined facts have no suite, as one machine's would not: a gate without its suite never
//! merges.

use std::collections::BTreeSet;

use serde_json::{Map, Value, json};

use super::answer::{GateDecision, GateDisposition, GateReason, GateRuleName};
use super::parse::parse_gate_request;
use super::request::GateRequest;
use super::shard_facts::{MAX_SHARD_GAPS, ShardFacts, shard_digest};
use super::steps::Step;

/// Most entries a merged list keeps, by field.
const MAX_VANISHED: usize = 100;
const MAX_FAILURES: usize = super::MAX_FAILURES;

/// The shards' step of a decision, when the facts are a shard's or shards': its gaps, if any.
pub fn shards_step(request: &GateRequest) -> Option<Step> {
    let (total, combined, gaps) = match (&request.shard, &request.shards) {
        (None, None) => return None,
        (Some(s), _) => (
            s.total,
            vec![s.index],
            vec![format!(
                "these are shard {}/{}'s facts alone: a shard decides nothing until the {} shards are combined (`patchgate gate --combine`)",
                s.index, s.total, s.total
            )],
        ),
        (None, Some(s)) => (s.total, s.combined.clone(), s.gaps.clone()),
    };
    let summary = match gaps.first() {
        None => format!(
            "{total} shards combined: one head, one base config, one split, every census test run in the shard that owns it"
        ),
        Some(first) if gaps.len() == 1 => format!("the shards do not make one gate: {first}"),
        Some(first) => format!(
            "the shards do not make one gate: {first} (and {} more)",
            gaps.len() - 1
        ),
    };
    Some(Step::Shards {
        total,
        combined,
        gaps,
        summary,
    })
}

/// The decision when the shards do not make one gate: ESCALATE `evidence-gap`, rule `shards`.
pub fn shards_gap(step: &Step) -> Option<GateDecision> {
    matches!(step, Step::Shards { gaps, .. } if !gaps.is_empty()).then(|| GateDecision {
        disposition: GateDisposition::Escalate,
        rule: GateRuleName::Shards,
        reason: GateReason::EvidenceGap,
        evidence: None,
        steps: vec![step.clone()],
    })
}

/// The fields of a body of shards' facts.
const SHARDS_BODY_FIELDS: [&str; 2] = ["shards", "unreadable"];

/// A `/gate` body: one gate's facts, or `{"shards": [...], "unreadable": [...]}`, the shards'
/// facts to combine (at most 256, each valid facts: a bad one is refused, named by its
/// pointer) and what the caller could not read (each a gap), combined with
/// [`shard_key`](super::shard_key) first.
pub fn parse_gate_body(value: &Value) -> Result<GateRequest, crate::core::fields::Errors> {
    use crate::core::fields::{self, Errors};
    let Some(body) = value
        .as_object()
        .filter(|o| o.contains_key("shards") && !o.contains_key("changed_files"))
    else {
        return parse_gate_request(value);
    };
    let mut e = Errors::default();
    let o = fields::object(
        value,
        "",
        "a body of shards' facts",
        &SHARDS_BODY_FIELDS,
        &mut e,
    );
    let too_many = |v: &Value| {
        v.as_array()
            .is_some_and(|a| a.len() > super::MAX_SHARDS as usize)
    };
    let items = match body.get("shards") {
        Some(v) if too_many(v) => {
            e.push("/shards", "at most 256 shards' facts are combined");
            None
        }
        Some(v) => fields::array(v, "/shards", "`shards`", &mut e, |x, at, e| {
            if let Err(errors) = parse_gate_request(x) {
                for f in errors.into_parts().0 {
                    e.push(format!("{at}{}", f.pointer), f.detail);
                }
                return None;
            }
            Some(x.clone())
        }),
        None => None,
    };
    let unreadable = match o.as_ref().and_then(|o| o.get("unreadable")) {
        None => Some(Vec::new()),
        Some(v) if too_many(v) => {
            e.push("/unreadable", "at most 256 files are named");
            None
        }
        Some(v) => fields::array(v, "/unreadable", "`unreadable`", &mut e, |x, at, e| {
            fields::string(x, &at, "an unreadable file", 1024, e)
        }),
    };
    match (items, unreadable) {
        (Some(items), Some(unreadable)) if e.is_empty() => {
            parse_gate_request(&combine(&items, &unreadable, super::shard_key()))
        }
        _ => Err(e),
    }
}

/// One shard's facts as read: where it was given, the document, the request, its own facts.
struct Given<'a> {
    doc: &'a Value,
    request: GateRequest,
    shard: ShardFacts,
}

/// `K/N` of a shard.
fn name(s: &ShardFacts) -> String {
    format!("shard {}/{}", s.index, s.total)
}

/// Each shard's facts in `items` (a shard's `/gate` body) and what the caller could not read
/// (`unreadable`, each a gap), checked and merged into one facts document (`key`: the shards'
/// digest key). Always a document: with `shards.gaps` when they do not make one gate.
pub fn combine(items: &[Value], unreadable: &[String], key: &[u8]) -> Value {
    let mut gaps: Vec<String> = unreadable
        .iter()
        .map(|why| format!("could not be read: {why}"))
        .collect();
    let mut given: Vec<Given<'_>> = Vec::new();
    let mut first_doc: Option<&Value> = None;
    if items.is_empty() && unreadable.is_empty() {
        gaps.push("no shard's facts were given".to_owned());
    }
    for (i, item) in items.iter().enumerate() {
        let n = i + 1;
        let request = match parse_gate_request(item) {
            Ok(r) => r,
            Err(e) => {
                let first = e
                    .into_parts()
                    .0
                    .first()
                    .map_or(String::new(), |x| format!(": {} {}", x.pointer, x.detail));
                gaps.push(format!("facts #{n} are not a gate's facts{first}"));
                continue;
            }
        };
        first_doc.get_or_insert(item);
        let Some(shard) = request.shard.clone() else {
            gaps.push(format!(
                "facts #{n} are not a shard's (no `shard`: a gate run without --shard)"
            ));
            continue;
        };
        match &shard.digest {
            None => gaps.push(format!(
                "{} did not finish (no digest: its gate stopped before the plan said decide)",
                name(&shard)
            )),
            Some(d) if *d != shard_digest(item, key) => gaps.push(format!(
                "{}'s facts are not as it wrote them (their digest does not match: edited, or written with another PATCHGATE_SHARD_KEY)",
                name(&shard)
            )),
            Some(_) => given.push(Given {
                doc: item,
                request,
                shard,
            }),
        }
    }
    given.sort_by_key(|g| g.shard.index);
    let total = given.first().map_or(1, |g| g.shard.total);
    if let Some(r) = given.first() {
        check_same(r, &given, &mut gaps);
    }
    let mut seen = BTreeSet::new();
    for g in &given {
        if !seen.insert(g.shard.index) {
            gaps.push(format!("{} is given twice", name(&g.shard)));
        }
    }
    for k in 1..=total {
        if !seen.contains(&k) {
            gaps.push(format!("shard {k}/{total} is missing"));
        }
    }
    if gaps.is_empty() {
        let owned: u64 = given.iter().map(|g| g.shard.owned).sum();
        let census = given.first().map_or(0, |g| g.shard.census);
        if owned != census {
            gaps.push(format!(
                "the shards own {owned} of the census's {census} tests: every census test is in exactly one shard"
            ));
        }
    }
    let spine = given
        .first()
        .map(|g| g.doc)
        .or(first_doc)
        .cloned()
        .unwrap_or_else(|| {
            let none = "0".repeat(64);
            json!({"changed_files": [], "seal": {"actual": none, "expected": none}, "catalog": {"properties": []}})
        });
    let combined: Vec<u32> = seen.into_iter().collect();
    if gaps.is_empty() {
        let mut doc = merge(&spine, &given, &mut gaps);
        set_shards(&mut doc, total, &combined, &[]);
        if parse_gate_request(&doc).is_ok() && gaps.is_empty() {
            return doc;
        }
        if gaps.is_empty() {
            gaps.push("the shards' facts, merged, do not validate".to_owned());
        }
    }
    let mut doc = spine;
    gaps.truncate(MAX_SHARD_GAPS);
    set_shards(&mut doc, total, &combined, &gaps);
    doc
}

/// `shards` written into `doc`, its `shard` taken out.
fn set_shards(doc: &mut Value, total: u32, combined: &[u32], gaps: &[String]) {
    if let Some(o) = doc.as_object_mut() {
        o.remove("shard");
        let mut shards = json!({"total": total, "combined": combined});
        if !gaps.is_empty() {
            // Each within what `shards.gaps` carries (a path or an error may be long).
            let clipped: Vec<String> = gaps
                .iter()
                .map(|g| match g.char_indices().nth(1000) {
                    Some((at, _)) => format!("{}…", &g[..at]),
                    None => g.clone(),
                })
                .collect();
            put(&mut shards, "gaps", clipped);
        }
        o.insert("shards".to_owned(), shards);
    }
}

/// Every shard against the first: one split of one census, one head, base config and version.
fn check_same(r: &Given<'_>, given: &[Given<'_>], gaps: &mut Vec<String>) {
    for g in given.iter().skip(1) {
        let (a, b) = (&g.shard, &r.shard);
        let differs = |what: &str, theirs: &str, ours: &str| {
            format!(
                "{} {what} ({}, not {} as {})",
                name(a),
                short(theirs),
                short(ours),
                name(b)
            )
        };
        if a.total != b.total {
            gaps.push(format!(
                "{} was split into {} shards, not {} as {}",
                name(a),
                a.total,
                b.total,
                name(b)
            ));
            continue;
        }
        let (ja, jb) = (g.request.judged.as_ref(), r.request.judged.as_ref());
        let part = |j: Option<&super::request::Judged>, f: fn(&super::request::Judged) -> &str| {
            j.map_or(String::new(), |j| f(j).to_owned())
        };
        for (what, f) in [
            (
                "judged another head",
                (|j| &j.head) as fn(&super::request::Judged) -> &str,
            ),
            ("judged another base", |j| &j.base),
            ("judged another tree", |j| &j.tree),
        ] {
            let (x, y) = (part(ja, f), part(jb, f));
            if x != y {
                gaps.push(differs(what, &x, &y));
            }
        }
        if a.config != b.config {
            gaps.push(differs(
                "ran with another base config",
                &a.config,
                &b.config,
            ));
        }
        if a.version != b.version {
            gaps.push(differs(
                "ran another patchgate version",
                &a.version,
                &b.version,
            ));
        }
        if a.partition != b.partition || a.census != b.census {
            gaps.push(differs(
                "split another census, or split it differently",
                &a.partition,
                &b.partition,
            ));
        }
    }
}

/// An id shortened for a sentence: its first 12 characters.
fn short(s: &str) -> String {
    if s.is_empty() {
        return "none".to_owned();
    }
    s.chars().take(12).collect()
}

/// Shard 1's facts with every shard's suite merged in (and what runs beside it).
fn merge(spine: &Value, given: &[Given<'_>], gaps: &mut Vec<String>) -> Value {
    let mut doc = spine.clone();
    let docs: Vec<&Value> = given.iter().map(|g| g.doc).collect();
    let Some(o) = doc.as_object_mut() else {
        return doc;
    };
    merge_units(o, &docs);
    let suites: Option<Vec<&Value>> = docs.iter().map(|d| d.get("fixture_suite")).collect();
    if suites.is_none() {
        o.remove("fixture_suite");
    }
    if let Some((suites, suite)) = suites.and_then(|s| s.first().copied().map(|f| (s, f))) {
        let catch: Vec<u64> = suite
            .get("catch_exit_codes")
            .and_then(Value::as_array)
            .map_or(vec![1], |a| a.iter().filter_map(Value::as_u64).collect());
        let mut merged = merge_runs(&suites, &catch);
        let m = merged.as_object_mut();
        if let Some(m) = m {
            if let Some(v) = suite.get("catch_exit_codes") {
                m.insert("catch_exit_codes".to_owned(), v.clone());
            }
            // The test files the patch adds ran on the shard the split gave them.
            if let Some(v) = suites.iter().find_map(|s| s.get("added")) {
                m.insert("added".to_owned(), v.clone());
            }
            let mut vanished: BTreeSet<String> = BTreeSet::new();
            let mut count = 0u64;
            for s in &suites {
                let listed = strings(s.get("vanished"));
                count += s
                    .get("vanished_count")
                    .and_then(Value::as_u64)
                    .unwrap_or(listed.len() as u64);
                vanished.extend(listed);
            }
            if count > 0 {
                let list: Vec<String> = vanished.into_iter().take(MAX_VANISHED).collect();
                m.insert("vanished".to_owned(), json!(list));
                m.insert("vanished_count".to_owned(), json!(count));
            }
            // The failed tests each share found the patch changes (issue 65), once each.
            let mut changed: Vec<Value> = Vec::new();
            for s in &suites {
                for t in s
                    .get("changed_tests")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                {
                    if !changed.iter().any(|c| c.get("id") == t.get("id"))
                        && changed.len() < super::shape::MAX_CHANGED_TESTS
                    {
                        changed.push(t.clone());
                    }
                }
            }
            if !changed.is_empty() {
                m.insert("changed_tests".to_owned(), Value::Array(changed));
            }
            // The re-run without the frozen tests, and the observed run's failures run
            // plainly: each share's, or its first run where that passed; none when a share
            // failed and was not run again.
            for key in ["rerun", "plain"] {
                if !suites.iter().any(|s| s.get(key).is_some()) {
                    continue;
                }
                let reruns: Option<Vec<&Value>> = suites
                    .iter()
                    .map(|s| match s.get(key) {
                        Some(r) => Some(r),
                        None if s.get("exit_code") == Some(&json!(0)) => Some(*s),
                        None => None,
                    })
                    .collect();
                if let Some(reruns) = reruns {
                    m.insert(key.to_owned(), merge_runs(&reruns, &catch));
                }
            }
        }
        o.insert("fixture_suite".to_owned(), merged);
        if let Some(observe) = spine.get("observe") {
            let all: Vec<&Value> = docs.iter().filter_map(|d| d.get("observe")).collect();
            if all.len() == docs.len() {
                o.insert(
                    "observe".to_owned(),
                    super::combine_observe::merge(observe, &all),
                );
            } else {
                gaps.push(
                    "a shard did not observe its share of the suite, though shard 1 did".to_owned(),
                );
            }
        }
        // Each shard replayed the calls its share recorded (issue 66): all of them, in shard
        // order, to the cap.
        if let Some(spine_behavior) = spine.get("behavior") {
            let mut merged = spine_behavior.clone();
            let behaviors: Vec<&Value> = docs.iter().filter_map(|d| d.get("behavior")).collect();
            if let Some(m) = merged.as_object_mut() {
                merge_behaviors(m, &behaviors);
            }
            o.insert("behavior".to_owned(), merged);
        }
    }
    // Every shard's failing cases: its share's, and its properties' and canary's; without the
    // suite (a shard decided before its share), not those of the shares that ran.
    let no_suite = !o.contains_key("fixture_suite");
    let mut failures: Vec<Value> = Vec::new();
    for d in &docs {
        let share_failed = match no_suite {
            true => strings(d.pointer("/fixture_suite/failed_tests")),
            false => Vec::new(),
        };
        for f in d
            .get("failures")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let of_share = f
                .get("id")
                .and_then(Value::as_str)
                .is_some_and(|id| share_failed.iter().any(|s| s == id));
            if !of_share && !failures.contains(f) && failures.len() < MAX_FAILURES {
                failures.push(f.clone());
            }
        }
    }
    if !failures.is_empty() {
        o.insert("failures".to_owned(), Value::Array(failures));
    }
    let integrity: Vec<Value> = docs
        .iter()
        .flat_map(|d| {
            d.get("integrity")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
        })
        .cloned()
        .collect();
    if !integrity.is_empty() {
        o.insert("integrity".to_owned(), Value::Array(integrity));
    }
    let left: u64 = docs
        .iter()
        .filter_map(|d| d.get("left_behind").and_then(Value::as_u64))
        .sum();
    if left > 0 {
        o.insert(
            "left_behind".to_owned(),
            json!(left.min(u64::from(u32::MAX))),
        );
    }
    // The runs over a cap, in any shard's room (a share killed by the memory cap says so).
    let mut over: Vec<Value> = Vec::new();
    for d in &docs {
        let theirs = d.pointer("/room/over").and_then(Value::as_array);
        for x in theirs.into_iter().flatten() {
            if !over.contains(x) && over.len() < 100 {
                over.push(x.clone());
            }
        }
    }
    if let Some(room) = o.get_mut("room").and_then(Value::as_object_mut)
        && !over.is_empty()
    {
        room.insert("over".to_owned(), Value::Array(over));
    }
    if docs.iter().any(|d| d.get("sandbox") == Some(&json!("off"))) {
        o.insert("sandbox".to_owned(), json!("off"));
    }
    // Where the time went: each phase's longest shard (the wall time of jobs run at once).
    let mut timings: Map<String, Value> = Map::new();
    for d in &docs {
        for (phase, ms) in d
            .get("timings_ms")
            .and_then(Value::as_object)
            .into_iter()
            .flatten()
        {
            let ms = ms.as_u64().unwrap_or(0);
            let now = timings.get(phase).and_then(Value::as_u64).unwrap_or(0);
            timings.insert(phase.clone(), json!(now.max(ms)));
        }
    }
    if !timings.is_empty() {
        o.insert("timings_ms".to_owned(), Value::Object(timings));
    }
    doc
}

/// The facts of the units the split gave each shard (issue 67), merged into `o` from every
/// shard's: each property's runs, receipts and admitted source once (the first shard that has
/// them), the re-proofs and replays of all (to the facts' caps), the canary where it ran,
/// `batched` when any shard's runs were.
fn merge_units(o: &mut Map<String, Value>, docs: &[&Value]) {
    for key in ["property_runs", "property_receipts", "admitted_sources"] {
        let mut all = Map::new();
        for d in docs {
            for (k, v) in d.get(key).and_then(Value::as_object).into_iter().flatten() {
                all.entry(k.clone()).or_insert_with(|| v.clone());
            }
        }
        if !all.is_empty() {
            o.insert(key.to_owned(), Value::Object(all));
        }
    }
    for (key, cap) in [
        ("reproof", super::shape::MAX_REPROOFS),
        ("replays", super::MAX_PROPERTY_CASES),
    ] {
        let all: Vec<Value> = docs
            .iter()
            .flat_map(|d| d.get(key).and_then(Value::as_array).into_iter().flatten())
            .take(cap)
            .cloned()
            .collect();
        if !all.is_empty() {
            o.insert(key.to_owned(), Value::Array(all));
        }
    }
    if docs
        .iter()
        .any(|d| d.get("batched") == Some(&Value::Bool(true)))
    {
        o.insert("batched".to_owned(), Value::Bool(true));
    }
    if let Some(canary) = docs.iter().find_map(|d| d.get("canary")) {
        o.insert("canary".to_owned(), canary.clone());
    }
}

/// `value` set at `key` of the object `v`.
fn put(v: &mut Value, key: &str, value: impl Into<Value>) {
    if let Some(o) = v.as_object_mut() {
        o.insert(key.to_owned(), value.into());
    }
}

/// A list of strings in `v` (none when it is not one).
fn strings(v: Option<&Value>) -> Vec<String> {
    v.and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|x| x.as_str().map(str::to_owned))
        .collect()
}

/// Runs of the suite's shares (each `{exit_code, failed_tests, report_disagrees, receipt}`)
/// as one run: exit 0 when every share's was; else a share's that is no catch (killed, a
/// crash), else the first catch; the failed tests in shard order; the receipts summed (`null`
/// when any share's is, or when some have one and some not); the first disagreement.
fn merge_runs(runs: &[&Value], catch: &[u64]) -> Value {
    let codes: Vec<Option<u64>> = runs
        .iter()
        .map(|r| r.get("exit_code").and_then(Value::as_u64))
        .collect();
    let exit = if codes.iter().all(|c| *c == Some(0)) {
        json!(0)
    } else if codes.iter().any(Option::is_none) {
        Value::Null
    } else {
        let no_catch = codes
            .iter()
            .flatten()
            .find(|c| **c != 0 && !catch.contains(c));
        let first_catch = codes.iter().flatten().find(|c| **c != 0);
        json!(no_catch.or(first_catch))
    };
    let mut out = json!({"exit_code": exit});
    if runs.iter().all(|r| r.get("failed_tests").is_some()) {
        let mut failed: Vec<String> = Vec::new();
        for r in runs {
            for id in strings(r.get("failed_tests")) {
                if !failed.contains(&id) {
                    failed.push(id);
                }
            }
        }
        put(&mut out, "failed_tests", failed);
    }
    let disagrees = runs
        .iter()
        .find_map(|r| r.get("report_disagrees").and_then(Value::as_str));
    if let Some(d) = disagrees {
        put(&mut out, "report_disagrees", d);
    }
    let receipts: Vec<Option<&Value>> = runs.iter().map(|r| r.get("receipt")).collect();
    if receipts.iter().any(Option::is_some) {
        let all: Option<Vec<&Value>> = receipts
            .iter()
            .map(|r| r.filter(|v| v.is_object()))
            .collect();
        let receipt = match all {
            None => Value::Null,
            Some(all) => {
                let sum = |k: &str| -> u64 {
                    all.iter()
                        .filter_map(|r| r.get(k).and_then(Value::as_u64))
                        .fold(0u64, u64::saturating_add)
                        .min(u64::from(u32::MAX))
                };
                let mut r = json!({"executed": sum("executed"), "failed": sum("failed"), "skipped": sum("skipped")});
                if let Some(d) = all.iter().find_map(|r| r.get("disagrees")) {
                    put(&mut r, "disagrees", d.clone());
                }
                r
            }
        };
        put(&mut out, "receipt", receipt);
    }
    out
}

/// The shards' `behavior` into one: their calls in shard order (at most the facts' bound),
/// their unrecorded rows, their rows against the base with each `call` moved to where its
/// call now is (a row whose call was left out goes too), and whether a test the patch adds
/// fails on the base (one that does in any shard does).
fn merge_behaviors(into: &mut serde_json::Map<String, Value>, behaviors: &[&Value]) {
    let list = |b: &Value, key: &str| b.get(key).and_then(Value::as_array).cloned();
    let mut calls: Vec<Value> = Vec::new();
    let mut rows: Vec<Value> = Vec::new();
    for b in behaviors {
        let offset = calls.len();
        let own = list(b, "calls").unwrap_or_default();
        let room = super::behavior::MAX_REPLAYED_CALLS.saturating_sub(offset);
        let kept = own.len().min(room);
        calls.extend(own.into_iter().take(kept));
        for mut row in list(b, "against_base").unwrap_or_default() {
            let Some(call) = row.get("call").and_then(Value::as_u64) else {
                continue;
            };
            if usize::try_from(call).is_ok_and(|c| c < kept)
                && let Some(at) = row.get_mut("call")
            {
                *at = json!(call + offset as u64);
                rows.push(row);
            }
        }
    }
    let unrecorded: Vec<Value> = behaviors
        .iter()
        .filter_map(|b| list(b, "unrecorded"))
        .flatten()
        .take(super::behavior::MAX_UNRECORDED)
        .collect();
    into.insert("calls".to_owned(), Value::Array(calls));
    into.insert("unrecorded".to_owned(), Value::Array(unrecorded));
    if !rows.is_empty() {
        into.insert("against_base".to_owned(), Value::Array(rows));
    }
    let mut failing: Vec<Value> = Vec::new();
    for id in behaviors
        .iter()
        .filter_map(|b| list(b, "failing_on_base"))
        .flatten()
    {
        if failing.len() < super::behavior::MAX_FAILING_ON_BASE && !failing.contains(&id) {
            failing.push(id);
        }
    }
    match failing.is_empty() {
        true => into.remove("failing_on_base"),
        false => into.insert("failing_on_base".to_owned(), Value::Array(failing)),
    };
    let added: Vec<bool> = behaviors
        .iter()
        .filter_map(|b| b.get("added_fail_on_base").and_then(Value::as_bool))
        .collect();
    match added.iter().any(|a| *a) {
        true => into.insert("added_fail_on_base".to_owned(), json!(true)),
        false if !added.is_empty() => into.insert("added_fail_on_base".to_owned(), json!(false)),
        false => into.remove("added_fail_on_base"),
    };
}
