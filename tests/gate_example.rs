//! The patch gate on a real repository, for real (CONTRACT.md section 8.2; the issue's
//! scenarios): `examples/gate-python/repo` becomes a git repository, each patch in
//! `examples/gate-python/patches` is applied with `git apply` and committed on a branch and gated by the real binary, which
//! runs the real pytest and hypothesis. The expected answers are written by hand from the
//! contract (the table in `examples/gate-python/README.md`), not read from the code.
//!
//! Needs Python 3 with pytest and hypothesis (`python3 -m pip install -r requirements-test.txt`).

mod common;

use std::path::{Path, PathBuf};

use common::{TestServer, apply, assert_untouched, commit, copy_tree, git, patchgate};
use serde_json::{Value, json};

/// The starter's (and the example's) pytest invocation, as its config writes it.
const PYTEST: &str = r#""python3", "-P", "-s", "--check-hash-based-pycs", "always", "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "_hypothesis_pytestplugin""#;

fn example(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("examples")
        .join(name)
}

fn require_python() {
    let ok = std::process::Command::new("python3")
        .args(["-c", "import pytest, hypothesis"])
        .status()
        .is_ok_and(|s| s.success());
    assert!(
        ok,
        "these tests run the example's real pytest and hypothesis: python3 -m pip install -r requirements-test.txt"
    );
}

/// The seal the coreutils pipeline prints for `fixtures` in `dir`: what an attacker would
/// regenerate.
fn coreutils_seal(dir: &Path) -> String {
    let out = std::process::Command::new("sh")
        .current_dir(dir)
        .args([
            "-c",
            "LC_ALL=C find fixtures -type f ! -name '*.seal' -print0 | LC_ALL=C sort -z | xargs -0 sha256sum | sha256sum",
        ])
        .output()
        .expect("sh");
    assert!(out.status.success());
    String::from_utf8(out.stdout).expect("utf-8")
}

/// A repository from `examples/<example>/repo` with `patches/<patch>.patch` committed on the
/// branch `patch` (and `patches/<patch>.base.patch`, if any, committed to `main` first),
/// checked out.
fn repository(example_name: &str, patch: &str, after: impl FnOnce(&Path)) -> tempfile::TempDir {
    repository_with(example_name, patch, |_| {}, after)
}

/// [`repository`], with `base_edit` applied to the example before the base commit.
fn repository_with(
    example_name: &str,
    patch: &str,
    base_edit: impl FnOnce(&Path),
    after: impl FnOnce(&Path),
) -> tempfile::TempDir {
    let allowed = READ_FIRST
        .iter()
        .find(|(p, _)| *p == patch)
        .map_or(&[][..], |(_, a)| *a);
    repository_read(
        example_name,
        patch,
        |dir| {
            // After the edit: some rewrite the config's tail.
            base_edit(dir);
            if !allowed.is_empty() {
                allow_reading(dir, allowed);
            }
        },
        after,
    )
}

/// [`repository_with`] on the example's own config, whatever [`READ_FIRST`] says.
fn repository_read(
    example_name: &str,
    patch: &str,
    base_edit: impl FnOnce(&Path),
    after: impl FnOnce(&Path),
) -> tempfile::TempDir {
    let tmp = common::git_repo();
    let dir = tmp.path();
    copy_tree(&example(example_name).join("repo"), dir);
    base_edit(dir);
    commit(dir, "base");
    let patches = example(example_name).join("patches");
    let base_patch = patches.join(format!("{patch}.base.patch"));
    if base_patch.is_file() {
        apply(dir, &base_patch);
        commit(dir, "base: the ledger as it is today");
    }
    git(dir, &["checkout", "-q", "-b", "patch"]);
    apply(dir, &patches.join(format!("{patch}.patch")));
    after(dir);
    commit(dir, patch);
    // `<patch>.later.patch`: what the base branch gained after the patch forked from it.
    let later = patches.join(format!("{patch}.later.patch"));
    if later.is_file() {
        git(dir, &["checkout", "-q", "main"]);
        apply(dir, &later);
        commit(dir, "main moves on");
        git(dir, &["checkout", "-q", "patch"]);
    }
    tmp
}

/// The attacks written before the reading of the patch's code (CONTRACT.md section 14), with
/// the reading rules their code trips (file, rule). Their tests show the later defense each
/// was written for (the canary, receipts, the census, integrity, the room), so the base they
/// are gated on accepts those rules (`[suspicious] allow`), as the gate was when each test
/// was written; `the_reading_stops_the_older_attacks_first` gates every one of them on the
/// example's own config: ESCALATE before anything runs.
type Allowed = &'static [(&'static str, &'static str)];
const READ_FIRST: [(&str, Allowed); 11] = [
    (
        "engine-off",
        &[
            ("shop/__init__.py", "dynamic-import"),
            ("shop/__init__.py", "test-stack-text"),
        ],
    ),
    (
        "exits-on-import",
        &[
            ("shop/__init__.py", "dynamic-import"),
            ("shop/__init__.py", "reflection"),
            ("shop/__init__.py", "test-stack-text"),
        ],
    ),
    ("flaky-property", &[("shop/sorting.py", "test-stack-text")]),
    (
        "launders-frozen-failure",
        &[("shop/__init__.py", "interpreter")],
    ),
    (
        "poisons-the-checkout",
        &[
            ("shop/__init__.py", "process-ids"),
            ("shop/__init__.py", "test-stack-text"),
        ],
    ),
    (
        "reaches-the-runner",
        &[
            ("shop/__init__.py", "interpreter"),
            ("shop/__init__.py", "process-ids"),
            ("shop/__init__.py", "test-stack-text"),
        ],
    ),
    ("shadows-pytest", &[("pytest.py", "interpreter")]),
    (
        "skips-failures",
        &[
            ("shop/__init__.py", "dynamic-import"),
            ("shop/__init__.py", "test-stack-text"),
        ],
    ),
    (
        "eq-overload",
        &[
            ("shop/pricing.py", "comparison-method"),
            ("shop/pricing.py", "value-type-subclass"),
            ("src/lib.rs", "hand-written-comparison"),
        ],
    ),
    (
        "exits-early",
        &[
            ("src/lib.rs", "rust-environment"),
            ("src/lib.rs", "rust-exit"),
            ("src/lib.rs", "rust-test-stack-text"),
        ],
    ),
    (
        "test-aware",
        &[
            ("shop/pricing.py", "interpreter"),
            ("shop/pricing.py", "test-stack-text"),
        ],
    ),
];

/// Writes `[suspicious] allow` into the config in `dir` (the starter's `allow = []`
/// replaced, or a section added).
fn allow_reading(dir: &Path, allowed: &[(&str, &str)]) {
    let config = dir.join("patchgate.toml");
    let text = std::fs::read_to_string(&config).expect("config");
    let list = allowed
        .iter()
        .map(|(path, rule)| format!("{{ path = \"{path}\", rule = \"{rule}\" }}"))
        .collect::<Vec<_>>()
        .join(", ");
    let text = if text.contains("\nallow = []\n") {
        text.replacen("\nallow = []\n", &format!("\nallow = [{list}]\n"), 1)
    } else {
        format!("{text}\n[suspicious]\nallow = [{list}]\n")
    };
    std::fs::write(&config, text).expect("write");
}

/// A base edit: the base's config runs the code under test with `[sandbox] mode = MODE`
/// (`off` is how every run happened before the clean room).
/// The example's suite command, with its receipt.
fn suite_command() -> String {
    format!(r#"command = [{PYTEST}, "--junitxml={{junit}}", "tests"]"#)
}

/// The base's config with the suite's report in the tree (`[suite] junit`, no receipt), as
/// configs before receipts were.
fn report_in_tree(dir: &Path) {
    let config = dir.join("patchgate.toml");
    let text = std::fs::read_to_string(&config).expect("config");
    assert!(
        text.contains(&suite_command()),
        "the example's suite command"
    );
    let legacy = format!(
        "command = [{PYTEST}, \"--junitxml=.patchgate/junit.xml\", \"tests\"]\njunit = \".patchgate/junit.xml\""
    );
    let text = text.replace("census = \"suite.census\"\n", "");
    // The observed run writes its report beside the receipt: without one, nothing observes.
    let text = observe_off(&text);
    std::fs::write(&config, text.replace(&suite_command(), &legacy)).expect("write");
}

/// The config without `[observe]`'s rules, when it has them (the gate before issue 52).
fn without_observe(config: &str) -> String {
    config
        .replace("changes = \"required\"", "changes = \"off\"")
        .replace("branches = \"listed\"", "branches = \"off\"")
}

/// The starter's `[observe]` turned off (both rules).
fn observe_off(config: &str) -> String {
    let off = config
        .replace("changes = \"required\"", "changes = \"off\"")
        .replace("branches = \"listed\"", "branches = \"off\"");
    assert_ne!(off, config, "the starter's [observe]");
    off
}

fn sandbox_mode(mode: &'static str) -> impl FnOnce(&Path) {
    move |dir: &Path| {
        let config = dir.join("patchgate.toml");
        let text = std::fs::read_to_string(&config).expect("config");
        assert!(
            text.contains("mode = \"required\""),
            "the starter's sandbox"
        );
        std::fs::write(
            &config,
            text.replace("mode = \"required\"", &format!("mode = \"{mode}\"")),
        )
        .expect("write");
    }
}

/// Runs the plain `python3 -m pytest -q tests` in `dir`: what a gate that ran the worktree's
/// own tests saw. True when it passed.
fn plain_pytest_passes(dir: &Path) -> bool {
    std::process::Command::new("python3")
        .current_dir(dir)
        .args(["-m", "pytest", "-q", "-p", "no:cacheprovider", "tests"])
        .env("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .expect("python3")
        .success()
}

struct Gated {
    exit: i32,
    stdout: String,
    stderr: String,
    answer: Value,
    ledger: Vec<Value>,
}

fn gate(dir: &Path, extra: &[&str]) -> Gated {
    let out_dir = tempfile::tempdir().expect("tempdir");
    let json_out = out_dir.path().join("answer.json");
    let ledger = out_dir.path().join("ladder.jsonl");
    let mut cmd = patchgate();
    cmd.current_dir(dir)
        .args(["gate", "--base", "main", "--json-out"])
        .arg(&json_out)
        .arg("--ledger")
        .arg(&ledger)
        .args(extra)
        // pytest's plugin autoload (whatever else is installed) only costs start-up time.
        .env("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
        .env_remove("GITHUB_ACTIONS");
    let out = cmd.output().expect("run patchgate");
    let answer = std::fs::read(&json_out)
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok())
        .unwrap_or(Value::Null);
    let ledger = std::fs::read_to_string(&ledger)
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).expect("ledger row"))
        .collect();
    Gated {
        exit: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        answer,
        ledger,
    }
}

fn step<'a>(answer: &'a Value, name: &str) -> &'a Value {
    answer["steps"]
        .as_array()
        .and_then(|s| s.iter().find(|s| s["step"] == name))
        .unwrap_or(&Value::Null)
}

fn tiers(g: &Gated) -> Vec<(String, String)> {
    g.ledger
        .iter()
        .map(|r| {
            (
                r["tier"].as_str().unwrap_or("").to_owned(),
                r["verdict"].as_str().unwrap_or("").to_owned(),
            )
        })
        .collect()
}

/// Asserts the one line, the exit code, and the answer's disposition and reason.
fn expect(g: &Gated, disposition: &str, reason: &str, exit: i32) {
    assert_eq!(
        (g.exit, g.stdout.as_str()),
        (exit, format!("{disposition} reason={reason}\n").as_str()),
        "stderr:\n{}\nanswer: {}",
        g.stderr,
        g.answer
    );
    assert_eq!(g.answer["disposition"], disposition);
    assert_eq!(g.answer["reason"], reason);
    assert_eq!(g.answer["exit_code"], exit);
}

/// An escalation, with its reason and its machine-readable cause (issue 35).
fn escalates(g: &Gated, reason: &str, cause: &str) {
    expect(g, "ESCALATE", reason, 2);
    assert_eq!(g.answer["cause"], cause, "answer: {}", g.answer);
}

fn python(patch: &str) -> (tempfile::TempDir, Gated) {
    require_python();
    let repo = repository("gate-python", patch, |_| {});
    let g = gate(repo.path(), &[]);
    (repo, g)
}

#[test]
fn a_good_fix_merges() {
    let (_repo, g) = python("good-fix");
    expect(&g, "MERGE_OK", "all-gates-held", 0);
    let t1 = step(&g.answer, "properties");
    assert_eq!(t1["reason"], "quorum-held");
    let yes: Vec<&str> = t1["properties"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| p["vote"] == "yes")
        .map(|p| p["id"].as_str().unwrap())
        .collect();
    assert_eq!(yes, ["discount_bounded", "discount_monotonic"]);
    assert_eq!(
        tiers(&g),
        [
            ("t1-properties".into(), "pass".into()),
            ("t2-fixtures".into(), "pass".into())
        ]
    );
}

#[test]
fn a_broken_invariant_blocks_on_the_property() {
    let (_repo, g) = python("broken-invariant");
    expect(&g, "BLOCK", "invariant-or-over-specified-property", 1);
    assert_eq!(step(&g.answer, "properties")["reason"], "stable-failure");
    // The ladder stopped at t1: the suite was skipped, not lost.
    assert_eq!(g.answer["evidence"]["fixture_check"], "unknown");
    assert_eq!(tiers(&g), [("t1-properties".into(), "caught".into())]);
}

#[test]
fn a_broken_concrete_case_blocks_on_the_fixtures() {
    let (_repo, g) = python("broken-case");
    expect(&g, "BLOCK", "concrete-behavior", 1);
    let t2 = step(&g.answer, "fixtures");
    assert_eq!(
        t2["failed_tests"],
        serde_json::json!(["tests.test_cases::test_case[discount_half]"])
    );
    assert_eq!(t2["discarded"], serde_json::json!([]));
}

#[test]
fn a_fixture_edited_to_hide_a_bug_escalates_before_anything_runs() {
    // The attack a new user reproduced against the old CI templates: broken code, the fixture
    // edited to agree with it, the expected seal regenerated, an all-pass evidence.json.
    require_python();
    let repo = repository("gate-python", "hidden-by-fixture", |dir| {
        let seal = coreutils_seal(dir);
        std::fs::write(dir.join("fixtures.seal.expected"), seal).expect("write seal");
    });
    let g = gate(repo.path(), &[]);
    escalates(&g, "seal-mismatch", "seal-mismatch");
    assert_eq!(g.answer["rule"], "fixture-fault");
    assert!(g.answer.get("evidence").is_none());
    assert!(g.ledger.is_empty(), "nothing may run: {:?}", g.ledger);
    assert!(!g.stderr.contains("t1-properties"), "{}", g.stderr);
    // The committed evidence.json says all-pass; the patch's own evidence is never read.
    let committed: Value = serde_json::from_slice(
        &std::fs::read(repo.path().join("evidence.json")).expect("evidence.json"),
    )
    .expect("json");
    assert_eq!(committed["property_check"], "pass");
}

#[test]
fn a_patch_editing_the_catalog_or_the_ledger_escalates() {
    for (patch, guarded) in [
        ("edits-catalog", "catalog.yaml"),
        ("edits-ledger", "freeze-ledger.json"),
    ] {
        let (_repo, g) = python(patch);
        escalates(&g, "guarded-input-edited", "guarded-input-edited");
        let hits = &step(&g.answer, "guard")["hits"];
        assert_eq!(hits[0]["file"], guarded, "{patch}");
        assert!(g.ledger.is_empty(), "{patch}: nothing may run");
    }
}

/// Issue 50: the base's tests judge, the tests a patch adds add evidence. `adds-test` adds a
/// test file beside an honest change (it used to escalate `scope-hit`): the file is left out
/// of the suite's run and run in a process of its own, the properties run, and it merges.
#[test]
fn a_patch_adding_a_test_file_merges_and_its_test_runs_apart() {
    let (repo, g) = python("adds-test");
    expect(&g, "MERGE_OK", "all-gates-held", 0);
    // Issue 51: the added tests are a work item of their own (`added_tests`, after the
    // suite): `--dry-run` names their run, and it is what the gate ran, run for run.
    let plan = gate(repo.path(), &["--dry-run"]).stdout;
    assert!(
        plan.contains("  run: t2-fixtures the tests the patch adds: "),
        "{plan}"
    );
    assert_plan_is_what_ran(&plan, &g.stderr);
    let scope = step(&g.answer, "scope");
    assert_eq!(scope["scope_hits"], serde_json::json!([]), "{scope}");
    assert_eq!(
        scope["added"],
        serde_json::json!(["tests/test_sorting_more.py"]),
        "{scope}"
    );
    assert_eq!(step(&g.answer, "properties")["ran"], true);
    let t2 = step(&g.answer, "fixtures");
    assert!(
        t2["summary"]
            .as_str()
            .is_some_and(|s| s.contains("run in a process of their own, passed")),
        "{t2}"
    );
}

/// Issue 50: a test the patch adds can block. `adds-failing-test` strips the names the legacy
/// export writes (no base test or property sees it) and adds the test that shows it: the base's
/// suite passes, the added test, run apart, fails, and the patch is blocked with its case.
#[test]
fn a_test_the_patch_adds_can_block() {
    let (_repo, g) = python("adds-failing-test");
    expect(&g, "BLOCK", "concrete-behavior", 1);
    let t2 = step(&g.answer, "fixtures");
    assert_eq!(t2["verdict"], "fail", "{t2}");
    assert_eq!(
        t2["failed_tests"],
        serde_json::json!(["tests.test_export_names::test_a_name_is_written_as_it_is"]),
        "{t2}"
    );
}

/// Issue 64, the attack: `adds-failing-test` with its added test's failure message made
/// 80 MiB, past the 64 MiB a report may hold. Its run fails (exit 1, as the runner saw it end)
/// and its receipt cannot be read: before, that was "no evidence" and the patch merged with
/// the bug its own test shows. Now it is a failure the room saw: BLOCK. The 80 MiB the run
/// printed are relayed within the gate's cap (4 MiB a run), and the rest is counted.
#[test]
fn a_test_the_patch_adds_whose_report_is_too_large_still_blocks() {
    require_python();
    let huge = |dir: &Path| {
        std::fs::write(
            dir.join("tests/test_export_names.py"),
            "from shop.export import export_row\n\n\ndef test_a_name_is_written_as_it_is():\n    got = export_row(\" tea \", 1250)\n    assert got == \" tea ,$12.50\", got + \".\" * (80 << 20)\n",
        )
        .expect("write")
    };
    let repo = repository_with("gate-python", "adds-failing-test", |_| {}, huge);
    let g = gate(repo.path(), &[]);
    expect(&g, "BLOCK", "concrete-behavior", 1);
    let t2 = step(&g.answer, "fixtures");
    assert!(
        t2["summary"].as_str().is_some_and(|s| s.contains(
            "run in a process of their own, failed (exit 1) and no report could be read to name the test: counted as a failure"
        )),
        "{t2}"
    );
    assert!(
        g.stderr.len() < 24 << 20,
        "the gate relays at most 16 MiB of all runs' output: {} bytes",
        g.stderr.len()
    );
    assert!(g.stderr.contains("more bytes of its output not shown"));
}

/// Issue 50: `edits-test-assertion` is the broken-case rounding bug, with the fixture test's
/// assertion loosened to let a cent either way pass: a plain `pytest` on the patch passes (it
/// used to escalate `scope-hit`, a human's call). The test runs as the base has it, so the bug
/// is a failure — of a test the patch changes (issue 65): a declared behaviour change, which a
/// human decides (ESCALATE `changed-test-fails`, the assertions side by side), never a merge.
#[test]
fn an_edited_test_is_judged_as_the_base_has_it() {
    let (repo, g) = python("edits-test-assertion");
    assert!(plain_pytest_passes(repo.path()), "hides the bug");
    escalates(&g, "inadmissible-evidence", "changed-test-fails");
    let changed = &step(&g.answer, "fixtures")["changed_tests"][0];
    assert_eq!(changed["id"], "tests.test_cases::test_case[discount_half]");
    assert_eq!(
        changed["base"],
        "    assert FUNCTIONS[case[\"function\"]](*case[\"args\"]) == case[\"expected\"]"
    );
    assert!(
        changed["patch"]
            .as_str()
            .unwrap()
            .contains("assert abs(got - case[\"expected\"]) <= 1"),
        "{changed}"
    );
    let scope = step(&g.answer, "scope");
    assert_eq!(
        scope["from_base"],
        serde_json::json!(["tests/test_cases.py"]),
        "{scope}"
    );
    assert_eq!(
        step(&g.answer, "fixtures")["failed_tests"],
        serde_json::json!(["tests.test_cases::test_case[discount_half]"])
    );
}

#[test]
fn a_flaky_property_escalates_on_split_exits() {
    let (_repo, g) = python("flaky-property");
    escalates(&g, "inadmissible-evidence", "flaky-property");
    let t1 = step(&g.answer, "properties");
    assert_eq!(t1["reason"], "split-exits");
    let ordered = t1["properties"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["id"] == "sort_is_ordered")
        .unwrap();
    assert_eq!(ordered["state"], "flake");
}

#[test]
fn a_property_that_collects_no_tests_is_a_harness_error_never_a_block() {
    let (_repo, g) = python("no-tests-collected");
    escalates(&g, "inadmissible-evidence", "nothing-ran");
    let t1 = step(&g.answer, "properties");
    assert_eq!(t1["reason"], "harness-error");
    let states: Vec<(&str, &str, &str)> = t1["properties"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| p["in_locality"] == true)
        .map(|p| {
            (
                p["id"].as_str().unwrap(),
                p["state"].as_str().unwrap(),
                p["vote"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        states,
        [
            ("slug_is_lowercase", "pass", "yes"),
            ("slug_is_stable", "error", "no"),
            // Frozen: excluded, never run, never passed.
            ("slug_never_empty", "missing", "excluded"),
        ]
    );
}

/// A failure only a frozen test explains never stops a patch (section 8.1), and is never
/// discarded unseen (section 12.4: the suite must pass without it, with a receipt). Since issue
/// 64 the suite's first run leaves the open frozen tests out by their pytest node ids (the
/// config's `[suite] deselect`): that run is the run without them, and no second run of the
/// whole suite is needed to discard what they did (attrs: 7.5 s of a 21 s gate).
#[test]
fn a_failure_only_in_a_frozen_test_is_discarded() {
    let (_repo, g) = python("frozen-failure-only");
    expect(&g, "MERGE_OK", "all-gates-held", 0);
    let t2 = step(&g.answer, "fixtures");
    assert_eq!(t2["exit_code"], 0, "{t2}");
    assert_eq!(t2["failed_tests"], serde_json::json!([]));
    assert!(
        g.stderr.contains(
            "t2-fixtures: the open frozen tests left out of its run (tests.test_legacy::test_legacy_export)"
        ),
        "{}",
        g.stderr
    );
    assert!(!g.stderr.contains("re-run without"), "{}", g.stderr);
    assert_eq!(
        tiers(&g),
        [
            ("t1-properties".into(), "pass".into()),
            ("t2-fixtures".into(), "pass".into())
        ]
    );
}

/// The gate as 3 shards run in turn on one machine (issue 53), their facts combined: the
/// combined answer (exit code, disposition, reason, failing cases).
fn sharded(dir: &Path) -> (i32, String, String, Vec<String>) {
    let facts = tempfile::tempdir().expect("tempdir");
    let mut paths = Vec::new();
    for k in 1..=3 {
        let path = facts.path().join(format!("shard-{k}.json"));
        let out = patchgate()
            .current_dir(dir)
            .args([
                "gate",
                "--base",
                "main",
                "--shard",
                &format!("{k}/3"),
                "--facts-out",
            ])
            .arg(&path)
            .env("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
            .env_remove("GITHUB_ACTIONS")
            .output()
            .expect("a shard");
        assert_eq!(
            (
                out.status.code(),
                String::from_utf8_lossy(&out.stdout).into_owned()
            ),
            (Some(2), "ESCALATE reason=evidence-gap\n".to_owned()),
            "a shard alone decides nothing"
        );
        paths.push(path);
    }
    let out = patchgate()
        .current_dir(dir)
        .args(["gate", "--json", "--combine"])
        .args(&paths)
        .env_remove("GITHUB_ACTIONS")
        .output()
        .expect("combine");
    let answer: Value = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    assert_eq!(
        step(&answer, "shards")["combined"],
        serde_json::json!([1, 2, 3]),
        "{answer}"
    );
    decided(out.status.code().unwrap_or(-1), &answer)
}

/// (exit code, disposition, reason, failing case ids sorted) of an answer.
fn decided(exit: i32, answer: &Value) -> (i32, String, String, Vec<String>) {
    let mut failing: Vec<String> = answer["failures"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|c| c["id"].as_str().unwrap_or_default().to_owned())
        .collect();
    failing.sort();
    let word = |k: &str| answer[k].as_str().unwrap_or_default().to_owned();
    (exit, word("disposition"), word("reason"), failing)
}

/// Issue 53: the example's patches (honest, bugs of each kind, gaming) gated in 3 shards decide
/// as one machine does: the same exit, disposition, reason and failing cases. The one-machine
/// answers are the contract's (the tests above hold them); `scripts/shards_agree.py
/// examples/gate-python 3` runs every patch of the example the same way.
#[test]
fn three_shards_decide_as_one_machine() {
    require_python();
    for (patch, disposition, reason) in [
        ("good-fix", "MERGE_OK", "all-gates-held"),
        ("broken-case", "BLOCK", "concrete-behavior"),
        (
            "broken-invariant",
            "BLOCK",
            "invariant-or-over-specified-property",
        ),
        ("frozen-failure-only", "MERGE_OK", "all-gates-held"),
        // Its reading hit allowed (READ_FIRST), the re-proof sees the int it returns.
        ("eq-overload", "ESCALATE", "checker-neutered"),
        (
            "self-checking-special-case",
            "ESCALATE",
            "inadmissible-evidence",
        ),
        ("edits-test-assertion", "ESCALATE", "inadmissible-evidence"),
    ] {
        let repo = repository("gate-python", patch, |_| {});
        let one = gate(repo.path(), &[]);
        let mine = decided(one.exit, &one.answer);
        assert_eq!(
            (mine.1.as_str(), mine.2.as_str()),
            (disposition, reason),
            "{patch}: {}",
            one.stderr
        );
        assert_eq!(sharded(repo.path()), mine, "{patch} in 3 shards");
    }
}

#[test]
fn a_frozen_test_covering_the_diff_escalates() {
    let (_repo, g) = python("touches-frozen-coverage");
    escalates(&g, "inadmissible-evidence", "frozen-covers-patch");
    assert_eq!(
        step(&g.answer, "freeze")["matched"],
        serde_json::json!(["tests.test_legacy::test_legacy_export"])
    );
    assert_eq!(g.answer["evidence"]["property_check"], "pass");
    assert_eq!(g.answer["evidence"]["fixture_check"], "pass");
    assert_eq!(g.answer["evidence"]["flaky_freeze"], "unknown");
}

#[test]
fn debt_over_the_cap_stops_the_queue() {
    let (_repo, g) = python("debt-over-cap");
    expect(&g, "STOP_QUEUE", "debt-over-cap", 3);
    let debt = step(&g.answer, "debt");
    // Four open rows (two properties, two tests), two of them with a spent budget.
    assert_eq!(
        (
            &debt["open"],
            &debt["spent"],
            &debt["counted"],
            &debt["cap"]
        ),
        (
            &Value::from(4),
            &Value::from(2),
            &Value::from(6),
            &Value::from(5)
        )
    );
    assert_eq!(debt["open_rows"][0]["budget_spent"], true);
    assert!(g.ledger.is_empty(), "nothing may run");
}

#[test]
fn the_server_and_the_local_core_give_the_same_answer() {
    require_python();
    let server = TestServer::start();
    for patch in ["broken-case", "adds-test", "edits-ledger"] {
        let repo = repository("gate-python", patch, |_| {});
        let local = gate(repo.path(), &[]);
        let remote = gate(repo.path(), &["--server", &server.url("")]);
        // Two runs of the same code: the failure messages may differ where they print
        // addresses (`<function f at 0x7f...>`); their test ids may not.
        let strip = |mut v: Value| {
            v.as_object_mut().map(|o| o.remove("decision_id"));
            // And the wall time of each phase: two runs never take the same.
            v.as_object_mut().map(|o| o.remove("timings_ms"));
            // And which property the canary was the twin of: drawn per gate (issue 49).
            if let Some(Value::Array(steps)) = v.get_mut("steps") {
                for s in steps.iter_mut().filter(|s| s["step"] == "canary") {
                    s.as_object_mut().map(|o| o.remove("summary"));
                }
            }
            if let Some(Value::Array(failures)) = v.get_mut("failures") {
                for f in failures {
                    f.as_object_mut().map(|o| o.remove("message"));
                }
            }
            v
        };
        assert_eq!(local.exit, remote.exit, "{patch}: {}", remote.stderr);
        assert_ne!(local.answer, Value::Null, "{patch}");
        assert_eq!(strip(local.answer), strip(remote.answer), "{patch}");
        assert_eq!(local.stdout, remote.stdout, "{patch}");
    }
}

#[test]
fn reports_evidence_markdown_and_the_github_annotation() {
    require_python();
    let repo = repository("gate-python", "broken-case", |_| {});
    let out = tempfile::tempdir().expect("tempdir");
    let (md, ev) = (
        out.path().join("report.md"),
        out.path().join("evidence.json"),
    );
    let mut cmd = patchgate();
    let run = cmd
        .current_dir(repo.path())
        .args(["gate", "--base", "main", "--markdown-out"])
        .arg(&md)
        .arg("--evidence-out")
        .arg(&ev)
        .env("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
        .env("GITHUB_ACTIONS", "true")
        .output()
        .expect("run");
    assert_eq!(run.status.code(), Some(1));
    let stdout = String::from_utf8_lossy(&run.stdout);
    assert!(
        stdout.starts_with("::error title=patchgate BLOCK::BLOCK reason=concrete-behavior"),
        "{stdout}"
    );
    assert!(
        stdout.ends_with("BLOCK reason=concrete-behavior\n"),
        "{stdout}"
    );
    let report = std::fs::read_to_string(&md).expect("report");
    // Issue 51: what ran is read from the runs' events: the suite's run, and how it ended.
    assert!(report.contains("<summary>What ran ("), "{report}");
    assert!(report.contains("\n| t2-fixtures | exit 1 | "), "{report}");
    assert!(
        report.starts_with("## ❌ patchgate: BLOCK (exit 1)"),
        "{report}"
    );
    assert!(report.contains("`tests.test_cases::test_case[discount_half]`"));
    assert!(report.contains("### What to do next"));
    // Where the time went, by phase (issue 26).
    assert!(report.contains("Time: gather "), "{report}");
    assert!(
        report.contains(" · properties ") && report.contains(" · suite "),
        "{report}"
    );
    // With `--json`, stdout is the JSON answer alone: the annotation goes to stderr.
    let json = patchgate()
        .current_dir(repo.path())
        .args(["gate", "--base", "main", "--json"])
        .env("GITHUB_ACTIONS", "true")
        .output()
        .expect("run");
    assert_eq!(json.status.code(), Some(1));
    let answer: serde_json::Value =
        serde_json::from_slice(&json.stdout).expect("stdout is one JSON document");
    assert_eq!(answer["reason"], "concrete-behavior");
    for phase in ["gather", "properties", "suite", "total"] {
        assert!(answer["timings_ms"][phase].is_u64(), "{phase}: {answer}");
    }
    // The canary rode in the property runs (issue 40): no process, so no phase, of its own.
    assert!(answer["timings_ms"].get("canary").is_none(), "{answer}");
    assert!(
        String::from_utf8_lossy(&json.stderr)
            .contains("::error title=patchgate BLOCK::BLOCK reason=concrete-behavior"),
        "{}",
        String::from_utf8_lossy(&json.stderr)
    );
    // The evidence document replays through `patchgate route` to the same disposition.
    let replay = patchgate().arg("route").arg(&ev).output().expect("route");
    assert_eq!(replay.status.code(), Some(1));
    assert_eq!(
        String::from_utf8_lossy(&replay.stdout),
        "BLOCK attribution=concrete-behavior\n"
    );
}

/// The runs a `--dry-run` plan names (`  run: LABEL: …`) are the runs a gate's stderr says
/// ended (`patchgate: LABEL: exit N (T s)`, the runner's words for a run that ended), one for
/// one: every run that ended was planned under its label, and every planned run ended.
fn assert_plan_is_what_ran(plan: &str, stderr: &str) {
    let ended = regex::Regex::new(
        r"^patchgate: (.+): (exit \d+.*|timed out after .*|killed by signal .*|ended without an exit code|.*ended by the room.*) \(\d+\.\d s\)$",
    )
    .unwrap();
    let mut planned: Vec<&str> = plan
        .lines()
        .filter_map(|l| l.strip_prefix("  run: "))
        .collect();
    assert!(!planned.is_empty(), "{plan}");
    let mut ran = Vec::new();
    for line in stderr.lines() {
        let Some(c) = ended.captures(line) else {
            continue;
        };
        let label = c.get(1).unwrap().as_str();
        ran.push(label.to_owned());
        let at = planned
            .iter()
            .position(|p| p.strip_prefix(label).is_some_and(|r| r.starts_with(": ")));
        match at {
            Some(i) => {
                planned.remove(i);
            }
            None => panic!("ran but not planned: {label}\nplan:\n{plan}\nstderr:\n{stderr}"),
        }
    }
    assert!(
        planned.is_empty(),
        "planned but not run: {planned:?}\nran: {ran:?}\nplan:\n{plan}"
    );
}

#[test]
fn dry_run_prints_the_plan_and_runs_nothing() {
    require_python();
    let repo = repository("gate-python", "good-fix", |_| {});
    let g = gate(repo.path(), &["--dry-run"]);
    assert_eq!(g.exit, 0, "{}", g.stderr);
    assert!(
        g.stdout.contains("properties/test_discount_bounded.py"),
        "{}",
        g.stdout
    );
    assert!(g.stdout.contains("t2-fixtures"), "{}", g.stdout);
    assert!(g.ledger.is_empty());
    assert!(!repo.path().join(".patchgate").exists(), "nothing ran");
    // Issue 51: the plan is what a gate of the same patch runs, run for one run, at one job
    // and at three.
    for jobs in ["1", "3"] {
        let plan = gate(repo.path(), &["--dry-run", "--jobs", jobs]).stdout;
        let real = gate(repo.path(), &["--jobs", jobs]);
        expect(&real, "MERGE_OK", "all-gates-held", 0);
        assert_plan_is_what_ran(&plan, &real.stderr);
    }
}

#[test]
fn the_config_comes_from_the_base_and_a_bad_one_is_one_line() {
    require_python();
    // The patch loosens its own gate (a suite that always passes): the base's config is the
    // one read, and the edit is a guard hit.
    let repo = repository("gate-python", "broken-case", |dir| {
        let toml = std::fs::read_to_string(dir.join("patchgate.toml")).unwrap();
        let loose = toml.replace(&suite_command(), "command = [\"true\"]");
        assert_ne!(toml, loose);
        std::fs::write(dir.join("patchgate.toml"), loose).unwrap();
    });
    let g = gate(repo.path(), &[]);
    escalates(&g, "guarded-input-edited", "guarded-input-edited");
    assert_eq!(
        step(&g.answer, "guard")["hits"][0]["file"],
        "patchgate.toml"
    );

    // A base config with a typo: exit 65, one line naming the key.
    let tmp = common::git_repo();
    copy_tree(&example("gate-python").join("repo"), tmp.path());
    let toml = std::fs::read_to_string(tmp.path().join("patchgate.toml")).unwrap();
    std::fs::write(
        tmp.path().join("patchgate.toml"),
        toml.replace("debt_cap = 5", "debt_cpa = 5"),
    )
    .unwrap();
    commit(tmp.path(), "base");
    let g = gate(tmp.path(), &[]);
    assert_eq!(g.exit, 65, "{}", g.stderr);
    assert_eq!(g.stderr.lines().count(), 1, "{}", g.stderr);
    assert!(g.stderr.contains("debt_cpa"), "{}", g.stderr);
}

/// The Rust example's config before receipts and the build step: exit codes read as they are.
fn rust_receipts_off(dir: &Path) {
    let config = dir.join("patchgate.toml");
    let text = std::fs::read_to_string(&config).expect("config");
    let at = text.find("\n[build]\n").expect("the build step") + 1;
    let old = r#"[properties]
command = ["cargo", "test", "--quiet", "--offline", "--test", "properties", "--", "--exact", "{id}"]
runs = 2
timeout_s = 300
catch = [101]

[suite]
command = ["cargo", "test", "--quiet", "--offline", "--test", "cases"]
timeout_s = 300
catch = [101]
"#;
    std::fs::write(&config, format!("{}{old}", &text[..at])).expect("write");
}

/// `examples/gate-rust` with `cargo test` (catch 101), its receipts (libtest's JUnit output)
/// and its build step. `does-not-compile`: read by exit code, cargo's 101 for a compile error
/// was a "broken invariant" (BLOCK invariant-or-over-specified-property, which invites
/// weakening the property); the build step says what it is (BLOCK does-not-build, the
/// compiler's last lines in the step). `exits-early`: the library leaves with exit 0 when run
/// from a test binary (`/deps/` in its path; `exit(done)`, so no `[suspicious]` pattern sees
/// it), beside a real bug a plain `cargo test` no longer shows: merged by exit code, no verdict
/// with receipts (the test binaries wrote no report).
#[test]
fn a_rust_repository_fails_with_101_and_that_is_a_catch() {
    let target = tempfile::tempdir().expect("tempdir");
    type Case = (&'static str, bool, &'static str, &'static str, i32);
    let cases: [Case; 8] = [
        (
            "broken-invariant",
            true,
            "BLOCK",
            "invariant-or-over-specified-property",
            1,
        ),
        ("good-fix", true, "MERGE_OK", "all-gates-held", 0),
        (
            "does-not-compile",
            false,
            "BLOCK",
            "invariant-or-over-specified-property",
            1,
        ),
        ("does-not-compile", true, "BLOCK", "does-not-build", 1),
        ("exits-early", false, "MERGE_OK", "all-gates-held", 0),
        ("exits-early", true, "ESCALATE", "inadmissible-evidence", 2),
        // Issue 50: a bug (no parts: the whole budget in one share) with the unit test in
        // `src/lib.rs` and the doctest edited to match (a plain `cargo test` passes). The test
        // lines run as the base has them: the unit test fails, and it is a test the patch
        // changes (issue 65): a declared behaviour change, ESCALATE `changed-test-fails`.
        (
            "edits-unit-test",
            true,
            "ESCALATE",
            "inadmissible-evidence",
            2,
        ),
        // Issue 50: an honest change with the integration test that shows it: the new test
        // binary runs apart (`[suite] added`, `--test more_cases`) and passes, and it merges.
        ("adds-test", true, "MERGE_OK", "all-gates-held", 0),
    ];
    for (patch, receipts, disposition, reason, exit) in cases {
        let repo = if receipts {
            repository("gate-rust", patch, |_| {})
        } else {
            repository_with("gate-rust", patch, rust_receipts_off, |_| {})
        };
        let mut cmd = patchgate();
        let out = cmd
            .current_dir(repo.path())
            .args(["gate", "--base", "main", "--json"])
            .env("CARGO_TARGET_DIR", target.path())
            .env_remove("GITHUB_ACTIONS")
            .output()
            .expect("run");
        let answer: Value = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
        assert_eq!(
            out.status.code(),
            Some(exit),
            "{patch} {receipts}: {}\n{answer}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(answer["disposition"], disposition, "{patch} {receipts}");
        assert_eq!(answer["reason"], reason, "{patch} {receipts}");
        assert_eq!(
            answer.get("cause").and_then(Value::as_str),
            match (exit, patch) {
                (2, "edits-unit-test") => Some("changed-test-fails"),
                (2, _) => Some("nothing-ran"),
                _ => None,
            },
            "{patch} {receipts}"
        );
        if patch == "adds-test" {
            assert_eq!(
                step(&answer, "scope")["added"],
                serde_json::json!(["tests/more_cases.rs"]),
                "{answer}"
            );
            let t2 = step(&answer, "fixtures")["summary"].to_string();
            assert!(t2.contains("run in a process of their own, passed"), "{t2}");
        }
        if patch == "edits-unit-test" {
            assert_eq!(
                step(&answer, "scope")["from_base"],
                serde_json::json!(["src/lib.rs"]),
                "{answer}"
            );
            let failed = step(&answer, "fixtures")["failed_tests"].to_string();
            assert!(failed.contains("no_parts_no_shares"), "{failed}");
            assert_eq!(
                step(&answer, "fixtures")["changed_tests"][0]["id"],
                "tests::no_parts_no_shares",
                "{answer}"
            );
        }
        if patch == "broken-invariant" {
            let t1 = step(&answer, "properties");
            assert_eq!(t1["reason"], "stable-failure");
            // Giving the whole remainder to the first share still adds up; it is not fair,
            // and cargo's 101 is read as the catch it is, its failure listed in the receipt.
            let states: Vec<(&str, &str)> = t1["properties"]
                .as_array()
                .unwrap()
                .iter()
                .map(|p| (p["id"].as_str().unwrap(), p["state"].as_str().unwrap()))
                .collect();
            assert_eq!(
                states,
                [("split_adds_up", "pass"), ("split_is_fair", "fail")]
            );
            assert_eq!(t1["receipts"], "on");
            assert!(
                answer["failures"][0]["id"]
                    .as_str()
                    .is_some_and(|id| id.ends_with("split_is_fair")),
                "{answer}"
            );
        }
        if reason == "does-not-build" {
            let build = step(&answer, "build");
            assert!(
                build["tail"].as_str().unwrap().contains("mismatched types"),
                "{build}"
            );
        }
        if patch == "exits-early" && receipts {
            let t1 = step(&answer, "properties");
            assert!(
                t1["unvouched"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .all(|u| u["gap"] == "nothing-ran"),
                "{t1}"
            );
        }
    }
}

#[test]
fn init_writes_a_starter_that_the_gate_reads() {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = patchgate()
        .current_dir(dir.path())
        .arg("init")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    // Issue 50: the next steps are true for the starter: its build keeps no cache, so no
    // `patchgate warm` (which would exit 65); the Rust starter's does (below).
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(
        said.contains("then `patchgate census --write`") && !said.contains("warm"),
        "{said}"
    );
    let text = std::fs::read_to_string(dir.path().join("patchgate.toml")).unwrap();
    assert_eq!(
        replay_commented(&text),
        std::fs::read_to_string(example("gate-python").join("repo/patchgate.toml")).unwrap(),
        "the example's config is the starter, its [replay] block commented"
    );
    // The canary beside it: the example's imports its package.
    let canary = std::fs::read_to_string(dir.path().join("properties/patchgate_canary.py"))
        .expect("the canary");
    assert_eq!(
        canary.replace(
            "# import mypackage  # noqa: F401  (your package: make the canary see what it does at import)",
            "import shop  # noqa: F401  (the package: the canary sees what it does at import)"
        ),
        std::fs::read_to_string(
            example("gate-python").join("repo/properties/patchgate_canary.py")
        )
        .unwrap()
    );
    // The package marker that makes the root importable under `-P` (rootdir-based import).
    assert_eq!(
        std::fs::read_to_string(dir.path().join("properties/__init__.py")).unwrap(),
        ""
    );
    // A second init refuses to overwrite (64); --force overwrites.
    patchgate()
        .current_dir(dir.path())
        .arg("init")
        .assert()
        .code(64);
    patchgate()
        .current_dir(dir.path())
        .args(["init", "--force"])
        .assert()
        .code(0);
    // Admission is off by default, explained where it is set; --require-admission turns it on.
    assert!(text.contains("\nrequire_admission = false\n"), "{text}");
    assert!(text.contains("# Admission (off by default)"), "{text}");
    patchgate()
        .current_dir(dir.path())
        .args(["init", "--force", "--require-admission"])
        .assert()
        .code(0);
    let on = std::fs::read_to_string(dir.path().join("patchgate.toml")).unwrap();
    assert_eq!(
        on,
        text.replace("require_admission = false", "require_admission = true")
    );
}

/// Issue 35: `init --rust` on a crate with `autotests = false` says what the canary needs (a
/// `[[test]]` entry): otherwise the canary is no test target, and the gate would blame the
/// first patch (`checker-neutered`). Once declared, it says nothing.
#[test]
fn init_rust_sees_autotests_off() {
    let dir = tempfile::tempdir().expect("tempdir");
    let manifest =
        "[package]\nname = \"x\"\nversion = \"0.1.0\"\nedition = \"2021\"\nautotests = false\n";
    std::fs::write(dir.path().join("Cargo.toml"), manifest).unwrap();
    let out = patchgate()
        .current_dir(dir.path())
        .args(["init", "--rust"])
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{said}");
    assert!(said.contains("then `patchgate warm`"), "{said}");
    assert!(
        said.contains("autotests = false")
            && said.contains(
                "[[test]]\nname = \"patchgate_canary\"\npath = \"tests/patchgate_canary.rs\""
            ),
        "{said}"
    );
    std::fs::write(
        dir.path().join("Cargo.toml"),
        format!("{manifest}\n[[test]]\nname = \"patchgate_canary\"\npath = \"tests/patchgate_canary.rs\"\n"),
    )
    .unwrap();
    let out = patchgate()
        .current_dir(dir.path())
        .args(["init", "--rust", "--force"])
        .output()
        .unwrap();
    assert!(!String::from_utf8_lossy(&out.stderr).contains("autotests"));
}

// ---------------------------------------------------------------------------------------------
// Admission (CONTRACT.md section 10) on the same repository: each mutant patch deletes one
// invariant and changes nothing else.

/// The example repository on `main` (checked out), with a branch per mutant patch.
fn admission_repository(mutants: &[&str]) -> tempfile::TempDir {
    let tmp = common::git_repo();
    let dir = tmp.path();
    copy_tree(&example("gate-python").join("repo"), dir);
    commit(dir, "base");
    for m in mutants {
        git(dir, &["checkout", "-q", "-b", m, "main"]);
        apply(
            dir,
            &example("gate-python")
                .join("patches")
                .join(format!("{m}.patch")),
        );
        commit(dir, m);
    }
    git(dir, &["checkout", "-q", "main"]);
    tmp
}

fn admit(dir: &Path, tmpdir: &Path, args: &[&str]) -> (i32, Value, String) {
    let out = patchgate()
        .current_dir(dir)
        .env("TMPDIR", tmpdir)
        .env("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
        .arg("admit")
        .args(args)
        .arg("--json")
        .output()
        .expect("run patchgate");
    (
        out.status.code().unwrap_or(-1),
        serde_json::from_slice(&out.stdout).unwrap_or(Value::Null),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn admission_with_real_mutants() {
    require_python();
    let repo = admission_repository(&[
        "mutant-discount-bounded",
        "mutant-slug-lowercase",
        "mutant-currency-symbol",
    ]);
    let dir = repo.path();
    let tmp = tempfile::tempdir().expect("tempdir");
    let head = git(dir, &["rev-parse", "HEAD"]);
    // (check, mutant, exit, outcome, reason, base state, mutant state)
    type Case<'a> = (
        &'a [&'a str],
        &'a str,
        i32,
        &'a str,
        &'a str,
        &'a str,
        &'a str,
    );
    let cases: [Case; 5] = [
        // The division that keeps a discounted price within the price, deleted: the property
        // catches it.
        (
            &["discount_bounded"],
            "mutant-discount-bounded",
            0,
            "admitted",
            "two-commit-proof",
            "pass",
            "fail",
        ),
        // slugify no longer lowercases, yet `slug == slug.lower()` still holds (the regex only
        // keeps lowercase letters): the property checks a tautology of the code.
        (
            &["slug_is_lowercase"],
            "mutant-slug-lowercase",
            1,
            "rejected",
            "tautology",
            "pass",
            "pass",
        ),
        // Its file collects no test (pytest exit 5): the harness, not a verdict.
        (
            &["slug_is_stable"],
            "mutant-slug-lowercase",
            2,
            "inconclusive",
            "harness-error",
            "error",
            "error",
        ),
        // The frozen property fails on the base itself.
        (
            &["slug_never_empty"],
            "mutant-slug-lowercase",
            1,
            "rejected",
            "fails-on-base",
            "fail",
            "fail",
        ),
        // A test proven the same way: the seeded bug the freeze rule asks for.
        (
            &["--test", "tests.test_legacy::test_legacy_export"],
            "mutant-currency-symbol",
            0,
            "admitted",
            "two-commit-proof",
            "pass",
            "fail",
        ),
    ];
    for (check, mutant, exit, outcome, reason, base_state, mutant_state) in cases {
        let mut args = check.to_vec();
        args.extend(["--mutant", mutant]);
        let (code, answer, stderr) = admit(dir, tmp.path(), &args);
        let case = format!("{check:?} vs {mutant}");
        assert_eq!(code, exit, "{case}: {answer}\n{stderr}");
        assert_eq!(answer["outcome"], outcome, "{case}");
        assert_eq!(answer["reason"], reason, "{case}");
        assert_eq!(answer["base_state"], base_state, "{case}");
        assert_eq!(answer["mutant_state"], mutant_state, "{case}");
        assert_eq!(
            answer["seal"]["match"], true,
            "{case}: the mutants leave the fixtures alone"
        );
        assert_untouched(dir, tmp.path(), &head);
    }

    // --write: the proof lands in the catalog row; the only change is the catalog.
    let (code, answer, stderr) = admit(
        dir,
        tmp.path(),
        &[
            "discount_bounded",
            "--mutant",
            "mutant-discount-bounded",
            "--write",
        ],
    );
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(
        git(dir, &["status", "--porcelain", "--untracked-files=all"]),
        "M catalog.yaml\n?? mutants/discount_bounded.diff"
    );
    // The stored mutant is the mutant commit's diff from the base.
    let stored = std::fs::read_to_string(dir.join("mutants/discount_bounded.diff")).unwrap();
    assert!(
        stored.contains(
            "-    return cents * (100 - percent) // 100\n+    return cents * (100 - percent)\n"
        ),
        "{stored}"
    );
    let catalog: Value =
        serde_norway::from_str(&std::fs::read_to_string(dir.join("catalog.yaml")).unwrap())
            .unwrap();
    assert_eq!(catalog["properties"][0]["id"], "discount_bounded");
    assert_eq!(catalog["properties"][0]["admitted"], answer["record"]);

    // The gate with admission required, from the base: commit the record and the switch.
    let config = std::fs::read_to_string(dir.join("patchgate.toml")).unwrap();
    std::fs::write(
        dir.join("patchgate.toml"),
        config.replace("require_admission = false", "require_admission = true"),
    )
    .unwrap();
    commit(dir, "require admission; discount_bounded admitted");
    git(dir, &["checkout", "-q", "-b", "patch"]);
    apply(dir, &example("gate-python").join("patches/good-fix.patch"));
    commit(dir, "good-fix");
    // The plan says who would vote as weak.
    let plan = patchgate()
        .current_dir(dir)
        .args(["gate", "--base", "main", "--dry-run"])
        .output()
        .unwrap();
    let plan = String::from_utf8_lossy(&plan.stdout);
    assert!(
        plan.contains("admission is required: 1 in locality without a proof would vote as weak: discount_monotonic"),
        "{plan}"
    );
    // discount_bounded (admitted) fills the quorum; discount_monotonic votes as weak.
    let md = tmp.path().join("../report.md");
    let _ = std::fs::remove_file(&md);
    let g = gate(dir, &["--markdown-out", md.to_str().unwrap()]);
    expect(&g, "MERGE_OK", "all-gates-held", 0);
    // Issue 51: the plan named the reading and the re-proof, and its runs are the runs the
    // gate made, one for one.
    assert!(plan.contains("\n  test-aware: "), "{plan}");
    assert!(
        plan.contains("\n  run: re-proof discount_bounded (its assertions turned): "),
        "{plan}"
    );
    assert_plan_is_what_ran(&plan, &g.stderr);
    let unproven: Vec<&str> = step(&g.answer, "properties")["properties"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| p["unproven"] == true)
        .map(|p| p["id"].as_str().unwrap())
        .collect();
    assert_eq!(
        unproven,
        [
            "discount_monotonic",
            "sort_is_ordered",
            "sort_is_permutation",
            "slug_is_stable",
            "slug_never_empty",
            "export_has_two_fields"
        ]
    );
    let report = std::fs::read_to_string(&md).unwrap();
    let _ = std::fs::remove_file(&md);
    assert!(
        report.contains("### Unproven strong properties"),
        "{report}"
    );
    assert!(
        report.contains("- `discount_monotonic` (in locality)"),
        "{report}"
    );
    // The good fix adds a line beside the one the mutant changes: as written the mutant does
    // not apply, nor by a three-way merge (adjacent changes conflict); the line it removes is
    // still there, so it applies with its context loosened, and the re-proof ran (11.10).
    assert!(
        g.stderr.contains("applied with its context loosened"),
        "{}",
        g.stderr
    );
    assert!(
        step(&g.answer, "reproof")["summary"]
            .as_str()
            .is_some_and(|s| s.contains("discount_bounded failed with its assertions turned")),
        "{}",
        g.answer
    );
    // Issue 50: the re-proof's expected failure is headed as one, never read as a fault.
    assert!(
        g.stderr.contains(
            "re-proof discount_bounded (its assertions turned): its output follows; it must fail"
        ),
        "{}",
        g.stderr
    );

    // An honest patch that rewrites the very line the mutant changes: the mutant cannot apply
    // to this tree, no re-proof ran, and the only candidate is used up: ESCALATE
    // checker-unproven, the report saying to admit the property again (11.10).
    git(dir, &["checkout", "-q", "-b", "rewrites", "main"]);
    let pricing = std::fs::read_to_string(dir.join("shop/pricing.py")).unwrap();
    std::fs::write(
        dir.join("shop/pricing.py"),
        pricing.replace(
            "    return cents * (100 - percent) // 100",
            "    return (cents * (100 - percent)) // 100",
        ),
    )
    .unwrap();
    commit(dir, "the same arithmetic, parenthesised");
    let g = gate(dir, &["--markdown-out", md.to_str().unwrap()]);
    escalates(&g, "checker-unproven", "checker-unproven");
    let summary = step(&g.answer, "reproof")["summary"].clone();
    assert!(
        summary
            .as_str()
            .is_some_and(|s| s.contains("no re-proof could run: discount_bounded")
                && s.contains("does not apply")),
        "{summary}"
    );
    let report = std::fs::read_to_string(&md).unwrap();
    let _ = std::fs::remove_file(&md);
    assert!(
        report.contains("(cause `checker-unproven`)")
            && report.contains("admit the property again"),
        "{report}"
    );
    git(dir, &["checkout", "-q", "patch"]);

    // Issue 50: the record holds its property's source digest. The base edits the property's
    // source after the admission (a reviewed commit): the record proves nothing about the
    // property as it is now, so it votes as unadmitted until admitted again, and the good fix
    // that merged above has no strong voter. (Before, the old proof kept voting.)
    assert!(
        catalog["properties"][0]["admitted"]["source"]
            .as_str()
            .is_some_and(|s| s.len() == 64),
        "{catalog}"
    );
    let main_before = git(dir, &["rev-parse", "main"]);
    let patch_before = git(dir, &["rev-parse", "patch"]);
    git(dir, &["checkout", "-q", "main"]);
    let property = dir.join("properties/test_discount_bounded.py");
    let text = std::fs::read_to_string(&property).unwrap();
    std::fs::write(
        &property,
        format!("{text}\n# The bound, as the pricing rules state it.\n"),
    )
    .unwrap();
    commit(dir, "the property's source edited on the base");
    git(dir, &["checkout", "-q", "patch"]);
    git(dir, &["rebase", "-q", "main"]);
    let g = gate(dir, &[]);
    escalates(&g, "inadmissible-evidence", "empty-quorum");
    assert!(
        step(&g.answer, "properties")["summary"]
            .as_str()
            .is_some_and(|s| s
                .contains("admitted before its source changed (admit it again): discount_bounded")),
        "{}",
        g.answer
    );
    git(dir, &["branch", "-f", "main", main_before.trim()]);
    git(dir, &["reset", "-q", "--hard", patch_before.trim()]);

    // Without the record, the same patch has no strong voter: an empty quorum, never a merge.
    git(dir, &["checkout", "-q", "main"]);
    let text = std::fs::read_to_string(dir.join("catalog.yaml")).unwrap();
    let without: String = text
        .lines()
        .filter(|l| !l.trim_start().starts_with("admitted:"))
        .map(|l| format!("{l}\n"))
        .collect();
    std::fs::write(dir.join("catalog.yaml"), without).unwrap();
    commit(dir, "the record removed");
    git(dir, &["checkout", "-q", "patch"]);
    git(dir, &["rebase", "-q", "main"]);
    let g = gate(dir, &[]);
    escalates(&g, "inadmissible-evidence", "empty-quorum");
    assert_eq!(step(&g.answer, "properties")["reason"], "empty-quorum");
}

/// Issue 23, bug 1: with `--server`, the server's settings decide what runs. The base config
/// names no debt cap and the base ledger holds six counted freezes: a server started with a
/// cap of 10 lets the patch through to its properties and suite. (Before, the runner planned
/// with its own cap of 5, ran nothing, and the server answered ESCALATE evidence-gap with
/// `property_check: missing`.)
#[test]
fn with_a_server_its_debt_cap_decides_what_runs() {
    require_python();
    let server = TestServer::start_with(patchgate::http::Settings {
        debt_cap: 10,
        ..patchgate::http::Settings::default()
    });
    let no_cap = |dir: &Path| {
        let config = dir.join("patchgate.toml");
        let text = std::fs::read_to_string(&config).expect("config");
        assert!(
            text.contains("\ndebt_cap = 5\n"),
            "the example names its cap"
        );
        std::fs::write(&config, text.replace("\ndebt_cap = 5\n", "\n")).expect("write");
    };
    let repo = repository_with("gate-python", "debt-over-cap", no_cap, |_| {});
    let remote = gate(repo.path(), &["--server", &server.url("")]);
    let debt = step(&remote.answer, "debt");
    assert_eq!(
        (&debt["counted"], &debt["cap"]),
        (&Value::from(6), &Value::from(10))
    );
    let t1 = step(&remote.answer, "properties");
    assert_eq!(t1["ran"], true, "stderr:\n{}", remote.stderr);
    assert_ne!(t1["verdict"], "missing", "{}", remote.answer);
    assert_ne!(remote.answer["reason"], "evidence-gap", "{}", remote.answer);
    assert_eq!(tiers(&remote)[0].0, "t1-properties", "{}", remote.stderr);
    // The same repository gated locally stops the queue (the CLI's default cap is 5) and runs
    // nothing.
    let local = gate(repo.path(), &[]);
    expect(&local, "STOP_QUEUE", "debt-over-cap", 3);
    assert!(local.ledger.is_empty());
}

/// Issue 23, bug 2: the ladder-ledger rows carry the verdicts of the answer. A suite that
/// exits 0 while its JUnit report lists a failure is an error (ESCALATE); its t2 row says
/// `error` too (before, the runner classified the exit code again and wrote `pass`).
#[test]
fn the_ledger_rows_say_what_the_answer_says() {
    require_python();
    let exits_zero = |dir: &Path| {
        let config = dir.join("patchgate.toml");
        let text = std::fs::read_to_string(&config).expect("config");
        assert!(
            text.contains(&suite_command()),
            "the example's suite command"
        );
        let swallowed = r#"command = ["sh", "-c", "python3 -P -m pytest -q -p no:cacheprovider --junitxml={junit} tests; exit 0"]"#;
        // (Not `python -m pytest`: a suite the runner cannot observe, observing off.)
        let text = observe_off(&text);
        std::fs::write(&config, text.replace(&suite_command(), swallowed)).expect("write");
    };
    let repo = repository_with("gate-python", "broken-case", exits_zero, |_| {});
    let g = gate(repo.path(), &[]);
    let t2 = step(&g.answer, "fixtures");
    assert_eq!(
        (&t2["exit_code"], &t2["tier"]),
        (&Value::from(0), &Value::from("error")),
        "{}",
        g.answer
    );
    escalates(&g, "inadmissible-evidence", "exit-disagrees");
    assert_eq!(
        tiers(&g),
        [
            ("t1-properties".into(), "pass".into()),
            ("t2-fixtures".into(), "error".into())
        ]
    );
}

/// Issue 24 (section 12.3): a patch that hides a real bug behind a root-level `pytest.py`
/// (`python3 -m pytest` imports it before the installed pytest, and it exits 0) made every
/// property and the suite "pass": MERGE_OK with the broken-case bug in. A root-level module is
/// a toolchain file, so a scope hit: the property tier cannot vouch. And the starter's `-P`
/// keeps the working directory off the import path, so the real pytest runs the suite and
/// catches the bug: BLOCK.
#[test]
fn a_patch_shadowing_pytest_blocks() {
    let (_repo, g) = python("shadows-pytest");
    expect(&g, "BLOCK", "concrete-behavior", 1);
    let scope = step(&g.answer, "scope");
    assert!(
        scope["scope_hits"]
            .as_array()
            .unwrap()
            .contains(&Value::from("pytest.py")),
        "{}",
        g.answer
    );
    assert_eq!(step(&g.answer, "properties")["ran"], false);
}

/// Issue 24 (section 12.3): the broken-case bug, committed with a hash-unchecked `.pyc` of
/// the base's source. Python loads such bytecode without looking at the source, so a plain
/// `python3 -m pytest` passes and the gate said MERGE_OK while the bug lands. A compiled file
/// is `binary-added`: ESCALATE, nothing run.
#[test]
fn a_patch_committing_bytecode_of_the_old_source_escalates() {
    require_python();
    let repo = repository("gate-python", "broken-case", |dir| {
        let old = git(dir, &["show", "HEAD:shop/pricing.py"]);
        let scratch = tempfile::tempdir().expect("tempdir");
        let source = scratch.path().join("pricing.py");
        std::fs::write(&source, old + "\n").expect("write");
        let compiled = std::process::Command::new("python3")
            .current_dir(dir)
            .args([
                "-c",
                "import importlib.util, py_compile, sys\n\
                 c = importlib.util.cache_from_source('shop/pricing.py')\n\
                 py_compile.compile(sys.argv[1], cfile=c, dfile='shop/pricing.py', \
                 invalidation_mode=py_compile.PycInvalidationMode.UNCHECKED_HASH)\n\
                 print(c)",
            ])
            .arg(&source)
            .output()
            .expect("python3");
        assert!(compiled.status.success(), "{compiled:?}");
        let pyc = String::from_utf8(compiled.stdout).expect("utf-8");
        // The example ignores `__pycache__/`: the attacker adds it by force.
        git(dir, &["add", "-f", pyc.trim()]);
    });
    let g = gate(repo.path(), &[]);
    escalates(&g, "binary-added", "binary-added");
    let binary = step(&g.answer, "binary");
    let found: Vec<&str> = binary["binaries"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert!(
        found.len() == 1
            && found[0].starts_with("shop/__pycache__/pricing.")
            && found[0].ends_with(".pyc"),
        "{}",
        g.answer
    );
    assert!(g.ledger.is_empty(), "nothing may run");
}

// ---------------------------------------------------------------------------------------------
// The clean room (CONTRACT.md section 12): each attack first shown to work the old way
// (`[sandbox] mode = "off"`, or a plain pytest of the worktree), then stopped.

/// `reaches-the-runner`: the broken-invariant bug, and a package that, once imported by a
/// test run, finds the `patchgate gate` it runs under, outlives it in a session of its own and
/// writes MERGE_OK into its `--json-out` file after it answered BLOCK. Unconfined, the answer
/// file a merge bot reads said MERGE_OK within seconds (this test asserted so with
/// `mode = "off"` at 615e5af). In the sandbox the run cannot see the runner, and nothing it
/// started outlives it; unconfined, the runner is now the subreaper of its runs and kills the
/// daemon when the run ends (section 11.4). Either way the file says BLOCK.
#[test]
fn a_payload_cannot_forge_the_answer_after_the_gate() {
    require_python();
    for (mode, forged) in [("off", false), ("required", false)] {
        let repo = repository_with(
            "gate-python",
            "reaches-the-runner",
            sandbox_mode(mode),
            |_| {},
        );
        let out_dir = tempfile::tempdir().expect("tempdir");
        let answer = out_dir.path().join("answer.json");
        let out = patchgate()
            .current_dir(repo.path())
            .args(["gate", "--base", "main", "--json-out"])
            .arg(&answer)
            .env_remove("GITHUB_ACTIONS")
            .output()
            .expect("run");
        assert_eq!(
            (
                out.status.code(),
                String::from_utf8_lossy(&out.stdout).as_ref()
            ),
            (
                Some(1),
                "BLOCK reason=invariant-or-over-specified-property\n"
            ),
            "{mode}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let says_merge = || {
            std::fs::read_to_string(&answer)
                .unwrap_or_default()
                .contains("MERGE_OK")
        };
        let waited = std::time::Instant::now();
        while !says_merge() && waited.elapsed() < std::time::Duration::from_secs(3) {
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        assert_eq!(
            says_merge(),
            forged,
            "{mode}: the answer file after the gate"
        );
    }
}

/// `poisons-the-checkout`, then a patch that is only a bug, gated one after the other in the
/// same checkout. The first (a harmless fix) plants a `post-checkout` hook in the checkout the
/// gate works in, which puts the base's `shop/pricing.py` back after every checkout: once the
/// next patch is checked out its bug is gone from the worktree, and a plain pytest there passes.
/// In the sandbox the hook is never planted; and the gate judges git's objects, not the
/// worktree, so even after an unconfined run the bug is judged: BLOCK.
#[test]
fn a_poisoned_checkout_cannot_merge_the_next_patch() {
    require_python();
    for mode in ["off", "required"] {
        let repo = repository_with(
            "gate-python",
            "poisons-the-checkout",
            sandbox_mode(mode),
            |_| {},
        );
        let dir = repo.path();
        git(dir, &["checkout", "-q", "-b", "bug", "main"]);
        apply(
            dir,
            &example("gate-python").join("patches/broken-case.patch"),
        );
        commit(dir, "only a bug");
        git(dir, &["checkout", "-q", "patch"]);
        let first = gate(dir, &[]);
        expect(&first, "MERGE_OK", "all-gates-held", 0);
        let hook = dir.join(".git/hooks/post-checkout");
        assert_eq!(hook.exists(), mode == "off", "{mode}: the hook");
        git(dir, &["checkout", "-q", "bug"]);
        // The attack, unconfined: the worktree no longer holds the bug.
        assert_eq!(plain_pytest_passes(dir), mode == "off", "{mode}");
        let second = gate(dir, &[]);
        expect(&second, "BLOCK", "concrete-behavior", 1);
    }
}

/// `launders-frozen-failure`: the broken-case bug, and a package that, when the test run
/// exits, renames every failing case in the JUnit report to the frozen test
/// `tests.test_legacy::test_legacy_export` (exit 1 kept). The report then blames only a
/// frozen test, so the failure was discarded: MERGE_OK. Now it is discarded only if the suite
/// passes without that test (section 12.4): it does not, and the failure counts. With the
/// census (section 11.2) it is seen earlier: the renamed case vanished.
#[test]
fn a_failure_laundered_as_frozen_still_blocks() {
    require_python();
    // With the census, the renamed case is a test the base ran that did not run: no verdict.
    let (_repo, g) = python("launders-frozen-failure");
    escalates(&g, "inadmissible-evidence", "vanished-tests");
    assert_eq!(
        step(&g.answer, "fixtures")["vanished"],
        serde_json::json!(["tests.test_cases::test_case[discount_half]"])
    );
    // Without it, the re-run without the frozen test fails, and the failure counts.
    let repo = repository_with("gate-python", "launders-frozen-failure", census_off, |_| {});
    let g = gate(repo.path(), &[]);
    expect(&g, "BLOCK", "concrete-behavior", 1);
    let t2 = step(&g.answer, "fixtures");
    // The laundered report: it names only the frozen test, as the old gate read it.
    assert_eq!(
        t2["failed_tests"],
        serde_json::json!(["tests.test_legacy::test_legacy_export"])
    );
    assert_eq!(t2["discarded"], serde_json::json!([]));
    assert!(
        t2["summary"]
            .as_str()
            .unwrap()
            .contains("re-run without them did not pass (exit 1)"),
        "{t2}"
    );
}

/// `links-out`: the broken-case bug, and `.patchgate` committed as a symbolic link to
/// `/tmp/patchgate-victim`, where a config that keeps the suite's report in the tree
/// (`[suite] junit`, no receipt) has it written. Unconfined, the run wrote through it outside
/// the checkout. In the sandbox every path but the copy is read-only (and `/tmp` its own):
/// nothing is written outside, the runner reads no report through the link, and the bug still
/// blocks. (With the starter's receipts the report is never in the tree at all.)
#[test]
fn a_committed_link_out_of_the_tree_writes_nothing_outside() {
    require_python();
    let victim = Path::new("/tmp/patchgate-victim");
    for (mode, written) in [("off", true), ("required", false)] {
        let _ = std::fs::remove_dir_all(victim);
        std::fs::create_dir_all(victim).expect("victim");
        let repo = repository_with(
            "gate-python",
            "links-out",
            |dir: &Path| {
                report_in_tree(dir);
                sandbox_mode(mode)(dir);
            },
            |_| {},
        );
        let g = gate(repo.path(), &[]);
        expect(&g, "BLOCK", "concrete-behavior", 1);
        assert_eq!(
            victim.join("junit.xml").exists(),
            written,
            "{mode}: {}",
            g.stderr
        );
        assert!(
            g.stderr.contains("through the symbolic link"),
            "{mode}: {}",
            g.stderr
        );
    }
    let _ = std::fs::remove_dir_all(victim);
}

/// `stale-base`: prices print their cents padded with a space (`$12. 5`), forked before the
/// base gained `tests/test_format.py`, which catches it. The head's own tests pass (the old
/// gate ran them, and diffed three-dot: MERGE_OK). The gate judges the tree that would land,
/// the merge of the head into today's base: its suite fails, BLOCK; the answer names the
/// merged tree.
#[test]
fn a_stale_fork_is_judged_with_the_tests_the_base_has_today() {
    let (repo, g) = python("stale-base");
    let dir = repo.path();
    assert!(plain_pytest_passes(dir), "the head's own tests pass");
    expect(&g, "BLOCK", "concrete-behavior", 1);
    let judged = &g.answer["judged"];
    assert_eq!(judged["head"], git(dir, &["rev-parse", "HEAD"]));
    assert_eq!(judged["base"], git(dir, &["rev-parse", "main"]));
    assert_ne!(judged["tree"], git(dir, &["rev-parse", "HEAD^{tree}"]));
    assert_eq!(
        step(&g.answer, "fixtures")["failed_tests"],
        serde_json::json!(["tests.test_format::test_cents_have_two_digits"])
    );
    // Changed files are two-dot against the merged tree: the base's new test is not the
    // patch's, so it is no scope hit.
    assert_eq!(
        step(&g.answer, "scope")["scope_hits"],
        serde_json::json!([])
    );
}

/// A patch that does not merge cleanly into today's base has no tree that would land: ESCALATE
/// `merge-conflict`, the conflicting file named, nothing run.
#[test]
fn a_patch_that_conflicts_with_the_base_escalates() {
    require_python();
    let repo = repository("gate-python", "good-fix", |_| {});
    let dir = repo.path();
    git(dir, &["checkout", "-q", "main"]);
    let pricing = dir.join("shop/pricing.py");
    let text = std::fs::read_to_string(&pricing).unwrap();
    let line = "    return cents * (100 - percent) // 100\n";
    assert!(text.contains(line));
    std::fs::write(
        &pricing,
        text.replace(
            line,
            &format!("    # Rounded down, as the fixtures pin.\n{line}"),
        ),
    )
    .unwrap();
    commit(dir, "main edits the same place");
    git(dir, &["checkout", "-q", "patch"]);
    let g = gate(dir, &[]);
    escalates(&g, "merge-conflict", "merge-conflict");
    assert_eq!(
        step(&g.answer, "merge")["conflicts"],
        serde_json::json!(["shop/pricing.py"])
    );
    assert!(!g.stderr.contains("run 1/2"), "nothing runs: {}", g.stderr);
}

/// `shadows-hypothesis`: the broken-invariant bug, and `lib/hypothesis/`, a package of the
/// same name as the property engine whose `@given` runs nothing, in a base whose `pytest.ini`
/// puts `lib` first on the import path (`pythonpath = lib`). With the old command (plugin
/// autoload off, no plugin named) the properties pass on the patch's tree: the engine is the
/// patch's. The runner asks the runs' Python what it can import, sees that
/// `lib/hypothesis` shadows an installed module, and reports it: a toolchain scope hit, so the
/// property tier cannot vouch, and the suite catches the bug. With the canary, the shadow is
/// seen first: the canary's hypothesis is the patch's, and it stops failing.
#[test]
fn a_patch_shadowing_hypothesis_on_the_pythonpath_is_a_scope_hit() {
    require_python();
    let pythonpath = |dir: &Path| {
        std::fs::write(dir.join("pytest.ini"), "[pytest]\npythonpath = lib\n").expect("write")
    };
    let repo = repository_with("gate-python", "shadows-hypothesis", pythonpath, |_| {});
    let dir = repo.path();
    let old = std::process::Command::new("python3")
        .current_dir(dir)
        .args(["-m", "pytest", "-q", "-p", "no:cacheprovider"])
        .args([
            "properties/test_discount_bounded.py",
            "properties/test_discount_monotonic.py",
        ])
        .env("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
        .output()
        .expect("python3");
    assert!(
        old.status.success(),
        "the shadow hides the bug from the properties"
    );
    // The canary imports hypothesis too, gets the shadow, and no longer fails as it must.
    let g = gate(dir, &[]);
    escalates(&g, "checker-neutered", "checker-neutered");
    // Without the canary: a toolchain scope hit, and the suite catches the bug.
    let repo = repository_with(
        "gate-python",
        "shadows-hypothesis",
        |dir: &Path| {
            pythonpath(dir);
            canary_off(dir);
        },
        |_| {},
    );
    let g = gate(repo.path(), &[]);
    expect(&g, "BLOCK", "concrete-behavior", 1);
    assert_eq!(
        step(&g.answer, "scope")["scope_hits"],
        serde_json::json!(["lib/hypothesis/__init__.py", "lib/hypothesis/strategies.py"])
    );
    // Issue 64: the step names each file with the rule that made it a hit.
    let summary = step(&g.answer, "scope")["summary"]
        .as_str()
        .unwrap_or_default();
    assert!(
        summary.contains("lib/hypothesis/__init__.py: a module the patch puts in front of one the runs' Python has installed (a shadow)"),
        "{summary}"
    );
    assert_eq!(step(&g.answer, "properties")["ran"], false);
}

/// The spelled `[suspicious] patterns` the starter had before the reading (section 11.6).
const OLD_PATTERNS: &str = r#"patterns = [
  '^\s*(import|from)\s+(pytest|_pytest|hypothesis|unittest)\b',
  '''["'](pytest|_pytest|hypothesis|unittest)["']''',
  'PYTEST_CURRENT_TEST|PYTEST_VERSION',
  'sys\.modules\b',
  '\bos\._exit\b',
  'sys\.excepthook|sys\._getframe|inspect\.(stack|currentframe)',
  '\bcfg!\s*\(\s*test\b',
  'RUST_TEST_THREADS|NEXTEST',
  'std::process::exit\s*\(\s*0\s*\)',
]"#;

/// A base edit: the gate as it was before the reading of the patch's code (CONTRACT.md
/// section 14): the old spelled patterns, and the reading's rules the attack trips accepted.
fn before_the_reading(allowed: Allowed) -> impl FnOnce(&Path) {
    move |dir| {
        // (And the canary as the file it names: its turned twin came later, issue 49. The
        // Rust starter has none.)
        let config = dir.join("patchgate.toml");
        let text = std::fs::read_to_string(&config).expect("config");
        // (Nor observing: issue 52 came later still.)
        let text = without_observe(&text);
        std::fs::write(&config, text.replace("\ntwin = true\n", "\n")).expect("write");
        allow_reading(dir, allowed);
        let config = dir.join("patchgate.toml");
        let text = std::fs::read_to_string(&config).expect("config");
        let text = match text.contains("\npatterns = []\n") {
            true => text.replacen("\npatterns = []\n", &format!("\n{OLD_PATTERNS}\n"), 1),
            false => format!("{text}{OLD_PATTERNS}\n"),
        };
        std::fs::write(&config, text).expect("write");
    }
}

/// Issue 37 (CONTRACT.md 14.1, 14.2, 14.4), on the Python example. Each patch hides the
/// broken-case bug (rounding to nearest) behind code a reviewer flags on sight, so a plain
/// pytest of the unmodified tests passes: `test-aware` asks for pytest in `sys.modules` (the
/// spelling the old patterns knew), `probe-computed-import` asks the same through
/// `getattr(__import__('s' + 'ys'), 'mod' + 'ules')`, `probe-importlib` through
/// `importlib.import_module("".join(["s", "y", "s"]))`, `probe-working-directory` by the
/// working directory, `canary-aware` by the process's arguments (checked, unless the canary
/// is the one running); `pinned-input` special-cases the one fixture input the bug would fail
/// (`(cents, percent) == (1999, 50)`); `eq-overload` hides a giveaway bug behind an `int`
/// subclass equal to everything, on one branch. Gated as before the reading (the old
/// patterns, the rules each trips accepted), every one but `test-aware` merged. Read by its
/// syntax, each ESCALATEs with the contract's reason, before anything runs, naming file, line
/// and rule. (`steers-diff-header` and `non-ascii-name` steered the old diff reader, which no
/// config brings back: `added_lines_are_read_by_the_hunk_counts` holds the new reader; here
/// they are read.)
#[test]
fn code_read_by_its_syntax_escalates_where_spelled_patterns_merged() {
    require_python();
    type Case = (
        &'static str,
        &'static str,
        u64,
        &'static str,
        &'static str,
        Allowed,
    );
    let cases: [Case; 9] = [
        (
            "test-aware",
            "shop/pricing.py",
            14,
            "interpreter",
            "test-aware-code",
            &[],
        ),
        (
            "probe-computed-import",
            "shop/pricing.py",
            12,
            "dynamic-import",
            "test-aware-code",
            &[
                ("shop/pricing.py", "dynamic-import"),
                ("shop/pricing.py", "reflection"),
                ("shop/pricing.py", "test-stack-text"),
            ],
        ),
        (
            "probe-importlib",
            "shop/pricing.py",
            14,
            "dynamic-import",
            "test-aware-code",
            &[
                ("shop/pricing.py", "dynamic-import"),
                ("shop/pricing.py", "test-stack-text"),
            ],
        ),
        (
            "probe-working-directory",
            "shop/pricing.py",
            15,
            "working-directory",
            "test-aware-code",
            &[("shop/pricing.py", "working-directory")],
        ),
        (
            "canary-aware",
            "shop/pricing.py",
            6,
            "interpreter",
            "test-aware-code",
            &[("shop/pricing.py", "interpreter")],
        ),
        (
            "pinned-input",
            "shop/pricing.py",
            12,
            "pinned-literal",
            "test-input-in-code",
            &[("shop/pricing.py", "pinned-literal")],
        ),
        (
            "eq-overload",
            "shop/pricing.py",
            6,
            "value-type-subclass",
            "equality-overload",
            &[
                ("shop/pricing.py", "comparison-method"),
                ("shop/pricing.py", "value-type-subclass"),
            ],
        ),
        (
            "steers-diff-header",
            "shop/pricing.py",
            19,
            "interpreter",
            "test-aware-code",
            &[],
        ),
        (
            "non-ascii-name",
            "shop/r\u{e9}duction.py",
            7,
            "interpreter",
            "test-aware-code",
            &[],
        ),
    ];
    for (patch, file, line, rule, reason, allowed) in cases {
        let repo = repository_read("gate-python", patch, |_| {}, |_| {});
        assert!(plain_run_passes(repo.path()), "{patch} hides its bug");
        if !allowed.is_empty() {
            let before = repository_read("gate-python", patch, before_the_reading(allowed), |_| {});
            expect(&gate(before.path(), &[]), "MERGE_OK", "all-gates-held", 0);
        }
        let g = gate(repo.path(), &[]);
        escalates(&g, reason, reason);
        assert_eq!(g.answer["rule"], "test-aware", "{patch}");
        let step = step(&g.answer, "test-aware");
        let lines = step["lines"].as_array().expect("lines");
        assert!(
            lines
                .iter()
                .any(|l| l["file"] == file && l["line"] == line && l["rule"] == rule),
            "{patch}: {step}"
        );
        if reason == "test-input-in-code" {
            assert_eq!(lines[0]["seen_in"], "fixtures/cases/discount_half.json:1");
        }
        // A reading hit does not stop the runs (CONTRACT.md section 15.5): they ran, the bug
        // stayed hidden from them, and the reading's ESCALATE stands.
        assert!(
            g.stderr.contains("run 1/2"),
            "{patch}: the runs still happen: {}",
            g.stderr
        );
    }
}

/// Issue 37 on the Rust example: `eq-overload` returns the shares as a type whose hand-written
/// `PartialEq<Vec<u64>>` compares only their count and sum, and gives the remainder to the
/// last shares (the fixtures pin the first); `pinned-input` gives the remainder to the last
/// shares too, and `match`es the three inputs the fixtures pin. A plain `cargo test` passes
/// both, and the gate as before the reading merged both. Read by its syntax: ESCALATE
/// `equality-overload` (rule `hand-written-comparison`) and `test-input-in-code` (rule
/// `rust-pinned-literal`, pinned at `fixtures/cases.txt:4`); its runs (which still happen,
/// CONTRACT.md section 15.5) pass, and the reading's ESCALATE stands.
#[test]
fn rust_overloads_and_special_cases_are_read_by_their_syntax() {
    let target = tempfile::tempdir().expect("tempdir");
    type Case = (&'static str, u64, &'static str, &'static str, Allowed);
    let cases: [Case; 2] = [
        (
            "eq-overload",
            25,
            "hand-written-comparison",
            "equality-overload",
            &[("src/lib.rs", "hand-written-comparison")],
        ),
        (
            "pinned-input",
            13,
            "rust-pinned-literal",
            "test-input-in-code",
            &[("src/lib.rs", "rust-pinned-literal")],
        ),
    ];
    let gated = |dir: &Path| {
        let out = patchgate()
            .current_dir(dir)
            .args(["gate", "--base", "main", "--json"])
            .env("CARGO_TARGET_DIR", target.path())
            .env_remove("GITHUB_ACTIONS")
            .output()
            .expect("run");
        let answer: Value = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        (out.status.code(), answer, stderr)
    };
    for (patch, line, rule, reason, allowed) in cases {
        let repo = repository_read("gate-rust", patch, |_| {}, |_| {});
        let plain = plain_cargo_test(repo.path(), target.path());
        assert!(plain.status.success(), "{patch} hides its bug: {plain:?}");
        let before = repository_read("gate-rust", patch, before_the_reading(allowed), |_| {});
        let (exit, answer, stderr) = gated(before.path());
        assert_eq!(exit, Some(0), "{patch}: {stderr}\n{answer}");
        assert_eq!(answer["disposition"], "MERGE_OK", "{patch}");
        let (exit, answer, stderr) = gated(repo.path());
        assert_eq!(exit, Some(2), "{patch}: {stderr}");
        assert_eq!(answer["reason"], reason, "{patch}");
        assert_eq!(answer["cause"], reason, "{patch}");
        let hit = &step(&answer, "test-aware")["lines"][0];
        assert_eq!(
            (&hit["file"], &hit["line"], &hit["rule"]),
            (
                &Value::from("src/lib.rs"),
                &Value::from(line),
                &Value::from(rule)
            ),
            "{patch}: {answer}"
        );
        if reason == "test-input-in-code" {
            assert_eq!(hit["seen_in"], "fixtures/cases.txt:4");
        }
        // The runs still happen (CONTRACT.md section 15.5): they pass, the bug hidden, and
        // the reading's ESCALATE stands.
        assert_eq!(
            step(&answer, "build")["exit_code"],
            0,
            "{patch}: the runs still happen: {answer}"
        );
    }
}

/// Every attack of [`READ_FIRST`], gated on the example's own config: the reading names each
/// (ESCALATE, with the reason its first class gives) unless its runs, which still happen
/// (CONTRACT.md section 15.5), show its bug: then BLOCK, the hits named too.
#[test]
fn the_reading_stops_the_older_attacks_first() {
    require_python();
    for (patch, allowed) in READ_FIRST {
        let example_name = if patch == "exits-early" {
            "gate-rust"
        } else {
            "gate-python"
        };
        let repo = repository_read(example_name, patch, |_| {}, |_| {});
        let g = gate(repo.path(), &[]);
        // Their runs still happen (CONTRACT.md section 15.5): where the room shows the bug
        // anyway, the failure answers BLOCK, the hits named; else the reading's ESCALATE.
        match patch {
            "reaches-the-runner" => expect(&g, "BLOCK", "invariant-or-over-specified-property", 1),
            "shadows-pytest" => expect(&g, "BLOCK", "concrete-behavior", 1),
            "eq-overload" => escalates(&g, "equality-overload", "equality-overload"),
            _ => escalates(&g, "test-aware-code", "test-aware-code"),
        }
        let hits: Vec<(&str, &str)> = step(&g.answer, "test-aware")["lines"]
            .as_array()
            .expect("lines")
            .iter()
            .map(|l| (l["file"].as_str().unwrap(), l["rule"].as_str().unwrap()))
            .collect();
        for (file, rule) in allowed {
            let here = (example_name == "gate-rust") == file.ends_with(".rs");
            assert!(
                !here || hits.contains(&(*file, *rule)),
                "{patch}: {file} {rule} in {hits:?}"
            );
        }
        // A reading hit does not stop the runs (CONTRACT.md section 15.5).
        assert_eq!(
            step(&g.answer, "build")["exit_code"],
            0,
            "{patch}: the runs still happen: {}",
            g.answer
        );
    }
}

/// What production computes: `shop.pricing.apply_discount(cents, percent)` run by a plain
/// `python3` in the patched checkout, no test runner loaded.
fn production_discount(dir: &Path, cents: u32, percent: u32) -> String {
    let out = std::process::Command::new("python3")
        .current_dir(dir)
        .args([
            "-c",
            &format!(
                "from shop.pricing import apply_discount; print(apply_discount({cents}, {percent}))"
            ),
        ])
        .output()
        .expect("python3");
    assert!(out.status.success(), "{out:?}");
    String::from_utf8_lossy(&out.stdout).trim().to_owned()
}

/// Issue 49 (CONTRACT.md sections 15.1, 15.2): eleven patches a third red team wrote, each
/// hiding a real bug (production computes a wrong price, shown by a plain `python3`) from a
/// plain pytest of the unmodified tests, behind a trick the reading did not list; every one
/// merged on 7d0c633 (`python3 scripts/red_team.py --binary OLD`). Eight hide what the code
/// does from the reader: a `.gitattributes` marking `*.py -diff`, a bare CR inside a comment,
/// a `# coding: utf-7` module, fullwidth identifiers that NFKC-normalise to `sys.modules`,
/// `from .cli import sys`, a `.py` link to a data file, `exec` bound to another name and fed a
/// data file, a module over the 8 MiB read limit (padded here); three ask by what no rule
/// listed (`faulthandler.is_enabled()`, `sys.modules` through `ctypes.pythonapi`, a
/// `__subclasses__()` walk to the property engine's own "discard" exception) and one overloads
/// without `class` (`type("_Invoice", (int,), {"__eq__": ...})`). Read as the interpreter
/// reads them, each ESCALATEs: `unread-code` naming the file and why, or the rule its code
/// trips, naming the line.
#[test]
fn what_the_reader_could_not_read_is_never_a_pass() {
    require_python();
    // (patch, wrong price: (cents, percent, what production answers), reason, file, rule or
    // unread reason, line).
    type Case = (
        &'static str,
        (u32, u32, &'static str),
        &'static str,
        &'static str,
        &'static str,
        u64,
    );
    let rounds = (1999, 50, "1000");
    let cases: [Case; 12] = [
        (
            "attributes-hide-lines",
            rounds,
            "test-aware-code",
            "shop/pricing.py",
            "interpreter",
            14,
        ),
        (
            "bare-carriage-return",
            rounds,
            "test-aware-code",
            "shop/pricing.py",
            "interpreter",
            14,
        ),
        (
            "utf7-cookie",
            rounds,
            "unread-code",
            "shop/pricing.py",
            "coding-cookie",
            0,
        ),
        (
            "nfkc-names",
            rounds,
            "test-aware-code",
            "shop/pricing.py",
            "interpreter",
            14,
        ),
        (
            "re-exported-sys",
            rounds,
            "test-aware-code",
            "shop/pricing.py",
            "interpreter",
            14,
        ),
        (
            "links-code-to-data",
            rounds,
            "unread-code",
            "shop/_rounding.py",
            "symbolic-link",
            0,
        ),
        (
            "exec-aliased",
            rounds,
            "test-aware-code",
            "shop/pricing.py",
            "reflection",
            6,
        ),
        (
            "over-read-limit",
            rounds,
            "unread-code",
            "shop/pricing.py",
            "over-read-limit",
            0,
        ),
        (
            "faulthandler-probe",
            rounds,
            "test-aware-code",
            "shop/pricing.py",
            "interpreter",
            14,
        ),
        (
            "ctypes-modules",
            rounds,
            "test-aware-code",
            "shop/pricing.py",
            "interpreter",
            3,
        ),
        (
            "subclass-walk",
            (1000, 95, "950"),
            "test-aware-code",
            "shop/pricing.py",
            "interpreter",
            26,
        ),
        (
            "type-call-overload",
            (1000, 100, "1000"),
            "test-aware-code",
            "shop/pricing.py",
            "reflection",
            6,
        ),
    ];
    for (patch, (cents, percent, wrong), reason, file, rule, line) in cases {
        let repo = repository_read(
            "gate-python",
            if patch == "over-read-limit" {
                "test-aware"
            } else {
                patch
            },
            |_| {},
            |dir| {
                if patch == "over-read-limit" {
                    // 8.5 MiB of comments after the code: Python reads it all.
                    use std::io::Write;
                    let mut f = std::fs::OpenOptions::new()
                        .append(true)
                        .open(dir.join("shop/pricing.py"))
                        .expect("open");
                    for i in 0..120_000 {
                        writeln!(f, "# {i:06} rounding table entry, kept for the audit trail of older invoices")
                            .expect("write");
                    }
                }
            },
        );
        let dir = repo.path();
        assert!(
            plain_run_passes(dir),
            "{patch} hides its bug from a plain pytest"
        );
        assert_eq!(
            production_discount(dir, cents, percent),
            wrong,
            "{patch}: a real bug"
        );
        let g = gate(dir, &[]);
        escalates(&g, reason, reason);
        let step = step(&g.answer, "test-aware");
        if reason == "unread-code" {
            let unread = &step["unread"][0];
            assert_eq!(
                (&unread["file"], &unread["reason"]),
                (&Value::from(file), &Value::from(rule)),
                "{patch}: {step}"
            );
        } else {
            let lines = step["lines"].as_array().expect("lines");
            assert!(
                lines
                    .iter()
                    .any(|l| l["file"] == file && l["line"] == line && l["rule"] == rule),
                "{patch}: {step}"
            );
        }
        // Unread code decides after the build, nothing run (section 15.2); a reading hit does
        // not stop the runs (section 15.5), and the reading's ESCALATE stands after them.
        assert_eq!(
            g.stderr.contains("run 1/2"),
            reason != "unread-code",
            "{patch}: {}",
            g.stderr
        );
    }
}

/// Issue 49 (CONTRACT.md section 15.4): three patches that hurt the machine on 7d0c633
/// (`python3 scripts/red_team.py --binary OLD`). `holds-memory-outside-rss` holds 200 MiB in a
/// memfd and 200 MiB in its `/tmp` for 2 s under a 256 MiB cap (the watch summed resident
/// memory only, the room's `/tmp` lived on a tmpfs sized by the disk cap): it merged, never
/// ended. `reads-toolchain-config` reads `$CARGO_HOME/config.toml` (a registry token) and
/// `$VIRTUAL_ENV/pip.conf` (an index password), reversed past the redactor, into its failure:
/// both reached the log and the answer. `terminal-escapes` prints an OSC 52 clipboard write, a
/// title and "conceal": raw on the gate's stderr. Now the first is ended `over-memory`, the
/// second finds neither file (a toolchain directory shows what runs need, never its
/// configuration), the third's escapes are shown as text.
#[test]
fn the_room_counts_what_a_run_holds_and_shows_no_configuration_and_no_escape() {
    require_python();
    // Memory held outside resident memory.
    let repo = repository_with(
        "gate-python",
        "holds-memory-outside-rss",
        |dir| {
            let config = dir.join("patchgate.toml");
            let text = std::fs::read_to_string(&config).expect("config");
            assert!(text.contains("memory_mib = 4096"), "the starter's cap");
            std::fs::write(
                &config,
                text.replace("memory_mib = 4096", "memory_mib = 256"),
            )
            .expect("write");
        },
        |_| {},
    );
    let g = gate(repo.path(), &[]);
    assert_eq!(g.answer["disposition"], "ESCALATE", "{}", g.stderr);
    let over = g.answer["room"]["over"].as_array().expect("runs ended");
    assert!(
        !over.is_empty() && over.iter().all(|o| o["limit"] == "over-memory"),
        "{over:?}"
    );

    // A toolchain's configuration, read through its directory.
    let host = tempfile::tempdir().expect("tempdir");
    let cargo = host.path().join("cargo");
    let venv = host.path().join("venv");
    std::fs::create_dir_all(cargo.join("registry/src")).expect("cargo home");
    std::fs::create_dir_all(venv.join("bin")).expect("venv");
    std::fs::create_dir_all(venv.join("lib")).expect("venv");
    let token = "cio0123456789abcdef0123456789abcdef";
    let password = "s3cr3t-pw-4242";
    std::fs::write(
        cargo.join("config.toml"),
        format!("[registry]\ntoken = \"{token}\"\n"),
    )
    .expect("write");
    std::fs::write(
        venv.join("pip.conf"),
        format!("[global]\nindex-url = https://ci:{password}@pypi.example.com/simple\n"),
    )
    .expect("write");
    std::fs::write(venv.join("pyvenv.cfg"), "home = /usr/bin\n").expect("write");
    let repo = repository_with(
        "gate-python",
        "reads-toolchain-config",
        |dir| allow_reading(dir, &[("shop/pricing.py", "environment")]),
        |_| {},
    );
    let out_dir = tempfile::tempdir().expect("tempdir");
    let md = out_dir.path().join("report.md");
    let out = patchgate()
        .current_dir(repo.path())
        .args(["gate", "--base", "main", "--json", "--markdown-out"])
        .arg(&md)
        .env("CARGO_HOME", &cargo)
        .env("VIRTUAL_ENV", &venv)
        .env("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
        .env_remove("GITHUB_ACTIONS")
        .output()
        .expect("run");
    let shown = [
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
        std::fs::read_to_string(&md).unwrap_or_default(),
    ];
    let reversed = |s: &str| s.chars().rev().collect::<String>();
    for text in &shown {
        for secret in [
            token.to_owned(),
            reversed(token),
            password.to_owned(),
            reversed(password),
        ] {
            assert!(!text.contains(&secret), "{secret} shown: {text}");
        }
    }
    assert_eq!(out.status.code(), Some(0), "nothing to raise: {}", shown[1]);

    // Terminal escapes in a run's output and its failure.
    let repo = repository("gate-python", "terminal-escapes", |_| {});
    let md = out_dir.path().join("escapes.md");
    let g = gate(
        repo.path(),
        &["--markdown-out", md.to_str().expect("utf-8")],
    );
    let md = std::fs::read_to_string(&md).expect("the report");
    assert!(md.contains("RuntimeError"), "{md}");
    for (place, text) in [
        ("log", &g.stderr),
        ("answer", &g.answer.to_string()),
        ("report", &md),
    ] {
        assert!(
            !text.contains(['\u{1b}', '\u{7}', '\u{9b}']),
            "{place} carries a raw control character"
        );
    }
    assert!(
        g.stderr.contains("\\u{1b}]52;c;"),
        "the escape is shown as text: {}",
        g.stderr
    );
}

/// A base edit: the canary as the file it names, not a property's turned twin (the starter
/// before issue 49).
fn twin_off(dir: &Path) {
    let config = dir.join("patchgate.toml");
    let text = std::fs::read_to_string(&config).expect("config");
    assert!(text.contains("\ntwin = true\n"), "the starter's twin");
    std::fs::write(&config, text.replace("\ntwin = true\n", "\n")).expect("write");
}

/// Issue 49 (CONTRACT.md section 15.3), the re-proof and the canary told apart:
/// `self-test-neuter` gives a 95% discount 95% of the price, and swallows every assertion
/// failure of a test that uses the package's functions (the canary's `n < 10` does not),
/// unless a self-test of `apply_discount` sees a mutant (the re-proof's tree always carried
/// its admission mutant). Its reading accepted, `discount_bounded` admitted: on 7d0c633 it
/// merged (the re-proof caught its mutant, since the neuter stood down for it). Now the
/// re-proof runs the judged code, byte for byte, with the property's assertions turned: the
/// self-test sees no mutant, the neuter swallows the turned property's failures, and it passes:
/// `checker-neutered` (`checker-cannot-fail`). With the starter's canary, the turned twin of a
/// property that runs, the canary stops it first (`checker-neutered`).
#[test]
fn a_neuter_cannot_tell_the_re_proof_or_the_canary_from_a_plain_run() {
    require_python();
    let read = |dir: &Path| allow_reading(dir, &[("shop/__init__.py", "interpreter")]);
    for (canary_twin, cause) in [(false, "checker-cannot-fail"), (true, "checker-neutered")] {
        let repo = repository_read(
            "gate-python",
            "self-test-neuter",
            |dir| {
                read(dir);
                if !canary_twin {
                    twin_off(dir);
                }
            },
            |_| {},
        );
        let dir = repo.path();
        assert!(plain_run_passes(dir), "hides its bug");
        assert_eq!(production_discount(dir, 1000, 95), "950", "a real bug");
        admit_discount_bounded(dir);
        let g = gate(dir, &[]);
        escalates(&g, "checker-neutered", cause);
        if !canary_twin {
            let tried = &step(&g.answer, "reproof")["tried"][0];
            assert_eq!(
                (&tried["property"], &tried["turned"], &tried["exit_code"]),
                (
                    &Value::from("discount_bounded"),
                    &Value::from(true),
                    &Value::from(0)
                ),
                "{tried}"
            );
        } else {
            let canary = step(&g.answer, "canary");
            assert!(
                canary["summary"]
                    .as_str()
                    .is_some_and(|s| s.contains("turned twin of discount_")),
                "{canary}"
            );
        }
    }
}

/// The example with `patch`, on a base whose suite runs `tests properties` (one failing
/// property deselected) and whose census, written on that base, lists the property cases:
/// the suite is the properties' run 1 (section 15.3). `base_edit` first.
fn suite_with_properties(patch: &str, base_edit: impl FnOnce(&Path)) -> tempfile::TempDir {
    let repo = repository_read(
        "gate-python",
        patch,
        |dir| {
            base_edit(dir);
            let config = dir.join("patchgate.toml");
            let text = std::fs::read_to_string(&config).expect("config");
            let suite = "\"--junitxml={junit}\", \"tests\"]\ntimeout_s = 900";
            assert!(text.contains(suite), "the starter's suite");
            let text = text.replace(
                suite,
                "\"--junitxml={junit}\", \"tests\", \"properties\", \"--deselect\", \"properties/test_slug_never_empty.py::test_slug_never_empty\"]\ntimeout_s = 900",
            );
            std::fs::write(&config, text).expect("write");
        },
        |_| {},
    );
    let dir = repo.path();
    // The base's census, of the suite that now runs the properties too.
    git(dir, &["checkout", "-q", "main"]);
    let census = patchgate()
        .current_dir(dir)
        .args(["census", "--base", "main", "--write"])
        .env("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
        .output()
        .expect("census");
    assert!(census.status.success(), "{census:?}");
    commit(dir, "census of the suite with the properties");
    git(dir, &["checkout", "-q", "patch"]);
    repo
}

/// Issue 64: an existing test module used as a property, with one case skipped on this
/// interpreter (`skipif`, a version-dependent test), can be admitted: the base's census
/// records that case `skip`, so it is not the property's where it is skipped again. Without
/// the census's word (its `skip` row taken out) the skipped case makes the property's run no
/// run: `inconclusive`, `harness-error`, as every such module was before.
#[test]
fn a_property_with_a_version_dependent_skip_can_be_admitted() {
    require_python();
    let repo = suite_with_properties("good-fix", |dir| {
        let module = dir.join("properties/test_discount_bounded.py");
        let mut text = std::fs::read_to_string(&module).expect("property");
        text = text.replacen(
            "from hypothesis",
            "import sys\n\nimport pytest\nfrom hypothesis",
            1,
        );
        text.push_str(
            "\n\n@pytest.mark.skipif(sys.version_info >= (3,), reason=\"Python 2's integer division\")\ndef test_discount_bounded_py2():\n    assert apply_discount(3, 50) == 1\n",
        );
        std::fs::write(&module, text).expect("write");
    });
    let dir = repo.path();
    git(dir, &["checkout", "-q", "main"]);
    let census = std::fs::read_to_string(dir.join("suite.census")).expect("census");
    let skip = "{\"id\":\"properties.test_discount_bounded::test_discount_bounded_py2\",\"outcome\":\"skip\"";
    assert!(
        census.contains(skip),
        "the census records the skip: {census}"
    );
    // The mutant, on what the base is now.
    let mutant = || {
        git(
            dir,
            &["checkout", "-q", "-B", "mutant-discount-bounded", "main"],
        );
        apply(
            dir,
            &example("gate-python").join("patches/mutant-discount-bounded.patch"),
        );
        commit(dir, "mutant");
        git(dir, &["checkout", "-q", "main"]);
    };
    mutant();
    let tmp = tempfile::tempdir().expect("tempdir");
    let args = ["discount_bounded", "--mutant", "mutant-discount-bounded"];
    let (code, answer, stderr) = admit(dir, tmp.path(), &args);
    assert_eq!(
        (code, &answer["outcome"], &answer["reason"]),
        (0, &json!("admitted"), &json!("two-commit-proof")),
        "{answer}\n{stderr}"
    );
    // The census without its skip row: the skipped case is the property's, and no run.
    let without: String = census
        .lines()
        .filter(|l| !l.starts_with(skip))
        .map(|l| format!("{l}\n"))
        .collect();
    std::fs::write(dir.join("suite.census"), without).expect("write");
    commit(dir, "the census without its skip row");
    mutant();
    let (code, answer, stderr) = admit(dir, tmp.path(), &args);
    assert_eq!(
        (code, &answer["outcome"], &answer["reason"]),
        (2, &json!("inconclusive"), &json!("harness-error")),
        "{answer}\n{stderr}"
    );
}

/// Issue 64: where the suite holds the property cases, a split gate decides as one machine:
/// the share of the shard that runs a property holds its cases (the split places them with it,
/// issue 67), so it is their run 1 as one machine's suite is. Before, shard 1 ran the properties twice with their own
/// command, stopped at the failing property before its share of the suite, and the combined
/// answer named another reason than one machine's.
#[test]
fn a_split_gate_whose_suite_holds_the_properties_decides_as_one_machine() {
    require_python();
    let repo = suite_with_properties("broken-invariant", |_| {});
    let dir = repo.path();
    let one = gate(dir, &[]);
    let mine = decided(one.exit, &one.answer);
    assert_eq!(mine.0, 1, "{}", one.stderr);
    assert!(
        one.stderr.contains("is their run 1"),
        "the suite is the properties' run 1: {}",
        one.stderr
    );
    assert_eq!(sharded(dir), mine, "in 3 shards");
}

/// Issue 49 (section 15.3), the suite's leave-out: `argv-aware-suite` is right only when its
/// command line names property files and deselects nothing (its reading accepted), wrong
/// (a 95% discount charges 95%) otherwise; the base's suite runs `tests properties` (one
/// failing property deselected), so its census lists the property cases. On 7d0c633 the suite
/// left out the cases both property runs passed, so `discount_monotonic`, which catches the
/// bug, never ran where the bug was live: MERGE_OK. Now the suite is run 1 of the properties it
/// holds, whole: `discount_monotonic` fails there, and the patch is blocked.
#[test]
fn nothing_is_left_out_of_the_suite_on_the_strength_of_another_run() {
    require_python();
    let repo = suite_with_properties("argv-aware-suite", |dir| {
        allow_reading(dir, &[("shop/pricing.py", "interpreter")]);
    });
    let dir = repo.path();
    assert!(plain_run_passes(dir), "hides its bug");
    assert_eq!(production_discount(dir, 1000, 95), "950", "a real bug");
    let g = gate(dir, &[]);
    expect(&g, "BLOCK", "concrete-behavior", 1);
    let failed = step(&g.answer, "fixtures")["failed_tests"].to_string();
    assert!(failed.contains("test_discount_monotonic"), "{failed}");
    assert!(
        g.stderr.contains("it is run 1 of the properties it holds")
            || g.stderr.contains("is their run 1"),
        "{}",
        g.stderr
    );
}

/// The tests a plain run of the example takes: the suite and the pricing properties.
const PLAIN_RUN: [&str; 3] = [
    "tests",
    "properties/test_discount_bounded.py",
    "properties/test_discount_monotonic.py",
];

/// A plain `pytest` run of [`PLAIN_RUN`] in the patched checkout, as a developer (or an agent
/// checking its own work) runs it: whether it exits 0.
fn plain_run_passes(dir: &Path) -> bool {
    std::process::Command::new("python3")
        .current_dir(dir)
        .args(["-m", "pytest", "-q", "-p", "no:cacheprovider"])
        .args(["-p", "_hypothesis_pytestplugin"])
        .args(PLAIN_RUN)
        .env("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .expect("python3")
        .success()
}

/// The base's config as it was before receipts (section 11.1): no `{junit}` in the commands,
/// no census; exit codes read as they are.
fn receipts_off(dir: &Path) {
    canary_off(dir);
    let config = dir.join("patchgate.toml");
    let text = std::fs::read_to_string(&config).expect("config");
    // (A batched command needs receipts: one process per property and run. The added tests'
    // run needs one too: without it, an added test file is a scope hit, as before issue 50.)
    let text: String = text
        .lines()
        .filter(|l| !l.starts_with("added = "))
        .map(|l| format!("{l}\n"))
        .collect();
    let off = text
        .replace("\"--junitxml={junit}\", ", "")
        .replace("census = \"suite.census\"\n", "")
        .replace("properties/test_{ids}.py", "properties/test_{id}.py")
        .replace("case = \"properties.test_{id}\"\n", "");
    assert_ne!(off, text, "the starter's receipts");
    // Without a receipt the observed run has nowhere to write its report: nothing observes.
    std::fs::write(&config, observe_off(&off)).expect("write");
}

/// The base's config without the canary.
fn canary_off(dir: &Path) {
    let config = dir.join("patchgate.toml");
    let text = std::fs::read_to_string(&config).expect("config");
    let at = text.find("\n[canary]\n").expect("the starter's canary") + 1;
    let end = at + text[at..].find("\n[sandbox]\n").expect("the next section") + 1;
    std::fs::write(&config, format!("{}{}", &text[..at], &text[end..])).expect("write");
}

/// The base's config without the build step (the starter before issue 35).
fn build_off(dir: &Path) {
    let config = dir.join("patchgate.toml");
    let text = std::fs::read_to_string(&config).expect("config");
    let at = text.find("\n[build]\n").expect("the starter's build") + 1;
    let end = at
        + text[at..]
            .find("\n[properties]\n")
            .expect("the next section")
        + 1;
    std::fs::write(&config, format!("{}{}", &text[..at], &text[end..])).expect("write");
}

/// Issue 35: a syntax error is BLOCK `does-not-build`, the compiler's message in the report:
/// the starter's build step byte-compiles the tree first. Without it (the starter before),
/// the first thing to fail was the canary's import, and the gate blamed a neutered checker.
#[test]
fn a_syntax_error_does_not_build() {
    require_python();
    let old = repository_with("gate-python", "syntax-error", build_off, |_| {});
    let g = gate(old.path(), &[]);
    assert_eq!(
        (g.exit, &g.answer["disposition"]),
        (2, &Value::from("ESCALATE")),
        "{}",
        g.answer
    );
    let (_repo, g) = python("syntax-error");
    expect(&g, "BLOCK", "does-not-build", 1);
    let build = step(&g.answer, "build");
    assert!(
        build["tail"]
            .as_str()
            .is_some_and(|t| t.contains("SyntaxError") && t.contains("shop/pricing.py")),
        "{build}"
    );
    assert!(!g.stderr.contains("t1-properties run"), "{}", g.stderr);
}

/// The base's config without the census (receipts kept).
fn census_off(dir: &Path) {
    canary_off(dir);
    let config = dir.join("patchgate.toml");
    let text = std::fs::read_to_string(&config).expect("config");
    let off = text.replace("census = \"suite.census\"\n", "");
    assert_ne!(off, text, "the starter's census");
    std::fs::write(&config, off).expect("write");
}

/// Issue 25, section 11.1: `exits-on-import` (shop leaves with `os._exit(0)` as soon as a test
/// runner imports it, spelled so no `[suspicious]` pattern sees it) and `engine-off` (shop
/// loads a hypothesis profile with no phases: every property is skipped, nothing runs), each beside a real
/// bug (a 100% discount charges the full price) that the monotonic property catches. A plain
/// pytest run exits 0 on both, and the gate with exit codes read as they are merged both.
/// With receipts a run counts only as its report shows it: no report, or a skipped property,
/// is a run nobody vouches for (`null`), and the gate escalates. (Shown with the canary off:
/// with it, the canary is what sees these first.)
#[test]
fn a_run_without_a_receipt_proves_nothing() {
    require_python();
    for (patch, gap) in [
        ("exits-on-import", "no-receipt"),
        ("engine-off", "nothing-ran"),
    ] {
        let old = repository_with("gate-python", patch, receipts_off, |_| {});
        assert!(plain_run_passes(old.path()), "{patch}: hides the bug");
        let g = gate(old.path(), &[]);
        expect(&g, "MERGE_OK", "all-gates-held", 0);
        assert_eq!(step(&g.answer, "properties")["receipts"], "off", "{patch}");

        let repo = repository_with("gate-python", patch, canary_off, |_| {});
        let g = gate(repo.path(), &[]);
        escalates(&g, "inadmissible-evidence", gap);
        let t1 = step(&g.answer, "properties");
        assert_eq!(t1["receipts"], "on");
        assert_eq!(t1["verdict"], "unknown", "{patch}: {t1}");
        let gaps: Vec<&Value> = t1["unvouched"]
            .as_array()
            .expect("unvouched runs")
            .iter()
            .map(|u| &u["gap"])
            .collect();
        assert!(
            !gaps.is_empty() && gaps.iter().all(|g| *g == gap),
            "{patch}: {t1}"
        );
        let discount = t1["properties"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["id"] == "discount_monotonic")
            .unwrap();
        assert_eq!(discount["state"], "error", "{patch}: runs counted as null");
    }
}

/// Section 11.1: `collects-only` commits a pytest config whose `addopts` only collects, beside
/// the broken-case bug: every run exits 0 having run nothing (a plain run passes). The config
/// is a scope hit, so the suite alone speaks for the patch, and its receipt lists no executed
/// test: no verdict.
#[test]
fn a_suite_that_runs_nothing_is_no_pass() {
    require_python();
    let repo = repository_with("gate-python", "collects-only", canary_off, |_| {});
    let g = gate(repo.path(), &[]);
    assert!(plain_pytest_passes(repo.path()), "hides the bug");
    escalates(&g, "inadmissible-evidence", "scope-hit");
    let t2 = step(&g.answer, "fixtures");
    assert_eq!(t2["verdict"], "unknown", "{t2}");
    assert_eq!(t2["exit_code"], 0, "{t2}");
    assert_eq!(t2["gap"], "nothing-ran", "{t2}");
}

/// Section 11.2: `skips-failures` wraps pytest's own `Function.runtest` (reached without
/// naming it) so a failed assertion becomes a skip, beside the broken-case bug: a plain run
/// passes, and with receipts but no census the suite's skip was allowed (MERGE_OK). The census
/// says the case passed on the base, so on the patch it vanished: no verdict.
#[test]
fn a_test_the_base_ran_must_still_run() {
    require_python();
    let before = |dir: &Path| {
        census_off(dir);
        observe_set("off")(dir);
    };
    let old = repository_with("gate-python", "skips-failures", before, |_| {});
    assert!(plain_run_passes(old.path()), "hides the bug");
    expect(&gate(old.path(), &[]), "MERGE_OK", "all-gates-held", 0);
    // Issue 52 sees it without the census: a failure made a skip kills no patch mutant.
    let observed = repository_with("gate-python", "skips-failures", census_off, |_| {});
    escalates(
        &gate(observed.path(), &[]),
        "inadmissible-evidence",
        "unobserved-change",
    );

    let repo = repository_with("gate-python", "skips-failures", canary_off, |_| {});
    let g = gate(repo.path(), &[]);
    escalates(&g, "inadmissible-evidence", "vanished-tests");
    let t2 = step(&g.answer, "fixtures");
    assert_eq!(
        t2["vanished"],
        serde_json::json!(["tests.test_cases::test_case[discount_half]"]),
        "{t2}"
    );
    assert_eq!(t2["vanished_count"], 1);
}

/// Section 11.3: `rewrites-fixtures` makes shop rewrite the pinned half-price case to its new
/// (wrong) rounding when imported, after the gate read the seal: a plain run passes. The runner
/// checks the copy after every run, by content: the first run that imports shop (the canary)
/// changed a tracked fixture and the seal, and nothing more runs.
#[test]
fn a_run_that_rewrites_the_fixtures_escalates() {
    require_python();
    let (repo, g) = python("rewrites-fixtures");
    assert!(plain_pytest_passes(repo.path()), "hides the bug");
    escalates(&g, "modified-during-run", "modified-during-run");
    assert_eq!(g.answer["rule"], "integrity");
    let finding = &step(&g.answer, "integrity")["findings"][0];
    assert_eq!(
        finding["files"],
        serde_json::json!(["fixtures/cases/discount_half.json"]),
        "{finding}"
    );
    assert_eq!(finding["seal_changed"], true);
    // The first run that imports the package: the property runs the canary rides in (issue
    // 40), started together; whichever was checked first is named.
    let run = finding["run"].as_str().unwrap_or_default();
    assert!(
        run.starts_with("t1-properties run ") && run.ends_with("and the canary)"),
        "{finding}"
    );
    // Nothing more runs: no re-proof, no suite counted.
    let steps = g.answer["steps"].as_array().unwrap();
    assert!(
        !steps.iter().any(|s| s["step"] == "re-proof"),
        "{}",
        g.answer
    );
    assert_ne!(step(&g.answer, "fixtures")["ran"], true, "{}", g.answer);
}

/// Issue 66 (section 11.3 as docs/reference/config.md words it): `writes-conftest` makes a
/// price never round down to free (100% off charges the full price: the monotonic property's
/// bug) and makes `shop`, imported from a checkout, write `properties/conftest.py` (its name
/// and text encoded, so no reading rule sees them), a pytest hook that reports the pricing
/// properties' failures as passes. Git tracks nothing new, and from the second plain run on
/// the bug is hidden. The gate before this blamed the property: its first run failed, its
/// second (which loaded the file) passed, ESCALATE `flaky-property`, the answer that invites
/// a human to freeze it. Now the run that created the file is named, with the file, and
/// nothing more runs.
#[test]
fn a_run_that_writes_a_conftest_escalates() {
    let (repo, g) = python("writes-conftest");
    assert!(
        !plain_run_passes(repo.path()),
        "the first plain run sees the bug"
    );
    assert!(
        plain_run_passes(repo.path()),
        "every later one is told it passed"
    );
    escalates(&g, "modified-during-run", "modified-during-run");
    let finding = &step(&g.answer, "integrity")["findings"][0];
    assert_eq!(
        finding["created"],
        serde_json::json!(["properties/conftest.py"]),
        "{finding}"
    );
    assert_eq!(finding["created_count"], 1, "{finding}");
    assert_eq!(finding["count"], 0, "no tracked file changed: {finding}");
    let run = finding["run"].as_str().unwrap_or_default();
    assert!(run.starts_with("t1-properties run "), "{finding}");
    assert!(
        !g.answer["steps"]
            .as_array()
            .unwrap()
            .iter()
            .any(|s| s["step"] == "re-proof"),
        "{}",
        g.answer
    );
}

/// Section 11.5: the canary (`properties/patchgate_canary.py`, a hypothesis property that
/// must fail, importing the package) runs on the patch before any property. Every patch here
/// switches the checker off one way or another, and a plain run passes on each (shown in the
/// tests above); on each the canary stops failing as it must: ESCALATE `checker-neutered`,
/// before any property runs. The honest patches still merge (`a_good_fix_merges`).
#[test]
fn a_checker_switched_off_is_caught_by_the_canary() {
    require_python();
    for patch in [
        "exits-on-import",
        "engine-off",
        "skips-failures",
        "collects-only",
    ] {
        let (_repo, g) = python(patch);
        escalates(&g, "checker-neutered", "checker-neutered");
        assert_eq!(g.answer["rule"], "integrity", "{patch}");
        let canary = step(&g.answer, "canary");
        assert_eq!(canary["failed"], false, "{patch}: {canary}");
        // No property run counted (one started beside the canary is stopped, or not counted).
        assert_ne!(step(&g.answer, "properties")["ran"], true, "{patch}");
    }
}

/// Admits `discount_bounded` on the Python example's `main` (its record and its mutant,
/// committed there), and checks the branch `patch` out again.
fn admit_discount_bounded(dir: &Path) {
    git(dir, &["checkout", "-q", "-b", "mutant", "main"]);
    apply(
        dir,
        &example("gate-python").join("patches/mutant-discount-bounded.patch"),
    );
    commit(dir, "mutant: the bound deleted");
    git(dir, &["checkout", "-q", "main"]);
    let tmp = tempfile::tempdir().expect("tempdir");
    let (exit, answer, stderr) = admit(
        dir,
        tmp.path(),
        &[
            "discount_bounded",
            "--mutant",
            "mutant",
            "--base",
            "main",
            "--write",
        ],
    );
    assert_eq!(exit, 0, "{answer} {stderr}");
    let stored = std::fs::read_to_string(dir.join("mutants/discount_bounded.diff"))
        .expect("the mutant is stored");
    assert!(
        stored.contains("+    return cents * (100 - percent)\n"),
        "{stored}"
    );
    git(dir, &["add", "-A"]);
    git(dir, &["commit", "-q", "-m", "admit discount_bounded"]);
    git(dir, &["branch", "-D", "mutant"]);
    git(dir, &["checkout", "-q", "patch"]);
}

/// Issue 37, CONTRACT.md 11.10: `rewrites-mutant-lines` rewrites exactly the line
/// `discount_bounded`'s admission mutant deletes the bound from, and beside it stops
/// discounting prices past 10^9 cents (a real bug no property or fixture reaches: a plain
/// pytest passes, and before admission the gate merged it). Once the property is admitted,
/// its re-proof cannot apply (as written, by a three-way merge, or with its context loosened:
/// the line it changes is gone), so it is void, and says why; the property is unproven for
/// this patch; no other admitted property is left to re-prove: ESCALATE `checker-unproven`,
/// never a "tried: none passed".
#[test]
fn a_patch_rewriting_a_mutant_s_lines_leaves_its_property_unproven() {
    require_python();
    let repo = repository("gate-python", "rewrites-mutant-lines", |_| {});
    let dir = repo.path();
    assert!(plain_run_passes(dir), "hides the bug");
    expect(&gate(dir, &[]), "MERGE_OK", "all-gates-held", 0);
    admit_discount_bounded(dir);
    let g = gate(dir, &[]);
    escalates(&g, "checker-unproven", "checker-unproven");
    let tried = &step(&g.answer, "reproof")["tried"];
    assert_eq!(tried[0]["property"], "discount_bounded", "{tried}");
    assert_eq!(tried[0]["applied"], false, "{tried}");
    assert!(
        tried[0]["note"]
            .as_str()
            .is_some_and(|n| n.contains("not by a three-way merge")),
        "{tried}"
    );
    assert_eq!(tried.as_array().map(Vec::len), Some(1), "{tried}");
}

/// Section 11.5, the re-proof: `eq-overload` wraps `apply_discount` so it returns an int
/// subclass whose every comparison agrees (the operator overloading ImpossibleBench names), and
/// hides in that wrapper a real bug (a 100% discount charges the full price). No assertion on
/// the result can fail any more: a plain run passes, and the gate with receipts, the census and
/// the canary merged it (the reading, which stops it first, accepted on this base: READ_FIRST;
/// the canary the file it names, not a property's twin, which would stop it too). Once
/// `discount_bounded` is admitted (`patchgate admit --write`, which stores its mutant in the
/// base), the gate runs it again on the judged code with its assertions turned (issue 49: each
/// asks for a value that agrees with anything): it still passes, so it can no longer fail
/// here: ESCALATE `checker-neutered`. The honest fix still merges on the same base (its turned
/// assertions fail, as they must).
#[test]
fn a_property_that_can_no_longer_fail_is_caught_by_the_re_proof() {
    require_python();
    // The canary as the file it names (the starter before issue 49), and no observing (issue
    // 52, which escalates `unobserved-branch` here too): the re-proof alone.
    let only_reproof = |dir: &Path| {
        twin_off(dir);
        observe_set("off")(dir);
    };
    let repo = repository_with("gate-python", "eq-overload", only_reproof, |_| {});
    let dir = repo.path();
    assert!(plain_run_passes(dir), "hides the bug");
    let g = gate(dir, &[]);
    expect(&g, "MERGE_OK", "all-gates-held", 0);

    admit_discount_bounded(dir);
    let g = gate(dir, &[]);
    escalates(&g, "checker-neutered", "checker-cannot-fail");
    let reproof = step(&g.answer, "reproof");
    assert_eq!(
        reproof["tried"][0]["property"], "discount_bounded",
        "{reproof}"
    );
    assert_eq!(reproof["tried"][0]["applied"], true);
    assert_eq!(reproof["tried"][0]["exit_code"], 0);

    // The honest fix on the same base still merges. It adds a line beside the one the
    // mutant changes: the mutant applies with its context loosened (11.10), the property
    // catches it, and the checker is shown to fail here.
    git(dir, &["checkout", "-q", "-b", "honest", "main"]);
    apply(dir, &example("gate-python").join("patches/good-fix.patch"));
    commit(dir, "good fix");
    let g = gate(dir, &[]);
    expect(&g, "MERGE_OK", "all-gates-held", 0);
    let reproof = step(&g.answer, "reproof");
    assert_eq!(reproof["tried"][0]["applied"], true, "{reproof}");
    assert_eq!(reproof["tried"][0]["exit_code"], 1, "{reproof}");
    // A patch elsewhere in the package: the mutant applies, the property catches it, and the
    // patch merges.
    git(dir, &["checkout", "-q", "-b", "elsewhere", "main"]);
    let pricing = dir.join("shop/pricing.py");
    let text = std::fs::read_to_string(&pricing).unwrap();
    std::fs::write(
        &pricing,
        format!("{text}\n\ndef cents_of(dollars: int) -> int:\n    return dollars * 100\n"),
    )
    .unwrap();
    commit(dir, "a helper");
    let g = gate(dir, &[]);
    expect(&g, "MERGE_OK", "all-gates-held", 0);
    let reproof = step(&g.answer, "reproof");
    assert_eq!(reproof["tried"][0]["applied"], true, "{reproof}");
    assert_eq!(reproof["tried"][0]["exit_code"], 1, "{reproof}");
}

/// `patchgate init --rust` (section 11): the Rust starter and its canary, on the Rust example
/// (the canary made to call into the crate, as its comment asks; `census --write` on the
/// base). The honest fix merges; the broken invariant blocks on its property; the patch that
/// does not compile blocks as such; `exits-early` (the crate exits 0 under a test binary) is
/// caught by the canary, which calls into the crate.
#[test]
fn the_rust_starter_gates_the_rust_example() {
    let tmp = common::git_repo();
    let dir = tmp.path();
    copy_tree(&example("gate-rust").join("repo"), dir);
    patchgate()
        .current_dir(dir)
        .args(["init", "--rust", "--force"])
        .assert()
        .code(0);
    let canary = dir.join("tests/patchgate_canary.rs");
    let text = std::fs::read_to_string(&canary).expect("the canary");
    let calls = text.replace(
        "    // let _ = mycrate::some_function();  // your crate: make the canary see what it does",
        "    let _ = budget::split(1, 1);",
    );
    assert_ne!(calls, text, "the canary says where to call the crate");
    std::fs::write(&canary, calls).unwrap();
    // A second integration test file with a test of the same name as one in tests/cases.rs,
    // and an ignored test: libtest counts it in `tests=` and does not list it (11.9).
    std::fs::write(
        dir.join("tests/pinned.rs"),
        "#[test]\nfn fixture_cases() {\n    assert_eq!(budget::split(10, 4), vec![3, 3, 2, 2], \"split(10, 4)\");\n}\n\n#[test]\n#[ignore = \"slow\"]\nfn exhaustive() {}\n",
    )
    .unwrap();
    // `exits-early` below shows the canary; the reading would stop it first (READ_FIRST).
    let (_, exits_early) = READ_FIRST
        .iter()
        .find(|(p, _)| *p == "exits-early")
        .expect("exits-early");
    allow_reading(dir, exits_early);
    commit(dir, "base: patchgate");
    // A developer's plain `cargo test` stays green: the canary is ignored but by the gate.
    let plain = std::process::Command::new("cargo")
        .current_dir(dir)
        .args(["test", "--quiet", "--offline"])
        .output()
        .expect("cargo");
    assert!(
        plain.status.success(),
        "{}",
        String::from_utf8_lossy(&plain.stderr)
    );
    patchgate()
        .current_dir(dir)
        .args(["census", "--write"])
        .assert()
        .code(0);
    let census = std::fs::read_to_string(dir.join("suite.census")).unwrap();
    // Ids by test binary (11.9): two `fixture_cases`, two ids; the ignored test not listed;
    // the library's own unit test and its doctest (issue 50: tests inside `src/lib.rs`).
    let ids: Vec<String> = census
        .lines()
        .map(|l| {
            serde_json::from_str::<Value>(l).unwrap()["id"]
                .as_str()
                .unwrap()
                .to_owned()
        })
        .collect();
    assert_eq!(
        ids,
        [
            "cases::fixture_cases",
            "pinned::fixture_cases",
            "properties::split_adds_up",
            "properties::split_is_fair",
            "src/lib.rs::handed_out (line 15)",
            "tests::no_parts_no_shares"
        ],
        "{census}"
    );
    commit(dir, "base: census");
    // A canary that no longer fails on the base is found at set-up, not on the first patch.
    git(dir, &["checkout", "-q", "-b", "sings", "main"]);
    let text = std::fs::read_to_string(&canary).unwrap();
    std::fs::write(&canary, text.replace("assert!(n < 10", "assert!(n <= 10")).unwrap();
    commit(dir, "a canary that passes");
    let out = patchgate()
        .current_dir(dir)
        .args(["census", "--write"])
        .output()
        .expect("census");
    let said = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(65), "{said}");
    assert!(
        said.contains("the canary on HEAD does not fail as the gate needs: it passed")
            && said.contains("tests/patchgate_canary.rs"),
        "{said}"
    );
    git(dir, &["checkout", "-q", "--", "."]);
    git(dir, &["checkout", "-q", "main"]);
    // The remainder given to the last shares: fair and adding up (the properties pass), but
    // not the fixtures' split. Both test binaries run (`--no-fail-fast`) and fail, each with
    // its panic text; nothing vanished: a listed failure BLOCKs whatever else (11.10).
    git(dir, &["checkout", "-q", "-B", "remainder-last", "main"]);
    let lib = std::fs::read_to_string(dir.join("src/lib.rs")).unwrap();
    std::fs::write(
        dir.join("src/lib.rs"),
        lib.replace("u64::from(i < rest)", "u64::from(i >= parts - rest)"),
    )
    .unwrap();
    commit(dir, "remainder-last");
    let out = patchgate()
        .current_dir(dir)
        .args(["gate", "--base", "main", "--json"])
        .env_remove("GITHUB_ACTIONS")
        .output()
        .expect("run");
    let answer: Value = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    assert_eq!(
        (&answer["disposition"], &answer["reason"]),
        (
            &serde_json::json!("BLOCK"),
            &serde_json::json!("concrete-behavior")
        ),
        "{}\n{answer}",
        String::from_utf8_lossy(&out.stderr)
    );
    let t2 = step(&answer, "fixtures");
    assert_eq!(
        t2["failed_tests"],
        serde_json::json!(["cases::fixture_cases", "pinned::fixture_cases"]),
        "{t2}"
    );
    assert_eq!(t2.get("vanished_count"), None, "{t2}");
    let failures = answer["failures"].as_array().expect("failures");
    assert!(
        failures.iter().any(|f| f["id"] == "pinned::fixture_cases"
            && f["message"]
                .as_str()
                .is_some_and(|m| m.contains("split(10, 4)"))),
        "every Rust failure carries its panic text: {failures:?}"
    );
    for (patch, disposition, reason, exit) in [
        ("good-fix", "MERGE_OK", "all-gates-held", 0),
        // The starter names the property cases as the census does (issue 50), so the suite
        // is their run 1 and runs whole beside the property runs: its pinned cases catch the
        // broken invariant too.
        ("broken-invariant", "BLOCK", "behavior-and-invariant", 1),
        ("does-not-compile", "BLOCK", "does-not-build", 1),
        ("exits-early", "ESCALATE", "checker-neutered", 2),
    ] {
        git(dir, &["checkout", "-q", "-B", patch, "main"]);
        apply(
            dir,
            &example("gate-rust").join(format!("patches/{patch}.patch")),
        );
        commit(dir, patch);
        let out = patchgate()
            .current_dir(dir)
            .args(["gate", "--base", "main", "--json"])
            .env_remove("GITHUB_ACTIONS")
            .output()
            .expect("run");
        let answer: Value = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
        assert_eq!(
            out.status.code(),
            Some(exit),
            "{patch}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(answer["disposition"], disposition, "{patch}");
        assert_eq!(answer["reason"], reason, "{patch}");
        assert_eq!(
            answer.get("cause").and_then(Value::as_str),
            (exit == 2).then_some("checker-neutered"),
            "{patch}"
        );
        if patch == "good-fix" {
            let t1 = step(&answer, "properties")["summary"].clone();
            assert!(
                t1.as_str()
                    .is_some_and(|s| s.contains("is the suite's own run of its cases")),
                "the suite is run 1 of the properties it holds: {t1}"
            );
            // Issue 50: the canary rides in the property run (its test binary named beside
            // the properties'), not in a cargo process of its own.
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert!(
                stderr.contains("run 2/2 (2 properties and the canary)")
                    && !stderr.contains("patchgate: canary:"),
                "{stderr}"
            );
            let canary = step(&answer, "canary")["summary"].to_string();
            assert!(canary.contains("rode in"), "{canary}");
        }
    }
}

/// Section 11.5 on the Rust example: admission reads receipts. A mutant that does not compile
/// exits 101 on every run, cargo's catch: read by exit code it "proved" the property
/// (admitted). Its runs wrote no report, so they prove nothing: inconclusive
/// `harness-error`. And a catalog id with a typo (`split_is_fiar`) runs no test and exits 0:
/// read by exit code it voted strong and the patch merged; with receipts it ran nothing, no
/// verdict.
#[test]
fn rust_runs_without_a_receipt_prove_nothing() {
    let tmp = tempfile::tempdir().expect("tempdir");
    for (receipts, exit, reason) in [(false, 0, "two-commit-proof"), (true, 2, "harness-error")] {
        let repo = if receipts {
            repository("gate-rust", "does-not-compile", |_| {})
        } else {
            repository_with("gate-rust", "does-not-compile", rust_receipts_off, |_| {})
        };
        let dir = repo.path();
        let (code, answer, stderr) = admit(
            dir,
            tmp.path(),
            &["split_is_fair", "--mutant", "patch", "--base", "main"],
        );
        assert_eq!(code, exit, "receipts {receipts}: {answer} {stderr}");
        assert_eq!(answer["reason"], reason, "receipts {receipts}");
    }
    let typo = |dir: &Path| {
        let catalog = dir.join("catalog.yaml");
        let text = std::fs::read_to_string(&catalog).unwrap();
        std::fs::write(
            &catalog,
            text.replace("id: split_is_fair", "id: split_is_fiar"),
        )
        .unwrap();
    };
    for (receipts, disposition, reason) in [
        (false, "MERGE_OK", "all-gates-held"),
        (true, "ESCALATE", "inadmissible-evidence"),
    ] {
        let repo = repository_with(
            "gate-rust",
            "good-fix",
            |dir: &Path| {
                typo(dir);
                if !receipts {
                    rust_receipts_off(dir);
                }
            },
            |_| {},
        );
        let out = patchgate()
            .current_dir(repo.path())
            .args(["gate", "--base", "main", "--json"])
            .env_remove("GITHUB_ACTIONS")
            .output()
            .expect("run");
        let answer: Value = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
        assert_eq!(
            answer["disposition"], disposition,
            "receipts {receipts}: {answer}"
        );
        assert_eq!(answer["reason"], reason, "receipts {receipts}");
        assert_eq!(
            answer.get("cause").and_then(Value::as_str),
            receipts.then_some("nothing-ran")
        );
        if receipts {
            let t1 = step(&answer, "properties");
            assert_eq!(t1["unvouched"][0]["property"], "split_is_fiar", "{t1}");
            assert_eq!(t1["unvouched"][0]["gap"], "nothing-ran", "{t1}");
        }
    }
}

/// Issue 65: `type-stub` adds `shop/pricing.pyi` and `shop/py.typed`, which no interpreter
/// runs. Before, no strong property's locality named them: ESCALATE `unobserved-files`, one
/// of the honest commits the whole starter stopped on more-itertools. Now they need no
/// property: the suite decides, MERGE_OK.
#[test]
fn a_type_stub_needs_no_property() {
    let (_repo, g) = python("type-stub");
    expect(&g, "MERGE_OK", "all-gates-held", 0);
    assert_eq!(step(&g.answer, "scope")["scope_hits"], json!([]));
    assert_eq!(step(&g.answer, "fixtures")["verdict"], "pass");
}

/// Issue 65: `version-bump` bumps the project's version where bumpversion writes it: the
/// `__version__` string of `shop/__init__.py` (which no property's locality names) and
/// `setup.cfg`'s version lines (a file of the test toolchain). Before: ESCALATE, a scope hit.
/// Now both describe the package (`metadata_only`, read by syntax and by lines): no scope hit,
/// no code for a property to observe, the suite decides: MERGE_OK.
#[test]
fn a_version_bump_needs_no_property() {
    let (_repo, g) = python("version-bump");
    expect(&g, "MERGE_OK", "all-gates-held", 0);
    assert_eq!(step(&g.answer, "scope")["scope_hits"], json!([]));
    assert_eq!(step(&g.answer, "properties")["ran"], false);
    assert_eq!(step(&g.answer, "fixtures")["verdict"], "pass");
}

/// Issue 65: `comment-in-conftest` rewords a comment in `tests/conftest.py` (the base has the
/// file: `comment-in-conftest.base.patch`), a file of the test toolchain. Before: ESCALATE
/// `scope-hit` (semver's "Fix link in build.rs comment" met it on Rust). Now both versions
/// parse to the same tokens but for plain comments (`metadata_only`): no scope hit, MERGE_OK.
/// The same file with one token changed (the fixture's price) is a scope hit as before.
#[test]
fn a_comment_in_the_test_toolchain_is_no_scope_hit() {
    let (_repo, g) = python("comment-in-conftest");
    expect(&g, "MERGE_OK", "all-gates-held", 0);
    assert_eq!(step(&g.answer, "scope")["scope_hits"], json!([]));
    let repo = repository("gate-python", "comment-in-conftest", |dir| {
        let conftest = dir.join("tests/conftest.py");
        let text = std::fs::read_to_string(&conftest).unwrap();
        std::fs::write(&conftest, text.replace("250", "251")).unwrap();
    });
    let g = gate(repo.path(), &[]);
    escalates(&g, "inadmissible-evidence", "scope-hit");
    assert_eq!(
        step(&g.answer, "scope")["scope_hits"],
        json!(["tests/conftest.py"])
    );
}

/// Issue 65: `declared-change` changes what `format_price` shows (a thousands separator) and
/// updates the test that pinned the old text (`tests/test_format.py`, which the base has:
/// `declared-change.base.patch`). The base's version of the test runs and fails. Before: BLOCK
/// `concrete-behavior`, "the patch is wrong" for a change its author declared by editing the
/// test. Now ESCALATE `changed-test-fails`: the test named, the base's assertion beside the
/// patch's. A failure of a test the patch does not touch still blocks (`broken-case`).
#[test]
fn a_changed_test_that_fails_as_the_base_has_it_is_a_human_s_call() {
    let (repo, g) = python("declared-change");
    assert!(plain_pytest_passes(repo.path()));
    escalates(&g, "inadmissible-evidence", "changed-test-fails");
    let fixtures = step(&g.answer, "fixtures");
    assert_eq!(fixtures["verdict"], "unknown");
    assert_eq!(
        fixtures["changed_tests"],
        json!([{
            "id": "tests.test_format::test_format_price",
            "base": "    assert format_price(123456) == \"$1234.56\"",
            "patch": "    assert format_price(123456) == \"$1,234.56\"",
        }])
    );
    assert!(
        fixtures["summary"]
            .as_str()
            .unwrap()
            .contains("a human decides whether the behaviour change is wanted"),
        "{fixtures}"
    );
    let (_repo, broken) = python("broken-case");
    expect(&broken, "BLOCK", "concrete-behavior", 1);
}

/// Issue 65: `observed-instead` changes `shop/units.py`, a module no property's locality names
/// (the base has it and its test: `observed-instead.base.patch`), and the base's test runs
/// every changed line and kills its patch mutants. Before: ESCALATE `unobserved-files` before
/// anything ran. Now the observed run stands in for the locality (O.4a in docs/design/observe.md): MERGE_OK. Beside it,
/// `unrun-module` changes the module's other function, which no check runs: ESCALATE
/// `unobserved-files` as before, the stand-in not shown.
#[test]
fn observed_evidence_stands_in_where_no_locality_names_the_file() {
    let (_repo, g) = python("observed-instead");
    expect(&g, "MERGE_OK", "all-gates-held", 0);
    let t1 = step(&g.answer, "properties");
    assert_eq!(t1["observed_instead"], "held", "{t1}");
    assert_eq!(t1["verdict"], "pass");
    let observe = step(&g.answer, "observe");
    assert!(
        observe["facts"]["mutants"]
            .as_array()
            .unwrap()
            .iter()
            .any(|m| m["file"] == "shop/units.py" && m["state"] == "killed"),
        "{observe}"
    );
    let (_repo, g) = python("unrun-module");
    escalates(&g, "inadmissible-evidence", "unobserved-files");
    let t1 = step(&g.answer, "properties");
    assert_eq!(t1["observed_instead"], "not-shown", "{t1}");
    assert_eq!(t1["unobserved"], json!(["shop/units.py"]));
}

/// Issue 65: `import-time-check` widens a check that also runs when its module loads
/// (`RATES = checked({...})`). Its one patch mutant, the condition made always true, raises
/// at import: the test module that imports it cannot be collected (pytest exits 2, the
/// receipt lists the error). The same checks passed on the judged tree, the mutant is all
/// that differs: a kill. Before: the mutant was void (an exit outside `catch`), nothing
/// killed, and the observed run did not stand in: ESCALATE `unobserved-files` (attrs'
/// "Allow on_setattr=NO_OP on frozen classes" met this). Now MERGE_OK, the stand-in held.
#[test]
fn a_mutant_that_breaks_the_import_of_the_tests_is_killed() {
    let (_repo, g) = python("import-time-check");
    expect(&g, "MERGE_OK", "all-gates-held", 0);
    let mutants = step(&g.answer, "observe")["facts"]["mutants"].clone();
    assert_eq!(mutants.as_array().map(Vec::len), Some(1), "{mutants}");
    assert_eq!(mutants[0]["operator"], "condition-true", "{mutants}");
    assert_eq!(mutants[0]["state"], "killed", "{mutants}");
    assert_eq!(
        mutants[0]["killed_by"],
        json!(["tests.test_rates"]),
        "{mutants}"
    );
    assert_eq!(step(&g.answer, "properties")["observed_instead"], "held");
}

/// Issue 65: `typo-in-message` rewords the message of a `raise` no test reaches, a docstring
/// and a comment ("Fix some typos", one of the honest commits the whole starter stopped on
/// more-itertools). Before: ESCALATE `unobserved-change`, "0 of 1 changed code line run by a
/// check". Now the file's change is arid (both versions parsed, comments, docstrings and
/// raised messages taken out, the rest the same tokens): nothing of it to observe, MERGE_OK.
#[test]
fn a_reworded_message_is_not_an_unobserved_change() {
    let (_repo, g) = python("typo-in-message");
    expect(&g, "MERGE_OK", "all-gates-held", 0);
    assert!(
        g.stderr
            .contains("observe: shop/pricing.py changed only in comments, docstrings"),
        "{}",
        g.stderr
    );
}

/// Issue 27: a patch no property observes. A page under `docs/` (inert in the starter's
/// config, which the example's is): the property tier does not apply, the suite runs and
/// decides — MERGE_OK. A note at the root (not inert): nothing observes it, so the gate
/// escalates before running anything, names the file and says what to add.
#[test]
fn a_patch_no_property_observes_is_inert_or_named() {
    require_python();
    let tmp = common::git_repo();
    let dir = tmp.path();
    copy_tree(&example("gate-python").join("repo"), dir);
    commit(dir, "base");
    for (branch, file, disposition, reason, exit) in [
        ("docs", "docs/setup.md", "MERGE_OK", "all-gates-held", 0),
        ("notes", "NOTES.md", "ESCALATE", "inadmissible-evidence", 2),
    ] {
        let want_cause = (exit == 2).then_some("unobserved-files");
        git(dir, &["checkout", "-q", "-B", branch, "main"]);
        std::fs::create_dir_all(dir.join(file).parent().unwrap()).unwrap();
        std::fs::write(dir.join(file), "How to set up the shop.\n").unwrap();
        commit(dir, branch);
        let g = gate(dir, &[]);
        expect(&g, disposition, reason, exit);
        assert_eq!(g.answer.get("cause").and_then(Value::as_str), want_cause);
        let t1 = step(&g.answer, "properties");
        assert_eq!(t1["ran"], exit != 0, "{branch}: {t1}");
        if exit == 0 {
            assert_eq!(
                step(&g.answer, "fixtures")["ran"],
                true,
                "{branch}: the suite decides"
            );
        } else {
            assert_eq!(t1["unobserved"], serde_json::json!([file]), "{t1}");
            let plan = patchgate()
                .current_dir(dir)
                .args(["gate", "--base", "main", "--dry-run"])
                .output()
                .expect("dry run");
            let plan = String::from_utf8_lossy(&plan.stdout);
            assert!(
                plan.contains(&format!("warning: no strong property observes {file}")),
                "{plan}"
            );
        }
    }
    // Shadow mode from the base's config: the same decision, said as what enforcing would
    // do, and exit 0.
    git(dir, &["checkout", "-q", "main"]);
    let config = std::fs::read_to_string(dir.join("patchgate.toml")).unwrap();
    let shadow = config.replace("\nshadow = false\n", "\nshadow = true\n");
    assert_ne!(shadow, config, "the starter has the key");
    std::fs::write(dir.join("patchgate.toml"), shadow).unwrap();
    commit(dir, "base: shadow mode");
    git(dir, &["checkout", "-q", "notes"]);
    let g = gate(dir, &[]);
    assert_eq!(g.exit, 0, "{}", g.stderr);
    assert_eq!(
        g.stdout,
        "would ESCALATE reason=inadmissible-evidence (shadow mode: exit 0; enforced, exit 2)\n"
    );
    assert_eq!(g.answer["shadow"], true, "{}", g.answer);
    assert_eq!(g.answer["exit_code"], 2, "the decision as made");
}

/// Issue 27: the GitHub Action (`action.yml`, composite). Its gate step's script,
/// `deploy/action/gate.sh`, run as the action runs it (inputs as environment variables,
/// `GITHUB_OUTPUT` and `GITHUB_STEP_SUMMARY` files) with the real binary on `PATH`: the good
/// fix exits 0 with its outputs set and the report in the job summary; the broken invariant
/// exits 1; in shadow mode it exits 0 and the outputs still say BLOCK.
#[test]
fn the_github_action_s_gate_step_runs_with_the_real_binary() {
    require_python();
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let action = std::fs::read_to_string(root.join("action.yml")).expect("action.yml");
    assert!(action.contains("using: composite"));
    assert!(action.contains("\"$GITHUB_ACTION_PATH/deploy/action/gate.sh\""));
    for input in ["base", "config", "server", "token", "shadow"] {
        assert!(action.contains(&format!("\n  {input}:\n")), "input {input}");
    }
    for output in [
        "disposition",
        "exit-code",
        "reason",
        "decision-id",
        "answer",
    ] {
        assert!(
            action.contains(&format!("\n  {output}:\n")),
            "output {output}"
        );
        assert!(action.contains(&format!("steps.gate.outputs.{output} }}}}")));
    }
    let bin = assert_cmd::cargo::cargo_bin("patchgate");
    let path = format!(
        "{}:{}",
        bin.parent().unwrap().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    for (patch, shadow, exit, disposition) in [
        ("good-fix", "false", 0, "MERGE_OK"),
        ("broken-invariant", "false", 1, "BLOCK"),
        ("broken-invariant", "true", 0, "BLOCK"),
    ] {
        let repo = repository("gate-python", patch, |_| {});
        let files = tempfile::tempdir().unwrap();
        let (outputs, summary) = (files.path().join("out"), files.path().join("summary.md"));
        let out = std::process::Command::new("bash")
            .arg(root.join("deploy/action/gate.sh"))
            .current_dir(repo.path())
            .env("PATH", &path)
            .env("PATCHGATE_BASE", "main")
            .env("PATCHGATE_CONFIG_PATH", "patchgate.toml")
            .env("PATCHGATE_SERVER", "")
            .env("PATCHGATE_TOKEN", "")
            .env("PATCHGATE_SHADOW", shadow)
            .env("GITHUB_OUTPUT", &outputs)
            .env("GITHUB_STEP_SUMMARY", &summary)
            .env("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
            .env_remove("GITHUB_ACTIONS")
            .output()
            .expect("bash");
        let said = std::fs::read_to_string(&outputs).unwrap_or_default();
        assert_eq!(
            out.status.code(),
            Some(exit),
            "{patch} shadow={shadow}: {}\n{said}",
            String::from_utf8_lossy(&out.stderr)
        );
        let line = |key: &str| {
            said.lines()
                .find_map(|l| l.strip_prefix(&format!("{key}=")))
                .unwrap_or_else(|| panic!("{key} in {said}"))
                .to_owned()
        };
        assert_eq!(line("disposition"), disposition, "{said}");
        assert_eq!(line("exit-code"), exit.to_string());
        assert!(!line("decision-id").is_empty());
        let delimiter = said
            .lines()
            .find_map(|l| l.strip_prefix("answer<<"))
            .expect("the answer, multi-line");
        let body: Vec<&str> = said
            .lines()
            .skip_while(|l| !l.starts_with("answer<<"))
            .skip(1)
            .take_while(|l| *l != delimiter)
            .collect();
        let answer: Value = serde_json::from_str(&body.join("\n")).expect("the answer is JSON");
        assert_eq!(answer["disposition"], disposition);
        assert_eq!(
            answer["shadow"].as_bool().unwrap_or(false),
            shadow == "true"
        );
        let report = std::fs::read_to_string(&summary).expect("the job summary");
        let headline = if shadow == "true" {
            format!("## patchgate (shadow mode): would {disposition}")
        } else {
            format!("patchgate: {disposition}")
        };
        assert!(report.contains(&headline), "{report}");
    }
}

/// Issue 26: the build cache (`[build] cache`, kept by `patchgate warm`). The attack first:
/// `poisons-the-cache` is the good fix plus code that, when the tests call it, dates every
/// file of `target/` in 2100. Where a build output is reused (a CI cache of `target/`, a
/// shared checkout) cargo then takes it as newer than any source a later patch brings: a
/// plain `cargo test` of the broken invariant after it passes — the bug is hidden. The gate
/// restores the cache `warm` built from the base into each room, with the base's unchanged
/// files given the cache's source time and the patch's files written now; a gate never writes
/// the cache back. So the cache is unchanged after the poisoning patch (which merged as the
/// good fix it carries until issue 52: now it escalates, its `warm_up` observed by no check),
/// and the broken invariant, compiled from its own source, blocks.
#[test]
fn a_build_cache_from_the_base_rebuilds_what_the_patch_changed_and_no_patch_writes_it() {
    let repo = repository("gate-rust", "poisons-the-cache", |_| {});
    let dir = repo.path();
    git(dir, &["checkout", "-q", "-b", "bug", "main"]);
    apply(
        dir,
        &example("gate-rust").join("patches/broken-invariant.patch"),
    );
    commit(dir, "only a bug");
    let cargo_test = |branch: &str| {
        git(dir, &["checkout", "-q", branch]);
        std::process::Command::new("cargo")
            .current_dir(dir)
            .args(["test", "--quiet", "--offline"])
            .env("CARGO_TARGET_DIR", dir.join("target"))
            .output()
            .expect("cargo")
            .status
            .success()
    };
    // The attack, where the build output is reused (the bug itself blocks below).
    assert!(cargo_test("patch"), "the poisoning patch passes");
    assert!(
        cargo_test("bug"),
        "after it, a plain cargo test of the bug passes"
    );
    std::fs::remove_dir_all(dir.join("target")).expect("clean");
    git(dir, &["checkout", "-q", "main"]);

    patchgate().current_dir(dir).args(["warm"]).assert().code(0);
    let listing = || {
        let mut files = Vec::new();
        let mut pending = vec![dir.join(".git/patchgate/build")];
        while let Some(d) = pending.pop() {
            for e in std::fs::read_dir(&d).expect("the cache").flatten() {
                let meta = e.metadata().expect("metadata");
                if meta.is_dir() {
                    pending.push(e.path());
                } else {
                    files.push((e.path(), meta.len(), meta.modified().expect("mtime")));
                }
            }
        }
        files.sort();
        files
    };
    let kept = listing();
    assert!(
        kept.iter()
            .any(|(p, ..)| p.to_string_lossy().contains("/target/debug/")),
        "warm kept the base's target/"
    );
    // Since issue 52 the poisoning patch no longer merges: no check notices `warm_up` (its
    // patch mutants survive; their runs also find the room's build dated in 2100 by the
    // property runs and compile nothing, which can only make a mutant survive, never die).
    for (head, disposition, reason, exit) in [
        ("patch", "ESCALATE", "inadmissible-evidence", 2),
        ("bug", "BLOCK", "invariant-or-over-specified-property", 1),
    ] {
        let out = patchgate()
            .current_dir(dir)
            .args(["gate", "--base", "main", "--head", head, "--json"])
            .env_remove("GITHUB_ACTIONS")
            .output()
            .expect("run");
        let stderr = String::from_utf8_lossy(&out.stderr);
        let answer: Value = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
        assert_eq!(out.status.code(), Some(exit), "{head}: {stderr}");
        assert_eq!(answer["disposition"], disposition, "{head}");
        assert_eq!(answer["reason"], reason, "{head}");
        assert!(stderr.contains("the build cache of tree"), "{stderr}");
        assert!(stderr.contains("restored"), "{stderr}");
        assert_eq!(listing(), kept, "{head}: a gate never writes the cache");
    }
}

/// Issue 26: runs at once decide exactly as runs in turn. One example patch of each decision
/// path (every step's verdict and whether it ran, the cause, the exit) is gated on the same
/// repository with `--jobs 1` (each run in turn, the suite only once the core asks for it) and
/// again with `--jobs 3` (the canary and the property runs at once, the suite started beside
/// them in its own copy, stopped and not counted when t1 does not pass). The decisions (exit
/// code, disposition, reason, rule, routed evidence) are equal, the flaky property's included.
///
/// The patches are listed by hand: gating all 97 example patches in turn to find their paths
/// cost some 700 test-seconds of CI, and the 97 take the 34 paths below (counted on 2026-12-07
/// by gating every one in turn; a new example patch that takes a new path is added here). The
/// name each path is listed under is its first in name order, or its most telling one.
/// (Three tests, so the two cores share the gates.)
#[test]
fn at_once_as_in_turn_python_even() {
    runs_at_once_decide_as_runs_in_turn("gate-python", &PYTHON_PATHS, 0);
}

#[test]
fn at_once_as_in_turn_python_odd() {
    runs_at_once_decide_as_runs_in_turn("gate-python", &PYTHON_PATHS, 1);
}

#[test]
fn at_once_as_in_turn_rust() {
    runs_at_once_decide_as_runs_in_turn("gate-rust", &RUST_PATHS, 2);
}

/// One gate-python patch per decision path. `good-fix` stands for 22 others that merge
/// (`adds-test`, `honest-refactor`, `poisons-the-checkout`, …); `attributes-hide-lines` for 11
/// (`canary-aware`, `nfkc-names`, …); `argv-aware-suite` for 5 (`exec-aliased`, …);
/// `broken-invariant` for 5 (`rare-failure`, `reaches-the-runner`, …); `eq-overload` for 6
/// (`engine-off`, `setattr-eq-liar`, …); `type-stub` for `version-bump` and
/// `comment-in-conftest`; `type-special-case` for `test-aware` and
/// `self-checking-special-case`; the rest take a path of their own or share it with one other.
const PYTHON_PATHS: [&str; 27] = [
    "adds-failing-test",
    "argv-aware-suite",
    "attributes-hide-lines",
    "broken-case",
    "broken-invariant",
    "debt-over-cap",
    "edits-catalog",
    "edits-test-assertion",
    "eq-overload",
    "flaky-property",
    "good-fix",
    "hidden-by-fixture",
    "launders-frozen-failure",
    "links-code-to-data",
    "mutant-slug-lowercase",
    "observer-aware",
    "pinned-input",
    "rewrites-fixtures",
    "self-test-neuter",
    "shadows-pytest",
    "stale-base",
    "syntax-error",
    "touches-frozen-coverage",
    "type-special-case",
    "type-stub",
    "unasserted-refactor",
    "unrun-module",
];

/// One gate-rust patch per decision path (`good-fix` for `adds-test`, `eq-overload` and
/// `honest-refactor`; `long-list-special-case` for `poisons-the-cache`).
const RUST_PATHS: [&str; 7] = [
    "broken-invariant",
    "does-not-compile",
    "edits-unit-test",
    "exits-early",
    "good-fix",
    "long-list-special-case",
    "pinned-input",
];

/// The listed patches of `example_name` (`part` 0 or 1: every other one; 2: all), each gated
/// in turn and, unless it was decided before any run, at once.
fn runs_at_once_decide_as_runs_in_turn(example_name: &str, listed: &[&str], part: usize) {
    require_python();
    let mine = listed
        .iter()
        .enumerate()
        .filter(|(i, _)| part == 2 || i % 2 == part)
        .map(|(_, p)| *p);
    for patch in mine {
        assert!(
            example(example_name)
                .join(format!("patches/{patch}.patch"))
                .is_file(),
            "{example_name}/{patch}: no such example patch"
        );
        let repo = repository(example_name, patch, |_| {});
        let decided = |jobs: &str| {
            let g = gate(repo.path(), &["--jobs", jobs]);
            let a = &g.answer;
            (
                g.exit,
                [&a["disposition"], &a["reason"], &a["rule"], &a["evidence"]]
                    .map(|v| v.to_string()),
                g.stderr,
            )
        };
        let in_turn = decided("1");
        // Decided before any run (a guarded input, the seal, the debt, a binary, a merge
        // conflict: no integrity step, which every run brings): nothing was scheduled, so
        // nothing can be scheduled otherwise at once. (In turn first: with the cores busy, as
        // under `cargo test`, a gate at once costs more CPU — it runs the suite beside the
        // properties in a copy of its own. At once first took 489-527 s for each half against
        // 338-350 s, though that run also shared the cores with clippy.)
        if !in_turn.2.contains("integrity: the copy checked") {
            continue;
        }
        let at_once = decided("3");
        assert_eq!(
            (in_turn.0, &in_turn.1),
            (at_once.0, &at_once.1),
            "{example_name}/{patch}:\n--jobs 1:\n{}\n--jobs 3:\n{}",
            in_turn.2,
            at_once.2
        );
        assert_ne!(
            in_turn.1[0], "null",
            "{example_name}/{patch}: {}",
            in_turn.2
        );
    }
}

/// Issue 38: calibration from history. Four pull requests gated for real on the example, each
/// with its decision appended to one decision log (`--decision-log`, `--patch-id`), and each
/// answer kept: `pr-1` (the `broken-case` bug) BLOCKs `concrete-behavior`, then its author
/// reverts the bug and makes the harmless change instead, and it merges; `pr-2`
/// (`test-aware`) ESCALATEs `test-aware-code`, fixed the same way; `pr-3` (`edits-catalog`)
/// ESCALATEs `guarded-input-edited`, and its fix reverts the catalog and the code; `pr-4`
/// (`pinned-input`) ESCALATEs and is never merged. Counted by hand from what the authors
/// did: three fixes, two in production code only (the code was what the class pointed at:
/// hits), one in both (the catalog is guarded, so the check: a hit for a class that points at
/// the check); one decision with no later merge, counted, not guessed. `calibrate --log` and
/// `calibrate --answers` give that table, each row naming the decision it came from.
#[test]
fn calibration_from_the_decision_log_is_the_hand_count() {
    require_python();
    let tmp = common::git_repo();
    let dir = tmp.path();
    copy_tree(&example("gate-python").join("repo"), dir);
    commit(dir, "base");
    let patches = example("gate-python").join("patches");
    let kept = tempfile::tempdir().expect("tempdir");
    let log = kept.path().join("decisions.jsonl");
    let answers = kept.path().join("answers");
    std::fs::create_dir(&answers).expect("answers dir");
    let mut gated = 0;
    let mut gate_pr = |pr: &str, disposition: &str, reason: &str| -> String {
        let g = gate(
            dir,
            &[
                "--patch-id",
                pr,
                "--decision-log",
                log.to_str().expect("utf-8"),
            ],
        );
        assert_eq!(
            (
                g.answer["disposition"].as_str(),
                g.answer["reason"].as_str()
            ),
            (Some(disposition), Some(reason)),
            "{pr}: {}",
            g.stderr
        );
        gated += 1;
        std::fs::write(answers.join(format!("{gated}.json")), g.answer.to_string())
            .expect("keep the answer");
        g.answer["decision_id"].as_str().expect("id").to_owned()
    };
    let mut blocked = Vec::new();
    for (pr, patch, disposition, reason, fixed) in [
        ("pr-1", "broken-case", "BLOCK", "concrete-behavior", true),
        ("pr-2", "test-aware", "ESCALATE", "test-aware-code", true),
        (
            "pr-3",
            "edits-catalog",
            "ESCALATE",
            "guarded-input-edited",
            true,
        ),
        (
            "pr-4",
            "pinned-input",
            "ESCALATE",
            "test-input-in-code",
            false,
        ),
    ] {
        git(dir, &["checkout", "-q", "-b", pr, "main"]);
        apply(dir, &patches.join(format!("{patch}.patch")));
        commit(dir, patch);
        blocked.push(gate_pr(pr, disposition, reason));
        if fixed {
            git(dir, &["revert", "--no-edit", "HEAD"]);
            apply(dir, &patches.join("good-fix.patch"));
            commit(dir, "the fix");
            gate_pr(pr, "MERGE_OK", "all-gates-held");
        }
    }
    git(dir, &["checkout", "-q", "main"]);
    // By hand: (class, count, production, check, both, points to, hit rate, decisions).
    let want = serde_json::json!([
        {"attribution": "concrete-behavior", "count": 1, "production": 1.0, "check": 0.0, "both": 0.0,
         "points_to": "production", "hit_rate": 1.0, "decision_ids": [blocked[0]]},
        {"attribution": "guarded-input-edited", "count": 1, "production": 0.0, "check": 0.0, "both": 1.0,
         "points_to": "check", "hit_rate": 1.0, "decision_ids": [blocked[2]]},
        {"attribution": "test-aware-code", "count": 1, "production": 1.0, "check": 0.0, "both": 0.0,
         "points_to": "production", "hit_rate": 1.0, "decision_ids": [blocked[1]]},
    ]);
    let rows = kept.path().join("rows.jsonl");
    // The history is read here (git is here); with `--server` the table is the server's.
    let server = TestServer::start();
    let url = server.url("");
    for source in [
        vec![
            "--log",
            log.to_str().expect("utf-8"),
            "--rows-out",
            rows.to_str().expect("utf-8"),
        ],
        vec!["--answers", answers.to_str().expect("utf-8")],
        vec![
            "--log",
            log.to_str().expect("utf-8"),
            "--server",
            url.as_str(),
        ],
    ] {
        let out = patchgate()
            .current_dir(dir)
            .arg("calibrate")
            .args(&source)
            .arg("--json")
            .output()
            .expect("calibrate");
        assert_eq!(
            out.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let got: Value = serde_json::from_slice(&out.stdout).expect("json");
        assert_eq!(got["classes"], want, "{source:?}");
        assert_eq!(
            (got["decisions"].as_u64(), got["calibrated"].as_u64()),
            (Some(4), Some(3))
        );
        assert_eq!(
            got["not_calibrated"],
            serde_json::json!([{"why": "never-merged", "count": 1, "decision_ids": [blocked[3]]}]),
            "{source:?}"
        );
    }
    // The rows written are what `POST /calibrate` reads: the same table from them.
    let out = patchgate()
        .args(["calibrate", "--json"])
        .arg(&rows)
        .output()
        .expect("calibrate rows");
    let got: Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(got, want);
}

/// Issue 39: the Action's gate step in GitHub's merge queue. The queue's group holds two pull
/// requests built on `main` as GitHub builds it (a merge commit per pull request): #1, a
/// harmless comment in `shop/sorting.py`, and #2, the `broken-case` bug. Run with a recorded
/// `merge_group` payload (`tests/data/events/merge_group.json`, its commit ids filled in) and
/// no input base, the step gates the group's head against the queue's base commit: BLOCK,
/// naming the failing test, and the answer and the job summary say a merge group was judged
/// and name #1 and #2. The group without the bug (#1 alone) merges. With a recorded
/// `pull_request` payload the base is `origin/main`, as before.
#[test]
fn the_action_gates_a_merge_group_from_its_event() {
    require_python();
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let tmp = common::git_repo();
    let dir = tmp.path();
    copy_tree(&example("gate-python").join("repo"), dir);
    commit(dir, "base");
    let base = git(dir, &["rev-parse", "HEAD"]);
    git(dir, &["update-ref", "refs/remotes/origin/main", &base]);
    git(dir, &["checkout", "-q", "-b", "harmless", "main"]);
    let sorting = dir.join("shop/sorting.py");
    let text = std::fs::read_to_string(&sorting).expect("sorting.py");
    std::fs::write(
        &sorting,
        format!("{text}\n# Sorted by price alone: ties keep their order.\n"),
    )
    .expect("write");
    commit(dir, "A comment on the sort");
    git(dir, &["checkout", "-q", "-b", "round-down", "main"]);
    apply(
        dir,
        &example("gate-python").join("patches/broken-case.patch"),
    );
    commit(dir, "Round the discounted price");
    // The queue's groups, as GitHub's merge queue builds them on the base.
    let group = |name: &str, prs: &[(u64, &str)]| -> String {
        git(dir, &["checkout", "-q", "-b", name, "main"]);
        for (n, branch) in prs {
            git(
                dir,
                &[
                    "merge",
                    "-q",
                    "--no-ff",
                    branch,
                    "-m",
                    &format!("Merge pull request #{n} from acme/{branch}"),
                ],
            );
        }
        git(dir, &["rev-parse", "HEAD"])
    };
    let with_bug = group("queue-1-2", &[(1, "harmless"), (2, "round-down")]);
    let without = group("queue-1", &[(1, "harmless")]);
    let bin = assert_cmd::cargo::cargo_bin("patchgate");
    let path = format!(
        "{}:{}",
        bin.parent().unwrap().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let recorded = |name: &str, head: &str, pr: u64| -> PathBuf {
        let text = std::fs::read_to_string(root.join(format!("tests/data/events/{name}.json")))
            .expect("recorded event")
            .replace("{PR}", &pr.to_string())
            .replace("{HEAD_SHA}", head)
            .replace("{BASE_SHA}", &base)
            .replace(
                "{HEAD_TREE}",
                &git(dir, &["rev-parse", &format!("{head}^{{tree}}")]),
            );
        let file = dir.join(format!("../{name}-{head}.json"));
        std::fs::write(&file, text).expect("write the event");
        file
    };
    let step = |event_name: &str, event: &Path, checkout: &str, extra: &[(&str, String)]| {
        git(dir, &["checkout", "-q", "--detach", checkout]);
        let files = tempfile::tempdir().unwrap();
        let (outputs, summary) = (files.path().join("out"), files.path().join("summary.md"));
        let out = std::process::Command::new("bash")
            .arg(root.join("deploy/action/gate.sh"))
            .current_dir(dir)
            .env("PATH", &path)
            .env("PATCHGATE_BASE", "")
            .env("PATCHGATE_CONFIG_PATH", "patchgate.toml")
            .env("PATCHGATE_SERVER", "")
            .env("PATCHGATE_TOKEN", "")
            .env("PATCHGATE_SHADOW", "false")
            .env("GITHUB_EVENT_NAME", event_name)
            .env("GITHUB_EVENT_PATH", event)
            .env(
                "GITHUB_BASE_REF",
                if event_name == "pull_request" {
                    "main"
                } else {
                    ""
                },
            )
            .env("GITHUB_OUTPUT", &outputs)
            .env("GITHUB_STEP_SUMMARY", &summary)
            .env("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
            .envs(extra.iter().map(|(k, v)| (*k, v.as_str())))
            .env_remove("GITHUB_ACTIONS")
            .output()
            .expect("bash");
        let said = std::fs::read_to_string(&outputs).unwrap_or_default();
        let body: Vec<&str> = said
            .lines()
            .skip_while(|l| !l.starts_with("answer<<"))
            .skip(1)
            .take_while(|l| !l.starts_with("patchgate_"))
            .collect();
        let answer: Value = serde_json::from_str(&body.join("\n")).unwrap_or(Value::Null);
        let report = std::fs::read_to_string(&summary).unwrap_or_default();
        (
            out.status.code(),
            answer,
            report,
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };

    let event = recorded("merge_group", &with_bug, 2);
    let (code, answer, report, stderr) = step("merge_group", &event, &with_bug, &[]);
    assert_eq!(code, Some(1), "{stderr}\n{answer}");
    assert_eq!(answer["disposition"], "BLOCK", "{answer}");
    assert_eq!(answer["judged"]["base"], base.as_str());
    assert_eq!(answer["judged"]["head"], with_bug.as_str());
    let group_ref = format!("refs/heads/gh-readonly-queue/main/pr-2-{with_bug}");
    assert_eq!(
        answer["merge_group"],
        serde_json::json!({"queue": "github-merge-group", "ref": group_ref, "pull_requests": [1, 2]})
    );
    let failing = answer["failures"][0]["id"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    assert!(
        failing.contains("discount"),
        "the failing test is named: {answer}"
    );
    assert!(report.contains(&failing), "{report}");
    assert!(
        report.contains(&format!(
            "Judged a merge group: `{group_ref}`, holding #1, #2"
        )),
        "{report}"
    );

    let event = recorded("merge_group", &without, 1);
    let (code, answer, report, stderr) = step("merge_group", &event, &without, &[]);
    assert_eq!(code, Some(0), "{stderr}\n{answer}");
    assert_eq!(
        answer["merge_group"]["pull_requests"],
        serde_json::json!([1])
    );
    assert!(report.contains("Judged a merge group"), "{report}");

    // A pull request's own run: base origin/main, the checkout's head, no group.
    let event = recorded("pull_request", &without, 2);
    let (code, answer, _, stderr) = step("pull_request", &event, "round-down", &[]);
    assert_eq!(code, Some(1), "{stderr}\n{answer}");
    assert_eq!(answer["judged"]["base"], base.as_str());
    assert_eq!(answer["merge_group"], Value::Null);

    // Issue 53: the same merge group through the sharded workflow's steps: three shard jobs
    // (`PATCHGATE_SHARD`), each succeeding with its facts written, then the combine job
    // (`PATCHGATE_COMBINE`, the directory its artifacts were downloaded to) deciding as the
    // single job did: BLOCK, the same base, head, group and failing test.
    let event = recorded("merge_group", &with_bug, 2);
    let facts = tempfile::tempdir().unwrap();
    for k in 1..=3 {
        let file = facts.path().join(format!("shard-{k}.json"));
        let (code, answer, _, stderr) = step(
            "merge_group",
            &event,
            &with_bug,
            &[
                ("PATCHGATE_SHARD", format!("{k}/3")),
                ("PATCHGATE_FACTS", file.display().to_string()),
            ],
        );
        assert_eq!(code, Some(0), "shard {k}: {stderr}\n{answer}");
        assert!(file.exists(), "shard {k}: {stderr}");
        assert_eq!(
            answer["rule"], "shards",
            "a shard decides nothing: {answer}"
        );
    }
    let (code, answer, report, stderr) = step(
        "merge_group",
        &event,
        &with_bug,
        &[("PATCHGATE_COMBINE", facts.path().display().to_string())],
    );
    assert_eq!(code, Some(1), "{stderr}\n{answer}");
    assert_eq!(
        (&answer["disposition"], &answer["judged"]["head"]),
        (&serde_json::json!("BLOCK"), &serde_json::json!(with_bug))
    );
    assert_eq!(
        answer["merge_group"],
        serde_json::json!({"queue": "github-merge-group", "ref": group_ref, "pull_requests": [1, 2]})
    );
    assert_eq!(answer["failures"][0]["id"].as_str(), Some(failing.as_str()));
    assert!(report.contains("3 shards combined"), "{report}");
    // A shard's facts missing from the download: ESCALATE evidence-gap, naming it.
    std::fs::remove_file(facts.path().join("shard-2.json")).unwrap();
    let (code, answer, _, stderr) = step(
        "merge_group",
        &event,
        &with_bug,
        &[("PATCHGATE_COMBINE", facts.path().display().to_string())],
    );
    assert_eq!(code, Some(2), "{stderr}\n{answer}");
    assert_eq!(answer["reason"], "evidence-gap");
    assert!(
        answer["steps"][0]["gaps"]
            .to_string()
            .contains("shard 2/3 is missing")
    );
}

/// The base's `sort_is_ordered` made a property that finds a rare bug only sometimes, as a
/// random search does (16 runs in 20, in the issue): the first start in a room explores 300
/// examples, every later start one (the simplest) after the failing examples its database
/// holds. Simulated so the split is certain; the bug and the property are plain.
fn finds_it_sometimes(dir: &Path) {
    twin_off(dir);
    std::fs::write(
        dir.join("properties/test_sort_is_ordered.py"),
        r#"import os

from hypothesis import given, settings, strategies as st

from shop.sorting import by_price

items = st.lists(st.fixed_dictionaries({"price": st.integers(min_value=0, max_value=1000)}))

# The first start on a machine searches; a later one finds the bug only by replaying what the
# example database saved. (The mark is in the home: one a run made in the tree is a finding.)
try:
    mark = os.path.join(os.path.expanduser("~"), f".explored-{__name__}")
    os.close(os.open(mark, os.O_CREAT | os.O_EXCL | os.O_WRONLY))
    EXAMPLES = 300
except FileExistsError:
    EXAMPLES = 1


@settings(max_examples=EXAMPLES)
@given(items)
def test_sort_is_ordered(listing):
    prices = [item["price"] for item in by_price(listing)]
    assert prices == sorted(prices)
"#,
    )
    .expect("write the property");
}

/// Issue 50 (CONTRACT.md section 15.5), a real bug called a flaky property: `rare-failure`
/// lists a long listing that opens with a dear item dearest first (the suite's three-item case
/// passes). With each run's example database in its own `/tmp` (the starter before issue 50),
/// run 2 never tries run 1's counterexample: [fail, pass], ESCALATE `flaky-property`, whose
/// advice was to freeze it. Now the runs share the copy's database and a split is replayed
/// where its failure was found: the failure reproduces, BLOCK. Runs at once (`--jobs 3`) or in
/// turn, the answer is the same.
#[test]
fn a_counterexample_is_replayed_before_it_is_called_a_flake() {
    require_python();
    let old = |dir: &Path| {
        finds_it_sometimes(dir);
        let config = dir.join("patchgate.toml");
        let text = std::fs::read_to_string(&config).expect("config");
        let env = "env = [\"PYTEST_DISABLE_PLUGIN_AUTOLOAD=1\"]";
        assert!(text.contains(env), "the starter's env");
        let old = "env = [\"PYTEST_DISABLE_PLUGIN_AUTOLOAD=1\", \"HYPOTHESIS_STORAGE_DIRECTORY=/tmp/hypothesis\"]";
        std::fs::write(&config, text.replace(env, old)).expect("write");
    };
    let repo = repository_read("gate-python", "rare-failure", old, |_| {});
    assert!(plain_pytest_passes(repo.path()), "the suite misses the bug");
    let g = gate(repo.path(), &[]);
    escalates(&g, "inadmissible-evidence", "flaky-property");
    let t1 = step(&g.answer, "properties");
    assert!(
        t1["summary"]
            .as_str()
            .is_some_and(|s| s.contains("1 did not")),
        "replayed, and it passed: {t1}"
    );
    for jobs in ["1", "3"] {
        let repo = repository_read("gate-python", "rare-failure", finds_it_sometimes, |_| {});
        let g = gate(repo.path(), &["--jobs", jobs]);
        expect(&g, "BLOCK", "invariant-or-over-specified-property", 1);
        let ordered = step(&g.answer, "properties")["properties"]
            .as_array()
            .and_then(|p| p.iter().find(|p| p["id"] == "sort_is_ordered"))
            .cloned()
            .unwrap_or_default();
        assert_eq!(ordered["state"], "fail", "--jobs {jobs}: {}", g.answer);
    }
}

/// Issue 50 (CONTRACT.md section 15.5), a reading hit hid a real failure: `buggy-order` sorts
/// by a key class whose `__lt__` compares prices as the catalogue prints them ("10" < "9"), an
/// honest bug the suite's one-digit case misses and `sort_is_ordered` catches. Before, its
/// `__lt__` (an overload) escalated `equality-overload` before anything ran; now the runs still
/// happen, the failure answers BLOCK, and the test-aware step still names the hit. A hit whose
/// runs pass (`eq-overload`) keeps the reading's ESCALATE.
#[test]
fn a_reading_hit_does_not_hide_a_failure() {
    let (_repo, g) = python("buggy-order");
    expect(&g, "BLOCK", "invariant-or-over-specified-property", 1);
    let reading = step(&g.answer, "test-aware");
    assert_eq!(reading["count"], 1, "{reading}");
    assert_eq!(reading["lines"][0]["class"], "overload", "{reading}");
    assert_eq!(reading["lines"][0]["file"], "shop/sorting.py", "{reading}");
    let failures = g.answer["failures"].as_array().cloned().unwrap_or_default();
    assert!(
        failures.iter().any(|f| f["id"]
            .as_str()
            .is_some_and(|id| id.contains("sort_is_ordered"))),
        "the failing case is named: {}",
        g.answer
    );
    // On the example's own config (its reading not accepted, as `READ_FIRST` does).
    let repo = repository_read("gate-python", "eq-overload", |_| {}, |_| {});
    let g = gate(repo.path(), &[]);
    escalates(&g, "equality-overload", "equality-overload");
    // The runs happened: its comparison also fooled the canary, which the reading names first.
    assert_eq!(
        step(&g.answer, "canary")["failed"],
        false,
        "the runs happened: {}",
        g.answer
    );
}

/// Issue 52 on Rust, written first: `long-list-special-case` sends lists of more than 64
/// shares through a byte-wide index (`(i as u8) < rest as u8`): right for every length the
/// properties and the fixture cases give (1 to 11 parts), wrong from 256 on (300 parts: 44
/// cents too many). A plain `cargo test` passes, and with observing off it merges. Observed:
/// its branch no check takes is named, its condition made true survives every check, and its
/// `return` no check runs: ESCALATE `unobserved-change` (its one mutant, not killed).
/// `honest-refactor` spells the remainder out (`if i < rest { share + 1 } else { share }`):
/// MERGE_OK, every line run by the fixture cases, its mutants killed by them.
#[test]
fn a_rust_change_no_check_observes_escalates() {
    let target = tempfile::tempdir().expect("tempdir");
    let rust_gate = |dir: &Path| rust_gated(dir, target.path());
    let off = |dir: &Path| {
        let config = dir.join("patchgate.toml");
        let text = std::fs::read_to_string(&config).expect("config");
        std::fs::write(&config, observe_off(&text)).expect("write");
    };
    let old = repository_with("gate-rust", "long-list-special-case", off, |_| {});
    let plain = plain_cargo_test(old.path(), target.path());
    assert!(plain.status.success(), "hides the bug");
    let g = rust_gate(old.path());
    expect(&g, "MERGE_OK", "all-gates-held", 0);
    assert_eq!(step(&g.answer, "observe")["on"], false);

    let repo = repository("gate-rust", "long-list-special-case", |_| {});
    let g = rust_gate(repo.path());
    escalates(&g, "inadmissible-evidence", "unobserved-change");
    let o = observed(&g);
    let fixtures = json!(["integration::fixture_cases"]);
    assert_eq!(
        o["lines"],
        json!([
            {"file": "src/lib.rs", "line": 10, "checks": fixtures},
            {"file": "src/lib.rs", "line": 12, "checks": []}
        ]),
        "the comment and the brace are no code; the `return` ran under no check"
    );
    assert_eq!(
        o["untaken"],
        json!([{"file": "src/lib.rs", "line": 10, "to": 12}])
    );
    let fates = fates(o);
    assert_eq!(
        fates,
        [(&json!(10), &json!("condition-true"), &json!("survived"))]
    );

    let repo = repository("gate-rust", "honest-refactor", |_| {});
    let g = rust_gate(repo.path());
    expect(&g, "MERGE_OK", "all-gates-held", 0);
    let o = observed(&g);
    assert_eq!(
        o["lines"],
        json!([
            {"file": "src/lib.rs", "line": 10, "checks": fixtures},
            {"file": "src/lib.rs", "line": 11, "checks": fixtures},
            {"file": "src/lib.rs", "line": 12, "checks": fixtures}
        ])
    );
    let mutants = o["mutants"].as_array().expect("patch mutants");
    assert!(!mutants.is_empty(), "{o}");
    for m in mutants {
        assert_eq!(m["state"], "killed", "{o}");
        assert_eq!(m["killed_by"], fixtures, "{o}");
    }
}

/// Issue 68: the build step compiles the Rust patch mutants behind switches into the one build
/// the runs share, and a mutant the compiler refuses in place costs nothing but time. Here the
/// patch adds `String::from("c") + &String::from("ents")` to `honest-refactor`: its mutant
/// (`+` made `-`) has no `Sub` for `String`, so the switched text does not build. With the
/// example's build step, the judged text is built instead, the observed run builds the probes
/// alone, and each mutant is built on its own; without one, nothing is switched in (each
/// mutant is built on its own, as the fallback does). Either way every mutant meets the fate
/// it met before issue 68: the concatenation's mutant void (it does not compile), the other
/// two killed by the fixtures.
#[test]
fn a_switched_mutant_the_compiler_refuses_falls_back_to_its_own_build() {
    let target = tempfile::tempdir().expect("tempdir");
    for build_step in [true, false] {
        refused_switch(
            target.path(),
            |dir| without_build(dir, build_step),
            build_step,
        );
    }
}

/// The `[build]` table taken out of the config at `dir` unless `build_step`.
fn without_build(dir: &Path, build_step: bool) {
    if !build_step {
        let config = dir.join("patchgate.toml");
        let text = std::fs::read_to_string(&config).expect("config");
        let (head, rest) = text.split_once("[build]").expect("a build step");
        let tail = rest.find("\n[").map_or("", |at| &rest[at..]);
        std::fs::write(&config, format!("{head}{tail}")).expect("write");
    }
}

/// Issue 68, written first: `remembers-the-observed-run` is `long-list-special-case` with
/// code in `split` that keeps its process's environment (read from `/proc/self/environ` by a
/// path no reading rule names, cargo's own variables left out) in `target/`, a scratch
/// directory, and panics when a later run's differs. A plain `cargo test` passes. Before, a
/// patch mutant's run started from a copy of a room other runs had run in (the observed
/// run's, the property runs'): its environment differed from theirs by the mutant's switch,
/// it panicked, and the condition-true mutant that survives every check counted as killed:
/// MERGE_OK, with the example's build step and without one (the binaries of stops 82 and 83
/// both merged it). Now every mutant's run starts from a copy of the room kept before any run
/// of the judged code: the mutant survives, ESCALATE `unobserved-change`.
#[test]
fn a_patch_mutant_run_remembers_nothing_of_the_runs_before_it() {
    let target = tempfile::tempdir().expect("tempdir");
    let patch = "remembers-the-observed-run";
    let old = repository("gate-rust", patch, |_| {});
    let plain = plain_cargo_test(old.path(), target.path());
    assert!(plain.status.success(), "hides the bug");
    for build_step in [true, false] {
        let repo = repository_with("gate-rust", patch, |d| without_build(d, build_step), |_| {});
        let g = rust_gated(repo.path(), target.path());
        escalates(&g, "inadmissible-evidence", "unobserved-change");
        assert_eq!(
            fates(observed(&g)),
            [(&json!(24), &json!("condition-true"), &json!("survived"))],
            "build step: {build_step}"
        );
    }
}

/// Issue 68, written first: `tells-a-mutant-run-by-its-arguments` is `long-list-special-case`
/// with an assertion in `split` that its process's command line (`/proc/self/cmdline`, by a
/// path no reading rule names) does not pick tests one by one (`--exact`) outside the
/// properties' binary. A plain `cargo test`, the suite and the property runs pass; a patch
/// mutant's run selects the tests that ran its line, so it fails whatever the mutant is, and
/// the condition-true mutant that survives every check counted as killed: MERGE_OK on the
/// binary before. Now a kill stands only where the same command with a switch's value that
/// turns none on (its decoy, in a room no run touched) passes: it fails here, no kill
/// stands, ESCALATE `unobserved-change`.
#[test]
fn a_kill_stands_only_where_its_checks_pass_with_no_mutant_on() {
    let target = tempfile::tempdir().expect("tempdir");
    let patch = "tells-a-mutant-run-by-its-arguments";
    let repo = repository("gate-rust", patch, |_| {});
    let plain = plain_cargo_test(repo.path(), target.path());
    assert!(plain.status.success(), "hides the bug");
    let g = rust_gated(repo.path(), target.path());
    escalates(&g, "inadmissible-evidence", "unobserved-change");
    assert_eq!(
        fates(observed(&g)),
        [(&json!(14), &json!("condition-true"), &json!("void"))]
    );
    assert!(g.stderr.contains("no kill stands"), "{}", g.stderr);
}

/// [`a_switched_mutant_the_compiler_refuses_falls_back_to_its_own_build`], one gate.
fn refused_switch(target: &Path, base_edit: impl FnOnce(&Path), build_step: bool) {
    let repo = repository_with("gate-rust", "honest-refactor", base_edit, |dir| {
        let lib = dir.join("src/lib.rs");
        let text = std::fs::read_to_string(&lib).expect("lib");
        let line = "    let (share, rest) = (total / parts, total % parts);\n";
        let added = "    let _unit = String::from(\"c\") + &String::from(\"ents\");\n";
        assert!(text.contains(line));
        std::fs::write(&lib, text.replacen(line, &format!("{line}{added}"), 1)).expect("write");
    });
    let g = rust_gated(repo.path(), target);
    expect(&g, "MERGE_OK", "all-gates-held", 0);
    // Without a build step no mutant is switched in: each is built on its own.
    let said = match build_step {
        true => "the judged text is built, the observed run builds the probes alone",
        false => "patch mutant 1 (src/lib.rs:10 swap-arithmetic): exit",
    };
    assert!(g.stderr.contains(said), "{}", g.stderr);
    let switched = g.stderr.contains("compiled into the observed run's build");
    assert_eq!(switched, build_step, "{}", g.stderr);
    let o = observed(&g);
    assert_eq!(
        fates(o),
        [
            (&json!(10), &json!("swap-arithmetic"), &json!("void")),
            (&json!(11), &json!("shift-integer"), &json!("killed")),
            (&json!(12), &json!("swap-arithmetic"), &json!("killed")),
        ]
    );
}

/// A plain `cargo test` of the repository at `dir` (its builds in `target`): its output.
fn plain_cargo_test(dir: &Path, target: &Path) -> std::process::Output {
    std::process::Command::new("cargo")
        .current_dir(dir)
        .args(["test", "--quiet", "--offline"])
        .env("CARGO_TARGET_DIR", target)
        .output()
        .expect("cargo")
}

/// The Rust example at `dir` gated, its Cargo builds in `target` (shared between gates).
fn rust_gated(dir: &Path, target: &Path) -> Gated {
    let out_dir = tempfile::tempdir().expect("tempdir");
    let json_out = out_dir.path().join("answer.json");
    let out = patchgate()
        .current_dir(dir)
        .args(["gate", "--base", "main", "--json-out"])
        .arg(&json_out)
        .env("CARGO_TARGET_DIR", target)
        .env_remove("GITHUB_ACTIONS")
        .output()
        .expect("run patchgate");
    let answer: Value = std::fs::read(&json_out)
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok())
        .unwrap_or(Value::Null);
    Gated {
        exit: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        answer,
        ledger: Vec::new(),
    }
}

/// Issue 66 on Rust (CONTRACT.md 16.5), written first: two patches that hide a real bug from a
/// plain `cargo test` and merge on the gate with the example's `[observe]` (every changed line
/// a check runs, every patch mutant killed), and with `[replay]` on are stopped by what the
/// code does, with the input named:
///
/// - `wide-split-off-by-one`, a length-only special case: splits of more than 16 parts hand
///   the remainder out from index 1 (a cent lost); the fixtures and the properties use 1 to 11
///   parts. The base's test `split(5, 0)` agrees; its neighbour `parts = 17` (the patch's own
///   literal 16, + 1) does not: ESCALATE `unobserved-difference`.
/// - `quoted-by-key`, the integers the fixtures pin special-cased through a key no reading
///   sees (`total * 31 + parts` in a table): every other split gives the remainder to the last
///   shares. Drawn inputs differ: ESCALATE `unobserved-difference`.
///
/// `honest-refactor` (the same behaviour spelt otherwise) agrees on the call, its neighbours
/// and every drawn input: MERGE_OK.
#[test]
fn rust_code_is_judged_by_what_it_does_against_the_base() {
    let target = tempfile::tempdir().expect("tempdir");
    for patch in ["wide-split-off-by-one", "quoted-by-key"] {
        let old = repository("gate-rust", patch, |_| {});
        let plain = plain_cargo_test(old.path(), target.path());
        assert!(plain.status.success(), "{patch} hides the bug");
        let g = rust_gated(old.path(), target.path());
        expect(&g, "MERGE_OK", "all-gates-held", 0);

        let repo = repository_with("gate-rust", patch, replay_on, |_| {});
        let g = rust_gated(repo.path(), target.path());
        escalates(&g, "inadmissible-evidence", "unobserved-difference");
        let b = &step(&g.answer, "behavior")["facts"];
        let calls = b["calls"].as_array().expect("calls");
        assert_eq!(
            (
                &calls[0]["function"],
                &calls[0]["check"],
                &calls[0]["arguments"]
            ),
            (
                &json!("split"),
                &json!("tests::no_parts_no_shares"),
                &json!("(5, 0)")
            ),
            "the base's test's literal call: {b}"
        );
        let rows = b["against_base"].as_array().expect("rows");
        assert_eq!(rows[0]["recorded"], "agrees", "{b}");
        let named: Vec<&Value> = rows
            .iter()
            .flat_map(|r| r["differences"].as_array().into_iter().flatten())
            .map(|d| &d["input"])
            .collect();
        if patch == "wide-split-off-by-one" {
            assert!(named.contains(&&json!("`parts` = 17")), "{b}");
        }
        assert!(!named.is_empty(), "{b}");
    }
    let repo = repository_with("gate-rust", "honest-refactor", replay_on, |_| {});
    let g = rust_gated(repo.path(), target.path());
    expect(&g, "MERGE_OK", "all-gates-held", 0);
    let b = &step(&g.answer, "behavior")["facts"];
    for row in b["against_base"].as_array().expect("rows") {
        assert_eq!(row["differing"], 0, "{b}");
        assert!(row["neighbours"].as_u64() > Some(0), "{b}");
    }
}

/// The base config's `[observe]` as the test needs it: `off`, or with `branches = "required"`.
fn observe_set(to: &'static str) -> impl FnOnce(&Path) {
    move |dir: &Path| {
        let config = dir.join("patchgate.toml");
        let text = std::fs::read_to_string(&config).expect("config");
        let set = match to {
            "off" => observe_off(&text),
            _ => text.replace("branches = \"listed\"", &format!("branches = \"{to}\"")),
        };
        assert_ne!(set, text, "the starter's [observe]");
        std::fs::write(&config, set).expect("write");
    }
}

/// Each patch mutant of the observe facts `o`: its line, operator and state.
fn fates(o: &Value) -> Vec<(&Value, &Value, &Value)> {
    o["mutants"]
        .as_array()
        .expect("patch mutants")
        .iter()
        .map(|m| (&m["line"], &m["operator"], &m["state"]))
        .collect()
}

/// The observe step of an answer: its facts.
fn observed(g: &Gated) -> &Value {
    &step(&g.answer, "observe")["facts"]
}

/// Issue 52, written first: two patches that hide a real bug from every check, each merged
/// with observing off (the gate before issue 52), and an honest one.
///
/// - `unasserted-refactor`: `format_price` through a float (`$1000000000000000.00` for
///   10^17 + 1 cents); `shop/pricing.py` is in two strong properties' locality, which test
///   only `apply_discount`, and the only test that runs `format_price` is frozen: ESCALATE
///   `unobserved-change`, the line named with no check.
/// - `type-special-case`: `by_price` sorts a `list` as before and sends any other iterable
///   through a heap that breaks ties the wrong way; the property and the suite's case give
///   lists. The branch no check takes is named, and its condition made true survives every
///   check: ESCALATE `unobserved-branch` (the starter's `changes = "required"`).
/// - `honest-refactor`: the range check spelled with `or`: MERGE_OK, its line run by the
///   suite's cases and its patch mutant killed (its `raise` branch no test takes is listed,
///   not decided: the starter's `branches = "listed"`).
#[test]
fn a_change_no_check_observes_escalates() {
    require_python();
    for patch in [
        "unasserted-refactor",
        "type-special-case",
        "self-checking-special-case",
    ] {
        let old = repository_with("gate-python", patch, observe_set("off"), |_| {});
        assert!(plain_pytest_passes(old.path()), "{patch}: hides the bug");
        let g = gate(old.path(), &[]);
        expect(&g, "MERGE_OK", "all-gates-held", 0);
        assert_eq!(step(&g.answer, "observe")["on"], false, "{patch}");
    }
    let (_repo, g) = python("unasserted-refactor");
    escalates(&g, "inadmissible-evidence", "unobserved-change");
    let o = observed(&g);
    assert_eq!(
        (&o["line_count"], &o["run_count"]),
        (&json!(1), &json!(0)),
        "{o}"
    );
    assert_eq!(
        o["lines"],
        json!([{"file": "shop/pricing.py", "line": 17, "checks": []}]),
        "the frozen legacy test ran it, and is no check"
    );

    let (_repo, g) = python("type-special-case");
    escalates(&g, "inadmissible-evidence", "unobserved-branch");
    let o = observed(&g);
    assert_eq!(
        o["untaken"],
        json!([{"file": "shop/sorting.py", "line": 8, "to": 11}])
    );
    let survivors: Vec<(&Value, &Value)> = o["mutants"]
        .as_array()
        .expect("patch mutants")
        .iter()
        .filter(|m| m["state"] == "survived")
        .map(|m| (&m["line"], &m["operator"]))
        .collect();
    assert_eq!(survivors, [(&json!(8), &json!("condition-true"))]);

    // The attack on the mutants: `type-special-case` plus a check of the module's own size
    // (`os.path.getsize(__file__)`, "a partial deploy must fail loudly") in `by_price`. A
    // mutant written into the file changed its size, so every mutant "died" and the patch
    // merged (3 of 3 killed with the binary before this test). Applied as the module loads,
    // the file stays the judged text: the heap branch's condition made true survives.
    let (_repo, g) = python("self-checking-special-case");
    escalates(&g, "inadmissible-evidence", "unobserved-branch");
    let o = observed(&g);
    let fates = fates(o);
    assert_eq!(
        fates,
        [
            (&json!(12), &json!("condition-true"), &json!("killed")),
            (&json!(14), &json!("condition-true"), &json!("survived")),
            (&json!(15), &json!("return-constant"), &json!("killed")),
        ],
        "{o}"
    );

    let (_repo, g) = python("honest-refactor");
    expect(&g, "MERGE_OK", "all-gates-held", 0);
    let o = observed(&g);
    assert_eq!(
        o["lines"],
        json!([{"file": "shop/pricing.py", "line": 10, "checks": ["tests.test_cases::test_case"]}])
    );
    assert_eq!(o["mutants"][0]["state"], "killed", "{o}");
    assert_eq!(o["untaken"][0]["line"], 10, "listed: {o}");
}

/// Issue 64: a test that fails only in the observed run is never the patch's failure.
/// `observer-aware` rounds a discount up when its module was handed a name it does not define
/// (the observed run's probe), down otherwise: a plain `pytest` passes, the observed run fails
/// the rounding case. Decided on those facts alone (the gate before issue 64)
/// it is BLOCK `concrete-behavior`, the patch blamed for what the observer did. The failures
/// are run again without the observer, pass, and the gate answers ESCALATE
/// `inadmissible-evidence`: never a pass (the code told the runs apart), never a BLOCK.
#[test]
fn a_failure_only_under_the_observer_is_not_the_patch_s() {
    require_python();
    let repo = repository("gate-python", "observer-aware", |_| {});
    assert!(plain_pytest_passes(repo.path()), "a plain pytest passes");
    let out = tempfile::tempdir().expect("tempdir");
    let facts_at = out.path().join("facts.json");
    let facts_arg = facts_at.to_str().expect("utf-8");
    let g = gate(repo.path(), &["--facts-out", facts_arg]);
    expect(&g, "ESCALATE", "inadmissible-evidence", 2);
    let t2 = step(&g.answer, "fixtures");
    assert_eq!(t2["verdict"], "unknown", "{t2}");
    let summary = t2["summary"].as_str().unwrap_or_default();
    assert!(
        summary.contains("only in the observed run") && summary.contains("without the observer"),
        "{summary}"
    );
    let mut facts: Value =
        serde_json::from_slice(&std::fs::read(&facts_at).expect("facts")).expect("json");
    let suite = &facts["fixture_suite"];
    assert_eq!(suite["exit_code"], 1, "the observed run failed: {suite}");
    assert_eq!(
        suite["plain"]["exit_code"], 0,
        "and plainly passed: {suite}"
    );
    // Without the plain run (the gate before issue 64): the patch blamed.
    facts["fixture_suite"]
        .as_object_mut()
        .expect("suite")
        .remove("plain");
    std::fs::write(&facts_at, serde_json::to_vec(&facts).expect("json")).expect("write");
    let old = patchgate()
        .args(["gate", "--facts", facts_arg])
        .output()
        .expect("decide");
    assert_eq!(
        (
            old.status.code(),
            String::from_utf8_lossy(&old.stdout).into_owned()
        ),
        (Some(1), "BLOCK reason=concrete-behavior\n".to_owned()),
        "{}",
        String::from_utf8_lossy(&old.stderr)
    );
}

/// The starter's text with its `[replay]` block commented out: the examples keep replay off
/// (each defence shows alone, and "the gate before issue 66" is the example's own config); the
/// tests of issue 66 turn it on ([`replay_on`]).
fn replay_commented(starter: &str) -> String {
    let mut on = false;
    let lines: Vec<String> = starter
        .split('\n')
        .map(|l| {
            on = (on || l == "[replay]") && !l.is_empty();
            match on {
                true => format!("# {l}"),
                false => l.to_owned(),
            }
        })
        .collect();
    lines.join("\n")
}

/// The base's config with `[replay]` on (issue 66): each call into a changed function the
/// observed run records is made again, twice, in a plain program.
fn replay_on(dir: &Path) {
    let config = dir.join("patchgate.toml");
    let mut text = std::fs::read_to_string(&config).expect("config");
    text.push_str(
        "\n[replay]\nbehaves_under_test = \"required\"\ncalls = 10\nunobserved_difference = \"required\"\nspecial_case = \"required\"\nunasserted_difference = \"required\"\n",
    );
    std::fs::write(&config, text).expect("write config");
}

/// `patch` on the Python example with `[replay]` on, which a plain pytest passes, gated; its
/// facts in `facts.json` of the directory returned.
fn gated_with_the_replay(patch: &str) -> (Gated, tempfile::TempDir) {
    let repo = repository_with("gate-python", patch, replay_on, |_| {});
    assert!(
        plain_pytest_passes(repo.path()),
        "{patch}: a plain pytest passes"
    );
    let out = tempfile::tempdir().expect("tempdir");
    let facts_at = out.path().join("facts.json");
    let g = gate(
        repo.path(),
        &["--facts-out", facts_at.to_str().expect("utf-8")],
    );
    (g, out)
}

/// The gate before issue 66: the facts at `facts_at` without the replay (`behavior`) merge.
fn merges_without_the_replay(facts_at: &Path, patch: &str) {
    let mut facts: Value =
        serde_json::from_slice(&std::fs::read(facts_at).expect("facts")).expect("json");
    facts.as_object_mut().expect("facts").remove("behavior");
    std::fs::write(facts_at, serde_json::to_vec(&facts).expect("json")).expect("write");
    let old = patchgate()
        .args(["gate", "--facts", facts_at.to_str().expect("utf-8")])
        .output()
        .expect("decide");
    assert_eq!(
        String::from_utf8_lossy(&old.stdout),
        "MERGE_OK reason=all-gates-held\n",
        "{patch}: {}",
        String::from_utf8_lossy(&old.stderr)
    );
}

/// Issue 66 (CONTRACT.md 16.2), attacks first. Each patch rounds a discount to the nearest
/// cent unless it can tell it runs under pytest, by a means no reading rule lists: the
/// filters pytest puts into `warnings` (`warnings-aware`), the handler it adds to the root
/// logger (`logging-aware`), a relative path that only resolves from the runner's working
/// directory (`relative-path-aware`), `sys.modules` reached through `pkgutil.resolve_name` and
/// a computed name (`computed-import-aware`). A plain pytest passes, and the gate before issue
/// 66 (the same facts without the replay) merges each. With `[replay]` on, the recorded call
/// `apply_discount(1999, 50)` answers 999 under the tests and 1000 in both plain programs:
/// BLOCK `concrete-behavior`, cause `behaves-under-test`, the call named. An honest refactor
/// of the same function still merges, every replayed call agreeing.
#[test]
fn code_that_answers_differently_outside_the_tests_is_blocked() {
    require_python();
    for patch in [
        "warnings-aware",
        "logging-aware",
        "relative-path-aware",
        "computed-import-aware",
    ] {
        let (g, out) = gated_with_the_replay(patch);
        let facts_at = out.path().join("facts.json");
        expect(&g, "BLOCK", "concrete-behavior", 1);
        assert_eq!(
            g.answer["cause"], "behaves-under-test",
            "{patch}: {}",
            g.answer
        );
        let b = step(&g.answer, "behavior");
        assert_eq!(b["verdict"], "fail", "{patch}: {b}");
        assert_eq!(b["found"], "behaves-under-test", "{patch}: {b}");
        let summary = b["summary"].as_str().unwrap_or_default();
        assert!(
            summary.contains("apply_discount(1999, 50)")
                && summary.contains("gave 999 under the tests and 1000 in a plain program"),
            "{patch}: {summary}"
        );
        assert_eq!(step(&g.answer, "fixtures")["verdict"], "pass", "{patch}");
        merges_without_the_replay(&facts_at, patch);
    }
    let repo = repository_with("gate-python", "honest-refactor", replay_on, |_| {});
    let g = gate(repo.path(), &[]);
    expect(&g, "MERGE_OK", "all-gates-held", 0);
    let b = step(&g.answer, "behavior");
    let calls = b["facts"]["calls"].as_array().expect("calls");
    assert!(!calls.is_empty(), "{b}");
    // Against the base (16.3): every recorded call and every neighbour answered alike.
    let rows = b["facts"]["against_base"].as_array().expect("against_base");
    assert!(
        !rows.is_empty()
            && rows.iter().all(|r| r["recorded"] == "agrees"
                && r["differing"] == 0
                && r["neighbours"].as_u64() > Some(0)),
        "{b}"
    );
    assert!(
        calls
            .iter()
            .all(|c| c["recorded"]["digest"] == c["plain"][0]["digest"]
                && c["plain"][0]["digest"] == c["plain"][1]["digest"]),
        "{b}"
    );
}

/// Issue 66 (CONTRACT.md 16.3), attacks first: code right only where the checks look.
/// `list-only-fast-path` returns any iterable but a list unsorted; `length-special-case`
/// breaks ties by SKU (not in their order) for every length but the fixture's 3;
/// `limit-constant` drops every item past 8,192; `value-special-case` bills a 37% discount as
/// 38% (`apply_discount`, a value no check passes). A plain pytest passes on each, and the
/// gate before (the same facts without the replay) merges each. Against the base, a neighbour
/// of a recorded call (a tuple, one item more, 8,193 items: a length the patch's own literal
/// draws; the discount 37, the patch's own literal) answers otherwise than the base, and no
/// recorded call does: ESCALATE `inadmissible-evidence`, cause `unobserved-difference`, the
/// input named. (The in-locality properties' first runs record calls too: where one drew the
/// discount 37 itself, that recorded call differs and none of its neighbours does,
/// `special-case`.)
///
/// `data-file-special-case` rounds a discount to the nearest cent but for the inputs a data
/// file beside the code lists (the fixture's `1999/50`), so the reading, which reads code,
/// sees no pinned literal, and every call the suite makes agrees with the base. The calls the
/// properties made differ from the base (they assert a bound, not the price), and no test the
/// patch adds fails on the base: `unasserted-difference`, the property's call named.
#[test]
fn code_right_only_where_the_checks_look_escalates() {
    require_python();
    for (patch, input) in [
        ("list-only-fast-path", "with items as a tuple"),
        ("length-special-case", "with items one longer"),
        ("limit-constant", "with items of length 8193"),
        ("value-special-case", "with percent = 37"),
        ("data-file-special-case", ""),
    ] {
        let (g, out) = gated_with_the_replay(patch);
        let facts_at = out.path().join("facts.json");
        expect(&g, "ESCALATE", "inadmissible-evidence", 2);
        let b = step(&g.answer, "behavior");
        assert_eq!(b["verdict"], "unknown", "{patch}: {b}");
        let summary = b["summary"].as_str().unwrap_or_default();
        let rows = b["facts"]["against_base"].as_array().expect("rows");
        let calls = b["facts"]["calls"].as_array().expect("calls");
        let drew_37 = calls
            .iter()
            .any(|c| c["arguments"].as_str().is_some_and(|a| a.ends_with(", 37")));
        if patch == "data-file-special-case" {
            assert_eq!(g.answer["cause"], "unasserted-difference", "{b}");
            assert!(
                summary.contains("unasserted-difference: apply_discount("),
                "{summary}"
            );
            for r in rows {
                let check = &calls[r["call"].as_u64().expect("call") as usize]["check"];
                if check.as_str().is_some_and(|c| c.starts_with("tests.")) {
                    assert_eq!(r["recorded"], "agrees", "the suite's calls agree: {b}");
                }
            }
        } else if patch == "value-special-case" && drew_37 {
            assert_eq!(g.answer["cause"], "special-case", "{b}");
        } else {
            assert_eq!(g.answer["cause"], "unobserved-difference", "{patch}: {b}");
            assert!(
                summary.contains("unobserved-difference: ") && summary.contains(input),
                "{patch}: {summary}"
            );
            assert!(
                rows.iter().all(|r| r["recorded"] == "agrees")
                    && rows.iter().any(|r| r["differing"].as_u64() > Some(0)),
                "{patch}: {b}"
            );
        }
        merges_without_the_replay(&facts_at, patch);
    }
}

/// `facts_at` (a gate's facts with `[replay]` on) as the gate before issue 66's added-test
/// recording gathered them: the calls the tests the patch adds made (their `check` in
/// `module`) taken out with their rows, and the base never asked about those tests; decided
/// again: the disposition and the cause of `patchgate gate --facts --json`.
fn decided_without_the_added_calls(facts_at: &Path, module: &str) -> (String, String) {
    let mut facts: Value =
        serde_json::from_slice(&std::fs::read(facts_at).expect("facts")).expect("json");
    let b = facts["behavior"].as_object_mut().expect("behavior");
    let calls = b["calls"].as_array().cloned().unwrap_or_default();
    let kept: Vec<usize> = (0..calls.len())
        .filter(|i| {
            !calls[*i]["check"]
                .as_str()
                .is_some_and(|c| c.starts_with(module))
        })
        .collect();
    assert!(
        kept.len() < calls.len(),
        "the added test's calls: {calls:?}"
    );
    let rows: Vec<Value> = b["against_base"]
        .as_array()
        .cloned()
        .unwrap_or_default()
        .into_iter()
        .filter_map(|mut r| {
            let at = kept
                .iter()
                .position(|k| Some(*k as u64) == r["call"].as_u64())?;
            r["call"] = serde_json::json!(at);
            Some(r)
        })
        .collect();
    b.insert(
        "calls".into(),
        Value::Array(kept.iter().map(|i| calls[*i].clone()).collect()),
    );
    b.insert("against_base".into(), Value::Array(rows));
    b.remove("added_fail_on_base");
    b.remove("failing_on_base");
    std::fs::write(facts_at, serde_json::to_vec(&facts).expect("json")).expect("write");
    let old = patchgate()
        .args([
            "gate",
            "--json",
            "--facts",
            facts_at.to_str().expect("utf-8"),
        ])
        .output()
        .expect("decide");
    let answer: Value = serde_json::from_slice(&old.stdout).expect("an answer");
    let said = |k: &str| answer[k].as_str().unwrap_or("-").to_owned();
    (said("disposition"), said("cause"))
}

/// Issue 66 (CONTRACT.md 16.1, 16.3): the tests the patch adds are observed runs too, so a
/// difference "where a test the patch adds fails on the base" is where that test called.
/// Attack first: `exact-input-fix` adds a test that a full discount still charges a cent,
/// `apply_discount(4321, 100) == 1`, and makes the code right for that input alone (every
/// other price is still discounted to nothing). A plain pytest passes, the added test passes,
/// and the gate before (the same facts without the added test's calls) merged it, `[replay]`
/// on: no recorded call of the suite differs, nor any neighbour of one. Now the added test's
/// call differs from the base and none of its neighbours does (4320, 4322, 99%…): ESCALATE
/// `special-case`, the input named. The honest fix with the same test (`minimum-charge`: at
/// least one cent for any price) merges, where the gate before escalated it
/// `unobserved-difference` (a neighbour of the suite's calls differed and no recorded call
/// did): its test's call differs and so do that call's neighbours, and the test fails on the
/// base. So does the fix with its test new in an edited test file.
#[test]
fn a_fix_right_only_for_its_test_s_input_escalates_and_the_fix_merges() {
    require_python();
    let (g, out) = gated_with_the_replay("exact-input-fix");
    escalates(&g, "inadmissible-evidence", "special-case");
    let b = step(&g.answer, "behavior");
    let summary = b["summary"].as_str().unwrap_or_default();
    assert!(
        summary.contains(
            "special-case: apply_discount(4321, 100) gave 0 on the base and 1 on the patch"
        ),
        "{summary}"
    );
    assert_eq!(b["facts"]["added_fail_on_base"], true, "{b}");
    let old = decided_without_the_added_calls(
        &out.path().join("facts.json"),
        "tests.test_minimum_charge::",
    );
    assert_eq!(old, ("MERGE_OK".to_owned(), "-".to_owned()));

    let (g, out) = gated_with_the_replay("minimum-charge");
    expect(&g, "MERGE_OK", "all-gates-held", 0);
    let b = step(&g.answer, "behavior");
    let rows = b["facts"]["against_base"].as_array().expect("rows");
    assert!(
        rows.iter().any(|r| r["recorded"] == "differs"),
        "the added test's call differs: {b}"
    );
    let old = decided_without_the_added_calls(
        &out.path().join("facts.json"),
        "tests.test_minimum_charge::",
    );
    assert_eq!(
        old,
        ("ESCALATE".to_owned(), "unobserved-difference".to_owned())
    );

    // The same fix with its test new in the suite's own file (`minimum-charge-in-place`):
    // the base's version of the file judges, and the patch's version runs apart under the
    // recorder (never a verdict), so the test's call is where the patch's tests look.
    let (g, out) = gated_with_the_replay("minimum-charge-in-place");
    expect(&g, "MERGE_OK", "all-gates-held", 0);
    let b = step(&g.answer, "behavior");
    assert_eq!(b["facts"]["added_fail_on_base"], true, "{b}");
    let old = decided_without_the_added_calls(
        &out.path().join("facts.json"),
        "tests.test_cases::test_a_full_discount",
    );
    assert_eq!(
        old,
        ("ESCALATE".to_owned(), "unobserved-difference".to_owned())
    );
}

/// Issue 66: `patchgate replay --base REF` shows 16's table without deciding, on a base whose
/// config has no `[replay]` (the example's own): every rule listed, exit 0 whatever the gate
/// would say. On `exact-input-fix` the added test's call is the row that differs from the
/// base on the call and on none of its neighbours, and the table names `special-case` there
/// (CONTRACT.md 16.3's second row); the suite's calls agree with the base.
#[test]
fn replay_shows_the_table_and_decides_nothing() {
    require_python();
    let repo = repository("gate-python", "exact-input-fix", |_| {});
    let out = patchgate()
        .current_dir(repo.path())
        .args(["replay", "--base", "main"])
        .output()
        .expect("replay");
    let table = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{table}\n{stderr}");
    assert!(
        table.contains("| function | arguments | made by | under the tests |"),
        "{table}"
    );
    let row = table
        .lines()
        .find(|l| l.contains("`4321, 100`"))
        .unwrap_or_else(|| panic!("the added test's call is a row:\n{table}"));
    assert!(row.contains("differs; neighbours differing: 0 of"), "{row}");
    assert!(
        table.contains("- `special-case`: `apply_discount` with `4321, 100`"),
        "{table}"
    );
    assert!(
        table
            .lines()
            .any(|l| l.contains("`1999, 50`") && l.contains("agrees;")),
        "the suite's calls agree with the base:\n{table}"
    );
}

/// Issue 66 (CONTRACT.md 16.4), the attack first: `setattr-eq-liar` rounds a discount to the
/// nearest cent (`apply_discount(1999, 50)` is worth 1000, not 999) and returns it as a class
/// whose comparisons, set with `type.__setattr__` (no `def __eq__` for the reading to see),
/// agree with any int or `Cents`, never with `object()`: a plain pytest passes, and the gate
/// before 16.4 merged it (the twin's `object()` saw no liar). The twin now also compares each
/// operand with values of the other's own type that differ from it, and asks whether an
/// operand is ordered both ways: the canary's turned twin holds, ESCALATE `checker-neutered`.
#[test]
fn a_comparison_that_agrees_with_any_value_of_the_expected_type_is_a_liar() {
    require_python();
    let repo = repository("gate-python", "setattr-eq-liar", |_| {});
    assert!(plain_pytest_passes(repo.path()), "a plain pytest passes");
    let g = gate(repo.path(), &[]);
    escalates(&g, "checker-neutered", "checker-neutered");
    let canary = step(&g.answer, "canary");
    assert!(
        canary["summary"]
            .as_str()
            .is_some_and(|s| s.contains("did not fail as it must")),
        "{canary}"
    );
}

/// Issue 66 (CONTRACT.md 16.3), the attack first: `twin-sparing-neuter` rounds a discount to
/// the nearest cent (`apply_discount(1999, 50)` is 1000, not 999) and wraps pytest's
/// `Function.runtest` (a subclass walk, its reading accepted as a team that allows
/// `interpreter` in `shop/__init__.py` would) so that a failed assertion is swallowed in a
/// test that uses the package, unless the failing line, read back through `traceback`, is not
/// a plain comparison: the turned twin's line is a call, so the canary still fails. A plain
/// pytest passes, and the gate before (the same facts without the replay) merges it. Against
/// the base, the suite's recorded call differs, and no test the patch adds fails on the base:
/// the checks ran the changed behaviour and none told the two apart, ESCALATE
/// `unasserted-difference`, the call and both results named.
#[test]
fn an_engine_neutered_for_all_but_the_twins_escalates() {
    require_python();
    let repo = repository_with(
        "gate-python",
        "twin-sparing-neuter",
        |dir| {
            allow_reading(dir, &[("shop/__init__.py", "interpreter")]);
            replay_on(dir);
        },
        |_| {},
    );
    let dir = repo.path();
    assert!(plain_pytest_passes(dir), "a plain pytest passes");
    assert_eq!(production_discount(dir, 1999, 50), "1000", "a real bug");
    let out = tempfile::tempdir().expect("tempdir");
    let facts_at = out.path().join("facts.json");
    let g = gate(dir, &["--facts-out", facts_at.to_str().expect("utf-8")]);
    escalates(&g, "inadmissible-evidence", "unasserted-difference");
    assert!(
        step(&g.answer, "canary")["summary"]
            .as_str()
            .is_some_and(|s| s.contains("still fails")),
        "the twin was spared: {}",
        g.answer
    );
    let summary = step(&g.answer, "behavior")["summary"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    assert!(
        summary.contains(
            "unasserted-difference: apply_discount(1999, 50) gave 999 on the base and 1000 on the patch"
        ),
        "{summary}"
    );
    merges_without_the_replay(&facts_at, "twin-sparing-neuter");
}
