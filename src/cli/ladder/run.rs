//! `patchgate ladder run`: the runner. Each tier in its own process group with its timeout,
//! one ledger row appended per tier reached, stopping at the first tier that does not pass.

use super::*;

/// Runs `argv` in its own process group; on timeout the whole group is killed, so no test
/// runner it spawned outlives it. Returns the exit status (None on timeout) and the seconds.
/// The command's stdout goes to patchgate's stderr: patchgate's stdout carries its answer only.
pub fn run_tier(argv: &[String], timeout: Duration) -> std::io::Result<(Option<ExitStatus>, f64)> {
    run_tier_in(argv, timeout, None)
}

/// [`run_tier`] in the directory `dir` (default: the current one). A signal caught by
/// [`crate::cli::interrupt`] kills the group at once and ends the run with an `Interrupted`
/// error.
pub fn run_tier_in(
    argv: &[String],
    timeout: Duration,
    dir: Option<&Path>,
) -> std::io::Result<(Option<ExitStatus>, f64)> {
    use std::os::fd::AsFd;
    use std::os::unix::process::CommandExt;
    let (program, args) = argv
        .split_first()
        .ok_or_else(|| std::io::Error::other("empty command"))?;
    let stdout = std::io::stderr().as_fd().try_clone_to_owned()?;
    let started = Instant::now();
    let mut command = Command::new(program);
    command
        .args(args)
        .stdin(std::process::Stdio::null())
        .stdout(stdout)
        .process_group(0);
    if let Some(dir) = dir {
        command.current_dir(dir);
    }
    let mut child = command.spawn()?;
    let pgid = nix::unistd::Pid::from_raw(i32::try_from(child.id()).unwrap_or(i32::MAX));
    // Waited for in slices, so a caught Ctrl-C is seen within one.
    let slice = Duration::from_millis(100);
    let status = loop {
        let left = timeout.saturating_sub(started.elapsed());
        if left.is_zero() {
            break None;
        }
        if let Some(status) = wait_timeout::ChildExt::wait_timeout(&mut child, left.min(slice))? {
            break Some(status);
        }
        if crate::cli::interrupt::requested() {
            let _ = nix::sys::signal::killpg(pgid, nix::sys::signal::Signal::SIGKILL);
            let _ = child.wait();
            return Err(std::io::Error::new(
                std::io::ErrorKind::Interrupted,
                "interrupted",
            ));
        }
    };
    // Whatever the leader did, nothing of its group outlives the tier.
    let _ = nix::sys::signal::killpg(pgid, nix::sys::signal::Signal::SIGKILL);
    if status.is_none() {
        let _ = child.wait();
    }
    Ok((status, started.elapsed().as_secs_f64()))
}

/// How a tier's command ended, for people: `exit 0`, `killed by signal 9`, or
/// `timed out after 120 s`.
pub fn describe(status: Option<ExitStatus>, timeout_s: f64) -> String {
    use std::os::unix::process::ExitStatusExt;
    match status {
        None => format!("timed out after {timeout_s:.0} s"),
        Some(s) => match (s.code(), s.signal()) {
            (Some(c), _) => format!("exit {c}"),
            (None, Some(sig)) => format!("killed by signal {sig}"),
            (None, None) => "ended without an exit code".to_owned(),
        },
    }
}

pub(super) fn run(args: RunArgs) -> CliResult {
    let config = load_config(args.config.as_deref())?;
    let raw = git_changed(&args.base, &args.head)?;
    let files = to_paths(&raw)?;
    let patch = git(&[
        "rev-parse",
        "--verify",
        &format!("{}^{{commit}}", args.head),
    ])
    .map(|o| String::from_utf8_lossy(&o).trim().to_owned())
    .unwrap_or_else(|_| args.head.clone());
    let tiers: Vec<(String, bool)> = config
        .tiers
        .iter()
        .map(|t| (t.name.clone(), t.skip_on_scope_hit))
        .collect();
    let plan = ladder::plan(&files, &config.scope, &tiers);
    output::error(&format!("ladder plan: {}", plan.plan.join(" -> ")));
    let mut ledger = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&args.ledger)
        .map_err(|e| {
            CliError::data(format!(
                "cannot open the ledger {}: {e}",
                args.ledger.display()
            ))
        })?;
    for name in &plan.plan {
        let Some(tier) = config.tiers.iter().find(|t| &t.name == name) else {
            continue;
        };
        output::error(&format!("{name}: running {}", tier.command.join(" ")));
        let (status, seconds) =
            match run_tier(&tier.command, Duration::from_secs_f64(tier.timeout_s)) {
                Ok(r) => r,
                Err(e) => {
                    // The command could not start: the harness is broken.
                    output::error(&format!(
                        "{name}: cannot start {:?}: {e}",
                        tier.command.first()
                    ));
                    (None, 0.0)
                }
            };
        let timed_out = status.is_none() && seconds >= tier.timeout_s;
        let code = status.and_then(|s| s.code());
        let verdict = TierVerdict::of_exit(code, timed_out, &tier.catch);
        let row = json!({
            "patch": patch, "tier": name, "verdict": verdict.as_str(), "seconds": seconds,
            "files": files.iter().map(RepoPath::as_str).collect::<Vec<_>>(), "exit_code": code,
        });
        writeln!(ledger, "{row}")
            .and_then(|()| ledger.flush())
            .map_err(|e| CliError::software(format!("cannot append to the ledger: {e}")))?;
        let how = if status.is_none() && !timed_out {
            "did not start".to_owned()
        } else {
            describe(status, tier.timeout_s)
        };
        output::error(&format!(
            "{name}: {} ({how}, {seconds:.1} s)",
            verdict.as_str()
        ));
        match verdict {
            TierVerdict::Pass => {}
            TierVerdict::Caught => return Ok(Exit::PatchWrong),
            TierVerdict::Error => return Ok(Exit::HumanMustLook),
        }
    }
    Ok(Exit::Go)
}
