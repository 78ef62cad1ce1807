//! `patchgate freeze`: whether a flaky test may be frozen.

use super::*;

fn read_outcomes(path: &Path) -> Result<Vec<bool>, CliError> {
    let bytes = read_input(&path.to_path_buf())
        .map_err(|e| CliError::data(format!("cannot read {}: {e}", path.display())))?;
    let text = String::from_utf8_lossy(&bytes);
    if text.trim_start().starts_with('[') {
        return serde_json::from_str::<Vec<bool>>(&text).map_err(|e| {
            CliError::data(format!(
                "{}: expected a JSON array of booleans: {e}",
                path.display()
            ))
        });
    }
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(i, l)| match l.trim() {
            "true" => Ok(true),
            "false" => Ok(false),
            other => Err(CliError::data(format!(
                "{} line {}: {} is not `true` or `false`",
                path.display(),
                i + 1,
                quoted(other)
            ))),
        })
        .collect()
}

/// Reads a seeded-bug proof: an admission answer for a test, admitted.
fn read_proof(path: &Path) -> Result<(), CliError> {
    use crate::core::admit::{AdmitAnswer, AdmitOutcome, CheckKind};
    let bytes = read_input(&path.to_path_buf())
        .map_err(|e| CliError::data(format!("cannot read {}: {e}", path.display())))?;
    let proof: AdmitAnswer = serde_json::from_slice(&bytes).map_err(|e| {
        CliError::data(format!(
            "{} is not an admission answer (`patchgate admit --test ID --json`): {e}",
            path.display()
        ))
    })?;
    match (&proof.kind, &proof.outcome, &proof.record) {
        (CheckKind::Test, AdmitOutcome::Admitted, Some(record)) => {
            output::error(&format!(
                "seeded bug caught: {} passed on the base and failed on the mutant {} (decision {})",
                proof.check_id, record.mutant, proof.decision_id
            ));
            Ok(())
        }
        (CheckKind::Property, ..) => Err(CliError::data(format!(
            "{} proves the property {}, not a test",
            path.display(),
            proof.check_id
        ))),
        _ => Err(CliError::data(format!(
            "{} is not a proof: test {} was {} ({})",
            path.display(),
            proof.check_id,
            proof.outcome.as_str(),
            proof.reason.as_str()
        ))),
    }
}

pub fn freeze(args: FreezeArgs) -> CliResult {
    let outcomes = read_outcomes(&args.outcomes)?;
    // `--caught-seeded-bug` alone is the claim; with a file, the proof of it.
    let caught = match &args.caught_seeded_bug {
        Some(Some(proof)) => {
            read_proof(proof)?;
            true
        }
        Some(None) => true,
        None => false,
    };
    let doc = serde_json::to_value(crate::cli::wire::FreezeBody {
        outcomes: &outcomes,
        caught_seeded_bug: caught,
        min_runs: args.min_runs,
        min_flip_rate: args.min_flip_rate,
    })
    .unwrap_or_default();
    let answer: FreezeAnswer = match &args.remote.server {
        Some(server) => ask(
            &args.remote,
            server,
            "/freeze/eligibility",
            "application/json",
            doc.to_string().into_bytes(),
        )?,
        None => ladder::parse_freeze(&doc)
            .map(|r| ladder::freeze_eligibility(&r))
            .map_err(|errors| refuse(&Problem::invalid(errors)))?,
    };
    if args.json {
        print_json(&answer)?;
    } else {
        output::stdout(&format!(
            "{} {}\n",
            if answer.eligible {
                "eligible"
            } else {
                "not-eligible"
            },
            answer.reason
        ))?;
    }
    Ok(if answer.eligible {
        Exit::Go
    } else {
        Exit::PatchWrong
    })
}
