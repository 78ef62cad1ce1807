//! What the gate writes once it decided: the answer (printed, `--json-out`, `--markdown-out`,
//! `--evidence-out`), the decision log line, the tier-ledger rows, the GitHub annotation, and
//! the facts as they happen (`--facts-out`).

use std::io::Write;
use std::path::{Path, PathBuf};

use super::super::error::CliError;
use super::super::output;
use super::super::progress::{self, Event};
use super::super::remote;
use super::super::runner::ReceiptRead;
use super::{GateArgs, Planner};
use crate::core::decision::{Decision as _, Defaults};
use crate::core::gate::{
    Facts, FailingCase, GateAnswer, GateDecision, GateDisposition, MAX_FAILURE_BYTES, MAX_FAILURES,
    Step, clip_failure, fit_test_id, markdown_as,
};
use crate::core::ladder::{T1, T2, TierRow, TierVerdict};
use crate::exit::Exit;

/// The failing cases a receipt lists (CONTRACT.md section 11.8), added to the facts'
/// `failures`: each once, its message clipped to 2 KiB, at most 20 in all.
pub(super) fn add_failures(facts: &mut Facts, read: &ReceiptRead, canary: Option<&str>) {
    let Ok(report) = read else { return };
    for (id, message) in &report.messages {
        // The canary's failure, when it rode in the run, is the checker's proof, not the patch's.
        if canary.is_some_and(|c| crate::core::runs::case_of(id, c)) {
            continue;
        }
        if facts.failures.len() >= MAX_FAILURES {
            break;
        }
        let id = fit_test_id(id.clone());
        if facts.failures.iter().any(|f| f.id == id) {
            continue;
        }
        facts.failures.push(FailingCase {
            id,
            message: clip_failure(message, MAX_FAILURE_BYTES),
        });
    }
}

/// `--facts-out`: the facts written as they happen, after every step (cargo-mutants' habit),
/// so an interrupted gate (Ctrl-C, the CI job's timeout) leaves a file that says which steps
/// ran and what they saw. Each write replaces the file whole (a rename), never half of it.
pub(super) fn write_facts(args: &GateArgs, facts: &Facts) -> Result<(), CliError> {
    write_doc(args, &redacted(facts))
}

/// `--facts-out` once the plan said decide: a shard's facts (issue 53) get their digest now,
/// so facts left by a shard stopped midway are never taken for a finished shard's.
pub(super) fn write_final_facts(args: &GateArgs, facts: &Facts) -> Result<(), CliError> {
    let mut doc = redacted(facts);
    crate::core::gate::seal_shard(&mut doc, crate::core::gate::shard_key());
    write_doc(args, &doc)
}

fn write_doc(args: &GateArgs, doc: &serde_json::Value) -> Result<(), CliError> {
    let Some(path) = &args.facts_out else {
        return Ok(());
    };
    let text = serde_json::to_string_pretty(doc).unwrap_or_default() + "\n";
    output::replace(path, text.as_bytes(), checkout().as_deref())
}

/// The facts as they leave the runner (to the core, a server, `--facts-out`): every string
/// the runs wrote redacted (CONTRACT.md section 13.5), so no secret reaches an answer.
pub(super) fn redacted(facts: &Facts) -> serde_json::Value {
    let mut v = facts.to_value();
    crate::cli::redact::value(&mut v);
    v
}

/// Decides the facts (locally, or with `--server`) once, writes what was asked for, prints
/// the answer and gives its exit code.
pub(super) fn finish(
    args: &GateArgs,
    planner: &Planner<'_>,
    facts: &serde_json::Value,
    invalid: &str,
    shadow: bool,
) -> Result<(Exit, GateAnswer), CliError> {
    let (answer, line) = match &args.remote.server {
        Some(_) => (planner.decide(facts, invalid)?, None),
        None => {
            // The one decision: its answer, and the decision log's line from it.
            let request = Planner::parse(facts, invalid)?;
            let decision = GateDecision::decide(&request, &Defaults::default());
            let id = crate::ids::new_decision_id();
            let line = args
                .decision_log
                .as_ref()
                .map(|_| crate::telemetry::decision_line_of(&id, &request, &decision, shadow));
            (decision.answer(&request, id), line)
        }
    };
    write_outputs(args, &answer, shadow)?;
    if let Some(path) = &args.decision_log {
        match line {
            Some(line) => write_file(path, &line, true)?,
            None => progress::say(Event::DecisionLoggedByServer {
                path: path.display().to_string(),
            }),
        }
    }
    // GitHub reads workflow commands from both streams: with `--json` the annotation goes to
    // stderr, so stdout stays one JSON document a script can parse.
    if std::env::var("GITHUB_ACTIONS").is_ok_and(|v| v == "true") {
        if args.json {
            let _ = std::io::stderr()
                .lock()
                .write_all(annotation(&answer, shadow).as_bytes());
        } else {
            output::stdout(&annotation(&answer, shadow))?;
        }
    }
    if !shadow {
        let exit = remote::print::<GateDecision>(&answer, args.json)?;
        return Ok((exit, answer));
    }
    // Shadow mode: the same answer, said as what enforcing would do; the exit is 0.
    if args.json {
        output::stdout(
            &(serde_json::to_string_pretty(&Shadowed::of(&answer)).unwrap_or_default() + "\n"),
        )?;
    } else {
        output::stdout(&format!(
            "would {} reason={} (shadow mode: exit 0; enforced, exit {})\n",
            answer.disposition.as_str(),
            answer.reason.as_str(),
            answer.exit_code
        ))?;
    }
    Ok((Exit::Go, answer))
}

/// The JSON answer in shadow mode: the decision as made, and `"shadow": true`.
#[derive(serde::Serialize)]
struct Shadowed<'a> {
    #[serde(flatten)]
    answer: &'a GateAnswer,
    shadow: bool,
}

impl<'a> Shadowed<'a> {
    fn of(answer: &'a GateAnswer) -> Self {
        Shadowed {
            answer,
            shadow: true,
        }
    }
}

/// The ladder-ledger rows of the tiers the decision reached, with the verdicts the core gave
/// them: one row per tier that ran, so the ledger never disagrees with the answer.
pub(super) fn tier_rows(
    answer: &GateAnswer,
    seconds: Seconds,
    patch: &str,
    files: &[String],
) -> Vec<TierRow> {
    let row = |tier: &str, verdict: TierVerdict, seconds: f64, exit_code: Option<u8>| TierRow {
        patch: patch.to_owned(),
        tier: tier.to_owned(),
        verdict,
        seconds,
        files: Some(files.to_vec()),
        exit_code: exit_code.map(i32::from),
    };
    answer
        .steps
        .iter()
        .filter_map(|s| match s {
            Step::Properties {
                ran: true,
                tier: Some(t),
                ..
            } => Some(row(T1, *t, seconds.t1, None)),
            Step::Fixtures {
                ran: true,
                tier: Some(t),
                exit_code,
                ..
            } => Some(row(T2, *t, seconds.t2, *exit_code)),
            _ => None,
        })
        .collect()
}

/// The seconds each tier's runs took, as the runner measured them.
#[derive(Debug, Default, Clone, Copy)]
pub(super) struct Seconds {
    pub t1: f64,
    pub t2: f64,
}

/// Appends the ladder-ledger rows (section 4), one JSON line each.
pub(super) fn append_rows(path: &Path, rows: &[TierRow]) -> Result<(), CliError> {
    let mut file = output::create(path, true, checkout().as_deref())?;
    for r in rows {
        let line = serde_json::to_string(r).unwrap_or_default();
        writeln!(file, "{line}")
            .map_err(|e| CliError::software(format!("cannot append to the ledger: {e}")))?;
    }
    file.flush()
        .map_err(|e| CliError::software(format!("cannot append to the ledger: {e}")))
}

/// The checkout the gate runs in (the repository's top, where `gather` changed to), whose
/// symbolic links may be the patch's: outputs are never written through them. `None` with
/// `--facts` (no checkout is read).
fn checkout() -> Option<PathBuf> {
    crate::cli::git::git(&["rev-parse", "--show-toplevel"])
        .ok()
        .map(|out| PathBuf::from(String::from_utf8_lossy(&out).trim()))
}

fn write_file(path: &Path, text: &str, append: bool) -> Result<(), CliError> {
    output::create(path, append, checkout().as_deref())?
        .write_all(text.as_bytes())
        .map_err(|e| CliError::software(format!("cannot write {}: {e}", path.display())))
}

fn write_outputs(args: &GateArgs, answer: &GateAnswer, shadow: bool) -> Result<(), CliError> {
    if let Some(path) = &args.json_out {
        let text = if shadow {
            serde_json::to_string_pretty(&Shadowed::of(answer))
        } else {
            serde_json::to_string_pretty(answer)
        };
        write_file(path, &(text.unwrap_or_default() + "\n"), false)?;
    }
    if let Some(path) = &args.markdown_out {
        // The decision's report, and what ran to reach it (the runs' events).
        let report = markdown_as(answer, shadow) + &progress::what_ran();
        write_file(path, &report, true)?;
    }
    if let Some(path) = &args.evidence_out {
        match &answer.evidence {
            Some(v) => {
                let ev = serde_json::to_string(&crate::cli::wire::EvidenceFile {
                    verdicts: v,
                    patch_id: answer.patch_id.as_deref(),
                })
                .unwrap_or_default();
                write_file(path, &format!("{ev}\n"), false)?;
            }
            None => {
                // No evidence was routed: a file left from before must not be replayed.
                output::remove(path, checkout().as_deref());
                progress::say(Event::NoEvidence {
                    path: path.display().to_string(),
                    rule: answer.rule.into(),
                });
            }
        }
    }
    Ok(())
}

/// One GitHub Actions workflow command, so the pull request shows why, not just a red cross.
fn annotation(answer: &GateAnswer, shadow: bool) -> String {
    let level = match answer.disposition {
        _ if shadow => "notice",
        GateDisposition::MergeOk => "notice",
        GateDisposition::Escalate => "warning",
        GateDisposition::Block | GateDisposition::StopQueue => "error",
    };
    format!(
        "::{level} title=patchgate {}{}::{} reason={} (exit {}, gate rule {})\n",
        if shadow { "(shadow) would " } else { "" },
        answer.disposition.as_str(),
        answer.disposition.as_str(),
        answer.reason.as_str(),
        answer.exit_code,
        <&str>::from(answer.rule)
    )
}
