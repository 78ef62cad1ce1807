//! The house stays livable (issue 51): the measures the README promises, checked where a
//! change would break them. `scripts/import_cycles.py` is shown to find a circle written the
//! way this codebase writes imports (grouped, `use super::{a::X, b::Y}`) before it is trusted
//! to find none in `src/`.

use std::path::Path;
use std::process::Command;

/// Runs the import-cycle finder on `root`: its exit code and stdout.
fn cycles(root: &Path) -> (Option<i32>, String) {
    let out = Command::new("python3")
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/import_cycles.py"))
        .arg(root)
        .output()
        .expect("python3");
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

/// A tree of `files` (path, text) under a fresh `src/`.
fn tree(files: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for (path, text) in files {
        let p = dir.path().join("src").join(path);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }
    dir
}

/// Each way one file names another, written by hand: every one a circle with `b.rs`'s plain
/// `use super::a::X`, and the near misses none.
#[test]
fn the_cycle_finder_reads_grouped_imports() {
    let back = "use super::a::X;\npub struct Y;\n";
    for (a, circle) in [
        ("use super::b::Y;\npub struct X;\n", true),
        ("use super::{b::Y};\npub struct X;\n", true),
        ("use super::{c::Z, b::Y};\npub struct X;\n", true),
        ("use super::{c::{Z}, b::{self, Y}};\npub struct X;\n", true),
        (
            "use crate::m::{\n    c::Z,\n    b::Y as Why,\n};\npub struct X;\n",
            true,
        ),
        ("use super::{c::Z};\npub struct X;\n", false),
        // A test module's imports are not the file's.
        (
            "pub struct X;\n#[cfg(test)]\nmod tests {\n    use super::super::{b::Y};\n}\n",
            false,
        ),
    ] {
        let dir = tree(&[
            ("lib.rs", "pub mod m;\n"),
            ("m/mod.rs", "pub mod a;\npub mod b;\npub mod c;\n"),
            ("m/a.rs", a),
            ("m/b.rs", back),
            ("m/c.rs", "pub struct Z;\n"),
        ]);
        let (code, said) = cycles(&dir.path().join("src"));
        let expected = if circle { 1 } else { 0 };
        assert_eq!(code, Some(expected), "{a}\n{said}");
        assert_eq!(
            said.contains("import cycle: m::a <-> m::b"),
            circle,
            "{a}\n{said}"
        );
    }
}

/// `src/` itself: no circle, no file over 900 lines, no process made but in one place, and no
/// lint allowed without a reason
/// (`#[expect(…, reason = …)]` where the lint fires on every expansion, so a stale one is an
/// error).
#[test]
fn src_has_no_circle_no_long_file_and_no_unexplained_allow() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let (code, said) = cycles(&src);
    assert_eq!(code, Some(0), "{said}");
    let mut pending = vec![src];
    let mut long = Vec::new();
    let mut unexplained = Vec::new();
    let mut spawners = Vec::new();
    let mut free_text = Vec::new();
    while let Some(d) = pending.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                pending.push(p);
            } else if p.extension().is_some_and(|x| x == "rs") {
                let text = std::fs::read_to_string(&p).unwrap();
                let n = text.lines().count();
                if n > 900 {
                    long.push(format!("{} ({n})", p.display()));
                }
                for (i, line) in text.lines().enumerate() {
                    if line.contains("#[allow(") && !line.contains("reason = ") {
                        unexplained.push(format!("{}:{}", p.display(), i + 1));
                    }
                }
                // A process is made in one place (and git's own helper); a test module may
                // run what it checks against (python3) as it likes.
                let own = text.split("#[cfg(test)]").next().unwrap_or_default();
                let maker = ["src/cli/process.rs", "src/cli/git.rs"]
                    .iter()
                    .any(|m| p.ends_with(m));
                if own.contains("Command::new") && !maker {
                    spawners.push(p.display().to_string());
                }
                // Progress is a typed event (cli/progress.rs): the gate, the runner and the
                // sandbox write no line of their own.
                let runs = ["src/cli/gate/", "src/cli/sandbox/", "src/cli/runner.rs"]
                    .iter()
                    .any(|d| p.to_string_lossy().contains(d));
                if runs && (own.contains("output::error") || own.contains("eprintln!")) {
                    free_text.push(p.display().to_string());
                }
            }
        }
    }
    assert!(long.is_empty(), "over 900 lines: {long:?}");
    assert!(
        spawners.is_empty(),
        "a process made outside cli/process.rs and cli/git.rs: {spawners:?}"
    );
    assert!(
        free_text.is_empty(),
        "progress written as free text, not a cli/progress.rs event: {free_text:?}"
    );
    assert!(
        unexplained.is_empty(),
        "#[allow] without a reason: {unexplained:?}"
    );
}

/// The Rust program the gate builds against the base's crate and the patch's (issue 66,
/// CONTRACT.md 16.5) is a Rust file: rustfmt leaves it as it is (clippy reads it through the
/// unit tests that include it).
#[test]
fn the_rust_program_is_formatted() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let out = Command::new("rustfmt")
        .args(["--check", "--edition", "2021"])
        .arg(root.join("src/cli/gate/programs/replay_rust.rs"))
        .output()
        .expect("rustfmt");
    assert!(
        out.status.success(),
        "rustfmt:\n{}",
        String::from_utf8_lossy(&out.stdout)
    );
}

/// The programs the gate hands an interpreter are Python files (issue 66: the observed run's
/// driver, the canonical writing of values, the plain program; issue 67: the module list),
/// and their own tests (tests/python) pass, run by pytest directly. `.ci/run` lints and
/// formats them with ruff (ruff.toml) before the tests.
#[test]
fn the_python_programs_pass_their_own_tests() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let programs = root.join("src/cli/gate/programs");
    let files = std::fs::read_dir(&programs)
        .expect("programs")
        .filter(|e| {
            e.as_ref()
                .is_ok_and(|e| e.path().extension().is_some_and(|x| x == "py"))
        })
        .count();
    assert!(files >= 4, "{files} Python programs");
    let tests = Command::new("python3")
        .args(["-m", "pytest", "-q", "-p", "no:cacheprovider"])
        .arg(root.join("tests/python"))
        .env("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
        .output()
        .expect("python3");
    assert!(
        tests.status.success(),
        "pytest:\n{}{}",
        String::from_utf8_lossy(&tests.stdout),
        String::from_utf8_lossy(&tests.stderr)
    );
}

/// Issue 67: no two files of one name in `src/cli` (a `mod.rs` aside): a newcomer who opens
/// `twin.rs` knows which one it is. Reading (`cli/reading/`) and rewriting (`cli/rewriting/`)
/// are rooms of their own.
#[test]
fn no_two_files_of_one_name_in_src_cli() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/cli");
    let mut seen: std::collections::BTreeMap<String, Vec<String>> = Default::default();
    let mut dirs = vec![root.clone()];
    while let Some(d) = dirs.pop() {
        for e in std::fs::read_dir(&d).expect("dir").flatten() {
            let p = e.path();
            if p.is_dir() {
                dirs.push(p);
            } else if let Some(name) = p.file_name().and_then(|n| n.to_str())
                && name.ends_with(".rs")
                && name != "mod.rs"
            {
                let at = p.strip_prefix(&root).unwrap().display().to_string();
                seen.entry(name.to_owned()).or_default().push(at);
            }
        }
    }
    let twice: Vec<&Vec<String>> = seen.values().filter(|v| v.len() > 1).collect();
    assert!(twice.is_empty(), "files of one name: {twice:?}");
}
