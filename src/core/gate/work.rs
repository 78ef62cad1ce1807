//! The plan's answer as work items: what the runner runs now, each with the tree it runs on,
//! the items it waits for, and whether it is speculative (may be started ahead and dropped).
//! The plan's rows ([`super::PLAN`]) choose the step; [`work_for`] lists its items, the only
//! thing the runner reads to know what to run (the step's other fields are this list,
//! summarised, for clients that read the step).

use serde::Deserialize;
use serde::Serialize;
use utoipa::ToSchema;

crate::core::words! {
    "snake_case";
    /// A step the runner executes.
    pub enum NextStep {
        /// Run the build step (`configured.build`) and report it as `build`.
        Build,
        /// Run the canary when `canary` is true (report it as `canary`), and `property_ids`, each
        /// `runs` times (report them as `property_runs`), up to `--jobs` at once.
        Runs,
        /// Run each property in `replay` once more where its failing run ran (the suite's room
        /// for a run 1 that was the suite's, else the property runs' room), so its engine tries
        /// the failing examples that run saved first, and report each as `replays` (CONTRACT.md
        /// section 15.5).
        Replay,
        /// Run the admitted property `reprove` once on a fresh copy of the judged tree with its
        /// admission mutant applied, and add what it did to `reproof` (section 11.5).
        Reproof,
        /// Run the fixture suite and report it as `fixture_suite`.
        Suite,
        /// Run the test files the patch adds (`added_tests`) in a room of their own, and
        /// report them as `fixture_suite.added` (issue 50: they can only block).
        AddedTests,
        /// Run the suite again with the tests in `deselect` left out (the frozen tests it
        /// failed), and report it as `fixture_suite.rerun` (section 12.4).
        Rerun,
        /// Run each pending patch mutant (`observe.mutants`, issue 52) on a copy of the judged
        /// tree with it applied, against the checks that ran its line, and report what became
        /// of it (`killed`, `survived` or `void`) in its place.
        PatchMutants,
        /// Every fact the decision needs is in: decide (`POST /gate`).
        Decide,
    }
}

crate::core::words! {
    "snake_case";
    /// What a work item runs; the runner has one arm for each.
    pub enum WorkKind {
        /// The build step (`configured.build`), reported as `build`.
        Build,
        /// The canary, which must fail, reported as `canary` (CONTRACT.md section 11.5).
        Canary,
        /// `property`'s runs from run `from_run` to the configured number, reported in
        /// `property_runs` and `property_receipts`. Runs of different properties with the same
        /// number may share one process (a batched property command).
        PropertyRuns,
        /// `property` run once more where its first failing run ran, reported in `replays`
        /// (section 15.5).
        Replay,
        /// `property` re-proven on its admission mutant, added to `reproof` (section 11.5).
        Reproof,
        /// The fixture suite, reported as `fixture_suite` (with `holds`: the first run of
        /// those properties, `suite_runs`, section 15.3).
        Suite,
        /// The test files the patch adds, reported as `fixture_suite.added`.
        AddedTests,
        /// The suite again without `deselect`, reported as `fixture_suite.rerun`.
        Rerun,
        /// Patch mutant `mutant` (its index in `observe.mutants`) run against the checks that
        /// ran its line, reported in its place.
        PatchMutant,
    }
}

crate::core::words! {
    "snake_case";
    /// The tree a work item runs on.
    pub enum WorkTree {
        /// The judged tree, as the build left it: the runner's room, or a copy of it of its
        /// own when the item runs beside others.
        Judged,
        /// A fresh copy of the judged tree with `property`'s admission mutant applied.
        Mutant,
        /// The room `property`'s first failing run ran in (the suite's, when that run was the
        /// suite's run 1), where its engine saved the failing examples.
        WhereItFailed,
        /// The room the suite ran in.
        SuiteRoom,
        /// The judged tree with the test files the patch adds in, in a room of their own (so
        /// their imports reach nothing of the suite's run).
        WithAddedTests,
        /// A fresh copy of the judged tree with patch mutant `mutant` applied.
        PatchMutant,
    }
}

/// One thing the runner runs, and reports the moment it ends.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct WorkItem {
    /// Its name in this gate, what `needs` refers to: `build`, `canary`, `runs:ID`,
    /// `replay:ID`, `reproof:ID`, `suite`, `added_tests`, `rerun`.
    pub id: String,
    pub kind: WorkKind,
    /// The property it runs (property runs, replay, re-proof).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub property: Option<String>,
    /// With property runs: the first run it makes (2 when the suite is run 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub from_run: Option<u8>,
    pub tree: WorkTree,
    /// The items (this answer's or ended before) that must have ended before it starts.
    pub needs: Vec<String>,
    /// May be started ahead, in a copy of its own, when there are cores to spare, and dropped
    /// if a later answer does not ask for it; never reported until one does.
    pub speculative: bool,
    /// With the suite: the properties it is the first run of (section 15.3).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub holds: Vec<String>,
    /// With a re-run: the frozen tests to leave out (section 12.4).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub deselect: Vec<String>,
    /// With a patch mutant: its index in `observe.mutants` (0-based).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mutant: Option<u32>,
}

impl WorkItem {
    fn new(kind: WorkKind, id: String, tree: WorkTree, needs: Vec<String>) -> Self {
        WorkItem {
            id,
            kind,
            property: None,
            from_run: None,
            tree,
            needs,
            speculative: false,
            holds: Vec::new(),
            deselect: Vec::new(),
            mutant: None,
        }
    }

    fn of(mut self, property: &str) -> Self {
        self.property = Some(property.to_owned());
        self
    }

    fn ahead(mut self) -> Self {
        self.speculative = true;
        self
    }
}

/// The ids of the items, by kind and property (a patch mutant's "property" is its index).
pub fn work_id(kind: WorkKind, property: Option<&str>) -> String {
    let name: &str = kind.into();
    match (kind, property) {
        (WorkKind::PropertyRuns, Some(p)) => format!("runs:{p}"),
        (_, Some(p)) => format!("{name}:{p}"),
        (_, None) => name.to_owned(),
    }
}

/// What a step's items are made from: the plan's choices on the facts so far.
pub(super) struct StepWork<'a> {
    pub next: NextStep,
    /// The build ran (everything that runs the code waits for it).
    pub built: bool,
    pub canary: bool,
    pub property_ids: &'a [String],
    /// The suite is the first run of `property_ids`.
    pub suite_first: bool,
    /// The suite has not run and may start now, speculatively, beside the step.
    pub suite_beside: bool,
    pub reproof_ahead: Option<&'a str>,
    pub replay: &'a [String],
    pub reprove: Option<&'a str>,
    pub deselect: Option<&'a [String]>,
    /// The pending patch mutants, by index.
    pub mutants: &'a [u32],
}

/// The work items of the step `s` describes, in the order the runner starts them.
pub(super) fn work_for(s: &StepWork<'_>) -> Vec<WorkItem> {
    use WorkKind as K;
    let built = || -> Vec<String> {
        match s.built {
            true => vec![work_id(K::Build, None)],
            false => Vec::new(),
        }
    };
    let mut work = Vec::new();
    let reproof = |id: &str| {
        WorkItem::new(
            K::Reproof,
            work_id(K::Reproof, Some(id)),
            WorkTree::Mutant,
            built(),
        )
        .of(id)
    };
    let suite = |holds: &[String]| {
        let mut item = WorkItem::new(K::Suite, work_id(K::Suite, None), WorkTree::Judged, built());
        item.holds = holds.to_vec();
        item
    };
    match s.next {
        NextStep::Build => work.push(WorkItem::new(
            K::Build,
            work_id(K::Build, None),
            WorkTree::Judged,
            Vec::new(),
        )),
        NextStep::Runs => {
            if s.canary {
                work.push(WorkItem::new(
                    K::Canary,
                    work_id(K::Canary, None),
                    WorkTree::Judged,
                    built(),
                ));
            }
            if s.suite_first {
                work.push(suite(s.property_ids));
            }
            for id in s.property_ids {
                let mut item = WorkItem::new(
                    K::PropertyRuns,
                    work_id(K::PropertyRuns, Some(id)),
                    WorkTree::Judged,
                    built(),
                )
                .of(id);
                item.from_run = Some(if s.suite_first { 2 } else { 1 });
                work.push(item);
            }
        }
        NextStep::Replay => work.extend(s.replay.iter().map(|id| {
            WorkItem::new(
                K::Replay,
                work_id(K::Replay, Some(id)),
                WorkTree::WhereItFailed,
                vec![work_id(K::PropertyRuns, Some(id))],
            )
            .of(id)
        })),
        NextStep::Reproof => work.extend(s.reprove.map(reproof)),
        NextStep::Suite => work.push(suite(&[])),
        NextStep::AddedTests => work.push(WorkItem::new(
            K::AddedTests,
            work_id(K::AddedTests, None),
            WorkTree::WithAddedTests,
            vec![work_id(K::Suite, None)],
        )),
        NextStep::Rerun => {
            let mut item = WorkItem::new(
                K::Rerun,
                work_id(K::Rerun, None),
                WorkTree::SuiteRoom,
                vec![work_id(K::Suite, None)],
            );
            item.deselect = s.deselect.map(<[String]>::to_vec).unwrap_or_default();
            work.push(item);
        }
        NextStep::PatchMutants => work.extend(s.mutants.iter().map(|n| {
            let mut item = WorkItem::new(
                K::PatchMutant,
                work_id(K::PatchMutant, Some(&n.to_string())),
                WorkTree::PatchMutant,
                vec![work_id(K::Suite, None)],
            );
            item.mutant = Some(*n);
            item
        })),
        NextStep::Decide => {}
    }
    // What may start ahead: the suite (needed once t1 passes, unless a run decides first),
    // and the re-proof the same draw names once the runs pass.
    if s.suite_beside && !s.suite_first {
        work.push(suite(&[]).ahead());
    }
    if let Some(id) = s.reproof_ahead {
        work.push(reproof(id).ahead());
    }
    work
}
