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

/// The head of a patch, the config's path and the repository (`gate`, `read`, `observe`).
#[derive(Debug, Args)]
pub struct HeadArgs {
    /// The patch's head commit. What is judged is it merged into the base, from git's
    /// objects: the worktree and its uncommitted changes are never read.
    #[arg(long, default_value = "HEAD")]
    pub head: String,
    /// The config file's path in the base commit (`read` and `observe`: absent there, the
    /// defaults).
    #[arg(long, default_value = CONFIG_FILE)]
    pub config: String,
    /// Run as if started in this directory (inside the repository).
    #[arg(short = 'C', long = "directory")]
    pub directory: Option<PathBuf>,
}

/// The patch a command looks at without running anything (`read`, `observe`).
#[derive(Debug, Args)]
pub struct PatchArgs {
    /// The base commit: its config (and its tests) are the ones read.
    #[arg(long)]
    pub base: String,
    #[command(flatten)]
    pub at: HeadArgs,
}

impl PatchArgs {
    /// In the repository: the base and head commits, the tree that would land, and the
    /// base's config (`None` when the base has none).
    pub fn open(
        &self,
    ) -> Result<(String, String, Option<GateConfig>), super::super::error::CliError> {
        enter_repository(self.at.directory.as_deref())?;
        let base = commit_of(&self.base)?;
        let head = commit_of(&self.at.head)?;
        let config = match base_file(&base, &self.at.config)? {
            Some(_) => Some(GateConfig::from_base(&base, &self.base, &self.at.config)?),
            None => None,
        };
        let judged = judged_tree(&base, &head)?;
        Ok((base, judged.tree, config))
    }
}

#[derive(Debug, Args)]
pub struct ReadArgs {
    #[command(flatten)]
    pub patch: PatchArgs,
    /// Print the hits as JSON (`{"hits": [...], "unread": [...], "read": [...], "added_lines":
    /// N, "test_lines": {"from_base": [...], "mixed": [...]}}`: the facts' form, the files
    /// read, and the source files whose test lines the gate runs as the base has them or
    /// cannot split from code).
    #[arg(long)]
    pub json: bool,
    /// Read JavaScript and TypeScript as code the runs run, whatever the base's config says
    /// (a replay of a project's history, which has no config; `scripts/reading_history.py
    /// --javascript`).
    #[arg(long)]
    pub javascript: bool,
}

pub fn run(args: ReadArgs) -> CliResult {
    let (base, tree, config) = args.patch.open()?;
    let javascript = args.javascript
        || config
            .as_ref()
            .is_some_and(super::runtimes::runs_javascript);
    let (suspicious, fixtures) = match config {
        Some(c) => (c.suspicious, c.fixtures),
        None => (SuspiciousConfig::default(), "fixtures".to_owned()),
    };
    let reading = read_patch(&base, &tree, &suspicious, (&fixtures, javascript))?;
    // The tests inside source files (issue 50): whose test lines the gate would run as the
    // base has them, and where it could not split them from code (a scope hit).
    let changed = super::super::git::git_changed(&base, &tree)?;
    let in_file = super::in_file::in_file_tests(&base, &tree, &changed)?;
    let from_base: Vec<&str> = in_file.from_base.iter().map(|(f, _)| f.as_str()).collect();
    let text = if args.json {
        serde_json::to_string(&ReadingJson {
            hits: &reading.hits,
            unread: &reading.unread,
            read: &reading.read,
            added_lines: reading.added_lines,
            test_lines: TestLines {
                from_base,
                mixed: &in_file.mixed,
            },
        })
        .unwrap_or_default()
            + "\n"
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

/// `patchgate read --json`: what the reading found, and the test lines inside source files.
#[derive(serde::Serialize)]
struct ReadingJson<'a> {
    hits: &'a [crate::core::gate::SuspiciousLine],
    unread: &'a [crate::core::gate::UnreadFile],
    read: &'a [String],
    added_lines: usize,
    test_lines: TestLines<'a>,
}

/// Whose test lines the gate runs as the base has them, and where it could not split them.
#[derive(serde::Serialize)]
struct TestLines<'a> {
    from_base: Vec<&'a str>,
    mixed: &'a [String],
}
