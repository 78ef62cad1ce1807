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
