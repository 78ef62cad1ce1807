//! The changed Rust code against the base (issue 66; CONTRACT.md 16.5; docs/design/replay.md),
//! the runner's side. For each free `pub fn` whose body the patch changes, whose argument types
//! have strategies and whose signature the base's function has too, one program
//! (programs/replay_rust.rs and the calls written here) is built in the suite's room against
//! both versions of the crate — the judged one and the base's, exported beside it under a
//! renamed package (two packages of one name cannot share a lock file) — and run on each
//! version twice: the calls the base's tests (and the tests the patch adds) make with literal
//! arguments, each one's neighbours, and inputs drawn from the argument types. Results are
//! their `Debug` text (the standard library's, never a hand-written `PartialEq`); they are
//! paired by call and neighbour as Python's are ([`super::base_replay::compare`]), and 16.3's
//! table decides in the core.

use std::collections::BTreeSet;

use super::gather::{Gathered, integrity_after};
use super::plain_program::{PlainLine, result};
use crate::cli::error::CliError;
use crate::cli::reading::rust_signatures::{self, ArgType, LiteralCall, PubFn};
use crate::cli::runner::{Outcome, Place, Run};
use crate::cli::sandbox::Room;
use crate::core::gate::{
    BehaviorFacts, CallEnd, IntegrityFinding, MAX_REPLAYED_CALLS, ReplayedCall, UnrecordedCalls,
};

/// The shared part of every program.
const RUNTIME: &str = include_str!("programs/replay_rust.rs");
/// The most functions compared per gate, and the inputs drawn for each.
const MAX_FUNCTIONS: usize = 8;
const DRAWN: usize = 100;
/// The most bytes of the base's test files read for their literal calls.
const MAX_TEST_BYTES: usize = 4 << 20;
/// The most times a program is started again after an input that ended it.
const MAX_RESTARTS: usize = 3;

/// A changed function the programs compare.
struct Compared {
    file: String,
    f: PubFn,
    params: Vec<(String, ArgType)>,
    /// Its path from the crate's root (`inner::named`).
    path: String,
    calls: Vec<LiteralCall>,
}

/// What is compared: the functions, their package, the integers the patch adds.
type Found = (Vec<Compared>, Package, Vec<i64>);

/// The crate a changed file belongs to: its directory in the tree and its package name.
struct Package {
    dir: String,
    name: String,
}

/// Compares the changed `pub fn`s of the Rust files with the base's in `room` (after the
/// suite's observed run); `None` when `[replay]` compares nothing with the base, or no changed
/// `.rs` file holds one.
pub(super) fn replay(
    g: &Gathered,
    room: &Room,
    (label, seconds): (&str, f64),
    cancel: Option<&std::sync::atomic::AtomicBool>,
) -> Result<(Option<BehaviorFacts>, Option<IntegrityFinding>), CliError> {
    let Some(config) = g.config.replay.filter(|r| r.on() && r.against_base()) else {
        return Ok((None, None));
    };
    // (16.2 is Python's: a Rust run records nothing to replay, so `behaves_under_test` is off.)
    let mut facts = super::plain_replay::no_calls(&config);
    facts.behaves_under_test = crate::core::gate::ObserveRule::Off;
    let (compared, package, literals) = {
        let found = functions(g, room, usize::from(config.calls), &mut facts)?;
        match found {
            Some(f) => f,
            None => return Ok((None, None)),
        }
    };
    if compared.is_empty() {
        return Ok((Some(facts), None));
    }
    let seed = g.facts.configured.as_ref().map_or(0, |c| c.seed);
    let name = super::twin::drawn(seed, "replay", "rust");
    let built = build(
        g,
        room,
        (&name, &package),
        &compared,
        &literals,
        config.neighbours,
    )?;
    let timeout = std::time::Duration::from_secs_f64(
        (seconds * 2.0).clamp(30.0, g.config.suite.timeout().as_secs_f64()),
    );
    for (k, c) in compared.iter().enumerate() {
        let first = facts.calls.len();
        let mut specs: Vec<(usize, String)> = Vec::new();
        for (i, call) in c.calls.iter().enumerate() {
            specs.push((first + i, String::new()));
            facts.calls.push(replayed(c, &call.test, &call.written));
        }
        specs.push((first + c.calls.len(), String::new()));
        facts
            .calls
            .push(replayed(c, "(drawn)", &format!("{DRAWN} inputs drawn")));
        let binary = format!("target/debug/{name}-{k}");
        if !built.contains(&k) {
            facts.unrecorded.push(UnrecordedCalls {
                file: c.file.clone(),
                function: c.path.clone(),
                why: "the program that calls it did not build".to_owned(),
                count: 1,
            });
            continue;
        }
        let run = |version: &str, n: usize| {
            let label = format!(
                "{label}: `{}` called on the {version}'s crate, in a plain program ({} of 2)",
                c.path,
                n + 1
            );
            made(room, &binary, version, &label, timeout, cancel)
        };
        let (patch, base) = std::thread::scope(|s| {
            let p2 = s.spawn(|| run("patch", 1));
            let b1 = s.spawn(|| run("base", 0));
            let b2 = s.spawn(|| run("base", 1));
            let p1 = run("patch", 0);
            let join = |h: std::thread::ScopedJoinHandle<'_, _>| {
                h.join()
                    .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
            };
            ([p1, join(p2)], [join(b1), join(b2)])
        });
        let [p1, p2] = patch;
        let [b1, b2] = base;
        let (Some(p1), Some(p2), Some(b1), Some(b2)) = (p1?, p2?, b1?, b2?) else {
            return Ok((None, None));
        };
        let (patch, base) = ([p1, p2], [b1, b2]);
        // The patch's own answers stand as each call's recorded and plain results (16.2 is
        // Python's: nothing is recorded in a Rust run).
        for (j, (call, _)) in specs.iter().enumerate() {
            if let Some(rc) = facts.calls.get_mut(*call) {
                let answer = |lines: &[PlainLine]| {
                    lines
                        .iter()
                        .find(|l| l.i == Some(j) && l.n.unwrap_or(0) == 0)
                        .and_then(|l| match (&l.result, &l.raised) {
                            (Some(r), _) => Some(result(CallEnd::Returned, r)),
                            (None, Some(t)) => Some(result(CallEnd::Raised, t)),
                            _ => None,
                        })
                };
                if let (Some(a), Some(b)) = (answer(&patch[0]), answer(&patch[1])) {
                    rc.recorded = a.clone();
                    rc.plain = vec![a, b];
                }
            }
        }
        let shown = |i: usize| {
            facts.calls.get(i).map_or(String::new(), |c| {
                result(CallEnd::Unreplayed, &c.arguments).shown
            })
        };
        let rows = super::base_replay::compare(&patch, &base, &specs, &shown);
        facts.against_base.extend(rows);
    }
    facts.calls.truncate(MAX_REPLAYED_CALLS);
    let finding = integrity_after(g, room, label)?;
    Ok((Some(facts), finding))
}

/// A call as the facts list it before its programs ran: not made.
fn replayed(c: &Compared, check: &str, arguments: &str) -> ReplayedCall {
    let none = result(CallEnd::Unreplayed, "not made");
    ReplayedCall {
        function: c.path.chars().take(512).collect(),
        file: c.file.clone(),
        line: c.f.rows.0.max(1),
        check: check.chars().take(512).collect(),
        arguments: result(CallEnd::Unreplayed, arguments).shown,
        recorded: none.clone(),
        plain: vec![none.clone(), none],
    }
}

/// The changed functions to compare, the package they are in, and the integers the patch
/// adds; the ones that cannot be compared said in `facts.unrecorded`. `None`: no changed
/// `.rs` file of a library's sources.
fn functions(
    g: &Gathered,
    room: &Room,
    most_calls: usize,
    facts: &mut BehaviorFacts,
) -> Result<Option<Found>, CliError> {
    let files: Vec<(&String, &BTreeSet<u32>)> = g
        .watched
        .files
        .iter()
        .filter(|(f, _)| f.ends_with(".rs"))
        .collect();
    let Some(package) = files.iter().find_map(|(f, _)| package_of(room, f)) else {
        return Ok(None);
    };
    let src = format!("{}src/", package.dir);
    let paths: Vec<&str> = files.iter().map(|(f, _)| f.as_str()).collect();
    let patch = crate::cli::git::blobs(&g.tree, &paths, MAX_TEST_BYTES)?;
    let base = crate::cli::git::blobs(&g.base, &paths, MAX_TEST_BYTES)?;
    let mut literals: Vec<i64> = Vec::new();
    let mut compared: Vec<Compared> = Vec::new();
    let mut lost = |file: &str, function: &str, why: String| {
        facts.unrecorded.push(UnrecordedCalls {
            file: file.to_owned(),
            function: function.chars().take(512).collect(),
            why: why.chars().take(200).collect(),
            count: 1,
        });
    };
    for (((file, lines), patch), base) in files.iter().zip(patch).zip(base) {
        let patch = patch.unwrap_or_default();
        let Some(module) = file.strip_prefix(&src).and_then(module_of) else {
            // Another package's library (one package is built per gate), or no library's
            // sources (a test, a binary, a build script): its changed functions are said.
            let other = package_of(room, file).filter(|p| p.dir != package.dir);
            if let Some(other) = other {
                for f in rust_signatures::functions(&patch) {
                    if lines.iter().any(|l| (f.rows.0..=f.rows.1).contains(l)) {
                        let why = format!(
                            "in package {}: one package is compared per gate ({})",
                            other.name, package.name
                        );
                        lost(file, &f.name, why);
                    }
                }
            }
            continue;
        };
        for n in crate::cli::reading::integers::rust(&patch, lines) {
            if !literals.contains(&n)
                && literals.len() < crate::cli::reading::integers::MAX_INTEGERS
            {
                literals.push(n);
            }
        }
        let theirs = rust_signatures::functions(&base.unwrap_or_default());
        for f in rust_signatures::functions(&patch) {
            if !lines.iter().any(|l| (f.rows.0..=f.rows.1).contains(l)) {
                continue;
            }
            let path: Vec<&str> = module
                .iter()
                .chain(&f.module)
                .chain(&f.owner)
                .map(String::as_str)
                .chain([f.name.as_str()])
                .collect();
            let path = path.join("::");
            let params = match &f.params {
                Ok(p) => p.clone(),
                Err(why) => {
                    lost(file, &path, why.clone());
                    continue;
                }
            };
            let same = theirs.iter().any(|b| {
                (&b.name, &b.module, &b.owner, &b.params, &b.returns)
                    == (&f.name, &f.module, &f.owner, &f.params, &f.returns)
            });
            if !same {
                // A new function, or one whose signature changed: nothing of the base's to
                // call it as.
                lost(
                    file,
                    &path,
                    "the base has no function of this signature".to_owned(),
                );
                continue;
            }
            if compared.len() == MAX_FUNCTIONS {
                lost(
                    file,
                    &path,
                    format!("over the {MAX_FUNCTIONS} functions compared per gate"),
                );
                continue;
            }
            compared.push(Compared {
                file: (*file).clone(),
                f,
                params,
                path,
                calls: Vec::new(),
            });
        }
    }
    literal_calls(g, &package, &mut compared, most_calls)?;
    Ok(Some((compared, package, literals)))
}

/// The calls with literal arguments the base's tests make to each function (its test
/// modules, its `tests/` files), and the tests the patch adds, first seen first.
fn literal_calls(
    g: &Gathered,
    package: &Package,
    compared: &mut [Compared],
    most: usize,
) -> Result<(), CliError> {
    let listed = |tree: &str| -> Result<Vec<String>, CliError> {
        Ok(crate::cli::export::ls_tree(tree)?
            .into_iter()
            .filter(|e| e.mode & 0o170000 == 0o100000)
            .filter_map(|e| String::from_utf8(e.path).ok())
            .filter(|p| p.starts_with(&package.dir) && p.ends_with(".rs"))
            .collect())
    };
    let mut sources: Vec<(String, bool, Vec<u8>)> = Vec::new();
    let mut budget = MAX_TEST_BYTES;
    for (tree, files) in [
        (&g.base, listed(&g.base)?),
        (
            &g.judged,
            g.added
                .iter()
                .filter(|f| f.ends_with(".rs"))
                .cloned()
                .collect(),
        ),
    ] {
        let paths: Vec<&str> = files.iter().map(String::as_str).collect();
        for (file, blob) in files
            .iter()
            .zip(crate::cli::git::blobs(tree, &paths, budget)?)
        {
            let Some(blob) = blob else { continue };
            budget = budget.saturating_sub(blob.len());
            let all_test = file
                .strip_prefix(&package.dir)
                .is_some_and(|p| p.starts_with("tests/"));
            let stem = all_test.then(|| {
                std::path::Path::new(file)
                    .file_stem()
                    .map_or(String::new(), |s| s.to_string_lossy().into_owned())
            });
            sources.push((stem.unwrap_or_default(), all_test, blob));
        }
    }
    for c in compared.iter_mut() {
        let types: Vec<ArgType> = c.params.iter().map(|(_, t)| t.clone()).collect();
        for (stem, all_test, blob) in &sources {
            for mut call in rust_signatures::literal_calls(blob, &c.f.name, &types, *all_test) {
                if c.calls.len() == most {
                    break;
                }
                if c.calls.iter().any(|k| k.args == call.args) {
                    continue;
                }
                if !stem.is_empty() {
                    call.test = format!("{stem}::{}", call.test);
                }
                c.calls.push(call);
            }
        }
    }
    Ok(())
}

/// The package whose sources hold `file`: the nearest `Cargo.toml` with a `[package]` above it
/// in the room's copy.
fn package_of(room: &Room, file: &str) -> Option<Package> {
    let mut dir = std::path::Path::new(file).parent();
    while let Some(d) = dir {
        let manifest = room.tree.join(d).join("Cargo.toml");
        if let Ok(text) = std::fs::read_to_string(&manifest) {
            let doc: crate::cli::documents::CargoManifest = toml::from_str(&text).ok()?;
            let name = doc.package?.name?;
            let dir = match d.as_os_str().is_empty() {
                true => String::new(),
                false => format!("{}/", d.to_string_lossy()),
            };
            return Some(Package { dir, name });
        }
        dir = d.parent();
    }
    None
}

/// The module path of a library source file (`lib.rs`: the root; `a/mod.rs`, `a.rs`: `a`);
/// `None` for a binary's (`main.rs`, `bin/`).
fn module_of(under_src: &str) -> Option<Vec<String>> {
    if under_src == "main.rs" || under_src.starts_with("bin/") {
        return None;
    }
    let stem = under_src.strip_suffix(".rs")?;
    let mut parts: Vec<String> = stem.split('/').map(str::to_owned).collect();
    if matches!(parts.last().map(String::as_str), Some("mod" | "lib")) {
        parts.pop();
    }
    Some(parts)
}

/// `[package] name` of a manifest set to `to`, the rest as written; `None` when no such line.
fn renamed(manifest: &str, to: &str) -> Option<String> {
    let mut out = String::with_capacity(manifest.len() + to.len());
    let mut in_package = false;
    let mut done = false;
    for line in manifest.split_inclusive('\n') {
        let t = line.trim();
        if t.starts_with('[') {
            in_package = t == "[package]";
        }
        if in_package && !done && t.split('=').next().is_some_and(|k| k.trim() == "name") {
            out.push_str(&format!("name = \"{to}\"\n"));
            done = true;
            continue;
        }
        out.push_str(line);
    }
    done.then_some(out)
}

/// Writes the programs and the base's crate into the room's `target/` (scratch) and builds
/// them; the indices of the programs that built.
fn build(
    g: &Gathered,
    room: &Room,
    (name, package): (&str, &Package),
    compared: &[Compared],
    literals: &[i64],
    most: u8,
) -> Result<BTreeSet<usize>, CliError> {
    let at = room.tree.join("target").join(name);
    let base = at.join("base");
    let harness = at.join("harness");
    let failed =
        |e: std::io::Error| CliError::software(format!("cannot write {}: {e}", at.display()));
    std::fs::create_dir_all(&base).map_err(failed)?;
    std::fs::create_dir_all(&harness).map_err(failed)?;
    crate::cli::export::export_tree(&g.base, &base, None)?;
    let manifest = base.join(&package.dir).join("Cargo.toml");
    let base_name = format!("{}-{name}", package.name);
    let text = std::fs::read_to_string(&manifest).unwrap_or_default();
    let Some(text) = renamed(&text, &base_name) else {
        return Ok(BTreeSet::new());
    };
    std::fs::write(&manifest, text).map_err(failed)?;
    let up = "../../../";
    let mut cargo = format!(
        "[package]\nname = \"{name}\"\nversion = \"0.0.0\"\nedition = \"2021\"\npublish = false\n\n[workspace]\n\n[dependencies]\njudged = {{ path = \"{up}{dir}\", package = \"{pkg}\" }}\nbased = {{ path = \"../base/{dir}\", package = \"{base_name}\" }}\n\n[profile.dev]\ndebug = false\n",
        dir = package.dir.trim_end_matches('/'),
        pkg = package.name,
    );
    let seed = g.facts.configured.as_ref().map_or(0, |c| c.seed);
    for (k, c) in compared.iter().enumerate() {
        cargo.push_str(&format!(
            "\n[[bin]]\nname = \"{name}-{k}\"\npath = \"f{k}.rs\"\n"
        ));
        let text = program(c, literals, usize::from(most), seed);
        std::fs::write(harness.join(format!("f{k}.rs")), text).map_err(failed)?;
    }
    std::fs::write(harness.join("runtime.rs"), RUNTIME).map_err(failed)?;
    std::fs::write(harness.join("Cargo.toml"), cargo).map_err(failed)?;
    if let Ok(lock) = std::fs::read(room.tree.join(&package.dir).join("Cargo.lock"))
        .or_else(|_| std::fs::read(room.tree.join("Cargo.lock")))
    {
        std::fs::write(harness.join("Cargo.lock"), lock).map_err(failed)?;
    }
    room.settle_at(&at)?;
    let argv: Vec<String> = [
        "env",
        "CARGO_TARGET_DIR=target",
        "cargo",
        "build",
        "--offline",
        "--quiet",
        "--keep-going",
        "--manifest-path",
    ]
    .iter()
    .map(|s| (*s).to_owned())
    .chain([format!("target/{name}/harness/Cargo.toml")])
    .collect();
    let label =
        "the changed functions' plain programs, built against the base's crate and the patch's";
    let timeout = g
        .config
        .build
        .as_ref()
        .map_or(std::time::Duration::from_secs(600), |b| b.timeout());
    if let Outcome::Cancelled = Run::new(label, &argv, timeout, Place::Room(room)).start()? {
        return Ok(BTreeSet::new());
    }
    Ok((0..compared.len())
        .filter(|k| room.tree.join(format!("target/debug/{name}-{k}")).is_file())
        .collect())
}

/// One function's program: its calls, their neighbours, the inputs drawn.
fn program(c: &Compared, literals: &[i64], most: usize, seed: u64) -> String {
    let tuple = format!(
        "({})",
        c.params
            .iter()
            .map(|(_, t)| format!("{},", t.owned()))
            .collect::<String>()
    );
    let args: Vec<String> = c
        .params
        .iter()
        .enumerate()
        .map(|(j, (_, t))| t.pass(&format!("a.{j}")))
        .collect();
    let calls: Vec<String> = c
        .calls
        .iter()
        .map(|k| {
            format!(
                "({})",
                k.args.iter().map(|a| format!("{a},")).collect::<String>()
            )
        })
        .collect();
    let mut vary = String::new();
    for (j, (pattern, _)) in c.params.iter().enumerate() {
        let shown: String = match pattern.chars().all(|c| c.is_alphanumeric() || c == '_') {
            true => format!("`{pattern}`"),
            false => format!("argument {}", j + 1),
        };
        vary.push_str(&format!(
            "        for (label, v) in c.{j}.variants(literals) {{\n            if n > {most} {{ break; }}\n            let mut d = c.clone();\n            d.{j} = v;\n            out.call((i, n), Some(&format!(\"{shown} {{label}}\")), &d, || call(base, &d));\n            n += 1;\n        }}\n"
        ));
    }
    let draws: String = c
        .params
        .iter()
        .map(|_| "Value::draw(&mut rng, literals),".to_owned())
        .collect();
    let drawn = if c.params.is_empty() { 1 } else { DRAWN };
    format!(
        "#![allow(warnings)]\ninclude!(\"runtime.rs\");\n\nfn call(base: bool, a: &{tuple}) -> Option<String> {{\n    if base {{\n        let r = based::{path}({args});\n        (&Shown(&r)).shown()\n    }} else {{\n        let r = judged::{path}({args});\n        (&Shown(&r)).shown()\n    }}\n}}\n\nfn main() {{\n    let mut out = Out::open();\n    let base = out.base;\n    let literals: &[i128] = &[{lits}];\n    let calls: Vec<{tuple}> = vec![{calls}];\n    for (i, c) in calls.iter().enumerate() {{\n        out.call((i, 0), None, c, || call(base, c));\n        let mut n = 1;\n{vary}    }}\n    let mut rng = Rng::new({seed});\n    for n in 1..={drawn} {{\n        let d: {tuple} = ({draws});\n        out.call((calls.len(), n), Some(\"drawn\"), &d, || call(base, &d));\n    }}\n    out.end();\n}}\n",
        path = c.path,
        args = args.join(", "),
        lits = literals
            .iter()
            .map(|l| format!("{l}"))
            .collect::<Vec<_>>()
            .join(", "),
        calls = calls.join(", "),
    )
}

/// One version's answers: the program run, and started again after an input that ended it
/// (at most [`MAX_RESTARTS`] times); `None` when cancelled.
fn made(
    room: &Room,
    binary: &str,
    version: &str,
    label: &str,
    timeout: std::time::Duration,
    cancel: Option<&std::sync::atomic::AtomicBool>,
) -> Result<Option<Vec<PlainLine>>, CliError> {
    let mut lines: Vec<PlainLine> = Vec::new();
    let mut from = 0;
    for _ in 0..=MAX_RESTARTS {
        let argv = [
            binary.to_owned(),
            version.to_owned(),
            crate::cli::runner::JUNIT.to_owned(),
            from.to_string(),
        ];
        let mut run = Run::new(label, &argv, timeout, Place::Room(room));
        if let Some(flag) = cancel {
            run = run.cancel(flag);
        }
        let Outcome::Ran(ran) = run.start()? else {
            return Ok(None);
        };
        let got = ran
            .receipt_at
            .as_deref()
            .map(super::plain_program::read_lines)
            .unwrap_or_default();
        let ended = got.iter().any(|l| l.end.is_some());
        let answered = got.iter().filter(|l| l.i.is_some()).count();
        lines.extend(got);
        if ended {
            break;
        }
        // The input after the last answered ended the program (or hung): left unanswered.
        from += answered + 1;
    }
    Ok(Some(lines))
}

/// The plain program's shared part, as the programs include it.
#[cfg(test)]
#[allow(dead_code, reason = "the programs use all of it; the tests, a part")]
mod runtime {
    include!("programs/replay_rust.rs");
}

#[cfg(test)]
mod tests {
    use super::runtime::{Rng, Value};
    use super::*;

    /// CONTRACT.md 16.3's variants, written by hand: each kind's neighbours and their labels,
    /// the value itself never among them, the patch's literals ± 1 as values and as lengths.
    #[test]
    fn each_kind_s_neighbours_are_the_contract_s() {
        let labels = |v: Vec<(String, u64)>| v.into_iter().collect::<Vec<_>>();
        assert_eq!(
            labels(5u64.variants(&[16])),
            [
                ("+ 1".to_owned(), 6),
                ("- 1".to_owned(), 4),
                ("0".to_owned(), 0),
                ("large".to_owned(), u64::MAX),
                ("= 15".to_owned(), 15),
                ("= 16".to_owned(), 16),
                ("= 17".to_owned(), 17),
            ]
        );
        let signed: Vec<i8> = (-128i8).variants(&[]).into_iter().map(|(_, v)| v).collect();
        assert_eq!(
            signed,
            [-127, 0, 127],
            "no overflow: - 1 and negated do not exist"
        );
        let text: Vec<(String, String)> = "ab".to_owned().variants(&[3]);
        assert_eq!(
            text,
            [
                ("empty".to_owned(), String::new()),
                ("one shorter".to_owned(), "a".to_owned()),
                ("one longer".to_owned(), "abb".to_owned()),
                ("of length 4".to_owned(), "abab".to_owned()),
            ]
        );
        let list: Vec<usize> = vec![7u8, 8]
            .variants(&[])
            .into_iter()
            .map(|(_, v)| v.len())
            .collect();
        assert_eq!(list, [0, 1, 3]);
        let option: Vec<String> = Some(true)
            .variants(&[])
            .into_iter()
            .map(|(l, v)| format!("{l}: {v:?}"))
            .collect();
        assert_eq!(option, ["None: None", "Some, negated: Some(false)"]);
    }

    /// The inputs drawn are the seed's alone: the base's program and the patch's draw the same.
    #[test]
    fn the_same_seed_draws_the_same_inputs() {
        let draw = |seed| {
            let mut rng = Rng::new(seed);
            (0..50)
                .map(|_| <(Vec<String>, i64, Option<f32>)>::draw_all(&mut rng))
                .collect::<Vec<_>>()
        };
        assert_eq!(format!("{:?}", draw(7)), format!("{:?}", draw(7)));
        assert_ne!(format!("{:?}", draw(7)), format!("{:?}", draw(8)));
    }

    trait DrawAll {
        fn draw_all(rng: &mut Rng) -> Self;
    }

    impl DrawAll for (Vec<String>, i64, Option<f32>) {
        fn draw_all(rng: &mut Rng) -> Self {
            (
                Value::draw(rng, &[16]),
                Value::draw(rng, &[16]),
                Value::draw(rng, &[16]),
            )
        }
    }

    /// A result's `Debug` text where its type has one; none where it has not.
    #[test]
    #[allow(clippy::needless_borrow, reason = "as the programs spell it")]
    fn a_result_without_debug_is_not_shown() {
        use super::runtime::{Shown, ViaDebug, WithoutDebug};
        struct Opaque;
        let r = vec![1u8];
        assert_eq!((&Shown(&r)).shown().as_deref(), Some("[1]"));
        let o = Opaque;
        assert_eq!((&Shown(&o)).shown(), None);
    }

    #[test]
    fn a_library_file_s_module_path() {
        let rows: [(&str, Option<&[&str]>); 6] = [
            ("lib.rs", Some(&[])),
            ("a.rs", Some(&["a"])),
            ("a/mod.rs", Some(&["a"])),
            ("a/b.rs", Some(&["a", "b"])),
            ("main.rs", None),
            ("bin/tool.rs", None),
        ];
        for (file, want) in rows {
            let want = want.map(|w| w.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>());
            assert_eq!(module_of(file), want, "{file}");
        }
    }

    #[test]
    fn the_base_s_package_is_renamed_and_nothing_else() {
        let manifest = "[package]\nname = \"budget\"\nversion = \"0.1.0\"\n\n[dependencies]\nname = { path = \"x\" }\n";
        assert_eq!(
            renamed(manifest, "budget-x").as_deref(),
            Some(
                "[package]\nname = \"budget-x\"\nversion = \"0.1.0\"\n\n[dependencies]\nname = { path = \"x\" }\n"
            )
        );
        assert_eq!(renamed("[workspace]\nmembers = []\n", "x"), None);
    }
}
