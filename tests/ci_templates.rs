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
        (
            "github-actions.yml",
            "--base \"origin/${{ github.base_ref }}\"",
        ),
        (
            "gitlab-ci.yml",
            "--base \"origin/$CI_MERGE_REQUEST_TARGET_BRANCH_NAME\"",
        ),
    ] {
        let text = commands(&template(name));
        assert!(text.contains(&format!("patchgate gate {base}")), "{name}");
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
