//! `patchgate quorum` through the real binary, in a temporary git repository with a YAML
//! catalog: exit codes 0/1/2/3 locally and against a live server, commit budgets counted with
//! git, bad files refused with 65.

mod common;

use assert_cmd::Command;
use common::{TestServer, git};
use serde_json::{Value, json};

const SEAL: &str = "abcfa6a9d4df344d1781bc2560b5e4cdcae08b39ed303063535e7e1e926a304a";
const OTHER: &str = "0000000000000000000000000000000000000000000000000000000000000000";

const CATALOG: &str = r#"
# the article's catalog
properties:
  - id: resp.no_secret_fields
    strength: strong
    locality: [api/handlers, api/serializers]
    fixtures: fixtures/responses/
  - id: resp.keys_present
    strength: weak
    locality: [api/serializers]
    fixtures: fixtures/responses/
  - id: counter.monotonic_under_replay
    strength: strong
    locality: [store/counters]
    fixtures: fixtures/replays/
"#;

struct Repo {
    dir: tempfile::TempDir,
    base: String,
}

/// A repository with a base commit and a head commit that changes `changed`.
fn repo(changed: &[&str]) -> Repo {
    let dir = common::git_repo();
    let p = dir.path();
    for f in [
        "store/counters/mod.rs",
        "api/handlers/user.rs",
        "docs/readme.md",
    ] {
        std::fs::create_dir_all(p.join(f).parent().expect("parent")).expect("mkdir");
        std::fs::write(p.join(f), "v1\n").expect("write");
    }
    git(p, &["add", "-A"]);
    git(p, &["commit", "-q", "-m", "base"]);
    let base = git(p, &["rev-parse", "HEAD"]);
    for f in changed {
        std::fs::write(p.join(f), "v2\n").expect("write");
    }
    git(p, &["commit", "-q", "-am", "patch"]);
    std::fs::write(p.join("catalog.yaml"), CATALOG).expect("write");
    std::fs::write(p.join("fixtures.seal"), format!("{SEAL}  -\n")).expect("write");
    std::fs::write(p.join("fixtures.seal.expected"), format!("{SEAL}  -\n")).expect("write");
    std::fs::write(p.join("other.seal"), format!("{OTHER}  -\n")).expect("write");
    Repo { dir, base }
}

impl Repo {
    fn write(&self, name: &str, v: &Value) {
        std::fs::write(self.dir.path().join(name), v.to_string()).expect("write");
    }

    fn quorum(&self, extra: &[&str]) -> Command {
        let mut cmd = common::patchgate();
        cmd.current_dir(self.dir.path())
            .env_remove("PATCHGATE_SERVER")
            .env_remove("PATCHGATE_TOKEN")
            .args([
                "quorum",
                "--catalog",
                "catalog.yaml",
                "--base",
                &self.base,
                "--head",
                "HEAD",
            ])
            .args(["--results", "results.json", "--ledger", "ledger.json"])
            .args(["--expected", "fixtures.seal.expected"]);
        if !extra.contains(&"--seal") {
            cmd.args(["--seal", "fixtures.seal"]);
        }
        cmd.args(extra);
        cmd
    }
}

fn runs(v: &[u8]) -> Value {
    json!({"runs": v})
}

#[test]
fn exit_codes_follow_the_outcome_locally_and_against_a_server() {
    let server = TestServer::start();
    let url = format!("http://{}", server.addr);
    // (changed files, results, ledger, extra flags, exit, first line)
    type Case<'a> = (&'a [&'a str], Value, Value, Vec<&'a str>, i32, &'a str);
    let cases: Vec<Case> = vec![
        (
            &["store/counters/mod.rs"],
            json!({"counter.monotonic_under_replay": runs(&[0, 0])}),
            json!([]),
            vec![],
            0,
            "promote reason=quorum-held",
        ),
        (
            &["docs/readme.md"],
            json!({}),
            json!([]),
            vec![],
            1,
            "reject reason=empty-quorum",
        ),
        (
            &["store/counters/mod.rs"],
            json!({"counter.monotonic_under_replay": runs(&[0, 0])}),
            json!([{"property_id": "counter.monotonic_under_replay", "state": "open"}]),
            vec![],
            1,
            "reject reason=empty-quorum",
        ),
        (
            &["store/counters/mod.rs"],
            json!({"counter.monotonic_under_replay": runs(&[0, 1])}),
            json!([]),
            vec![],
            2,
            "hold reason=split-exits",
        ),
        (
            &["store/counters/mod.rs"],
            json!({"counter.monotonic_under_replay": runs(&[0, 0])}),
            json!([]),
            vec!["--seal", "other.seal"],
            2,
            "fixture_fault reason=seal-mismatch",
        ),
        (
            &["store/counters/mod.rs"],
            json!({"counter.monotonic_under_replay": runs(&[0, 0])}),
            json!([{"property_id": "x", "state": "open"}, {"property_id": "y", "state": "open"}]),
            vec!["--debt-cap", "1"],
            3,
            "stop_queue reason=debt-over-cap",
        ),
    ];
    for (changed, results, ledger, extra, exit, line) in cases {
        let repo = repo(changed);
        repo.write("results.json", &results);
        repo.write("ledger.json", &ledger);
        for server in [None, Some(url.as_str())] {
            let mut cmd = repo.quorum(&extra);
            if let Some(url) = server {
                cmd.args(["--server", url]);
            }
            let out = cmd.assert().code(exit).get_output().stdout.clone();
            let text = String::from_utf8_lossy(&out);
            assert_eq!(
                text.lines().next(),
                Some(line),
                "{changed:?} via {server:?}: {text}"
            );
        }
    }
}

#[test]
fn commit_budgets_are_counted_with_git() {
    // One open row opened at the base commit, one commit ago. With a budget of 1 it is spent
    // (counted twice: 2 > cap 1); with a budget of 5 it is not (1 ≤ 1).
    let repo = repo(&["store/counters/mod.rs"]);
    repo.write(
        "results.json",
        &json!({"counter.monotonic_under_replay": runs(&[0, 0])}),
    );
    let row = |budget: u64| json!([{"property_id": "elsewhere", "state": "open", "opened_against_commit": repo.base, "retire_by_commit_count": budget}]);
    repo.write("ledger.json", &row(1));
    let out = repo
        .quorum(&["--debt-cap", "1", "--json"])
        .assert()
        .code(3)
        .get_output()
        .stdout
        .clone();
    let answer: Value = serde_json::from_slice(&out).expect("json");
    assert_eq!(
        answer["debt"],
        json!({"open": 1, "spent": 1, "counted": 2, "cap": 1})
    );
    repo.write("ledger.json", &row(5));
    repo.quorum(&["--debt-cap", "1"]).assert().code(0);
}

#[test]
fn bad_files_are_65_and_name_what_is_wrong() {
    let repo = repo(&["store/counters/mod.rs"]);
    repo.write(
        "results.json",
        &json!({"counter.monotonic_under_replay": runs(&[0, 0]), "nope": runs(&[0, 0])}),
    );
    repo.write("ledger.json", &json!([]));
    let out = repo
        .quorum(&[])
        .assert()
        .code(65)
        .get_output()
        .stderr
        .clone();
    assert!(
        String::from_utf8_lossy(&out).contains("/results/nope"),
        "{}",
        String::from_utf8_lossy(&out)
    );

    std::fs::write(
        repo.dir.path().join("catalog.yaml"),
        "properties: [ {id: a, strength: medium, locality: [x]} ]",
    )
    .expect("write");
    repo.write("results.json", &json!({}));
    let out = repo
        .quorum(&[])
        .assert()
        .code(65)
        .get_output()
        .stderr
        .clone();
    assert!(String::from_utf8_lossy(&out).contains("/catalog/properties/0/strength"));

    std::fs::write(repo.dir.path().join("catalog.yaml"), "properties: [ {id: a").expect("write");
    repo.quorum(&[]).assert().code(65);
    std::fs::write(repo.dir.path().join("fixtures.seal"), "not a seal\n").expect("write");
    repo.quorum(&[]).assert().code(65);
}

#[test]
fn changed_files_can_come_from_a_file() {
    let repo = repo(&["docs/readme.md"]);
    repo.write(
        "results.json",
        &json!({"resp.no_secret_fields": runs(&[0, 0]), "resp.keys_present": runs(&[1, 1])}),
    );
    repo.write("ledger.json", &json!([]));
    std::fs::write(
        repo.dir.path().join("changed.txt"),
        "api/serializers/user.py\n",
    )
    .expect("write");
    let mut cmd = common::patchgate();
    cmd.current_dir(repo.dir.path())
        .args([
            "quorum",
            "--catalog",
            "catalog.yaml",
            "--changed-files",
            "changed.txt",
        ])
        .args([
            "--results",
            "results.json",
            "--seal",
            "fixtures.seal",
            "--expected",
            "fixtures.seal.expected",
        ]);
    // A forgotten ledger would hide every freeze: --ledger or an explicit --no-ledger (64).
    cmd.assert().code(64);
    cmd.arg("--no-ledger");
    let out = cmd.assert().code(1).get_output().stdout.clone();
    assert_eq!(
        String::from_utf8_lossy(&out).lines().next(),
        Some("reject reason=stable-failure")
    );
}

/// CONTRACT.md section 0: a field given twice in any file the CLI reads is exit 65, never
/// resolved by keeping one copy. Both orders of the two copies are tried: a reader that kept
/// the last (or the first) would promote in one order.
#[test]
fn a_field_given_twice_in_a_catalog_is_65_in_either_order() {
    let repo = repo(&["store/counters/mod.rs"]);
    repo.write(
        "results.json",
        &json!({"counter.monotonic_under_replay": runs(&[0, 0])}),
    );
    repo.write("ledger.json", &json!([]));
    for (a, b) in [("weak", "strong"), ("strong", "weak")] {
        let json = format!(
            r#"{{"properties":[{{"id":"counter.monotonic_under_replay","strength":"{a}","strength":"{b}","locality":["store/counters"]}}]}}"#
        );
        let yaml = format!(
            "properties:\n  - id: counter.monotonic_under_replay\n    strength: {a}\n    strength: {b}\n    locality: [store/counters]\n"
        );
        // The catalog is read as JSON when it starts like JSON, else as YAML.
        for (file, text) in [("JSON", json), ("YAML", yaml)] {
            std::fs::write(repo.dir.path().join("catalog.yaml"), text).expect("write");
            let out = repo
                .quorum(&[])
                .assert()
                .code(65)
                .get_output()
                .stderr
                .clone();
            let text = String::from_utf8_lossy(&out);
            assert!(text.contains("strength"), "{file} ({a}, {b}): {text}");
        }
    }
}

/// CONTRACT.md section 2 through the CLI: a failing `cargo test` (101) holds as a broken
/// harness under pytest's codes, and rejects once 101 is declared a catch; a killed run is null.
#[test]
fn catch_exit_codes_from_the_command_line() {
    let repo = repo(&["store/counters/mod.rs"]);
    repo.write("ledger.json", &json!([]));
    repo.write(
        "results.json",
        &json!({"counter.monotonic_under_replay": {"runs": [101, 101]}}),
    );
    repo.quorum(&[]).assert().code(2);
    repo.quorum(&["--catch-exit-code", "101"]).assert().code(1);
    repo.write(
        "results.json",
        &json!({"counter.monotonic_under_replay": {"runs": [null, null]}}),
    );
    let out = repo
        .quorum(&[])
        .assert()
        .code(2)
        .get_output()
        .stdout
        .clone();
    assert!(
        String::from_utf8_lossy(&out).contains("harness-error"),
        "{}",
        String::from_utf8_lossy(&out)
    );
}

#[test]
fn require_admission_from_the_command_line() {
    // CONTRACT.md section 10: without its `admitted` proof a strong row votes as weak.
    let server = TestServer::start();
    let url = format!("http://{}", server.addr);
    let repo = repo(&["store/counters/mod.rs"]);
    repo.write("ledger.json", &json!([]));
    repo.write(
        "results.json",
        &json!({"counter.monotonic_under_replay": {"runs": [0, 0]}}),
    );
    let line = |extra: &[&str], code: i32| {
        let out = repo
            .quorum(extra)
            .assert()
            .code(code)
            .get_output()
            .stdout
            .clone();
        String::from_utf8_lossy(&out).into_owned()
    };
    assert!(line(&[], 0).starts_with("promote reason=quorum-held\n"));
    for remote in [&[][..], &["--server", url.as_str()][..]] {
        let mut args = vec!["--require-admission"];
        args.extend(remote);
        let text = line(&args, 1);
        assert!(text.starts_with("reject reason=empty-quorum\n"), "{text}");
        let row = text
            .lines()
            .find(|l| l.contains("counter.monotonic_under_replay"))
            .unwrap();
        assert!(row.ends_with("yes (unproven: votes as weak)"), "{row}");
    }
    // Admitted (a record committed into the row), it fills the quorum again.
    let admitted = CATALOG.replace(
        "    fixtures: fixtures/replays/\n",
        "    fixtures: fixtures/replays/\n    admitted: {\"seal\": \"abcfa6a9d4df344d1781bc2560b5e4cdcae08b39ed303063535e7e1e926a304a\", \"mutant\": \"c0ffee\", \"base_runs\": [0, 0], \"mutant_runs\": [1, 1]}\n",
    );
    std::fs::write(repo.dir.path().join("catalog.yaml"), admitted).unwrap();
    let text = line(&["--require-admission"], 0);
    assert!(text.starts_with("promote reason=quorum-held\n"), "{text}");
    let unproven: Vec<&str> = text
        .lines()
        .filter(|l| l.contains("unproven"))
        .filter_map(|l| l.split_whitespace().next())
        .collect();
    assert_eq!(unproven, ["resp.no_secret_fields"], "{text}");
}
