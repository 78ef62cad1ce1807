//! What the gate says as it goes, as one typed event stream (as nextest's reporter reads its
//! events): every line of progress the runner, the sandbox and the gate's steps write is an
//! [`Event`], and [`say`] is the one place an event becomes a line on stderr. The runs that
//! ended ([`Event::RunEnded`]) are kept too: the Markdown report's "What ran" is read from
//! them ([`what_ran`]), and each ends the runner's wait for it, which rewrites `--facts-out`.

use std::fmt;
use std::sync::Mutex;

/// One thing the gate tells people as it happens.
#[derive(Debug, Clone, PartialEq)]
pub enum Event {
    /// A line the core's plan says (each said once per gate).
    Plan(String),
    /// A clean room made: the tree copied into it, how many files, in how long, what became
    /// of the build cache, and what isolates its runs.
    RoomCopied {
        tree: String,
        files: usize,
        seconds: f64,
        cache: Cache,
        backend: &'static str,
    },
    /// A second copy of a room, for a run beside the others.
    RoomForked { purpose: String, seconds: f64 },
    /// What the sealed room's runs see, as whom, and what caps them.
    RoomSealed { view: String },
    /// A run ended: its label, how (`exit 0`, `timed out after …`), how long it took.
    RunEnded {
        label: String,
        how: String,
        seconds: f64,
    },
    /// A run's receipt could not be read: no pass is taken from it.
    NoReceipt { label: String, why: String },
    /// Processes a run left behind, killed.
    LeftBehind { command: String, count: usize },
    /// A run changed what it may not: nothing more runs.
    TreeChanged {
        label: String,
        files: usize,
        /// Files created outside the scratch directories.
        created: u64,
        seal: bool,
        first: Option<String>,
    },
    /// The copy checked for changes after each run: how often, in how long in all.
    IntegrityChecked { checks: usize, seconds: f64 },
    /// The suite started early in a copy of its own; `holds`: it is run 1 of properties.
    SuiteAhead { holds: bool },
    /// The suite started early was not needed: stopped, or run and not counted.
    SuiteDropped { stopped: bool },
    /// A re-proof's copy made and readied beside the property runs.
    ReproofAhead { property: String },
    /// A re-proof started early that no answer asked for: not counted.
    ReproofDropped { property: String },
    /// A re-proof's admission mutant does not apply to the judged tree.
    MutantDoesNotApply { property: String, why: String },
    /// A re-proof's admission mutant applied, but not as written.
    MutantApplied { how: &'static str },
    /// The build failed: the base is built too, to tell whose fault it is.
    BuildingTheBase,
    /// What a suite run's report says that is not a result.
    Report { label: String, said: Report },
    /// `--decision-log` with `--server`: the server's log has the line.
    DecisionLoggedByServer { path: String },
    /// `--evidence-out` and no evidence: a gate rule decided before the router.
    NoEvidence { path: String, rule: &'static str },
}

/// What became of the build cache when a room was made.
#[derive(Debug, Clone, PartialEq)]
pub enum Cache {
    None,
    Restored { tree: String },
    NotRestored { tree: String, why: String },
}

/// What a suite run's report says that is not a result.
#[derive(Debug, Clone, PartialEq)]
pub enum Report {
    /// The JUnit report is reached through a link in the checkout: not read.
    ThroughLink { report: String, link: String },
    /// The receipt disagrees with itself.
    ReceiptDisagrees { why: String },
    /// The JUnit report disagrees with itself.
    JunitDisagrees { report: String, why: String },
    /// The JUnit report cannot be read.
    Unreadable { report: String, why: String },
    /// No JUnit report at its path.
    Missing { report: String, why: String },
    /// Census tests that passed on the base did not run.
    Vanished { count: usize, first: String },
}

impl fmt::Display for Event {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use crate::core::ladder::{T1, T2};
        match self {
            Event::Plan(line) => f.write_str(line),
            Event::RoomCopied {
                tree,
                files,
                seconds,
                cache,
                backend,
            } => {
                write!(
                    f,
                    "clean room: tree {tree} copied ({files} files, {seconds:.2} s)"
                )?;
                match cache {
                    Cache::None => {}
                    Cache::Restored { tree } => {
                        write!(f, ", the build cache of tree {tree} restored")?;
                    }
                    Cache::NotRestored { tree, why } => write!(
                        f,
                        ", the build cache of tree {tree} not restored ({why}): the build starts cold"
                    )?,
                }
                write!(f, "; runs in {backend}")
            }
            Event::RoomForked { purpose, seconds } => write!(
                f,
                "clean room: a second copy for {purpose} ({seconds:.2} s)"
            ),
            Event::RoomSealed { view } => write!(f, "sealed room: runs see {view}"),
            Event::RunEnded {
                label,
                how,
                seconds,
            } => write!(f, "{label}: {how} ({seconds:.1} s)"),
            Event::NoReceipt { label, why } => write!(f, "{label}: no receipt ({why})"),
            Event::LeftBehind { command, count } => write!(
                f,
                "{command}: {count} process{} left behind, killed",
                if *count == 1 { "" } else { "es" }
            ),
            Event::TreeChanged {
                label,
                files,
                created,
                seal,
                first,
            } => write!(
                f,
                "{label}: changed {files} tracked file(s){}{}{}: nothing more runs",
                match created {
                    0 => String::new(),
                    n => format!(", created {n} file(s) outside the scratch directories"),
                },
                if *seal { " and the fixtures' seal" } else { "" },
                first
                    .as_ref()
                    .map(|f| format!(" (first: {f})"))
                    .unwrap_or_default()
            ),
            Event::IntegrityChecked { checks, seconds } => write!(
                f,
                "integrity: the copy checked after {checks} run{} ({seconds:.3} s)",
                if *checks == 1 { "" } else { "s" }
            ),
            Event::SuiteAhead { holds: true } => write!(
                f,
                "{T2}: started now in its own copy, beside the other runs: it is run 1 of the properties it holds"
            ),
            Event::SuiteAhead { holds: false } => write!(
                f,
                "{T2}: started now in its own copy, beside the other runs; used only if {T1} passes"
            ),
            Event::SuiteDropped { stopped } => write!(
                f,
                "{T2}: {}: the decision came before the suite, which is recorded as not run",
                if *stopped {
                    "its early run was stopped"
                } else {
                    "its early run is not counted"
                }
            ),
            Event::ReproofAhead { property } => write!(
                f,
                "re-proof {property}: its copy made now and readied beside the property runs; it runs on the first core free (the suite beside them ended, or they did), and counts only if they pass"
            ),
            Event::ReproofDropped { property } => write!(
                f,
                "re-proof {property}: its early run is not counted (the plan did not ask for it)"
            ),
            Event::MutantDoesNotApply { property, why } => write!(
                f,
                "re-proof {property}: its mutant does not apply here ({why})"
            ),
            Event::MutantApplied { how } => write!(f, "re-proof: the mutant applied {how}"),
            Event::BuildingTheBase => f.write_str(
                "build: it failed; the base is built too, to tell the patch's fault from the machine's",
            ),
            Event::Report { label, said } => match said {
                Report::ThroughLink { report, link } => write!(
                    f,
                    "{label}: the JUnit report {report} is reached through the symbolic link {link} in the checkout: not read, no failure is discarded"
                ),
                Report::ReceiptDisagrees { why } => {
                    write!(f, "{label}: its report disagrees with itself: {why}")
                }
                Report::JunitDisagrees { report, why } => write!(
                    f,
                    "{label}: the JUnit report {report} disagrees with itself: {why}"
                ),
                Report::Unreadable { report, why } => write!(
                    f,
                    "{label}: the JUnit report {report} cannot be read ({why}): no failure is discarded"
                ),
                Report::Missing { report, why } => write!(
                    f,
                    "{label}: no JUnit report read at {report} ({why}): no failure is discarded"
                ),
                Report::Vanished { count, first } => write!(
                    f,
                    "{label}: {count} census tests that passed on the base did not run (first: {first})"
                ),
            },
            Event::DecisionLoggedByServer { path } => write!(
                f,
                "--decision-log {path}: the server decided, and its own decision log has the line"
            ),
            Event::NoEvidence { path, rule } => write!(
                f,
                "no evidence to write to {path}: gate rule {rule} decided before the router"
            ),
        }
    }
}

/// The runs that ended in this process, in order: (label, how, seconds).
static ENDED: Mutex<Vec<(String, String, f64)>> = Mutex::new(Vec::new());

/// Says `event` on stderr (`patchgate: …`), and keeps a run that ended for the report.
pub fn say(event: Event) {
    if let Event::RunEnded {
        label,
        how,
        seconds,
    } = &event
    {
        ENDED
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .push((label.clone(), how.clone(), *seconds));
    }
    super::output::error(&event.to_string());
}

/// The Markdown report's "What ran": every run that ended, in order, with how it ended and
/// how long it took; empty when nothing ran (a `--facts` decision).
pub fn what_ran() -> String {
    let ended = ENDED
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if ended.is_empty() {
        return String::new();
    }
    let cell = |s: &str| s.replace('|', "\\|").replace('\n', " ");
    let mut out = format!(
        "\n<details><summary>What ran ({} run{})</summary>\n\n| run | ended | seconds |\n|---|---|---:|\n",
        ended.len(),
        if ended.len() == 1 { "" } else { "s" }
    );
    for (label, how, seconds) in ended.iter() {
        out.push_str(&format!(
            "| {} | {} | {seconds:.1} |\n",
            cell(label),
            cell(how)
        ));
    }
    out.push_str("\n</details>\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The words each event is said in, written by hand: what people (and the tests that read
    /// stderr) see.
    #[test]
    fn events_are_said_in_their_words() {
        let rows: Vec<(Event, &str)> = vec![
            (
                Event::RunEnded {
                    label: "t1-property-quorum p run 1/2".into(),
                    how: "exit 0".into(),
                    seconds: 1.24,
                },
                "t1-property-quorum p run 1/2: exit 0 (1.2 s)",
            ),
            (
                Event::TreeChanged {
                    label: "canary".into(),
                    files: 2,
                    created: 0,
                    seal: true,
                    first: Some("a.py".into()),
                },
                "canary: changed 2 tracked file(s) and the fixtures' seal (first: a.py): nothing more runs",
            ),
            (
                Event::LeftBehind {
                    command: "pytest".into(),
                    count: 1,
                },
                "pytest: 1 process left behind, killed",
            ),
            (
                Event::IntegrityChecked {
                    checks: 3,
                    seconds: 0.0124,
                },
                "integrity: the copy checked after 3 runs (0.012 s)",
            ),
            (
                Event::RoomCopied {
                    tree: "abc".into(),
                    files: 4,
                    seconds: 0.5,
                    cache: Cache::Restored { tree: "def".into() },
                    backend: "bubblewrap",
                },
                "clean room: tree abc copied (4 files, 0.50 s), the build cache of tree def restored; runs in bubblewrap",
            ),
        ];
        for (event, words) in rows {
            assert_eq!(event.to_string(), words);
        }
    }
}
