//! `patchgate ladder run` against real commands in a temporary git repository: the exit code
//! read honestly (only 1 is a catch), the ledger line by line, the ladder stopping at the first
//! non-pass, and a timed-out tier's whole process group killed. Plus the report, freeze,
//! review and calibrate commands through the binary, locally and against a server.

mod common;

use std::path::Path;
use std::time::{Duration, Instant};

use common::{TestServer, git};
use serde_json::{Value, json};

/// A repository whose head commit changes `changed`.
fn repo(changed: &str) -> (tempfile::TempDir, String) {
    let dir = common::git_repo();
    let p = dir.path();
    std::fs::write(p.join("README"), "base\n").expect("write");
    git(p, &["add", "-A"]);
    git(p, &["commit", "-q", "-m", "base"]);
    let base = git(p, &["rev-parse", "HEAD"]);
    let path = p.join(changed);
    std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
    std::fs::write(&path, "change\n").expect("write");
    git(p, &["add", "-A"]);
    git(p, &["commit", "-q", "-m", "patch"]);
    (dir, base)
}

fn config(dir: &Path, t1: &str, t2: &str, t1_timeout: f64) {
    let toml = format!(
        "[[tier]]\nname = \"t1-properties\"\ncommand = [\"sh\", \"-c\", {t1:?}]\ntimeout_s = {t1_timeout}\nskip_on_scope_hit = true\n\n\
         [[tier]]\nname = \"t2-fixtures\"\ncommand = [\"sh\", \"-c\", {t2:?}]\ntimeout_s = 30\n"
    );
    std::fs::write(dir.join("ladder.toml"), toml).expect("write");
}

fn run_ladder(dir: &Path, base: &str) -> (i32, Vec<Value>) {
    let out = common::patchgate()
        .current_dir(dir)
        .args([
            "ladder",
            "run",
            "--base",
            base,
            "--head",
            "HEAD",
            "--ledger",
            "ledger.jsonl",
            "--config",
            "ladder.toml",
        ])
        .output()
        .expect("run");
    let ledger = std::fs::read_to_string(dir.join("ledger.jsonl")).unwrap_or_default();
    let rows = ledger
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON line"))
        .collect();
    (out.status.code().unwrap_or(-1), rows)
}

#[test]
fn exit_codes_are_read_honestly_and_the_ladder_stops_at_the_first_non_pass() {
    // (t1 command, t2 command, ladder exit, [(tier, verdict, exit_code)])
    type Rows<'a> = Vec<(&'a str, &'a str, Option<i64>)>;
    let cases: Vec<(&str, &str, i32, Rows)> = vec![
        (
            "exit 0",
            "exit 0",
            0,
            vec![
                ("t1-properties", "pass", Some(0)),
                ("t2-fixtures", "pass", Some(0)),
            ],
        ),
        (
            "exit 1",
            "exit 0",
            1,
            vec![("t1-properties", "caught", Some(1))],
        ),
        (
            "exit 0",
            "exit 1",
            1,
            vec![
                ("t1-properties", "pass", Some(0)),
                ("t2-fixtures", "caught", Some(1)),
            ],
        ),
        (
            "exit 2",
            "exit 0",
            2,
            vec![("t1-properties", "error", Some(2))],
        ),
        (
            "exit 5",
            "exit 0",
            2,
            vec![("t1-properties", "error", Some(5))],
        ),
        (
            "exit 0",
            "exit 3",
            2,
            vec![
                ("t1-properties", "pass", Some(0)),
                ("t2-fixtures", "error", Some(3)),
            ],
        ),
        // In the sealed room a tier killed by a signal ends its sandbox with 128 + the
        // signal, as a shell reports it: not a catch, an error.
        (
            "kill -9 $$",
            "exit 0",
            2,
            vec![("t1-properties", "error", Some(137))],
        ),
    ];
    for (t1, t2, exit, want) in cases {
        let (dir, base) = repo("src/app.py");
        config(dir.path(), t1, t2, 30.0);
        let head = git(dir.path(), &["rev-parse", "HEAD"]);
        let (code, rows) = run_ladder(dir.path(), &base);
        assert_eq!(code, exit, "{t1} / {t2}: {rows:?}");
        assert_eq!(
            rows.len(),
            want.len(),
            "{t1} / {t2}: one row per tier reached: {rows:?}"
        );
        for (row, (tier, verdict, code)) in rows.iter().zip(&want) {
            assert_eq!(row["tier"], *tier);
            assert_eq!(row["verdict"], *verdict, "{t1} / {t2}");
            assert_eq!(row["exit_code"].as_i64(), *code);
            assert_eq!(row["patch"], head.as_str(), "the head commit");
            assert_eq!(row["files"], json!(["src/app.py"]));
            assert!(row["seconds"].as_f64().is_some_and(|s| s >= 0.0));
        }
    }
}

#[test]
fn a_scope_hit_skips_the_property_tier() {
    let (dir, base) = repo("tests/test_app.py");
    config(dir.path(), "exit 1", "exit 0", 30.0);
    let (code, rows) = run_ladder(dir.path(), &base);
    assert_eq!(code, 0);
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0]["tier"], "t2-fixtures");
}

#[test]
fn a_timed_out_tier_is_an_error_and_its_whole_process_group_is_killed() {
    let (dir, base) = repo("src/app.py");
    // The tier spawns a child that would sleep for minutes, then waits.
    config(dir.path(), "sleep 301.5 & sleep 300", "exit 0", 1.0);
    let started = Instant::now();
    let (code, rows) = run_ladder(dir.path(), &base);
    assert!(
        started.elapsed() < Duration::from_secs(60),
        "the timeout did not stop the tier"
    );
    assert_eq!(code, 2);
    assert_eq!(rows.len(), 1, "the ladder stops at the error");
    assert_eq!(rows[0]["verdict"], "error");
    assert_eq!(rows[0]["exit_code"], Value::Null);
    assert!(rows[0]["seconds"].as_f64().is_some_and(|s| s >= 1.0));
    // The child, wherever its PID namespace put it, is gone with the tier.
    let deadline = Instant::now() + Duration::from_secs(10);
    while let Some(pid) = common::pid_running("sleep\x00301.5\0") {
        assert!(
            Instant::now() < deadline,
            "the tier's child {pid} outlived the timeout"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn report_freeze_review_and_calibrate_through_the_binary() {
    let server = TestServer::start();
    let url = format!("http://{}", server.addr);
    let dir = tempfile::tempdir().expect("tempdir");
    let p = dir.path();
    let rows = [
        json!({"patch": "a", "tier": "t1-properties", "verdict": "caught", "seconds": 2.0}),
        json!({"patch": "b", "tier": "t1-properties", "verdict": "pass", "seconds": 4.0}),
        json!({"patch": "b", "tier": "t2-fixtures", "verdict": "error", "seconds": 10.0}),
    ];
    std::fs::write(
        p.join("ledger.jsonl"),
        rows.iter().map(|r| format!("{r}\n")).collect::<String>(),
    )
    .expect("write");
    for server in [None, Some(url.as_str())] {
        let mut cmd = common::patchgate();
        cmd.current_dir(p)
            .args(["ladder", "report", "ledger.jsonl", "--json"]);
        if let Some(u) = server {
            cmd.args(["--server", u]);
        }
        let out = cmd.assert().code(0).get_output().stdout.clone();
        let report: Value = serde_json::from_slice(&out).expect("json");
        assert_eq!(report["tiers"][0]["median_s"], 3.0);
        assert_eq!(report["tiers"][0]["yield_per_s"], 1.0 / 6.0);
        assert_eq!(report["tiers"][1]["errors"], 1);
    }
    let table = common::patchgate()
        .current_dir(p)
        .args(["ladder", "report", "ledger.jsonl"])
        .assert()
        .code(0)
        .get_output()
        .stdout
        .clone();
    let table = String::from_utf8_lossy(&table);
    assert!(table.starts_with("tier"), "{table}");
    assert!(table.contains("broken harness"), "{table}");

    // Freeze: 1 flip in 20 runs (0.053), with and without a seeded-bug catch.
    let outcomes: Vec<bool> = (0..20).map(|i| i != 0).collect();
    std::fs::write(p.join("outcomes.json"), json!(outcomes).to_string()).expect("write");
    for server in [None, Some(url.as_str())] {
        let run = |extra: &[&str]| {
            let mut cmd = common::patchgate();
            cmd.current_dir(p)
                .args(["freeze", "--outcomes", "outcomes.json"])
                .args(extra);
            if let Some(u) = server {
                cmd.args(["--server", u]);
            }
            cmd
        };
        run(&["--caught-seeded-bug"])
            .assert()
            .code(0)
            .stdout("eligible freeze with expiry, flip_rate=0.053\n");
        run(&[])
            .assert()
            .code(1)
            .stdout("not-eligible no sensitivity evidence; rewrite or delete\n");
        run(&["--min-runs", "1"]).assert().code(65);
    }

    // Review the service's own decision log.
    let log: String = [
        json!({"target": "patchgate::decision", "endpoint": "route", "disposition": "ESCALATE", "attribution": "inadmissible-evidence"}),
        json!({"target": "patchgate::decision", "endpoint": "route", "disposition": "MERGE_OK", "attribution": "all-gates-held"}),
    ]
    .iter()
    .map(|l| format!("{l}\n"))
    .collect();
    std::fs::write(p.join("decisions.jsonl"), log).expect("write");
    let out = common::patchgate()
        .current_dir(p)
        .args(["review", "decisions.jsonl", "--server", &url, "--json"])
        .assert()
        .code(0)
        .get_output()
        .stdout
        .clone();
    let review: Value = serde_json::from_slice(&out).expect("json");
    assert_eq!(review["inadmissible_share"], 0.5);
    assert!(review["warning"].is_string());

    std::fs::write(p.join("rows.jsonl"), "{\"attribution\":\"concrete-behavior\",\"fix_files\":[\"src/a.rs\"],\"fix_changed\":\"check\"}\n").expect("write");
    let out = common::patchgate()
        .current_dir(p)
        .args(["calibrate", "rows.jsonl", "--json"])
        .assert()
        .code(0)
        .get_output()
        .stdout
        .clone();
    let classes: Value = serde_json::from_slice(&out).expect("json");
    assert_eq!(
        classes,
        json!([{"attribution": "concrete-behavior", "count": 1, "production": 0.0, "check": 1.0, "both": 0.0,
                "points_to": "production", "hit_rate": 0.0}])
    );

    // The review drawn for a CI job summary: Mermaid charts, each with its table.
    let summary = p.join("summary.md");
    std::fs::write(
        p.join("decisions.jsonl"),
        [
            json!({"timestamp": "2026-11-24T10:00:00Z", "target": "patchgate::decision", "endpoint": "route", "disposition": "ESCALATE", "attribution": "inadmissible-evidence"}),
            json!({"timestamp": "2026-12-01T10:00:00Z", "target": "patchgate::decision", "endpoint": "gate", "disposition": "MERGE_OK", "attribution": "all-gates-held", "debt_counted": 2, "debt_cap": 5}),
        ]
        .iter()
        .map(|l| format!("{l}\n"))
        .collect::<String>(),
    )
    .expect("write");
    common::patchgate()
        .current_dir(p)
        .args([
            "review",
            "decisions.jsonl",
            "--ledger",
            "ledger.jsonl",
            "--markdown-out",
        ])
        .arg(&summary)
        .assert()
        .code(0);
    let md = std::fs::read_to_string(&summary).expect("summary");
    for part in [
        "```mermaid\nxychart-beta\n    title \"Escalation rate per week\"",
        "x-axis [\"2026-11-23\", \"2026-11-30\"]",
        // The escalation rate, the inadmissible share, the 40% line.
        "    line [1, 0]\n    line [1, 0]\n    line [0.4, 0.4]",
        "| 2026-11-23 | 1 | 100.0% | 100.0% |",
        "pie title Attributions",
        "\"inadmissible-evidence\" : 1",
        "| 2026-11-30 | 2 | 5 |",
        "title \"Yield per tier\"",
        "| `t1-properties` | 2 | 1 | 0 | 6.0 | 0.1667 |",
    ] {
        assert!(md.contains(part), "{part}\n---\n{md}");
    }
}

/// CONTRACT.md section 2: a tier takes its own catch codes. A Rust repository's failing
/// `cargo test` (exit 101) is a catch when the tier says `catch = [101]`, and a broken harness
/// (exit 2 from the ladder) under pytest's default `[1]`.
#[test]
fn a_tier_reads_its_own_catch_codes() {
    let (dir, base) = repo("src/lib.rs");
    for (catch, want_exit, want_verdict) in [("", 2, "error"), ("catch = [101]\n", 1, "caught")] {
        let toml = format!(
            "[[tier]]\nname = \"t1-properties\"\ncommand = [\"sh\", \"-c\", \"exit 101\"]\ntimeout_s = 30\n{catch}"
        );
        std::fs::write(dir.path().join("ladder.toml"), toml).expect("write");
        let _ = std::fs::remove_file(dir.path().join("ledger.jsonl"));
        let (code, rows) = run_ladder(dir.path(), &base);
        assert_eq!(code, want_exit, "{catch}");
        assert_eq!(rows[0]["verdict"], want_verdict, "{catch}");
        assert_eq!(rows[0]["exit_code"], 101);
    }
    // 0 is a pass, never a catch: the config is refused (65).
    std::fs::write(
        dir.path().join("ladder.toml"),
        "[[tier]]\nname = \"t1\"\ncommand = [\"true\"]\ntimeout_s = 5\ncatch = [0]\n",
    )
    .expect("write");
    assert_eq!(run_ladder(dir.path(), &base).0, 65);
}

#[test]
fn the_runner_says_how_a_tier_ended_in_plain_words() {
    let (dir, base) = repo("src/app.py");
    config(dir.path(), "exit 0", "kill -9 $$", 30.0);
    let ladder = |base: &str| {
        common::patchgate()
            .current_dir(dir.path())
            .args(["ladder", "run", "--base", base, "--head", "HEAD"])
            .args(["--ledger", "ledger.jsonl", "--config", "ladder.toml"])
            .output()
            .expect("run")
    };
    let out = ladder(&base);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("t1-properties: pass (exit 0, "), "{stderr}");
    assert!(
        stderr.contains("t2-fixtures: error (exit 137, as signal 9 would end it, "),
        "{stderr}"
    );
    assert!(!stderr.contains("Some("), "{stderr}");
    // A base git does not know: one line saying what was asked and what git said, exit 65.
    let out = ladder("no-such-branch");
    assert_eq!(out.status.code(), Some(65));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.contains("no-such-branch"), "{stderr}");
    // Outside a git repository: one line too.
    let outside = tempfile::tempdir().unwrap();
    std::fs::copy(
        dir.path().join("ladder.toml"),
        outside.path().join("ladder.toml"),
    )
    .unwrap();
    let out = common::patchgate()
        .current_dir(outside.path())
        .args(["ladder", "run", "--base", "main", "--head", "HEAD"])
        .args(["--ledger", "ledger.jsonl", "--config", "ladder.toml"])
        .output()
        .expect("run");
    assert!(matches!(out.status.code(), Some(64 | 65)));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
}

/// `calibrate --log` on what is not a decision log, and `calibrate` given nothing to read: a
/// clear refusal (65, 64), never an empty table.
#[test]
fn calibrating_from_what_is_not_a_log_is_refused() {
    let dir = tempfile::tempdir().expect("tempdir");
    let p = dir.path();
    std::fs::write(p.join("notes.txt"), "not json\n{\"target\":\"other\"}\n").expect("write");
    let out = common::patchgate()
        .current_dir(p)
        .args(["calibrate", "--log", "notes.txt"])
        .assert()
        .code(65)
        .get_output()
        .stderr
        .clone();
    let stderr = String::from_utf8_lossy(&out);
    assert!(
        stderr.contains("no line is a router or gate decision (2 lines skipped)"),
        "{stderr}"
    );
    std::fs::create_dir(p.join("answers")).expect("mkdir");
    std::fs::write(p.join("answers/a.json"), "{\"not\":\"an answer\"}").expect("write");
    common::patchgate()
        .current_dir(p)
        .args(["calibrate", "--answers", "answers"])
        .assert()
        .code(65);
    common::patchgate()
        .current_dir(p)
        .arg("calibrate")
        .assert()
        .code(64);
}

/// A decision log with a 3 MiB line of junk: the line is passed over (counted as skipped,
/// never held whole), and the decision after it is still read.
#[test]
fn a_huge_line_in_the_log_is_skipped_not_held() {
    let dir = tempfile::tempdir().expect("tempdir");
    let p = dir.path();
    common::git(p, &["init", "-q"]);
    let decision = json!({"target": "patchgate::decision", "endpoint": "route", "decision_id": "d1", "patch_id": "pr-1", "disposition": "BLOCK", "attribution": "concrete-behavior"});
    std::fs::write(
        p.join("decisions.jsonl"),
        format!("{}\n{decision}\n", "x".repeat(3 << 20)),
    )
    .expect("write");
    let out = common::patchgate()
        .current_dir(p)
        .args(["calibrate", "--log", "decisions.jsonl", "--json"])
        .assert()
        .code(0)
        .get_output()
        .stdout
        .clone();
    let got: Value = serde_json::from_slice(&out).expect("json");
    assert_eq!(got["skipped"], 1, "{got}");
    assert_eq!(
        got["not_calibrated"],
        json!([{"why": "never-merged", "count": 1, "decision_ids": ["d1"]}])
    );
}
