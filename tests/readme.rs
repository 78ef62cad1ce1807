//! The README and the docs run as written. Every block fenced as ```` ```sh example ```` (in
//! `README.md` and under `docs/`) is run from a copy
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
        // The Rust example has its own tests (the Python one is the guide's walk-through).
        if name == "gate-rust" {
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

/// The Markdown files of the documentation: `README.md`, `ARCHITECTURE.md` and everything
/// under `docs/`, as paths relative to the repository root, sorted.
fn documents(root: &Path) -> Vec<String> {
    let mut out = vec!["README.md".to_owned(), "ARCHITECTURE.md".to_owned()];
    let mut pending = vec![root.join("docs")];
    while let Some(dir) = pending.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                pending.push(path);
            } else if path.extension().is_some_and(|e| e == "md") {
                out.push(
                    path.strip_prefix(root)
                        .unwrap()
                        .to_string_lossy()
                        .into_owned(),
                );
            }
        }
    }
    out.sort();
    out
}

/// Every relative link of every document (`[text](path)`, `![alt](path)`, a `#fragment`
/// dropped) names a file or directory that exists.
#[test]
fn every_relative_link_resolves() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut broken = Vec::new();
    let mut seen = 0;
    for doc in documents(root) {
        let text = std::fs::read_to_string(root.join(&doc)).unwrap();
        let dir = root.join(&doc).parent().unwrap().to_path_buf();
        let mut in_code = false;
        for (i, line) in text.lines().enumerate() {
            if line.trim_start().starts_with("```") {
                in_code = !in_code;
            }
            // A fenced or indented code block (in a quote too) is not prose.
            let quoted = line.trim_start_matches(['>', ' ']).len();
            let indent = line.trim_start_matches('>').len() - quoted;
            if in_code || indent >= 5 {
                continue;
            }
            // Inline code is not a link.
            let prose: String = line
                .split('`')
                .enumerate()
                .filter(|(i, _)| i % 2 == 0)
                .map(|(_, part)| part)
                .collect();
            let mut rest = prose.as_str();
            while let Some(at) = rest.find("](") {
                let after = &rest[at + 2..];
                let Some(end) = after.find(')') else { break };
                let target = &after[..end];
                rest = &after[end..];
                if target.contains("://")
                    || target.starts_with('#')
                    || target.starts_with("mailto:")
                {
                    continue;
                }
                let path = target.split('#').next().unwrap_or_default();
                seen += 1;
                if !dir.join(path).exists() {
                    broken.push(format!("{doc}:{}: {target}", i + 1));
                }
            }
        }
    }
    assert!(seen >= 20, "{seen} relative links");
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
}

/// `docs/reference/cli.md` is the binary's own help, every subcommand's, as clap renders it:
/// generated, never written by hand (`PATCHGATE_WRITE_DOCS=1 cargo test --test readme`
/// rewrites it), and held equal here.
#[test]
fn the_cli_reference_is_the_binary_s_help() {
    use clap::CommandFactory;
    fn render(out: &mut String, command: &clap::Command, name: &str) {
        let mut c = command.clone().bin_name(name);
        out.push_str(&format!("## `{name}`\n\n```text\n"));
        out.push_str(c.render_long_help().to_string().trim_end());
        out.push_str("\n```\n\n");
        for sub in command.get_subcommands() {
            render(out, sub, &format!("{name} {}", sub.get_name()));
        }
    }
    let mut text = String::from(
        "# The CLI\n\nEvery subcommand's `--help`, generated from the binary (`PATCHGATE_WRITE_DOCS=1 cargo test --test readme` rewrites this page; a test holds it equal). Exit codes: [exit-codes.md](exit-codes.md).\n\n",
    );
    let mut cli = patchgate::cli::Cli::command();
    cli.build();
    render(&mut text, &cli, "patchgate");
    let text = text.trim_end().to_owned() + "\n";
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/reference/cli.md");
    if std::env::var_os("PATCHGATE_WRITE_DOCS").is_some() {
        std::fs::write(&path, &text).unwrap();
    }
    let written = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        written == text,
        "docs/reference/cli.md is not the binary's help: run PATCHGATE_WRITE_DOCS=1 cargo test --test readme"
    );
}

/// `docs/reference/http.md` lists every operation of the OpenAPI document.
#[test]
fn the_http_reference_lists_every_endpoint() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let page = std::fs::read_to_string(root.join("docs/reference/http.md")).unwrap();
    let doc: serde_json::Value =
        serde_json::from_slice(&std::fs::read(root.join("openapi/openapi.json")).unwrap()).unwrap();
    let mut n = 0;
    for (path, ops) in doc["paths"].as_object().unwrap() {
        for method in ops.as_object().unwrap().keys() {
            n += 1;
            let row = format!("| `{} {path}` |", method.to_uppercase());
            assert!(page.contains(&row), "docs/reference/http.md lacks {row}");
        }
    }
    assert!(n >= 20, "{n} operations");
}

/// `docs/reference/config.md` holds both starters as `patchgate init` writes them.
#[test]
fn the_config_reference_holds_both_starters() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let page = std::fs::read_to_string(root.join("docs/reference/config.md")).unwrap();
    for flags in [&[][..], &["--rust"][..]] {
        let dir = tempfile::tempdir().unwrap();
        common::patchgate()
            .current_dir(dir.path())
            .arg("init")
            .args(flags)
            .assert()
            .code(0);
        let starter = std::fs::read_to_string(dir.path().join("patchgate.toml")).unwrap();
        assert!(
            page.contains(&format!("```toml\n{starter}```")),
            "docs/reference/config.md lacks the starter of `patchgate init {}`",
            flags.join(" ")
        );
    }
}

#[test]
fn every_readme_example_runs_as_written() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut blocks = Vec::new();
    for doc in documents(root) {
        let text = std::fs::read_to_string(root.join(&doc)).unwrap();
        blocks.extend(
            examples(&text)
                .into_iter()
                .map(|(line, body)| (format!("{doc}:{line}"), body)),
        );
    }
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
            .env("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
            .env("GIT_AUTHOR_NAME", "readme")
            .env("GIT_AUTHOR_EMAIL", "readme@example.org")
            .env("GIT_COMMITTER_NAME", "readme")
            .env("GIT_COMMITTER_EMAIL", "readme@example.org")
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
                "{line}: {}\n--- script\n{script}--- stdout\n{stdout}\n--- stderr\n{stderr}",
                why.join("; ")
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// `docs/reference/reading-rules.md` holds the reading rules as the `RULES` table says them
/// (CONTRACT.md 14.2: the rules are data; the page is generated from them, between its
/// `<!-- rules -->` markers).
#[test]
fn the_reading_rules_page_is_the_rules_table() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/reference/reading-rules.md");
    let page = std::fs::read_to_string(&path).unwrap();
    let (open, close) = (
        "<!-- rules: generated from src/cli/reading/table.rs (PATCHGATE_WRITE_DOCS=1 cargo test --test readme) -->\n",
        "<!-- /rules -->\n",
    );
    let start = page.find(open).expect("the opening marker") + open.len();
    let end = page.find(close).expect("the closing marker");
    let table = patchgate::cli::reading::table::markdown();
    if std::env::var_os("PATCHGATE_WRITE_DOCS").is_some() {
        let written = format!("{}{table}{}", &page[..start], &page[end..]);
        std::fs::write(&path, written).unwrap();
        return;
    }
    assert!(
        page[start..end] == table,
        "docs/reference/reading-rules.md is not the rules table: run PATCHGATE_WRITE_DOCS=1 cargo test --test readme"
    );
}
