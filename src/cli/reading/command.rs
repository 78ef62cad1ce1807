//! `patchgate read`: the reading of one patch's code, as the gate's `test-aware` rule sees it, without
//! running anything (what a reviewer, or a replay of a project's history, asks).

use std::path::PathBuf;

use clap::Args;

use super::super::config::{CONFIG_FILE, GateConfig, SuspiciousConfig};
use super::super::error::CliResult;
use super::super::git::{base_file, commit_of, enter_repository, judged_tree};
use super::super::output;
use super::read_patch;
use crate::exit::Exit;

#[derive(Debug, Args)]
pub struct ReadArgs {
    /// The base commit: its `[suspicious]` config and its tests are the ones read.
    #[arg(long)]
    pub base: String,
    /// The patch's head (the tree that would land is read).
    #[arg(long, default_value = "HEAD")]
    pub head: String,
    /// The config file's path in the base; absent there, the defaults (no allow, no
    /// patterns, fixtures in `fixtures/`).
    #[arg(long, default_value = CONFIG_FILE)]
    pub config: String,
    /// Print the hits as JSON (`{"hits": [...], "unread": [...], "read": [...], "added_lines":
    /// N, "test_lines": {"from_base": [...], "mixed": [...]}}`: the facts' form, the files
    /// read, and the source files whose test lines the gate runs as the base has them or
    /// cannot split from code).
    #[arg(long)]
    pub json: bool,
    /// Run as if started in this directory (inside the repository).
    #[arg(short = 'C', long = "directory")]
    pub directory: Option<PathBuf>,
}

pub fn run(args: ReadArgs) -> CliResult {
    enter_repository(args.directory.as_deref())?;
    let base = commit_of(&args.base)?;
    let head = commit_of(&args.head)?;
    let (suspicious, fixtures) = match base_file(&base, &args.config)? {
        Some(_) => {
            let c = GateConfig::from_base(&base, &args.base, &args.config)?;
            (c.suspicious, c.fixtures)
        }
        None => (SuspiciousConfig::default(), "fixtures".to_owned()),
    };
    let judged = judged_tree(&base, &head)?;
    let reading = read_patch(&base, &judged.tree, &suspicious, &fixtures)?;
    // The tests inside source files (issue 50): whose test lines the gate would run as the
    // base has them, and where it could not split them from code (a scope hit).
    let changed = super::super::git::git_changed(&base, &judged.tree)?;
    let in_file = super::in_file::in_file_tests(&base, &judged.tree, &changed)?;
    let from_base: Vec<&str> = in_file.from_base.iter().map(|(f, _)| f.as_str()).collect();
    let text = if args.json {
        serde_json::json!({"hits": reading.hits, "unread": reading.unread, "read": reading.read, "added_lines": reading.added_lines, "test_lines": {"from_base": from_base, "mixed": in_file.mixed}}).to_string() + "\n"
    } else {
        let mut out = String::new();
        for h in &reading.hits {
            let class: &str = h.class.into();
            out.push_str(&format!(
                "{}:{}: {} ({class}): {}",
                h.file, h.line, h.rule, h.code
            ));
            if let Some(at) = &h.seen_in {
                out.push_str(&format!(" [pinned at {at}]"));
            }
            out.push('\n');
        }
        for u in &reading.unread {
            out.push_str(&format!("{}: unread: {}", u.file, u.reason.says()));
            if let Some(d) = &u.detail {
                out.push_str(&format!(" ({d})"));
            }
            out.push('\n');
        }
        for f in &from_base {
            out.push_str(&format!(
                "{f}: test lines (a test module, test function or doctest) the gate runs as the base has them\n"
            ));
        }
        for f in &in_file.mixed {
            out.push_str(&format!(
                "{f}: test lines and code in one hunk the gate cannot split: a scope hit\n"
            ));
        }
        // What was read, so that silence is never mistaken for a clean reading.
        out.push_str(&format!(
            "read {} ({} added): {}{}\n",
            match reading.read.len() {
                1 => "1 changed code file that is not a test".to_owned(),
                n => format!("{n} changed code files that are not tests"),
            },
            match reading.added_lines {
                1 => "1 line".to_owned(),
                n => format!("{n} lines"),
            },
            match reading.hits.len() {
                0 => "no hit".to_owned(),
                1 => "1 hit".to_owned(),
                n => format!("{n} hits"),
            },
            match reading.unread.len() {
                0 => String::new(),
                n => format!(", {n} unread"),
            }
        ));
        out
    };
    output::stdout(&text)?;
    Ok(if reading.hits.is_empty() && reading.unread.is_empty() {
        Exit::Go
    } else {
        Exit::HumanMustLook
    })
}
