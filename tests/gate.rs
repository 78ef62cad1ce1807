//! `POST /gate` (CONTRACT.md section 8.1) over a real socket, and the same facts through the
//! CLI (`patchgate gate --facts`): every row below is written by hand from the contract's
//! rules and its derivation of the three routed verdicts.

mod common;

use common::{TestServer, patchgate, post_json};
use serde_json::{Value, json};

const A: &str = "1111111111111111111111111111111111111111111111111111111111111111";
const B: &str = "2222222222222222222222222222222222222222222222222222222222222222";

/// A patch to `store/counters/mod.rs` whose gates all held.
fn base() -> Value {
    json!({
        "patch_id": "pr-7",
        "changed_files": ["store/counters/mod.rs"],
        "guarded": ["patchgate.toml", "catalog.yaml", "freeze-ledger.json", "fixtures.seal.expected", ".github/workflows"],
        "seal": {"actual": A, "expected": A},
        "catalog": {"properties": [
            {"id": "counter.monotonic", "strength": "strong", "locality": ["store/counters"], "source": ["props/counter"]},
            {"id": "resp.keys", "strength": "weak", "locality": ["api/serializers"]}
        ]},
        "ledger": [],
        "debt_cap": 5,
        "property_runs": {"counter.monotonic": {"runs": [0, 0]}},
        "fixture_suite": {"exit_code": 0}
    })
}

fn with(edits: &[(&str, Value)]) -> Value {
    let mut doc = base();
    for (key, value) in edits {
        if value.is_null() {
            doc.as_object_mut().unwrap().remove(*key);
        } else {
            doc[*key] = value.clone();
        }
    }
    doc
}

/// The answer `POST /gate` gives `doc`, asserted to have this disposition and reason.
fn answers(name: &str, doc: &Value, disposition: &str, reason: &str) -> Value {
    use patchgate::core::decision::Decision;
    use patchgate::core::gate::GateDecision;
    let request = GateDecision::parse(&serde_json::to_vec(doc).unwrap())
        .unwrap_or_else(|p| panic!("{name}: {p:?}"));
    let d = GateDecision::decide(&request, &Default::default());
    let answer = serde_json::to_value(d.answer(&request, "d".to_owned())).unwrap();
    assert_eq!(
        (answer["disposition"].as_str(), answer["reason"].as_str()),
        (Some(disposition), Some(reason)),
        "{name}: {answer}"
    );
    answer
}

fn open_property(id: &str) -> Value {
    json!({"property_id": id, "state": "open"})
}

fn open_test(id: &str, covers: &[&str]) -> Value {
    json!({"test_id": id, "covers": covers, "state": "open"})
}

/// (name, document, status, disposition, rule, reason, routed verdicts or None).
type Row = (
    &'static str,
    Value,
    u16,
    &'static str,
    &'static str,
    &'static str,
    Option<[&'static str; 3]>,
);

/// A `behavior` fact with one call: the rule, and the digests of its recorded result and its
/// two plain replays.
fn behavior(rule: &str, (recorded, one, two): (&str, &str, &str)) -> Value {
    let result = |d: &str| json!({"end": "returned", "shown": "999", "digest": d});
    json!({"behaves_under_test": rule, "calls": [{
        "function": "apply_discount", "file": "store/counters/mod.rs", "line": 3,
        "check": "tests.test_cases::test_case", "arguments": "1999, 50",
        "recorded": result(recorded), "plain": [result(one), result(two)]}]})
}

/// A `behavior` fact compared with the base (CONTRACT.md 16.3): one agreeing recorded call,
/// and one row against the base with the rules all at `rule`; whether a test the patch adds
/// fails on the base.
fn against_base(
    rule: &str,
    (recorded, neighbours, differing): (&str, u32, u32),
    added: Option<bool>,
) -> Value {
    let same = "a".repeat(64);
    let mut b = behavior("required", (&same, &same, &same));
    let result = |d: &str| json!({"end": "returned", "shown": "x", "digest": d});
    let differences: Vec<Value> = match (recorded, differing) {
        ("differs", _) | (_, 1..) => vec![json!({"input": "cents + 1", "arguments": "2000",
            "base": result(&"a".repeat(64)), "patch": result(&"b".repeat(64))})],
        _ => vec![],
    };
    let o = b.as_object_mut().unwrap();
    for key in [
        "unobserved_difference",
        "special_case",
        "unasserted_difference",
    ] {
        o.insert(key.to_owned(), json!(rule));
    }
    o.insert(
        "against_base".to_owned(),
        json!([{"call": 0, "recorded": recorded, "neighbours": neighbours, "differing": differing,
                "differences": differences}]),
    );
    if let Some(a) = added {
        o.insert("added_fail_on_base".to_owned(), json!(a));
        // The failing test is the one that made the call (16.3's last row: where it looks).
        if a {
            o.insert(
                "failing_on_base".to_owned(),
                json!(["tests.test_cases::test_case[discount_half]"]),
            );
        }
    }
    b
}

fn rows() -> Vec<Row> {
    let suite = |exit: Value, failed: &[&str]| json!({"exit_code": exit, "failed_tests": failed});
    let changed = |files: &[&str]| json!(files);
    vec![
        (
            "all held",
            base(),
            200,
            "MERGE_OK",
            "route",
            "all-gates-held",
            Some(["pass", "pass", "pass"]),
        ),
        // Rule 1 first, whatever else is wrong: with a conflict there is no tree to judge.
        (
            "a merge conflict beats every other rule",
            with(&[
                ("merge_conflicts", changed(&["store/counters/mod.rs"])),
                ("seal", json!({"actual": A, "expected": B})),
                ("changed_files", changed(&["catalog.yaml", "x.pyc"])),
                ("debt_cap", json!(0)),
                ("ledger", json!([open_property("x")])),
            ]),
            424,
            "ESCALATE",
            "merge",
            "merge-conflict",
            None,
        ),
        (
            "a clean merge goes on",
            with(&[
                ("merge_conflicts", changed(&[])),
                (
                    "judged",
                    json!({"base": "1".repeat(40), "head": "2".repeat(40), "tree": "3".repeat(40)}),
                ),
                ("sandbox", json!("bubblewrap")),
            ]),
            200,
            "MERGE_OK",
            "route",
            "all-gates-held",
            Some(["pass", "pass", "pass"]),
        ),
        (
            "a suspicious line in code escalates",
            with(&[(
                "suspicious",
                json!([{"file": "store/counters/mod.rs", "line": 3, "rule": "pattern", "class": "probe", "code": "if cfg!(test) {", "pattern": "cfg!"}]),
            )]),
            424,
            "ESCALATE",
            "test-aware",
            "test-aware-code",
            None,
        ),
        // Section 15.5: a reading hit does not stop the runs; a failure they show answers
        // BLOCK (the hits named in the test-aware step), else the reading's ESCALATE stands.
        (
            "a reading hit and a stable property failure: BLOCK (15.5)",
            with(&[
                (
                    "suspicious",
                    json!([{"file": "shop/pricing.py", "line": 7, "rule": "comparison-method", "class": "overload", "code": "def __lt__(self, other):"}]),
                ),
                (
                    "property_runs",
                    json!({"counter.monotonic": {"runs": [1, 1]}}),
                ),
                ("fixture_suite", Value::Null),
            ]),
            409,
            "BLOCK",
            "route",
            "invariant-or-over-specified-property",
            Some(["fail", "unknown", "pass"]),
        ),
        (
            "a reading hit and code that does not build: BLOCK (15.5)",
            with(&[
                (
                    "suspicious",
                    json!([{"file": "store/counters/mod.rs", "line": 3, "rule": "pattern", "class": "probe", "code": "if cfg!(test) {", "pattern": "cfg!"}]),
                ),
                ("build", json!({"exit_code": 1, "catch_exit_codes": [1]})),
                ("property_runs", Value::Null),
                ("fixture_suite", Value::Null),
            ]),
            409,
            "BLOCK",
            "build",
            "does-not-build",
            None,
        ),
        (
            "a reading hit whose runs are split: the reading's ESCALATE stands (15.5)",
            with(&[
                (
                    "suspicious",
                    json!([{"file": "store/counters/mod.rs", "line": 3, "rule": "pattern", "class": "probe", "code": "if cfg!(test) {", "pattern": "cfg!"}]),
                ),
                (
                    "property_runs",
                    json!({"counter.monotonic": {"runs": [1, 0]}}),
                ),
                ("fixture_suite", Value::Null),
            ]),
            424,
            "ESCALATE",
            "test-aware",
            "test-aware-code",
            None,
        ),
        (
            "an equality overload in code escalates (section 14.2)",
            with(&[(
                "suspicious",
                json!([{"file": "shop/pricing.py", "line": 7, "rule": "comparison-method", "class": "overload", "code": "def __eq__(self, other):"}]),
            )]),
            424,
            "ESCALATE",
            "test-aware",
            "equality-overload",
            None,
        ),
        (
            "a pinned test input in code escalates (section 14.2)",
            with(&[(
                "suspicious",
                json!([{"file": "src/lib.rs", "line": 9, "rule": "rust-pinned-literal", "class": "special-case", "code": "if n == 12345 {", "seen_in": "tests/pinned.rs:4"}]),
            )]),
            424,
            "ESCALATE",
            "test-aware",
            "test-input-in-code",
            None,
        ),
        (
            "the first class decides, whatever the facts' order: probe before overload before special case",
            with(&[(
                "suspicious",
                json!([
                    {"file": "src/lib.rs", "line": 9, "rule": "rust-pinned-literal", "class": "special-case", "code": "if n == 12345 {", "seen_in": "tests/pinned.rs:4"},
                    {"file": "shop/pricing.py", "line": 7, "rule": "comparison-method", "class": "overload", "code": "def __eq__(self, other):"},
                    {"file": "shop/pricing.py", "line": 2, "rule": "interpreter", "class": "probe", "code": "import sys"}
                ]),
            )]),
            424,
            "ESCALATE",
            "test-aware",
            "test-aware-code",
            None,
        ),
        (
            "an overload before a special case",
            with(&[(
                "suspicious",
                json!([
                    {"file": "src/lib.rs", "line": 9, "rule": "rust-pinned-literal", "class": "special-case", "code": "if n == 12345 {", "seen_in": "tests/pinned.rs:4"},
                    {"file": "src/lib.rs", "line": 20, "rule": "hand-written-comparison", "class": "overload", "code": "impl PartialEq for Money {"}
                ]),
            )]),
            424,
            "ESCALATE",
            "test-aware",
            "equality-overload",
            None,
        ),
        // CONTRACT.md section 15.2: an unread code file escalates, ranked before every class.
        (
            "an unread code file escalates",
            with(&[(
                "unread",
                json!([{"file": "shop/pricing.py", "reason": "coding-cookie", "detail": "utf-7"}]),
            )]),
            424,
            "ESCALATE",
            "test-aware",
            "unread-code",
            None,
        ),
        (
            "unread ranks before a probe",
            with(&[
                (
                    "suspicious",
                    json!([{"file": "shop/pricing.py", "line": 2, "rule": "interpreter", "class": "probe", "code": "import sys"}]),
                ),
                (
                    "unread",
                    json!([{"file": "shop/_rounding.py", "reason": "symbolic-link", "detail": "-> data/rounding.txt"}]),
                ),
            ]),
            424,
            "ESCALATE",
            "test-aware",
            "unread-code",
            None,
        ),
        (
            "an unread file that does not build is the patch's fault",
            with(&[
                (
                    "unread",
                    json!([{"file": "shop/pricing.py", "reason": "unparsed"}]),
                ),
                ("build", json!({"exit_code": 1, "catch_exit_codes": [1]})),
            ]),
            409,
            "BLOCK",
            "build",
            "does-not-build",
            None,
        ),
        (
            "an unread file that builds still escalates",
            with(&[
                (
                    "unread",
                    json!([{"file": "shop/pricing.py", "reason": "unparsed"}]),
                ),
                ("build", json!({"exit_code": 0})),
            ]),
            424,
            "ESCALATE",
            "test-aware",
            "unread-code",
            None,
        ),
        (
            "an unread test file is the test's business",
            with(&[(
                "unread",
                json!([{"file": "tests/test_api.py", "reason": "over-read-limit"}]),
            )]),
            200,
            "MERGE_OK",
            "route",
            "all-gates-held",
            Some(["pass", "pass", "pass"]),
        ),
        (
            "a suspicious line in a test file is the test's business",
            with(&[(
                "suspicious",
                json!([{"file": "tests/test_api.py", "line": 3, "rule": "test-stack", "class": "probe", "code": "import pytest"}]),
            )]),
            200,
            "MERGE_OK",
            "route",
            "all-gates-held",
            Some(["pass", "pass", "pass"]),
        ),
        (
            "seal mismatch beats debt and guard",
            with(&[
                ("seal", json!({"actual": A, "expected": B})),
                ("changed_files", changed(&["catalog.yaml"])),
                ("debt_cap", json!(0)),
                ("ledger", json!([open_property("x")])),
            ]),
            424,
            "ESCALATE",
            "fixture-fault",
            "seal-mismatch",
            None,
        ),
        (
            "debt over the cap beats the guard",
            with(&[
                ("changed_files", changed(&["catalog.yaml"])),
                (
                    "ledger",
                    json!(
                        (0..6)
                            .map(|i| open_property(&format!("p{i}")))
                            .collect::<Vec<_>>()
                    ),
                ),
            ]),
            423,
            "STOP_QUEUE",
            "debt",
            "debt-over-cap",
            None,
        ),
        (
            "debt at the cap does not stop the queue",
            with(&[(
                "ledger",
                json!(
                    (0..5)
                        .map(|i| open_property(&format!("p{i}")))
                        .collect::<Vec<_>>()
                ),
            )]),
            200,
            "MERGE_OK",
            "route",
            "all-gates-held",
            Some(["pass", "pass", "pass"]),
        ),
        (
            "a spent budget counts twice (5 open + 1 spent > 5)",
            with(&[(
                "ledger",
                json!([
                    {"property_id": "p0", "state": "open", "retire_by_commit_count": 3, "commits_since_open": 3},
                    open_property("p1"), open_property("p2"), open_property("p3"), open_test("t::a", &["legacy"]),
                ]),
            )]),
            423,
            "STOP_QUEUE",
            "debt",
            "debt-over-cap",
            None,
        ),
        (
            "a guarded file",
            with(&[(
                "changed_files",
                changed(&["store/counters/mod.rs", "catalog.yaml"]),
            )]),
            424,
            "ESCALATE",
            "guard",
            "guarded-input-edited",
            None,
        ),
        (
            "a file under a guarded directory",
            with(&[(
                "changed_files",
                changed(&["store/counters/mod.rs", ".github/workflows/ci.yml"]),
            )]),
            424,
            "ESCALATE",
            "guard",
            "guarded-input-edited",
            None,
        ),
        (
            "a property's source",
            with(&[(
                "changed_files",
                changed(&["store/counters/mod.rs", "props/counter/replay.py"]),
            )]),
            424,
            "ESCALATE",
            "guard",
            "guarded-input-edited",
            None,
        ),
        // Rule 4 (CONTRACT.md section 12.3): a compiled or binary file, by its name or as the
        // runner saw it; after the guard.
        (
            "a compiled file by its name",
            with(&[(
                "changed_files",
                changed(&[
                    "store/counters/mod.rs",
                    "store/__pycache__/mod.cpython-311.pyc",
                ]),
            )]),
            424,
            "ESCALATE",
            "binary",
            "binary-added",
            None,
        ),
        (
            "a shared library",
            with(&[(
                "changed_files",
                changed(&["store/counters/mod.rs", "store/_speedups.so"]),
            )]),
            424,
            "ESCALATE",
            "binary",
            "binary-added",
            None,
        ),
        (
            "a binary the runner saw",
            with(&[
                (
                    "changed_files",
                    changed(&["store/counters/mod.rs", "tools/fmt"]),
                ),
                ("binaries", changed(&["tools/fmt"])),
            ]),
            424,
            "ESCALATE",
            "binary",
            "binary-added",
            None,
        ),
        (
            "a guarded binary is a guard hit first",
            with(&[(
                "changed_files",
                changed(&["store/counters/mod.rs", "catalog.yaml", "x.so"]),
            )]),
            424,
            "ESCALATE",
            "guard",
            "guarded-input-edited",
            None,
        ),
        (
            "guards match whole segments",
            with(&[(
                "changed_files",
                changed(&[
                    "store/counters/mod.rs",
                    ".github/workflows_old/ci.yml",
                    "catalog.yaml.bak",
                ]),
            )]),
            200,
            "MERGE_OK",
            "route",
            "all-gates-held",
            Some(["pass", "pass", "pass"]),
        ),
        (
            "a scope hit: t1 skipped, unknown",
            with(&[(
                "changed_files",
                changed(&[
                    "store/counters/mod.rs",
                    "store/counters/tests/test_replay.py",
                ]),
            )]),
            424,
            "ESCALATE",
            "route",
            "inadmissible-evidence",
            Some(["unknown", "pass", "pass"]),
        ),
        (
            "a scope hit and no suite: missing",
            with(&[
                (
                    "changed_files",
                    changed(&["store/counters/mod.rs", "conftest.py"]),
                ),
                ("fixture_suite", Value::Null),
            ]),
            424,
            "ESCALATE",
            "route",
            "evidence-gap",
            Some(["unknown", "missing", "pass"]),
        ),
        (
            "t1 passed and no suite: missing",
            with(&[("fixture_suite", Value::Null)]),
            424,
            "ESCALATE",
            "route",
            "evidence-gap",
            Some(["pass", "missing", "pass"]),
        ),
        (
            "a stable failure; the suite skipped after it",
            with(&[
                (
                    "property_runs",
                    json!({"counter.monotonic": {"runs": [1, 1]}}),
                ),
                ("fixture_suite", Value::Null),
            ]),
            409,
            "BLOCK",
            "route",
            "invariant-or-over-specified-property",
            Some(["fail", "unknown", "pass"]),
        ),
        (
            "property and suite both fail",
            with(&[
                (
                    "property_runs",
                    json!({"counter.monotonic": {"runs": [1, 1]}}),
                ),
                ("fixture_suite", suite(json!(1), &["t::a"])),
            ]),
            409,
            "BLOCK",
            "route",
            "behavior-and-invariant",
            Some(["fail", "fail", "pass"]),
        ),
        (
            "the suite fails",
            with(&[("fixture_suite", suite(json!(1), &["t::a"]))]),
            409,
            "BLOCK",
            "route",
            "concrete-behavior",
            Some(["pass", "fail", "pass"]),
        ),
        (
            "the suite fails without a report",
            with(&[("fixture_suite", json!({"exit_code": 1}))]),
            409,
            "BLOCK",
            "route",
            "concrete-behavior",
            Some(["pass", "fail", "pass"]),
        ),
        (
            "an empty failure list discards nothing",
            with(&[("fixture_suite", suite(json!(1), &[]))]),
            409,
            "BLOCK",
            "route",
            "concrete-behavior",
            Some(["pass", "fail", "pass"]),
        ),
        // Section 12.4: discarded only when the re-run without them passes.
        (
            "only frozen tests failed, and the re-run without them passed: discarded",
            with(&[
                ("ledger", json!([open_test("t::frozen", &["legacy"])])),
                (
                    "fixture_suite",
                    json!({"exit_code": 1, "failed_tests": ["t::frozen"],
                           "rerun": {"exit_code": 0, "failed_tests": []}}),
                ),
            ]),
            200,
            "MERGE_OK",
            "route",
            "all-gates-held",
            Some(["pass", "pass", "pass"]),
        ),
        (
            "only frozen tests failed, with no re-run: nothing discarded",
            with(&[
                ("ledger", json!([open_test("t::frozen", &["legacy"])])),
                ("fixture_suite", suite(json!(1), &["t::frozen"])),
            ]),
            409,
            "BLOCK",
            "route",
            "concrete-behavior",
            Some(["pass", "fail", "pass"]),
        ),
        (
            "only frozen tests failed, and the re-run without them failed: laundered",
            with(&[
                ("ledger", json!([open_test("t::frozen", &["legacy"])])),
                (
                    "fixture_suite",
                    json!({"exit_code": 1, "failed_tests": ["t::frozen"],
                           "rerun": {"exit_code": 1}}),
                ),
            ]),
            409,
            "BLOCK",
            "route",
            "concrete-behavior",
            Some(["pass", "fail", "pass"]),
        ),
        // Section 11.1: a report that disagrees with itself is no verdict, even when only
        // frozen tests failed and the re-run passed.
        (
            "a report that disagrees with itself",
            with(&[
                ("ledger", json!([open_test("t::frozen", &["legacy"])])),
                (
                    "fixture_suite",
                    json!({"exit_code": 1, "failed_tests": ["t::frozen"],
                           "report_disagrees": "a <error> outside any test case",
                           "rerun": {"exit_code": 0, "failed_tests": []}}),
                ),
            ]),
            424,
            "ESCALATE",
            "route",
            "inadmissible-evidence",
            Some(["pass", "unknown", "pass"]),
        ),
        (
            "a re-run whose report disagrees with itself did not pass",
            with(&[
                ("ledger", json!([open_test("t::frozen", &["legacy"])])),
                (
                    "fixture_suite",
                    json!({"exit_code": 1, "failed_tests": ["t::frozen"],
                           "rerun": {"exit_code": 0, "failed_tests": [],
                                     "report_disagrees": "counts"}}),
                ),
            ]),
            409,
            "BLOCK",
            "route",
            "concrete-behavior",
            Some(["pass", "fail", "pass"]),
        ),
        (
            "a re-run that exits 0 while its report lists a failure did not pass",
            with(&[
                ("ledger", json!([open_test("t::frozen", &["legacy"])])),
                (
                    "fixture_suite",
                    json!({"exit_code": 1, "failed_tests": ["t::frozen"],
                           "rerun": {"exit_code": 0, "failed_tests": ["t::b"]}}),
                ),
            ]),
            409,
            "BLOCK",
            "route",
            "concrete-behavior",
            Some(["pass", "fail", "pass"]),
        ),
        (
            "a frozen and a real failure",
            with(&[
                ("ledger", json!([open_test("t::frozen", &["legacy"])])),
                ("fixture_suite", suite(json!(1), &["t::frozen", "t::a"])),
            ]),
            409,
            "BLOCK",
            "route",
            "concrete-behavior",
            Some(["pass", "fail", "pass"]),
        ),
        (
            "a closed row freezes nothing",
            with(&[
                (
                    "ledger",
                    json!([{"test_id": "t::frozen", "covers": ["legacy"], "state": "closed"}]),
                ),
                ("fixture_suite", suite(json!(1), &["t::frozen"])),
            ]),
            409,
            "BLOCK",
            "route",
            "concrete-behavior",
            Some(["pass", "fail", "pass"]),
        ),
        (
            "a killed suite",
            with(&[("fixture_suite", json!({"exit_code": null}))]),
            424,
            "ESCALATE",
            "route",
            "inadmissible-evidence",
            Some(["pass", "unknown", "pass"]),
        ),
        (
            "pytest exit 5 is not a catch",
            with(&[("fixture_suite", json!({"exit_code": 5}))]),
            424,
            "ESCALATE",
            "route",
            "inadmissible-evidence",
            Some(["pass", "unknown", "pass"]),
        ),
        (
            "cargo's 101 is not a catch by default",
            with(&[("fixture_suite", json!({"exit_code": 101}))]),
            424,
            "ESCALATE",
            "route",
            "inadmissible-evidence",
            Some(["pass", "unknown", "pass"]),
        ),
        (
            "cargo's 101 with its catch codes",
            with(&[(
                "fixture_suite",
                json!({"exit_code": 101, "catch_exit_codes": [101]}),
            )]),
            409,
            "BLOCK",
            "route",
            "concrete-behavior",
            Some(["pass", "fail", "pass"]),
        ),
        (
            "exit 0 with failures listed: the evidence disagrees",
            with(&[("fixture_suite", suite(json!(0), &["t::a"]))]),
            424,
            "ESCALATE",
            "route",
            "inadmissible-evidence",
            Some(["pass", "unknown", "pass"]),
        ),
        (
            "no result for a voting property: missing, and t2 skipped",
            with(&[
                ("property_runs", Value::Null),
                ("fixture_suite", Value::Null),
            ]),
            424,
            "ESCALATE",
            "route",
            "evidence-gap",
            Some(["missing", "unknown", "pass"]),
        ),
        (
            "split exits",
            with(&[
                (
                    "property_runs",
                    json!({"counter.monotonic": {"runs": [0, 1]}}),
                ),
                ("fixture_suite", Value::Null),
            ]),
            424,
            "ESCALATE",
            "route",
            "inadmissible-evidence",
            Some(["unknown", "unknown", "pass"]),
        ),
        (
            "a harness error",
            with(&[
                (
                    "property_runs",
                    json!({"counter.monotonic": {"runs": [5, 5]}}),
                ),
                ("fixture_suite", Value::Null),
            ]),
            424,
            "ESCALATE",
            "route",
            "inadmissible-evidence",
            Some(["unknown", "unknown", "pass"]),
        ),
        (
            "killed runs",
            with(&[
                (
                    "property_runs",
                    json!({"counter.monotonic": {"runs": [null, null]}}),
                ),
                ("fixture_suite", Value::Null),
            ]),
            424,
            "ESCALATE",
            "route",
            "inadmissible-evidence",
            Some(["unknown", "unknown", "pass"]),
        ),
        (
            "catch codes for the property runs",
            with(&[
                (
                    "property_runs",
                    json!({"counter.monotonic": {"runs": [101, 101]}}),
                ),
                ("catch_exit_codes", json!([101])),
                ("fixture_suite", Value::Null),
            ]),
            409,
            "BLOCK",
            "route",
            "invariant-or-over-specified-property",
            Some(["fail", "unknown", "pass"]),
        ),
        (
            "an empty strong quorum",
            with(&[
                ("changed_files", changed(&["docs/readme.md"])),
                ("property_runs", json!({})),
                ("fixture_suite", Value::Null),
            ]),
            424,
            "ESCALATE",
            "route",
            "inadmissible-evidence",
            Some(["unknown", "unknown", "pass"]),
        ),
        // Issue 27: `inert` paths. Only inert files changed, and no property observes them:
        // the property tier does not apply and the suite decides.
        (
            "a patch only in inert paths: the suite decides",
            with(&[
                (
                    "changed_files",
                    changed(&["docs/readme.md", "docs/guide/setup.md"]),
                ),
                ("inert", json!(["docs"])),
                ("property_runs", json!({})),
            ]),
            200,
            "MERGE_OK",
            "route",
            "all-gates-held",
            Some(["pass", "pass", "pass"]),
        ),
        (
            "a patch only in inert paths: a failing suite blocks",
            with(&[
                ("changed_files", changed(&["docs/readme.md"])),
                ("inert", json!(["docs"])),
                ("property_runs", json!({})),
                ("fixture_suite", suite(json!(1), &["t::doctest"])),
            ]),
            409,
            "BLOCK",
            "route",
            "concrete-behavior",
            Some(["pass", "fail", "pass"]),
        ),
        (
            "a patch only in inert paths: no suite is missing",
            with(&[
                ("changed_files", changed(&["docs/readme.md"])),
                ("inert", json!(["docs"])),
                ("property_runs", json!({})),
                ("fixture_suite", Value::Null),
            ]),
            424,
            "ESCALATE",
            "route",
            "evidence-gap",
            Some(["pass", "missing", "pass"]),
        ),
        (
            "one changed file outside the inert paths: the quorum is empty",
            with(&[
                ("changed_files", changed(&["docs/readme.md", "NOTES.md"])),
                ("inert", json!(["docs"])),
                ("property_runs", json!({})),
                ("fixture_suite", Value::Null),
            ]),
            424,
            "ESCALATE",
            "route",
            "inadmissible-evidence",
            Some(["unknown", "unknown", "pass"]),
        ),
        (
            "an inert path a property observes: the properties still run",
            with(&[("inert", json!(["store"])), ("property_runs", json!({}))]),
            424,
            "ESCALATE",
            "route",
            "evidence-gap",
            Some(["missing", "pass", "pass"]),
        ),
        (
            "a frozen property is excluded, never passed",
            with(&[
                ("ledger", json!([open_property("counter.monotonic")])),
                ("fixture_suite", Value::Null),
            ]),
            424,
            "ESCALATE",
            "route",
            "inadmissible-evidence",
            Some(["unknown", "unknown", "pass"]),
        ),
        (
            "a frozen test covers the diff",
            with(&[("ledger", json!([open_test("t::replay", &["store"])]))]),
            424,
            "ESCALATE",
            "route",
            "inadmissible-evidence",
            Some(["pass", "pass", "unknown"]),
        ),
        (
            "a frozen test elsewhere is irrelevant",
            with(&[(
                "ledger",
                json!([open_test("t::replay", &["store/counters_old"])]),
            )]),
            200,
            "MERGE_OK",
            "route",
            "all-gates-held",
            Some(["pass", "pass", "pass"]),
        ),
        // Section 11.7, rule 7: a run changed the tree; nothing it said counts.
        (
            "a run changed a tracked file",
            with(&[(
                "integrity",
                json!([{"run": "t1 counter.monotonic run 1/2", "files": ["store/counters/mod.rs"], "count": 1, "seal_changed": false}]),
            )]),
            424,
            "ESCALATE",
            "integrity",
            "modified-during-run",
            None,
        ),
        (
            "a run changed the fixtures' seal only",
            with(&[(
                "integrity",
                json!([{"run": "t2 fixture suite", "files": [], "count": 0, "seal_changed": true}]),
            )]),
            424,
            "ESCALATE",
            "integrity",
            "modified-during-run",
            None,
        ),
        (
            "a run created a file outside the scratch directories, tracking nothing",
            with(&[(
                "integrity",
                json!([{"run": "canary", "files": [], "count": 0, "created": ["properties/conftest.py"], "created_count": 1}]),
            )]),
            424,
            "ESCALATE",
            "integrity",
            "modified-during-run",
            None,
        ),
        (
            "integrity before the build's verdict",
            with(&[
                (
                    "integrity",
                    json!([{"run": "build", "files": ["src/gen.rs"], "count": 1}]),
                ),
                (
                    "build",
                    json!({"exit_code": 101, "catch_exit_codes": [101]}),
                ),
            ]),
            424,
            "ESCALATE",
            "integrity",
            "modified-during-run",
            None,
        ),
        // Section 11.8: the build step.
        (
            "the tree does not build",
            with(&[(
                "build",
                json!({"exit_code": 101, "catch_exit_codes": [101], "tail": "error[E0308]: mismatched types"}),
            )]),
            409,
            "BLOCK",
            "build",
            "does-not-build",
            None,
        ),
        (
            "the build is killed",
            with(&[(
                "build",
                json!({"exit_code": null, "catch_exit_codes": [101]}),
            )]),
            424,
            "ESCALATE",
            "build",
            "harness-error",
            None,
        ),
        (
            "the build exits with no catch",
            with(&[("build", json!({"exit_code": 2}))]),
            424,
            "ESCALATE",
            "build",
            "harness-error",
            None,
        ),
        (
            "the tree builds",
            with(&[(
                "build",
                json!({"exit_code": 0, "catch_exit_codes": [101], "tail": ""}),
            )]),
            200,
            "MERGE_OK",
            "route",
            "all-gates-held",
            Some(["pass", "pass", "pass"]),
        ),
        // Section 11.5: the canary must still fail, with its failure listed.
        (
            "the canary still fails",
            with(&[(
                "canary",
                json!({"exit_code": 1, "receipt": {"executed": 1, "failed": 1, "skipped": 0}}),
            )]),
            200,
            "MERGE_OK",
            "route",
            "all-gates-held",
            Some(["pass", "pass", "pass"]),
        ),
        (
            "the canary passes",
            with(&[(
                "canary",
                json!({"exit_code": 0, "receipt": {"executed": 1, "failed": 0, "skipped": 0}}),
            )]),
            424,
            "ESCALATE",
            "integrity",
            "checker-neutered",
            None,
        ),
        (
            "the canary is skipped",
            with(&[(
                "canary",
                json!({"exit_code": 0, "receipt": {"executed": 0, "failed": 0, "skipped": 1}}),
            )]),
            424,
            "ESCALATE",
            "integrity",
            "checker-neutered",
            None,
        ),
        (
            "the canary exits 1 with no report",
            with(&[("canary", json!({"exit_code": 1, "receipt": null}))]),
            424,
            "ESCALATE",
            "integrity",
            "checker-neutered",
            None,
        ),
        // Issue 40: the canary rides in the batched property runs (`in_runs`): each run's
        // catch is the canary's, each property's outcome its own cases'.
        (
            "the canary rode in both batched runs and failed in each: the properties passed",
            with(&[
                ("batched", json!(true)),
                (
                    "property_runs",
                    json!({"counter.monotonic": {"runs": [1, 1]}}),
                ),
                (
                    "property_receipts",
                    json!({"counter.monotonic": [
                        {"executed": 1, "failed": 0, "skipped": 0},
                        {"executed": 1, "failed": 0, "skipped": 0}
                    ]}),
                ),
                (
                    "canary",
                    json!({"exit_code": 1, "receipt": {"executed": 1, "failed": 1, "skipped": 0},
                    "in_runs": [
                        {"exit_code": 1, "receipt": {"executed": 1, "failed": 1, "skipped": 0}},
                        {"exit_code": 1, "receipt": {"executed": 1, "failed": 1, "skipped": 0}}
                    ]}),
                ),
            ]),
            200,
            "MERGE_OK",
            "route",
            "all-gates-held",
            Some(["pass", "pass", "pass"]),
        ),
        (
            "the canary rode in both runs and passed in the second: neutered",
            with(&[
                ("batched", json!(true)),
                (
                    "property_runs",
                    json!({"counter.monotonic": {"runs": [1, 0]}}),
                ),
                (
                    "property_receipts",
                    json!({"counter.monotonic": [
                        {"executed": 1, "failed": 0, "skipped": 0},
                        {"executed": 1, "failed": 0, "skipped": 0}
                    ]}),
                ),
                (
                    "canary",
                    json!({"exit_code": 1, "receipt": {"executed": 1, "failed": 1, "skipped": 0},
                    "in_runs": [
                        {"exit_code": 1, "receipt": {"executed": 1, "failed": 1, "skipped": 0}},
                        {"exit_code": 0, "receipt": {"executed": 1, "failed": 0, "skipped": 0}}
                    ]}),
                ),
            ]),
            424,
            "ESCALATE",
            "integrity",
            "checker-neutered",
            None,
        ),
        (
            "the canary's case missing from a batched run: neutered",
            with(&[
                ("batched", json!(true)),
                (
                    "property_runs",
                    json!({"counter.monotonic": {"runs": [1, 0]}}),
                ),
                (
                    "property_receipts",
                    json!({"counter.monotonic": [
                        {"executed": 1, "failed": 0, "skipped": 0},
                        {"executed": 1, "failed": 0, "skipped": 0}
                    ]}),
                ),
                (
                    "canary",
                    json!({"exit_code": 1, "receipt": {"executed": 1, "failed": 1, "skipped": 0},
                    "in_runs": [
                        {"exit_code": 1, "receipt": {"executed": 1, "failed": 1, "skipped": 0}},
                        {"exit_code": 0, "receipt": {"executed": 0, "failed": 0, "skipped": 0}}
                    ]}),
                ),
            ]),
            424,
            "ESCALATE",
            "integrity",
            "checker-neutered",
            None,
        ),
        (
            "a batched catch no case explains, the canary not riding: no pass",
            with(&[
                ("batched", json!(true)),
                (
                    "property_runs",
                    json!({"counter.monotonic": {"runs": [1, 1]}}),
                ),
                (
                    "property_receipts",
                    json!({"counter.monotonic": [
                        {"executed": 1, "failed": 0, "skipped": 0},
                        {"executed": 1, "failed": 0, "skipped": 0}
                    ]}),
                ),
                (
                    "canary",
                    json!({"exit_code": 1, "receipt": {"executed": 1, "failed": 1, "skipped": 0}}),
                ),
            ]),
            424,
            "ESCALATE",
            "route",
            "inadmissible-evidence",
            Some(["unknown", "pass", "pass"]),
        ),
        (
            "the canary exits with a code that is no catch",
            with(&[(
                "canary",
                json!({"exit_code": 101, "catch_exit_codes": [1], "receipt": {"executed": 1, "failed": 1, "skipped": 0}}),
            )]),
            424,
            "ESCALATE",
            "integrity",
            "checker-neutered",
            None,
        ),
        (
            "the build's verdict before the canary's",
            with(&[
                (
                    "build",
                    json!({"exit_code": 101, "catch_exit_codes": [101]}),
                ),
                ("canary", json!({"exit_code": 0, "receipt": null})),
            ]),
            409,
            "BLOCK",
            "build",
            "does-not-build",
            None,
        ),
        // Section 11.5: an admitted property run with its mutant applied must catch it.
        (
            "a re-proof that catches its mutant",
            with(&[(
                "reproof",
                json!([{"property": "counter.monotonic", "applied": true, "exit_code": 1, "receipt": {"executed": 1, "failed": 1, "skipped": 0}}]),
            )]),
            200,
            "MERGE_OK",
            "route",
            "all-gates-held",
            Some(["pass", "pass", "pass"]),
        ),
        (
            "a re-proof that passes with its mutant applied",
            with(&[(
                "reproof",
                json!([
                    {"property": "counter.monotonic", "applied": false, "note": "does not apply"},
                    {"property": "counter.monotonic", "applied": true, "exit_code": 0, "receipt": {"executed": 1, "failed": 0, "skipped": 0}}
                ]),
            )]),
            424,
            "ESCALATE",
            "integrity",
            "checker-neutered",
            None,
        ),
        (
            "a re-proof whose mutant does not apply proves nothing: none ran (11.10)",
            with(&[(
                "reproof",
                json!([{"property": "counter.monotonic", "applied": false, "note": "does not apply"}]),
            )]),
            424,
            "ESCALATE",
            "integrity",
            "checker-unproven",
            None,
        ),
        (
            "a re-proof's exit 0 without a receipt is no pass: none ran (11.10)",
            with(&[(
                "reproof",
                json!([{"property": "counter.monotonic", "applied": true, "exit_code": 0, "receipt": null}]),
            )]),
            424,
            "ESCALATE",
            "integrity",
            "checker-unproven",
            None,
        ),
        // Section 11.1: a run counts only with its receipt.
        (
            "property runs with receipts",
            with(&[(
                "property_receipts",
                json!({"counter.monotonic": [
                    {"executed": 1, "failed": 0, "skipped": 0},
                    {"executed": 1, "failed": 0, "skipped": 0}
                ]}),
            )]),
            200,
            "MERGE_OK",
            "route",
            "all-gates-held",
            Some(["pass", "pass", "pass"]),
        ),
        (
            "exit 0 without a report is a run nobody vouches for",
            with(&[(
                "property_receipts",
                json!({"counter.monotonic": [null, {"executed": 1, "failed": 0, "skipped": 0}]}),
            )]),
            424,
            "ESCALATE",
            "route",
            "inadmissible-evidence",
            Some(["unknown", "pass", "pass"]),
        ),
        (
            "exit 0 with nothing run",
            with(&[(
                "property_receipts",
                json!({"counter.monotonic": [
                    {"executed": 0, "failed": 0, "skipped": 0},
                    {"executed": 0, "failed": 0, "skipped": 0}
                ]}),
            )]),
            424,
            "ESCALATE",
            "route",
            "inadmissible-evidence",
            Some(["unknown", "pass", "pass"]),
        ),
        (
            "exit 0 with the property skipped (the engine switched off)",
            with(&[(
                "property_receipts",
                json!({"counter.monotonic": [
                    {"executed": 1, "failed": 0, "skipped": 1},
                    {"executed": 1, "failed": 0, "skipped": 1}
                ]}),
            )]),
            424,
            "ESCALATE",
            "route",
            "inadmissible-evidence",
            Some(["unknown", "pass", "pass"]),
        ),
        (
            "a catch that lists its failure",
            with(&[
                (
                    "property_runs",
                    json!({"counter.monotonic": {"runs": [1, 1]}}),
                ),
                (
                    "property_receipts",
                    json!({"counter.monotonic": [
                        {"executed": 1, "failed": 1, "skipped": 0},
                        {"executed": 1, "failed": 1, "skipped": 0}
                    ]}),
                ),
                ("fixture_suite", Value::Null),
            ]),
            409,
            "BLOCK",
            "route",
            "invariant-or-over-specified-property",
            Some(["fail", "unknown", "pass"]),
        ),
        (
            "a catch that lists no failure (a compile error, a crash) is no catch",
            with(&[
                (
                    "property_runs",
                    json!({"counter.monotonic": {"runs": [1, 1]}}),
                ),
                (
                    "property_receipts",
                    json!({"counter.monotonic": [
                        {"executed": 0, "failed": 0, "skipped": 0},
                        {"executed": 2, "failed": 0, "skipped": 0}
                    ]}),
                ),
                ("fixture_suite", Value::Null),
            ]),
            424,
            "ESCALATE",
            "route",
            "inadmissible-evidence",
            Some(["unknown", "unknown", "pass"]),
        ),
        (
            "the suite exits 0 without a receipt",
            with(&[("fixture_suite", json!({"exit_code": 0, "receipt": null}))]),
            424,
            "ESCALATE",
            "route",
            "inadmissible-evidence",
            Some(["pass", "unknown", "pass"]),
        ),
        (
            "the suite exits 0 having run nothing",
            with(&[(
                "fixture_suite",
                json!({"exit_code": 0, "receipt": {"executed": 0, "failed": 0, "skipped": 12}}),
            )]),
            424,
            "ESCALATE",
            "route",
            "inadmissible-evidence",
            Some(["pass", "unknown", "pass"]),
        ),
        (
            "the suite's skips are the census's to judge",
            with(&[(
                "fixture_suite",
                json!({"exit_code": 0, "failed_tests": [], "receipt": {"executed": 9, "failed": 0, "skipped": 2}}),
            )]),
            200,
            "MERGE_OK",
            "route",
            "all-gates-held",
            Some(["pass", "pass", "pass"]),
        ),
        (
            "the suite's receipt disagrees with itself",
            with(&[(
                "fixture_suite",
                json!({"exit_code": 0, "failed_tests": [], "receipt": {"executed": 9, "failed": 0, "skipped": 0, "disagrees": "a <error> outside any test case"}}),
            )]),
            424,
            "ESCALATE",
            "route",
            "inadmissible-evidence",
            Some(["pass", "unknown", "pass"]),
        ),
        (
            "a suite catch without a failure listed",
            with(&[(
                "fixture_suite",
                json!({"exit_code": 1, "failed_tests": [], "receipt": {"executed": 9, "failed": 0, "skipped": 0}}),
            )]),
            424,
            "ESCALATE",
            "route",
            "inadmissible-evidence",
            Some(["pass", "unknown", "pass"]),
        ),
        (
            "a suite catch with its failure listed",
            with(&[(
                "fixture_suite",
                json!({"exit_code": 1, "failed_tests": ["t::x"], "receipt": {"executed": 9, "failed": 1, "skipped": 0}}),
            )]),
            409,
            "BLOCK",
            "route",
            "concrete-behavior",
            Some(["pass", "fail", "pass"]),
        ),
        // Section 11.2: census tests that passed on the base must run.
        (
            "a census test vanished",
            with(&[(
                "fixture_suite",
                json!({"exit_code": 0, "failed_tests": [], "receipt": {"executed": 8, "failed": 0, "skipped": 0}, "vanished": ["tests.test_api::test_retry"], "vanished_count": 1}),
            )]),
            424,
            "ESCALATE",
            "route",
            "inadmissible-evidence",
            Some(["pass", "unknown", "pass"]),
        ),
        // Section 11.10: a listed failure is absorbing, whatever vanished.
        (
            "a listed failure while census tests vanished",
            with(&[(
                "fixture_suite",
                json!({"exit_code": 1, "failed_tests": ["pinned::matches"], "receipt": {"executed": 3, "failed": 1, "skipped": 0}, "vanished": ["cases::a", "cases::b"], "vanished_count": 41}),
            )]),
            409,
            "BLOCK",
            "route",
            "concrete-behavior",
            Some(["pass", "fail", "pass"]),
        ),
        // Issue 66 (CONTRACT.md 16.2): a recorded call made again twice in a plain program.
        (
            "behavior: both plain replays answer otherwise than under the tests, required",
            with(&[(
                "behavior",
                behavior(
                    "required",
                    (
                        "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
                        "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb",
                        "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb",
                    ),
                ),
            )]),
            409,
            "BLOCK",
            "route",
            "concrete-behavior",
            Some(["pass", "fail", "pass"]),
        ),
        (
            "behavior: the same, listed",
            with(&[(
                "behavior",
                behavior(
                    "listed",
                    (
                        "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
                        "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb",
                        "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb",
                    ),
                ),
            )]),
            200,
            "MERGE_OK",
            "route",
            "all-gates-held",
            Some(["pass", "pass", "pass"]),
        ),
        (
            "behavior: the plain replays disagree with each other (nondeterministic)",
            with(&[(
                "behavior",
                behavior(
                    "required",
                    (
                        "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
                        "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb",
                        "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
                    ),
                ),
            )]),
            200,
            "MERGE_OK",
            "route",
            "all-gates-held",
            Some(["pass", "pass", "pass"]),
        ),
        (
            "behavior: every plain replay agrees",
            with(&[(
                "behavior",
                behavior(
                    "required",
                    (
                        "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
                        "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
                        "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
                    ),
                ),
            )]),
            200,
            "MERGE_OK",
            "route",
            "all-gates-held",
            Some(["pass", "pass", "pass"]),
        ),
        // Issue 66 (CONTRACT.md 16.3): the recorded calls and their neighbours on the base.
        (
            "against the base: a neighbour differs, no recorded call",
            with(&[("behavior", against_base("required", ("agrees", 6, 1), None))]),
            424,
            "ESCALATE",
            "route",
            "inadmissible-evidence",
            Some(["pass", "unknown", "pass"]),
        ),
        (
            "against the base: the recorded call differs, none of its neighbours",
            with(&[(
                "behavior",
                against_base("required", ("differs", 6, 0), Some(true)),
            )]),
            424,
            "ESCALATE",
            "route",
            "inadmissible-evidence",
            Some(["pass", "unknown", "pass"]),
        ),
        (
            "against the base: recorded calls differ, no added test fails on the base",
            with(&[(
                "behavior",
                against_base("required", ("differs", 6, 2), Some(false)),
            )]),
            424,
            "ESCALATE",
            "route",
            "inadmissible-evidence",
            Some(["pass", "unknown", "pass"]),
        ),
        (
            "against the base: recorded calls differ, an added test fails on the base (a fix)",
            with(&[(
                "behavior",
                against_base("required", ("differs", 6, 2), Some(true)),
            )]),
            200,
            "MERGE_OK",
            "route",
            "all-gates-held",
            Some(["pass", "pass", "pass"]),
        ),
        (
            "against the base: recorded calls differ, an added test fails on the base, not the one that called",
            with(&[("behavior", {
                let mut b = against_base("required", ("differs", 6, 2), Some(true));
                b["failing_on_base"] = json!(["tests.test_new::test_imports_a_new_helper"]);
                b
            })]),
            424,
            "ESCALATE",
            "route",
            "inadmissible-evidence",
            Some(["pass", "unknown", "pass"]),
        ),
        (
            "against the base: agrees everywhere (a refactor)",
            with(&[("behavior", against_base("required", ("agrees", 6, 0), None))]),
            200,
            "MERGE_OK",
            "route",
            "all-gates-held",
            Some(["pass", "pass", "pass"]),
        ),
        (
            "against the base: a neighbour differs, listed",
            with(&[("behavior", against_base("listed", ("agrees", 6, 1), None))]),
            200,
            "MERGE_OK",
            "route",
            "all-gates-held",
            Some(["pass", "pass", "pass"]),
        ),
        (
            "against the base: uncompared is never a difference",
            with(&[(
                "behavior",
                against_base("required", ("uncompared", 0, 0), None),
            )]),
            200,
            "MERGE_OK",
            "route",
            "all-gates-held",
            Some(["pass", "pass", "pass"]),
        ),
        // Issue 52: whether the checks ran the change (docs/design/observe.md).
        (
            "observe: a check runs the changed lines",
            with(&[(
                "observe",
                json!({"changes": "required", "branches": "required", "read": true, "line_count": 2, "run_count": 1,
                       "lines": [{"file": "store/counters/mod.rs", "line": 3, "checks": ["tests.test_counter::test_up"]},
                                 {"file": "store/counters/mod.rs", "line": 4, "checks": []}]}),
            )]),
            200,
            "MERGE_OK",
            "route",
            "all-gates-held",
            Some(["pass", "pass", "pass"]),
        ),
        (
            "observe: no check runs any changed line",
            with(&[(
                "observe",
                json!({"changes": "required", "branches": "listed", "read": true, "line_count": 2, "run_count": 0,
                       "lines": [{"file": "store/counters/mod.rs", "line": 3, "checks": []},
                                 {"file": "store/counters/mod.rs", "line": 4, "checks": []}]}),
            )]),
            424,
            "ESCALATE",
            "route",
            "inadmissible-evidence",
            Some(["unknown", "pass", "pass"]),
        ),
        (
            "observe: the observed run's report was not read",
            with(&[(
                "observe",
                json!({"changes": "required", "branches": "off", "read": false, "line_count": 0, "run_count": 0}),
            )]),
            424,
            "ESCALATE",
            "route",
            "inadmissible-evidence",
            Some(["unknown", "pass", "pass"]),
        ),
        (
            "observe: an added branch no check takes, required",
            with(&[(
                "observe",
                json!({"changes": "required", "branches": "required", "read": true, "line_count": 1, "run_count": 1,
                       "untaken": [{"file": "store/counters/mod.rs", "line": 3, "to": 5}]}),
            )]),
            424,
            "ESCALATE",
            "route",
            "inadmissible-evidence",
            Some(["unknown", "pass", "pass"]),
        ),
        (
            "observe: an added branch no check takes, listed only",
            with(&[(
                "observe",
                json!({"changes": "required", "branches": "listed", "read": true, "line_count": 1, "run_count": 1,
                       "untaken": [{"file": "store/counters/mod.rs", "line": 3}]}),
            )]),
            200,
            "MERGE_OK",
            "route",
            "all-gates-held",
            Some(["pass", "pass", "pass"]),
        ),
        (
            "observe: listed only, nothing run",
            with(&[(
                "observe",
                json!({"changes": "listed", "branches": "listed", "read": true, "line_count": 1, "run_count": 0}),
            )]),
            200,
            "MERGE_OK",
            "route",
            "all-gates-held",
            Some(["pass", "pass", "pass"]),
        ),
        (
            "observe: unobserved, and the suite fails: BLOCK",
            with(&[
                (
                    "observe",
                    json!({"changes": "required", "branches": "off", "read": true, "line_count": 1, "run_count": 0}),
                ),
                (
                    "fixture_suite",
                    json!({"exit_code": 1, "failed_tests": ["cases::a"]}),
                ),
            ]),
            409,
            "BLOCK",
            "route",
            "concrete-behavior",
            Some(["unknown", "fail", "pass"]),
        ),
        (
            "observe: a failing property stays a failure",
            with(&[
                (
                    "observe",
                    json!({"changes": "required", "branches": "off", "read": true, "line_count": 1, "run_count": 0}),
                ),
                (
                    "property_runs",
                    json!({"counter.monotonic": {"runs": [1, 1]}}),
                ),
            ]),
            409,
            "BLOCK",
            "route",
            "invariant-or-over-specified-property",
            Some(["fail", "pass", "pass"]),
        ),
        (
            "observe: a check kills a patch mutant",
            with(&[(
                "observe",
                json!({"changes": "required", "branches": "listed", "read": true, "line_count": 2, "run_count": 2,
                       "mutants": [
                           {"file": "store/counters/mod.rs", "line": 3, "operator": "condition-true", "code": "if True:", "checks": ["t::a"], "state": "survived"},
                           {"file": "store/counters/mod.rs", "line": 4, "operator": "swap-comparison", "code": "x <= 1", "checks": ["t::a"], "state": "killed", "killed_by": ["t::a"]}]}),
            )]),
            200,
            "MERGE_OK",
            "route",
            "all-gates-held",
            Some(["pass", "pass", "pass"]),
        ),
        (
            "observe: every patch mutant survives",
            with(&[(
                "observe",
                json!({"changes": "required", "branches": "listed", "read": true, "line_count": 2, "run_count": 2,
                       "mutants": [
                           {"file": "store/counters/mod.rs", "line": 3, "operator": "condition-true", "code": "if True:", "checks": ["t::a"], "state": "survived"},
                           {"file": "store/counters/mod.rs", "line": 4, "operator": "swap-comparison", "code": "x <= 1", "checks": ["t::a"], "state": "void"}]}),
            )]),
            424,
            "ESCALATE",
            "route",
            "inadmissible-evidence",
            Some(["unknown", "pass", "pass"]),
        ),
        (
            "observe: a patch mutant never run is no kill",
            with(&[(
                "observe",
                json!({"changes": "required", "branches": "listed", "read": true, "line_count": 1, "run_count": 1,
                       "mutants": [{"file": "store/counters/mod.rs", "line": 3, "operator": "delete-statement", "code": "pass", "checks": ["t::a"], "state": "pending"}]}),
            )]),
            424,
            "ESCALATE",
            "route",
            "inadmissible-evidence",
            Some(["unknown", "pass", "pass"]),
        ),
        (
            "observe: an added branch no check takes, its condition removable unnoticed",
            with(&[(
                "observe",
                json!({"changes": "required", "branches": "listed", "read": true, "line_count": 2, "run_count": 2,
                       "untaken": [{"file": "store/counters/mod.rs", "line": 3, "to": 6}],
                       "mutants": [
                           {"file": "store/counters/mod.rs", "line": 3, "operator": "condition-true", "code": "if True:", "checks": ["t::a"], "state": "survived"},
                           {"file": "store/counters/mod.rs", "line": 4, "operator": "return-constant", "code": "return None", "checks": ["t::a"], "state": "killed", "killed_by": ["t::a"]}]}),
            )]),
            424,
            "ESCALATE",
            "route",
            "inadmissible-evidence",
            Some(["unknown", "pass", "pass"]),
        ),
        (
            "observe: an added branch no check takes, its condition's mutant killed",
            with(&[(
                "observe",
                json!({"changes": "required", "branches": "listed", "read": true, "line_count": 1, "run_count": 1,
                       "untaken": [{"file": "store/counters/mod.rs", "line": 3, "to": 6}],
                       "mutants": [
                           {"file": "store/counters/mod.rs", "line": 3, "operator": "condition-true", "code": "if True:", "checks": ["t::a"], "state": "killed", "killed_by": ["t::a"]}]}),
            )]),
            200,
            "MERGE_OK",
            "route",
            "all-gates-held",
            Some(["pass", "pass", "pass"]),
        ),
        (
            "observe: survivors listed only",
            with(&[(
                "observe",
                json!({"changes": "listed", "branches": "listed", "read": true, "line_count": 1, "run_count": 1,
                       "mutants": [{"file": "store/counters/mod.rs", "line": 3, "operator": "condition-true", "code": "if True:", "checks": ["t::a"], "state": "survived"}]}),
            )]),
            200,
            "MERGE_OK",
            "route",
            "all-gates-held",
            Some(["pass", "pass", "pass"]),
        ),
        (
            "observe: off says so and decides nothing",
            with(&[(
                "observe",
                json!({"changes": "off", "branches": "off", "read": false, "line_count": 0, "run_count": 0}),
            )]),
            200,
            "MERGE_OK",
            "route",
            "all-gates-held",
            Some(["pass", "pass", "pass"]),
        ),
    ]
}

fn check(name: &str, status: u16, answer: &Value, row: &Row) {
    let (_, _, want_status, disposition, rule, reason, evidence) = row;
    assert_eq!(status, *want_status, "{name}: {answer}");
    assert_eq!(answer["disposition"], *disposition, "{name}");
    assert_eq!(answer["rule"], *rule, "{name}");
    assert_eq!(answer["reason"], *reason, "{name}");
    assert_eq!(
        answer["exit_code"],
        common::exit_of_status(*want_status),
        "{name}"
    );
    assert_eq!(answer["patch_id"], "pr-7", "{name}");
    assert!(
        answer["decision_id"]
            .as_str()
            .is_some_and(|s| !s.is_empty())
    );
    match evidence {
        Some([p, f, z]) => assert_eq!(
            answer["evidence"],
            json!({"property_check": p, "fixture_check": f, "flaky_freeze": z}),
            "{name}"
        ),
        None => assert!(answer.get("evidence").is_none(), "{name}: {answer}"),
    }
    // Steps in pipeline order, stopping at the rule that decided.
    let steps: Vec<&str> = answer["steps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["step"].as_str().unwrap())
        .collect();
    // The pipeline's steps in order; a step that has nothing to say is not listed (integrity
    // before anything ran, no build, no canary), and a gate rule that decides ends the list
    // at its own step.
    let doc = &row.1;
    let ran = doc["property_runs"]
        .as_object()
        .is_some_and(|r| !r.is_empty())
        || ["fixture_suite", "build", "integrity", "canary"]
            .iter()
            .any(|k| doc.get(*k).is_some());
    let mut pipeline = vec!["merge", "seal", "debt", "guard", "binary", "test-aware"];
    if ran {
        pipeline.push("integrity");
    }
    if doc.get("build").is_some() {
        pipeline.push("build");
    }
    if doc.get("canary").is_some() {
        pipeline.push("canary");
    }
    if doc["reproof"].as_array().is_some_and(|r| !r.is_empty()) {
        pipeline.push("reproof");
    }
    pipeline.extend([
        "scope",
        "properties",
        "fixtures",
        "observe",
        "behavior",
        "freeze",
        "router",
    ]);
    let last = match (*rule, *reason) {
        ("merge", _) => "merge",
        ("fixture-fault", _) => "seal",
        ("integrity", "modified-during-run") => "integrity",
        ("integrity", _) if name.contains("re-proof") => "reproof",
        ("integrity", _) => "canary",
        ("route", _) => "router",
        // A reading hit does not stop the runs (CONTRACT.md section 15.5): the steps go on to
        // what the runs decide; unread code decides at its own step (15.2).
        ("test-aware", "unread-code") => "test-aware",
        ("test-aware", _) => "router",
        (other, _) => other,
    };
    let end = pipeline
        .iter()
        .position(|s| *s == last)
        .unwrap_or_else(|| panic!("{name}: no step {last}"));
    let want = &pipeline[..=end];
    assert_eq!(steps, want, "{name}");
}

#[tokio::test]
async fn every_contract_row_over_a_real_socket() {
    let server = TestServer::start();
    for row in rows() {
        let (status, answer) = post_json(&server, "/gate", &row.1).await;
        check(row.0, status, &answer, &row);
    }
}

/// The same rows through the pure core alone (no socket, no process): the decision is the
/// core's, the edges only carry it.
#[test]
fn every_contract_row_in_the_core() {
    use patchgate::core::decision::{Decision, Defaults};
    use patchgate::core::gate::GateDecision;
    for row in rows() {
        let body = serde_json::to_vec(&row.1).unwrap();
        let request = GateDecision::parse(&body).unwrap_or_else(|p| panic!("{}: {p:?}", row.0));
        let decision = GateDecision::decide(&request, &Defaults::default());
        let answer = serde_json::to_value(decision.answer(&request, "d-1".into())).unwrap();
        let status = common::status_of_exit(decision.exit_code());
        check(row.0, status, &answer, &row);
    }
}

/// Issue 27: what t1 says about files no property observes. Inert only: it did not run and
/// says why; a change no strong property observes: the files, by name (inert ones left out),
/// and the Markdown's next step says what to add instead of talking of flaky runs.
#[test]
fn t1_names_what_no_property_observes() {
    use patchgate::core::decision::{Decision, Defaults};
    use patchgate::core::gate::GateDecision;
    let decide = |doc: Value| {
        let body = serde_json::to_vec(&doc).unwrap();
        let request = GateDecision::parse(&body).expect("valid");
        let decision = GateDecision::decide(&request, &Defaults::default());
        let answer = decision.answer(&request, "d-1".into());
        let markdown = GateDecision::markdown(&answer);
        let answer = serde_json::to_value(answer).unwrap();
        let t1 = answer["steps"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["step"] == "properties")
            .cloned()
            .expect("t1");
        (t1, markdown)
    };
    let (t1, _) = decide(with(&[
        ("changed_files", json!(["docs/readme.md"])),
        ("inert", json!(["docs"])),
        ("property_runs", json!({})),
    ]));
    assert_eq!(t1["ran"], false, "{t1}");
    assert_eq!(t1["verdict"], "pass", "{t1}");
    assert!(t1["summary"].as_str().unwrap().contains("inert"), "{t1}");
    assert!(t1.get("unobserved").is_none(), "{t1}");

    let (t1, markdown) = decide(with(&[
        (
            "changed_files",
            json!(["docs/readme.md", "NOTES.md", "api/serializers/x.py"]),
        ),
        ("inert", json!(["docs"])),
        ("property_runs", json!({})),
        ("fixture_suite", Value::Null),
    ]));
    // A weak property observes api/serializers: no strong one does.
    assert_eq!(
        t1["unobserved"],
        json!(["NOTES.md", "api/serializers/x.py"]),
        "{t1}"
    );
    assert!(
        t1["summary"].as_str().unwrap().contains("unobserved"),
        "{t1}"
    );
    assert!(
        markdown.contains("no strong property observes"),
        "{markdown}"
    );
    assert!(markdown.contains("`inert`"), "{markdown}");
    assert!(!markdown.contains("flaky property"), "{markdown}");

    let (t1, _) = decide(base());
    assert!(t1.get("unobserved").is_none(), "held quorum: {t1}");
}

/// Issue 27: within GitHub's limits (a job summary over 1 MiB is dropped). 100,000 failed
/// tests, 20 failing cases of 2 KiB, 20,000 changed files and 50,000 properties in locality:
/// the report stays under 1 MiB, says how many of each list it left out, and gives each failed
/// test one line with the first line of its failing case.
#[test]
fn the_report_stays_under_a_mebibyte_whatever_the_input() {
    use patchgate::core::decision::{Decision, Defaults};
    use patchgate::core::gate::GateDecision;
    let failed: Vec<String> = (0..100_000)
        .map(|i| format!("tests.test_mod_{}::test_case_with_a_long_name_{i}", i / 100))
        .collect();
    let failures: Vec<Value> = (0..20)
        .map(|i| json!({"id": failed[i], "message": format!("AssertionError: case {i}\n{}", "x".repeat(2000))}))
        .collect();
    let properties: Vec<Value> = (0..50_000)
        .map(|i| json!({"id": format!("p{i}"), "strength": "strong", "locality": ["src"]}))
        .collect();
    let runs: serde_json::Map<String, Value> = (0..50_000)
        .map(|i| (format!("p{i}"), json!({"runs": [0, 0]})))
        .collect();
    let changed: Vec<String> = (0..20_000).map(|i| format!("src/m{i}.py")).collect();
    let doc = with(&[
        ("changed_files", json!(changed)),
        ("catalog", json!({"properties": properties})),
        ("property_runs", Value::Object(runs)),
        (
            "fixture_suite",
            json!({"exit_code": 1, "failed_tests": failed}),
        ),
        ("failures", json!(failures)),
    ]);
    let request = GateDecision::parse(&serde_json::to_vec(&doc).unwrap()).expect("valid");
    let decision = GateDecision::decide(&request, &Defaults::default());
    let answer = decision.answer(&request, "d-1".into());
    assert_eq!(answer.disposition.as_str(), "BLOCK");
    let report = GateDecision::markdown(&answer);
    assert!(report.len() < 1 << 20, "{} bytes", report.len());
    assert!(
        report.contains("- … and 99950 more\n"),
        "the failed tests left out are counted"
    );
    assert!(
        report.contains("and 49950 more in locality"),
        "the properties left out are counted"
    );
    assert!(
        report.contains(
            "- `tests.test_mod_0::test_case_with_a_long_name_3` — AssertionError: case 3\n"
        ),
        "one line per failed test, with its failing case"
    );
}

/// Issue 27: `--shadow` on a decided facts document: every output says what enforcing would
/// do, the JSON keeps the decision as made (`exit_code` 1) with `"shadow": true`, and the
/// process exits 0.
#[test]
fn shadow_mode_reports_what_enforcing_would_do() {
    let dir = tempfile::tempdir().unwrap();
    let facts = dir.path().join("facts.json");
    let doc = with(&[(
        "fixture_suite",
        json!({"exit_code": 1, "failed_tests": ["t::a"]}),
    )]);
    std::fs::write(&facts, serde_json::to_vec(&doc).unwrap()).unwrap();
    let (json_out, md) = (dir.path().join("a.json"), dir.path().join("r.md"));
    let out = common::patchgate()
        .args(["gate", "--shadow", "--facts"])
        .arg(&facts)
        .arg("--json-out")
        .arg(&json_out)
        .arg("--markdown-out")
        .arg(&md)
        .env_remove("GITHUB_ACTIONS")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "would BLOCK reason=concrete-behavior (shadow mode: exit 0; enforced, exit 1)\n"
    );
    let answer: Value = serde_json::from_slice(&std::fs::read(&json_out).unwrap()).unwrap();
    assert_eq!(answer["shadow"], true);
    assert_eq!(answer["disposition"], "BLOCK");
    assert_eq!(answer["exit_code"], 1);
    let report = std::fs::read_to_string(&md).unwrap();
    assert!(
        report.starts_with(
            "## patchgate (shadow mode): would BLOCK (exit 1 when enforced; exit 0 now)\n"
        ),
        "{report}"
    );
    // Without it, the same facts block.
    common::patchgate()
        .args(["gate", "--facts"])
        .arg(&facts)
        .env_remove("GITHUB_ACTIONS")
        .assert()
        .code(1);

    // A shadow period, logged: `patchgate review` of the log counts what enforcing would
    // have done.
    let log = dir.path().join("decisions.jsonl");
    let merging = dir.path().join("merging.json");
    std::fs::write(&merging, serde_json::to_vec(&base()).unwrap()).unwrap();
    for facts in [&facts, &facts, &merging] {
        common::patchgate()
            .args(["gate", "--shadow", "--facts"])
            .arg(facts)
            .arg("--decision-log")
            .arg(&log)
            .env_remove("GITHUB_ACTIONS")
            .assert()
            .code(0);
    }
    let lines = std::fs::read_to_string(&log).unwrap();
    assert_eq!(lines.lines().count(), 3, "{lines}");
    for line in lines.lines() {
        let v: Value = serde_json::from_str(line).unwrap();
        assert_eq!(v["target"], "patchgate::decision", "{line}");
        assert_eq!(v["endpoint"], "gate", "{line}");
        assert_eq!(v["shadow"], true, "{line}");
    }
    let reviewed = common::patchgate()
        .args(["review", "--json"])
        .arg(&log)
        .assert()
        .code(0);
    let review: Value = serde_json::from_slice(&reviewed.get_output().stdout).unwrap();
    assert_eq!(review["decisions"], 3, "{review}");
    assert_eq!(
        review["by_disposition"],
        json!({"BLOCK": 2, "MERGE_OK": 1}),
        "{review}"
    );
}

#[test]
fn every_contract_row_through_the_cli() {
    let dir = tempfile::tempdir().unwrap();
    for (i, row) in rows().into_iter().enumerate() {
        let facts = dir.path().join(format!("facts-{i}.json"));
        std::fs::write(&facts, row.1.to_string()).unwrap();
        let out = patchgate()
            .args(["gate", "--json", "--facts"])
            .arg(&facts)
            .output()
            .unwrap();
        let answer: Value = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
        let exit = out.status.code().unwrap_or(-1);
        check(row.0, common::status_of_exit(exit as u8), &answer, &row);
    }
}

#[tokio::test]
async fn the_steps_say_why() {
    let server = TestServer::start();
    let doc = with(&[
        (
            "ledger",
            json!([
                open_test("t::frozen", &["legacy"]),
                open_property("resp.keys")
            ]),
        ),
        (
            "fixture_suite",
            json!({"exit_code": 1, "failed_tests": ["t::frozen", "t::a"]}),
        ),
        (
            "changed_files",
            json!(["store/counters/mod.rs", "props/counter_old/x.py"]),
        ),
    ]);
    let (status, answer) = post_json(&server, "/gate", &doc).await;
    assert_eq!(status, 409, "{answer}");
    let step = |name: &str| {
        answer["steps"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["step"] == name)
            .cloned()
            .unwrap()
    };
    assert_eq!(step("seal")["match"], true);
    assert_eq!(
        (
            step("debt")["open"].clone(),
            step("debt")["counted"].clone()
        ),
        (json!(2), json!(2))
    );
    assert_eq!(step("guard")["sources"], json!(["props/counter"]));
    assert_eq!(step("guard")["hits"], json!([]));
    let t1 = step("properties");
    assert_eq!(t1["reason"], "quorum-held");
    assert_eq!(t1["tier"], "pass");
    assert_eq!(
        t1["properties"],
        json!([
            {"id": "counter.monotonic", "strength": "strong", "in_locality": true, "state": "pass", "vote": "yes"},
            {"id": "resp.keys", "strength": "weak", "in_locality": false, "state": "not-run", "vote": "not-in-locality"}
        ])
    );
    let t2 = step("fixtures");
    assert_eq!(t2["tier"], "caught");
    assert_eq!(t2["failed_tests"], json!(["t::a"]));
    assert_eq!(t2["discarded"], json!(["t::frozen"]));
    assert_eq!(step("freeze")["matched"], json!([]));
    assert_eq!(step("router")["rule"], "fail-absorbs");
    assert_eq!(step("router")["attribution"], "concrete-behavior");
}

#[tokio::test]
async fn a_guard_hit_names_the_file_and_what_guards_it() {
    let server = TestServer::start();
    let doc = with(&[(
        "changed_files",
        json!([
            "props/counter/replay.py",
            ".github/workflows/ci.yml",
            "store/counters/mod.rs"
        ]),
    )]);
    let (status, answer) = post_json(&server, "/gate", &doc).await;
    assert_eq!(status, 424);
    assert_eq!(
        answer["steps"][3]["hits"],
        json!([
            {"file": "props/counter/replay.py", "guarded_by": "props/counter", "property": "counter.monotonic"},
            {"file": ".github/workflows/ci.yml", "guarded_by": ".github/workflows"}
        ])
    );
}

#[tokio::test]
async fn text_and_markdown_answers() {
    let server = TestServer::start();
    let client = common::client();
    let ask = |doc: Value, accept: &'static str| {
        let client = client.clone();
        let url = server.url("/gate");
        async move {
            let res = client
                .post(url)
                .header("accept", accept)
                .json(&doc)
                .send()
                .await
                .unwrap();
            let status = res.status().as_u16();
            let ct = res.headers()["content-type"].to_str().unwrap().to_owned();
            (status, ct, res.text().await.unwrap())
        }
    };
    let guard = with(&[("changed_files", json!(["catalog.yaml"]))]);
    let (status, ct, body) = ask(guard.clone(), "text/plain").await;
    assert_eq!(
        (status, ct.as_str(), body.as_str()),
        (
            424,
            "text/plain; charset=utf-8",
            "ESCALATE reason=guarded-input-edited\n"
        )
    );
    let (status, ct, md) = ask(guard, "text/markdown").await;
    assert_eq!((status, ct.as_str()), (424, "text/markdown; charset=utf-8"));
    assert!(
        md.starts_with("## ⚠️ patchgate: ESCALATE (exit 2)\n"),
        "{md}"
    );
    assert!(
        md.contains("`catalog.yaml` (guarded path `catalog.yaml`)"),
        "{md}"
    );
    assert!(md.contains("### What to do next"), "{md}");

    // STOP_QUEUE: 423, and the report names the rows to retire, spent budgets first.
    let debt = with(&[(
        "ledger",
        json!([
            open_property("p0"), open_property("p1"), open_property("p2"), open_property("p3"),
            {"test_id": "t::old", "covers": ["legacy"], "state": "open", "owner": "billing",
             "retire_by_commit_count": 1, "commits_since_open": 9},
        ]),
    )]);
    let (status, _, md) = ask(debt, "text/markdown").await;
    assert_eq!(status, 423);
    let retire = md.split("Rows to retire first:").nth(1).unwrap_or_default();
    assert!(
        retire
            .trim_start()
            .starts_with("- test `t::old` — commit budget spent (counts twice), owner billing"),
        "{md}"
    );

    // A hostile id cannot break out of its code span or the table.
    let hostile = with(&[
        (
            "catalog",
            json!({"properties": [
                {"id": "a|b`c\nd", "strength": "strong", "locality": ["store"]}
            ]}),
        ),
        ("property_runs", json!({"a|b`c\nd": {"runs": [1, 1]}})),
        ("fixture_suite", Value::Null),
    ]);
    let (status, _, md) = ask(hostile, "text/markdown").await;
    assert_eq!(status, 409);
    assert!(
        md.contains("| `` a\\|b`c\\nd `` | strong | `fail` | **no** |"),
        "{md}"
    );
}

#[tokio::test]
async fn invalid_facts_are_refused_field_by_field() {
    let server = TestServer::start();
    let cases: Vec<(Value, &str)> = vec![
        (
            with(&[
                (
                    "catalog",
                    json!({"properties": [
                        {"id": "x", "strength": "strong", "locality": ["a"], "introduced": true}
                    ]}),
                ),
                ("property_runs", Value::Null),
            ]),
            "/catalog/properties/0/introduced",
        ),
        // Issue 35: a locality is path prefixes; a glob would match nothing, unsaid.
        (
            with(&[
                (
                    "catalog",
                    json!({"properties": [
                        {"id": "x", "strength": "strong", "locality": ["src", "src/*.rs"]}
                    ]}),
                ),
                ("property_runs", Value::Null),
            ]),
            "/catalog/properties/0/locality/1",
        ),
        (
            with(&[("configured", json!({"mutant_files": {"x": "src/a.rs"}}))]),
            "/configured/mutant_files/x",
        ),
        // Issue 36: the room's caps are at least 1 (never read as 1), its limit words the
        // contract's, its held_by the three caps.
        (
            with(&[("room", {
                let mut r = json!({"saw": ["/usr"], "uid": "own", "memory_mib": 128, "pids": 32, "disk_mib": 32, "held_by": {"memory": "watch", "pids": "watch", "disk": "rlimit-fsize"}});
                r["memory_mib"] = json!(0);
                r
            })]),
            "/room/memory_mib",
        ),
        (
            with(&[("room", {
                let mut r = json!({"saw": ["/usr"], "uid": "own", "memory_mib": 128, "pids": 32, "disk_mib": 32, "held_by": {"memory": "watch", "pids": "watch", "disk": "rlimit-fsize"}});
                r["over"] = json!([{"run": "t2-fixtures", "limit": "over-cpu"}]);
                r
            })]),
            "/room/over/0/limit",
        ),
        (
            with(&[("room", {
                let mut r = json!({"saw": ["/usr"], "uid": "own", "memory_mib": 128, "pids": 32, "disk_mib": 32, "held_by": {"memory": "watch", "pids": "watch", "disk": "rlimit-fsize"}});
                r["held_by"]["network"] = json!("none");
                r
            })]),
            "/room/held_by/network",
        ),
        (
            with(&[("room", {
                let mut r = json!({"saw": ["/usr"], "uid": "own", "memory_mib": 128, "pids": 32, "disk_mib": 32, "held_by": {"memory": "watch", "pids": "watch", "disk": "rlimit-fsize"}});
                r.as_object_mut().unwrap().remove("held_by");
                r
            })]),
            "/room",
        ),
        // Issue 37: a hit names its rule and class (the contract's words) and its code.
        (
            with(&[(
                "suspicious",
                json!([{"file": "src/a.py", "line": 1, "rule": "interpreter", "class": "sneaky", "code": "import sys"}]),
            )]),
            "/suspicious/0/class",
        ),
        (
            with(&[(
                "suspicious",
                json!([{"file": "src/a.py", "line": 1, "class": "probe", "code": "import sys"}]),
            )]),
            "/suspicious/0/rule",
        ),
        (
            with(&[(
                "suspicious",
                json!([{"file": "src/a.py", "line": 1, "rule": "interpreter", "class": "probe", "code": "import sys", "seen_in": ""}]),
            )]),
            "/suspicious/0/seen_in",
        ),
        (
            with(&[("unread", json!([{"file": "../a.py", "reason": "unparsed"}]))]),
            "/unread/0/file",
        ),
        (
            with(&[("unread", json!([{"file": "a.py", "reason": "odd"}]))]),
            "/unread/0/reason",
        ),
        (with(&[("unparsed", json!(["a.py"]))]), "/unparsed"),
        (
            with(&[(
                "merge_group",
                json!({"queue": "bors", "ref": "refs/heads/staging"}),
            )]),
            "/merge_group/queue",
        ),
        (
            with(&[(
                "merge_group",
                json!({"queue": "github-merge-group", "ref": "r", "pull_requests": [-1]}),
            )]),
            "/merge_group/pull_requests/0",
        ),
        (
            with(&[("merge_group", json!({"queue": "github-merge-group"}))]),
            "/merge_group/ref",
        ),
        // Pull request numbers are 32-bit signed on both forges (schemathesis found 2^63 taken).
        (
            with(&[(
                "merge_group",
                json!({"queue": "github-merge-group", "ref": "r", "pull_requests": [2_147_483_648_u64]}),
            )]),
            "/merge_group/pull_requests/0",
        ),
        (with(&[("results", json!({}))]), "/results"),
        (
            with(&[("fixture_suite", json!({"failed_tests": []}))]),
            "/fixture_suite/exit_code",
        ),
        (
            with(&[("fixture_suite", json!({"exit_code": 256}))]),
            "/fixture_suite/exit_code",
        ),
        (
            with(&[(
                "fixture_suite",
                json!({"exit_code": 1, "failed_tests": "t::a"}),
            )]),
            "/fixture_suite/failed_tests",
        ),
        (
            with(&[(
                "fixture_suite",
                json!({"exit_code": 1, "catch_exit_codes": [0]}),
            )]),
            "/fixture_suite/catch_exit_codes/0",
        ),
        (with(&[("guarded", json!(["/etc/passwd"]))]), "/guarded/0"),
        (
            with(&[("property_runs", json!({"nope": {"runs": [0, 0]}}))]),
            "/property_runs/nope",
        ),
        (
            with(&[("changed_files", json!(["a/../b"]))]),
            "/changed_files/0",
        ),
        (with(&[("seal", Value::Null)]), "/seal"),
        (
            with(&[("timings_ms", json!({"gather": 3, "lunch": 60}))]),
            "/timings_ms/lunch",
        ),
        (
            with(&[("timings_ms", json!({"suite": 1.5}))]),
            "/timings_ms/suite",
        ),
        // Issue 26: a batch is read through its receipts.
        (with(&[("batched", json!(true))]), "/batched"),
        (with(&[("batched", json!("yes"))]), "/batched"),
        // Section 11: one receipt per run, for runs that exist.
        (
            with(&[("property_receipts", json!({"counter.monotonic": [null]}))]),
            "/property_receipts/counter.monotonic",
        ),
        (
            with(&[("property_receipts", json!({"other": [null, null]}))]),
            "/property_receipts/other",
        ),
        (
            with(&[(
                "property_receipts",
                json!({"counter.monotonic": [{"executed": -1, "failed": 0, "skipped": 0}, null]}),
            )]),
            "/property_receipts/counter.monotonic/0/executed",
        ),
        (
            with(&[(
                "failures",
                json!(vec![json!({"id": "t::x", "message": "m"}); 21]),
            )]),
            "/failures",
        ),
        (
            with(&[(
                "failures",
                json!([{"id": "t::x", "message": "x".repeat(2049)}]),
            )]),
            "/failures/0/message",
        ),
        (
            with(&[(
                "integrity",
                json!([{"run": "r", "files": ["a"], "count": 0}]),
            )]),
            "/integrity/0/count",
        ),
        (
            with(&[(
                "integrity",
                json!([{"run": "r", "files": [], "count": 0, "created": ["a", "b"], "created_count": 1}]),
            )]),
            "/integrity/0/created_count",
        ),
        (
            with(&[(
                "integrity",
                json!([{"run": "r", "files": [], "count": 0, "created": ["../a"], "created_count": 1}]),
            )]),
            "/integrity/0/created/0",
        ),
        (
            with(&[(
                "integrity",
                json!([{"run": "r", "files": [], "count": 0, "created": (0..101).map(|i| format!("f{i}")).collect::<Vec<_>>(), "created_count": 101}]),
            )]),
            "/integrity/0/created",
        ),
        (
            with(&[("build", json!({"exit_code": 256}))]),
            "/build/exit_code",
        ),
        (
            with(&[(
                "fixture_suite",
                json!({"exit_code": 0, "vanished": ["a", "b"], "vanished_count": 1}),
            )]),
            "/fixture_suite/vanished_count",
        ),
        (
            with(&[(
                "observe",
                json!({"changes": "required", "branches": "off", "read": true, "line_count": 1, "run_count": 2}),
            )]),
            "/observe",
        ),
        (
            with(&[(
                "observe",
                json!({"changes": "sometimes", "branches": "off", "read": true, "line_count": 0, "run_count": 0}),
            )]),
            "/observe/changes",
        ),
        (
            with(&[(
                "observe",
                json!({"changes": "off", "branches": "off", "read": true, "line_count": 1, "run_count": 0,
                       "lines": [{"file": "a.py", "line": 0, "checks": []}]}),
            )]),
            "/observe/lines/0/line",
        ),
        (
            with(&[(
                "observe",
                json!({"changes": "off", "branches": "off", "read": true, "line_count": 1, "run_count": 1,
                       "mutants": [{"file": "a.py", "line": 1, "operator": "flip-everything", "code": "x", "checks": [], "state": "killed"}]}),
            )]),
            "/observe/mutants/0/operator",
        ),
        // Issue 66: the replayed calls, read as strictly.
        (
            with(&[(
                "behavior",
                json!({"behaves_under_test": "always", "calls": []}),
            )]),
            "/behavior/behaves_under_test",
        ),
        (
            with(&[(
                "behavior",
                json!({"behaves_under_test": "required", "calls": [{"function": "f", "file": "a.py", "line": 1,
                       "check": "t", "arguments": "", "recorded": {"end": "returned", "shown": "1"},
                       "plain": [{"end": "returned", "shown": "1"}]}]}),
            )]),
            "/behavior/calls/0/plain",
        ),
        (
            with(&[(
                "behavior",
                json!({"behaves_under_test": "listed", "calls": [{"function": "f", "file": "a.py", "line": 1,
                       "check": "t", "arguments": "", "recorded": {"end": "returned", "shown": "1", "digest": "XY"},
                       "plain": [{"end": "returned", "shown": "1"}, {"end": "returned", "shown": "1"}]}]}),
            )]),
            "/behavior/calls/0/recorded/digest",
        ),
        (
            with(&[("behavior", {
                let mut b = against_base("required", ("agrees", 6, 1), None);
                b["against_base"][0]["call"] = json!(1);
                b
            })]),
            "/behavior/against_base/0/call",
        ),
        (
            with(&[("behavior", against_base("required", ("agrees", 1, 2), None))]),
            "/behavior/against_base/0/differing",
        ),
        (
            with(&[(
                "behavior",
                against_base("sometimes", ("agrees", 6, 1), None),
            )]),
            "/behavior/special_case",
        ),
        (
            with(&[("behavior", {
                let mut b = against_base("required", ("differs", 6, 2), Some(true));
                b["failing_on_base"] = json!([7]);
                b
            })]),
            "/behavior/failing_on_base/0",
        ),
        (
            with(&[("behavior", {
                let mut b = against_base("required", ("differs", 6, 2), Some(true));
                b["failing_on_base"] = json!((0..101).map(|i| format!("t{i}")).collect::<Vec<_>>());
                b
            })]),
            "/behavior/failing_on_base",
        ),
    ];
    for (doc, pointer) in cases {
        let (status, problem) = post_json(&server, "/gate", &doc).await;
        assert_eq!(status, 422, "{pointer}: {problem}");
        let pointers: Vec<&str> = problem["errors"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e["pointer"].as_str().unwrap())
            .collect();
        assert!(pointers.contains(&pointer), "{pointer}: {problem}");
    }
    common::assert_healthy(&server).await;
}

#[tokio::test]
async fn the_rules_are_listed_in_order() {
    let server = TestServer::start();
    let rules: Value = common::client()
        .get(server.url("/gate/rules"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(
        rules,
        json!([
            {"number": 1, "rule": "merge", "when": "the head does not merge cleanly into the base", "disposition": "ESCALATE", "reason": "merge-conflict", "exit_codes": [2]},
            {"number": 2, "rule": "fixture-fault", "when": "seal.actual != seal.expected", "disposition": "ESCALATE", "reason": "seal-mismatch", "exit_codes": [2]},
            {"number": 3, "rule": "debt", "when": "freeze debt > cap", "disposition": "STOP_QUEUE", "reason": "debt-over-cap", "exit_codes": [3]},
            {"number": 4, "rule": "guard", "when": "a changed file is, or lies under, a guarded path or a catalog row's source", "disposition": "ESCALATE", "reason": "guarded-input-edited", "exit_codes": [2]},
            {"number": 5, "rule": "binary", "when": "a changed file is compiled or binary, or made executable", "disposition": "ESCALATE", "reason": "binary-added", "exit_codes": [2]},
            {"number": 6, "rule": "test-aware", "when": "a changed code file that is not test-adjacent could not be read as the interpreter will (unless it does not build), or the code the patch adds to one asks whether it is under test, changes what a comparison means, or compares against a literal the base's tests pin (a reading rule, or a [suspicious] pattern); with reading hits alone the runs still happen, and a failure they show answers BLOCK, naming the hits (section 15.5)", "disposition": "ESCALATE", "reason": "test-aware-code", "also": ["unread-code", "equality-overload", "test-input-in-code"], "exit_codes": [2]},
            {"number": 7, "rule": "integrity", "when": "a run changed a tracked file (content, mode, or deleted it), created a file outside the scratch directories, or changed the fixtures' seal", "disposition": "ESCALATE", "reason": "modified-during-run", "exit_codes": [2]},
            {"number": 8, "rule": "build", "when": "the build step exited with a catch ([build] catch)", "disposition": "BLOCK", "reason": "does-not-build", "exit_codes": [1]},
            {"number": 9, "rule": "build", "when": "the build step exited with anything but 0 or a catch, or timed out", "disposition": "ESCALATE", "reason": "harness-error", "exit_codes": [2]},
            {"number": 10, "rule": "integrity", "when": "the canary, a check that fails in the base, did not fail with a receipt listing its failure", "disposition": "ESCALATE", "reason": "checker-neutered", "exit_codes": [2]},
            {"number": 11, "rule": "integrity", "when": "an admitted property passed on the judged tree with its assertions turned (section 15.3) or its admission mutant applied", "disposition": "ESCALATE", "reason": "checker-neutered", "exit_codes": [2]},
            {"number": 12, "rule": "integrity", "when": "re-proofs were asked and none of them could run (a mutant that does not apply, a timeout, a report that shows nothing ran)", "disposition": "ESCALATE", "reason": "checker-unproven", "exit_codes": [2]},
            {"number": 13, "rule": "route", "when": "otherwise: the router over t0 scope, t1 properties, t2 fixture suite and the scoped freeze", "disposition": null, "reason": null, "exit_codes": [0, 1, 2]}
        ])
    );
}

#[tokio::test]
async fn decisions_are_counted_by_disposition() {
    let server = TestServer::start();
    let (status, _) = post_json(&server, "/gate", &base()).await;
    assert_eq!(status, 200);
    let metrics = common::client()
        .get(server.url("/metrics"))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(
        metrics.lines().any(|l| l.contains("endpoint=\"gate\"")
            && l.contains("MERGE_OK")
            && l.ends_with(" 1")),
        "{metrics}"
    );
}

#[test]
fn the_cli_exit_codes_beyond_the_decision() {
    let dir = tempfile::tempdir().unwrap();
    let facts = dir.path().join("facts.json");
    std::fs::write(&facts, base().to_string()).unwrap();
    // A server that is not there: 69, never a go.
    let out = patchgate()
        .args(["gate", "--server", "http://127.0.0.1:9", "--facts"])
        .arg(&facts)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(69));
    assert!(out.stdout.is_empty());
    // Invalid facts: 65, each field named.
    let bad = dir.path().join("bad.json");
    std::fs::write(
        &bad,
        with(&[("fixture_suite", json!({"exit_code": "one"}))]).to_string(),
    )
    .unwrap();
    let out = patchgate()
        .args(["gate", "--facts"])
        .arg(&bad)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(65));
    assert!(String::from_utf8_lossy(&out.stderr).contains("/fixture_suite/exit_code"));
    // Neither --base nor --facts: a usage error.
    let out = patchgate().arg("gate").output().unwrap();
    assert_eq!(out.status.code(), Some(64));
    // Outside a git repository: a usage error, one line.
    let out = patchgate()
        .current_dir(dir.path())
        .args(["gate", "--base", "main"])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(64),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// CONTRACT.md 11.10: a re-proof that could not run is void, never "tried: none passed": its
/// mutant does not apply, its run timed out, or its receipt shows nothing ran. The step says
/// which and why; a re-proof that ran and caught its mutant is said as such.
#[test]
fn a_re_proof_that_did_not_run_is_reported_as_not_run() {
    use patchgate::core::decision::{Decision, Defaults};
    use patchgate::core::gate::GateDecision;
    let summary = |reproof: Value| -> String {
        let doc = with(&[("reproof", reproof)]);
        let request = GateDecision::parse(&serde_json::to_vec(&doc).unwrap()).unwrap();
        let decision = GateDecision::decide(&request, &Defaults::default());
        let answer = serde_json::to_value(decision.answer(&request, "d-1".into())).unwrap();
        let step = answer["steps"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["step"] == "reproof")
            .cloned()
            .unwrap_or_else(|| panic!("no reproof step: {answer}"));
        step["summary"].as_str().unwrap().to_owned()
    };
    let ran = json!({"executed": 1, "failed": 1, "skipped": 0});
    let nothing = json!({"executed": 0, "failed": 0, "skipped": 1});
    // (the re-proofs, what the summary must say, what it must not).
    let table: [(Value, &[&str], &[&str]); 5] = [
        (
            json!([{"property": "counter.monotonic", "applied": false, "note": "does not apply"}]),
            &[
                "no re-proof could run",
                "counter.monotonic",
                "does not apply",
            ],
            &["none passed", "tried with"],
        ),
        (
            json!([{"property": "counter.monotonic", "applied": true, "exit_code": null}]),
            &["no re-proof could run", "timed out"],
            &["none passed"],
        ),
        (
            json!([{"property": "counter.monotonic", "applied": true, "exit_code": 0, "receipt": nothing}]),
            &["no re-proof could run", "nothing ran"],
            &["none passed"],
        ),
        (
            json!([{"property": "counter.monotonic", "applied": true, "exit_code": 1, "receipt": ran}]),
            &["counter.monotonic caught its mutant"],
            &["not run", "none passed"],
        ),
        (
            json!([
                {"property": "counter.monotonic", "applied": false, "note": "does not apply"},
                {"property": "counter.monotonic", "applied": true, "exit_code": 1, "receipt": ran}
            ]),
            &["caught its mutant", "not run: counter.monotonic"],
            &["none passed"],
        ),
    ];
    for (reproof, says, never) in table {
        let said = summary(reproof.clone());
        for s in says {
            assert!(said.contains(s), "{reproof}: {said:?} does not say {s:?}");
        }
        for s in never {
            assert!(!said.contains(s), "{reproof}: {said:?} says {s:?}");
        }
    }
}

/// Issue 34: every step of the gate is a row of the core's plan. Each row below is written by
/// hand from CONTRACT.md section 8.2 and section 11 (the build first, once; the canary with the
/// first runs; the re-proof after t1 passed and before the suite; the suite; the re-run only
/// when the runner can leave tests out), and the plan must name that step and what it needs.
#[test]
fn the_core_plans_every_step() {
    use patchgate::core::decision::Decision;
    use patchgate::core::gate::{GateDecision, NextStep, next_step};
    let admitted = json!({"seal": A, "mutant": "m1", "base_runs": [0, 0], "mutant_runs": [1, 1]});
    let catalog = json!({"properties": [
        {"id": "counter.monotonic", "strength": "strong", "locality": ["store/counters"], "admitted": admitted},
        {"id": "resp.keys", "strength": "weak", "locality": ["api/serializers"]}
    ]});
    let all = json!({"build": true, "canary": true, "reprove": 1, "deselect": true, "seed": 7});
    let caught = json!({"property": "counter.monotonic", "applied": true, "exit_code": 1,
                        "receipt": {"executed": 1, "failed": 1, "skipped": 0}});
    let sang = json!({"exit_code": 1, "receipt": {"executed": 1, "failed": 1, "skipped": 0}});
    // (name, facts, next, canary, property ids, reprove, suite beside).
    type Row = (
        &'static str,
        Value,
        NextStep,
        bool,
        Vec<&'static str>,
        Option<&'static str>,
        bool,
    );
    let rows: Vec<Row> = vec![
        (
            "the build first, before any run",
            with(&[
                ("catalog", catalog.clone()),
                ("configured", all.clone()),
                ("property_runs", Value::Null),
                ("fixture_suite", Value::Null),
            ]),
            NextStep::Build,
            false,
            vec![],
            None,
            false,
        ),
        (
            "then the canary with the property runs, the suite beside them",
            with(&[
                ("catalog", catalog.clone()),
                ("configured", all.clone()),
                ("build", json!({"exit_code": 0})),
                ("property_runs", Value::Null),
                ("fixture_suite", Value::Null),
            ]),
            NextStep::Runs,
            true,
            vec!["counter.monotonic"],
            None,
            true,
        ),
        (
            "a build that does not compile decides: nothing more runs",
            with(&[
                ("catalog", catalog.clone()),
                ("configured", all.clone()),
                ("build", json!({"exit_code": 1})),
                ("property_runs", Value::Null),
                ("fixture_suite", Value::Null),
            ]),
            NextStep::Decide,
            false,
            vec![],
            None,
            false,
        ),
        (
            "t1 passed: an admitted property is re-proven before the suite",
            with(&[
                ("catalog", catalog.clone()),
                ("configured", all.clone()),
                ("build", json!({"exit_code": 0})),
                ("canary", sang.clone()),
                ("fixture_suite", Value::Null),
            ]),
            NextStep::Reproof,
            false,
            vec![],
            Some("counter.monotonic"),
            true,
        ),
        (
            "re-proven: the suite",
            with(&[
                ("catalog", catalog.clone()),
                ("configured", all.clone()),
                ("build", json!({"exit_code": 0})),
                ("canary", sang.clone()),
                ("reproof", json!([caught])),
                ("fixture_suite", Value::Null),
            ]),
            NextStep::Suite,
            false,
            vec![],
            None,
            false,
        ),
        (
            "a void re-proof and no other candidate: checker-unproven (11.10)",
            with(&[
                ("catalog", catalog.clone()),
                ("configured", all.clone()),
                ("build", json!({"exit_code": 0})),
                ("canary", sang.clone()),
                (
                    "reproof",
                    json!([{"property": "counter.monotonic", "applied": false}]),
                ),
                ("fixture_suite", Value::Null),
            ]),
            NextStep::Decide,
            false,
            vec![],
            None,
            false,
        ),
        (
            "the suite passed: decide",
            with(&[
                ("catalog", catalog.clone()),
                ("configured", all.clone()),
                ("build", json!({"exit_code": 0})),
                ("canary", sang.clone()),
                ("reproof", json!([caught])),
            ]),
            NextStep::Decide,
            false,
            vec![],
            None,
            false,
        ),
        (
            "a scope hit skips t1: the canary alone, then the suite",
            with(&[
                ("configured", all.clone()),
                ("build", json!({"exit_code": 0})),
                ("changed_files", json!(["tests/test_counter.py"])),
                ("property_runs", Value::Null),
                ("fixture_suite", Value::Null),
            ]),
            NextStep::Runs,
            true,
            vec![],
            None,
            true,
        ),
        (
            "facts that say nothing of the steps configured: no build, no canary",
            with(&[
                ("property_runs", Value::Null),
                ("fixture_suite", Value::Null),
            ]),
            NextStep::Runs,
            false,
            vec!["counter.monotonic"],
            None,
            true,
        ),
        (
            "only frozen tests failed: the re-run",
            with(&[
                ("ledger", json!([open_test("t::frozen", &["legacy"])])),
                (
                    "fixture_suite",
                    json!({"exit_code": 1, "failed_tests": ["t::frozen"]}),
                ),
            ]),
            NextStep::Rerun,
            false,
            vec![],
            None,
            false,
        ),
        // CONTRACT.md section 15.2 with 11.8: an unread file waits for the build, which
        // tells a file that does not build (BLOCK) from one that cannot be read (ESCALATE).
        (
            "an unread file: the build first",
            with(&[
                ("catalog", catalog.clone()),
                ("configured", all.clone()),
                (
                    "unread",
                    json!([{"file": "store/counters/mod.rs", "reason": "unparsed"}]),
                ),
                ("property_runs", Value::Null),
                ("fixture_suite", Value::Null),
            ]),
            NextStep::Build,
            false,
            vec![],
            None,
            false,
        ),
        (
            "an unread file that built: decide, nothing else runs",
            with(&[
                ("catalog", catalog.clone()),
                ("configured", all.clone()),
                (
                    "unread",
                    json!([{"file": "store/counters/mod.rs", "reason": "unparsed"}]),
                ),
                ("build", json!({"exit_code": 0})),
                ("property_runs", Value::Null),
                ("fixture_suite", Value::Null),
            ]),
            NextStep::Decide,
            false,
            vec![],
            None,
            false,
        ),
        (
            "an unread file and no build configured: decide",
            with(&[
                ("catalog", catalog.clone()),
                ("configured", json!({"canary": true, "reprove": 1})),
                (
                    "unread",
                    json!([{"file": "store/counters/mod.rs", "reason": "symbolic-link"}]),
                ),
                ("property_runs", Value::Null),
                ("fixture_suite", Value::Null),
            ]),
            NextStep::Decide,
            false,
            vec![],
            None,
            false,
        ),
        (
            "only frozen tests failed, and the runner cannot leave tests out: decide",
            with(&[
                ("ledger", json!([open_test("t::frozen", &["legacy"])])),
                ("configured", json!({"deselect": false})),
                (
                    "fixture_suite",
                    json!({"exit_code": 1, "failed_tests": ["t::frozen"]}),
                ),
            ]),
            NextStep::Decide,
            false,
            vec![],
            None,
            false,
        ),
    ];
    for (name, doc, next, canary, ids, reprove, beside) in rows {
        let request = GateDecision::parse(&serde_json::to_vec(&doc).unwrap())
            .unwrap_or_else(|p| panic!("{name}: {p:?}"));
        let plan = next_step(&request, 5);
        assert_eq!(plan.next, next, "{name}: {plan:?}");
        assert_eq!(plan.canary, canary, "{name}: canary");
        assert_eq!(plan.property_ids, ids, "{name}: property ids");
        assert_eq!(plan.reprove.as_deref(), reprove, "{name}: reprove");
        assert_eq!(plan.suite_beside, beside, "{name}: suite beside");
        if name.contains("cannot leave tests out") {
            assert!(
                plan.say.iter().any(|s| s.contains("no `[suite] deselect`")),
                "{name}: {:?}",
                plan.say
            );
        }
        if next == NextStep::Rerun {
            assert_eq!(plan.deselect, ["t::frozen"], "{name}");
        }
    }
}

/// Issue 49 (CONTRACT.md section 15.3): when the base's suite runs the property cases
/// (`properties_in_suite`), the suite is their run 1: it starts with the property runs
/// (`suite_first`, beside them), and nothing is left out of it; once it and the property runs
/// are in, the re-proof follows, and no second suite. Otherwise the suite starts beside the
/// runs as before and runs after them. Written by hand from section 15.3.
#[test]
fn the_suite_is_the_first_run_of_the_properties_it_holds() {
    use patchgate::core::decision::Decision;
    use patchgate::core::gate::{GateDecision, NextStep, next_step};
    let admitted = json!({"seal": A, "mutant": "m1", "base_runs": [0, 0], "mutant_runs": [1, 1]});
    let catalog = json!({"properties": [
        {"id": "counter.monotonic", "strength": "strong", "locality": ["store/counters"], "admitted": admitted},
    ]});
    let configured = |in_suite: bool| {
        json!({"build": true, "canary": true, "reprove": 1, "deselect": true, "seed": 7,
               "properties_in_suite": in_suite})
    };
    let sang = json!({"exit_code": 1, "receipt": {"executed": 1, "failed": 1, "skipped": 0}});
    let ran = json!({"executed": 1, "failed": 0, "skipped": 0});
    // Run 1 the suite's (its cases passed there), run 2 the property command's.
    let runs = json!({"counter.monotonic": {"runs": [0, 0]}});
    let receipts = json!({"counter.monotonic": [ran, ran]});
    // (name, facts, next, suite first, suite beside, reproof ahead).
    type Row = (
        &'static str,
        Value,
        NextStep,
        bool,
        bool,
        Option<&'static str>,
    );
    let rows: Vec<Row> = vec![
        (
            "the suite runs the property cases: it is their run 1, started with the others",
            with(&[
                ("catalog", catalog.clone()),
                ("configured", configured(true)),
                ("build", json!({"exit_code": 0})),
                ("property_runs", Value::Null),
                ("fixture_suite", Value::Null),
            ]),
            NextStep::Runs,
            true,
            true,
            Some("counter.monotonic"),
        ),
        (
            "the suite does not run them: it starts beside the runs, and is no run of theirs",
            with(&[
                ("catalog", catalog.clone()),
                ("configured", configured(false)),
                ("build", json!({"exit_code": 0})),
                ("property_runs", Value::Null),
                ("fixture_suite", Value::Null),
            ]),
            NextStep::Runs,
            false,
            true,
            Some("counter.monotonic"),
        ),
        (
            "the suite and the property run passed: the re-proof, and no second suite",
            with(&[
                ("catalog", catalog.clone()),
                ("configured", configured(true)),
                ("build", json!({"exit_code": 0})),
                ("canary", sang.clone()),
                ("property_runs", runs.clone()),
                ("property_receipts", receipts.clone()),
                ("batched", json!(true)),
                ("suite_runs", json!(["counter.monotonic"])),
                ("fixture_suite", json!({"exit_code": 0, "failed_tests": []})),
            ]),
            NextStep::Reproof,
            false,
            false,
            None,
        ),
        (
            "re-proven: decide",
            with(&[
                ("catalog", catalog.clone()),
                ("configured", configured(true)),
                ("build", json!({"exit_code": 0})),
                ("canary", sang.clone()),
                ("property_runs", runs.clone()),
                ("property_receipts", receipts.clone()),
                ("batched", json!(true)),
                ("suite_runs", json!(["counter.monotonic"])),
                ("fixture_suite", json!({"exit_code": 0, "failed_tests": []})),
                (
                    "reproof",
                    json!([{"property": "counter.monotonic", "applied": true, "turned": true,
                            "exit_code": 1, "receipt": {"executed": 1, "failed": 1, "skipped": 0}}]),
                ),
            ]),
            NextStep::Decide,
            false,
            false,
            None,
        ),
        (
            "nothing admitted: no re-proof ahead",
            with(&[
                (
                    "catalog",
                    json!({"properties": [
                        {"id": "counter.monotonic", "strength": "strong", "locality": ["store/counters"]},
                    ]}),
                ),
                ("configured", configured(false)),
                ("build", json!({"exit_code": 0})),
                ("property_runs", Value::Null),
                ("fixture_suite", Value::Null),
            ]),
            NextStep::Runs,
            false,
            true,
            None,
        ),
    ];
    for (name, doc, next, first, beside, ahead) in rows {
        let request = GateDecision::parse(&serde_json::to_vec(&doc).unwrap())
            .unwrap_or_else(|p| panic!("{name}: {p:?}"));
        let plan = next_step(&request, 5);
        assert_eq!(plan.next, next, "{name}: {plan:?}");
        assert_eq!(plan.suite_first, first, "{name}: suite first");
        assert_eq!(plan.suite_beside, beside, "{name}: suite beside");
        assert_eq!(
            plan.reproof_ahead.as_deref(),
            ahead,
            "{name}: reproof ahead"
        );
        if next == NextStep::Decide {
            assert_eq!(plan.disposition.as_str(), "MERGE_OK", "{name}");
            let t1 = plan
                .steps
                .iter()
                .map(|s| serde_json::to_value(s).unwrap())
                .find(|s| s["step"] == "properties")
                .expect("t1");
            assert!(
                t1["summary"]
                    .as_str()
                    .unwrap()
                    .contains("run 1 of 1 property is the suite's own run of its cases"),
                "{name}: {t1}"
            );
        }
    }
}

/// Issue 51: the plan's answer is a list of work items, each with the tree it runs on, the
/// items it waits for and whether it may be started ahead and dropped; the runner reads
/// nothing else to know what to run. Written by hand: what each step runs (CONTRACT.md
/// section 8.2), what it needs (every run of the code after the build; a replay after its
/// property's runs; the re-run after the suite), and what may start ahead (the suite beside
/// the runs and the re-proof; the re-proof the same draw names once the runs pass).
#[test]
fn the_plan_is_a_list_of_work_items() {
    use patchgate::core::decision::Decision;
    use patchgate::core::gate::{GateDecision, next_step};
    let admitted = json!({"seal": A, "mutant": "m1", "base_runs": [0, 0], "mutant_runs": [1, 1]});
    let catalog = json!({"properties": [
        {"id": "counter.monotonic", "strength": "strong", "locality": ["store/counters"], "admitted": admitted},
    ]});
    let configured = |in_suite: bool| {
        json!({"build": true, "canary": true, "reprove": 1, "deselect": true, "seed": 7,
               "properties_in_suite": in_suite})
    };
    let sang = json!({"exit_code": 1, "receipt": {"executed": 1, "failed": 1, "skipped": 0}});
    let caught = json!({"property": "counter.monotonic", "applied": true, "exit_code": 1,
                        "receipt": {"executed": 1, "failed": 1, "skipped": 0}});
    // Each item said as `ID on TREE [from N] [holds ..] [without ..] [ahead] [<- NEEDS]`.
    let rows: Vec<(&str, Value, Vec<&str>)> = vec![
        (
            "the build first",
            with(&[
                ("catalog", catalog.clone()),
                ("configured", configured(false)),
                ("property_runs", Value::Null),
                ("fixture_suite", Value::Null),
            ]),
            vec!["build on judged"],
        ),
        (
            "the canary and the property runs; the suite and the re-proof may start ahead",
            with(&[
                ("catalog", catalog.clone()),
                ("configured", configured(false)),
                ("build", json!({"exit_code": 0})),
                ("property_runs", Value::Null),
                ("fixture_suite", Value::Null),
            ]),
            vec![
                "canary on judged <- build",
                "runs:counter.monotonic on judged from 1 <- build",
                "suite on judged ahead <- build",
                "reproof:counter.monotonic on mutant ahead <- build",
            ],
        ),
        (
            "the suite holds the property's run 1: it runs with them, not ahead",
            with(&[
                ("catalog", catalog.clone()),
                ("configured", configured(true)),
                ("build", json!({"exit_code": 0})),
                ("property_runs", Value::Null),
                ("fixture_suite", Value::Null),
            ]),
            vec![
                "canary on judged <- build",
                "suite on judged holds counter.monotonic <- build",
                "runs:counter.monotonic on judged from 2 <- build",
                "reproof:counter.monotonic on mutant ahead <- build",
            ],
        ),
        (
            "t1 passed: the re-proof, the suite still ahead",
            with(&[
                ("catalog", catalog.clone()),
                ("configured", configured(false)),
                ("build", json!({"exit_code": 0})),
                ("canary", sang.clone()),
                ("fixture_suite", Value::Null),
            ]),
            vec![
                "reproof:counter.monotonic on mutant <- build",
                "suite on judged ahead <- build",
            ],
        ),
        (
            "re-proven: the suite",
            with(&[
                ("catalog", catalog.clone()),
                ("configured", configured(false)),
                ("build", json!({"exit_code": 0})),
                ("canary", sang.clone()),
                ("reproof", json!([caught])),
                ("fixture_suite", Value::Null),
            ]),
            vec!["suite on judged <- build"],
        ),
        (
            "runs that split: the replay, where the failing run ran, after those runs",
            with(&[
                ("catalog", catalog.clone()),
                ("configured", configured(false)),
                ("build", json!({"exit_code": 0})),
                ("canary", sang.clone()),
                (
                    "property_runs",
                    json!({"counter.monotonic": {"runs": [1, 0]}}),
                ),
                ("fixture_suite", Value::Null),
            ]),
            vec!["replay:counter.monotonic on where_it_failed <- runs:counter.monotonic"],
        ),
        (
            "only frozen tests failed: the re-run, where the suite ran, after it",
            with(&[
                ("ledger", json!([open_test("t::frozen", &["legacy"])])),
                (
                    "fixture_suite",
                    json!({"exit_code": 1, "failed_tests": ["t::frozen"]}),
                ),
            ]),
            vec!["rerun on suite_room without t::frozen <- suite"],
        ),
        (
            "the suite ran and the patch adds tests: they run in a room of their own, after it",
            with(&[
                ("added_tests", json!(["tests/test_added.py"])),
                ("fixture_suite", json!({"exit_code": 0, "failed_tests": []})),
            ]),
            vec!["added_tests on with_added_tests <- suite"],
        ),
        // Issue 52: the pending patch mutants, each on its own mutated copy, after the suite,
        // once t1 and the suite passed; never when the suite failed (nothing they say could
        // change a BLOCK).
        (
            "the suite passed and patch mutants are pending: each runs, after it",
            with(&[(
                "observe",
                json!({"changes": "required", "branches": "listed", "read": true, "line_count": 2, "run_count": 2,
                       "mutants": [
                           {"file": "store/counters/mod.rs", "line": 3, "operator": "condition-true", "code": "if True:", "checks": ["t::a"], "state": "killed", "killed_by": ["t::a"]},
                           {"file": "store/counters/mod.rs", "line": 4, "operator": "swap-comparison", "code": "x <= 1", "checks": ["t::a"], "state": "pending"},
                           {"file": "store/counters/mod.rs", "line": 5, "operator": "return-constant", "code": "return 0", "checks": ["t::b"], "state": "pending"}]}),
            )]),
            vec![
                "patch_mutant:1 on patch_mutant <- suite",
                "patch_mutant:2 on patch_mutant <- suite",
            ],
        ),
        (
            "the suite failed: no patch mutant runs",
            with(&[
                (
                    "observe",
                    json!({"changes": "required", "branches": "listed", "read": true, "line_count": 1, "run_count": 1,
                           "mutants": [{"file": "store/counters/mod.rs", "line": 4, "operator": "swap-comparison", "code": "x <= 1", "checks": ["t::a"], "state": "pending"}]}),
                ),
                (
                    "fixture_suite",
                    json!({"exit_code": 1, "failed_tests": ["t::a"]}),
                ),
            ]),
            vec![],
        ),
        (
            "a build that does not compile decides: nothing to run",
            with(&[
                ("catalog", catalog.clone()),
                ("configured", configured(false)),
                ("build", json!({"exit_code": 1})),
                ("property_runs", Value::Null),
                ("fixture_suite", Value::Null),
            ]),
            vec![],
        ),
    ];
    for (name, doc, expected) in rows {
        let request = GateDecision::parse(&serde_json::to_vec(&doc).unwrap())
            .unwrap_or_else(|p| panic!("{name}: {p:?}"));
        let plan = next_step(&request, 5);
        let said: Vec<String> = plan
            .work
            .iter()
            .map(|w| {
                let mut s = format!("{} on {}", w.id, <&str>::from(w.tree));
                if let Some(n) = w.from_run {
                    s.push_str(&format!(" from {n}"));
                }
                if !w.holds.is_empty() {
                    s.push_str(&format!(" holds {}", w.holds.join(", ")));
                }
                if !w.deselect.is_empty() {
                    s.push_str(&format!(" without {}", w.deselect.join(", ")));
                }
                if w.speculative {
                    s.push_str(" ahead");
                }
                if !w.needs.is_empty() {
                    s.push_str(&format!(" <- {}", w.needs.join(", ")));
                }
                s
            })
            .collect();
        assert_eq!(said, expected, "{name}: {plan:?}");
        // What the step's other fields say is the list, summarised.
        let runs: Vec<&str> = plan
            .work
            .iter()
            .filter(|w| !w.speculative && w.id.starts_with("runs:"))
            .filter_map(|w| w.property.as_deref())
            .collect();
        assert_eq!(plan.property_ids, runs, "{name}");
        assert_eq!(
            plan.canary,
            plan.work.iter().any(|w| w.id == "canary"),
            "{name}"
        );
        assert_eq!(
            plan.suite_beside,
            plan.work.iter().any(|w| w.id == "suite" && w.speculative) || plan.suite_first,
            "{name}"
        );
    }
}

/// Issue 34: the facts the runner writes are the facts the strict reader reads: a document
/// built from the typed facts (as `--facts-out` writes it) parses, field for field, to what
/// the same facts written by hand parse to.
#[test]
fn the_typed_facts_read_back_as_written() {
    use patchgate::core::decision::Decision;
    use patchgate::core::gate::{
        BuildFacts, CanaryFacts, CanaryPart, Configured, Facts, GateDecision, Judged, Phase,
        PropertyRuns, SealFacts, SuiteFacts,
    };
    let mut facts = Facts {
        patch_id: Some("pr-7".into()),
        changed_files: vec!["store/counters/mod.rs".into()],
        guarded: vec!["patchgate.toml".into()],
        seal: SealFacts {
            actual: A.into(),
            expected: A.into(),
        },
        catalog: {
            use patchgate::core::catalog::{Catalog, CatalogKind, parse_catalog};
            let mut e = patchgate::core::fields::Errors::default();
            let catch = patchgate::core::runs::CatchCodes::default();
            let (properties, _) =
                parse_catalog(&base()["catalog"], CatalogKind::Gate, Some(&catch), &mut e);
            assert!(e.is_empty(), "{e:?}");
            Catalog { properties }
        },
        ledger: Some(Vec::new()),
        debt_cap: Some(5),
        judged: Some(Judged {
            base: "a".repeat(40),
            head: "b".repeat(40),
            tree: "c".repeat(40),
        }),
        build: Some(BuildFacts {
            exit_code: Some(0),
            catch_exit_codes: None,
            tail: "ok".into(),
        }),
        canary: Some(CanaryFacts {
            exit_code: Some(1),
            catch_exit_codes: None,
            receipt: None,
            in_runs: vec![CanaryPart {
                exit_code: Some(1),
                receipt: None,
            }],
            twin_of: Some("counter.monotonic".into()),
        }),
        suite_runs: vec!["counter.monotonic".into()],
        fixture_suite: Some(SuiteFacts {
            exit_code: Some(0),
            failed_tests: Some(vec![]),
            ..SuiteFacts::default()
        }),
        configured: Some(Configured {
            build: true,
            canary: true,
            reprove: 2,
            deselect: false,
            properties_in_suite: true,
            seed: 9,
            mutant_files: [(
                "counter.monotonic".to_owned(),
                vec!["store/counters/mod.rs".to_owned()],
            )]
            .into_iter()
            .collect(),
        }),
        ..Facts::default()
    };
    facts.property_runs = Some(
        [(
            "counter.monotonic".to_owned(),
            PropertyRuns {
                runs: vec![Some(0), Some(0)],
            },
        )]
        .into(),
    );
    facts.timings_ms.add(Phase::Build, 0.25);
    let by_hand = json!({
        "patch_id": "pr-7", "changed_files": ["store/counters/mod.rs"], "guarded": ["patchgate.toml"],
        "seal": {"actual": A, "expected": A}, "catalog": base()["catalog"], "ledger": [], "debt_cap": 5,
        "judged": {"base": "a".repeat(40), "head": "b".repeat(40), "tree": "c".repeat(40)},
        "build": {"exit_code": 0, "tail": "ok"},
        "canary": {"exit_code": 1, "receipt": null, "in_runs": [{"exit_code": 1, "receipt": null}],
                   "twin_of": "counter.monotonic"},
        "suite_runs": ["counter.monotonic"],
        "fixture_suite": {"exit_code": 0, "failed_tests": []},
        "configured": {"build": true, "canary": true, "reprove": 2, "deselect": false,
                       "properties_in_suite": true, "seed": 9,
                       "mutant_files": {"counter.monotonic": ["store/counters/mod.rs"]}},
        "property_runs": {"counter.monotonic": {"runs": [0, 0]}},
        "timings_ms": {"build": 250},
    });
    let parse = |v: &Value| GateDecision::parse(&serde_json::to_vec(v).unwrap()).unwrap();
    assert_eq!(parse(&facts.to_value()), parse(&by_hand));
}

/// Issue 35's report blemishes: "1 other properties", and a scope step that says the property
/// tier runs above a properties step that says it does not apply (a patch only in inert paths).
#[test]
fn the_report_says_what_happened_in_plain_words() {
    use patchgate::core::decision::{Decision, Defaults};
    use patchgate::core::gate::{GateDecision, markdown};
    let answer_of = |doc: Value| {
        let request = GateDecision::parse(&serde_json::to_vec(&doc).unwrap()).unwrap();
        GateDecision::decide(&request, &Defaults::default()).answer(&request, "d-1".into())
    };
    // One property of two is not in locality.
    let report = markdown(&answer_of(base()));
    assert!(
        report.contains("1 other property is not in locality."),
        "{report}"
    );
    assert!(!report.contains("1 other properties"), "{report}");
    // Only inert files: the scope step does not say the property tier runs.
    let inert = answer_of(with(&[
        ("changed_files", json!(["docs/readme.md"])),
        ("inert", json!(["docs"])),
        ("property_runs", json!({})),
    ]));
    let steps = serde_json::to_value(&inert.steps).unwrap();
    let scope = steps
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["step"] == "scope")
        .unwrap();
    assert!(
        !scope["summary"]
            .as_str()
            .unwrap()
            .contains("the property tier runs"),
        "{scope}"
    );
    let t1 = steps
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["step"] == "properties")
        .unwrap();
    assert!(
        t1["summary"].as_str().unwrap().contains("does not apply"),
        "{t1}"
    );
}

/// The re-proof tries stop where the facts' cap does (100 entries): a catalog of more admitted
/// properties whose mutants all fail to apply (an honest patch that rewrites their lines) once
/// made the gate ask for a 101st try, and then refuse its own facts (65).
#[test]
fn the_plan_never_asks_for_more_re_proofs_than_the_facts_hold() {
    use patchgate::core::decision::Decision;
    use patchgate::core::gate::{GateDecision, MAX_REPROOFS, NextStep, next_step};
    let admitted = json!({"seal": A, "mutant": "m1", "base_runs": [0, 0], "mutant_runs": [1, 1]});
    let ids: Vec<String> = (0..=MAX_REPROOFS).map(|i| format!("p{i:03}")).collect();
    let catalog = json!({"properties": ids.iter().map(|id| json!({
        "id": id, "strength": "strong", "locality": ["store/counters"], "admitted": admitted
    })).collect::<Vec<_>>()});
    let runs: serde_json::Map<String, Value> = ids
        .iter()
        .map(|id| (id.clone(), json!({"runs": [0, 0]})))
        .collect();
    let tried = |n: usize| -> Value {
        json!(
            ids[..n]
                .iter()
                .map(|id| json!({"property": id, "applied": false}))
                .collect::<Vec<_>>()
        )
    };
    for (n, next) in [
        (MAX_REPROOFS - 1, NextStep::Reproof),
        // Every one void and none left to try: checker-unproven decides (section 11.10).
        (MAX_REPROOFS, NextStep::Decide),
    ] {
        let doc = with(&[
            ("catalog", catalog.clone()),
            ("property_runs", Value::Object(runs.clone())),
            ("configured", json!({"reprove": 1})),
            ("reproof", tried(n)),
            ("fixture_suite", Value::Null),
        ]);
        let request = GateDecision::parse(&serde_json::to_vec(&doc).unwrap()).unwrap();
        assert_eq!(next_step(&request, 5).next, next, "{n} tried");
    }
}

/// Issue 35: every escalation carries a machine-readable `cause` beside its `reason`, written
/// here by hand for each escalating row of the table above; no other answer carries one.
#[test]
fn every_escalation_names_its_cause() {
    use patchgate::core::decision::{Decision, Defaults};
    use patchgate::core::gate::GateDecision;
    let want: std::collections::HashMap<&str, &str> = [
        ("a merge conflict beats every other rule", "merge-conflict"),
        ("a suspicious line in code escalates", "test-aware-code"),
        (
            "a reading hit whose runs are split: the reading's ESCALATE stands (15.5)",
            "test-aware-code",
        ),
        ("an unread code file escalates", "unread-code"),
        ("unread ranks before a probe", "unread-code"),
        ("an unread file that builds still escalates", "unread-code"),
        (
            "an equality overload in code escalates (section 14.2)",
            "equality-overload",
        ),
        (
            "a pinned test input in code escalates (section 14.2)",
            "test-input-in-code",
        ),
        (
            "the first class decides, whatever the facts' order: probe before overload before special case",
            "test-aware-code",
        ),
        ("an overload before a special case", "equality-overload"),
        ("seal mismatch beats debt and guard", "seal-mismatch"),
        ("a guarded file", "guarded-input-edited"),
        ("a file under a guarded directory", "guarded-input-edited"),
        ("a property's source", "guarded-input-edited"),
        ("a compiled file by its name", "binary-added"),
        ("a shared library", "binary-added"),
        ("a binary the runner saw", "binary-added"),
        (
            "a guarded binary is a guard hit first",
            "guarded-input-edited",
        ),
        ("a scope hit: t1 skipped, unknown", "scope-hit"),
        ("a scope hit and no suite: missing", "scope-hit"),
        ("t1 passed and no suite: missing", "gate-missing"),
        ("a report that disagrees with itself", "report-disagrees"),
        ("a killed suite", "broken-harness"),
        ("pytest exit 5 is not a catch", "broken-harness"),
        ("cargo's 101 is not a catch by default", "broken-harness"),
        (
            "exit 0 with failures listed: the evidence disagrees",
            "exit-disagrees",
        ),
        (
            "no result for a voting property: missing, and t2 skipped",
            "missing-results",
        ),
        ("split exits", "flaky-property"),
        ("a harness error", "broken-harness"),
        ("killed runs", "broken-harness"),
        ("an empty strong quorum", "unobserved-files"),
        (
            "a patch only in inert paths: no suite is missing",
            "gate-missing",
        ),
        (
            "one changed file outside the inert paths: the quorum is empty",
            "unobserved-files",
        ),
        (
            "an inert path a property observes: the properties still run",
            "missing-results",
        ),
        (
            "a frozen property is excluded, never passed",
            "empty-quorum",
        ),
        ("a frozen test covers the diff", "frozen-covers-patch"),
        ("a run changed a tracked file", "modified-during-run"),
        (
            "a run created a file outside the scratch directories, tracking nothing",
            "modified-during-run",
        ),
        (
            "a run changed the fixtures' seal only",
            "modified-during-run",
        ),
        (
            "integrity before the build's verdict",
            "modified-during-run",
        ),
        ("the build is killed", "build-broken"),
        ("the build exits with no catch", "build-broken"),
        ("the canary passes", "checker-neutered"),
        ("the canary is skipped", "checker-neutered"),
        ("the canary exits 1 with no report", "checker-neutered"),
        (
            "the canary exits with a code that is no catch",
            "checker-neutered",
        ),
        (
            "the canary rode in both runs and passed in the second: neutered",
            "checker-neutered",
        ),
        (
            "the canary's case missing from a batched run: neutered",
            "checker-neutered",
        ),
        (
            "a batched catch no case explains, the canary not riding: no pass",
            "exit-disagrees",
        ),
        (
            "a re-proof that passes with its mutant applied",
            "checker-cannot-fail",
        ),
        (
            "exit 0 without a report is a run nobody vouches for",
            "no-receipt",
        ),
        ("exit 0 with nothing run", "nothing-ran"),
        (
            "exit 0 with the property skipped (the engine switched off)",
            "skipped-tests",
        ),
        (
            "a catch that lists no failure (a compile error, a crash) is no catch",
            "nothing-ran",
        ),
        ("the suite exits 0 without a receipt", "no-receipt"),
        ("the suite exits 0 having run nothing", "nothing-ran"),
        (
            "the suite's receipt disagrees with itself",
            "report-disagrees",
        ),
        ("a suite catch without a failure listed", "exit-disagrees"),
        ("a census test vanished", "vanished-tests"),
        (
            "a re-proof whose mutant does not apply proves nothing: none ran (11.10)",
            "checker-unproven",
        ),
        (
            "a re-proof's exit 0 without a receipt is no pass: none ran (11.10)",
            "checker-unproven",
        ),
        ("observe: no check runs any changed line", "unobserved-change"),
        ("observe: every patch mutant survives", "unobserved-change"),
        (
            "observe: an added branch no check takes, its condition removable unnoticed",
            "unobserved-branch",
        ),
        (
            "observe: a patch mutant never run is no kill",
            "unobserved-change",
        ),
        ("observe: the observed run's report was not read", "unobserved-change"),
        (
            "observe: an added branch no check takes, required",
            "unobserved-branch",
        ),
        (
            "against the base: a neighbour differs, no recorded call",
            "unobserved-difference",
        ),
        (
            "against the base: the recorded call differs, none of its neighbours",
            "special-case",
        ),
        (
            "against the base: recorded calls differ, no added test fails on the base",
            "unasserted-difference",
        ),
        (
            "against the base: recorded calls differ, an added test fails on the base, not the one that called",
            "unasserted-difference",
        ),
    ]
    .into_iter()
    .collect();
    let mut seen = 0;
    for row in rows() {
        let body = serde_json::to_vec(&row.1).unwrap();
        let request = GateDecision::parse(&body).unwrap();
        let decision = GateDecision::decide(&request, &Defaults::default());
        let answer = serde_json::to_value(decision.answer(&request, "d-1".into())).unwrap();
        if row.3 == "ESCALATE" {
            let cause = want
                .get(row.0)
                .unwrap_or_else(|| panic!("{}: no cause written for this row", row.0));
            assert_eq!(answer["cause"], *cause, "{}", row.0);
            let markdown = patchgate::core::gate::markdown(&decision.answer(&request, "d".into()));
            assert!(
                markdown.contains(&format!("(cause `{cause}`)")) || *cause == "unobserved-files",
                "{}: {markdown}",
                row.0
            );
            seen += 1;
        } else if row.0
            == "behavior: both plain replays answer otherwise than under the tests, required"
        {
            // CONTRACT.md 16.2: the one BLOCK with a cause.
            assert_eq!(answer["cause"], "behaves-under-test", "{}", row.0);
        } else {
            assert!(answer.get("cause").is_none(), "{}: {answer}", row.0);
        }
    }
    assert_eq!(seen, want.len(), "every cause written is a row's");
}

/// CONTRACT.md 11.10, the re-proof must happen, written by hand: re-proofs asked of which none
/// could run escalate `checker-unproven` once no candidate is left (never while one is); the
/// candidates whose mutant touches a changed file are tried first whatever the draw; and a
/// property whose mutant does not apply to this tree votes as an unadmitted one would (weak
/// under `require_admission`, listed as unproven).
#[test]
fn a_re_proof_must_happen() {
    use patchgate::core::decision::{Decision, Defaults};
    use patchgate::core::gate::{GateDecision, NextStep, next_step};
    let admitted = json!({"seal": A, "mutant": "m1", "base_runs": [0, 0], "mutant_runs": [1, 1]});
    let strong = |id: &str| json!({"id": id, "strength": "strong", "locality": ["store/counters"], "admitted": admitted});
    let one = json!({"properties": [strong("counter.monotonic")]});
    let two = json!({"properties": [strong("counter.monotonic"), strong("counter.total")]});
    let runs2 = json!({"counter.monotonic": {"runs": [0, 0]}, "counter.total": {"runs": [0, 0]}});
    let void =
        json!({"property": "counter.monotonic", "applied": false, "note": "patch does not apply"});
    let caught = |id: &str| {
        json!({"property": id, "applied": true, "exit_code": 1,
               "receipt": {"executed": 1, "failed": 1, "skipped": 0}})
    };
    let configured = |seed: u64, files: Value| json!({"build": false, "canary": false, "reprove": 1, "seed": seed, "mutant_files": files});
    let decide = |doc: &Value| {
        let request = GateDecision::parse(&serde_json::to_vec(doc).unwrap()).unwrap();
        let decision = GateDecision::decide(&request, &Defaults::default());
        (
            serde_json::to_value(decision.answer(&request, "d".into())).unwrap(),
            next_step(&request, Defaults::default().debt_cap),
        )
    };

    // One candidate, its mutant does not apply: nothing left to try, checker-unproven.
    let (answer, plan) = decide(&with(&[
        ("catalog", one.clone()),
        ("configured", configured(7, json!({}))),
        ("reproof", json!([void])),
    ]));
    assert_eq!(plan.next, NextStep::Decide);
    assert_eq!(
        (&answer["disposition"], &answer["reason"], &answer["cause"]),
        (
            &json!("ESCALATE"),
            &json!("checker-unproven"),
            &json!("checker-unproven")
        ),
        "{answer}"
    );
    assert_eq!(answer["exit_code"], 2);

    // Two candidates, the first void: the other is tried, and nothing is decided yet.
    let (answer, plan) = decide(&with(&[
        ("catalog", two.clone()),
        ("property_runs", runs2.clone()),
        ("configured", configured(7, json!({}))),
        ("reproof", json!([void])),
        ("fixture_suite", Value::Null),
    ]));
    assert_eq!(plan.next, NextStep::Reproof, "{answer}");
    assert_eq!(plan.reprove.as_deref(), Some("counter.total"));
    assert_ne!(answer["reason"], "checker-unproven");

    // ... and once it caught its mutant, the gate goes on; the void one is said not run.
    let (answer, plan) = decide(&with(&[
        ("catalog", two.clone()),
        ("property_runs", runs2.clone()),
        ("configured", configured(7, json!({}))),
        ("reproof", json!([void, caught("counter.total")])),
    ]));
    assert_eq!(plan.next, NextStep::Decide);
    assert_eq!(answer["disposition"], "MERGE_OK", "{answer}");

    // The mutant that touches a changed file first, whatever the draw.
    for seed in 0..16 {
        for (touching, other) in [
            ("counter.total", "counter.monotonic"),
            ("counter.monotonic", "counter.total"),
        ] {
            let (_, plan) = decide(&with(&[
                ("catalog", two.clone()),
                ("property_runs", runs2.clone()),
                (
                    "configured",
                    configured(
                        seed,
                        json!({touching: ["store/counters/mod.rs"], other: ["store/other.rs"]}),
                    ),
                ),
                ("fixture_suite", Value::Null),
            ]));
            assert_eq!(plan.next, NextStep::Reproof, "seed {seed}");
            assert_eq!(plan.reprove.as_deref(), Some(touching), "seed {seed}");
        }
    }

    // Under require_admission, the property whose mutant did not apply is unproven for this
    // patch: weak, listed; the other one, re-proven, fills the quorum.
    let (answer, _) = decide(&with(&[
        ("catalog", two.clone()),
        ("property_runs", runs2.clone()),
        ("require_admission", json!(true)),
        ("configured", configured(7, json!({}))),
        ("reproof", json!([void, caught("counter.total")])),
    ]));
    let t1 = answer["steps"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["step"] == "properties")
        .unwrap();
    let unproven: Vec<&str> = t1["properties"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| p["unproven"] == true)
        .map(|p| p["id"].as_str().unwrap())
        .collect();
    assert_eq!(unproven, ["counter.monotonic"], "{t1}");
    assert_eq!(answer["disposition"], "MERGE_OK", "{answer}");
}

/// Issue 50 (CONTRACT.md section 15.5): a property whose runs split (a catch its receipt
/// vouches for, and a pass) is replayed before it is called a flake; a failure that reproduces
/// is `fail` (BLOCK), one that does not leaves the split (`flaky-property`), and a replay that
/// proves nothing proves no failure. Written by hand from section 15.5.
#[test]
fn a_split_is_replayed_before_it_is_called_a_flake() {
    use patchgate::core::decision::Decision;
    use patchgate::core::gate::{GateDecision, NextStep, next_step};
    let failed = json!({"executed": 1, "failed": 1, "skipped": 0});
    let passed = json!({"executed": 1, "failed": 0, "skipped": 0});
    let nothing = json!({"executed": 0, "failed": 0, "skipped": 0});
    let split = |receipts: bool| {
        let mut doc = with(&[
            (
                "property_runs",
                json!({"counter.monotonic": {"runs": [1, 0]}}),
            ),
            ("fixture_suite", Value::Null),
        ]);
        if receipts {
            doc["property_receipts"] = json!({"counter.monotonic": [failed, passed]});
        }
        doc
    };
    let replayed = |receipts: bool, replay: Value| {
        let mut doc = split(receipts);
        doc["replays"] = json!([replay]);
        doc
    };
    // (name, facts, next, replay asked, disposition, reason, cause).
    type Row = (
        &'static str,
        Value,
        NextStep,
        Vec<&'static str>,
        &'static str,
        &'static str,
        Option<&'static str>,
    );
    let rows: Vec<Row> = vec![
        (
            "a split with receipts: replayed before anything is decided",
            split(true),
            NextStep::Replay,
            vec!["counter.monotonic"],
            "ESCALATE",
            "inadmissible-evidence",
            Some("flaky-property"),
        ),
        (
            "a split read from exit codes alone (receipts off): replayed too",
            split(false),
            NextStep::Replay,
            vec!["counter.monotonic"],
            "ESCALATE",
            "inadmissible-evidence",
            Some("flaky-property"),
        ),
        (
            "the replay failed again, its receipt vouching: a stable failure",
            replayed(
                true,
                json!({"property": "counter.monotonic", "exit_code": 1, "receipt": failed}),
            ),
            NextStep::Decide,
            vec![],
            "BLOCK",
            "invariant-or-over-specified-property",
            None,
        ),
        (
            "the replay failed again, receipts off: a stable failure",
            replayed(
                false,
                json!({"property": "counter.monotonic", "exit_code": 1}),
            ),
            NextStep::Decide,
            vec![],
            "BLOCK",
            "invariant-or-over-specified-property",
            None,
        ),
        (
            "the replay passed: the split stands, a flake",
            replayed(
                true,
                json!({"property": "counter.monotonic", "exit_code": 0, "receipt": passed}),
            ),
            NextStep::Decide,
            vec![],
            "ESCALATE",
            "inadmissible-evidence",
            Some("flaky-property"),
        ),
        (
            "the replay exited 1 but ran nothing: no failure, the split stands",
            replayed(
                true,
                json!({"property": "counter.monotonic", "exit_code": 1, "receipt": nothing}),
            ),
            NextStep::Decide,
            vec![],
            "ESCALATE",
            "inadmissible-evidence",
            Some("flaky-property"),
        ),
        (
            "the replay was killed: the split stands",
            replayed(
                true,
                json!({"property": "counter.monotonic", "exit_code": null, "receipt": null}),
            ),
            NextStep::Decide,
            vec![],
            "ESCALATE",
            "inadmissible-evidence",
            Some("flaky-property"),
        ),
        (
            "a replay of a property that did not split changes nothing",
            {
                let mut doc = with(&[]);
                doc["replays"] = json!([{"property": "counter.monotonic", "exit_code": 1}]);
                doc
            },
            NextStep::Decide,
            vec![],
            "MERGE_OK",
            "all-gates-held",
            None,
        ),
    ];
    for (name, doc, next, asked, disposition, reason, cause) in rows {
        let request = GateDecision::parse(&serde_json::to_vec(&doc).unwrap())
            .unwrap_or_else(|p| panic!("{name}: {p:?}"));
        let plan = next_step(&request, 5);
        assert_eq!(plan.next, next, "{name}: {plan:?}");
        assert_eq!(plan.replay, asked, "{name}: replay");
        let answer = answers(name, &doc, disposition, reason);
        assert_eq!(answer["cause"].as_str(), cause, "{name}: cause");
    }
    // A replay is read strictly: its fields named, its exit code required.
    for (bad, pointer) in [
        (
            json!([{"property": "counter.monotonic"}]),
            "/replays/0/exit_code",
        ),
        (
            json!([{"property": "counter.monotonic", "exit_code": 1, "seed": 3}]),
            "/replays/0/seed",
        ),
        (json!({"counter.monotonic": 1}), "/replays"),
    ] {
        let mut doc = split(true);
        doc["replays"] = bad;
        let problem = GateDecision::parse(&serde_json::to_vec(&doc).unwrap())
            .expect_err("a bad replay is refused");
        let text = format!("{problem:?}");
        assert!(text.contains(pointer), "{pointer}: {text}");
    }
}

/// Issue 50: an admission records its property's source digest; the gate is given the digest
/// of that source on the base today (`admitted_sources`), and a record whose source changed
/// since, or whose digest the facts do not give, votes as unadmitted until admitted again. A
/// record without a digest (written before) is read as it was. Written by hand from the issue.
#[test]
fn an_admission_outgrown_by_its_source_votes_as_unadmitted() {
    use patchgate::core::decision::Decision;
    use patchgate::core::gate::GateDecision;
    let record = |source: Option<&str>| {
        let mut r = json!({"seal": A, "mutant": "m1", "base_runs": [0, 0], "mutant_runs": [1, 1]});
        if let Some(s) = source {
            r["source"] = json!(s);
        }
        r
    };
    let doc = |admitted: Value, sources: Option<Value>| {
        let mut d = with(&[
            (
                "catalog",
                json!({"properties": [
                    {"id": "counter.monotonic", "strength": "strong", "locality": ["store/counters"], "source": ["props/counter"], "admitted": admitted}
                ]}),
            ),
            ("require_admission", json!(true)),
        ]);
        if let Some(s) = sources {
            d["admitted_sources"] = s;
        }
        d
    };
    let c = "c".repeat(64);
    let d = "d".repeat(64);
    // (name, facts, disposition, reason).
    let rows = [
        (
            "the source is what was proven",
            doc(record(Some(&c)), Some(json!({"counter.monotonic": c}))),
            "MERGE_OK",
            "all-gates-held",
        ),
        (
            "the source changed since its admission",
            doc(record(Some(&c)), Some(json!({"counter.monotonic": d}))),
            "ESCALATE",
            "inadmissible-evidence",
        ),
        (
            "the facts do not say what the source is now",
            doc(record(Some(&c)), None),
            "ESCALATE",
            "inadmissible-evidence",
        ),
        (
            "a record written before digests: read as it was",
            doc(record(None), Some(json!({"counter.monotonic": d}))),
            "MERGE_OK",
            "all-gates-held",
        ),
    ];
    for (name, facts, disposition, reason) in rows {
        let answer = answers(name, &facts, disposition, reason);
        if disposition == "ESCALATE" {
            let t1 = answer["steps"]
                .as_array()
                .unwrap()
                .iter()
                .find(|s| s["step"] == "properties")
                .unwrap();
            assert!(
                t1["summary"].as_str().is_some_and(|s| s.contains(
                    "admitted before its source changed (admit it again): counter.monotonic"
                )),
                "{name}: {t1}"
            );
        }
    }
    // A digest is 64 lowercase hex digits.
    let bad = doc(record(Some(&c)), Some(json!({"counter.monotonic": "xyz"})));
    let problem = GateDecision::parse(&serde_json::to_vec(&bad).unwrap()).expect_err("refused");
    assert!(
        format!("{problem:?}").contains("/admitted_sources/counter.monotonic"),
        "{problem:?}"
    );
}

/// (name, changed, tests_from_base, added_tests, fixture_suite, disposition, reason, scope hits).
type ApartRow = (
    &'static str,
    Vec<&'static str>,
    Vec<&'static str>,
    Vec<&'static str>,
    Value,
    &'static str,
    &'static str,
    Vec<&'static str>,
);
/// (name, changed, metadata_only, disposition, reason, scope hits).
type ManifestRow = (
    &'static str,
    Vec<&'static str>,
    Vec<&'static str>,
    &'static str,
    &'static str,
    Vec<&'static str>,
);

/// Issue 50: the base's tests judge, the tests a patch adds add evidence. Written from the
/// issue: a changed test file the facts say ran as the base has it, or a test file the patch
/// adds that ran apart, is no scope hit; a test configuration file, a file under `fixtures`,
/// one the facts do not name, or one not among the changed files stays a scope hit; an added
/// test's failure its receipt vouches for BLOCKs, its run missing leaves the suite unknown,
/// anything else it shows passes nothing.
#[test]
fn the_base_s_tests_judge_and_added_tests_can_only_block() {
    let code = "store/counters/mod.rs";
    let receipt =
        |executed: u64, failed: u64| json!({"executed": executed, "failed": failed, "skipped": 0});
    let suite_with = |added: Option<Value>| {
        let mut s = json!({"exit_code": 0, "receipt": receipt(5, 0)});
        if let Some(a) = added {
            s["added"] = a;
        }
        s
    };
    // The answer on `doc` has this disposition, reason and scope hits.
    let check = |name: &str, doc: Value, disposition: &str, reason: &str, hits: Vec<&str>| {
        let answer = answers(name, &doc, disposition, reason);
        let scope = answer["steps"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["step"] == "scope")
            .cloned()
            .unwrap_or(Value::Null);
        assert_eq!(scope["scope_hits"], json!(hits), "{name}: {scope}");
    };
    let failing_added = json!({"exit_code": 1, "failed_tests": ["tests.test_new::test_it"], "receipt": receipt(1, 1)});
    let passing_added = json!({"exit_code": 0, "failed_tests": [], "receipt": receipt(1, 0)});
    let killed_added = json!({"exit_code": null});
    // (name, changed, tests_from_base, added_tests, fixture_suite, disposition, reason, scope hits)
    let rows: Vec<ApartRow> = vec![
        (
            "an edited test run as the base has it",
            vec![code, "tests/test_a.py"],
            vec!["tests/test_a.py"],
            vec![],
            suite_with(None),
            "MERGE_OK",
            "all-gates-held",
            vec![],
        ),
        (
            "an edited test the facts do not name",
            vec![code, "tests/test_a.py"],
            vec![],
            vec![],
            suite_with(None),
            "ESCALATE",
            "inadmissible-evidence",
            vec!["tests/test_a.py"],
        ),
        (
            "conftest.py stays a scope hit",
            vec![code, "tests/conftest.py"],
            vec!["tests/conftest.py"],
            vec![],
            suite_with(None),
            "ESCALATE",
            "inadmissible-evidence",
            vec!["tests/conftest.py"],
        ),
        (
            "pytest.ini stays a scope hit",
            vec![code, "tests/pytest.ini"],
            vec!["tests/pytest.ini"],
            vec![],
            suite_with(None),
            "ESCALATE",
            "inadmissible-evidence",
            vec!["tests/pytest.ini"],
        ),
        (
            "a file under fixtures stays a scope hit",
            vec![code, "tests/fixtures/a.json"],
            vec!["tests/fixtures/a.json"],
            vec![],
            suite_with(None),
            "ESCALATE",
            "inadmissible-evidence",
            vec!["tests/fixtures/a.json"],
        ),
        (
            "a root-level test module shadows: a scope hit",
            vec![code, "test_a.py"],
            vec!["test_a.py"],
            vec![],
            suite_with(None),
            "ESCALATE",
            "inadmissible-evidence",
            vec!["test_a.py"],
        ),
        (
            "a named file the patch does not change judges nothing",
            vec![code],
            vec!["tests/test_a.py"],
            vec!["tests/test_b.py"],
            suite_with(None),
            "MERGE_OK",
            "all-gates-held",
            vec![],
        ),
        (
            "an added test that passed",
            vec![code, "tests/test_new.py"],
            vec![],
            vec!["tests/test_new.py"],
            suite_with(Some(passing_added.clone())),
            "MERGE_OK",
            "all-gates-held",
            vec![],
        ),
        (
            "an added test that failed blocks",
            vec![code, "tests/test_new.py"],
            vec![],
            vec!["tests/test_new.py"],
            suite_with(Some(failing_added)),
            "BLOCK",
            "concrete-behavior",
            vec![],
        ),
        (
            "an added test that did not run: unknown",
            vec![code, "tests/test_new.py"],
            vec![],
            vec!["tests/test_new.py"],
            suite_with(None),
            "ESCALATE",
            "inadmissible-evidence",
            vec![],
        ),
        // Issue 64: an added test that did not pass is never "no evidence". Killed: nothing
        // vouches for how it ended (it was MERGE_OK before).
        (
            "an added test killed: no verdict",
            vec![code, "tests/test_new.py"],
            vec![],
            vec!["tests/test_new.py"],
            suite_with(Some(killed_added)),
            "ESCALATE",
            "inadmissible-evidence",
            vec![],
        ),
        // Its exit a catch, its report too large to read: a failure the room saw (the attack:
        // a 256 MiB failure message merged as "no evidence").
        (
            "an added test that failed with an unreadable receipt blocks",
            vec![code, "tests/test_new.py"],
            vec![],
            vec!["tests/test_new.py"],
            suite_with(Some(json!({"exit_code": 1, "receipt": null}))),
            "BLOCK",
            "concrete-behavior",
            vec![],
        ),
        (
            "an added test that failed, receipts off, blocks",
            vec![code, "tests/test_new.py"],
            vec![],
            vec!["tests/test_new.py"],
            suite_with(Some(json!({"exit_code": 1}))),
            "BLOCK",
            "concrete-behavior",
            vec![],
        ),
        // A broken harness (pytest's 4) with no report: no verdict.
        (
            "an added test whose harness broke: no verdict",
            vec![code, "tests/test_new.py"],
            vec![],
            vec!["tests/test_new.py"],
            suite_with(Some(json!({"exit_code": 4, "receipt": null}))),
            "ESCALATE",
            "inadmissible-evidence",
            vec![],
        ),
        // A catch whose readable report lists no failure disagrees with itself: no verdict.
        (
            "an added test caught with no failure listed: no verdict",
            vec![code, "tests/test_new.py"],
            vec![],
            vec!["tests/test_new.py"],
            suite_with(Some(
                json!({"exit_code": 1, "failed_tests": [], "receipt": receipt(1, 0)}),
            )),
            "ESCALATE",
            "inadmissible-evidence",
            vec![],
        ),
        (
            "only an added test: no property need observe it",
            vec!["tests/test_new.py"],
            vec![],
            vec!["tests/test_new.py"],
            suite_with(Some(passing_added.clone())),
            "MERGE_OK",
            "all-gates-held",
            vec![],
        ),
    ];
    // (name, changed, metadata_only, disposition, reason, scope hits)
    let manifests: Vec<ManifestRow> = vec![
        (
            "a version bump beside the code",
            vec![code, "pyproject.toml"],
            vec!["pyproject.toml"],
            "MERGE_OK",
            "all-gates-held",
            vec![],
        ),
        (
            "a version bump alone",
            vec!["Cargo.toml"],
            vec!["Cargo.toml"],
            "MERGE_OK",
            "all-gates-held",
            vec![],
        ),
        (
            "a manifest change the facts do not vouch for",
            vec![code, "pyproject.toml"],
            vec![],
            "ESCALATE",
            "inadmissible-evidence",
            vec!["pyproject.toml"],
        ),
        (
            "only a manifest by its name (tox.ini describes nothing)",
            vec![code, "tox.ini"],
            vec!["tox.ini"],
            "ESCALATE",
            "inadmissible-evidence",
            vec!["tox.ini"],
        ),
    ];
    // Tests inside source files: their lines ran as the base has them (no scope hit), or a
    // hunk mixed them with code (a scope hit).
    for (name, key, disposition, reason, hits) in [
        (
            "test lines run from the base",
            "test_lines_from_base",
            "MERGE_OK",
            "all-gates-held",
            vec![],
        ),
        (
            "test lines mixed with code",
            "test_lines_mixed",
            "ESCALATE",
            "inadmissible-evidence",
            vec![code],
        ),
    ] {
        let doc = with(&[("changed_files", json!([code])), (key, json!([code]))]);
        check(name, doc, disposition, reason, hits);
    }
    for (name, changed, described, disposition, reason, hits) in manifests {
        let doc = with(&[
            ("changed_files", json!(changed)),
            ("metadata_only", json!(described)),
        ]);
        check(name, doc, disposition, reason, hits);
    }
    for (name, changed, from_base, added, suite, disposition, reason, hits) in rows {
        let doc = with(&[
            ("changed_files", json!(changed)),
            ("tests_from_base", json!(from_base)),
            ("added_tests", json!(added)),
            ("fixture_suite", suite),
        ]);
        check(name, doc, disposition, reason, hits);
    }
}

/// Issue 65: what no interpreter runs is not code under test. A type stub (`*.pyi`) or the
/// `py.typed` marker needs no property and is no scope hit, even beside the tests; a changed
/// code file beside it still needs its property. Written from the issue.
#[test]
fn a_type_stub_is_not_code_under_test() {
    let no_runs = json!({});
    // (name, changed files, property runs, disposition, reason)
    let rows: Vec<(&str, Vec<&str>, &Value, &str, &str)> = vec![
        (
            "a stub alone",
            vec!["api/client.pyi"],
            &no_runs,
            "MERGE_OK",
            "all-gates-held",
        ),
        (
            "the marker alone",
            vec!["api/py.typed"],
            &no_runs,
            "MERGE_OK",
            "all-gates-held",
        ),
        (
            "a stub beside the tests",
            vec!["tests/stubs/helpers.pyi"],
            &no_runs,
            "MERGE_OK",
            "all-gates-held",
        ),
        (
            "a stub and code no property observes",
            vec!["api/client.pyi", "api/client.py"],
            &no_runs,
            "ESCALATE",
            "inadmissible-evidence",
        ),
        (
            "a file named like a stub is a stub by its suffix only",
            vec!["api/client.pyi.py"],
            &no_runs,
            "ESCALATE",
            "inadmissible-evidence",
        ),
    ];
    for (name, changed, runs, disposition, reason) in rows {
        let doc = with(&[
            ("changed_files", json!(changed)),
            ("property_runs", runs.clone()),
        ]);
        let answer = answers(name, &doc, disposition, reason);
        if disposition == "ESCALATE" {
            assert_eq!(answer["cause"], "unobserved-files", "{name}: {answer}");
        }
    }
}

/// Issue 64: a test that fails only in the observed run is never the patch's failure. The
/// observed run's failures run again without the observer (`fixture_suite.plain`): passed,
/// with a receipt of at least as many tests, the suite has no verdict (ESCALATE); anything
/// else leaves the failure standing (BLOCK). Written from the issue.
#[test]
fn a_failure_only_under_the_observer_is_no_verdict() {
    use patchgate::core::decision::Decision;
    use patchgate::core::gate::GateDecision;
    let receipt =
        |executed: u64, failed: u64| json!({"executed": executed, "failed": failed, "skipped": 0});
    let failed = json!(["tests.test_a::test_x", "tests.test_a::test_y"]);
    // (name, the plain run, disposition, reason)
    let rows: Vec<(&str, Option<Value>, &str, &str)> = vec![
        (
            "no plain run: the failure stands",
            None,
            "BLOCK",
            "concrete-behavior",
        ),
        (
            "both passed plainly: no verdict",
            Some(json!({"exit_code": 0, "failed_tests": [], "receipt": receipt(2, 0)})),
            "ESCALATE",
            "inadmissible-evidence",
        ),
        (
            "one failed plainly too: a failure",
            Some(
                json!({"exit_code": 1, "failed_tests": ["tests.test_a::test_y"], "receipt": receipt(2, 1)}),
            ),
            "BLOCK",
            "concrete-behavior",
        ),
        (
            "passed plainly, but ran fewer tests than failed",
            Some(json!({"exit_code": 0, "failed_tests": [], "receipt": receipt(1, 0)})),
            "BLOCK",
            "concrete-behavior",
        ),
        (
            "passed plainly without a receipt that vouches for it",
            Some(json!({"exit_code": 0, "failed_tests": [], "receipt": null})),
            "BLOCK",
            "concrete-behavior",
        ),
        (
            "the plain run killed",
            Some(json!({"exit_code": null})),
            "BLOCK",
            "concrete-behavior",
        ),
    ];
    for (name, plain, disposition, reason) in rows {
        let mut suite = json!({"exit_code": 1, "failed_tests": failed, "receipt": receipt(5, 2)});
        if let Some(p) = plain {
            suite["plain"] = p;
        }
        let doc = with(&[("fixture_suite", suite)]);
        answers(name, &doc, disposition, reason);
    }
    // An unknown field in the plain run is refused, naming it.
    let doc = with(&[(
        "fixture_suite",
        json!({"exit_code": 1, "failed_tests": failed, "plain": {"exit_code": 0, "why": 1}}),
    )]);
    let problem = GateDecision::parse(doc.to_string().as_bytes()).expect_err("refused");
    assert!(
        format!("{problem:?}").contains("/fixture_suite/plain/why"),
        "{problem:?}"
    );
}

/// Issue 65: a changed test that fails as the base has it is a declared behaviour change, not
/// a broken patch: when every counted failure is a test the patch changes
/// (`fixture_suite.changed_tests`), ESCALATE `changed-test-fails` with the tests side by side;
/// one failure of a test it did not touch, and the failure stands (BLOCK). Written from the
/// issue.
#[test]
fn a_changed_test_that_fails_is_a_declared_change() {
    use patchgate::core::decision::Decision;
    use patchgate::core::gate::GateDecision;
    let changed = |id: &str| json!({"id": id, "base": "    assert f(2) == 4", "patch": "    assert f(2) == 5"});
    let failed = json!(["tests.test_a::test_x", "tests.test_a::test_y"]);
    // (name, changed tests, disposition, reason, cause)
    type Row<'a> = (&'a str, Vec<Value>, &'a str, &'a str, Option<&'a str>);
    let rows: Vec<Row> = vec![
        (
            "no changed test: a failure",
            vec![],
            "BLOCK",
            "concrete-behavior",
            None,
        ),
        (
            "both failures changed tests: a human decides",
            vec![
                changed("tests.test_a::test_x"),
                changed("tests.test_a::test_y"),
            ],
            "ESCALATE",
            "inadmissible-evidence",
            Some("changed-test-fails"),
        ),
        (
            "one failure a test the patch did not touch: it stands",
            vec![changed("tests.test_a::test_x")],
            "BLOCK",
            "concrete-behavior",
            None,
        ),
        (
            "a changed test that passed says nothing",
            vec![changed("tests.test_a::test_z")],
            "BLOCK",
            "concrete-behavior",
            None,
        ),
    ];
    for (name, tests, disposition, reason, cause) in rows {
        let mut suite = json!({"exit_code": 1, "failed_tests": failed, "receipt": {"executed": 5, "failed": 2, "skipped": 0}});
        if !tests.is_empty() {
            suite["changed_tests"] = json!(tests);
        }
        let answer = answers(
            name,
            &with(&[("fixture_suite", suite)]),
            disposition,
            reason,
        );
        assert_eq!(answer["cause"].as_str(), cause, "{name}: {answer}");
        let fixtures = answer["steps"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["step"] == "fixtures")
            .unwrap();
        assert_eq!(
            fixtures["changed_tests"].is_array(),
            cause.is_some(),
            "{name}"
        );
    }
    // A changed test with a field it may not have, or no id, is refused, naming it.
    for (row, field) in [
        (
            json!({"id": "t::x", "base": "", "patch": "", "why": 1}),
            "/fixture_suite/changed_tests/0/why",
        ),
        (
            json!({"base": "", "patch": ""}),
            "/fixture_suite/changed_tests/0/id",
        ),
    ] {
        let doc = with(&[(
            "fixture_suite",
            json!({"exit_code": 1, "failed_tests": failed, "changed_tests": [row]}),
        )]);
        let problem = GateDecision::parse(doc.to_string().as_bytes()).expect_err("refused");
        assert!(format!("{problem:?}").contains(field), "{problem:?}");
    }
}

/// Issue 64: the observe step says how many patch mutants ran beside how many were killed; a
/// mutant that never ran (the gate decided first) is neither. Sentences written by hand.
#[test]
fn the_observe_step_says_how_many_mutants_ran() {
    use patchgate::core::decision::{Decision, Defaults};
    use patchgate::core::gate::GateDecision;
    let mutant = |line: u32, state: &str| {
        let mut m = json!({"file": "store/counters/mod.rs", "line": line, "operator": "condition-true",
                           "code": "if True:", "checks": ["t::a"], "state": state});
        if state == "killed" {
            m["killed_by"] = json!(["t::a"]);
        }
        m
    };
    for (mutants, says) in [
        (
            vec![mutant(3, "pending"), mutant(4, "pending")],
            "; 2 patch mutants listed, none run (the gate decided before they were due)",
        ),
        (
            vec![mutant(3, "killed"), mutant(4, "pending")],
            "; 1 of 2 patch mutants killed, 1 not run",
        ),
        (
            vec![mutant(3, "killed"), mutant(4, "survived")],
            "; 1 of 2 patch mutants killed",
        ),
    ] {
        let doc = with(&[(
            "observe",
            json!({"changes": "listed", "branches": "listed", "read": true, "line_count": 2, "run_count": 2,
                   "mutants": mutants}),
        )]);
        let request = GateDecision::parse(&serde_json::to_vec(&doc).unwrap()).unwrap();
        let answer = serde_json::to_value(
            GateDecision::decide(&request, &Defaults::default()).answer(&request, "d-1".into()),
        )
        .unwrap();
        let summary = answer["steps"]
            .as_array()
            .and_then(|s| s.iter().find(|s| s["step"] == "observe"))
            .and_then(|s| s["summary"].as_str())
            .unwrap_or_default()
            .to_owned();
        assert_eq!(
            summary,
            format!("2 of 2 changed code lines run by a check{says}"),
            "{answer}"
        );
    }
}
