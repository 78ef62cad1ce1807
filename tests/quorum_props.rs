//! Properties of the quorum that must hold for every request, not just the hand-written cases.

use std::collections::HashMap;

use patchgate::core::admit::AdmissionRecord;
use patchgate::core::catalog::{Property, Strength};
use patchgate::core::digest::Digest;
use patchgate::core::freeze_ledger::{FreezeRow, Frozen, LedgerState};
use patchgate::core::path::RepoPath;
use patchgate::core::quorum;
use patchgate::core::quorum::{Outcome, QuorumRequest, Reason, Vote, decide};
use patchgate::core::runs::{CatchCodes, RunState};
use patchgate::core::seal::SealCheck;
use proptest::prelude::*;

const IDS: [&str; 6] = ["p0", "p1", "p2", "p3", "p4", "p5"];
const PREFIXES: [&str; 5] = ["a", "a/b", "a_old", "c", "d/e"];
const FILES: [&str; 6] = ["a/b/x.rs", "a/y.rs", "a_old/z", "c", "d/e/f/g", "q/r"];

fn path(s: &str) -> RepoPath {
    RepoPath::parse(s).unwrap_or_else(|e| panic!("{s}: {e}"))
}

fn property(i: usize) -> impl Strategy<Value = Property> {
    (
        any::<bool>(),
        prop::sample::subsequence(PREFIXES.to_vec(), 1..3),
        prop::bool::weighted(0.15),
        prop::bool::weighted(0.5),
    )
        .prop_map(move |(strong, locality, introduced, admitted)| Property {
            id: IDS[i].to_owned(),
            strength: if strong {
                Strength::Strong
            } else {
                Strength::Weak
            },
            locality: locality.into_iter().map(path).collect(),
            fixtures: None,
            introduced,
            source: Vec::new(),
            admitted: admitted.then(|| AdmissionRecord {
                seal: "a".repeat(64),
                mutant: "m".into(),
                base_runs: vec![Some(0), Some(0)],
                mutant_runs: vec![Some(1), Some(1)],
                source: None,
            }),
        })
}

fn runs() -> impl Strategy<Value = Vec<Option<u8>>> {
    prop_oneof![
        3 => prop::collection::vec(Just(Some(0u8)), 2..4),
        1 => prop::collection::vec(prop::option::weighted(0.9, 0u8..3), 2..4),
    ]
}

fn ledger_row() -> impl Strategy<Value = FreezeRow> {
    (
        prop::sample::select(IDS.to_vec()),
        any::<bool>(),
        prop::option::of(0u64..40),
        prop::option::of(0u64..40),
    )
        .prop_map(|(id, open, since, budget)| FreezeRow {
            frozen: Frozen::Property(id.to_owned()),
            state: if open {
                LedgerState::Open
            } else {
                LedgerState::Closed
            },
            seal: None,
            reason: None,
            opened_against_commit: None,
            retire_by_commit_count: budget,
            commits_since_open: since,
            owner: None,
        })
}

/// Keeps at most one open row per property, as validation requires.
fn one_open_per_property(rows: Vec<FreezeRow>) -> Vec<FreezeRow> {
    let mut seen = std::collections::HashSet::new();
    rows.into_iter()
        .filter(|r| r.state == LedgerState::Closed || seen.insert(r.frozen.clone()))
        .collect()
}

fn request() -> impl Strategy<Value = QuorumRequest> {
    let catalog = (1usize..=6).prop_flat_map(|n| (0..n).map(property).collect::<Vec<_>>());
    (
        catalog,
        prop::sample::subsequence(FILES.to_vec(), 0..4),
        prop::collection::vec(prop::option::of(runs()), 6),
        prop::collection::vec(ledger_row(), 0..8),
        prop::bool::weighted(0.85),
        prop::option::of(0u64..8),
        any::<bool>(),
    )
        .prop_map(
            |(catalog, files, results, ledger, seal_matches, debt_cap, require_admission)| {
                let results: HashMap<String, Vec<Option<u8>>> = catalog
                    .iter()
                    .zip(results)
                    .filter_map(|(p, r)| r.map(|r| (p.id.clone(), r)))
                    .collect();
                QuorumRequest {
                    patch_id: None,
                    changed_files: files.into_iter().map(path).collect(),
                    catalog,
                    results,
                    catch_exit_codes: CatchCodes::default(),
                    ledger: one_open_per_property(ledger),
                    seal: SealCheck {
                        actual: Digest([1; 32]),
                        expected: if seal_matches {
                            Digest([1; 32])
                        } else {
                            Digest([2; 32])
                        },
                    },
                    debt_cap,
                    require_admission,
                }
            },
        )
}

proptest! {
    // CONTRACT.md section 10: requiring admission only takes votes away from the quorum. It
    // never turns a decision into a promotion, changes only what unproven strong rows do, and
    // marks exactly the strong rows without a proof.
    #[test]
    fn requiring_admission_never_promotes_what_was_not(req in request()) {
        let mut off = req.clone();
        off.require_admission = false;
        let mut on = req.clone();
        on.require_admission = true;
        let (off, on) = (decide(&off, 5), decide(&on, 5));
        if on.outcome == Outcome::Promote {
            prop_assert_eq!(off.outcome, Outcome::Promote);
        }
        // The only rule it can bring into play is the empty quorum's.
        if on.reason != off.reason {
            prop_assert_eq!(on.reason, Reason::EmptyQuorum);
        }
        for (p, row) in on.properties.iter().zip(&req.catalog) {
            prop_assert_eq!(p.unproven, row.strength == Strength::Strong && row.admitted.is_none());
        }
        prop_assert!(off.properties.iter().all(|p| !p.unproven));
        // Votes themselves do not change: an unproven row still votes, as weak.
        let votes = |d: &quorum::QuorumDecision| d.properties.iter().map(|p| p.vote).collect::<Vec<_>>();
        prop_assert_eq!(votes(&on), votes(&off));
    }

    #[test]
    fn promote_means_every_voting_strong_property_passed_on_sealed_fixtures_under_the_cap(req in request()) {
        let d = decide(&req, 5);
        if d.outcome == Outcome::Promote {
            prop_assert!(d.facts.seal_matches);
            prop_assert!(d.debt.counted <= d.debt.cap);
            let strong_voters: Vec<_> = d.properties.iter()
                .filter(|p| p.strength == Strength::Strong && matches!(p.vote, Vote::Yes | Vote::No))
                .collect();
            prop_assert!(!strong_voters.is_empty(), "an empty strong quorum never promotes");
            for p in &d.properties {
                if matches!(p.vote, Vote::Yes | Vote::No) {
                    prop_assert_eq!(p.vote, Vote::Yes, "{} voted no", p.id);
                    prop_assert_eq!(p.state, RunState::Pass);
                }
                prop_assert_ne!(p.vote, Vote::Introduced, "an introduced voter never promotes");
            }
        }
    }

    #[test]
    fn an_excluded_property_never_votes_yes(req in request()) {
        let d = decide(&req, 5);
        for p in &d.properties {
            let frozen = req.ledger.iter().any(|r| r.state == LedgerState::Open && r.property_id() == Some(p.id.as_str()));
            let introduced = req.catalog.iter().any(|c| c.id == p.id && c.introduced);
            if frozen {
                prop_assert_ne!(p.vote, Vote::Yes, "{} is frozen", p.id);
                prop_assert_ne!(p.vote, Vote::No, "{} is frozen: it does not vote at all", p.id);
                if p.in_locality {
                    // An introduced property stays `introduced` (and rejects) even when frozen.
                    prop_assert_eq!(p.vote, if introduced { Vote::Introduced } else { Vote::Excluded });
                }
            }
            if p.vote == Vote::Excluded {
                prop_assert!(frozen);
            }
        }
    }

    // CONTRACT.md section 2: a frozen property is excluded (it does not vote). So freezing the
    // one property whose stable failure rejected the patch does let the rest of the quorum
    // decide; what a freeze may never do is excuse anything else: a self-introduced predicate,
    // an empty strong quorum, or a failure of another property.
    #[test]
    fn opening_a_freeze_only_ever_excuses_the_frozen_property(req in request(), which in 0usize..6) {
        let before = decide(&req, 5);
        prop_assume!(before.outcome == Outcome::Reject);
        let Some(target) = req.catalog.get(which % req.catalog.len()).map(|p| p.id.clone()) else {
            return Ok(());
        };
        prop_assume!(!req.ledger.iter().any(|r| r.state == LedgerState::Open && r.property_id() == Some(target.as_str())));
        let mut frozen = req.clone();
        frozen.ledger.push(FreezeRow {
            frozen: Frozen::Property(target),
            state: LedgerState::Open,
            seal: None,
            reason: None,
            opened_against_commit: None,
            retire_by_commit_count: None,
            commits_since_open: None,
            owner: None,
        });
        let after = decide(&frozen, 5);
        if after.outcome == Outcome::Promote {
            prop_assert_eq!(before.reason, Reason::StableFailure);
            let target = frozen.ledger.last().and_then(|r| r.property_id()).unwrap_or_default().to_owned();
            for p in &before.properties {
                if matches!(p.vote, Vote::Yes | Vote::No) && p.state != RunState::Pass {
                    prop_assert_eq!(&p.id, &target, "{} failed and was not frozen", p.id);
                }
            }
        }
    }

    /// The decision does not depend on the order anything is listed in: catalog rows, ledger
    /// rows and changed files, shuffled, give the same outcome, reason, debt, and the same
    /// report for every property.
    #[test]
    fn the_decision_does_not_depend_on_order(
        req in request(),
        seed in any::<u64>(),
    ) {
        let before = decide(&req, 5);
        let mut shuffled = req.clone();
        // A permutation from the seed (rotate, then reverse on odd seeds).
        let turn = |n: usize| if n == 0 { 0 } else { (seed as usize) % n };
        let n = shuffled.catalog.len();
        shuffled.catalog.rotate_left(turn(n));
        let n = shuffled.ledger.len();
        shuffled.ledger.rotate_left(turn(n));
        let n = shuffled.changed_files.len();
        shuffled.changed_files.rotate_left(turn(n));
        if seed % 2 == 1 {
            shuffled.catalog.reverse();
            shuffled.ledger.reverse();
            shuffled.changed_files.reverse();
        }
        let after = decide(&shuffled, 5);
        prop_assert_eq!(after.outcome, before.outcome);
        prop_assert_eq!(after.reason, before.reason);
        prop_assert_eq!(after.debt, before.debt);
        let by_id = |d: &patchgate::core::quorum::QuorumDecision| {
            let mut v: Vec<_> = d.properties.iter().map(|p| (p.id.clone(), p.in_locality, p.state, p.vote)).collect();
            v.sort_by(|a, b| a.0.cmp(&b.0));
            v
        };
        prop_assert_eq!(by_id(&after), by_id(&before));
    }

    /// CONTRACT.md section 2's outcome table, by hand: each reason belongs to one row, with its
    /// outcome and exit code, and the HTTP status is the exit code's twin (section 0).
    #[test]
    fn every_decision_is_a_row_of_the_contracts_table(req in request()) {
        let d = decide(&req, 5);
        let (rule, outcome, exit, status) = match d.reason {
            Reason::SealMismatch => (1, Outcome::FixtureFault, 2, 424),
            Reason::DebtOverCap => (2, Outcome::StopQueue, 3, 423),
            Reason::SelfIntroducedPredicate => (3, Outcome::Reject, 1, 409),
            Reason::EmptyQuorum => (4, Outcome::Reject, 1, 409),
            Reason::StableFailure => (5, Outcome::Reject, 1, 409),
            Reason::SplitExits | Reason::HarnessError | Reason::MissingResults => {
                (6, Outcome::Hold, 2, 424)
            }
            Reason::QuorumHeld => (7, Outcome::Promote, 0, 200),
        };
        prop_assert_eq!(d.rule, rule);
        prop_assert_eq!(d.outcome, outcome);
        prop_assert_eq!(d.outcome.exit_code(), exit);
        prop_assert_eq!(
            patchgate::http::status_for_exit(d.outcome.exit_code()).as_u16(),
            status
        );
        // Rule 1 comes first: a seal mismatch is never anything but a fixture fault.
        if !d.facts.seal_matches {
            prop_assert_eq!(d.reason, Reason::SealMismatch);
        }
    }
}
