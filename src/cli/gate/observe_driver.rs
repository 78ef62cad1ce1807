//! The observed run's program (issue 52), run as `python -c DRIVER`: pytest in-process, with
//! the changed lines' probes compiled into their files as they are imported, one context per
//! test, and the changed functions' calls recorded (`--record`, issue 66); or only some tests
//! kept (a patch mutant's checks, `--select`), or all but some (a shard's run, `--except`,
//! issue 53). The program is Python files beside this one (`programs/`), linted and tested as
//! Python (tests/python).

/// The program the observed run is (`python -c DRIVER OUT FILE:LINES... -- PYTEST-ARGS`,
/// `LINES` as `3,9-12`): pytest in-process with the changed lines' probes, the JSON report
/// written to `OUT` when pytest returns. A run that never returns (an exit under test) writes
/// none: then nothing is known to be observed. A file imported other than through the import
/// system (read and `exec`'d) has no probes: its lines are unrun, never run by a check. A
/// patch mutant's run is `python -c DRIVER --select ID... -- PYTEST-ARGS`: pytest with only the
/// tests named (JUnit's `module::function`, `module.Class::function`) kept, and only the files
/// that may hold them collected.
pub(super) const DRIVER: &str = concat!(
    include_str!("programs/replay_canon.py"),
    include_str!("programs/observe_driver.py")
);
