//! `patchgate observe`: what the gate's observe step would look at for one patch, without
//! running or deciding anything (issue 52): the changed code lines, and the patch mutants it
//! would make. Given the observed run's coverage.py JSON report (`--coverage`), each line with
//! the tests that ran it, the branches none took, and the mutants of the lines a test ran (as
//! the gate picks them); without one, a mutant of every changed code line.

use std::path::PathBuf;

use clap::Args;

use super::super::config::ObserveConfig;
use super::super::error::{CliError, CliResult};
use super::super::output;
use crate::core::gate::{MutantOperator, ObserveFacts, ObservedLine};
use crate::exit::Exit;

#[derive(Debug, Args)]
pub struct ObserveArgs {
    /// (The base's `inert`, `fixtures` and `[observe] mutants` are read.)
    #[command(flatten)]
    pub patch: super::super::reading::command::PatchArgs,
    /// coverage.py's JSON report of the observed run (`coverage json --show-contexts`, with
    /// `dynamic_context = test_function` and `branch = True`), paths relative to the
    /// repository's root.
    #[arg(long)]
    pub coverage: Option<PathBuf>,
    /// How many patch mutants (default: the base's `[observe] mutants`, else 5; at most 100).
    #[arg(long, value_parser = clap::value_parser!(u8).range(0..=100))]
    pub mutants: Option<u8>,
    /// Print JSON: `{"observe": {...the facts' form...}, "apply": [{file, line, operator,
    /// start, end, replacement}]}`, each mutant as byte offsets into the head's file.
    #[arg(long)]
    pub json: bool,
}

pub fn run(args: ObserveArgs) -> CliResult {
    let (base, tree, config) = args.patch.open()?;
    let (inert, fixtures, config) = match config {
        Some(c) => (c.inert, c.fixtures, c.observe),
        None => (Vec::new(), "fixtures".to_owned(), None),
    };
    // Listed, whatever the base says: this command decides nothing.
    let observe = ObserveConfig {
        mutants: args.mutants.or(config.map(|c| c.mutants)).unwrap_or(5),
        ..ObserveConfig::LISTED
    };
    // (The ledger's frozen tests are not read here: every test counts.)
    let watched = super::observe::watched(
        Some(observe),
        &base,
        &tree,
        (&inert, &fixtures),
        std::collections::BTreeSet::new(),
    )?;
    let mut facts = match &args.coverage {
        Some(path) => {
            let facts = watched.read_report_at(Some(path));
            if !facts.as_ref().is_some_and(|f| f.read) {
                return Err(CliError::data(format!(
                    "{} is not a coverage.py JSON report",
                    path.display()
                )));
            }
            facts
        }
        // No run: every changed line listed, as if a test ran it (none named).
        None => watched.unread().map(|mut f| {
            for (file, lines) in &watched.files {
                for line in lines {
                    f.lines.push(ObservedLine {
                        file: file.clone(),
                        line: *line,
                        checks: vec!["(any)".to_owned()],
                    });
                }
            }
            f
        }),
    }
    .ok_or_else(|| CliError::software("observing is off"))?;
    let made = super::patch_mutant_runs::made(&tree, &facts, usize::from(observe.mutants))?;
    facts.mutants = made.iter().map(|(f, _)| f.clone()).collect();
    let text = if args.json {
        let apply = made
            .iter()
            .map(|(f, m)| Apply {
                file: &f.file,
                line: f.line,
                operator: f.operator,
                start: m.start,
                end: m.end,
                replacement: &m.replacement,
            })
            .collect();
        serde_json::to_string_pretty(&Observed {
            observe: &facts,
            apply,
        })
        .unwrap_or_default()
            + "\n"
    } else {
        let mut out = format!(
            "{} changed code lines in {} files",
            watched
                .files
                .values()
                .map(std::collections::BTreeSet::len)
                .sum::<usize>(),
            watched.files.len()
        );
        if args.coverage.is_some() {
            out.push_str(&format!(
                "; {} counted as code, {} run by a test; {} branches untaken",
                facts.line_count,
                facts.run_count,
                facts.untaken.len()
            ));
        }
        out.push('\n');
        for l in facts.lines.iter().filter(|_| args.coverage.is_some()) {
            out.push_str(&format!(
                "  {}:{}: {}\n",
                l.file,
                l.line,
                match l.checks.is_empty() {
                    true => "no test".to_owned(),
                    false => l.checks.join(", "),
                }
            ));
        }
        for b in &facts.untaken {
            out.push_str(&format!(
                "  branch {}:{} -> {}: no test takes it\n",
                b.file,
                b.line,
                b.to.map_or_else(|| "exit".to_owned(), |t| t.to_string())
            ));
        }
        out.push_str(&format!("{} patch mutants:\n", facts.mutants.len()));
        for m in &facts.mutants {
            out.push_str(&format!(
                "  {}:{} {}: {}\n",
                m.file,
                m.line,
                <&str>::from(m.operator),
                m.code
            ));
        }
        out
    };
    output::stdout(&text)?;
    Ok(Exit::Go)
}

/// `patchgate observe --json`: the observed run's facts, and each patch mutant as the runner
/// applies it (its bytes `start..end` of `file` replaced).
#[derive(serde::Serialize)]
struct Observed<'a> {
    observe: &'a ObserveFacts,
    apply: Vec<Apply<'a>>,
}

#[derive(serde::Serialize)]
struct Apply<'a> {
    file: &'a str,
    line: u32,
    operator: MutantOperator,
    start: usize,
    end: usize,
    replacement: &'a str,
}
