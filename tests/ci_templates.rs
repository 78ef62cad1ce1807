//! The shipped CI templates gate with one `patchgate gate` step whose rules come from the base
//! ref, and read nothing a patch could have written as evidence (the hole issue 12 closed: the
//! old templates read the expected seal, the catalog, the ledger and even evidence.json from
//! the patch itself).

fn template(name: &str) -> String {
    std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("deploy/ci")
            .join(name),
    )
    .expect("template")
}

/// The template's commands: the lines that are not comments.
fn commands(text: &str) -> String {
    text.lines()
        .filter(|l| !l.trim_start().starts_with('#'))
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn the_templates_gate_from_the_base_ref_and_read_no_evidence_from_the_patch() {
    for (name, base) in [
        ("github-actions.yml", "set -- --base \"origin/$BASE_REF\""),
        (
            "gitlab-ci.yml",
            "set -- --base \"origin/$CI_MERGE_REQUEST_TARGET_BRANCH_NAME\"",
        ),
    ] {
        let text = commands(&template(name));
        assert!(text.contains(base), "{name}");
        assert!(text.contains("patchgate gate \"$@\""), "{name}");
        assert!(text.contains("--markdown-out"), "{name}");
        for patch_written in [
            "evidence.json",
            "results.json",
            "fixtures.seal.expected",
            "catalog.yaml",
            "freeze-ledger.json",
            "patchgate route",
            "patchgate quorum",
            // Installing patchgate never compiles it in the job.
            "cargo install",
        ] {
            assert!(!text.contains(patch_written), "{name} uses {patch_written}");
        }
        // The exit code is preserved: nothing swallows it.
        for swallow in ["|| true", "continue-on-error: true", "allow_failure: true"] {
            assert!(!text.contains(swallow), "{name} swallows the exit code");
        }
    }
    assert!(commands(&template("github-actions.yml")).contains("$GITHUB_STEP_SUMMARY"));
}

/// Issue 53: the sharded templates. Each shard job runs `--shard K/N` with its facts out and
/// succeeds only on a finished shard's exit 2; the combine job needs every shard, runs after
/// failed ones, reads only this run's facts (GitHub: `download-artifact` without `run-id`;
/// GitLab: `needs:` with artifacts) and its exit code is the check's.
#[test]
fn the_sharded_templates_split_the_gate_and_decide_once() {
    let github = commands(&template("github-actions-sharded.yml"));
    for needed in [
        "--shard \"$SHARD/$N\"",
        "--facts-out \"shard-$SHARD.json\"",
        "shard: [1, 2, 3, 4]",
        "N: \"4\"",
        "needs: shard",
        "if: ${{ !cancelled() }}",
        "actions/download-artifact@v4",
        "pattern: patchgate-shard-*",
        "patchgate gate --combine \"$@\"",
        "merge_group:",
        "fail-fast: false",
        "if [ \"$code\" != 2 ] || ! grep -q '\"digest\"' \"shard-$SHARD.json\"; then exit \"$code\"; fi",
    ] {
        assert!(github.contains(needed), "github: {needed}");
    }
    // Only this run's artifacts: no other run's, no token to read them with.
    for other_run in ["run-id:", "github-token:"] {
        assert!(!github.contains(other_run), "github: {other_run}");
    }
    let gitlab = commands(&template("gitlab-ci-sharded.yml"));
    for needed in [
        "parallel: 4",
        "--shard \"$CI_NODE_INDEX/$CI_NODE_TOTAL\"",
        "exit_codes: 2",
        "job: patchgate-shard",
        "artifacts: true",
        "when: always",
        "patchgate gate --combine \"$@\"",
        "merge_train",
    ] {
        assert!(gitlab.contains(needed), "gitlab: {needed}");
    }
    for (name, text) in [("github", &github), ("gitlab", &gitlab)] {
        for swallow in ["|| true", "continue-on-error: true", "allow_failure: true"] {
            assert!(!text.contains(swallow), "{name} swallows the exit code");
        }
        for patch_written in ["evidence.json", "results.json", "cargo install"] {
            assert!(!text.contains(patch_written), "{name} uses {patch_written}");
        }
    }
}

mod common;

/// `deploy/ci/gate.sh` against a real server: its exit code follows the status, the answer
/// goes to stdout (stderr stays clean for curl's own errors), 401 is 64 as in the CLI.
#[test]
fn gate_sh_exits_with_the_decision() {
    use patchgate::http::Settings;
    let token = "s3cret-token-for-gate-sh";
    let server = common::TestServer::start_with(Settings {
        token: patchgate::http::BearerToken::new(token),
        ..Settings::default()
    });
    let dir = tempfile::tempdir().unwrap();
    let evidence = dir.path().join("evidence.json");
    let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("deploy/ci/gate.sh");
    let run = |doc: &str, token: Option<&str>, server_url: &str| {
        std::fs::write(&evidence, doc).unwrap();
        let mut cmd = std::process::Command::new("sh");
        cmd.arg(&script)
            .arg(&evidence)
            .env("PATCHGATE_SERVER", server_url);
        match token {
            Some(t) => cmd.env("PATCHGATE_TOKEN", t),
            None => cmd.env_remove("PATCHGATE_TOKEN"),
        };
        let out = cmd.output().unwrap();
        (
            out.status.code().unwrap_or(-1),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    let url = server.url("");
    let cases = [
        (
            r#"{"property_check":"pass","fixture_check":"pass","flaky_freeze":"pass"}"#,
            0,
            "MERGE_OK attribution=all-gates-held\n",
        ),
        (
            r#"{"property_check":"pass","fixture_check":"fail","flaky_freeze":"pass"}"#,
            1,
            "BLOCK attribution=concrete-behavior\n",
        ),
        (
            r#"{"property_check":"pass","fixture_check":"pass"}"#,
            2,
            "ESCALATE attribution=evidence-gap\n",
        ),
    ];
    for (doc, exit, line) in cases {
        let (code, stdout, stderr) = run(doc, Some(token), &url);
        assert_eq!(
            (code, stdout.as_str(), stderr.as_str()),
            (exit, line, ""),
            "{doc}"
        );
    }
    let (code, stdout, _) = run(cases[0].0, Some("wrong"), &url);
    assert_eq!((code, stdout.as_str()), (64, ""));
    let (code, _, _) = run(r#"{"property_check":"PASS"}"#, Some(token), &url);
    assert_eq!(code, 69, "a 422 is not a decision");
    let (code, stdout, _) = run(cases[0].0, Some(token), "http://127.0.0.1:9");
    assert_eq!((code, stdout.as_str()), (69, ""));
}

/// The shell a template runs in its gate step, with `patchgate` replaced by a stand-in that
/// writes the arguments it was given: what base, head and queue the template picks for the
/// variables the forge sets.
fn gate_arguments(script: &str, env: &[(&str, &str)]) -> Vec<String> {
    gate_arguments_in(std::path::Path::new("."), script, env)
}

/// [`gate_arguments`], run in the directory `cwd`.
fn gate_arguments_in(cwd: &std::path::Path, script: &str, env: &[(&str, &str)]) -> Vec<String> {
    let dir = tempfile::tempdir().expect("tempdir");
    let fake = dir.path().join("patchgate");
    std::fs::write(
        &fake,
        "#!/bin/sh\nfor a in \"$@\"; do printf '%s\\n' \"$a\"; done > \"$ARGS_OUT\"\n",
    )
    .expect("write");
    std::fs::set_permissions(&fake, std::os::unix::fs::PermissionsExt::from_mode(0o755))
        .expect("chmod");
    let out = dir.path().join("args");
    let status = std::process::Command::new("bash")
        .current_dir(cwd)
        .args(["-euo", "pipefail", "-c", script])
        .env_clear()
        .env("PATH", format!("{}:/usr/bin:/bin", dir.path().display()))
        .env("ARGS_OUT", &out)
        .envs(env.iter().copied())
        .status()
        .expect("bash");
    assert!(status.success(), "{script}");
    std::fs::read_to_string(&out)
        .expect("the stand-in ran")
        .lines()
        .map(str::to_owned)
        .collect()
}

/// What GitHub sets for the gate step on a `merge_group` event (the template's `env:`).
fn merge_group_env<'a>(
    base: &'a str,
    head: &'a str,
    group_ref: &'a str,
) -> [(&'a str, &'a str); 6] {
    [
        ("EVENT", "merge_group"),
        ("GROUP_BASE", base),
        ("GROUP_HEAD", head),
        ("GROUP_REF", group_ref),
        ("PATCH_ID", group_ref),
        ("GITHUB_STEP_SUMMARY", "/dev/null"),
    ]
}

fn strings(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| (*s).to_owned()).collect()
}

/// Issue 39, GitLab: a merge train's pipeline gates the train's commit against the target
/// branch's and names the train; a merge request's own pipeline gates against the target
/// branch, as before. Expected arguments written by hand from GitLab's variables.
#[test]
fn the_gitlab_template_gates_a_merge_train_s_ref_against_the_target_branch() {
    let yaml: serde_norway::Value =
        serde_norway::from_str(&template("gitlab-ci.yml")).expect("the template is YAML");
    let job = &yaml["patchgate"];
    let script: Vec<&str> = job["script"]
        .as_sequence()
        .expect("script")
        .iter()
        .map(|s| s.as_str().expect("a script line"))
        .collect();
    let script = script.join("\n");
    assert_eq!(
        job["rules"][0]["if"].as_str(),
        Some("$CI_PIPELINE_SOURCE == \"merge_request_event\""),
        "merge trains run as merge request pipelines"
    );
    let train_sha = "a".repeat(40);
    let target_sha = "b".repeat(40);
    let common = [
        ("CI_MERGE_REQUEST_IID", "7"),
        ("CI_MERGE_REQUEST_TARGET_BRANCH_NAME", "main"),
        ("CI_COMMIT_SHA", train_sha.as_str()),
    ];
    let train: Vec<(&str, &str)> = common
        .iter()
        .copied()
        .chain([
            ("CI_MERGE_REQUEST_EVENT_TYPE", "merge_train"),
            ("CI_MERGE_REQUEST_TARGET_BRANCH_SHA", target_sha.as_str()),
        ])
        .collect();
    assert_eq!(
        gate_arguments(&script, &train),
        strings(&[
            "gate",
            "--base",
            &target_sha,
            "--head",
            &train_sha,
            "--merge-train",
            "refs/merge-requests/7/train",
            "--pull-request",
            "7",
            "--patch-id",
            "7",
            "--markdown-out",
            "patchgate-report.md",
            "--json-out",
            "patchgate-answer.json",
            "--ledger",
            "ladder-ledger.jsonl",
        ])
    );
    let detached: Vec<(&str, &str)> = common
        .iter()
        .copied()
        .chain([("CI_MERGE_REQUEST_EVENT_TYPE", "detached")])
        .collect();
    assert_eq!(
        gate_arguments(&script, &detached)[..3],
        strings(&["gate", "--base", "origin/main"])[..]
    );
}

/// Issue 39, GitHub: the workflow template listens to `merge_group` too, and there gates the
/// group's head against the queue's base commit, naming the group and its pull request.
#[test]
fn the_github_template_gates_a_merge_group_against_the_queue_s_base() {
    let yaml: serde_norway::Value =
        serde_norway::from_str(&template("github-actions.yml")).expect("the template is YAML");
    assert!(
        yaml["on"]
            .as_mapping()
            .is_some_and(|m| m.contains_key("merge_group") && m.contains_key("pull_request")),
        "on: pull_request and merge_group"
    );
    let step = yaml["jobs"]["gate"]["steps"]
        .as_sequence()
        .expect("steps")
        .iter()
        .find(|s| {
            s["run"]
                .as_str()
                .is_some_and(|r| r.contains("patchgate gate"))
        })
        .expect("the gate step");
    let script = step["run"].as_str().expect("run");
    assert!(
        !script.contains("${{"),
        "the event's values come in as environment variables"
    );
    let (base, head) = ("c".repeat(40), "d".repeat(40));
    let group_ref = format!("refs/heads/gh-readonly-queue/main/pr-13-{head}");
    let env = merge_group_env(&base, &head, &group_ref);
    assert_eq!(
        gate_arguments(script, &env)[..10],
        strings(&[
            "gate",
            "--base",
            &base,
            "--head",
            &head,
            "--merge-group",
            &group_ref,
            "--pull-request",
            "13",
            "--patch-id",
        ])[..]
    );
    // Issue 50: a group of three pull requests names each, in queue order, as the Action does:
    // a merge commit, a squashed one, and the last, named by the ref.
    let repo = tempfile::tempdir().expect("tempdir");
    let git = |args: &[&str]| {
        let out = std::process::Command::new("git")
            .current_dir(repo.path())
            .args(["-c", "user.name=t", "-c", "user.email=t@example.com"])
            .args(args)
            .output()
            .expect("git");
        assert!(out.status.success(), "git {args:?}");
        String::from_utf8(out.stdout).unwrap().trim().to_owned()
    };
    git(&["init", "-q"]);
    git(&["commit", "-q", "--allow-empty", "-m", "the base"]);
    let base = git(&["rev-parse", "HEAD"]);
    git(&[
        "commit",
        "-q",
        "--allow-empty",
        "-m",
        "Merge pull request #11 from a/fix\n\nbody",
    ]);
    git(&[
        "commit",
        "-q",
        "--allow-empty",
        "-m",
        "Round prices down (#12)",
    ]);
    git(&[
        "commit",
        "-q",
        "--allow-empty",
        "-m",
        "Merge pull request #13 from b/feature",
    ]);
    let head = git(&["rev-parse", "HEAD"]);
    let group_ref = format!("refs/heads/gh-readonly-queue/main/pr-13-{head}");
    let env = merge_group_env(&base, &head, &group_ref);
    let args = gate_arguments_in(repo.path(), script, &env);
    let named: Vec<&str> = args
        .windows(2)
        .filter(|w| w[0] == "--pull-request")
        .map(|w| w[1].as_str())
        .collect();
    assert_eq!(named, ["11", "12", "13"], "{args:?}");
    let env = [
        ("EVENT", "pull_request"),
        ("BASE_REF", "main"),
        ("PATCH_ID", "12"),
        ("GITHUB_STEP_SUMMARY", "/dev/null"),
    ];
    assert_eq!(
        gate_arguments(script, &env)[..5],
        strings(&["gate", "--base", "origin/main", "--patch-id", "12"])[..]
    );
}
