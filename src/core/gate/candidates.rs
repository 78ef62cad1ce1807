//! The re-proof's candidates (CONTRACT.md sections 11.5 and 11.10): which admitted property the
//! plan re-proves next, and whether any is left. Asked by the plan (what to run) and by the
//! gate rules (`checker-unproven` only once none is left).

use super::request::Configured;
use super::request::GateRequest;
use super::request::ReproofOutcome;
use std::collections::HashSet;

/// The next admitted property to re-prove (CONTRACT.md sections 11.5, 11.10), when fewer
/// re-proofs ran than `configured.reprove` asks: the admitted properties that ran on this
/// patch, less those tried, those whose mutant touches a changed file first, each group in
/// the order the runner's draw (`configured.seed`) gives.
pub fn next_reproof(request: &GateRequest, configured: &Configured) -> Option<String> {
    next_among(request, configured, &|id| {
        request.property_runs.contains_key(id)
    })
}

/// The re-proof [`next_reproof`] will name once `unrun` has run too (every run finished):
/// what the runner may start beside those runs, speculatively.
pub fn reproof_ahead(
    request: &GateRequest,
    configured: &Configured,
    unrun: &[String],
) -> Option<String> {
    next_among(request, configured, &|id| {
        request.property_runs.contains_key(id) || unrun.iter().any(|u| u == id)
    })
}

/// The next re-proof, `on_patch` saying which properties ran on this patch.
fn next_among(
    request: &GateRequest,
    configured: &Configured,
    on_patch: &dyn Fn(&str) -> bool,
) -> Option<String> {
    // At most as many tries as the facts may carry: past them, the rest is said void.
    if configured.reprove == 0
        || !request.catalog.iter().any(|p| on_patch(&p.id))
        || request.reproof.len() >= super::shape::MAX_REPROOFS
    {
        return None;
    }
    let ran = request
        .reproof
        .iter()
        .filter(|r| {
            !matches!(
                r.outcome(&request.catch_exit_codes),
                ReproofOutcome::Void(_)
            )
        })
        .count();
    if ran >= usize::from(configured.reprove) {
        return None;
    }
    let tried: HashSet<&str> = request
        .reproof
        .iter()
        .map(|r| r.property.as_str())
        .collect();
    request
        .catalog
        .iter()
        .filter(|p| p.admitted.is_some() && on_patch(&p.id))
        .filter(|p| !tried.contains(p.id.as_str()))
        // First the mutants that touch a file the patch changes (section 11.10), then the
        // rest, each in the draw's order.
        .min_by_key(|p| {
            let touches = configured.mutant_files.get(&p.id).is_some_and(|files| {
                files
                    .iter()
                    .any(|f| request.changed_files.iter().any(|c| c.as_str() == f))
            });
            (!touches, drawn(configured.seed, &p.id), p.id.clone())
        })
        .map(|p| p.id.clone())
}

/// A property's place in the runner's draw: a hash of the seed and the id (FNV-1a, then a
/// finaliser), so the order is the runner's random choice and the same facts plan the same.
fn drawn(seed: u64, id: &str) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325 ^ seed;
    for b in id.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h ^= h >> 33;
    h = h.wrapping_mul(0xff51_afd7_ed55_8ccd);
    h ^ (h >> 33)
}
