//! What the gate rules read ([`RuleFacts`]), computed once from the request: the guard's
//! hits, the binaries, the reading's hits that count, the build, and the rest.

use super::request::GateRequest;
use super::request::ReproofOutcome;
use super::request::SuspiciousLine;
use super::request::UnreadFile;
use super::steps::GuardHit;
use crate::core::freeze_ledger;
use crate::core::freeze_ledger::Debt;
use crate::core::ladder::ScopeMarkers;
use crate::core::path::PrefixTrie;
use crate::core::path::RepoPath;
use std::collections::HashSet;

/// What the gate rules read, computed once from the request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RuleFacts {
    /// The files the merge conflicts on.
    pub conflicts: Vec<String>,
    pub seal_matches: bool,
    pub debt: Debt,
    /// Every property source (from the catalog), guarded like it.
    pub sources: Vec<String>,
    /// Changed files that are, or lie under, a guarded path or a property's source.
    pub guard_hits: Vec<GuardHit>,
    /// Changed files that are compiled or binary, or made executable.
    pub binaries: Vec<String>,
    /// Suspicious added lines in files that are not test-adjacent.
    pub suspicious: Vec<SuspiciousLine>,
    /// Changed code files that are not test-adjacent and that the reader could not read
    /// (section 15.2).
    pub unread: Vec<UnreadFile>,
    /// What runs changed that they may not.
    pub modified: bool,
    /// How the build step ended.
    pub build: Built,
    /// The canary ran and did not fail as it must.
    pub neutered: bool,
    /// An admitted property passed with its mutant applied.
    pub reproof_passed: bool,
    /// Re-proofs were asked, none of them ran, and none is left to try (section 11.10).
    pub reproof_unproven: bool,
}

/// How the build step ended (CONTRACT.md section 11.8).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Built {
    /// No build step ran (none configured, or not reached yet).
    NotRun,
    /// Exit 0.
    Built,
    /// A catch exit: the code does not build.
    DoesNotBuild,
    /// Any other exit, or killed: the harness, not the patch.
    Broken,
}

impl RuleFacts {
    pub fn of(request: &GateRequest, default_cap: u64) -> Self {
        let (sources, guard_hits) = guard_hits(request);
        Self {
            conflicts: request
                .merge_conflicts
                .iter()
                .map(|p| p.as_str().to_owned())
                .collect(),
            seal_matches: request.seal.actual == request.seal.expected,
            debt: freeze_ledger::debt(&request.ledger, request.debt_cap.unwrap_or(default_cap)),
            sources,
            guard_hits,
            binaries: binaries(request),
            suspicious: {
                let mut hits: Vec<SuspiciousLine> = request
                    .suspicious
                    .iter()
                    .filter(|s| RepoPath::parse(&s.file).is_ok_and(|p| suspicious_counts_in(&p)))
                    .cloned()
                    .collect();
                // The deciding class first (section 14.2: probe, overload, special case), each
                // class in the order the facts give.
                hits.sort_by_key(|s| s.class);
                hits
            },
            unread: request
                .unread
                .iter()
                .filter(|u| RepoPath::parse(&u.file).is_ok_and(|p| suspicious_counts_in(&p)))
                .cloned()
                .collect(),
            modified: !request.integrity.is_empty(),
            neutered: request.canary.as_ref().is_some_and(|c| !c.sang()),
            reproof_passed: request
                .reproof
                .iter()
                .any(|r| r.passed(&request.catch_exit_codes)),
            reproof_unproven: !request.reproof.is_empty()
                && request.reproof.iter().all(|r| {
                    matches!(
                        r.outcome(&request.catch_exit_codes),
                        ReproofOutcome::Void(_)
                    )
                })
                && request
                    .configured
                    .as_ref()
                    .is_none_or(|c| super::candidates::next_reproof(request, c).is_none()),
            build: match &request.build {
                None => Built::NotRun,
                Some(b) if b.exit_code == Some(0) => Built::Built,
                Some(b) if b.catch_exit_codes.caught(b.exit_code) => Built::DoesNotBuild,
                Some(_) => Built::Broken,
            },
        }
    }
}

/// Whether a `[suspicious]` line in `file` counts (CONTRACT.md section 11.6): only code that
/// is not test-adjacent (a test may well name its runner). The runner asks this too, so its
/// cap on the lines it reports is spent on lines that count.
pub fn suspicious_counts_in(file: &RepoPath) -> bool {
    !ScopeMarkers::default().is_test_adjacent(file)
}

/// Whether a path names a compiled or binary file (CONTRACT.md section 12.3): bytecode, a
/// bytecode cache, a shared library, a wheel, an object or an executable format.
pub fn is_compiled_name(path: &RepoPath) -> bool {
    const ENDINGS: [&str; 12] = [
        ".pyc", ".pyo", ".pyd", ".so", ".dylib", ".dll", ".exe", ".whl", ".o", ".a", ".class",
        ".jar",
    ];
    path.segments().any(|s| s == "__pycache__")
        || path
            .segments()
            .last()
            .is_some_and(|base| ENDINGS.iter().any(|e| base.ends_with(e)) || base.contains(".so."))
}

/// The changed files that are compiled or binary: by name, or as the runner saw them.
pub(super) fn binaries(request: &GateRequest) -> Vec<String> {
    let seen: HashSet<&RepoPath> = request.binaries.iter().collect();
    let mut out: Vec<String> = request
        .changed_files
        .iter()
        .filter(|f| is_compiled_name(f) || seen.contains(f))
        .map(|f| f.as_str().to_owned())
        .collect();
    out.dedup();
    out
}

/// Changed files that are, or lie under, a guarded path or a property's source: one walk down
/// each changed file (linear in the input).
pub(super) fn guard_hits(request: &GateRequest) -> (Vec<String>, Vec<GuardHit>) {
    // Guards, then every source, with the property that names it.
    let mut prefixes: Vec<RepoPath> = request.guarded.clone();
    let mut owner: Vec<Option<&str>> = vec![None; prefixes.len()];
    let mut sources = Vec::new();
    for p in &request.catalog {
        for s in &p.source {
            prefixes.push(s.clone());
            owner.push(Some(p.id.as_str()));
            sources.push(s.as_str().to_owned());
        }
    }
    let trie = PrefixTrie::new(&prefixes);
    let hits = request
        .changed_files
        .iter()
        .filter_map(|f| {
            let i = trie.prefix_of(f)?;
            Some(GuardHit {
                file: f.as_str().to_owned(),
                guarded_by: prefixes.get(i)?.as_str().to_owned(),
                property: owner.get(i).copied().flatten().map(str::to_owned),
            })
        })
        .collect();
    (sources, hits)
}
