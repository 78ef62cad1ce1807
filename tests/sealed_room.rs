//! Issue 36 (CONTRACT.md section 13): the sealed room, tried by attack. Each attack is a shell
//! script the patch's suite runs; each success is reported as one failed test case, so the
//! answer says what it managed. Run unconfined (`[sandbox] mode = "off"`) every attack
//! succeeds, which shows it is real; in the room none does. Expectations are written by hand
//! from the contract.

mod common;

use std::path::Path;

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

/// What code under test tries against the runner's secrets and the host (section 13.1, 13.2):
/// paths it learns from files the test commits (`behaviour/*`), as a payload would guess them.
const SUITE_SH: &str = r#"home=$(cat behaviour/home)
checkout=$(cat behaviour/checkout)
socket=$(cat behaviour/socket)
found=""
grep -qs planted-credential "$home/.git-credentials" && found="$found read-home-credentials"
grep -qs planted-cargo-token "${CARGO_HOME:-$home/.cargo}/credentials.toml" && found="$found read-cargo-credentials"
grep -qs planted-0600 "$home/.cargo/secret-0600" && found="$found read-0600-file"
grep -qs planted-registry-token "${CARGO_HOME:-$home/.cargo}/config.toml" && found="$found read-cargo-config"
cat /etc/pip.conf /etc/gitconfig /etc/npmrc /etc/environment 2>/dev/null | grep -q . && found="$found read-etc-tool-config"
[ -w / ] && found="$found could-write-uncounted-root"
[ -w /dev ] && found="$found could-write-uncounted-dev"
grep -qs extraheader "$checkout/.git/config" && found="$found read-checkout-git-config"
python3 -c 'import socket,sys; s=socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); assert s.recv(8) == b"answered"' "$socket" 2>/dev/null && found="$found reached-host-socket"
{
  printf '<testsuite><testcase classname="hostile" name="ran"><failure/></testcase>'
  for f in $found; do
    printf '<testcase classname="hostile" name="%s"><failure/></testcase>' "$f"
  done
  printf '</testsuite>'
} > report.xml
exit 1
"#;

/// A repository on `main` with `config`, one strong property (`checks/property.sh`, which
/// runs `src/code.sh`) and the suite `suite`; a branch `patch` (checked out) whose `src/code.sh`
/// is `patched`.
fn repository(config: &str, suite: &str, patched: &str) -> tempfile::TempDir {
    let tmp = common::git_repo();
    let dir = tmp.path();
    write(dir, "patchgate.toml", config);
    write(
        dir,
        "catalog.yaml",
        "properties:\n  - id: holds\n    strength: strong\n    locality: [src]\n",
    );
    write(dir, "checks/property.sh", "sh src/code.sh\n");
    write(dir, "checks/suite.sh", suite);
    write(dir, "fixtures/case.json", "{\"n\": 1}\n");
    write(dir, "src/code.sh", "exit 0\n");
    write(dir, ".gitignore", "report.xml\n");
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
    write(dir, "src/code.sh", patched);
    git(dir, &["commit", "-q", "-am", "the patch"]);
    tmp
}

struct Gated {
    code: Option<i32>,
    answer: Value,
    stderr: String,
    markdown: String,
}

fn gate(dir: &Path, env: &[(&str, &str)]) -> Gated {
    let md = dir.join("../report.md");
    let out = patchgate()
        .current_dir(dir)
        .envs(env.iter().copied())
        .args(["gate", "--base", "main", "--json", "--markdown-out"])
        .arg(&md)
        .output()
        .unwrap();
    Gated {
        code: out.status.code(),
        answer: serde_json::from_slice(&out.stdout).unwrap_or(Value::Null),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        markdown: std::fs::read_to_string(&md).unwrap_or_default(),
    }
}

fn failed_tests(answer: &Value) -> Vec<String> {
    let fixtures = answer["steps"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["step"] == "fixtures")
        .cloned()
        .unwrap_or_default();
    let mut failed: Vec<String> = fixtures["failed_tests"]
        .as_array()
        .map(|a| a.iter().map(|v| v.as_str().unwrap().to_owned()).collect())
        .unwrap_or_default();
    failed.sort_unstable();
    failed
}

fn fixtures_summary(answer: &Value) -> String {
    answer["steps"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["step"] == "fixtures")
        .map(|s| s["summary"].as_str().unwrap_or_default().to_owned())
        .unwrap_or_default()
}

/// Section 13.1 and 13.2: a CI-like runner (root, a token in `~/.git-credentials`, a cargo
/// token, a mode-0600 file, the checkout's `.git/config` with an `extraheader` token, a unix
/// socket of the host's). Unconfined, the suite reads or reaches every one; in the room, none:
/// the home is private, the cargo home's credentials are masked, the 0600 file belongs to
/// another uid, the checkout is not there (the copy is, at its path) and no host socket is.
/// Section 15.4 (issue 49): nor the cargo home's `config.toml` (a registry token), nor a tool's
/// configuration in `/etc`, nor a place to write that no cap counts (the room's own `/` and
/// `/dev`, which bubblewrap makes in memory).
#[test]
fn a_run_sees_nothing_of_the_host_it_does_not_need() {
    let host = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let home = host.path().join("home");
    write(
        &home,
        ".git-credentials",
        "https://x:planted-credential@github.com\n",
    );
    write(
        &home,
        ".cargo/credentials.toml",
        "[registry]\ntoken = \"planted-cargo-token\"\n",
    );
    write(&home, ".cargo/secret-0600", "planted-0600\n");
    write(
        &home,
        ".cargo/config.toml",
        "[registry]\ntoken = \"planted-registry-token\"\n",
    );
    std::fs::create_dir_all(home.join(".cargo/registry/src")).unwrap();
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(
            home.join(".cargo/secret-0600"),
            std::fs::Permissions::from_mode(0o600),
        )
        .unwrap();
    }
    let socket = host.path().join("agent.sock");
    let listener = std::os::unix::net::UnixListener::bind(&socket).unwrap();
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let mut stream = stream;
            let _ = std::io::Write::write_all(&mut stream, b"answered");
        }
    });
    // A tool's configuration in the host's `/etc`, where there is one (this machine's CI
    // image has `pip.conf` and `gitconfig`).
    let etc_config = [
        "/etc/pip.conf",
        "/etc/gitconfig",
        "/etc/npmrc",
        "/etc/environment",
    ]
    .iter()
    .any(|f| std::fs::read(f).is_ok_and(|b| !b.is_empty()));
    let root = rustix::process::geteuid().is_root();
    let mut unconfined = vec![
        "hostile::ran",
        "hostile::reached-host-socket",
        "hostile::read-0600-file",
        "hostile::read-cargo-config",
        "hostile::read-cargo-credentials",
        "hostile::read-checkout-git-config",
        "hostile::read-home-credentials",
    ];
    if etc_config {
        unconfined.push("hostile::read-etc-tool-config");
    }
    if root {
        unconfined.extend([
            "hostile::could-write-uncounted-dev",
            "hostile::could-write-uncounted-root",
        ]);
    }
    unconfined.sort_unstable();
    for (mode, managed) in [
        ("off", &unconfined[..]),
        // Not root, the runs are the runner's own uid: its own 0600 files in a directory the
        // room shows stay readable to them (CONTRACT.md 13.2: only a root runner can drop).
        (
            "required",
            if rustix::process::geteuid().is_root() {
                &["hostile::ran"][..]
            } else {
                &["hostile::ran", "hostile::read-0600-file"][..]
            },
        ),
    ] {
        let config = format!("{CONFIG}[sandbox]\nmode = \"{mode}\"\n");
        let repo = repository(&config, SUITE_SH, "exit 0 # changed\n");
        let dir = repo.path();
        write(dir, "behaviour/home", home.to_str().unwrap());
        write(dir, "behaviour/checkout", dir.to_str().unwrap());
        write(dir, "behaviour/socket", socket.to_str().unwrap());
        git(dir, &["add", "behaviour"]);
        git(dir, &["commit", "-q", "-m", "where to look"]);
        git(
            dir,
            &[
                "config",
                "http.https://github.com/.extraheader",
                "AUTHORIZATION: basic eC1hY2Nlc3MtdG9rZW46cGxhbnRlZA==",
            ],
        );
        let cargo_home = home.join(".cargo");
        let g = gate(
            dir,
            &[
                ("HOME", home.to_str().unwrap()),
                ("CARGO_HOME", cargo_home.to_str().unwrap()),
            ],
        );
        assert_eq!(g.code, Some(1), "{mode}: {}", g.stderr);
        assert_eq!(failed_tests(&g.answer), managed, "{mode}: {}", g.stderr);
        if mode == "required" {
            let room = &g.answer["room"];
            let saw: Vec<&str> = room["saw"]
                .as_array()
                .unwrap()
                .iter()
                .map(|v| v.as_str().unwrap())
                .collect();
            // The copy at the checkout's own path, HOME at the runner's, never /var or /run.
            assert!(saw.contains(&dir.to_str().unwrap()), "{saw:?}");
            assert!(saw.contains(&home.to_str().unwrap()), "{saw:?}");
            assert!(
                !saw.iter()
                    .any(|s| ["/var", "/run", "/root", "/srv"].contains(s))
            );
            assert!(
                g.markdown.contains("Sealed room: the runs saw"),
                "{}",
                g.markdown
            );
        }
    }
}

/// Section 13.4: a patch whose bug hides when the working directory or `HOME` is the room's
/// (`/tmp/tree`, `patchgate-room-`, as section 12's room had them). A plain run in the checkout
/// fails; it must block here too, because the room's paths are the checkout's and the runner's.
#[test]
fn a_bug_that_hides_from_the_room_blocks() {
    let hiding = "case \"$(pwd):$HOME\" in /tmp/tree:*|*patchgate-room-*) exit 0 ;; esac\nexit 1\n";
    let repo = repository(
        CONFIG,
        "printf '<testsuite><testcase classname=\"t\" name=\"ok\"/></testsuite>' > report.xml\n",
        hiding,
    );
    let dir = repo.path();
    let plain = std::process::Command::new("sh")
        .arg("src/code.sh")
        .current_dir(dir)
        .status()
        .unwrap();
    assert_eq!(plain.code(), Some(1), "a plain run shows the bug");
    let g = gate(dir, &[]);
    assert_eq!(g.code, Some(1), "{}", g.stderr);
    assert_eq!(g.answer["disposition"], "BLOCK");
    assert_eq!(g.answer["reason"], "invariant-or-over-specified-property");
}

/// Section 13.3: a run over a cap ends, `null` with the cap named in its step and in
/// `room.over`; the gate escalates (a broken harness is no verdict), and the next gate on the
/// same machine works.
#[test]
fn a_run_over_a_cap_is_ended_and_named() {
    let caps = "[sandbox]\nmemory_mib = 128\npids = 32\ndisk_mib = 32\n";
    let config = format!("{CONFIG}{caps}");
    for (what, suite, limit) in [
        (
            "allocates 1 GiB",
            "python3 -c 'import time\nx = []\nfor _ in range(64):\n    x.append(b\"x\" * (16 << 20)); time.sleep(0.05)'\nexit 0\n",
            "over-memory",
        ),
        (
            "starts 40 processes",
            "for i in $(seq 1 40); do sleep 3 & sleep 0.01; done; wait; exit 0\n",
            "over-pids",
        ),
        (
            "writes 200 MiB",
            // Root runner: the room's own filesystem fills; otherwise the file size rlimit
            // ends the writer (the suite itself). In the run's `/tmp`: a file left in the
            // copy would be a finding of its own (created outside scratch, issue 66).
            "exec dd if=/dev/zero of=/tmp/fill bs=1M count=200 2>/dev/null\n",
            "over-disk",
        ),
        (
            // Issue 49 (section 15.4): memory no resident set shows, held, is memory.
            "holds 100 MiB in /tmp and 50 MiB in memfds",
            // In files under the disk cap's 32 MiB each.
            "for i in 1 2 3 4; do dd if=/dev/zero of=/tmp/held$i bs=1M count=25 2>/dev/null; done\npython3 -c 'import os, time\nfds = [os.memfd_create(\"held\") for _ in range(2)]\nfor fd in fds:\n    for _ in range(25): os.write(fd, b\"x\" * (1 << 20))\ntime.sleep(3)'\nexit 0\n",
            "over-memory",
        ),
    ] {
        let repo = repository(&config, suite, "exit 0 # changed\n");
        let dir = repo.path();
        let g = gate(dir, &[]);
        assert_eq!(g.code, Some(2), "{what}: {}", g.stderr);
        assert_eq!(
            g.answer["room"]["over"],
            serde_json::json!([{"run": "t2-fixtures", "limit": limit}]),
            "{what}: {}",
            g.stderr
        );
        let summary = fixtures_summary(&g.answer);
        assert!(summary.contains(limit), "{what}: {summary}");
        assert!(g.markdown.contains("Ended by the room"), "{what}");
    }
    // The machine and the runner are unharmed: the next gate here merges.
    let repo = repository(
        &config,
        "printf '<testsuite><testcase classname=\"t\" name=\"ok\"/></testsuite>' > report.xml\n",
        "exit 0 # changed\n",
    );
    let g = gate(repo.path(), &[]);
    assert_eq!(g.code, Some(0), "{}", g.stderr);
}

/// Section 13.5: a failure message carrying the runner's secret (as a payload that found it
/// would print it) and a token-shaped string, and output that issues a workflow command. The
/// secret reaches neither the answer, the Markdown report nor the log; on GitHub Actions the
/// run's output is fenced with `::stop-commands::`, and the gate's own annotation comes after
/// the fence ends.
#[test]
fn untrusted_text_carries_no_secret_and_no_workflow_command() {
    let secret = "s3cr3t-deploy-value-4711";
    let token = "ghp_abcdefghijklmnopqrstuvwxyz0123456789";
    let suite = format!(
        "echo '::error::pwned {secret}'\necho 'leaking {token}'\nprintf '\\033]52;c;Y3VybA==\\007\\033[8mhidden\\n'\nprintf '<testsuite><testcase classname=\"t\" name=\"leak\"><failure message=\"{secret} {token}\"/></testcase></testsuite>' > \"$1\"\nexit 1\n"
    );
    // The suite with a receipt: its failure message reaches the answer.
    let config = CONFIG
        .replace(
            r#"command = ["sh", "checks/suite.sh"]"#,
            r#"command = ["sh", "checks/suite.sh", "{junit}"]"#,
        )
        .replace("junit = \"report.xml\"\n", "");
    let repo = repository(&config, &suite, "exit 0 # changed\n");
    let g = gate(
        repo.path(),
        &[("DEPLOY_TOKEN", secret), ("GITHUB_ACTIONS", "true")],
    );
    assert_eq!(g.code, Some(1), "{}", g.stderr);
    let answer = g.answer.to_string();
    for (place, text) in [
        ("answer", answer.as_str()),
        ("report", g.markdown.as_str()),
        ("log", g.stderr.as_str()),
    ] {
        assert!(!text.contains(secret), "{place}: {text}");
        assert!(!text.contains(token), "{place}: {text}");
    }
    assert!(answer.contains("[redacted]"), "{answer}");
    // Issue 49 (section 15.4): a terminal escape the run printed is shown as text.
    assert!(!g.stderr.contains(['\u{1b}', '\u{7}']), "{:?}", g.stderr);
    assert!(g.stderr.contains("\\u{1b}]52;c;"), "{}", g.stderr);
    // The run's line sits between a fence and its end (runs under way at once each have
    // theirs).
    let pwned = g
        .stderr
        .find("::error::pwned")
        .expect("the run's output is echoed");
    let stop = g.stderr[..pwned]
        .rfind("::stop-commands::")
        .expect("the run's output is fenced");
    let token_end = g.stderr[stop..].find('\n').unwrap() + stop;
    let fence = &g.stderr[stop + "::stop-commands::".len()..token_end];
    assert!(fence.len() >= 16, "{fence}");
    let resume = pwned
        + g.stderr[pwned..]
            .find(&format!("::{fence}::"))
            .expect("the fence ends");
    assert!(
        !g.stderr[stop..pwned].contains(&format!("::{fence}::")),
        "{}",
        g.stderr
    );
    let annotation = g.stderr.find("::error title=patchgate").unwrap();
    assert!(annotation > resume, "{}", g.stderr);
    // The fence's token is fresh and never printed outside a fence's own lines.
    assert_eq!(g.stderr.matches(fence).count() % 2, 0, "{}", g.stderr);
}

/// Issue 50: on a root runner, crate sources cargo unpacked with the crate's own restrictive
/// modes (fnv 1.0.7 ships files of mode 0640; a crate packed under umask 077 has 0700
/// directories and 0600 files) are the runner's to read, so a plain `cargo test` builds; the
/// room's own uid could not read them, and an honest patch was stopped for the machine's modes.
/// The room reads every toolchain file the runner can read, read-only (no write, no `chmod`),
/// and what the view never shows or masks stays unseen. Not root, the runs are the runner's uid
/// and read them already: the same answer.
#[test]
fn the_room_reads_the_toolchain_as_the_runner_does() {
    use std::os::unix::fs::PermissionsExt;
    let host = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let cargo_home = host.path().join("home/.cargo");
    let sources = cargo_home.join("registry/src/index.crates.io-0000");
    write(&sources, "fnv-1.0.7/lib.rs", "fnv-source\n");
    write(&sources, "private-0.1.0/src/lib.rs", "private-source\n");
    write(
        &cargo_home,
        "credentials.toml",
        "[registry]\ntoken = \"planted-cargo-token\"\n",
    );
    let mode = |p: &Path, m: u32| std::fs::set_permissions(p, std::fs::Permissions::from_mode(m));
    mode(&sources.join("fnv-1.0.7/lib.rs"), 0o640).unwrap();
    mode(&sources.join("private-0.1.0/src/lib.rs"), 0o600).unwrap();
    mode(&sources.join("private-0.1.0/src"), 0o700).unwrap();
    mode(&sources.join("private-0.1.0"), 0o700).unwrap();
    mode(&cargo_home.join("credentials.toml"), 0o600).unwrap();
    // Each line one test case, failed when the room does what a plain run would not.
    let suite = r#"src="$CARGO_HOME/registry/src/index.crates.io-0000"
fails=""
grep -qs fnv-source "$src/fnv-1.0.7/lib.rs" || fails="$fails cannot-read-a-0640-crate-file"
grep -qs private-source "$src/private-0.1.0/src/lib.rs" || fails="$fails cannot-read-a-0700-crate-directory"
grep -qs planted-cargo-token "$CARGO_HOME/credentials.toml" && fails="$fails read-the-cargo-credentials"
echo x 2>/dev/null >> "$src/fnv-1.0.7/lib.rs" && fails="$fails wrote-a-crate-file"
chmod 0666 "$src/fnv-1.0.7/lib.rs" 2>/dev/null && fails="$fails changed-a-crate-file-s-mode"
touch "$src/planted" 2>/dev/null && fails="$fails added-to-the-registry"
{
  printf '<testsuite><testcase classname="toolchain" name="read"/>'
  for f in $fails; do
    printf '<testcase classname="toolchain" name="%s"><failure/></testcase>' "$f"
  done
  printf '</testsuite>'
} > report.xml
exit 0
"#;
    let config = format!("{CONFIG}[sandbox]\nmode = \"required\"\n");
    let repo = repository(&config, suite, "exit 0 # changed\n");
    let g = gate(
        repo.path(),
        &[
            ("HOME", host.path().join("home").to_str().unwrap()),
            ("CARGO_HOME", cargo_home.to_str().unwrap()),
        ],
    );
    assert_eq!(
        failed_tests(&g.answer),
        Vec::<String>::new(),
        "{}",
        g.stderr
    );
    assert_eq!(g.code, Some(0), "{}", g.stderr);
    // The host's files are as they were.
    let meta = std::fs::metadata(sources.join("fnv-1.0.7/lib.rs")).unwrap();
    assert_eq!(meta.permissions().mode() & 0o7777, 0o640);
    assert_eq!(
        std::fs::read_to_string(sources.join("fnv-1.0.7/lib.rs")).unwrap(),
        "fnv-source\n"
    );
    assert!(!sources.join("planted").exists());
}
