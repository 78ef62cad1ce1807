//! The facts one patch's gate gathered, validated: [`GateRequest`] and its parts.

use crate::core::catalog::Property;
use crate::core::freeze_ledger::FreezeRow;
use crate::core::path::RepoPath;
use crate::core::runs::CatchCodes;
use crate::core::runs::Receipt;
use crate::core::runs::ReceiptGap;
use crate::core::runs::RunOutcome;
use crate::core::runs::counted;
use crate::core::runs::{ExitCodeDoc, TestIdDoc};
use crate::core::seal::SealCheck;
use serde::Deserialize;
use serde::Serialize;
use std::collections::BTreeMap;
use std::collections::HashMap;
use strum::IntoStaticStr;
use strum::VariantArray;
use utoipa::ToSchema;

/// What the fixture suite (the t2 tier) did, as the runner saw it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FixtureSuite {
    /// `None`: killed by its timeout or a signal.
    pub exit_code: Option<u8>,
    /// Ids of the failed or errored test cases, as read from a JUnit XML report
    /// (`classname::name`); `None` when no report was read.
    pub failed_tests: Option<Vec<String>>,
    /// How the report disagrees with itself (a failure outside any test case, declared failures
    /// or errors that differ from the ones its cases list), when it does (sections 11.1, 11.9).
    pub report_disagrees: Option<String>,
    /// The exit codes that are a catch for the suite (default `[1]`).
    pub catch_exit_codes: CatchCodes,
    /// The suite run again with the frozen tests it failed left out (section 12.4): `None`
    /// when it was not.
    pub rerun: Option<Rerun>,
    /// The run of the test files the patch adds, in a process of its own (issue 50).
    pub added: Option<Rerun>,
    /// The observed run's failed tests run again without the observer (issue 64).
    pub plain: Option<Rerun>,
    /// The failed tests whose definition the patch changes (issue 65).
    pub changed_tests: Vec<ChangedTest>,
    /// Its receipt (section 11.1): `None` when its command has no `{junit}` (receipts off),
    /// `Some(None)` when no report was read.
    pub receipt: Option<Option<Receipt>>,
    /// Census tests (section 11.2) that passed on the base and did not run on the head (absent
    /// from its report, or skipped): at most 100 listed.
    pub vanished: Vec<String>,
    /// How many vanished, all of them.
    pub vanished_count: u64,
}

impl Rerun {
    /// It passed: exit 0, its report (when read) lists no failure and agrees with itself, and
    /// (receipts on) its receipt vouches for the exit.
    pub fn passed(&self) -> bool {
        self.exit_code == Some(0)
            && self.failed_tests.as_ref().is_none_or(Vec::is_empty)
            && self.report_disagrees.is_none()
            && self.receipt.as_ref().is_none_or(|r| {
                counted(Some(0), r.as_ref(), &CatchCodes::default(), true)
                    .1
                    .is_none()
            })
    }
}

/// A failed suite test whose definition the patch changes (issue 65): the base's version ran
/// and failed. The runner reads both versions by syntax and sends the lines that differ, each
/// side clipped to 2 KiB, at most 20 tests.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ChangedTest {
    /// The test id (`classname::name`), as the suite's report lists it among its failures.
    #[schema(min_length = 1, max_length = 4096)]
    pub id: String,
    /// The lines of the base's version of the test that the patch takes out or changes.
    #[schema(max_length = 2048)]
    pub base: String,
    /// The lines the patch's version has in their place.
    #[schema(max_length = 2048)]
    pub patch: String,
}

/// A failed test or property as its report gave it (CONTRACT.md section 11.8): the falsifying
/// example, the minimal input, the assertion. The runner clips each message to 2 KiB and sends
/// at most 20.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct FailingCase {
    /// The test id (`classname::name`), or the property id.
    #[schema(min_length = 1, max_length = 4096)]
    pub id: String,
    #[schema(max_length = 2048)]
    pub message: String,
}

/// Something a run changed that it may not (CONTRACT.md section 11.3).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct IntegrityFinding {
    /// The run, as the runner labels it (`t1 order.total run 2/2`).
    #[schema(min_length = 1, max_length = 1024)]
    pub run: String,
    /// Tracked files it changed, deleted or changed the mode of (at most 100).
    #[schema(value_type = Vec<crate::core::path::RepoPathDoc>, max_items = 100)]
    pub files: Vec<String>,
    /// How many, all of them (at least the files listed; 0 only with `seal_changed`).
    #[schema(minimum = 0, maximum = 4294967295_u64)]
    pub count: u64,
    /// Whether the fixtures' seal changed. Default false.
    #[serde(default)]
    pub seal_changed: bool,
    /// Files it created outside the scratch directories (at most 100): a `conftest.py`
    /// written at run time is loaded by every later pytest run in the copy, though git does
    /// not track it. Default none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schema(value_type = Vec<crate::core::path::RepoPathDoc>, max_items = 100)]
    pub created: Vec<String>,
    /// How many it created, all of them (at least the files listed). Default 0.
    #[serde(default, skip_serializing_if = "is_zero")]
    #[schema(minimum = 0, maximum = 4294967295_u64)]
    pub created_count: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// The build step (CONTRACT.md section 11.8), run once before any property.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BuildRun {
    /// `None`: killed by its timeout or a signal.
    pub exit_code: Option<u8>,
    /// The exit codes that mean the code does not build (`[build] catch`; default `[1]`).
    pub catch_exit_codes: CatchCodes,
    /// Its last lines of output.
    pub tail: String,
}

/// A validated `/gate` request: the facts one patch's gate gathered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GateRequest {
    pub patch_id: Option<String>,
    pub changed_files: Vec<RepoPath>,
    /// Paths (files or directories) the patch may not edit: the base commit's config,
    /// catalog, ledger, expected seal and whatever else the base config names.
    pub guarded: Vec<RepoPath>,
    /// Paths (files or directories) no property could observe (docs, say): a patch that
    /// changes only these, and that no property observes, skips the property tier.
    pub inert: Vec<RepoPath>,
    pub seal: SealCheck,
    /// The base commit's catalog (never `introduced`; rows may name their `source`).
    pub catalog: Vec<Property>,
    /// The base commit's freeze ledger.
    pub ledger: Vec<FreezeRow>,
    pub debt_cap: Option<u64>,
    /// Runs by property id, as `/quorum`'s `results`.
    pub property_runs: HashMap<String, Vec<RunOutcome>>,
    /// Catch codes for the property runs.
    pub catch_exit_codes: CatchCodes,
    /// `None`: the suite did not run.
    pub fixture_suite: Option<FixtureSuite>,
    /// A strong row without an `admitted` proof votes as weak (CONTRACT.md section 10).
    pub require_admission: bool,
    /// Changed files the runner saw to be binary (git reads their content as binary) or to be
    /// made executable; compiled files are also known by their names (section 12.3).
    pub binaries: Vec<RepoPath>,
    /// What was judged (section 12.1): the base and head commits and the tree of their merge;
    /// `None` when the facts do not say.
    pub judged: Option<Judged>,
    /// The merge queue's group the head is, when it is one (section 12.1): judged like any
    /// head, and named in the answer.
    pub merge_group: Option<MergeGroup>,
    /// The files the merge of the head into the base conflicts on (section 12.1).
    pub merge_conflicts: Vec<RepoPath>,
    /// How the runs were isolated (section 12.2); `None` when the facts do not say.
    pub sandbox: Option<SandboxBackend>,
    /// Changed files the runner saw to shadow a module of the test toolchain: a module under
    /// a test `pythonpath` directory named like a standard or installed one (section 12.3).
    pub shadows: Vec<RepoPath>,
    /// Changed test files run as the base has them (issue 50).
    pub tests_from_base: Vec<RepoPath>,
    /// Test files the patch adds, run apart (`fixture_suite.added`; issue 50).
    pub added_tests: Vec<RepoPath>,
    /// Changed package manifests that change only what describes the package (issue 50).
    pub metadata_only: Vec<RepoPath>,
    /// Changed source files whose test lines ran as the base has them (issue 50).
    pub test_lines_from_base: Vec<RepoPath>,
    /// Changed source files whose test lines and code could not be split: scope hits.
    pub test_lines_mixed: Vec<RepoPath>,
    /// What the reading of the patch's code flagged (sections 11.6, 14): code that may behave
    /// differently under test, change what a comparison means, or special-case the tests'
    /// inputs.
    pub suspicious: Vec<SuspiciousLine>,
    /// Changed code files the reader could not read as the interpreter will (section 15.2):
    /// each escalates `unread-code`.
    pub unread: Vec<UnreadFile>,
    /// Each property run's receipt, by property id, in run order (section 11.1): `None` when
    /// the property command has no `{junit}` (receipts off).
    pub property_receipts: Option<HashMap<String, Vec<Option<Receipt>>>>,
    /// The property runs were batched (`{ids}`): each run's exit code is its batch's, and a
    /// property's outcome in it is its own test cases' ([`in_batch`]).
    pub batched: bool,
    /// The properties whose first run is the suite's own run of their cases (section 15.3).
    pub suite_runs: Vec<String>,
    /// The failing cases the reports gave (section 11.8).
    pub failures: Vec<FailingCase>,
    /// What runs changed that they may not (section 11.3).
    pub integrity: Vec<IntegrityFinding>,
    /// The build step, when one ran (section 11.8).
    pub build: Option<BuildRun>,
    /// The canary's run on the judged tree, when one ran (section 11.5).
    pub canary: Option<CanaryRun>,
    /// The re-proofs tried (section 11.5): admitted properties run on the judged tree with
    /// their admission mutant applied.
    pub reproof: Vec<Reproof>,
    /// The replays of split properties (section 15.5): each its failing examples tried again.
    pub replays: Vec<Replay>,
    /// The digest of each admitted property's source on the base, as the runner computed it
    /// (issue 50): a record that names another, or one the facts do not give, is stale.
    pub admitted_sources: HashMap<String, String>,
    /// Processes the runs left behind, each killed before its report was read (section 11.4).
    pub left_behind: u64,
    /// The optional steps the runner can run (the base's config): what the core may plan.
    /// `None` when the facts do not say: no build, canary or re-proof is planned.
    pub configured: Option<Configured>,
    /// The sealed room the runs had (CONTRACT.md section 13), when the runner says.
    pub room: Option<RoomFacts>,
    /// Which checks ran the patch's changed code lines (issue 52); `None`: observing is off.
    pub observe: Option<super::observe::ObserveFacts>,
    /// The changed code's calls replayed in a plain program (issue 66); `None`: off.
    pub behavior: Option<super::behavior::BehaviorFacts>,
    /// This is one shard's facts (issue 53): it decides nothing alone.
    pub shard: Option<super::shard_facts::ShardFacts>,
    /// These facts are the shards' combined, and what was wrong with them.
    pub shards: Option<super::shard_facts::ShardsFacts>,
    /// Where the runner's time went, by phase ([`TIMING_STEPS`]), in milliseconds: echoed in
    /// the answer and the report, never a decision.
    pub timings_ms: std::collections::BTreeMap<String, u64>,
}

/// One re-proof (CONTRACT.md section 11.5): an admitted property run on the judged tree with
/// its admission mutant applied. It must catch the mutant; a pass means the property can no
/// longer fail there.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct Reproof {
    #[schema(min_length = 1, max_length = 256)]
    pub property: String,
    /// Whether the re-proof could be made and ran (default false: nothing ran): its mutant
    /// applied, or (`turned`) its mutant still applies and its assertions were turned.
    #[serde(default)]
    pub applied: bool,
    /// It ran the judged tree's code byte for byte with the property's own assertions turned
    /// (its test file's twin, which must fail; CONTRACT.md section 15.3), not its mutant
    /// applied. Default false.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub turned: bool,
    /// 0-255, or null when the run was killed (absent: nothing ran).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<crate::core::runs::ExitCodeDoc>)]
    pub exit_code: Option<u8>,
    /// Its receipt (absent: receipts off, or nothing ran; `null`: no report read).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<Receipt>, nullable = true)]
    pub receipt: Option<Option<Receipt>>,
    /// Why it proves nothing either way, when it does not (the diff did not apply, an error).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false, max_length = 4096)]
    pub note: Option<String>,
}

impl Reproof {
    /// The property passed with its mutant applied: it can no longer fail here.
    pub fn passed(&self, catch: &CatchCodes) -> bool {
        if !self.applied {
            return false;
        }
        let run = match &self.receipt {
            Some(r) => counted(self.exit_code, r.as_ref(), catch, false).0,
            None => self.exit_code,
        };
        run == Some(0)
    }

    /// What it proved (CONTRACT.md section 11.10): a pass, a catch, or — when it could not
    /// run — why it is void.
    pub fn outcome(&self, catch: &CatchCodes) -> ReproofOutcome {
        if !self.applied {
            return ReproofOutcome::Void(match &self.note {
                Some(note) => format!("its mutant does not apply ({note})"),
                None => "its mutant does not apply".to_owned(),
            });
        }
        let Some(code) = self.exit_code else {
            return ReproofOutcome::Void(
                self.note
                    .clone()
                    .unwrap_or_else(|| "its run timed out or was killed".to_owned()),
            );
        };
        let (run, gap) = match &self.receipt {
            Some(r) => counted(Some(code), r.as_ref(), catch, false),
            None => (Some(code), None),
        };
        match (run, gap) {
            (Some(0), _) => ReproofOutcome::Passed,
            (run, _) if catch.caught(run) => ReproofOutcome::Caught,
            (_, Some(ReceiptGap::NothingRan)) => {
                ReproofOutcome::Void(format!("exit {code}, but its receipt shows nothing ran"))
            }
            (_, Some(ReceiptGap::NoReceipt)) => {
                ReproofOutcome::Void(format!("exit {code}, but no report was read"))
            }
            (_, Some(gap)) => ReproofOutcome::Void(format!(
                "exit {code}, which its receipt does not vouch for ({})",
                gap.as_str()
            )),
            (_, None) => ReproofOutcome::Void(format!("exit {code}: neither a pass nor a catch")),
        }
    }
}

/// One replay (CONTRACT.md section 15.5): a property whose runs split (a catch its receipt
/// vouches for, and a pass) run once more where its failure was found, so its property engine
/// tries the failing examples it saved first (hypothesis's example database, proptest's
/// persisted failures). A failure that reproduces is the property's `fail`; one that does not
/// leaves the split a flake.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct Replay {
    #[schema(min_length = 1, max_length = 256)]
    pub property: String,
    /// 0-255, or null when the run was killed.
    #[schema(value_type = Option<crate::core::runs::ExitCodeDoc>)]
    pub exit_code: Option<u8>,
    /// Its receipt (absent: receipts off; `null`: no report read).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<Receipt>, nullable = true)]
    pub receipt: Option<Option<Receipt>>,
}

impl Replay {
    /// The replay as it counts (section 11.1): with a receipt, only what it vouches for.
    pub fn counted(&self, catch: &CatchCodes) -> RunOutcome {
        match &self.receipt {
            Some(r) => counted(self.exit_code, r.as_ref(), catch, false).0,
            None => self.exit_code,
        }
    }
}

/// What one re-proof proved (CONTRACT.md section 11.10).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReproofOutcome {
    /// The property passed with its mutant applied: it can no longer fail here.
    Passed,
    /// It caught its mutant: the checker can still fail.
    Caught,
    /// It did not run, or ran without proving anything either way: why.
    Void(String),
}

/// The canary's run (CONTRACT.md section 11.5): a check that fails in the base must still
/// fail here, with its failure listed in its receipt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CanaryRun {
    /// `None`: killed by its timeout or a signal.
    pub exit_code: Option<u8>,
    pub catch_exit_codes: CatchCodes,
    /// Its receipt (`None`: no report read).
    pub receipt: Option<Receipt>,
    /// It rode in the batched property runs (`[canary] in_batch`): its part of each run, in
    /// run order (the first is `exit_code` and `receipt`); empty when it ran in a process of
    /// its own.
    pub in_runs: Vec<CanaryPart>,
    /// It was the turned twin of this property (section 15.3), under a name drawn per gate.
    pub twin_of: Option<String>,
}

impl CanaryRun {
    /// Its parts: each batched run it rode in, or its own run.
    fn parts(&self) -> Vec<(usize, Option<u8>, Option<&Receipt>)> {
        if self.in_runs.is_empty() {
            return vec![(0, self.exit_code, self.receipt.as_ref())];
        }
        self.in_runs
            .iter()
            .enumerate()
            .map(|(i, p)| (i + 1, p.exit_code, p.receipt.as_ref()))
            .collect()
    }

    /// Whether it still failed as a canary must: a catch its receipt vouches for (in every
    /// property run it rode in).
    pub fn sang(&self) -> bool {
        self.parts()
            .into_iter()
            .all(|(_, code, receipt)| self.why_part(code, receipt).is_none())
    }

    /// Whether its cases listed a failure in batched property run `i` (0-based): that run's
    /// catch is the canary's, not a property's.
    pub fn failed_in_run(&self, i: usize) -> bool {
        self.in_runs
            .get(i)
            .and_then(|p| p.receipt.as_ref())
            .is_some_and(|r| r.failed > 0)
    }

    /// Why it did not fail as it must, in words; `None` when it did.
    pub fn why_not(&self) -> Option<String> {
        self.parts().into_iter().find_map(|(run, code, receipt)| {
            let why = self.why_part(code, receipt)?;
            Some(match run {
                0 => why,
                n => format!("in property run {n}, {why}"),
            })
        })
    }

    fn why_part(&self, exit_code: Option<u8>, receipt: Option<&Receipt>) -> Option<String> {
        let (run, gap) = counted(exit_code, receipt, &self.catch_exit_codes, false);
        if gap.is_none() && self.catch_exit_codes.caught(run) {
            return None;
        }
        Some(match (exit_code, gap) {
            (None, _) => "it was killed or timed out".to_owned(),
            (Some(code), Some(gap)) => format!(
                "it exited {code}, which its receipt does not vouch for ({})",
                gap.as_str()
            ),
            (Some(0), None) => "it passed".to_owned(),
            (Some(code), None) if run.is_some() => {
                format!("it exited {code}, which is not a catch ([canary] catch)")
            }
            (Some(code), None) => format!("it exited {code}"),
        })
    }
}

/// Code the patch adds that a rule of the reading flags (CONTRACT.md sections 11.6 and 14):
/// a syntax rule's hit, or a line matching a `[suspicious]` pattern (rule `pattern`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct SuspiciousLine {
    #[schema(value_type = crate::core::path::RepoPathDoc)]
    pub file: String,
    /// 1-based, in the judged tree.
    #[schema(minimum = 0, maximum = 4294967295_u64)]
    pub line: u64,
    /// The rule's id (`patchgate rules` lists them; `pattern` for a `[suspicious]` pattern).
    #[schema(min_length = 1, max_length = 64)]
    pub rule: String,
    /// What the rule's class says the code does: it decides the reason.
    pub class: SuspicionClass,
    /// The code that matched, as the patch wrote it (clipped to 200 characters).
    #[schema(max_length = 1024)]
    pub code: String,
    /// The pattern it matches, for rule `pattern` (1 to 1,024 characters).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false, min_length = 1, max_length = 1024)]
    pub pattern: Option<String>,
    /// For a special case: where the base's tests or fixtures pin the same literal
    /// (`path:line`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false, min_length = 1, max_length = 1024)]
    pub seen_in: Option<String>,
}

/// A changed code file the reader could not read as the interpreter will (CONTRACT.md
/// section 15.2): what it says cannot be known, so it escalates (`unread-code`), ranked
/// before every class of hit.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct UnreadFile {
    #[schema(value_type = crate::core::path::RepoPathDoc)]
    pub file: String,
    pub reason: UnreadReason,
    /// What exactly (the cookie's codec, the link's target, the parser's first error), at
    /// most 200 characters.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false, min_length = 1, max_length = 200)]
    pub detail: Option<String>,
}

crate::core::words! {
    "kebab-case";
    /// Why a changed code file is unread (CONTRACT.md section 15.2).
    pub enum UnreadReason {
        /// A symbolic link among the code: the interpreter reads what it points to, the reader
        /// would read the link.
        SymbolicLink,
        /// Larger than the reader's limit.
        OverReadLimit,
        /// Not UTF-8, where the interpreter reads UTF-8.
        #[serde(rename = "not-utf-8")]
        #[strum(serialize = "not-utf-8")]
        NotUtf8,
        /// A coding cookie (PEP 263) naming another encoding than UTF-8.
        CodingCookie,
        /// The parser could not parse it whole (or it holds a NUL byte).
        Unparsed,
        /// A form feed inside a line's indentation, which the interpreter and the parser may
        /// count differently.
        AmbiguousIndentation,
        /// A file the interpreter or the build loads under an extension the reader does not parse
        /// (Cython), or a file `include!`d from one it could not read with it.
        SkippedExtension,
    }
}

impl UnreadReason {
    /// What it means, in a sentence's middle.
    pub fn says(self) -> &'static str {
        match self {
            Self::SymbolicLink => {
                "a symbolic link among the code (the interpreter reads what it points to)"
            }
            Self::OverReadLimit => "larger than the reader's limit",
            Self::NotUtf8 => "not UTF-8",
            Self::CodingCookie => "a coding cookie other than UTF-8",
            Self::Unparsed => "the parser could not parse it whole",
            Self::AmbiguousIndentation => {
                "a form feed inside its indentation, which the interpreter and the parser may count differently"
            }
            Self::SkippedExtension => "code under an extension the reader does not parse",
        }
    }
}

crate::core::words! {
    "kebab-case";
    /// The class of a reading rule (CONTRACT.md section 14.2), in the order they decide: the
    /// first class among the hits names the reason.
    pub enum SuspicionClass {
        /// Code that asks whether it is under test (`test-aware-code`).
        Probe,
        /// Code that changes what a comparison means (`equality-overload`).
        Overload,
        /// A literal the base's tests pin, compared in code (`test-input-in-code`).
        SpecialCase,
    }
}

/// The sealed room the runs had (CONTRACT.md section 13): what a run saw of the machine, what
/// capped it and what held each cap, and every run a cap ended (each `null` in its step).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct RoomFacts {
    /// The directories a run saw, in mount order.
    #[schema(max_items = 200, value_type = Vec<RoomPathDoc>)]
    pub saw: Vec<String>,
    /// The credential paths masked in them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schema(max_items = 200, value_type = Vec<RoomPathDoc>)]
    pub masked: Vec<String>,
    /// Whose uid the runs were outside the room: `own` (a uid of the room's own: the runner
    /// is root and drops to it) or `runner` (the runner's own, in a user namespace).
    pub uid: RoomUid,
    /// A run's memory cap, MiB.
    #[schema(minimum = 1, maximum = 1048576)]
    pub memory_mib: u64,
    /// A run's process cap (threads count).
    #[schema(minimum = 1, maximum = 1048576)]
    pub pids: u64,
    /// A room's cap on the bytes its runs write, MiB.
    #[schema(minimum = 1, maximum = 1048576)]
    pub disk_mib: u64,
    /// What held each cap.
    pub held_by: HeldBy,
    /// The runs a cap ended: each counts as `null`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schema(max_items = 100)]
    pub over: Vec<OverLimit>,
}

crate::core::value_schema!(
    /// A path as `room` lists it (the API document's `RoomPath`).
    RoomPathDoc(String) as "RoomPath",
    || utoipa::openapi::ObjectBuilder::new()
        .schema_type(utoipa::openapi::schema::Type::String)
        .description(Some("A path on the runner's machine, as a run saw it: at most 4096 bytes."))
        .min_length(Some(1))
        .max_length(Some(4096))
);

/// What held each cap of a room: e.g. `watch+rlimit-as` (memory), `rlimit-nproc+watch` or
/// `watch` (processes), `tmpfs-size+rlimit-fsize` or `rlimit-fsize` (bytes written).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct HeldBy {
    #[schema(min_length = 1, max_length = 40)]
    pub memory: String,
    #[schema(min_length = 1, max_length = 40)]
    pub pids: String,
    #[schema(min_length = 1, max_length = 40)]
    pub disk: String,
}

crate::core::words! {
    "kebab-case";
    /// `room.uid`.
    pub enum RoomUid {
        /// A uid of the room's own (the runner is root and drops to it before the room starts).
        Own,
        /// The runner's own uid, in a user namespace.
        Runner,
    }
}

/// A run a cap of its room ended (CONTRACT.md section 13.3).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct OverLimit {
    /// The run, as the runner names it (`t2-fixtures`, `build`, `t1-properties holds run
    /// 1/2`, ...).
    #[schema(min_length = 1, max_length = 4096)]
    pub run: String,
    pub limit: Limit,
}

crate::core::words! {
    "kebab-case";
    /// Which cap a run went over.
    pub enum Limit {
        OverMemory,
        OverPids,
        OverDisk,
    }
}

impl RoomFacts {
    /// The cap that ended the run labelled `run`, if one did.
    pub fn over(&self, run: &str) -> Option<Limit> {
        self.over.iter().find(|o| o.run == run).map(|o| o.limit)
    }

    /// How a run the room ended is said: `over-memory (the room's cap: 4096 MiB)`.
    pub fn said(&self, limit: Limit) -> String {
        let cap = match limit {
            Limit::OverMemory => format!("{} MiB of memory", self.memory_mib),
            Limit::OverPids => format!("{} processes", self.pids),
            Limit::OverDisk => format!("{} MiB written", self.disk_mib),
        };
        format!("{} (the room's cap: {cap})", <&str>::from(limit))
    }
}

/// Which merge queue built the group.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema, IntoStaticStr, VariantArray,
)]
#[serde(rename_all = "kebab-case")]
#[strum(serialize_all = "kebab-case")]
pub enum MergeQueue {
    /// GitHub's merge queue (`merge_group`): a temporary branch holding the base and the
    /// queued pull requests ahead.
    GithubMergeGroup,
    /// GitLab's merge train: the train's ref holds the target branch and the merge requests
    /// ahead.
    GitlabMergeTrain,
}

/// The merge queue's group a gate judged: its head already holds the base and the patches
/// ahead, so its tree is what lands.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct MergeGroup {
    pub queue: MergeQueue,
    /// The group's ref (`refs/heads/gh-readonly-queue/main/pr-13-...`,
    /// `refs/merge-requests/7/train`).
    #[serde(rename = "ref")]
    #[schema(min_length = 1, max_length = 1024)]
    pub group_ref: String,
    /// The pull (merge) requests in it, as the event and the group's commits name them, in
    /// queue order (numbers up to 2,147,483,647, as GitHub's and GitLab's APIs count them).
    #[serde(default)]
    #[schema(max_items = 1000)]
    pub pull_requests: Vec<u32>,
}

/// The commit and tree ids of what was judged: the base, the head, and the tree that would
/// land (the merge of the head into the base).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct Judged {
    #[schema(pattern = "^([0-9a-fA-F]{40}|[0-9a-fA-F]{64})$")]
    pub base: String,
    #[schema(pattern = "^([0-9a-fA-F]{40}|[0-9a-fA-F]{64})$")]
    pub head: String,
    #[schema(pattern = "^([0-9a-fA-F]{40}|[0-9a-fA-F]{64})$")]
    pub tree: String,
}

crate::core::words! {
    "kebab-case";
    /// How the runs were isolated from the runner and the machine (CONTRACT.md section 12.2).
    pub enum SandboxBackend {
        /// bubblewrap: new PID, IPC and network namespaces, everything but the copy read-only.
        Bubblewrap,
        /// No sandbox (`[sandbox] mode = "off"`): the runs had the runner's user and files.
        Off,
    }
}

/// The optional steps the runner can run, as the base's config sets them up: what the core's
/// plan may ask for (CONTRACT.md section 8.2).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct Configured {
    /// A build step (`[build]`) runs once before any run of the code.
    #[serde(default)]
    pub build: bool,
    /// A canary (`[canary]`) runs before any property run counts.
    #[serde(default)]
    pub canary: bool,
    /// How many admitted properties to re-prove (`[properties] reprove`), 0 to 100.
    #[serde(default)]
    #[schema(minimum = 0, maximum = 100)]
    pub reprove: u8,
    /// The suite can be re-run with tests left out (`[suite] deselect`). Default true.
    #[serde(default = "yes")]
    pub deselect: bool,
    /// The base's suite runs property cases too (its census lists cases of a catalog
    /// property, by `[properties] case`), and the runner reads each property's cases in the
    /// suite's receipt: the suite is then the first run of the properties it holds
    /// (`suite_runs`, CONTRACT.md section 15.3), started with the property runs. Default
    /// false.
    #[serde(default)]
    pub properties_in_suite: bool,
    /// The runner's random draw, which orders the re-proof candidates (an attacker cannot
    /// know which admitted property is re-proven), 0 to 4,294,967,295.
    #[serde(default)]
    #[schema(minimum = 0, maximum = 4294967295_u64)]
    pub seed: u64,
    /// The files each admitted property's stored mutant touches, by property id (at most
    /// 1,000 properties, 100 files each): the re-proof tries first the properties whose
    /// mutant touches a file the patch changes (section 11.10).
    /// (Each path as the path normaliser writes it.)
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    #[schema(value_type = BTreeMap<String, Vec<crate::core::path::RepoPathDoc>>)]
    pub mutant_files: BTreeMap<String, Vec<String>>,
}

fn yes() -> bool {
    true
}

impl Default for Configured {
    fn default() -> Self {
        Self {
            build: false,
            canary: false,
            reprove: 0,
            mutant_files: BTreeMap::new(),
            deselect: true,
            properties_in_suite: false,
            seed: 0,
        }
    }
}

// One type from the runner through `--facts-out` to the rules (`Facts` writes it).
/// The suite's re-run without the frozen tests that failed.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(as = RerunDoc)]
pub struct Rerun {
    /// 0-255, or null when the re-run was killed by its timeout or a signal.
    #[schema(value_type = Option<ExitCodeDoc>, required = true)]
    pub exit_code: Option<u8>,
    /// Ids of the failed or errored test cases its report lists.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<Vec<TestIdDoc>>, nullable = false)]
    pub failed_tests: Option<Vec<String>>,
    /// How its report disagrees with itself, when it does: the re-run did not pass.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false, max_length = 4096)]
    pub report_disagrees: Option<String>,
    /// Its receipt, as the suite's.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<Receipt>, nullable = true)]
    pub receipt: Option<Option<Receipt>>,
}

// One type from the runner through `--facts-out` to the rules (`Facts` writes it).
/// The canary's part of one batched property run.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(as = CanaryPartDoc)]
pub struct CanaryPart {
    /// The run's exit code (its batch's), or null when it was killed.
    #[schema(value_type = Option<ExitCodeDoc>, required = true)]
    pub exit_code: Option<u8>,
    /// The receipt of the canary's own cases in that run; null when no report was read.
    #[schema(required = true, nullable = true)]
    pub receipt: Option<Receipt>,
}
