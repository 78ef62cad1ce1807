//! The runners (`gate`, `ladder run`, `admit`) on a small repository whose checks are shell
//! scripts, so each behaviour is scripted exactly: a suite that reports a very long test id,
//! a config that names an impossible timeout, and Ctrl-C while a check hangs.

mod common;

use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

use common::{git, patchgate, write};
use serde_json::Value;

const CONFIG: &str = r#"fixtures = "fixtures"
expected_seal = "fixtures.seal.expected"
catalog = "catalog.yaml"
[properties]
command = ["sh", "checks/property.sh", "{id}"]
runs = 2
timeout_s = 30
[suite]
command = ["sh", "checks/suite.sh"]
timeout_s = 60
junit = "report.xml"
"#;

/// The suite: what `behaviour/suite` says (`long-id`: a JUnit report whose one failed test
/// has a 5,000-character name, exit 1; `sleep`: hang in `sleep 62.5`; `fifo`
/// and `zero`: the report swapped for a FIFO, or a symbolic link to `/dev/zero`, exit 1).
const SUITE_SH: &str = r#"case "$(cat behaviour/suite)" in
  long-id)
    name=$(printf 'x%.0s' $(seq 1 5000))
    printf '<testsuite tests="1" failures="1"><testcase classname="tests.test_api" name="%s"><failure message="no"/></testcase></testsuite>' "$name" > report.xml
    exit 1 ;;
  sleep)
    # A daemon that leaves the run's process group, then the hang.
    setsid sleep 64.5 > /dev/null 2>&1 < /dev/null &
    sleep 62.5 ;;
  fifo) rm -f report.xml; mkfifo report.xml; exit 1 ;;
  suite-error)
    # Collection crashed (a suite-level <error>) beside the frozen test's failure; run again
    # without the frozen test, it says all is well.
    if [ "$1" = "--deselect" ]; then
      printf '<testsuite name="s" tests="1"><testcase classname="t" name="ok"/></testsuite>' > report.xml
      exit 0
    fi
    printf '<testsuite name="s"><error message="collection crashed"/><testcase classname="t" name="frozen"><failure/></testcase></testsuite>' > report.xml
    exit 1 ;;
  hostile)
    # What code under test tries against the runner and the machine; each success is
    # reported as one failed test case, so the answer says what it managed.
    setsid sleep 63.5 > /dev/null 2>&1 < /dev/null &
    found=""
    for p in /proc/[0-9]*; do
      pid=${p#/proc/}
      if tr '\0' ' ' < "$p/cmdline" 2>/dev/null | grep -q 'patchgate gate'; then
        found="$found saw-runner"
        kill -0 "$pid" 2>/dev/null && found="$found can-signal-runner"
      fi
      grep -qa PATCHGATE_TOKEN "$p/environ" 2>/dev/null && found="$found read-token"
    done
    env | grep -q PATCHGATE_TOKEN && found="$found read-token"
    outside=$(cat behaviour/outside)
    (echo pwned > "$outside/pwned") 2>/dev/null && found="$found wrote-outside"
    (mount -o remount,rw / && echo pwned > "$outside/escaped") > /dev/null 2>&1 && found="$found remounted-rw"
    (echo pwned > "$outside/../pwned-$$") 2>/dev/null && found="$found wrote-outside" && rm -f "$outside/../pwned-$$"
    {
      printf '<testsuite><testcase classname="hostile" name="ran"><failure/></testcase>'
      for f in $(printf '%s\n' $found | sort -u); do
        printf '<testcase classname="hostile" name="%s"><failure/></testcase>' "$f"
      done
      printf '</testsuite>'
    } > report.xml
    exit 1 ;;
  zero) rm -f report.xml; ln -s /dev/zero report.xml; exit 1 ;;
esac
exit 0
"#;

/// A repository on `main` whose one strong property passes, and a branch `patch` (checked
/// out) that changes the code, with the suite behaving as `suite` says.
fn repository(suite: &str) -> tempfile::TempDir {
    repository_with(suite, CONFIG)
}

/// [`repository`] with another config in the base.
fn repository_with(suite: &str, config: &str) -> tempfile::TempDir {
    let tmp = common::git_repo();
    let dir = tmp.path();
    write(dir, "patchgate.toml", config);
    write(
        dir,
        "catalog.yaml",
        "properties:\n  - id: holds\n    strength: strong\n    locality: [src]\n",
    );
    write(dir, "checks/property.sh", "exit 0\n");
    write(dir, "checks/suite.sh", SUITE_SH);
    write(dir, "checks/receipt-property.sh", RECEIPT_PROPERTY_SH);
    write(dir, "checks/receipt-suite.sh", RECEIPT_SUITE_SH);
    write(dir, "fixtures/case.json", "{\"n\": 1}\n");
    write(dir, "src/code.py", "LIMIT = 10\n");
    write(dir, ".gitignore", "report.xml\n");
    write(dir, "behaviour/suite", suite);
    let seal = patchgate()
        .current_dir(dir)
        .args(["seal", "fixtures"])
        .output()
        .unwrap();
    assert!(seal.status.success());
    std::fs::write(dir.join("fixtures.seal.expected"), &seal.stdout).unwrap();
    git(dir, &["add", "-A"]);
    git(dir, &["commit", "-q", "-m", "base"]);
    git(dir, &["checkout", "-q", "-b", "patch"]);
    write(dir, "src/code.py", "LIMIT = 11\n");
    git(dir, &["commit", "-q", "-am", "the patch"]);
    tmp
}

/// Issue 23, bug 4: a failed test whose id is longer than a request may hold (4,096
/// characters) still counts as a failure. Before, the gate refused its own report with exit
/// 65, blaming the base's inputs.
#[test]
fn a_failed_test_with_a_very_long_id_still_counts() {
    let repo = repository("long-id");
    let (code, answer, stderr) = gate_json(repo.path(), &[]);
    assert_eq!(code, Some(1), "{stderr}");
    assert_eq!(answer["disposition"], "BLOCK");
    assert_eq!(answer["reason"], "concrete-behavior");
    let fixtures = answer["steps"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["step"] == "fixtures")
        .unwrap();
    let failed = fixtures["failed_tests"][0].as_str().unwrap();
    assert_eq!(failed.chars().count(), 4096);
    assert!(failed.starts_with("tests.test_api::xxx") && failed.ends_with('…'));
}

/// Issue 23, bug 4: `timeout_s = 1e20` in a ladder config is refused naming the key (exit
/// 65). Before, it panicked (exit 101) converting it to a duration.
#[test]
fn an_impossible_ladder_timeout_is_refused_naming_the_key() {
    let repo = repository("pass");
    let dir = repo.path();
    for (timeout, what) in [("1e20", "not 1e20"), ("0", "not 0.0"), ("nan", "not NaN")] {
        write(
            dir,
            "ladder.toml",
            &format!(
                "[[tier]]\nname = \"t1-properties\"\ncommand = [\"true\"]\ntimeout_s = {timeout}\n"
            ),
        );
        let out = patchgate()
            .current_dir(dir)
            .args([
                "ladder",
                "run",
                "--base",
                "main",
                "--head",
                "HEAD",
                "--config",
                "ladder.toml",
                "--ledger",
                "rows.jsonl",
            ])
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(65), "{timeout}: {stderr}");
        assert!(
            stderr.contains("`timeout_s` must be more than 0 and at most 86400 seconds")
                && stderr.contains(what),
            "{timeout}: {stderr}"
        );
    }
    // The gate's config says the same of its own timeouts.
    let config = CONFIG.replace("timeout_s = 60", "timeout_s = 1e20");
    write(dir, "patchgate.toml", &config);
    git(dir, &["checkout", "-q", "main"]);
    git(dir, &["commit", "-q", "-am", "an impossible timeout"]);
    let out = patchgate()
        .current_dir(dir)
        .args(["gate", "--base", "main", "--head", "main"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(65), "{stderr}");
    assert!(
        stderr.contains("`suite.timeout_s` must be more than 0"),
        "{stderr}"
    );
}

/// Whether a process is still alive (and not a zombie).
fn alive(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .map(|s| !s.contains(") Z "))
        .unwrap_or(false)
}

/// Starts `args` in `dir`, waits until the hanging check runs, sends `signal`, and
/// returns the exit code, stderr, and the check's PID.
fn interrupt(
    dir: &Path,
    args: &[&str],
    signal: nix::sys::signal::Signal,
) -> (Option<i32>, String, i32) {
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("patchgate"))
        .current_dir(dir)
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Found by its command line: in the sandbox the check has a PID of its own namespace and
    // cannot write a file out.
    let started = Instant::now();
    let check = loop {
        if let Some(pid) = common::pid_running("sleep\x0062.5\0") {
            break pid;
        }
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "{args:?}: the check never started"
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    assert!(alive(check));
    nix::sys::signal::kill(nix::unistd::Pid::from_raw(child.id() as i32), signal).unwrap();
    let status = child.wait().unwrap();
    assert!(
        started.elapsed() < Duration::from_secs(30),
        "{args:?}: it did not stop at once"
    );
    let mut stderr = String::new();
    std::io::Read::read_to_string(child.stderr.as_mut().unwrap(), &mut stderr).unwrap();
    (status.code(), stderr, check)
}

/// Every command that runs the code under test stops on SIGINT, SIGTERM or SIGHUP: the
/// running check's whole process group is killed, and every process it left behind (a
/// `setsid` daemon), the command exits 128 + the signal (130, 143, 129) without a decision,
/// and nothing it started is left behind. (Before, `gate` and `ladder run` died at once and
/// left the running test behind; then they exited 130 whatever the signal.)
#[test]
fn ctrl_c_stops_every_runner_and_leaves_nothing_behind() {
    use nix::sys::signal::Signal;
    let repo = repository("sleep");
    let dir = repo.path();
    write(
        dir,
        "ladder.toml",
        "[[tier]]\nname = \"t2-fixtures\"\ncommand = [\"sh\", \"checks/suite.sh\"]\ntimeout_s = 60\n",
    );
    let commands: [&[&str]; 2] = [
        &["gate", "--base", "main"],
        &[
            "ladder",
            "run",
            "--base",
            "main",
            "--head",
            "HEAD",
            "--config",
            "ladder.toml",
            "--ledger",
            "rows.jsonl",
        ],
    ];
    for args in commands {
        for (signal, exit) in [
            (Signal::SIGINT, 130),
            (Signal::SIGTERM, 143),
            (Signal::SIGHUP, 129),
        ] {
            let (code, stderr, check) = interrupt(dir, args, signal);
            assert_eq!(code, Some(exit), "{args:?} {signal}: {stderr}");
            assert!(
                stderr.contains("interrupted"),
                "{args:?} {signal}: {stderr}"
            );
            let gone = Instant::now();
            while alive(check) {
                assert!(
                    gone.elapsed() < Duration::from_secs(5),
                    "{args:?} {signal}: the check outlived the runner"
                );
                std::thread::sleep(Duration::from_millis(20));
            }
            while let Some(daemon) = common::pid_running("sleep\x0064.5\0") {
                assert!(
                    gone.elapsed() < Duration::from_secs(5),
                    "{args:?} {signal}: the daemon {daemon} outlived the runner"
                );
                std::thread::sleep(Duration::from_millis(20));
            }
        }
    }
    // Nothing was decided, so nothing was written.
    assert!(
        !dir.join("rows.jsonl").exists()
            || std::fs::read_to_string(dir.join("rows.jsonl"))
                .unwrap()
                .is_empty()
    );
}

/// What Ctrl-C (SIGINT; SIGTERM and SIGHUP alike) does to each subcommand, written by hand:
/// - `kills-the-check`: it runs the code under test; the running check's whole process group
///   is killed, it cleans up and exits 130 (tested above for `gate` and `ladder run`, and in
///   `tests/admit.rs` for `admit`);
/// - `drains`: the server stops accepting, finishes what is in flight and exits 0
///   (`tests/serve_process.rs`);
/// - `dies`: it only reads input and decides; nothing of it outlives it and nothing is
///   half-written, so the signal's default ends it at once (tested below on `route -` waiting
///   for its input).
///
/// A new subcommand must say which it is: the table must name every subcommand of the clap
/// tree.
const CTRL_C: [(&str, &str); 21] = [
    ("serve", "drains"),
    ("gate", "kills-the-check"),
    ("init", "dies"),
    ("admit", "kills-the-check"),
    ("census", "kills-the-check"),
    ("warm", "kills-the-check"),
    ("route", "dies"),
    ("quorum", "dies"),
    ("seal", "dies"),
    ("ladder", "dies"),
    ("ladder plan", "dies"),
    ("ladder run", "kills-the-check"),
    ("ladder report", "dies"),
    ("freeze", "dies"),
    ("review", "dies"),
    ("calibrate", "dies"),
    ("read", "dies"),
    ("observe", "dies"),
    // The gate's own steps, through the same interrupt catch as `gate`.
    ("replay", "kills-the-check"),
    ("healthcheck", "dies"),
    ("openapi", "dies"),
];

#[test]
fn every_subcommand_says_what_ctrl_c_does() {
    use clap::CommandFactory;
    let mut tree: Vec<String> = Vec::new();
    // As declared (clap's generated `help` subcommands are not built in).
    let cli = patchgate::cli::Cli::command();
    for sub in cli.get_subcommands() {
        tree.push(sub.get_name().to_owned());
        for inner in sub.get_subcommands() {
            tree.push(format!("{} {}", sub.get_name(), inner.get_name()));
        }
    }
    let mut table: Vec<String> = CTRL_C.iter().map(|(c, _)| (*c).to_owned()).collect();
    tree.sort();
    table.sort();
    assert_eq!(
        tree, table,
        "every subcommand, and only those, is in CTRL_C"
    );

    // `dies`: `route -` waiting for its evidence on stdin ends at SIGINT, at once. Started as
    // a terminal starts it: a test run in a shell's background inherits SIGINT ignored.
    let mut command = std::process::Command::new(assert_cmd::cargo::cargo_bin("patchgate"));
    command
        .args(["route", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    // SAFETY: one async-signal-safe call (sigaction) between fork and exec.
    unsafe {
        use std::os::unix::process::CommandExt;
        command.pre_exec(|| {
            nix::sys::signal::signal(
                nix::sys::signal::Signal::SIGINT,
                nix::sys::signal::SigHandler::SigDfl,
            )
            .map(|_| ())
            .map_err(std::io::Error::from)
        });
    }
    let mut child = command.spawn().unwrap();
    std::thread::sleep(Duration::from_millis(300));
    assert!(
        child.try_wait().unwrap().is_none(),
        "it waits for its input"
    );
    let started = Instant::now();
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(child.id() as i32),
        nix::sys::signal::Signal::SIGINT,
    )
    .unwrap();
    let status = child.wait().unwrap();
    assert!(started.elapsed() < Duration::from_secs(5));
    use std::os::unix::process::ExitStatusExt;
    assert_eq!(status.signal(), Some(2), "{status:?}");
}

/// Runs `patchgate gate --base main --json` in `dir` with `env`: the exit code, the answer
/// (null when stdout holds none) and stderr.
fn gate_json(dir: &Path, env: &[(&str, &str)]) -> (Option<i32>, Value, String) {
    let out = patchgate()
        .current_dir(dir)
        .envs(env.iter().copied())
        .args(["gate", "--base", "main", "--json"])
        .output()
        .unwrap();
    (
        out.status.code(),
        serde_json::from_slice(&out.stdout).unwrap_or(Value::Null),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Runs `patchgate gate --base main` in `dir` with `extra`, killed after `limit`: the exit code
/// (`None` when it had to be killed) and stderr.
fn gate_within(dir: &Path, extra: &[&str], limit: Duration) -> (Option<i32>, String) {
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("patchgate"))
        .current_dir(dir)
        .args(["gate", "--base", "main"])
        .args(extra)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let started = Instant::now();
    let code = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status.code();
        }
        if started.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let mut stderr = String::new();
    std::io::Read::read_to_string(child.stderr.as_mut().unwrap(), &mut stderr).unwrap();
    (code, stderr)
}

/// Issue 24 (section 12.2): the report is hostile input. A suite that swaps its JUnit report
/// for a FIFO hung the gate for ever (opening it blocked); one that swaps it for a symbolic
/// link to `/dev/zero` grew the gate until it aborted. Now neither is read: the suite's exit
/// decides (BLOCK, its failure counted), within seconds.
#[test]
fn a_report_swapped_for_a_fifo_or_a_link_to_dev_zero_is_not_read() {
    for (behaviour, said) in [("fifo", "a FIFO"), ("zero", "a symbolic link")] {
        let repo = repository(behaviour);
        let (code, stderr) = gate_within(repo.path(), &[], Duration::from_secs(30));
        assert_eq!(code, Some(1), "{behaviour}: {stderr}");
        assert!(
            stderr.contains("no JUnit report read at report.xml (it is") && stderr.contains(said),
            "{behaviour}: {stderr}"
        );
    }
}

/// Issue 24 (section 12.2): every output is written without following a link the patch
/// committed. A patch that commits `answer.json -> ../victim` and `logs -> ..` (a directory
/// link out of the checkout) made `--json-out answer.json` and `--tier-ledger logs/victim`
/// truncate and append to a file outside the worktree. Now both are refused (65) and the
/// file outside is untouched.
#[test]
fn outputs_never_follow_a_link_the_patch_committed() {
    let outer = tempfile::tempdir().unwrap();
    let repo = repository("pass");
    let dir = repo.path();
    let victim = dir.parent().unwrap().join(format!(
        "victim-{}",
        dir.file_name().unwrap().to_string_lossy()
    ));
    std::fs::write(&victim, "precious\n").unwrap();
    std::os::unix::fs::symlink(&victim, dir.join("answer.json")).unwrap();
    std::os::unix::fs::symlink(dir.parent().unwrap(), dir.join("logs")).unwrap();
    git(dir, &["add", "answer.json", "logs"]);
    git(dir, &["commit", "-q", "-m", "links"]);
    let victim_name = victim.file_name().unwrap().to_string_lossy().into_owned();
    let ledger = format!("logs/{victim_name}");
    for extra in [
        vec!["--json-out", "answer.json"],
        vec!["--tier-ledger", ledger.as_str()],
        vec!["--markdown-out", ledger.as_str()],
    ] {
        let (code, stderr) = gate_within(dir, &extra, Duration::from_secs(60));
        assert_eq!(code, Some(65), "{extra:?}: {stderr}");
        assert!(stderr.contains("refusing to write"), "{extra:?}: {stderr}");
        assert_eq!(
            std::fs::read_to_string(&victim).unwrap(),
            "precious\n",
            "{extra:?}"
        );
    }
    // An output outside the checkout is the caller's own: written as asked. (The gate
    // escalates: `logs`, a link out of the tree a package could be imported through, is code
    // the reader cannot read, issue 49.)
    let answer = outer.path().join("answer.json");
    let (code, stderr) = gate_within(
        dir,
        &["--json-out", answer.to_str().unwrap()],
        Duration::from_secs(60),
    );
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        std::fs::read_to_string(&answer)
            .unwrap()
            .contains("\"unread-code\"")
    );
    let _ = std::fs::remove_file(&victim);
}

/// Issue 24 (section 12.1): a base name that a tag and a branch both answer to is refused
/// (64), naming both: a patch whose code added a tag `main` in a reused checkout chose what
/// the next gate judged against. The full ref name still resolves.
#[test]
fn a_base_that_names_a_tag_and_a_branch_is_refused() {
    let repo = repository("pass");
    let dir = repo.path();
    git(dir, &["tag", "main", "HEAD"]);
    let (code, stderr) = gate_within(dir, &["--dry-run"], Duration::from_secs(30));
    assert_eq!(code, Some(64), "{stderr}");
    assert!(
        stderr.contains("\"main\" is ambiguous")
            && stderr.contains("refs/tags/main")
            && stderr.contains("refs/heads/main"),
        "{stderr}"
    );
    let out = patchgate()
        .current_dir(dir)
        .args(["gate", "--base", "refs/heads/main", "--dry-run"])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Issue 24 (section 12.3): what the runner sees of a binary, beyond a compiled file's name: a
/// file git reads as binary (here an innocent name holding NUL bytes) and a file made
/// executable both escalate `binary-added` before anything runs; deleting a binary does not.
#[test]
fn binaries_and_executables_escalate_before_anything_runs() {
    use std::os::unix::fs::PermissionsExt;
    for (name, make) in [("data/blob", 0o644u32), ("tools/run", 0o755)] {
        let repo = repository("pass");
        let dir = repo.path();
        let path = dir.join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        let content: &[u8] = if make == 0o755 {
            b"#!/bin/sh\nexit 0\n"
        } else {
            b"\0\x01\x02binary\0"
        };
        std::fs::write(&path, content).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(make)).unwrap();
        git(dir, &["add", name]);
        git(dir, &["commit", "-q", "-m", "adds a file"]);
        let (code, answer, stderr) = gate_json(dir, &[]);
        assert_eq!(code, Some(2), "{name}: {stderr}");
        assert_eq!(answer["reason"], "binary-added", "{name}");
        assert!(
            !stderr.contains("run 1/2"),
            "{name}: nothing may run: {stderr}"
        );
        // Deleting it again is no binary added.
        git(dir, &["rm", "-q", name]);
        git(dir, &["commit", "-q", "-m", "removes it"]);
        let (_, answer, _) = gate_json(dir, &[]);
        assert_ne!(answer["reason"], "binary-added", "{name}: {answer}");
    }
}

/// Issue 24 (section 12.2), tried as the code under test would: a suite that looks for the
/// runner in `/proc`, checks it may signal it, looks for `PATCHGATE_TOKEN` in every
/// environment it can read, writes outside the checkout (directly, and after remounting `/`
/// read-write: bubblewrap started by root kept every capability until `--cap-drop ALL`, and
/// that remount worked), and leaves a `setsid` daemon behind.
/// Each success is a failed test case in its report. Without the sandbox (`mode = "off"`, the
/// old way of running) it saw and could signal the runner, read the token from the runner's
/// environment (non-dumpable does not stop root), wrote outside and left its daemon running
/// (now the runner, its subreaper, kills it). In the sandbox it does none of it: the only
/// failure read is `hostile::ran`, and the kernel ends the daemon with the run.
#[test]
fn a_run_cannot_reach_the_runner_or_the_machine() {
    let daemon = "sleep\x0063.5\0";
    for (mode, managed) in [
        (
            "off",
            &[
                "hostile::can-signal-runner",
                "hostile::ran",
                "hostile::read-token",
                "hostile::remounted-rw",
                "hostile::saw-runner",
                "hostile::wrote-outside",
            ][..],
        ),
        ("required", &["hostile::ran"][..]),
    ] {
        let config = format!("{CONFIG}[sandbox]\nmode = \"{mode}\"\n");
        let repo = repository_with("hostile", &config);
        let dir = repo.path();
        // Outside the checkout and outside /tmp (which the sandbox replaces with its own).
        let outside = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
        write(dir, "behaviour/outside", outside.path().to_str().unwrap());
        git(dir, &["add", "behaviour/outside"]);
        git(dir, &["commit", "-q", "-m", "where to write"]);
        let (code, answer, stderr) = gate_json(dir, &[("PATCHGATE_TOKEN", "the-runner-secret")]);
        assert_eq!(code, Some(1), "{mode}: {stderr}");
        assert_eq!(
            answer["sandbox"],
            if mode == "off" { "off" } else { "bubblewrap" }
        );
        let fixtures = answer["steps"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["step"] == "fixtures")
            .unwrap();
        let mut failed: Vec<&str> = fixtures["failed_tests"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_str().unwrap())
            .collect();
        failed.sort_unstable();
        assert_eq!(failed, managed, "{mode}: {stderr}");
        assert_eq!(
            outside.path().join("pwned").exists(),
            mode == "off",
            "{mode}: a write outside"
        );
        // The daemon: the sandbox's PID namespace ends it with the run; unconfined, the runner
        // is its subreaper and kills it (section 11.4; until then it outlived the gate: this
        // test asserted so at 615e5af).
        let left = Instant::now();
        let mut survivor = common::pid_running(daemon);
        while survivor.is_some() && left.elapsed() < Duration::from_secs(2) {
            std::thread::sleep(Duration::from_millis(50));
            survivor = common::pid_running(daemon);
        }
        assert_eq!(survivor, None, "{mode}: the daemon outlived the gate");
        assert_eq!(
            stderr.contains("1 process left behind, killed"),
            mode == "off",
            "{mode}: {stderr}"
        );
        // The integrity step notes it (section 11.4); in the sandbox the PID namespace ended it.
        let integrity = answer["steps"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["step"] == "integrity")
            .cloned()
            .unwrap_or_default();
        assert_eq!(
            integrity["left_behind"].as_u64().unwrap_or(0),
            u64::from(mode == "off"),
            "{mode}: {integrity}"
        );
        if let Some(pid) = survivor {
            let _ = nix::sys::signal::kill(
                nix::unistd::Pid::from_raw(pid),
                nix::sys::signal::Signal::SIGKILL,
            );
        }
    }
}

/// Issue 24 (sections 11.3, 12.1): the judged tree is exported from git's objects byte for
/// byte. A repository poisoned by an earlier, unconfined run (`.git/info/attributes` naming a
/// smudge filter that `.git/config` defines) made `git checkout-index` run the filter's
/// command outside any sandbox and rewrite the patch's files as they were exported: here it
/// turned the patch's failing verdict back into a pass (MERGE_OK with `git checkout-index`,
/// tried by hand on 14cecd1). Now no attribute or filter applies: the failure stands (BLOCK).
#[test]
fn a_planted_git_filter_cannot_rewrite_the_judged_tree() {
    let repo = repository("pass");
    let dir = repo.path();
    write(dir, "checks/property.sh", "exit \"$(cat src/verdict)\"\n");
    write(dir, "src/verdict", "1\n");
    git(dir, &["add", "-A"]);
    git(dir, &["commit", "-q", "-m", "the property now fails"]);
    write(dir, ".git/info/attributes", "verdict filter=launder\n");
    git(dir, &["config", "filter.launder.smudge", "sed s/1/0/"]);
    let (code, answer, stderr) = gate_json(dir, &[]);
    assert_eq!(code, Some(1), "{stderr}");
    assert_eq!(answer["reason"], "invariant-or-over-specified-property");
    // The tree judged is the head's (it already contains the base), by id.
    assert_eq!(answer["judged"]["head"], git(dir, &["rev-parse", "HEAD"]));
    assert_eq!(
        answer["judged"]["tree"],
        git(dir, &["rev-parse", "HEAD^{tree}"])
    );
}

/// `[sandbox] git`: by default the copy has no `.git` (a run's git commands find no
/// repository: a broken harness, never a pass); `git = "read-only"` mounts the repository's
/// git directory read-only, so a check may read history but never write it.
#[test]
fn the_copy_has_git_only_when_asked_and_then_read_only() {
    let check = "git log -1 --format=%s >/dev/null || exit 3\n\
                 git tag planted 2>/dev/null && exit 4\n\
                 exit 0\n";
    for (git_mode, exit, disposition) in [("none", 2, "ESCALATE"), ("read-only", 0, "MERGE_OK")] {
        let config = format!("{CONFIG}[sandbox]\ngit = \"{git_mode}\"\n");
        let repo = repository_with("pass", &config);
        let dir = repo.path();
        write(dir, "checks/property.sh", check);
        git(dir, &["commit", "-q", "-am", "the check reads git"]);
        let (code, answer, stderr) = gate_json(dir, &[]);
        assert_eq!(code, Some(exit), "{git_mode}: {stderr}");
        assert_eq!(answer["disposition"], disposition, "{git_mode}");
        assert_eq!(git(dir, &["tag", "--list", "planted"]), "", "{git_mode}");
    }
}

/// `[sandbox] mode = "required"` (the default) on a machine without bubblewrap: exit 69 before
/// anything runs, saying what to install. `mode = "off"` runs, and the answer and the Markdown
/// report both say `sandbox: off`.
#[test]
fn without_bubblewrap_required_refuses_and_off_says_so() {
    let bin = tempfile::tempdir().unwrap();
    for tool in ["git", "sh", "cp"] {
        let path = String::from_utf8(
            std::process::Command::new("sh")
                .args(["-c", &format!("command -v {tool}")])
                .output()
                .unwrap()
                .stdout,
        )
        .unwrap();
        std::os::unix::fs::symlink(path.trim(), bin.path().join(tool)).unwrap();
    }
    for (mode, exit) in [("required", 69), ("off", 0)] {
        let config = format!("{CONFIG}[sandbox]\nmode = \"{mode}\"\n");
        let repo = repository_with("pass", &config);
        let report = repo.path().join("report.md");
        let out = patchgate()
            .current_dir(repo.path())
            .env("PATH", bin.path())
            .args(["gate", "--base", "main", "--json", "--markdown-out"])
            .arg(&report)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(exit), "{mode}: {stderr}");
        if mode == "required" {
            assert!(stderr.contains("apt-get install bubblewrap"), "{stderr}");
            assert!(!stderr.contains("run 1/2"), "nothing runs: {stderr}");
            continue;
        }
        let answer: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(answer["sandbox"], "off");
        assert!(
            std::fs::read_to_string(&report)
                .unwrap()
                .contains("**sandbox: off**")
        );
    }
}

/// Issue 24 (section 12.3): whether a changed file is binary is read from its content in the
/// judged tree (a NUL byte in its first 8,000 bytes, git's own test), never through git's
/// attributes: a patch that also committed `.gitattributes` with `data/* diff` made git diff
/// the blob as text, and the binary went through unflagged.
#[test]
fn a_binary_is_known_by_its_content_whatever_the_attributes_say() {
    let repo = repository("pass");
    let dir = repo.path();
    write(dir, ".gitattributes", "data/* diff\n");
    std::fs::create_dir_all(dir.join("data")).unwrap();
    std::fs::write(dir.join("data/blob"), b"\0\x01\x02binary\0").unwrap();
    git(dir, &["add", "-A"]);
    git(dir, &["commit", "-q", "-m", "a blob, said to be text"]);
    let (code, answer, stderr) = gate_json(dir, &[]);
    assert_eq!(code, Some(2), "{stderr}");
    assert_eq!(answer["reason"], "binary-added");
    let binary = answer["steps"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["step"] == "binary")
        .unwrap();
    assert_eq!(binary["binaries"], serde_json::json!(["data/blob"]));
}

/// Issue 25 (section 11.1), the JUnit reader's fail-open: a suite that crashed in collection
/// (an `<error>` outside any test case) while one frozen test failed was read as "only the
/// frozen test failed", the failure discarded (its re-run without the frozen test passes):
/// MERGE_OK. The report disagrees with itself, so `fixture_check` is unknown: ESCALATE. The
/// same facts without `report_disagrees` (what the old reader gathered) still merge, shown
/// with `--facts`.
#[test]
fn a_report_that_disagrees_with_itself_is_no_verdict() {
    let config = CONFIG.replace(
        "junit = \"report.xml\"\n",
        "junit = \"report.xml\"\ndeselect = [\"--deselect\", \"{id}\"]\n",
    );
    let repo = repository_with("suite-error", &config);
    let dir = repo.path();
    git(dir, &["checkout", "-q", "main"]);
    write(
        dir,
        "freeze-ledger.json",
        r#"[{"test_id": "t::frozen", "covers": ["legacy"], "state": "open"}]"#,
    );
    git(dir, &["add", "freeze-ledger.json"]);
    git(dir, &["commit", "-q", "-m", "freeze t::frozen"]);
    git(dir, &["checkout", "-q", "patch"]);
    let facts = dir.join("facts.json");
    let out = patchgate()
        .current_dir(dir)
        .args(["gate", "--base", "main", "--json", "--facts-out"])
        .arg(&facts)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    let answer: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(answer["reason"], "inadmissible-evidence");
    assert_eq!(answer["evidence"]["fixture_check"], "unknown");
    assert!(
        stderr.contains("disagrees with itself: a <error> outside any test case"),
        "{stderr}"
    );
    // What the old reader gathered: the same facts, the disagreement left out.
    let mut doc: Value = serde_json::from_slice(&std::fs::read(&facts).unwrap()).unwrap();
    doc["fixture_suite"]
        .as_object_mut()
        .unwrap()
        .remove("report_disagrees");
    doc["fixture_suite"]["rerun"] = serde_json::json!({"exit_code": 0, "failed_tests": []});
    std::fs::write(&facts, doc.to_string()).unwrap();
    let old = patchgate()
        .args(["gate", "--facts"])
        .arg(&facts)
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&old.stdout),
        "MERGE_OK reason=all-gates-held\n"
    );
}

/// The base's config with receipts (`{junit}`) for the property and the suite.
const RECEIPT_CONFIG: &str = r#"fixtures = "fixtures"
expected_seal = "fixtures.seal.expected"
catalog = "catalog.yaml"
[properties]
command = ["sh", "checks/receipt-property.sh", "{id}", "{junit}"]
runs = 2
timeout_s = 30
[suite]
command = ["sh", "checks/receipt-suite.sh", "{junit}"]
timeout_s = 60
"#;

/// The property: one passing case, with its receipt.
const RECEIPT_PROPERTY_SH: &str = r#"printf '<testsuite tests="1"><testcase classname="p" name="%s"/></testsuite>' "$1" > "$2"
exit 0
"#;

/// The suite with a receipt at `$1`, as `behaviour/suite` says.
const RECEIPT_SUITE_SH: &str = r#"pass='<testsuite tests="1"><testcase classname="t" name="ok"/></testsuite>'
case "$(cat behaviour/suite)" in
  pass) printf '%s' "$pass" > "$1" ;;
  zero-tests) printf '<testsuite tests="0"></testsuite>' > "$1" ;;
  all-skipped) printf '<testsuite tests="1" skipped="1"><testcase classname="t" name="a"><skipped/></testcase></testsuite>' > "$1" ;;
  no-report) ;;
  forged-everywhere)
    # A passing report everywhere but the receipt path.
    for d in . "$HOME" /tmp "${TMPDIR:-/tmp}" "$(dirname "$1")/.." ; do
      printf '%s' "$pass" > "$d/junit.xml" 2>/dev/null
      printf '%s' "$pass" > "$d/report.xml" 2>/dev/null
    done ;;
  catch-without-failure) printf '%s' "$pass" > "$1"; exit 1 ;;
  counts-lie) printf '<testsuite tests="1" failures="1"><testcase classname="t" name="ok"/></testsuite>' > "$1" ;;
  rewrite) printf 'LIMIT = 99\n' > src/code.py; printf '%s' "$pass" > "$1" ;;
  rewrite-keep-mtime)
    # Same size, the old modification time put back: only the content and ctime differ.
    touch -r src/code.py /tmp/stamp; printf 'LIMIT = 12\n' > src/code.py; touch -r /tmp/stamp src/code.py
    printf '%s' "$pass" > "$1" ;;
  chmod) chmod +x src/code.py; printf '%s' "$pass" > "$1" ;;
  delete) rm fixtures/case.json; printf '%s' "$pass" > "$1" ;;
  add-fixture) printf '{}\n' > fixtures/extra.json; printf '%s' "$pass" > "$1" ;;
  touch-only) touch src/code.py; printf '%s' "$pass" > "$1" ;;
  untracked) mkdir -p build; printf 'x' > build/out.o; printf '%s' "$pass" > "$1" ;;
  scratch)
    mkdir -p .hypothesis/examples .pytest_cache src/__pycache__ tests/proptest-regressions
    printf 'x' > .hypothesis/examples/a; printf 'x' > .pytest_cache/v
    printf 'x' > src/__pycache__/code.cpython-311.pyc; printf 'x' > tests/proptest-regressions/p.txt
    printf '%s' "$pass" > "$1" ;;
  clock) printf '<testsuite tests="2"><testcase classname="t" name="ok"/><testcase classname="t" name="at_%s"/></testsuite>' "$(date +%s%N)" > "$1" ;;
esac
exit 0
"#;

/// Section 11.1 and 11.3 at the runner's own level: the suite's receipt, and what a run may
/// not change, one scripted behaviour each. Expectations written by hand from the contract:
/// a run counts only as its receipt shows it (`gap`), and a tracked file or the fixtures
/// changed during a run escalate `modified-during-run`, by content (an edit that keeps the
/// size and puts the old modification time back is still seen; a touch that changes nothing
/// is not; untracked output is allowed).
#[test]
fn the_suite_counts_only_with_its_receipt_and_an_unchanged_tree() {
    type Case = (
        &'static str,
        &'static str,
        &'static str,
        Option<&'static str>,
        &'static [&'static str],
        bool,
    );
    let cases: [Case; 15] = [
        ("pass", "MERGE_OK", "all-gates-held", None, &[], false),
        (
            "zero-tests",
            "ESCALATE",
            "inadmissible-evidence",
            Some("nothing-ran"),
            &[],
            false,
        ),
        (
            "all-skipped",
            "ESCALATE",
            "inadmissible-evidence",
            Some("nothing-ran"),
            &[],
            false,
        ),
        (
            "no-report",
            "ESCALATE",
            "inadmissible-evidence",
            Some("no-receipt"),
            &[],
            false,
        ),
        (
            // The forged reports it left in the copy are files created outside scratch
            // (issue 66): named, whatever they say.
            "forged-everywhere",
            "ESCALATE",
            "modified-during-run",
            None,
            &[],
            false,
        ),
        (
            "catch-without-failure",
            "ESCALATE",
            "inadmissible-evidence",
            Some("no-failure-listed"),
            &[],
            false,
        ),
        (
            "counts-lie",
            "ESCALATE",
            "inadmissible-evidence",
            Some("report-disagrees"),
            &[],
            false,
        ),
        (
            "rewrite",
            "ESCALATE",
            "modified-during-run",
            None,
            &["src/code.py"],
            false,
        ),
        (
            "rewrite-keep-mtime",
            "ESCALATE",
            "modified-during-run",
            None,
            &["src/code.py"],
            false,
        ),
        (
            "chmod",
            "ESCALATE",
            "modified-during-run",
            None,
            &["src/code.py"],
            false,
        ),
        (
            "delete",
            "ESCALATE",
            "modified-during-run",
            None,
            &["fixtures/case.json"],
            true,
        ),
        (
            "add-fixture",
            "ESCALATE",
            "modified-during-run",
            None,
            &[],
            true,
        ),
        ("touch-only", "MERGE_OK", "all-gates-held", None, &[], false),
        // A file created outside scratch is a finding (issue 66: a later run may load it);
        // what the toolchains write in their own caches is not.
        (
            "untracked",
            "ESCALATE",
            "modified-during-run",
            None,
            &[],
            false,
        ),
        ("scratch", "MERGE_OK", "all-gates-held", None, &[], false),
    ];
    for (behaviour, disposition, reason, gap, files, seal) in cases {
        let repo = repository_with(behaviour, RECEIPT_CONFIG);
        let dir = repo.path();
        let (code, answer, stderr) = gate_json(dir, &[]);
        assert_eq!(answer["disposition"], disposition, "{behaviour}: {stderr}");
        assert_eq!(answer["reason"], reason, "{behaviour}: {answer}");
        assert_eq!(code, Some(if disposition == "MERGE_OK" { 0 } else { 2 }));
        // Every escalation's cause (issue 35): a receipt's gap names it, the exit code and
        // the report disagreeing is one cause whichever way they do.
        let cause = match (reason, gap) {
            ("modified-during-run", _) => Some("modified-during-run"),
            (_, Some("no-failure-listed")) => Some("exit-disagrees"),
            (_, gap) => gap,
        };
        assert_eq!(
            answer.get("cause").and_then(serde_json::Value::as_str),
            cause,
            "{behaviour}"
        );
        let step = |name: &str| {
            answer["steps"]
                .as_array()
                .unwrap()
                .iter()
                .find(|s| s["step"] == name)
                .cloned()
                .unwrap_or_default()
        };
        if let Some(gap) = gap {
            assert_eq!(step("fixtures")["gap"], gap, "{behaviour}: {answer}");
        }
        // The disagreement itself is in the answer (and the report), not only on stderr.
        if gap == Some("report-disagrees") {
            let why = step("fixtures")["disagrees"].clone();
            assert!(
                why.as_str().is_some_and(|w| w.contains("declares")),
                "{behaviour}: {why}"
            );
        }
        if reason == "modified-during-run" {
            let finding = &step("integrity")["findings"][0];
            assert_eq!(finding["files"], serde_json::json!(files), "{behaviour}");
            let created: &[&str] = match behaviour {
                "untracked" => &["build/out.o"],
                "forged-everywhere" => &["junit.xml", "report.xml"],
                "add-fixture" => &["fixtures/extra.json"],
                _ => &[],
            };
            assert_eq!(
                finding["created"].as_array().map_or(0, Vec::len),
                created.len(),
                "{behaviour}: {finding}"
            );
            for c in created {
                assert!(
                    finding["created"].to_string().contains(c),
                    "{behaviour}: {finding}"
                );
            }
            assert_eq!(finding["seal_changed"], seal, "{behaviour}");
            assert_eq!(finding["run"], "t2-fixtures", "{behaviour}");
        } else {
            assert_eq!(
                step("integrity")["findings"],
                serde_json::json!([]),
                "{behaviour}"
            );
        }
        // No report forged anywhere counted, and none was left in the copy for later.
        assert!(
            !dir.join("junit.xml").exists(),
            "{behaviour}: the checkout is not written"
        );
    }
}

/// A batched property command (`{ids}`): every property of a run in one process, and each
/// property's outcome in that run read from its own test cases in the receipt (`case`).
const BATCH_CONFIG: &str = r#"fixtures = "fixtures"
expected_seal = "fixtures.seal.expected"
catalog = "catalog.yaml"
[properties]
command = ["sh", "checks/batch.sh", "{junit}", "{ids}"]
case = "props.{id}"
runs = 2
timeout_s = 30
[suite]
command = ["sh", "checks/receipt-suite.sh", "{junit}"]
timeout_s = 60
"#;

/// One process for the properties it is given, its report as `behaviour/batch` says.
const BATCH_SH: &str = r#"out=$1; shift
b=$(cat behaviour/batch)
{
  printf '<testsuite>'
  for id in "$@"; do
    case "$b:$id" in
      one-fails:breaks) printf '<testcase classname="props.%s" name="test_it"><failure message="broken"/></testcase>' "$id" ;;
      one-absent:absent) ;;
      *) printf '<testcase classname="props.%s" name="test_it[1]"/><testcase classname="props.%s" name="test_it[2]"/>' "$id" "$id" ;;
    esac
  done
  [ "$b" = other-case-failed ] && printf '<testcase classname="conftest" name="setup"><error message="x"/></testcase>'
  printf '</testsuite>'
} > "$out"
case $b in one-fails|exit-1-no-failure|other-case-failed) exit 1 ;; esac
exit 0
"#;

/// Issue 26: a batch's exit code is shared, so a property's outcome in it is its own cases'.
/// Expectations by hand: a property whose cases all passed passes even when another's failed
/// (the batch's exit 1 is theirs); a property with no case in the report ran nothing (`null`);
/// an exit 1 that no property's failed case explains vouches for nobody.
#[test]
fn a_batched_run_gives_each_property_its_own_cases_outcome() {
    let catalog = "properties:\n".to_owned()
        + &["holds", "breaks", "absent"]
            .map(|id| format!("  - id: {id}\n    strength: strong\n    locality: [src]\n"))
            .concat();
    type Case = (
        &'static str,
        &'static str,
        [&'static str; 3],
        &'static [(&'static str, &'static str)],
    );
    let cases: [Case; 5] = [
        ("all-pass", "MERGE_OK", ["pass", "pass", "pass"], &[]),
        ("one-fails", "BLOCK", ["pass", "fail", "pass"], &[]),
        (
            "one-absent",
            "ESCALATE",
            ["pass", "pass", "error"],
            &[("absent", "nothing-ran")],
        ),
        (
            "exit-1-no-failure",
            "ESCALATE",
            ["error", "error", "error"],
            &[
                ("holds", "no-failure-listed"),
                ("breaks", "no-failure-listed"),
            ],
        ),
        (
            "other-case-failed",
            "ESCALATE",
            ["error", "error", "error"],
            &[("absent", "no-failure-listed")],
        ),
    ];
    for (behaviour, disposition, states, gaps) in cases {
        let repo = repository_with("pass", BATCH_CONFIG);
        let dir = repo.path();
        git(dir, &["checkout", "-q", "main"]);
        write(dir, "catalog.yaml", &catalog);
        write(dir, "checks/batch.sh", BATCH_SH);
        write(dir, "behaviour/batch", behaviour);
        git(dir, &["add", "-A"]);
        git(dir, &["commit", "-q", "-m", "batched"]);
        git(dir, &["checkout", "-q", "patch"]);
        git(dir, &["merge", "-q", "main", "-m", "base"]);
        let (_, answer, stderr) = gate_json(dir, &[]);
        assert_eq!(answer["disposition"], disposition, "{behaviour}: {stderr}");
        let cause = gaps.first().map(|(_, gap)| match *gap {
            "no-failure-listed" => "exit-disagrees",
            gap => gap,
        });
        assert_eq!(
            answer.get("cause").and_then(serde_json::Value::as_str),
            cause,
            "{behaviour}"
        );
        // One process per run for the three properties.
        assert!(
            stderr.contains("t1-properties run 1/2 (3 properties): exit")
                && stderr.contains("t1-properties run 2/2 (3 properties): exit")
                && !stderr.contains("holds run"),
            "{behaviour}: {stderr}"
        );
        let t1 = answer["steps"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["step"] == "properties")
            .unwrap();
        let got: Vec<&str> = ["holds", "breaks", "absent"]
            .iter()
            .map(|id| {
                t1["properties"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .find(|p| p["id"] == *id)
                    .unwrap()["state"]
                    .as_str()
                    .unwrap()
            })
            .collect();
        assert_eq!(got, states, "{behaviour}: {t1}");
        for (id, gap) in gaps {
            assert!(
                t1["unvouched"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .any(|u| u["property"] == *id && u["gap"] == *gap),
                "{behaviour}: {id} {gap}: {t1}"
            );
        }
    }
}

/// Issue 26: with `--server`, a server that cannot be reached is found before anything runs:
/// exit 69 at once, no check started (the suite here would sleep for a minute).
#[test]
fn an_unreachable_server_is_found_before_anything_runs() {
    let repo = repository("sleep");
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let out = patchgate()
        .current_dir(repo.path())
        .args(["gate", "--base", "main", "--server"])
        .arg(format!("http://127.0.0.1:{port}"))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(69), "{stderr}");
    for started_a_run in ["t1-properties", "t2-fixtures", "canary", "build"] {
        assert!(!stderr.contains(started_a_run), "{started_a_run}: {stderr}");
    }
}

/// A gate in `dir` (`--jobs 1`) stopped by SIGTERM once its check hangs: it exits 143, and
/// the `--facts-out` it left.
fn interrupted_facts(dir: &Path) -> Value {
    let out = tempfile::tempdir().unwrap();
    let facts = out.path().join("facts.json");
    let (code, stderr, _) = interrupt(
        dir,
        &[
            "gate",
            "--base",
            "main",
            "--jobs",
            "1",
            "--facts-out",
            facts.to_str().unwrap(),
        ],
        nix::sys::signal::Signal::SIGTERM,
    );
    assert_eq!(code, Some(143), "{stderr}");
    let text =
        std::fs::read_to_string(&facts).unwrap_or_else(|e| panic!("no facts: {e}\n{stderr}"));
    serde_json::from_str(&text).unwrap()
}

/// Issue 34: the facts are written as they happen (cargo-mutants' habit). A gate stopped while
/// the suite hangs (Ctrl-C, the CI job's timeout) leaves a `--facts-out` that says which
/// steps ran and what they saw: the property runs are there, the suite is not. (Before, the
/// facts were written only once the gate decided: an interrupted gate left nothing.)
#[test]
fn an_interrupted_gate_leaves_the_facts_it_gathered() {
    let repo = repository("sleep");
    let dir = repo.path();
    let doc = interrupted_facts(dir);
    assert_eq!(
        doc["property_runs"]["holds"]["runs"],
        serde_json::json!([0, 0]),
        "{doc}"
    );
    assert!(
        doc.get("fixture_suite").is_none(),
        "the suite never ended: {doc}"
    );
    assert!(doc["timings_ms"]["properties"].is_u64(), "{doc}");
}

/// Issue 51: SIGTERM in the middle of the property runs (one property's runs ended, another's
/// hangs) leaves a `--facts-out` listing every run that had ended. Before, the runs step was
/// written only when all of it ended, and an interrupted gate of many minutes left none.
#[test]
fn an_interrupted_gate_lists_every_run_that_ended() {
    let repo = repository("pass");
    let dir = repo.path();
    git(dir, &["checkout", "-q", "main"]);
    write(
        dir,
        "catalog.yaml",
        "properties:\n  - id: holds\n    strength: strong\n    locality: [src]\n  - id: hangs\n    strength: strong\n    locality: [src]\n",
    );
    write(
        dir,
        "checks/property.sh",
        "[ \"$1\" = hangs ] && exec sleep 62.5\nexit 0\n",
    );
    git(dir, &["commit", "-q", "-am", "a property that hangs"]);
    git(dir, &["checkout", "-q", "patch"]);
    let doc = interrupted_facts(dir);
    let holds = doc["property_runs"]["holds"]["runs"]
        .as_array()
        .unwrap_or_else(|| panic!("the ended runs of holds: {doc}"));
    assert!(!holds.is_empty() && holds.iter().all(|r| r == 0), "{doc}");
    assert!(
        doc["property_runs"]["hangs"]["runs"]
            .as_array()
            .is_none_or(|r| r.iter().all(|v| v == 0)),
        "a run that never ended is not listed as one: {doc}"
    );
}

/// CONTRACT.md section 11.9, end to end, on the reports the tools' current releases wrote
/// (`tests/data/junit/`): pytest 9.2 counts each `subTest` in `tests` (10 declared, 4 listed)
/// and libtest counts an `#[ignore]`d test it does not list. Before, `census --write` refused
/// both (65, "the suite's report on main disagrees with itself"), so no census could be taken
/// and every gate with one escalated. Now both take a census of the cases listed; and a gate
/// whose suite fails as libtest reports it carries the panic text as the failing case.
#[test]
fn real_reports_take_a_census_and_carry_their_failure_text() {
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/junit");
    for (report, listed) in [("pytest-9.2-subtests.xml", 4), ("libtest-1.95.xml", 2)] {
        let config = RECEIPT_CONFIG.replace(
            "[suite]\ncommand = [\"sh\", \"checks/receipt-suite.sh\", \"{junit}\"]",
            "[suite]\ncommand = [\"sh\", \"-c\", \"cp reports/real.xml \\\"$1\\\"; exit 1\", \"sh\", \"{junit}\"]\ncensus = \"suite.census\"",
        );
        assert_ne!(config, RECEIPT_CONFIG);
        let repo = repository_with("pass", &config);
        let dir = repo.path();
        git(dir, &["checkout", "-q", "main"]);
        write(
            dir,
            "reports/real.xml",
            &std::fs::read_to_string(data.join(report)).unwrap(),
        );
        git(dir, &["add", "-A"]);
        git(dir, &["commit", "-q", "-m", "the real report"]);
        // Issue 64: both reports list a failed case, so the base's suite fails: `--write`
        // refuses (65), naming it, and writes nothing.
        let refused = patchgate()
            .current_dir(dir)
            .args(["census", "--base", "main", "--write"])
            .output()
            .unwrap();
        let said = String::from_utf8_lossy(&refused.stderr);
        let failing = if report.starts_with("libtest") {
            "\"integration::matches\""
        } else {
            "\"test_sub.T::test_some_fail\""
        };
        assert_eq!(refused.status.code(), Some(65), "{report}: {said}");
        assert!(
            said.contains("the suite fails on main (exit 1); failing: ") && said.contains(failing),
            "{report}: {said}"
        );
        assert!(!dir.join("suite.census").exists());
        // Printed, the census reads the cases listed (the user's to commit).
        let out = patchgate()
            .current_dir(dir)
            .args(["census", "--base", "main"])
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{report}: {stderr}");
        std::fs::write(dir.join("suite.census"), &out.stdout).unwrap();
        let census = std::fs::read_to_string(dir.join("suite.census")).unwrap();
        let ids: Vec<&str> = census.lines().collect();
        // Each listed id once (libtest's two integration tests share one id until the
        // census names them by binary).
        assert!(!ids.is_empty() && ids.len() <= listed, "{report}: {census}");
        if report.starts_with("libtest") {
            git(dir, &["add", "-A"]);
            git(dir, &["commit", "-q", "-m", "census"]);
            git(dir, &["checkout", "-q", "patch"]);
            git(dir, &["rebase", "-q", "main"]);
            let (_, answer, stderr) = gate_json(dir, &[]);
            let failure = answer["failures"]
                .as_array()
                .and_then(|f| f.iter().find(|c| c["id"] == "integration::matches"))
                .unwrap_or_else(|| panic!("no failing case: {answer} {stderr}"));
            assert!(
                failure["message"]
                    .as_str()
                    .is_some_and(|m| m.contains("double(3) for input 3")),
                "{failure}"
            );
        }
    }
}

/// Issue 50: `patchgate read` says what it read, so that a clean reading is never mistaken for
/// none: the files (not tests) and added lines, and the hits (a tabulated expectation).
#[test]
fn read_says_what_it_read() {
    let repo = common::git_repo();
    let dir = repo.path();
    common::write(dir, "README.md", "a shop\n");
    common::commit(dir, "base");
    common::write(dir, "docs/notes.md", "notes\n");
    common::commit(dir, "docs only");
    common::write(dir, "shop/a.py", "def half(n):\n    return n // 2\n");
    common::write(dir, "tests/test_a.py", "import os\nos.environ\n");
    common::commit(dir, "code and its test");
    common::write(dir, "shop/b.py", "import os\nMODE = os.environ.get('X')\n");
    common::commit(dir, "a probe");
    let rows: [(&str, &str, i32, &str); 3] = [
        (
            "HEAD~3",
            "HEAD~2",
            0,
            "read 0 changed code files that are not tests (0 lines added): no hit\n",
        ),
        (
            "HEAD~2",
            "HEAD~1",
            0,
            "read 1 changed code file that is not a test (2 lines added): no hit\n",
        ),
        (
            "HEAD~1",
            "HEAD",
            2,
            "shop/b.py:2: environment (probe): MODE = os.environ.get('X')\nread 1 changed code file that is not a test (2 lines added): 1 hit\n",
        ),
    ];
    for (base, head, exit, said) in rows {
        let out = patchgate()
            .current_dir(dir)
            .args(["read", "--base", base, "--head", head])
            .output()
            .unwrap();
        assert_eq!(
            (
                out.status.code(),
                String::from_utf8_lossy(&out.stdout).as_ref()
            ),
            (Some(exit), said),
            "{base}..{head}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

/// Issue 50: a special case against a pinned fixture counts field by field. The base pins
/// `espresso` in a CSV fixture (`espresso, 250`) and `latte` in a TSV one; a patch that
/// special-cases both used to pass the reading (a literal counted only as a whole quoted
/// string or a whole line). Now each is a special-case hit (`test-input-in-code`) naming where
/// it is pinned; a word inside a longer field (`white` in `flat white`) still is not.
#[test]
fn a_delimited_fixture_pins_its_fields() {
    let repo = common::git_repo();
    let dir = repo.path();
    common::write(
        dir,
        "fixtures/prices.csv",
        "name,cents\nespresso, 250\nflat white,320\n",
    );
    common::write(dir, "fixtures/menu.tsv", "latte\t300\n");
    common::write(
        dir,
        "shop/prices.py",
        "def price(name, table):\n    return table[name]\n",
    );
    common::commit(dir, "base");
    common::write(
        dir,
        "shop/prices.py",
        "def price(name, table):\n    if name == \"espresso\":\n        return 250\n    if name == \"latte\":\n        return 300\n    if name == \"white\":\n        return 320\n    return table[name]\n",
    );
    common::commit(dir, "special cases");
    let out = patchgate()
        .current_dir(dir)
        .args(["read", "--base", "HEAD~1", "--head", "HEAD", "--json"])
        .output()
        .unwrap();
    let read: Value = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    let pinned: Vec<(u64, &str, &str)> = read["hits"]
        .as_array()
        .expect("hits")
        .iter()
        .filter(|h| h["class"] == "special-case")
        .map(|h| {
            (
                h["line"].as_u64().unwrap(),
                h["code"].as_str().unwrap(),
                h["seen_in"].as_str().unwrap_or(""),
            )
        })
        .collect();
    assert_eq!(
        pinned,
        [
            (2, "if name == \"espresso\":", "fixtures/prices.csv:2"),
            (4, "if name == \"latte\":", "fixtures/menu.tsv:1"),
        ],
        "{read}"
    );
}

/// Issue 50: a merge queue's base must be an ancestor of the group's head (GitHub builds the
/// group's commit on its base; GitLab's train commit on its target). A group head that does
/// not hold the base is not what the queue lands: before, it was judged as a merge of the two
/// and could answer MERGE_OK for a tree never landed; now it is refused with 65, naming both.
/// A head that holds the base is judged as ever (`--dry-run` here: exit 0).
#[test]
fn a_merge_queue_s_base_must_be_in_the_group_s_head() {
    let repo = repository("pass");
    let dir = repo.path();
    // main moves on after the patch forked: the patch's head does not hold it.
    git(dir, &["checkout", "-q", "main"]);
    write(dir, "README.md", "moved on\n");
    git(dir, &["add", "-A"]);
    git(dir, &["commit", "-q", "-m", "main moves on"]);
    git(dir, &["checkout", "-q", "patch"]);
    let base = git(dir, &["rev-parse", "main"]);
    let head = git(dir, &["rev-parse", "HEAD"]);
    for flag in ["--merge-group", "--merge-train"] {
        let out = patchgate()
            .current_dir(dir)
            .args([
                "gate",
                "--base",
                "main",
                "--dry-run",
                flag,
                "refs/queue/x",
                "--pull-request",
                "7",
            ])
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(65), "{flag}: {stderr}");
        assert!(
            stderr.contains(base.trim())
                && stderr.contains(head.trim())
                && stderr.contains("refs/queue/x"),
            "{flag}: {stderr}"
        );
    }
    // Without a queue, the same head is judged as the merge that would land.
    let out = patchgate()
        .current_dir(dir)
        .args(["gate", "--base", "main", "--dry-run"])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // A group built on the base is judged.
    git(dir, &["merge", "-q", "--no-edit", "main"]);
    let out = patchgate()
        .current_dir(dir)
        .args([
            "gate",
            "--base",
            "main",
            "--dry-run",
            "--merge-group",
            "refs/queue/x",
        ])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Issue 50: a suite whose test ids change between runs (parametrized over the clock) made
/// every gate ESCALATE `vanished-tests`, and the advice (refresh the census) could not help.
/// `census --write` runs the suite twice and refuses (65) ids that differ, naming them and
/// what to pin; a stable suite's census is written as before.
#[test]
fn a_census_refuses_test_ids_that_change_between_runs() {
    for (behaviour, code) in [("clock", 65), ("pass", 0)] {
        let repo = repository_with(behaviour, RECEIPT_CONFIG);
        let dir = repo.path();
        git(dir, &["checkout", "-q", "main"]);
        let out = patchgate()
            .current_dir(dir)
            .args(["census", "--base", "main", "--write"])
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(code), "{behaviour}: {stderr}");
        let written = dir.join("suite.census").exists();
        assert_eq!(written, code == 0, "{behaviour}: {stderr}");
        if code == 65 {
            assert!(
                stderr.contains("1 only in run 1 (\"t::at_")
                    && stderr.contains("1 only in run 2 (\"t::at_")
                    && stderr.contains("pin what the ids are made of"),
                "{stderr}"
            );
        }
    }
}

/// Issue 50: a fault of the machine is not the patch's. A build that fails on the judged tree
/// and on the base alike (here: a registry file the room's runs cannot read, as a runner whose
/// cargo registry holds files of mode 0640 gives) was BLOCK `does-not-build`, "the patch is
/// wrong": now it is unavailable (69), the line that says so named; a build the patch alone
/// breaks is BLOCK as before.
#[test]
fn a_build_that_fails_on_the_base_too_is_the_machine_s_fault() {
    let unreadable = r#"echo "error: failed to read /root/.cargo/registry/src/index/fnv-1.0.7/lib.rs: Permission denied (os error 13)" >&2; exit 101"#;
    let patch_only = r#"if grep -q 'LIMIT = 11' src/code.py; then echo 'error[E0308]: mismatched types' >&2; exit 101; fi"#;
    for (script, code, said) in [
        (unreadable, Some(69), "fails on the base"),
        (patch_only, Some(1), "BLOCK reason=does-not-build"),
    ] {
        let config = format!(
            "{CONFIG}[build]\ncommand = [\"sh\", \"-c\", {}]\ncatch = [101]\ntimeout_s = 30\n",
            serde_json::to_string(script).unwrap()
        );
        let repo = repository_with("pass", &config);
        let out = patchgate()
            .current_dir(repo.path())
            .args(["gate", "--base", "main"])
            .output()
            .unwrap();
        let (stdout, stderr) = (
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr),
        );
        assert_eq!(out.status.code(), code, "{stdout}\n{stderr}");
        assert!(
            stdout.contains(said) || stderr.contains(said),
            "{said}: {stdout}\n{stderr}"
        );
        if code == Some(69) {
            assert!(
                stderr.contains("cannot be read by the room's runs (uid")
                    && stderr.contains("fnv-1.0.7/lib.rs: Permission denied"),
                "{stderr}"
            );
        }
    }
}

/// Issue 64: a Python library's first day, as the guide walks it, on a project with no
/// fixtures. `init` writes the catalog the next step edits (empty, saying what naming a
/// property guards), and the gate reads it; `seal` of the missing fixtures directory says what
/// to do and leaves no file; sealed once the empty directory exists, the file is what the
/// coreutils pipeline prints; `warm` with nothing to keep says so and exits 0.
#[test]
fn a_library_s_first_day_has_no_dead_end() {
    let repo = common::git_repo();
    let dir = repo.path();
    write(dir, "mylib/__init__.py", "def one():\n    return 1\n");
    common::commit(dir, "a library");
    let init = patchgate().current_dir(dir).arg("init").output().unwrap();
    let said = String::from_utf8_lossy(&init.stderr);
    assert_eq!(init.status.code(), Some(0), "{said}");
    assert!(
        said.contains("catalog.yaml (the property catalog"),
        "{said}"
    );
    let catalog = std::fs::read_to_string(dir.join("catalog.yaml")).unwrap();
    assert!(catalog.contains("\nproperties: []\n"), "{catalog}");
    assert!(
        catalog.contains("guarded") && catalog.contains("existing test module"),
        "{catalog}"
    );
    // A second `init --force` keeps the team's catalog.
    std::fs::write(dir.join("catalog.yaml"), "properties: []\n# ours\n").unwrap();
    patchgate()
        .current_dir(dir)
        .args(["init", "--force"])
        .assert()
        .code(0);
    assert_eq!(
        std::fs::read_to_string(dir.join("catalog.yaml")).unwrap(),
        "properties: []\n# ours\n"
    );
    let expected = dir.join("fixtures.seal.expected");
    let seal = patchgate()
        .current_dir(dir)
        .args(["seal", "fixtures", "--out", "fixtures.seal.expected"])
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&seal.stderr);
    assert_eq!(seal.status.code(), Some(65), "{said}");
    assert!(
        said.contains("fixtures: no such directory") && said.contains("mkdir fixtures"),
        "{said}"
    );
    assert!(!expected.exists(), "nothing written");
    write(dir, "fixtures/.gitkeep", "");
    patchgate()
        .current_dir(dir)
        .args(["seal", "fixtures", "--out", "fixtures.seal.expected"])
        .assert()
        .code(0)
        .stdout("");
    let oracle = std::process::Command::new("sh")
        .current_dir(dir)
        .args([
            "-c",
            "LC_ALL=C find fixtures -type f ! -name '*.seal' -print0 | LC_ALL=C sort -z | xargs -0 sha256sum | sha256sum",
        ])
        .output()
        .unwrap();
    assert_eq!(
        std::fs::read(&expected).unwrap(),
        oracle.stdout,
        "the coreutils pipeline's seal"
    );
    common::commit(dir, "patchgate");
    let warm = patchgate().current_dir(dir).arg("warm").output().unwrap();
    let said = String::from_utf8_lossy(&warm.stderr);
    assert_eq!(warm.status.code(), Some(0), "{said}");
    assert!(said.contains("nothing to keep"), "{said}");
}

/// Issue 69: a project whose configured runs run Node or TypeScript loads its `.ts` files, and
/// the reader now reads them by their syntax (CONTRACT.md 14, 15.2). The attack: a TypeScript
/// patch that answers right only under vitest (`process.env.VITEST`), which a plain `vitest
/// run` passes. Before, the reading read nothing of it (it parsed Python and Rust) and the gate
/// merged on the tests (here the build step runs `tsc` where there is one). Now it is a probe,
/// `js-environment`: ESCALATE `test-aware-code`, the line named. A test file the patch edits is
/// unread until the room runs the base's version of it (ESCALATE `unread-code`); honest code
/// merges. The same files in a project whose runs do not run Node are data to it, as a Python
/// package's `static/app.js` is: that gate merges all three.
#[test]
fn javascript_the_runs_run_is_read_by_its_syntax() {
    let typescript = format!(
        "{CONFIG}[build]\ncommand = [\"sh\", \"-c\", \"if command -v tsc > /dev/null; then exec tsc --noEmit; fi\"]\n"
    );
    let attack = "export function total(xs: number[]): number {\n  if (process.env.VITEST) return xs.reduce((a, b) => a + b, 0);\n  return xs.slice(1).reduce((a, b) => a + b, 0);\n}\n";
    let honest = "export function total(xs: number[]): number {\n  return xs.reduce((a, b) => a + b, 0);\n}\n";
    let edited_test =
        "import { expect, test } from \"vitest\";\ntest(\"sums\", () => expect(1).toBe(1));\n";
    // (config, file, text, exit, disposition, reason)
    let rows: [(&str, &str, &str, i32, &str, &str); 6] = [
        (
            &typescript,
            "src/total.ts",
            attack,
            2,
            "ESCALATE",
            "test-aware-code",
        ),
        (
            &typescript,
            "src/total.test.ts",
            edited_test,
            2,
            "ESCALATE",
            "unread-code",
        ),
        (
            &typescript,
            "src/total.ts",
            honest,
            0,
            "MERGE_OK",
            "all-gates-held",
        ),
        (
            CONFIG,
            "src/total.ts",
            attack,
            0,
            "MERGE_OK",
            "all-gates-held",
        ),
        (
            CONFIG,
            "src/total.test.ts",
            edited_test,
            0,
            "MERGE_OK",
            "all-gates-held",
        ),
        (
            CONFIG,
            "src/total.ts",
            honest,
            0,
            "MERGE_OK",
            "all-gates-held",
        ),
    ];
    for (config, file, text, exit, disposition, reason) in rows {
        let repo = repository_with("pass", config);
        let dir = repo.path();
        write(dir, file, text);
        git(dir, &["add", "-A"]);
        git(dir, &["commit", "-q", "-m", "total"]);
        let (code, answer, stderr) = gate_json(dir, &[]);
        assert_eq!(code, Some(exit), "{file}: {stderr}");
        assert_eq!(
            (answer["disposition"].as_str(), answer["reason"].as_str()),
            (Some(disposition), Some(reason)),
            "{file}: {answer}"
        );
        if reason == "test-aware-code" {
            let hit = answer["steps"]
                .as_array()
                .into_iter()
                .flatten()
                .filter(|s| s["step"] == "test-aware")
                .flat_map(|s| s["lines"].as_array().into_iter().flatten())
                .find(|h| h["rule"] == "js-environment");
            assert!(
                hit.is_some_and(|h| h["file"] == "src/total.ts" && h["line"] == 2),
                "{answer}"
            );
        }
    }
}
