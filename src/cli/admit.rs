//! `patchgate admit`: the two-commit proof, run for real (CONTRACT.md section 10).
//!
//! The check's command (from the base commit's `patchgate.toml`) runs N times on the base tree
//! and N times on the mutant, each tree a fresh copy from git's objects in its own clean room
//! (the sandbox the config asks for, as the gate runs): the checkout the user stands in is
//! never touched, and the copies are removed on every way out (Ctrl-C caught so they are).
//! Both fixtures trees are sealed; the core (or a server, `--server`) decides.

use std::path::{Path, PathBuf};
use std::time::Duration;

use clap::{ArgGroup, Args};
use serde_json::Value;

use super::config::{CONFIG_FILE, GateConfig};
use super::documents::parse_document;
use super::error::{CliError, CliResult};
use super::git::{base_file, commit_of, enter_repository, git};
use super::runner::{Place, Run, property_argv, property_receipt};
use super::sandbox::Room;
use super::{RemoteArgs, interrupt, output, remote};
use crate::core::admit::{AdmissionRecord, AdmitDecision, AdmitOutcome};
use crate::core::path::{PrefixTrie, RepoPath};
use crate::core::runs::{CatchCodes, RunOutcome, counted};
use crate::exit::Exit;

#[derive(Debug, Args)]
#[command(group(ArgGroup::new("check").required(true).args(["id", "test"])))]
pub struct AdmitArgs {
    /// The catalog property to prove (its id in the base commit's catalog).
    pub id: Option<String>,
    /// Prove a test of the fixture suite instead (`classname::name`), run with the config's
    /// `[suite] test_command`. Its answer (`--json`) is the seeded-bug proof `patchgate freeze
    /// --caught-seeded-bug PROOF` reads.
    #[arg(long)]
    pub test: Option<String>,
    /// The mutant: a commit that deletes the invariant and changes nothing else.
    #[arg(long)]
    pub mutant: String,
    /// The unmodified tree; the config and the catalog are read from it.
    #[arg(long, default_value = "HEAD")]
    pub base: String,
    /// The config file's path in the base commit.
    #[arg(long, default_value = CONFIG_FILE)]
    pub config: String,
    /// Run as if started in this directory (inside the repository).
    #[arg(short = 'C', long = "directory")]
    pub directory: Option<PathBuf>,
    /// Runs on each tree, 2 to 10 (default: the config's `[properties] runs`).
    #[arg(long, value_parser = clap::value_parser!(u8).range(2..=10))]
    pub runs: Option<u8>,
    /// On admission, write the record into this checkout's catalog file as the row's
    /// `admitted` (a change to review and commit; `patchgate gate` never writes it).
    #[arg(long, conflicts_with = "test")]
    pub write: bool,
    /// Print the full answer as JSON instead of the one line.
    #[arg(long)]
    pub json: bool,
    /// Write the facts gathered (the `POST /admit` body) here, to audit or replay them.
    #[arg(long)]
    pub facts_out: Option<PathBuf>,
    /// Show the runs' test output (by default it goes to a log file, named on stderr, and
    /// each run is one progress line).
    #[arg(long)]
    pub verbose: bool,
    #[command(flatten)]
    pub remote: RemoteArgs,
}

/// What is being proven, and how to run it.
struct Check {
    id: String,
    kind: &'static str,
    command: Vec<String>,
    timeout: Duration,
    catch: CatchCodes,
    /// Paths the mutant may not edit: the gate's guarded inputs, and the property's source.
    guarded: Vec<String>,
    /// A property's test cases in the receipt (`[properties] case`).
    case: Option<String>,
    /// A property's `source` paths in the catalog: their digest on the base is recorded.
    sources: Vec<String>,
    /// The cases the base's census records as skipped: not the property's (issue 64).
    skips: super::runner::BaseSkips,
}

pub fn run(args: AdmitArgs) -> CliResult {
    interrupt::catch()?;
    super::sandbox::harden_runner();
    enter_repository(args.directory.as_deref())?;

    let base = commit_of(&args.base)?;
    let mutant = commit_of(&args.mutant)?;
    if base == mutant {
        return Err(CliError::usage(format!(
            "--mutant {} is the base commit itself: a mutant deletes the invariant",
            args.mutant
        )));
    }
    let config = GateConfig::from_base(&base, &args.base, &args.config)?;
    let check = check_of(&args, &config, &base)?;
    refuse_guarded_edits(&check, &base, &mutant)?;
    let runs = args.runs.unwrap_or(config.properties.runs);

    // The proof, in two clean rooms (CONTRACT.md section 12.2): each tree a fresh copy from
    // git's objects, run in the sandbox the base's config asks for; each starts from its own copy
    // of the build cache (`patchgate warm`), when there is one, and shares nothing it builds.
    let (seals, base_runs, mutant_runs) = {
        let cache = config.build_cache();
        let base_room = super::runner::open_room(&config.sandbox, &base, cache.as_ref())?;
        let mutant_room = super::runner::open_room(&config.sandbox, &mutant, cache.as_ref())?;
        interrupt::check()?;
        let base_seal = super::seal::seal_of(&base_room.tree, &config.fixtures, "base")?;
        let mutant_seal = super::seal::seal_of(&mutant_room.tree, &config.fixtures, "mutant")?;
        // Quiet unless `--verbose`: the test output in a log file of its own, one line per
        // run on stderr.
        let log = if args.verbose {
            None
        } else {
            let dir = super::git::state_dir()?.join("logs");
            let path = dir.join(format!("admit-{}.log", safe_name(&check.id)));
            let file = std::fs::create_dir_all(&dir)
                .and_then(|()| std::fs::File::create(&path))
                .map_err(|e| CliError::software(format!("cannot write {}: {e}", path.display())))?;
            output::error(&format!(
                "admit {}: the runs' test output goes to {} (`--verbose` shows it here)",
                check.id,
                path.display()
            ));
            Some(file)
        };
        let base_runs = run_side(&check, "base", &base_room, runs, log.as_ref())?;
        // The mutant's runs detect, they do not shrink (issue 50): they need the failure,
        // not its smallest form.
        detect_only(&mutant_room, &check.sources)?;
        let mutant_runs = run_side(&check, "mutant", &mutant_room, runs, log.as_ref())?;
        ((base_seal, mutant_seal), base_runs, mutant_runs)
    };
    interrupt::check()?;

    let doc = super::wire::AdmitBody {
        check_id: &check.id,
        kind: check.kind,
        seal: super::wire::TreeSeals {
            base: seals.0,
            mutant: seals.1,
        },
        base_runs: &base_runs,
        mutant_runs: &mutant_runs,
        catch_exit_codes: &check.catch,
        mutant: &mutant,
        // The property's source as it was proven: the gate sees when it changes (issue 50).
        source: super::git::source_digest(&base, &check.sources)?,
    };
    if let Some(path) = &args.facts_out {
        let text = serde_json::to_string_pretty(&doc).unwrap_or_default() + "\n";
        std::fs::write(path, text)
            .map_err(|e| CliError::software(format!("cannot write {}: {e}", path.display())))?;
    }
    let body = serde_json::to_vec(&doc).unwrap_or_default();
    let answer = remote::decide::<AdmitDecision>(&args.remote, body, |problem| {
        CliError::problem(
            Exit::Software,
            "the gathered admission facts are invalid:",
            &problem,
        )
    })?;
    if args.write {
        match (&answer.outcome, &answer.record) {
            (AdmitOutcome::Admitted, Some(record)) => {
                write_record(Path::new(&config.catalog), &check.id, record)?;
                // The mutant itself, for the gate's re-proof (CONTRACT.md section 11.5): a CI
                // clone without the mutant's branch still has it, in the base.
                let diff = git(&[
                    "diff",
                    "--no-color",
                    "--no-ext-diff",
                    "--no-textconv",
                    "--full-index",
                    "--binary",
                    &base,
                    &mutant,
                ])?;
                let path = config.properties.mutant_path(&check.id);
                if let Some(dir) = Path::new(&path).parent() {
                    std::fs::create_dir_all(dir).map_err(|e| {
                        CliError::software(format!("cannot make {}: {e}", dir.display()))
                    })?;
                }
                std::fs::write(&path, diff)
                    .map_err(|e| CliError::software(format!("cannot write {path}: {e}")))?;
                output::error(&format!(
                    "wrote the proof into {} as `admitted` of {}, and its mutant into {path}: review the change and commit both",
                    config.catalog, check.id
                ));
            }
            _ => output::error(&format!(
                "not admitted: nothing written to {}",
                config.catalog
            )),
        }
    }
    remote::print::<AdmitDecision>(&answer, args.json)
}

/// The check named on the command line, with its command from the config.
fn check_of(args: &AdmitArgs, config: &GateConfig, base: &str) -> Result<Check, CliError> {
    let mut guarded = config.guarded(&args.config);
    if let Some(test) = &args.test {
        let command = config.suite.test_command.clone().ok_or_else(|| {
            CliError::data(format!(
                "{} has no `[suite] test_command`: add the command that runs one test (`{{id}}`, `{{classname}}`, `{{name}}`) to prove a test",
                args.config
            ))
        })?;
        return Ok(Check {
            id: test.clone(),
            kind: "test",
            command,
            timeout: config.suite.timeout(),
            catch: config.suite.catch.clone(),
            guarded,
            case: None,
            sources: Vec::new(),
            skips: Default::default(),
        });
    }
    let id = args.id.clone().unwrap_or_default();
    let bytes = base_file(base, &config.catalog)?.ok_or_else(|| {
        CliError::data(format!(
            "the base commit {} has no catalog {}",
            args.base, config.catalog
        ))
    })?;
    let catalog = parse_document(
        &bytes,
        &format!("{}:{}", args.base, config.catalog),
        "catalog",
    )?;
    let (rows, errors) = super::documents::catalog_properties(&catalog, &config.properties.catch);
    if let Some(wrong) = (&errors).into_iter().next() {
        return Err(CliError::data(format!(
            "the base commit's catalog {} is not valid at {}: {}",
            config.catalog, wrong.pointer, wrong.detail
        )));
    }
    let row = rows
        .into_iter()
        .find(|p| p.id == id)
        .ok_or_else(|| {
            CliError::data(format!(
                "the base commit's catalog {} has no property {id:?}: add its row (and commit it) first",
                config.catalog
            ))
        })?;
    let sources: Vec<String> = row.source.iter().map(|s| s.as_str().to_owned()).collect();
    guarded.extend(sources.iter().cloned());
    Ok(Check {
        id,
        kind: "property",
        command: config.properties.command.clone(),
        timeout: config.properties.timeout(),
        catch: config.properties.catch.clone(),
        guarded,
        case: config.properties.case.clone(),
        sources,
        skips: base_census_skips(config, base, &args.base)?,
    })
}

/// The base's census skips (issue 64: a property module with a version-dependent `skipif`
/// can be admitted): none without a census.
fn base_census_skips(
    config: &GateConfig,
    base: &str,
    base_ref: &str,
) -> Result<super::runner::BaseSkips, CliError> {
    let Some(path) = config.suite.census.as_deref() else {
        return Ok(Default::default());
    };
    let Some(bytes) = base_file(base, path)? else {
        return Ok(Default::default());
    };
    let (census, _) = super::gate::parse_census(&bytes, &format!("{base_ref}:{path}"))?;
    Ok(super::runner::base_skips(Some(&census)))
}

/// A mutant changes the code, never the check or the gate's rules: a proof that ran a different
/// check on each tree would prove nothing. (Fixtures are the seal's business: rule 1.)
fn refuse_guarded_edits(check: &Check, base: &str, mutant: &str) -> Result<(), CliError> {
    let out = git(&["diff", "-z", "--name-only", "--no-renames", base, mutant])?;
    let guarded: Vec<RepoPath> = check
        .guarded
        .iter()
        .filter_map(|g| RepoPath::parse(g).ok())
        .collect();
    let trie = PrefixTrie::new(&guarded);
    let hits: Vec<String> = out
        .split(|b| *b == 0)
        .filter(|p| !p.is_empty())
        .filter_map(|p| RepoPath::parse(&String::from_utf8_lossy(p)).ok())
        .filter(|p| trie.prefix_of(p).is_some())
        .map(|p| p.as_str().to_owned())
        .collect();
    if hits.is_empty() {
        return Ok(());
    }
    Err(CliError::data(format!(
        "the mutant edits {}, which the proof must not change (the check's own source or the gate's config): a mutant deletes the invariant in the code and changes nothing else",
        hits.join(", ")
    )))
}

/// An id as a file name's part: letters, digits, `-`, `_` and `.` kept, the rest `_`, at most
/// 64 characters.
fn safe_name(id: &str) -> String {
    id.chars()
        .take(64)
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.') {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// Runs the check `runs` times in `tree`: each run's exit code, or `None` when it was killed
/// by its timeout or a signal, or could not start (a broken harness). With `{junit}` in its
/// command a run counts only as its receipt shows it (CONTRACT.md section 11.5): a mutant
/// that does not compile, or an id that runs no test, proves nothing (`null`, so the core
/// reads `harness-error`), whatever its exit code.
/// The property's Python test files in `room` (its `source`: files, or the `.py` files under
/// a directory, at most 1,000) rewritten so hypothesis skips its shrink phase
/// ([`super::gate::without_shrinking`]); a file that does not name hypothesis is left alone.
fn detect_only(room: &Room, sources: &[String]) -> Result<(), CliError> {
    let mut files: Vec<String> = Vec::new();
    let mut dirs: Vec<String> = Vec::new();
    for s in sources {
        let s = s.trim_end_matches('/');
        match std::fs::symlink_metadata(room.tree.join(s)) {
            Ok(m) if m.is_dir() => dirs.push(s.to_owned()),
            Ok(m) if m.is_file() && s.ends_with(".py") => files.push(s.to_owned()),
            _ => {}
        }
    }
    while let Some(dir) = dirs.pop() {
        let Ok(entries) = std::fs::read_dir(room.tree.join(&dir)) else {
            continue;
        };
        for entry in entries.flatten() {
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            let path = format!("{dir}/{}", entry.file_name().to_string_lossy());
            if kind.is_dir() {
                dirs.push(path);
            } else if kind.is_file() && path.ends_with(".py") {
                files.push(path);
            }
        }
        if files.len() > 1000 {
            break;
        }
    }
    for file in files.iter().take(1000) {
        let Ok(text) = std::fs::read(room.tree.join(file)) else {
            continue;
        };
        let detect = super::gate::without_shrinking(&text);
        if detect != text {
            let at = super::gate::write_in(&room.tree, file, &detect).map_err(|why| {
                CliError::software(format!("cannot write the mutant's property file: {why}"))
            })?;
            room.placed(&at);
        }
    }
    Ok(())
}

fn run_side(
    check: &Check,
    side: &str,
    room: &Room,
    runs: u8,
    log: Option<&std::fs::File>,
) -> Result<Vec<RunOutcome>, CliError> {
    let argv = property_argv(&check.command, std::slice::from_ref(&check.id));
    let mut codes = Vec::with_capacity(usize::from(runs));
    for n in 1..=runs {
        let label = format!("admit {} {side} run {n}/{runs}", check.id);
        let run = Run::new(&label, &argv, check.timeout, Place::Room(room));
        let run = match log {
            Some(log) => run.output_to(log),
            None => run,
        };
        let ran = run.start()?.ran()?;
        let run = match ran.receipt {
            None => ran.run,
            Some(read) => {
                let receipt =
                    property_receipt(&read, check.case.as_deref(), &check.id, &check.skips);
                let (counted_run, gap) = counted(ran.run, receipt.as_ref(), &check.catch, false);
                if let Some(gap) = gap {
                    output::error(&format!(
                        "{label}: its receipt does not vouch for it ({}): counted as no run",
                        gap.as_str()
                    ));
                }
                counted_run
            }
        };
        codes.push(run);
        interrupt::check()?;
    }
    Ok(codes)
}

/// Writes `record` into the catalog file at `path` as the `admitted` of row `id`: a JSON
/// catalog is rewritten (pretty-printed, keys in name order), a YAML catalog edited as text
/// (comments and layout kept). Either way the result is read back and must equal the catalog with just
/// that field set, or nothing is written.
fn write_record(path: &Path, id: &str, record: &AdmissionRecord) -> Result<(), CliError> {
    let name = path.display().to_string();
    let text = std::fs::read_to_string(path)
        .map_err(|e| CliError::data(format!("cannot read the catalog {name}: {e}")))?;
    let before = parse_document(text.as_bytes(), &name, "catalog")?;
    let record_value = serde_json::to_value(record).unwrap_or_default();
    let mut expected = before.clone();
    let row = expected
        .get_mut("properties")
        .and_then(Value::as_array_mut)
        .and_then(|rows| {
            rows.iter_mut()
                .find(|r| r.get("id").and_then(Value::as_str) == Some(id))
        })
        .and_then(Value::as_object_mut)
        .ok_or_else(|| {
            CliError::data(format!(
                "this checkout's catalog {name} has no property {id:?}; add `admitted: {}` to its row by hand",
                record_value
            ))
        })?;
    row.insert("admitted".to_owned(), record_value.clone());
    let looks_json = name.ends_with(".json") || text.trim_start().starts_with('{');
    let new_text = if looks_json {
        serde_json::to_string_pretty(&expected).unwrap_or_default() + "\n"
    } else {
        yaml_with_record(&text, id, &record_flow(record)).ok_or_else(|| {
            CliError::data(format!(
                "cannot find the row of {id:?} in {name} to edit; add `admitted: {}` to it by hand",
                record_value
            ))
        })?
    };
    let after = parse_document(new_text.as_bytes(), &name, "catalog")?;
    if after != expected {
        return Err(CliError::software(format!(
            "editing {name} would change more than the `admitted` of {id:?}; nothing written: add `admitted: {}` to its row by hand",
            record_value
        )));
    }
    std::fs::write(path, new_text)
        .map_err(|e| CliError::software(format!("cannot write the catalog {name}: {e}")))
}

/// The record on one line, in the contract's field order, with a space after every `:` and
/// `,`: JSON that is also YAML flow style.
fn record_flow(record: &AdmissionRecord) -> String {
    use serde::Serialize as _;
    let mut out = Vec::new();
    let mut writer = serde_json::Serializer::with_formatter(&mut out, Flow);
    match record.serialize(&mut writer) {
        Ok(()) => String::from_utf8(out).unwrap_or_default(),
        Err(_) => String::new(),
    }
}

/// serde_json's compact writing with `", "` between items and `": "` after a key.
struct Flow;

/// `", "` before every item but the first.
fn comma<W: ?Sized + std::io::Write>(writer: &mut W, first: bool) -> std::io::Result<()> {
    match first {
        true => Ok(()),
        false => writer.write_all(b", "),
    }
}

impl serde_json::ser::Formatter for Flow {
    fn begin_array_value<W: ?Sized + std::io::Write>(
        &mut self,
        writer: &mut W,
        first: bool,
    ) -> std::io::Result<()> {
        comma(writer, first)
    }

    fn begin_object_key<W: ?Sized + std::io::Write>(
        &mut self,
        writer: &mut W,
        first: bool,
    ) -> std::io::Result<()> {
        comma(writer, first)
    }

    fn begin_object_value<W: ?Sized + std::io::Write>(
        &mut self,
        writer: &mut W,
    ) -> std::io::Result<()> {
        writer.write_all(b": ")
    }
}

/// The YAML catalog `text` with `admitted: <flow>` set in the row whose `id` is `id` (an
/// existing `admitted` replaced); `None` when the row cannot be found by its lines.
fn yaml_with_record(text: &str, id: &str, flow: &str) -> Option<String> {
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    let indent = |l: &str| l.len() - l.trim_start_matches(' ').len();
    let content = |l: &str| {
        let t = l.trim();
        !t.is_empty() && !t.starts_with('#')
    };
    let scalar = |v: &str| {
        let v = v.split(" #").next().unwrap_or(v).trim();
        v.trim_matches('"').trim_matches('\'').to_owned()
    };
    // The `id:` key of the row: `- id: X` (the key sits two columns right of the dash) or
    // `id: X` inside the row.
    let (id_line, key_col) = lines.iter().enumerate().find_map(|(i, l)| {
        let t = l.trim_start_matches(' ');
        let (col, rest) = match t.strip_prefix("- ") {
            Some(rest) => (
                indent(l) + 2 + (rest.len() - rest.trim_start().len()),
                rest.trim_start(),
            ),
            None => (indent(l), t),
        };
        let value = rest.strip_prefix("id:")?;
        (scalar(value) == id).then_some((i, col))
    })?;
    // The row starts at the dash at or above the id line, and ends before the next content
    // line left of its keys.
    let start = (0..=id_line).rev().find(|&i| {
        lines.get(i).is_some_and(|l| {
            l.trim_start_matches(' ').starts_with("- ") && indent(l) + 2 <= key_col
        })
    })?;
    let end = (start + 1..lines.len())
        .find(|&i| {
            lines
                .get(i)
                .is_some_and(|l| content(l) && indent(l) < key_col)
        })
        .unwrap_or(lines.len());
    let row_keys = |i: usize| -> Option<&str> {
        let l = lines.get(i)?;
        if i == start {
            let t = l.trim_start_matches(' ').strip_prefix("- ")?;
            Some(t.trim_start())
        } else if indent(l) == key_col {
            Some(l.trim_start_matches(' '))
        } else {
            None
        }
    };
    let new_line = format!("{}admitted: {flow}\n", " ".repeat(key_col));
    let mut out: Vec<String> = lines.iter().map(|l| (*l).to_owned()).collect();
    if let Some(at) =
        (start..end).find(|&i| row_keys(i).is_some_and(|k| k.starts_with("admitted:")))
    {
        // Replace it, and its continuation lines (deeper than the row's keys).
        if at == start {
            return None;
        }
        let stop = (at + 1..end)
            .find(|&i| {
                lines
                    .get(i)
                    .is_none_or(|l| !content(l) || indent(l) <= key_col)
            })
            .unwrap_or(end);
        out.splice(at..stop, [new_line]);
    } else {
        // After the row's last content line, so trailing comments and blank lines stay put.
        let last = (start..end)
            .rev()
            .find(|&i| lines.get(i).is_some_and(|l| content(l)))?;
        if let Some(l) = out.get_mut(last)
            && !l.ends_with('\n')
        {
            l.push('\n');
        }
        out.insert(last + 1, new_line);
    }
    Some(out.concat())
}

#[cfg(test)]
mod tests {
    use super::*;

    const CATALOG: &str = "# the catalog\nproperties:\n  - id: a\n    strength: strong\n    locality: [x]   # a comment\n\n  - strength: weak\n    id: \"b\"\n    locality:\n      - y\n    admitted: {\"seal\": \"old\"}\n  # trailing comment of b\n  - id: c\n    strength: strong\n    locality: [z]";

    #[test]
    fn a_yaml_row_gets_its_record_and_nothing_else_changes() {
        let a = yaml_with_record(CATALOG, "a", "{\"k\": 1}").unwrap();
        assert!(
            a.contains(
                "    locality: [x]   # a comment\n    admitted: {\"k\": 1}\n\n  - strength: weak"
            ),
            "{a}"
        );
        // An existing record is replaced, the row's other keys and comments kept.
        let b = yaml_with_record(CATALOG, "b", "{\"k\": 2}").unwrap();
        assert!(
            b.contains("      - y\n    admitted: {\"k\": 2}\n  # trailing comment of b\n"),
            "{b}"
        );
        assert!(!b.contains("old"), "{b}");
        // The last row, with no final newline.
        let c = yaml_with_record(CATALOG, "c", "{\"k\": 3}").unwrap();
        assert!(
            c.ends_with("    locality: [z]\n    admitted: {\"k\": 3}\n"),
            "{c}"
        );
        assert_eq!(yaml_with_record(CATALOG, "d", "{}"), None);
        // Each edit reads back as the catalog with just that field set.
        for (id, text) in [("a", &a), ("b", &b), ("c", &c)] {
            let before = parse_document(CATALOG.as_bytes(), "c.yaml", "catalog").unwrap();
            let after = parse_document(text.as_bytes(), "c.yaml", "catalog").unwrap();
            let rows = |v: &Value| v["properties"].as_array().unwrap().clone();
            for (x, y) in rows(&before).iter().zip(rows(&after).iter()) {
                let mut x = x.clone();
                if x["id"] == id {
                    x["admitted"] = serde_json::from_str(&format!(
                        "{{\"k\": {}}}",
                        1 + ["a", "b", "c"].iter().position(|i| *i == id).unwrap()
                    ))
                    .unwrap();
                }
                assert_eq!(&x, y, "{id}");
            }
        }
    }

    #[test]
    fn the_record_line_is_json_and_yaml_flow_style() {
        let record = AdmissionRecord {
            seal: "ab".into(),
            mutant: "m\"1".into(),
            base_runs: vec![Some(0), None],
            mutant_runs: vec![Some(1), Some(1)],
            source: None,
        };
        let line = record_flow(&record);
        assert_eq!(
            line,
            r#"{"seal": "ab", "mutant": "m\"1", "base_runs": [0, null], "mutant_runs": [1, 1]}"#
        );
        let want = serde_json::to_value(&record).unwrap();
        assert_eq!(serde_json::from_str::<Value>(&line).unwrap(), want);
        let yaml: Value = serde_norway::from_str(&line).unwrap();
        assert_eq!(yaml, want);
        // With its source's digest (issue 50), last.
        let record = AdmissionRecord {
            source: Some("c".repeat(64)),
            ..record
        };
        let line = record_flow(&record);
        assert!(
            line.ends_with(&format!(r#", "source": "{}"}}"#, "c".repeat(64))),
            "{line}"
        );
        let want = serde_json::to_value(&record).unwrap();
        let yaml: Value = serde_norway::from_str(&line).unwrap();
        assert_eq!(yaml, want);
    }
}
