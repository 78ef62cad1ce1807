//! The last gate rule: the router over the three verdicts derived from the runs (t0 scope, t1
//! properties, t2 fixture suite, the scoped freeze).

use super::answer::GateDecision;
use super::answer::GateRuleName;
use super::observe::ObservedInstead;
use super::request::GateRequest;
use super::steps::Receipts;
use super::steps::Step;
use super::steps::Unvouched;
use super::steps::plural;
use crate::core::catalog::Property;
use crate::core::evidence::FrozenTest;
use crate::core::evidence::derive_freeze;
use crate::core::freeze_ledger::Debt;
use crate::core::freeze_ledger::Frozen;
use crate::core::freeze_ledger::LedgerState;
use crate::core::ladder::ScopeMarkers;
use crate::core::ladder::TierVerdict;
use crate::core::path::RepoPath;
use crate::core::quorum;
use crate::core::quorum::Outcome;
use crate::core::quorum::Reason;
use crate::core::route;
use crate::core::route::Verdict;
use crate::core::route::Verdicts;
use crate::core::runs::CatchCodes;
use crate::core::runs::ReceiptGap;
use crate::core::runs::RunOutcome;
use crate::core::runs::RunState;
use crate::core::runs::counted;
use crate::core::runs::in_batch;
use std::collections::HashMap;
use std::collections::HashSet;

/// The last rule: the router over the three derived verdicts, after the steps so far.
pub(super) fn routed(request: &GateRequest, debt: Debt, mut steps: Vec<Step>) -> GateDecision {
    let (evidence, route_steps) = route_verdicts(request, debt);
    steps.extend(route_steps);
    let decision = route::route(&evidence);
    steps.push(Step::Router {
        rule: decision.rule,
        disposition: decision.disposition,
        attribution: decision.attribution,
        summary: format!(
            "router rule {} over property_check={}, fixture_check={}, flaky_freeze={}",
            decision.rule.as_str(),
            evidence.property_check,
            evidence.fixture_check,
            evidence.flaky_freeze
        ),
    });
    GateDecision {
        disposition: decision.disposition.into(),
        rule: GateRuleName::Route,
        reason: decision.attribution.into(),
        evidence: Some(evidence),
        steps,
    }
}

/// The changed files no strong property's locality covers and no `inert` path covers,
/// sorted, at most 10 (a path may be 4 KiB; the answer stays small): what an empty quorum
/// leaves unobserved.
pub(super) fn unobserved(request: &GateRequest, changed: &[RepoPath]) -> Vec<String> {
    let mut out: Vec<String> = uncovered(request, changed)
        .into_iter()
        .map(|f| f.as_str().to_owned())
        .collect();
    out.sort();
    out.truncate(10);
    out
}

/// Every changed file no strong property's locality covers and no `inert` path covers.
fn uncovered<'c>(request: &GateRequest, changed: &'c [RepoPath]) -> Vec<&'c RepoPath> {
    let strong: Vec<&RepoPath> = request
        .catalog
        .iter()
        .filter(|p| p.strength == crate::core::catalog::Strength::Strong)
        .flat_map(|p| &p.locality)
        .collect();
    changed
        .iter()
        .filter(|f| !strong.iter().any(|p| p.covers(f)))
        .filter(|f| !request.inert.iter().any(|p| p.covers(f)))
        .collect()
}

/// When no property's locality names any changed code file (an empty quorum, every property
/// out of locality) and `[observe]` is on: whether the observed run stands in for the
/// locality (issue 65; O.4a in docs/design/observe.md).
pub(super) fn observed_instead(
    request: &GateRequest,
    ballot: &quorum::Ballot,
    reason: Reason,
    code_changed: &[RepoPath],
) -> Option<ObservedInstead> {
    let o = request.observe.as_ref().filter(|o| o.on())?;
    if reason != Reason::EmptyQuorum || ballot.properties.iter().any(|p| p.in_locality) {
        return None;
    }
    let files: Vec<&str> = uncovered(request, code_changed)
        .into_iter()
        .map(RepoPath::as_str)
        .collect();
    Some(o.stands_in(&files, request.fixture_suite.is_some()))
}

/// The three verdicts the last rule routes, and the steps that derived them (scope, properties,
/// fixtures, freeze).
pub(super) fn route_verdicts(request: &GateRequest, debt: Debt) -> (Verdicts, Vec<Step>) {
    let mut steps = Vec::with_capacity(4);
    // t0 scope.
    let markers = ScopeMarkers::default();
    let shadows: HashSet<&RepoPath> = request.shadows.iter().collect();
    // The base's tests judge, the tests the patch adds run apart (issue 50): no scope hit.
    let (from_base, added) = super::apart::judged_apart(request, &markers);
    let in_file: Vec<&RepoPath> = request
        .test_lines_from_base
        .iter()
        .filter(|f| request.changed_files.contains(f))
        .collect();
    let apart: HashSet<&RepoPath> = from_base.iter().chain(&added).copied().collect();
    // A manifest change that only describes the package is code, not test toolchain.
    let described: HashSet<&RepoPath> = super::apart::described(request).into_iter().collect();
    let scope_hits: Vec<String> = request
        .changed_files
        .iter()
        .filter(|f| {
            (markers.is_scope_hit(f) || shadows.contains(f))
                && !apart.contains(f)
                && !described.contains(f)
                && !super::apart::never_run(f)
                // Test lines mixed with code in one hunk (issue 50).
                || request.test_lines_mixed.contains(f)
        })
        .map(|f| f.as_str().to_owned())
        .collect();
    let scope_hit = !scope_hits.is_empty();
    // Each hit named with the rule that made it one (issue 64): the first three.
    let why_hit = |f: &str| {
        let path = request.changed_files.iter().find(|p| p.as_str() == f);
        let rule = match path {
            Some(p) if request.test_lines_mixed.contains(p) => {
                "test lines mixed with code in one hunk"
            }
            Some(p) if shadows.contains(p) => {
                "a module the patch puts in front of one the runs' Python has installed (a shadow)"
            }
            Some(p) if markers.is_test_adjacent(p) => "a test-adjacent path",
            _ => "a file of the test toolchain (what the test runner or the build reads)",
        };
        format!("{f}: {rule}")
    };
    let named: Vec<String> = scope_hits.iter().take(3).map(|f| why_hit(f)).collect();
    // t1 properties, each run counted with its receipt.
    let (runs, unvouched) = counted_runs(request);
    let receipts =
        (!request.property_runs.is_empty()).then_some(if request.property_receipts.is_some() {
            Receipts::On
        } else {
            Receipts::Off
        });
    // A property whose mutant did not apply to this tree is unproven for this patch (section
    // 11.10): it votes as one without an `admitted` record would.
    let mut unapplied: HashSet<&str> = request
        .reproof
        .iter()
        .filter(|r| !r.applied)
        .map(|r| r.property.as_str())
        .collect();
    // An admission whose property's source changed since (issue 50) proves nothing now.
    let stale = stale_admissions(request);
    unapplied.extend(stale.iter().copied());
    let catalog: std::borrow::Cow<'_, [Property]> = if unapplied.is_empty() {
        std::borrow::Cow::Borrowed(&request.catalog)
    } else {
        std::borrow::Cow::Owned(
            request
                .catalog
                .iter()
                .cloned()
                .map(|mut p| {
                    if unapplied.contains(p.id.as_str()) {
                        p.admitted = None;
                    }
                    p
                })
                .collect(),
        )
    };
    // The test files judged apart are evidence, and a manifest's description and a type stub
    // are no code: no property need observe them.
    let code_changed: Vec<RepoPath> = request
        .changed_files
        .iter()
        .filter(|f| !apart.contains(f) && !described.contains(f) && !super::apart::never_run(f))
        .cloned()
        .collect();
    let ballot = quorum::ballot(
        &code_changed,
        &catalog,
        &runs,
        &request.catch_exit_codes,
        &request.ledger,
        request.require_admission,
    );
    // Every changed file inert, and no property observes any of them: the tier does not
    // apply, and the suite decides.
    let inert_only = !request.changed_files.is_empty()
        && code_changed
            .iter()
            .all(|f| request.inert.iter().any(|p| p.covers(f)))
        && !ballot.properties.iter().any(|p| p.in_locality);
    // The scope step, first in `steps`: whether the property tier is skipped for scope (and,
    // when not, whether it applies at all).
    steps.push(Step::Scope {
        summary: if scope_hit {
            format!(
                "{} test-adjacent or part of the test toolchain ({}{}): the property tier cannot vouch for this patch and is skipped",
                plural(scope_hits.len(), "changed file is", "changed files are"),
                named.join("; "),
                if scope_hits.len() > named.len() {
                    format!("; and {} more", scope_hits.len() - named.len())
                } else {
                    String::new()
                }
            )
        } else if inert_only {
            "no changed file is test-adjacent or part of the test toolchain".to_owned()
        } else {
            "no changed file is test-adjacent or part of the test toolchain: the property tier runs".to_owned()
        } + &super::apart::said(from_base.len(), in_file.len(), added.len()),
        scope_hits,
        from_base: from_base
            .iter()
            .chain(&in_file)
            .map(|f| f.as_str().to_owned())
            .collect(),
        added: added.iter().map(|f| f.as_str().to_owned()).collect(),
    });
    let property_check = if scope_hit || inert_only {
        let verdict = if scope_hit {
            Verdict::Unknown
        } else {
            Verdict::Pass
        };
        steps.push(Step::Properties {
            ran: false,
            verdict,
            tier: None,
            outcome: None,
            reason: None,
            quorum_rule: None,
            // A property the scope hit kept from running is `skipped`, not `missing`.
            properties: ballot
                .properties
                .into_iter()
                .map(|mut p| {
                    if scope_hit && p.state == RunState::Missing {
                        p.state = RunState::Skipped;
                    }
                    p
                })
                .collect(),
            receipts: None,
            unvouched: Vec::new(),
            unobserved: Vec::new(),
            observed_instead: None,
            summary: if scope_hit {
                "skipped on a scope hit: property_check is unknown".to_owned()
            } else if code_changed.is_empty() {
                "does not apply: the patch changes only test files judged apart or what describes the package (no code for a property to observe); property_check is pass and the suite decides".to_owned()
            } else {
                format!(
                    "does not apply: {} inert (`inert` in the config) and no property observes them; property_check is pass and the suite decides",
                    plural(code_changed.len(), "changed file is", "changed files are")
                )
            },
        });
        verdict
    } else {
        // Gate rules 1 and 2 were the quorum's rules 1 and 2.
        let (outcome, reason, number) = quorum::first_rule(&ballot.facts(true, debt), 3);
        let instead = observed_instead(request, &ballot, reason, &code_changed);
        let held = instead == Some(ObservedInstead::Held);
        let (verdict, tier) = match (outcome, reason) {
            _ if held => (Verdict::Pass, TierVerdict::Pass),
            (Outcome::Promote, _) => (Verdict::Pass, TierVerdict::Pass),
            (_, Reason::StableFailure) => (Verdict::Fail, TierVerdict::Caught),
            (_, Reason::MissingResults) => (Verdict::Missing, TierVerdict::Error),
            _ => (Verdict::Unknown, TierVerdict::Error),
        };
        let unproven = ballot
            .properties
            .iter()
            .filter(|p| p.unproven && matches!(p.vote, quorum::Vote::Yes | quorum::Vote::No))
            .count();
        let unobserved = if reason == Reason::EmptyQuorum && !held {
            unobserved(request, &code_changed)
        } else {
            Vec::new()
        };
        let summary = format!(
            "quorum {} ({}): property_check is {verdict}{}{}{}{}{}",
            outcome.as_str(),
            reason.as_str(),
            match request.suite_runs.len() {
                0 => String::new(),
                n => format!(
                    "; run 1 of {} is the suite's own run of its cases",
                    plural(n, "property", "properties")
                ),
            },
            if unproven == 0 {
                String::new()
            } else {
                format!(
                    "; {} without an admission proof voted as weak",
                    plural(unproven, "strong property", "strong properties")
                )
            },
            match stale.len() {
                0 => String::new(),
                _ => format!(
                    "; admitted before its source changed (admit it again): {}",
                    stale.join(", ")
                ),
            },
            match request.replays.len() {
                0 => String::new(),
                n => {
                    let again = request
                        .replays
                        .iter()
                        .filter(|r| {
                            request
                                .catch_exit_codes
                                .caught(r.counted(&request.catch_exit_codes))
                        })
                        .count();
                    format!(
                        "; {} split and replayed its failing examples: {again} failed again (a stable failure), {} did not",
                        plural(n, "property", "properties"),
                        n - again
                    )
                }
            },
            match (receipts, unvouched.len()) {
                (Some(Receipts::Off), _) =>
                    "; receipts: off (exit codes read as they are)".to_owned(),
                (_, 0) => String::new(),
                (_, n) => format!(
                    "; {} without a receipt that vouches for it counted as null",
                    plural(n, "run", "runs")
                ),
            }
        );
        steps.push(Step::Properties {
            ran: true,
            verdict,
            tier: Some(tier),
            outcome: Some(outcome),
            reason: Some(reason),
            quorum_rule: Some(number),
            properties: ballot.properties,
            receipts,
            unvouched,
            summary: match (instead, unobserved.len()) {
                (Some(ObservedInstead::Held), _) => format!(
                    "{summary}; no strong property's locality names the changed code files, and the observed run stands in: each has a changed line a check ran and a patch mutant a check killed"
                ),
                (Some(ObservedInstead::Pending), _) => format!(
                    "{summary}; no strong property's locality names the changed code files: the observed run may stand in (the suite and the patch mutants run first); changed files no strong property observes: see `unobserved`"
                ),
                (Some(ObservedInstead::NotShown), _) => format!(
                    "{summary}; changed files no strong property observes, and the observed run does not stand in (a file's changed lines ran under no check, or no mutant of it was killed): see `unobserved`"
                ),
                (None, 0) => summary,
                (None, _) => format!(
                    "{summary}; changed files no strong property observes: see `unobserved`"
                ),
            },
            unobserved,
            observed_instead: instead,
        });
        verdict
    };

    // t2 fixture suite.
    let frozen_tests = frozen_tests(request);
    let fixtures = super::apart::with_added(
        request,
        added.len(),
        super::fixtures::fixture_step(
            request.fixture_suite.as_ref(),
            !scope_hit && property_check != Verdict::Pass,
            &frozen_tests,
            request
                .room
                .as_ref()
                .and_then(|r| r.over(crate::core::ladder::T2).map(|l| r.said(l))),
        ),
    );
    let fixture_check = match &fixtures {
        Step::Fixtures { verdict, .. } => *verdict,
        _ => Verdict::Missing,
    };
    steps.push(fixtures);

    // Whether the checks ran this change (issue 52), after the suite whose run observed it: a
    // pass it finds unobserved is unknown. (Said after the suite: a suite that did not pass
    // says its own cause first.)
    let (observe, property_check) = super::observed::observe_step(
        request.observe.as_ref(),
        fixture_check == Verdict::Pass,
        property_check,
    );
    steps.push(observe);
    // The changed code's recorded calls, made again outside the tests (issue 66): a pass of
    // the suite the code answers differently from is not what the code does.
    let (behavior, fixture_check) =
        super::behaved::behavior_step(request.behavior.as_ref(), fixture_check);
    steps.push(behavior);

    // The scoped freeze.
    let freeze = derive_freeze(&request.changed_files, &frozen_tests);
    steps.push(Step::Freeze {
        verdict: freeze.derived,
        summary: if freeze.matched.is_empty() {
            "no frozen test covers a changed file: the freeze is irrelevant to this patch"
                .to_owned()
        } else {
            format!(
                "{} a changed file: its verdict on this patch is unknown",
                plural(
                    freeze.matched.len(),
                    "frozen test covers",
                    "frozen tests cover"
                )
            )
        },
        matched: freeze.matched,
    });
    let verdicts = Verdicts {
        property_check,
        fixture_check,
        flaky_freeze: freeze.derived,
    };
    (verdicts, steps)
}

/// The property runs as they count (CONTRACT.md section 11.1): with receipts on, a run its
/// receipt does not vouch for is `null`, and listed.
pub(super) fn counted_runs(
    request: &GateRequest,
) -> (HashMap<String, Vec<RunOutcome>>, Vec<Unvouched>) {
    let Some(receipts) = &request.property_receipts else {
        return (replayed(request, request.property_runs.clone()), Vec::new());
    };
    let mut unvouched = Vec::new();
    // Batched: whether run n of the batch listed a failure in some property's cases.
    let most = request
        .property_runs
        .values()
        .map(Vec::len)
        .max()
        .unwrap_or(0);
    // A canary that rode in the batch (`in_runs`) explains its run's catch as well; it rides
    // in the property command's runs only, after the suite's run 1 when the suite is one
    // (section 15.3).
    let first_ride = usize::from(!request.suite_runs.is_empty());
    let failed_in: Vec<bool> = (0..most)
        .map(|i| {
            request.canary.as_ref().is_some_and(|c| {
                i.checked_sub(first_ride)
                    .is_some_and(|ride| c.failed_in_run(ride))
            }) || receipts.values().any(|r| {
                r.get(i)
                    .and_then(Option::as_ref)
                    .is_some_and(|r| r.failed > 0)
            })
        })
        .collect();
    let mut ids: Vec<(&String, &Vec<RunOutcome>)> = request.property_runs.iter().collect();
    ids.sort_by_key(|(id, _)| *id);
    let runs = ids
        .into_iter()
        .map(|(id, given)| {
            let theirs = receipts.get(id);
            let runs = given
                .iter()
                .enumerate()
                .map(|(i, run)| {
                    let receipt = theirs.and_then(|r| r.get(i)).and_then(Option::as_ref);
                    let own = if request.batched {
                        in_batch(
                            *run,
                            receipt,
                            &request.catch_exit_codes,
                            failed_in.get(i).copied().unwrap_or(false),
                        )
                    } else {
                        *run
                    };
                    let (run_counted, gap) =
                        counted(own, receipt, &request.catch_exit_codes, false);
                    if let Some(gap) = gap {
                        unvouched.push(Unvouched {
                            property: id.clone(),
                            run: u32::try_from(i + 1).unwrap_or(u32::MAX),
                            exit_code: *run,
                            gap,
                            disagrees: receipt
                                .and_then(|r| r.disagrees.clone())
                                .filter(|_| gap == ReceiptGap::ReportDisagrees),
                        });
                    }
                    run_counted
                })
                .collect();
            (id.clone(), runs)
        })
        .collect();
    (replayed(request, runs), unvouched)
}

/// The admitted properties whose record names a source digest that the facts' digest of
/// their source on the base does not match, or that the facts do not give (issue 50).
pub(super) fn stale_admissions(request: &GateRequest) -> Vec<&str> {
    request
        .catalog
        .iter()
        .filter(|p| {
            p.admitted
                .as_ref()
                .and_then(|a| a.source.as_ref())
                .is_some_and(|d| request.admitted_sources.get(&p.id) != Some(d))
        })
        .map(|p| p.id.as_str())
        .collect()
}

/// Whether counted `runs` split: a catch and a pass among them (CONTRACT.md section 15.5).
pub(super) fn split(runs: &[RunOutcome], catch: &CatchCodes) -> bool {
    runs.iter().any(|r| catch.caught(*r)) && runs.contains(&Some(0))
}

/// The counted runs with the replays (CONTRACT.md section 15.5): a property whose runs split
/// and whose replay of its failing examples failed again (as its receipt vouches) counts its
/// catches and the replay, a stable failure; its passes are the runs that did not try those
/// examples. A replay that passed, or proves nothing, leaves the split as it is.
fn replayed(
    request: &GateRequest,
    mut runs: HashMap<String, Vec<RunOutcome>>,
) -> HashMap<String, Vec<RunOutcome>> {
    let catch = &request.catch_exit_codes;
    for replay in &request.replays {
        let again = replay.counted(catch);
        if let Some(r) = runs.get_mut(&replay.property)
            && catch.caught(again)
            && split(r, catch)
        {
            r.retain(|run| catch.caught(*run));
            r.push(again);
        }
    }
    runs
}

/// The properties the plan replays (CONTRACT.md section 15.5): of t1's `properties`, those in
/// locality that voted and whose counted runs split, not replayed yet; in catalog order.
pub(super) fn replay_due(
    request: &GateRequest,
    properties: &[quorum::PropertyReport],
) -> Vec<String> {
    let (runs, _) = counted_runs(request);
    properties
        .iter()
        .filter(|p| p.in_locality && p.vote == quorum::Vote::No)
        .filter(|p| !request.replays.iter().any(|r| r.property == p.id))
        .filter(|p| {
            runs.get(&p.id)
                .is_some_and(|r| split(r, &request.catch_exit_codes))
        })
        .map(|p| p.id.clone())
        .collect()
}

/// The ledger's open frozen tests.
pub(super) fn frozen_tests(request: &GateRequest) -> Vec<FrozenTest> {
    request
        .ledger
        .iter()
        .filter(|r| r.state == LedgerState::Open)
        .filter_map(|r| match &r.frozen {
            Frozen::Test { id, covers } => Some(FrozenTest {
                id: id.clone(),
                covers: covers.clone(),
            }),
            Frozen::Property(_) => None,
        })
        .collect()
}
