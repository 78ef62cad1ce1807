//! What the runner knows before anything runs: the base's inputs, the judged tree in its clean
//! room, and the facts they give ([`Gathered`]); and the integrity check after every run.

use super::super::config::GateConfig;
use super::super::documents::{ledger_rows, parse_document, parse_seal_text};
use super::super::error::CliError;
use super::super::git::{
    base_file, binary_content, commit_of, enter_repository, fill_commit_counts, git_changed,
    git_made_executable, is_ancestor, judged_tree, ls_blobs, tree_with,
};
use super::super::progress::{self, Event};
use super::super::reading::in_file::in_file_tests;
use super::super::reading::read_patch;
use super::super::sandbox::Room;
use super::{GateArgs, base_census as census, shadows};
use crate::core::catalog::Catalog;
use crate::core::freeze_ledger::Frozen;
use crate::core::gate::{Configured, Facts, IntegrityFinding, Judged, SealFacts};

/// What the runner knows before running anything.
pub(super) struct Gathered {
    pub config: GateConfig,
    /// The facts known before anything runs.
    pub facts: Facts,
    /// The base's catalog rows, as the core reads them.
    pub properties: Vec<crate::core::catalog::Property>,
    pub head: String,
    pub changed: Vec<String>,
    /// Where every run happens.
    pub room: Room,
    /// The build cache the rooms start from (`patchgate warm`), if any.
    pub cache: Option<crate::cli::build_cache::BuildCache>,
    /// The suite's own copy, being made (see [`SuiteCopy`]).
    pub spare: SuiteCopy,
    /// The cases the base's census records as skipped: not a property's (issue 64).
    pub base_skips: super::super::runner::BaseSkips,
    /// The fixtures' seal before anything ran.
    pub seal: String,
    /// The base commit, and the tree the runs see: the judged tree with its changed test files
    /// as the base has them and the test files the patch adds left out (issue 50).
    pub base: String,
    pub tree: String,
    /// The test files the patch adds, and the run tree with them in (`None` without any, or
    /// without `[suite] added` to run them).
    pub added: Vec<String>,
    pub added_tree: Option<String>,
    /// The test files the base holds that the patch edits (run as the base has them), and the
    /// judged tree, which holds them as the patch has them: with `[replay]` on, their run as
    /// the patch has them is observed too (issue 66), never a verdict.
    pub edited: Vec<String>,
    pub judged: String,
    /// The base's census (section 11.2): test id → outcome (a shard's: its share).
    pub census: Option<std::collections::BTreeMap<String, String>>,
    /// This job's shard of a split gate (`--shard K/N`, issue 53).
    pub shard: Option<super::shard::ShardRun>,
    /// The patch's changed code lines the observed run measures (issue 52; empty when
    /// `[observe]` is off).
    pub watched: super::observe::Watched,
    /// The integrity checks after runs so far, and the seconds they took (said at the end).
    pub checked: std::sync::Mutex<(u32, f64)>,
    /// The Rust probes and patch mutant switches the build step built (issue 68): the
    /// observed run then compiles nothing.
    pub observed_build: std::sync::OnceLock<super::rust_probed::RustProbes>,
    /// Set when the build step could not build them: the observed run then compiles the
    /// probes alone.
    pub switches_refused: std::sync::atomic::AtomicBool,
}

pub(super) fn gather(args: &GateArgs) -> Result<Gathered, CliError> {
    enter_repository(args.at.directory.as_deref())?;

    let base_ref = args.base.as_deref().unwrap_or("HEAD");
    let base = commit_of(base_ref)?;
    let head = commit_of(&args.at.head)?;
    // What is judged is the tree that would land (section 12.1), from git's objects: neither
    // the worktree nor its uncommitted changes are read, and nothing runs in it.
    // A merge queue lands the group's own commit, built on the queue's base: a group whose
    // head does not hold the base is not what the queue lands, and is never judged.
    if let Some(group) = args.merge_group()
        && !is_ancestor(&base, &head)?
    {
        return Err(CliError::data(format!(
            "{} {}: the base {base} is not an ancestor of the group's head {head}: a queue lands the group's own commit, built on its base, so this is not what it would land (give the queue's base: GitHub's merge_group.base_sha, GitLab's train target); refused, never judged",
            match group.queue {
                crate::core::gate::MergeQueue::GithubMergeGroup => "the merge group",
                crate::core::gate::MergeQueue::GitlabMergeTrain => "the merge train",
            },
            group.group_ref
        )));
    }
    let judged = judged_tree(&base, &head)?;

    // The config, from the base commit.
    let mut config = GateConfig::from_base(&base, base_ref, &args.at.config)?;
    if args.listing {
        config.replay = Some(super::super::config_observe::ReplayConfig::listed(
            config.replay,
        ));
        config.observe = Some(super::super::config_observe::ObserveConfig::LISTED);
    }

    let changed = git_changed(&base, &judged.tree)?;
    let mut binaries = git_made_executable(&base, &judged.tree)?;
    let (from_base, added) = tests_apart(&config, &base, &changed)?;
    // The tests inside source files, judged as the base has them too (issue 50).
    let in_file = in_file_tests(&base, &judged.tree, &changed)?;
    let run_tree = tree_with(&judged.tree, &base, &from_base, &added, &in_file.from_base)?;
    let added_tree = match added.is_empty() {
        true => None,
        false => Some(tree_with(
            &judged.tree,
            &base,
            &from_base,
            &[],
            &in_file.from_base,
        )?),
    };
    // The files judged apart are not in the room as the patch has them: their own bytes
    // are read for the binary check.
    let apart: Vec<&str> = from_base.iter().chain(&added).map(String::as_str).collect();
    for (file, bytes) in apart
        .iter()
        .zip(super::super::git::blobs(&judged.tree, &apart, 64 << 20)?)
    {
        if bytes.is_some_and(|b| b.iter().take(8000).any(|x| *x == 0))
            && !binaries.iter().any(|b| b == file)
        {
            binaries.push((*file).to_owned());
        }
    }
    // The catalog and the ledger, from the base commit.
    let catalog_bytes = base_file(&base, &config.catalog)?.ok_or_else(|| {
        CliError::data(format!(
            "the base commit {} has no catalog {} (the `catalog` key of {})",
            base_ref, config.catalog, args.at.config
        ))
    })?;
    let catalog = parse_document(
        &catalog_bytes,
        &format!("{base_ref}:{}", config.catalog),
        "catalog",
    )?;
    let mut ledger = match base_file(&base, &config.ledger)? {
        Some(bytes) => ledger_rows(
            &parse_document(&bytes, &format!("{base_ref}:{}", config.ledger), "ledger")?,
            super::GATHERED_INVALID,
        )?,
        None => Vec::new(),
    };
    fill_commit_counts(&mut ledger, &head)?;
    // Read once, as the core reads it; a row it would refuse is refused here (65).
    let (properties, errors) =
        super::super::documents::catalog_properties(&catalog, &config.properties.catch);
    super::super::documents::valid(errors, super::GATHERED_INVALID)?;
    // The census (section 11.2), from the base commit; the ledger's tests must be in it. A
    // shard (issue 53) splits it and is held to its share.
    let mut shard = None;
    let census = match &config.suite.census {
        None if args.shard.is_some() => {
            return Err(CliError::usage(format!(
                "--shard splits the suite by the base's census, and {} names none (`[suite] census`): write it with `patchgate census --write` and commit it",
                args.at.config
            )));
        }
        None => None,
        Some(path) => {
            let bytes = base_file(&base, path)?.ok_or_else(|| {
                CliError::data(format!(
                    "the base commit {base_ref} has no census {path} (`[suite] census`): write it with `patchgate census --base {base_ref} --write` and commit it"
                ))
            })?;
            let (census, seconds) = census::parse_census(&bytes, &format!("{base_ref}:{path}"))?;
            if let Some(k) = args.shard {
                let config_bytes = base_file(&base, &args.at.config)?.unwrap_or_default();
                let census = (census.clone(), seconds);
                let units = super::shard::units(&config, &properties, &changed, &census);
                shard = Some(super::shard::plan(k, &census, &config_bytes, &units)?);
            }
            for (i, row) in ledger.iter().enumerate() {
                if let Frozen::Test { id, .. } = &row.frozen
                    && !census.contains_key(id)
                {
                    return Err(CliError::data(format!(
                        "{base_ref}:{} row {i} freezes the test {id:?}, which the census {path} does not know: a ledger test id is a census id (`classname::name`)",
                        config.ledger
                    )));
                }
            }
            Some(census)
        }
    };
    let expected = base_file(&base, &config.expected_seal)?.ok_or_else(|| {
        CliError::data(format!(
            "the base commit {} has no expected seal {}: write it with `patchgate seal {} --out {}` and commit it",
            base_ref, config.expected_seal, config.fixtures, config.expected_seal
        ))
    })?;
    let expected = parse_seal_text(
        &String::from_utf8_lossy(&expected),
        &format!("{base_ref}:{}", config.expected_seal),
    )?;
    // The clean room: a fresh copy of the judged tree, where every run happens (69 under
    // `mode = "required"` without a working sandbox, before anything runs).
    // The build cache (`patchgate warm`), copied in unless nothing will run.
    let cache = config.build_cache();
    let room = super::super::runner::open_room(
        &config.sandbox,
        &run_tree,
        cache.as_ref().filter(|_| !args.dry_run),
    )?;
    // The suite's own copy (runs at once, no build step to copy after): written beside the
    // rest of the gathering, on another core.
    let spare = SuiteCopy::start(
        (args.jobs() > 1 && config.build.is_none() && !args.dry_run)
            .then(|| (config.sandbox.clone(), run_tree.clone())),
    );
    for file in binary_content(&room.tree, &changed) {
        if !binaries.contains(&file) {
            binaries.push(file);
        }
    }
    // The seal of the judged tree's fixtures, before anything runs.
    let actual = fixtures_seal(&room, &config)?;

    let mutant_files = super::mutants::mutant_files(&config, &base, &properties)?;
    // The patch's code, read by its syntax (CONTRACT.md section 14), before anything runs.
    let javascript = crate::cli::reading::runtimes::runs_javascript(&config);
    let reading = read_patch(
        &base,
        &judged.tree,
        &config.suspicious,
        (&config.fixtures, javascript),
    )?;
    let properties_in_suite = census
        .as_ref()
        .is_some_and(|c| census::lists_property_cases(c, &config, &properties));
    let base_skips = super::super::runner::base_skips(census.as_ref());
    let census = match (&shard, census) {
        (Some(s), Some(c)) => Some(s.share_of(&c)),
        (_, c) => c,
    };
    // Each admitted property's source as the base has it now, digested as admission records
    // it: the core sees an admission its source has outgrown (issue 50).
    let mut admitted_sources = std::collections::BTreeMap::new();
    for row in properties
        .iter()
        .filter(|p| p.admitted.is_some())
        .take(1000)
    {
        let id = &row.id;
        let sources: Vec<String> = row.source.iter().map(|s| s.as_str().to_owned()).collect();
        if let Some(digest) = super::super::git::source_digest(&base, &sources)? {
            admitted_sources.insert(id.to_owned(), digest);
        }
    }
    let frozen = ledger
        .iter()
        .filter(|r| r.state == crate::core::freeze_ledger::LedgerState::Open)
        .filter_map(|r| match &r.frozen {
            Frozen::Test { id, .. } => Some(id.clone()),
            Frozen::Property(_) => None,
        })
        .collect();
    let watched = super::observe::watched(
        config.observe,
        &base,
        &run_tree,
        (&config.inert, &config.fixtures),
        frozen,
    )?;
    let facts = Facts {
        observe: watched.unread(),
        patch_id: Some(args.patch_id.clone().unwrap_or_else(|| head.clone())),
        changed_files: changed.clone(),
        guarded: config.guarded(&args.at.config),
        inert: config.inert.clone(),
        seal: SealFacts {
            actual: actual.clone(),
            expected: expected.to_hex(),
        },
        catalog: Catalog {
            properties: properties.clone(),
        },
        ledger: Some(ledger),
        debt_cap: config.debt_cap,
        catch_exit_codes: Some(config.properties.catch.clone()),
        require_admission: config.require_admission,
        binaries,
        judged: Some(Judged {
            base: judged.base.clone(),
            head: judged.head.clone(),
            tree: judged.tree.clone(),
        }),
        merge_group: args.merge_group(),
        merge_conflicts: judged.conflicts.clone(),
        sandbox: Some(room.backend),
        shadows: shadows::shadows(&room, &base, &changed),
        tests_from_base: from_base.clone(),
        added_tests: added.clone(),
        metadata_only: super::manifests::metadata_only(&base, &judged.tree, &changed)?,
        test_lines_from_base: in_file.from_base.iter().map(|(f, _)| f.clone()).collect(),
        test_lines_mixed: in_file.mixed.clone(),
        suspicious: reading.hits,
        unread: reading.unread,
        admitted_sources,
        configured: Some(Configured {
            build: config.build.is_some(),
            canary: config.canary.is_some(),
            reprove: config.properties.reprove,
            deselect: config.suite.deselect.is_some(),
            properties_in_suite,
            seed: draw(),
            mutant_files,
        }),
        shard: shard.as_ref().map(|s| s.facts.clone()),
        ..Facts::default()
    };
    Ok(Gathered {
        shard,
        config,
        facts,
        properties,
        head,
        changed,
        room,
        cache,
        spare,
        seal: actual,
        base_skips,
        base: base.clone(),
        tree: run_tree,
        added,
        added_tree,
        edited: from_base,
        judged: judged.tree.clone(),
        census,
        checked: std::sync::Mutex::new((0, 0.0)),
        watched,
        observed_build: std::sync::OnceLock::new(),
        switches_refused: std::sync::atomic::AtomicBool::new(false),
    })
}

/// The changed test files judged apart (issue 50): those the base holds run as the base has
/// them; those it does not are the patch's added tests, left out of the suite's run when
/// `[suite] added` can run them (else they stay, a scope hit). Never a file under the sealed
/// fixtures, one whose name starts with `-`, or one the core would not judge apart.
fn tests_apart(
    config: &GateConfig,
    base: &str,
    changed: &[String],
) -> Result<(Vec<String>, Vec<String>), CliError> {
    let markers = crate::core::ladder::ScopeMarkers::default();
    let fixtures = config.fixtures.trim_end_matches('/');
    let candidates: Vec<String> = changed
        .iter()
        .filter(|f| !f.starts_with('-') && !f.contains("/-"))
        .filter(|f| *f != fixtures && !f.starts_with(&format!("{fixtures}/")))
        .filter(|f| {
            crate::core::path::RepoPath::parse(f)
                .is_ok_and(|p| crate::core::gate::is_test_file(&p, &markers))
        })
        .cloned()
        .collect();
    let names: Vec<&str> = candidates.iter().map(String::as_str).collect();
    let held = ls_blobs(base, &names)?;
    let (from_base, added): (Vec<String>, Vec<String>) =
        candidates.into_iter().partition(|f| held.contains_key(f));
    Ok((
        from_base,
        match config.suite.added {
            Some(_) => added,
            None => Vec::new(),
        },
    ))
}

/// The runner's random draw for the core's plan (the order in which admitted properties are
/// re-proven: an attacker cannot know which): 32 bits from the process's random hasher keys
/// and the clock.
fn draw() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    let mut state = std::collections::hash_map::RandomState::new().build_hasher();
    state.write_u128(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos()),
    );
    state.finish() & u64::from(u32::MAX)
}

/// The seal of the fixtures directory in the room's copy, in hex.
pub(super) fn fixtures_seal(room: &Room, config: &GateConfig) -> Result<String, CliError> {
    super::super::seal::seal_of(&room.tree, &config.fixtures, "judged")
}

/// After a run (CONTRACT.md section 11.3): what it changed that it may not, by content against
/// the judged tree, as the facts' `integrity` finding; `None` when nothing.
pub(super) fn integrity_after(
    g: &Gathered,
    room: &Room,
    label: &str,
) -> Result<Option<IntegrityFinding>, CliError> {
    let started = std::time::Instant::now();
    let files = room.changed_files()?;
    // The fixtures hold what was judged when no tracked file changed and nothing was added
    // among them: then their seal is the one taken before (hashing 20,000 files after every
    // run is what this saves). Else it is taken again; one that cannot be computed any more
    // (the directory replaced by a file, say) changed.
    let fixtures = g.config.fixtures.trim_end_matches('/');
    let touched = files
        .iter()
        .any(|f| f == fixtures || f.starts_with(&format!("{fixtures}/")))
        || room.added_under(fixtures);
    let seal_changed = touched && fixtures_seal(room, &g.config).map_or(true, |s| s != g.seal);
    let created = room.created_files(&g.config.scratch());
    // A signal that came meanwhile (the seal stops for it) is the answer, not a finding.
    super::super::interrupt::check()?;
    {
        let mut checked = g
            .checked
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        checked.0 += 1;
        checked.1 += started.elapsed().as_secs_f64();
    }
    if files.is_empty() && created.count == 0 && !seal_changed {
        return Ok(None);
    }
    progress::say(Event::TreeChanged {
        label: label.to_owned(),
        files: files.len(),
        created: created.count,
        seal: seal_changed,
        first: files.first().or(created.files.first()).cloned(),
    });
    Ok(Some(IntegrityFinding {
        run: label.to_owned(),
        count: files.len() as u64,
        files: files.iter().take(100).cloned().collect(),
        seal_changed,
        created: created.files,
        created_count: created.count,
    }))
}

/// A second copy of the judged tree, made in a thread of its own while the gate gathers:
/// where the suite runs when runs are at once and there is no build step (whose output the
/// copy would need). Taken by the suite; a gate that never runs it waits for it on drop, so
/// the copy is removed before the gate exits.
pub(super) struct SuiteCopy(
    std::sync::Mutex<Option<std::thread::JoinHandle<Result<Room, CliError>>>>,
);

impl SuiteCopy {
    pub fn start(what: Option<(crate::cli::sandbox::SandboxConfig, String)>) -> SuiteCopy {
        SuiteCopy(std::sync::Mutex::new(what.map(|(sandbox, tree)| {
            std::thread::spawn(move || super::super::runner::open_room(&sandbox, &tree, None))
        })))
    }

    /// The copy, once made; `None` when none was started (or it was taken).
    pub(super) fn take(&self) -> Option<Result<Room, CliError>> {
        let handle = self
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .take()?;
        Some(
            handle
                .join()
                .unwrap_or_else(|_| Err(CliError::software("the suite's copy panicked"))),
        )
    }
}

impl Drop for SuiteCopy {
    fn drop(&mut self) {
        drop(self.take());
    }
}
