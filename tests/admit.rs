//! Admission (CONTRACT.md section 10): every row of the table over a real socket and through
//! the real `patchgate admit` on a real git repository (its worktrees, its commands, its
//! seals); the quorum and gate with `require_admission` on and off; Ctrl-C cleans up. The
//! expectations are written by hand from the contract.

mod common;

use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

use common::{TestServer, assert_untouched, git, patchgate, post, post_json, write};
use serde_json::{Value, json};

const SEAL_A: &str = "1111111111111111111111111111111111111111111111111111111111111111";
const SEAL_B: &str = "2222222222222222222222222222222222222222222222222222222222222222";

/// One row of section 10: (name, base runs, mutant runs, same seal, outcome, reason, exit).
type Row = (
    &'static str,
    Value,
    Value,
    bool,
    &'static str,
    &'static str,
    u8,
);

fn rows() -> Vec<Row> {
    vec![
        (
            "1 seal differs",
            json!([0, 0]),
            json!([1, 1]),
            false,
            "inconclusive",
            "seal-differs",
            2,
        ),
        (
            "2 fails on base",
            json!([1, 1]),
            json!([1, 1]),
            true,
            "rejected",
            "fails-on-base",
            1,
        ),
        (
            "3 flake on base",
            json!([0, 1]),
            json!([1, 1]),
            true,
            "inconclusive",
            "unstable-on-base",
            2,
        ),
        (
            "3 error on base",
            json!([5, 5]),
            json!([1, 1]),
            true,
            "inconclusive",
            "harness-error",
            2,
        ),
        (
            "3 killed on base",
            json!([null, null]),
            json!([1, 1]),
            true,
            "inconclusive",
            "harness-error",
            2,
        ),
        (
            "4 tautology",
            json!([0, 0]),
            json!([0, 0]),
            true,
            "rejected",
            "tautology",
            1,
        ),
        (
            "5 flake on mutant",
            json!([0, 0]),
            json!([1, 0]),
            true,
            "inconclusive",
            "unstable-on-mutant",
            2,
        ),
        (
            "5 error on mutant",
            json!([0, 0]),
            json!([5, 5]),
            true,
            "inconclusive",
            "harness-error",
            2,
        ),
        (
            "6 admitted",
            json!([0, 0, 0]),
            json!([1, 1, 1]),
            true,
            "admitted",
            "two-commit-proof",
            0,
        ),
    ]
}

fn admit_doc(base_runs: &Value, mutant_runs: &Value, same_seal: bool) -> Value {
    json!({
        "check_id": "order", "kind": "property",
        "seal": {"base": SEAL_A, "mutant": if same_seal { SEAL_A } else { SEAL_B }},
        "base_runs": base_runs, "mutant_runs": mutant_runs,
        "catch_exit_codes": [1], "mutant": "c0ffee",
    })
}

#[tokio::test]
async fn every_row_over_a_real_socket() {
    let server = TestServer::start();
    for (name, base, mutant, same, outcome, reason, exit) in rows() {
        let (status, answer) = post_json(&server, "/admit", &admit_doc(&base, &mutant, same)).await;
        assert_eq!(status, common::status_of_exit(exit), "{name}: {answer}");
        assert_eq!(answer["outcome"], outcome, "{name}");
        assert_eq!(answer["reason"], reason, "{name}");
        assert_eq!(answer["exit_code"], exit, "{name}");
        assert_eq!(answer["check_id"], "order", "{name}");
        assert!(
            answer["decision_id"]
                .as_str()
                .is_some_and(|d| d.len() == 36),
            "{name}"
        );
        assert!(
            answer["base_state"].is_string() && answer["mutant_state"].is_string(),
            "{name}"
        );
        if outcome == "admitted" {
            assert_eq!(
                answer["record"],
                json!({"seal": SEAL_A, "mutant": "c0ffee", "base_runs": [0, 0, 0], "mutant_runs": [1, 1, 1]}),
                "{name}"
            );
        } else {
            assert!(
                answer.get("record").is_none(),
                "{name}: no record unless admitted"
            );
        }
    }
}

#[tokio::test]
async fn the_states_and_catch_codes_are_section_2s() {
    let server = TestServer::start();
    // cargo test fails with 101: a catch only when the request says so.
    let mut doc = admit_doc(&json!([0, 0]), &json!([101, 101]), true);
    let (status, answer) = post_json(&server, "/admit", &doc).await;
    assert_eq!(
        (status, answer["reason"].as_str()),
        (424, Some("harness-error"))
    );
    assert_eq!(
        (
            answer["base_state"].as_str(),
            answer["mutant_state"].as_str()
        ),
        (Some("pass"), Some("error"))
    );
    doc["catch_exit_codes"] = json!([101]);
    let (status, answer) = post_json(&server, "/admit", &doc).await;
    assert_eq!(
        (status, answer["reason"].as_str()),
        (200, Some("two-commit-proof"))
    );
    assert_eq!(answer["mutant_state"], "fail");
    // A test is admitted the same way.
    doc["kind"] = json!("test");
    doc["check_id"] = json!("tests.test_api::test_retry");
    let (status, answer) = post_json(&server, "/admit", &doc).await;
    assert_eq!((status, answer["kind"].as_str()), (200, Some("test")));
}

#[tokio::test]
async fn bad_requests_are_422s_naming_the_field() {
    let server = TestServer::start();
    let good = admit_doc(&json!([0, 0]), &json!([1, 1]), true);
    let with = |key: &str, value: Value| {
        let mut d = good.clone();
        d[key] = value;
        d
    };
    let without = |key: &str| {
        let mut d = good.clone();
        d.as_object_mut().unwrap().remove(key);
        d
    };
    let cases: Vec<(Value, &str)> = vec![
        (without("check_id"), "/check_id"),
        (without("kind"), "/kind"),
        (with("kind", json!("suite")), "/kind"),
        (without("seal"), "/seal"),
        (with("seal", json!({"base": SEAL_A})), "/seal/mutant"),
        (
            with("seal", json!({"base": "abc", "mutant": SEAL_A})),
            "/seal/base",
        ),
        (without("base_runs"), "/base_runs"),
        (with("base_runs", json!([0])), "/base_runs"),
        (with("mutant_runs", json!(vec![1; 11])), "/mutant_runs"),
        (with("mutant_runs", json!([1, 256])), "/mutant_runs/1"),
        (with("catch_exit_codes", json!([0])), "/catch_exit_codes/0"),
        (without("mutant"), "/mutant"),
        (with("mutant", json!("")), "/mutant"),
        (with("surprise", json!(1)), "/surprise"),
    ];
    for (doc, pointer) in cases {
        let (status, problem) = post_json(&server, "/admit", &doc).await;
        assert_eq!(status, 422, "{pointer}: {problem}");
        let pointers: Vec<&str> = problem["errors"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|e| e["pointer"].as_str())
            .collect();
        assert!(pointers.contains(&pointer), "{pointer} not in {pointers:?}");
    }
    let (status, _) = post(&server, "/admit", "application/json", "{").await;
    assert_eq!(status, 400);
    let (status, _) = post(&server, "/admit", "text/plain", "{}").await;
    assert_eq!(status, 415);
}

// ---------------------------------------------------------------------------------------------
// /quorum and /gate with require_admission

fn record(mutant_runs: Value) -> Value {
    json!({"seal": SEAL_A, "mutant": "c0ffee", "base_runs": [0, 0], "mutant_runs": mutant_runs})
}

fn catalog(admitted: bool) -> Vec<Value> {
    let mut proven = json!({"id": "proven", "strength": "strong", "locality": ["src"]});
    if admitted {
        proven["admitted"] = record(json!([1, 1]));
    }
    vec![
        proven,
        json!({"id": "unproven", "strength": "strong", "locality": ["src"]}),
        json!({"id": "shape", "strength": "weak", "locality": ["src"]}),
    ]
}

fn quorum_doc(admitted: bool, require: Option<bool>, unproven_runs: Value) -> Value {
    let mut doc = json!({
        "changed_files": ["src/a.rs"],
        "catalog": {"properties": catalog(admitted)},
        "results": {"proven": {"runs": [0, 0]}, "unproven": {"runs": unproven_runs}, "shape": {"runs": [0, 0]}},
        "seal": {"actual": SEAL_A, "expected": SEAL_A},
    });
    if let Some(r) = require {
        doc["require_admission"] = json!(r);
    }
    doc
}

fn report_of<'a>(answer: &'a Value, id: &str) -> &'a Value {
    answer["properties"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["id"] == id)
        .unwrap()
}

#[tokio::test]
async fn the_quorum_with_admission_required_and_not() {
    let server = TestServer::start();
    // (admitted, require_admission, the unproven row's runs) → outcome, reason, status,
    // whether `unproven` is marked.
    let cases = [
        // Off (absent or false): every strong row votes as strong, nothing is marked.
        (
            false,
            None,
            json!([0, 0]),
            "promote",
            "quorum-held",
            200,
            false,
        ),
        (
            false,
            Some(false),
            json!([0, 0]),
            "promote",
            "quorum-held",
            200,
            false,
        ),
        // On, no row admitted: the strong rows vote as weak, the quorum is empty.
        (
            false,
            Some(true),
            json!([0, 0]),
            "reject",
            "empty-quorum",
            409,
            true,
        ),
        // On, one admitted: it fills the quorum; the unproven row still votes, as weak.
        (
            true,
            Some(true),
            json!([0, 0]),
            "promote",
            "quorum-held",
            200,
            true,
        ),
        // An unproven row may still reject.
        (
            true,
            Some(true),
            json!([1, 1]),
            "reject",
            "stable-failure",
            409,
            true,
        ),
    ];
    for (admitted, require, runs, outcome, reason, status, marked) in cases {
        let case = format!("admitted {admitted}, require {require:?}, runs {runs}");
        let (got, answer) =
            post_json(&server, "/quorum", &quorum_doc(admitted, require, runs)).await;
        assert_eq!(got, status, "{case}: {answer}");
        assert_eq!(
            (answer["outcome"].as_str(), answer["reason"].as_str()),
            (Some(outcome), Some(reason)),
            "{case}"
        );
        let unproven = report_of(&answer, "unproven");
        assert_eq!(
            unproven["unproven"].as_bool().unwrap_or(false),
            marked,
            "{case}: {unproven}"
        );
        assert_eq!(
            unproven["strength"], "strong",
            "{case}: the catalog's strength is reported"
        );
        // A proven row, and a weak row, are never marked.
        assert!(
            report_of(&answer, "shape").get("unproven").is_none(),
            "{case}"
        );
        if admitted {
            assert!(
                report_of(&answer, "proven").get("unproven").is_none(),
                "{case}"
            );
        }
    }
}

#[tokio::test]
async fn a_record_that_is_not_a_proof_is_refused() {
    let server = TestServer::start();
    let mut doc = quorum_doc(true, Some(true), json!([0, 0]));
    // A hand-edited record whose mutant passed: it proves nothing.
    doc["catalog"]["properties"][0]["admitted"] = record(json!([0, 0]));
    let (status, problem) = post_json(&server, "/quorum", &doc).await;
    assert_eq!(status, 422, "{problem}");
    let error = &problem["errors"][0];
    assert_eq!(error["pointer"], "/catalog/properties/0/admitted");
    assert!(
        error["detail"].as_str().unwrap().contains("tautology"),
        "{error}"
    );
    // A record's fields are checked like the request's.
    doc["catalog"]["properties"][0]["admitted"] =
        json!({"seal": SEAL_A, "mutant": "m", "base_runs": [0, 0]});
    let (status, problem) = post_json(&server, "/quorum", &doc).await;
    assert_eq!(status, 422);
    assert_eq!(
        problem["errors"][0]["pointer"],
        "/catalog/properties/0/admitted/mutant_runs"
    );
    // A record with 101s is a proof only for a request whose catch codes say 101.
    doc["catalog"]["properties"][0]["admitted"] = record(json!([101, 101]));
    let (status, _) = post_json(&server, "/quorum", &doc).await;
    assert_eq!(status, 422);
    doc["catch_exit_codes"] = json!([101]);
    let (status, answer) = post_json(&server, "/quorum", &doc).await;
    assert_eq!(status, 200, "{answer}");
}

fn gate_doc(admitted: bool, require: bool) -> Value {
    json!({
        "patch_id": "pr-1",
        "changed_files": ["src/a.rs"],
        "seal": {"actual": SEAL_A, "expected": SEAL_A},
        "catalog": {"properties": catalog(admitted)},
        "property_runs": {"proven": {"runs": [0, 0]}, "unproven": {"runs": [0, 0]}, "shape": {"runs": [0, 0]}},
        "fixture_suite": {"exit_code": 0, "failed_tests": []},
        "require_admission": require,
    })
}

#[tokio::test]
async fn the_gate_with_admission_required_and_not() {
    let server = TestServer::start();
    // (admitted, require) → disposition, reason, the quorum's reason in the properties step.
    let cases = [
        (false, false, "MERGE_OK", "all-gates-held", "quorum-held"),
        (true, false, "MERGE_OK", "all-gates-held", "quorum-held"),
        // Required and nothing proven: an empty strong quorum, so property_check is unknown
        // (the route table's row unknown/pass/pass: inadmissible evidence).
        (
            false,
            true,
            "ESCALATE",
            "inadmissible-evidence",
            "empty-quorum",
        ),
        (true, true, "MERGE_OK", "all-gates-held", "quorum-held"),
    ];
    for (admitted, require, disposition, reason, quorum) in cases {
        let case = format!("admitted {admitted}, require {require}");
        let (status, answer) = post_json(&server, "/gate", &gate_doc(admitted, require)).await;
        assert_eq!(answer["disposition"], disposition, "{case}: {answer}");
        assert_eq!(answer["reason"], reason, "{case}: {answer}");
        assert_eq!(
            status,
            if disposition == "MERGE_OK" { 200 } else { 424 },
            "{case}"
        );
        let step = answer["steps"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["step"] == "properties")
            .unwrap();
        assert_eq!(step["reason"], quorum, "{case}");
        // The step says how many voters had no proof.
        let summary = step["summary"].as_str().unwrap();
        let said = match (require, admitted) {
            (false, _) => None,
            (true, false) => Some("2 strong properties without an admission proof voted as weak"),
            (true, true) => Some("1 strong property without an admission proof voted as weak"),
        };
        match said {
            Some(s) => assert!(summary.contains(s), "{case}: {summary}"),
            None => assert!(!summary.contains("admission"), "{case}: {summary}"),
        }
        let marked: Vec<&str> = step["properties"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|p| p["unproven"] == true)
            .map(|p| p["id"].as_str().unwrap())
            .collect();
        let want: &[&str] = match (require, admitted) {
            (false, _) => &[],
            (true, false) => &["proven", "unproven"],
            (true, true) => &["unproven"],
        };
        assert_eq!(marked, want, "{case}");
    }
    // The Markdown report lists the unproven strong properties.
    let res = common::client()
        .post(server.url("/gate"))
        .header("content-type", "application/json")
        .header("accept", "text/markdown")
        .body(gate_doc(true, true).to_string())
        .send()
        .await
        .unwrap();
    let text = res.text().await.unwrap();
    let section = text
        .split("### Unproven strong properties")
        .nth(1)
        .expect(&text);
    assert!(section.contains("`unproven` (in locality)"), "{text}");
    assert!(
        !section.split("###").next().unwrap().contains("`proven`"),
        "{text}"
    );
    let res = common::client()
        .post(server.url("/gate"))
        .header("content-type", "application/json")
        .header("accept", "text/markdown")
        .body(gate_doc(true, false).to_string())
        .send()
        .await
        .unwrap();
    assert!(!res.text().await.unwrap().contains("Unproven"));
}

// ---------------------------------------------------------------------------------------------
// The CLI on a real git repository

/// The check script every property runs: `behaviour/<id>` holds one line per run (an exit
/// code, `kill` to die by SIGKILL, `sleep` to hang as `sleep 61.25`); the run number is
/// counted in the (untracked) copy of the tree.
const RUN_SH: &str = r#"id="$1"
mkdir -p .runs
n=$(cat ".runs/$id" 2>/dev/null || echo 0)
n=$((n + 1))
echo "$n" > ".runs/$id"
what=$(sed -n "${n}p" "behaviour/$id")
case "$what" in
  kill) kill -9 $$ ;;
  sleep) sleep 61.25 ;;
esac
exit "${what:-0}"
"#;

const CONFIG: &str = r#"fixtures = "fixtures"
expected_seal = "fixtures.seal.expected"
catalog = "catalog.yaml"
[properties]
command = ["sh", "checks/run.sh", "{id}"]
runs = 2
timeout_s = 30
[suite]
command = ["true"]
test_command = ["sh", "checks/run.sh", "{name}"]
"#;

/// Each property's runs on the base and on the mutant, one section-10 row each.
const BEHAVIOUR: [(&str, &str, &str); 9] = [
    ("proven", "0\n0\n", "1\n1\n"),
    ("fails", "1\n1\n", "1\n1\n"),
    ("flaky_base", "0\n1\n", "1\n1\n"),
    ("broken_base", "5\n5\n", "1\n1\n"),
    ("tautology", "0\n0\n", "0\n0\n"),
    ("flaky_mutant", "0\n0\n", "1\n0\n"),
    ("killed_mutant", "0\n0\n", "kill\nkill\n"),
    ("slow", "sleep\nsleep\n", "0\n0\n"),
    ("retry", "0\n0\n", "1\n1\n"),
];

fn commit_all(dir: &Path, message: &str) -> String {
    git(dir, &["add", "-A"]);
    git(dir, &["commit", "-q", "-m", message]);
    git(dir, &["rev-parse", "HEAD"])
}

/// A repository on `main` (checked out) with branches `mutant` (the code changed and every
/// mutant behaviour) and `mutant-fixtures` (the same, and a fixture edited).
fn repository() -> tempfile::TempDir {
    let tmp = common::git_repo();
    let dir = tmp.path();
    write(dir, "patchgate.toml", CONFIG);
    let mut catalog = String::from("# the catalog\nproperties:\n");
    for (id, _, _) in BEHAVIOUR {
        catalog.push_str(&format!(
            "  - id: {id}\n    strength: strong\n    locality: [src]\n"
        ));
        catalog.push_str("    source: [checks/run.sh]\n");
    }
    write(dir, "catalog.yaml", &catalog);
    write(dir, "checks/run.sh", RUN_SH);
    write(dir, "fixtures/case.json", "{\"n\": 1}\n");
    write(dir, "src/code.py", "LIMIT = 10\n");
    write(dir, ".gitignore", ".runs/\n");
    for (id, base, _) in BEHAVIOUR {
        write(dir, &format!("behaviour/{id}"), base);
    }
    commit_all(dir, "base");
    git(dir, &["checkout", "-q", "-b", "mutant"]);
    write(
        dir,
        "src/code.py",
        "LIMIT = None  # the invariant, deleted\n",
    );
    for (id, _, mutant) in BEHAVIOUR {
        write(dir, &format!("behaviour/{id}"), mutant);
    }
    commit_all(dir, "mutant");
    git(dir, &["checkout", "-q", "-b", "mutant-fixtures"]);
    write(dir, "fixtures/case.json", "{\"n\": 2}\n");
    commit_all(dir, "mutant that also edits a fixture");
    git(
        dir,
        &["checkout", "-q", "-b", "mutant-edits-check", "mutant"],
    );
    write(dir, "checks/run.sh", "exit 1\n");
    commit_all(dir, "mutant that edits the check");
    git(dir, &["checkout", "-q", "main"]);
    tmp
}

struct Admitted {
    exit: i32,
    stdout: String,
    stderr: String,
    answer: Value,
}

fn admit(dir: &Path, tmpdir: &Path, args: &[&str]) -> Admitted {
    let out = patchgate()
        .current_dir(dir)
        .env("TMPDIR", tmpdir)
        .arg("admit")
        .args(args)
        .arg("--json")
        .output()
        .expect("run patchgate");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    Admitted {
        exit: out.status.code().unwrap_or(-1),
        answer: serde_json::from_str(&stdout).unwrap_or(Value::Null),
        stdout,
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

#[test]
fn every_row_through_the_cli_on_a_real_repository() {
    let repo = repository();
    let dir = repo.path();
    let tmp = tempfile::tempdir().unwrap();
    let head = git(dir, &["rev-parse", "HEAD"]);
    let mutant = git(dir, &["rev-parse", "mutant"]);
    // (property, mutant branch, outcome, reason, exit, base state, mutant state)
    let cases = [
        (
            "proven",
            "mutant-fixtures",
            "inconclusive",
            "seal-differs",
            2,
            "pass",
            "fail",
        ),
        (
            "fails",
            "mutant",
            "rejected",
            "fails-on-base",
            1,
            "fail",
            "fail",
        ),
        (
            "flaky_base",
            "mutant",
            "inconclusive",
            "unstable-on-base",
            2,
            "flake",
            "fail",
        ),
        (
            "broken_base",
            "mutant",
            "inconclusive",
            "harness-error",
            2,
            "error",
            "fail",
        ),
        (
            "tautology",
            "mutant",
            "rejected",
            "tautology",
            1,
            "pass",
            "pass",
        ),
        (
            "flaky_mutant",
            "mutant",
            "inconclusive",
            "unstable-on-mutant",
            2,
            "pass",
            "flake",
        ),
        (
            "killed_mutant",
            "mutant",
            "inconclusive",
            "harness-error",
            2,
            "pass",
            "error",
        ),
        (
            "proven",
            "mutant",
            "admitted",
            "two-commit-proof",
            0,
            "pass",
            "fail",
        ),
    ];
    for (id, branch, outcome, reason, exit, base_state, mutant_state) in cases {
        let case = format!("{id} vs {branch}");
        let a = admit(dir, tmp.path(), &[id, "--mutant", branch]);
        assert_eq!(a.exit, exit, "{case}: {}\n{}", a.stdout, a.stderr);
        assert_eq!(a.answer["outcome"], outcome, "{case}");
        assert_eq!(a.answer["reason"], reason, "{case}");
        assert_eq!(a.answer["base_state"], base_state, "{case}");
        assert_eq!(a.answer["mutant_state"], mutant_state, "{case}");
        assert_eq!(a.answer["seal"]["match"], branch == "mutant", "{case}");
        // Each run is reported as it ends.
        assert_eq!(
            a.stderr.matches(&format!("admit {id} base run")).count(),
            2,
            "{case}"
        );
        assert_eq!(
            a.stderr.matches(&format!("admit {id} mutant run")).count(),
            2,
            "{case}"
        );
        assert_untouched(dir, tmp.path(), &head);
    }
    // The seal is the coreutils pipeline's.
    let a = admit(dir, tmp.path(), &["proven", "--mutant", "mutant"]);
    let pipeline = std::process::Command::new("sh")
        .current_dir(dir)
        .args(["-c", "LC_ALL=C find fixtures -type f ! -name '*.seal' -print0 | LC_ALL=C sort -z | xargs -0 sha256sum | sha256sum"])
        .output()
        .unwrap();
    let pipeline = String::from_utf8_lossy(&pipeline.stdout);
    assert_eq!(
        a.answer["seal"]["base"].as_str().unwrap(),
        pipeline.split_whitespace().next().unwrap()
    );
    // The source digest (issue 50): sha256 of git's listing of the property's source files
    // on the base (`checks/run.sh`), computed here with git and coreutils.
    let listing = std::process::Command::new("sh")
        .current_dir(dir)
        .args([
            "-c",
            "git ls-tree -r -z --full-tree HEAD -- checks/run.sh | sha256sum",
        ])
        .output()
        .unwrap();
    let source = String::from_utf8_lossy(&listing.stdout)
        .split_whitespace()
        .next()
        .unwrap()
        .to_owned();
    assert_eq!(
        a.answer["record"],
        json!({"seal": a.answer["seal"]["base"], "mutant": mutant, "base_runs": [0, 0], "mutant_runs": [1, 1], "source": source})
    );
    // --runs.
    let a = admit(
        dir,
        tmp.path(),
        &["tautology", "--mutant", "mutant", "--runs", "3"],
    );
    assert_eq!(a.answer["reason"], "tautology");
    assert_eq!(a.stderr.matches("admit tautology base run").count(), 3);
    assert_untouched(dir, tmp.path(), &head);
}

#[test]
fn the_cli_asks_a_server_the_same_question() {
    let server = TestServer::start();
    let repo = repository();
    let dir = repo.path();
    let tmp = tempfile::tempdir().unwrap();
    let facts = tmp
        .path()
        .join("..")
        .join(format!("facts-{}.json", std::process::id()));
    for (id, exit) in [("proven", 0), ("tautology", 1), ("broken_base", 2)] {
        let local = admit(dir, tmp.path(), &[id, "--mutant", "mutant"]);
        let remote = admit(
            dir,
            tmp.path(),
            &[
                id,
                "--mutant",
                "mutant",
                "--server",
                &server.url(""),
                "--facts-out",
                facts.to_str().unwrap(),
            ],
        );
        assert_eq!(
            (local.exit, remote.exit),
            (exit, exit),
            "{id}: {}",
            remote.stderr
        );
        for key in [
            "outcome",
            "reason",
            "base_state",
            "mutant_state",
            "seal",
            "record",
        ] {
            assert_eq!(local.answer[key], remote.answer[key], "{id}: {key}");
        }
        // The facts written are the `/admit` body.
        let body: Value = serde_json::from_slice(&std::fs::read(&facts).unwrap()).unwrap();
        assert_eq!(body["check_id"], id);
        assert_eq!(body["base_runs"].as_array().unwrap().len(), 2);
    }
    let _ = std::fs::remove_file(facts);
}

#[test]
fn write_puts_the_record_in_the_catalog_row_and_nothing_else() {
    let repo = repository();
    let dir = repo.path();
    let tmp = tempfile::tempdir().unwrap();
    let before = std::fs::read_to_string(dir.join("catalog.yaml")).unwrap();
    // Not admitted: nothing is written.
    let a = admit(
        dir,
        tmp.path(),
        &["tautology", "--mutant", "mutant", "--write"],
    );
    assert_eq!(a.exit, 1);
    assert_eq!(
        std::fs::read_to_string(dir.join("catalog.yaml")).unwrap(),
        before
    );
    // Admitted: the row gets `admitted`, the file keeps its comment and other rows.
    let a = admit(
        dir,
        tmp.path(),
        &["proven", "--mutant", "mutant", "--write"],
    );
    assert_eq!(a.exit, 0, "{}", a.stderr);
    let after = std::fs::read_to_string(dir.join("catalog.yaml")).unwrap();
    let added: Vec<&str> = after
        .lines()
        .filter(|l| !before.lines().any(|b| b == *l))
        .collect();
    assert_eq!(added.len(), 1, "{after}");
    assert!(
        added[0].starts_with("    admitted: {\"seal\": "),
        "{}",
        added[0]
    );
    assert!(after.starts_with("# the catalog\n"));
    // The only changes in the checkout are the catalog and the stored mutant (for the gate's
    // re-proof, section 11.5): the user reviews and commits them.
    assert_eq!(
        git(dir, &["status", "--porcelain", "--untracked-files=all"]),
        "M catalog.yaml\n?? mutants/proven.diff"
    );
    // What was written is what /quorum reads as a proof.
    let doc: Value = serde_norway::from_str(&after).unwrap();
    assert_eq!(doc["properties"][0]["admitted"], a.answer["record"]);
    // --write is for catalog properties.
    let a = admit(
        dir,
        tmp.path(),
        &["--test", "t::retry", "--mutant", "mutant", "--write"],
    );
    assert_eq!(a.exit, 64, "--write is refused with --test: {}", a.stderr);
}

#[test]
fn refusals_before_anything_runs() {
    let repo = repository();
    let dir = repo.path();
    let tmp = tempfile::tempdir().unwrap();
    let head = git(dir, &["rev-parse", "HEAD"]);
    // (args, exit, what stderr says)
    let cases: [(&[&str], i32, &str); 5] = [
        (
            &["nosuch", "--mutant", "mutant"],
            65,
            "has no property \"nosuch\"",
        ),
        (
            &["proven", "--mutant", "main"],
            64,
            "is the base commit itself",
        ),
        (
            &["proven", "--mutant", "no-such-branch"],
            64,
            "is not a commit",
        ),
        (
            &["proven", "--mutant", "mutant-edits-check"],
            65,
            "checks/run.sh",
        ),
        (&["--mutant", "mutant"], 64, "required"),
    ];
    for (args, exit, says) in cases {
        let a = admit(dir, tmp.path(), args);
        assert_eq!(a.exit, exit, "{args:?}: {}", a.stderr);
        assert!(a.stderr.contains(says), "{args:?}: {}", a.stderr);
        assert!(!a.stderr.contains(" run 1/"), "{args:?}: nothing runs");
        assert_untouched(dir, tmp.path(), &head);
    }
}

#[test]
fn a_test_is_admitted_the_same_way_and_its_proof_feeds_freeze() {
    let repo = repository();
    let dir = repo.path();
    let tmp = tempfile::tempdir().unwrap();
    let a = admit(
        dir,
        tmp.path(),
        &["--test", "tests.test_api::retry", "--mutant", "mutant"],
    );
    assert_eq!(a.exit, 0, "{}", a.stderr);
    assert_eq!(
        (a.answer["kind"].as_str(), a.answer["check_id"].as_str()),
        (Some("test"), Some("tests.test_api::retry"))
    );
    let proof = tmp
        .path()
        .join("..")
        .join(format!("proof-{}.json", std::process::id()));
    std::fs::write(&proof, &a.stdout).unwrap();
    let outcomes = tmp
        .path()
        .join("..")
        .join(format!("outcomes-{}.txt", std::process::id()));
    // 40 outcomes, 4 flips: flaky enough.
    let mut lines = vec!["true"; 40];
    for i in [5, 6, 20, 21] {
        lines[i] = "false";
    }
    std::fs::write(&outcomes, lines.join("\n")).unwrap();
    let freeze = |extra: &[&str]| {
        patchgate()
            .args(["freeze", "--outcomes", outcomes.to_str().unwrap()])
            .args(extra)
            .output()
            .unwrap()
    };
    let without = freeze(&[]);
    assert_eq!(without.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&without.stdout).contains("no sensitivity evidence"));
    let with = freeze(&["--caught-seeded-bug", proof.to_str().unwrap()]);
    assert_eq!(
        with.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&with.stderr)
    );
    assert!(String::from_utf8_lossy(&with.stdout).starts_with("eligible freeze with expiry"));
    // A rejected test, or a property's proof, is no seeded-bug proof.
    let taut = admit(dir, tmp.path(), &["tautology", "--mutant", "mutant"]);
    std::fs::write(&proof, &taut.stdout).unwrap();
    let refused = freeze(&["--caught-seeded-bug", proof.to_str().unwrap()]);
    assert_eq!(refused.status.code(), Some(65));
    let _ = std::fs::remove_file(proof);
    let _ = std::fs::remove_file(outcomes);
}

#[test]
fn ctrl_c_stops_the_runs_and_removes_the_copies() {
    let repo = repository();
    let dir = repo.path();
    let tmp = tempfile::tempdir().unwrap();
    let head = git(dir, &["rev-parse", "HEAD"]);
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("patchgate"))
        .current_dir(dir)
        .env("TMPDIR", tmp.path())
        .args(["admit", "slow", "--mutant", "mutant"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Wait until the check hangs in its sandbox (seen from here by its command line: inside,
    // it has a PID of its own namespace and cannot write a file out).
    let started = Instant::now();
    let check_pid = loop {
        if let Some(pid) = common::pid_running("sleep\x0061.25\0") {
            break pid;
        }
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "the check never started"
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    let rooms = std::fs::read_dir(tmp.path()).unwrap().count();
    assert_eq!(rooms, 2, "the base and mutant copies exist while it runs");
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(child.id() as i32),
        nix::sys::signal::Signal::SIGINT,
    )
    .unwrap();
    let status = child.wait().unwrap();
    let mut stderr = String::new();
    std::io::Read::read_to_string(child.stderr.as_mut().unwrap(), &mut stderr).unwrap();
    assert!(
        started.elapsed() < Duration::from_secs(30),
        "it did not stop at once"
    );
    assert_eq!(status.code(), Some(130), "{stderr}");
    assert!(stderr.contains("interrupted"), "{stderr}");
    // The hanging check was killed, not orphaned.
    assert!(
        !Path::new(&format!("/proc/{check_pid}")).exists(),
        "the check outlived the admission"
    );
    assert_untouched(dir, tmp.path(), &head);
}
