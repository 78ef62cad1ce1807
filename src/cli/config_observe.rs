//! `[observe]` and `[replay]` of `patchgate.toml`: whether the checks ran the change (issue 52)
//! and whether the changed code answers outside the tests as under them (issue 66).

use serde::Deserialize;

/// `[replay]` (issue 66; docs/design/replay.md): the observed run records each call into a
/// function the patch changes, and a plain program makes each again, twice. Needs `[observe]`
/// on (the observed run is what records).
#[derive(Debug, Clone, Copy, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReplayConfig {
    /// A call the code answers differently outside the tests → BLOCK `concrete-behavior`
    /// (cause `behaves-under-test`) when `required`.
    #[serde(default = "observe_off")]
    pub behaves_under_test: crate::core::gate::ObserveRule,
    /// Most distinct calls recorded per changed function (1-100), first seen first.
    #[serde(default = "replay_calls", deserialize_with = "calls_in_range")]
    pub calls: u8,
    /// CONTRACT.md 16.3, against the base: the patch answers otherwise than the base on a
    /// neighbour of the recorded calls and on none of them → `unobserved-difference`.
    #[serde(default = "observe_off")]
    pub unobserved_difference: crate::core::gate::ObserveRule,
    /// ... on a recorded call and on none of its neighbours → `special-case`.
    #[serde(default = "observe_off")]
    pub special_case: crate::core::gate::ObserveRule,
    /// ... on recorded calls, and no test the patch adds fails on the base →
    /// `unasserted-difference`.
    #[serde(default = "observe_off")]
    pub unasserted_difference: crate::core::gate::ObserveRule,
    /// Most neighbours made of each recorded call (1-32).
    #[serde(
        default = "replay_neighbours",
        deserialize_with = "neighbours_in_range"
    )]
    pub neighbours: u8,
}

fn replay_neighbours() -> u8 {
    32
}

fn neighbours_in_range<'de, D: serde::Deserializer<'de>>(d: D) -> Result<u8, D::Error> {
    let n = u8::deserialize(d)?;
    match n {
        1..=32 => Ok(n),
        _ => Err(serde::de::Error::custom("`neighbours` is 1 to 32")),
    }
}

fn replay_calls() -> u8 {
    10
}

fn calls_in_range<'de, D: serde::Deserializer<'de>>(d: D) -> Result<u8, D::Error> {
    let n = u8::deserialize(d)?;
    match n {
        1..=100 => Ok(n),
        _ => Err(serde::de::Error::custom("`calls` is 1 to 100")),
    }
}

impl ReplayConfig {
    /// `patchgate replay`'s: every rule `listed`, the base's `calls` and `neighbours` kept.
    pub fn listed(base: Option<ReplayConfig>) -> Self {
        use crate::core::gate::ObserveRule::Listed;
        ReplayConfig {
            behaves_under_test: Listed,
            calls: base.map_or_else(replay_calls, |b| b.calls),
            unobserved_difference: Listed,
            special_case: Listed,
            unasserted_difference: Listed,
            neighbours: base.map_or_else(replay_neighbours, |b| b.neighbours),
        }
    }

    /// Whether it replays anything.
    pub fn on(&self) -> bool {
        self.behaves_under_test != crate::core::gate::ObserveRule::Off || self.against_base()
    }

    /// Whether the base is compared (a rule of 16.3 is on).
    pub fn against_base(&self) -> bool {
        [
            self.unobserved_difference,
            self.special_case,
            self.unasserted_difference,
        ]
        .iter()
        .any(|r| *r != crate::core::gate::ObserveRule::Off)
    }
}

/// `[observe]` (issue 52; docs/design/observe.md): the suite's first run is observed (probes
/// on the changed lines), and each rule is `off`, `listed` (in the report only) or `required` (what it
/// finds escalates).
#[derive(Debug, Clone, Copy, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ObserveConfig {
    /// No check runs any changed code line → `unobserved-change`.
    #[serde(default = "observe_off")]
    pub changes: crate::core::gate::ObserveRule,
    /// A branch the patch adds that no check takes → `unobserved-branch`.
    #[serde(default = "observe_off")]
    pub branches: crate::core::gate::ObserveRule,
    /// How many patch mutants to make and run (0-100): one per changed code line a test
    /// ran; with `changes = "required"`, none killed → `unobserved-change`.
    #[serde(default)]
    pub mutants: u8,
}

fn observe_off() -> crate::core::gate::ObserveRule {
    crate::core::gate::ObserveRule::Off
}

impl ObserveConfig {
    /// `patchgate replay`'s: the observed run records; no patch mutant is made (nothing is
    /// decided from them).
    pub const LISTED: ObserveConfig = ObserveConfig {
        changes: crate::core::gate::ObserveRule::Listed,
        branches: crate::core::gate::ObserveRule::Listed,
        mutants: 0,
    };

    /// Whether any rule looks.
    pub fn on(&self) -> bool {
        self.changes != crate::core::gate::ObserveRule::Off
            || self.branches != crate::core::gate::ObserveRule::Off
    }
}
