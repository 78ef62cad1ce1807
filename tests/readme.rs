//! The README runs as written. Every block fenced as ```` ```sh example ```` is run from a copy
//! of the repository root (its `examples/` inputs, a git repository with an `origin/main`) with
//! the built `patchgate` on `PATH` and a live server where the README says
//! `http://127.0.0.1:8080` (and in `PATCHGATE_SERVER`). A comment line right after a command
//! is that command's expected output, and must appear in the block's output; `echo $?   # N`
//! asserts the exit code N. A README that drifts from the code fails here.
//!
//! Blocks fenced as plain ```` ```sh ```` are not run: set-up (`cargo install`), deployment
//! (`docker`, `kubectl`), the forge's own CLI (`gh`), editors, and the long benchmark and fuzz
//! runs.

mod common;

use std::path::Path;

/// The `sh example` blocks: (line of the fence, body).
fn examples(readme: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    let mut current: Option<(usize, String)> = None;
    for (i, line) in readme.lines().enumerate() {
        match &mut current {
            None if line.trim_end() == "```sh example" => current = Some((i + 1, String::new())),
            Some(_) if line.starts_with("```") => out.extend(current.take()),
            Some((_, body)) => {
                body.push_str(line);
                body.push('\n');
            }
            None => {}
        }
    }
    out
}

fn normalized(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The block as a script (exit-code checks made real) and its expected output lines.
fn script(body: &str, server: &str) -> (String, Vec<String>) {
    let mut script = String::new();
    let mut expected = Vec::new();
    let mut after_command = false;
    let mut continued = false;
    for line in body.replace("http://127.0.0.1:8080", server).lines() {
        if let Some(rest) = line.strip_prefix("echo $?") {
            let code: String = rest
                .trim_start()
                .trim_start_matches('#')
                .trim_start()
                .chars()
                .take_while(char::is_ascii_digit)
                .collect();
            assert!(!code.is_empty(), "`{line}` names no exit code");
            script.push_str(&format!(
                "__rc=$?; [ \"$__rc\" = \"{code}\" ] || {{ echo \"README: exit $__rc where it says {code}\" >&2; exit 99; }}\n"
            ));
            after_command = false;
            continue;
        }
        if let Some(out) = line.strip_prefix("# ") {
            if after_command {
                expected.push(normalized(out));
            }
        } else if line.trim().is_empty() {
            after_command = false;
        } else if !continued {
            after_command = true;
        }
        continued = line.trim_end().ends_with('\\');
        script.push_str(line);
        script.push('\n');
    }
    (script, expected)
}

fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let name = entry.file_name();
        // The two example repositories have their own tests.
        if name == "gate-python" || name == "gate-rust" {
            continue;
        }
        let (src, dst) = (entry.path(), to.join(&name));
        if entry.file_type().unwrap().is_dir() {
            copy_tree(&src, &dst);
        } else {
            std::fs::copy(&src, &dst).unwrap();
        }
    }
}

#[test]
fn every_readme_example_runs_as_written() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    let blocks = examples(&readme);
    assert!(blocks.len() >= 14, "{} example blocks", blocks.len());

    let repo = common::git_repo();
    copy_tree(&root.join("examples"), &repo.path().join("examples"));
    common::git(repo.path(), &["add", "-A"]);
    common::git(repo.path(), &["commit", "-q", "-m", "examples"]);
    common::git(
        repo.path(),
        &["update-ref", "refs/remotes/origin/main", "HEAD"],
    );

    let server = common::TestServer::start();
    let url = server.url("");
    let bin = Path::new(env!("CARGO_BIN_EXE_patchgate")).parent().unwrap();
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let mut failures = Vec::new();
    for (line, body) in blocks {
        let (script, expected) = script(&body, &url);
        let out = std::process::Command::new("sh")
            .arg("-c")
            .arg(&script)
            .current_dir(repo.path())
            .env("PATH", &path)
            .env("PATCHGATE_SERVER", &url)
            .env_remove("PATCHGATE_TOKEN")
            .env_remove("GITHUB_ACTIONS")
            .output()
            .unwrap();
        let stdout = normalized(&String::from_utf8_lossy(&out.stdout));
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        let code = out.status.code().unwrap_or(-1);
        let mut why = Vec::new();
        if matches!(code, 99 | 126 | 127 | 64 | 65) {
            why.push(format!("exit {code}"));
        }
        for bad in ["command not found", "No such file", "error:", "not found"] {
            if stderr.contains(bad) {
                why.push(format!("stderr says {bad:?}"));
            }
        }
        for e in &expected {
            if !stdout.contains(e.as_str()) {
                why.push(format!("no `{e}` in the output"));
            }
        }
        if !why.is_empty() {
            failures.push(format!(
                "README.md:{line}: {}\n--- script\n{script}--- stdout\n{stdout}\n--- stderr\n{stderr}",
                why.join("; ")
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}
