//! The precedence router: three gate verdicts through an ordered ladder of rules.
//!
//! The ladder is data ([`LADDER`]): `/route`, `GET /route/table` and the CLI all read the same
//! four rows, first match wins, and the order is the policy. `unknown` is never a pass and never
//! a fail; `missing` outranks `fail`; `fail` is absorbing.

use super::rules;
use serde::{Deserialize, Serialize};
use std::fmt;
use utoipa::ToSchema;

crate::core::words! {
    /// One gate's verdict. `unknown`: the gate ran but gave no verdict (frozen, skipped, errored);
    /// `missing`: the gate never ran.
    pub enum Verdict {
        Pass,
        Fail,
        Unknown,
        Missing,
    }
}

impl Verdict {
    /// Every verdict, in the order the decision table lists them.
    pub const ALL: [Verdict; 4] = [
        Verdict::Pass,
        Verdict::Fail,
        Verdict::Unknown,
        Verdict::Missing,
    ];

    pub fn as_str(self) -> &'static str {
        self.into()
    }

    /// The four words, exactly; nothing else (no case folding, no synonyms).
    pub fn from_word(word: &str) -> Option<Verdict> {
        use serde::de::IntoDeserializer;
        let word: serde::de::value::StrDeserializer<'_, serde::de::value::Error> =
            word.into_deserializer();
        Verdict::deserialize(word).ok()
    }
}

impl fmt::Display for Verdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The three gates, named as the evidence document names them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Gate {
    PropertyCheck,
    FixtureCheck,
    FlakyFreeze,
}

impl Gate {
    pub const ALL: [Gate; 3] = [Gate::PropertyCheck, Gate::FixtureCheck, Gate::FlakyFreeze];

    pub fn field(self) -> &'static str {
        match self {
            Gate::PropertyCheck => "property_check",
            Gate::FixtureCheck => "fixture_check",
            Gate::FlakyFreeze => "flaky_freeze",
        }
    }
}

/// The verdict triple the ladder reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, ToSchema)]
pub struct Verdicts {
    pub property_check: Verdict,
    pub fixture_check: Verdict,
    pub flaky_freeze: Verdict,
}

impl Verdicts {
    pub fn get(&self, gate: Gate) -> Verdict {
        match gate {
            Gate::PropertyCheck => self.property_check,
            Gate::FixtureCheck => self.fixture_check,
            Gate::FlakyFreeze => self.flaky_freeze,
        }
    }

    fn any(&self, v: Verdict) -> bool {
        Gate::ALL.into_iter().any(|g| self.get(g) == v)
    }

    fn all(&self, v: Verdict) -> bool {
        Gate::ALL.into_iter().all(|g| self.get(g) == v)
    }

    /// All 64 triples in the table's fixed order: property outermost, then fixture, then the
    /// freeze gate, each in the order pass, fail, unknown, missing.
    pub fn every() -> impl Iterator<Item = Verdicts> {
        Verdict::ALL.into_iter().flat_map(|p| {
            Verdict::ALL.into_iter().flat_map(move |f| {
                Verdict::ALL.into_iter().map(move |z| Verdicts {
                    property_check: p,
                    fixture_check: f,
                    flaky_freeze: z,
                })
            })
        })
    }
}

crate::core::words! {
    "SCREAMING_SNAKE_CASE";
    /// What the merge bot does with the patch.
    pub enum Disposition {
        MergeOk,
        Block,
        Escalate,
    }
}

impl Disposition {
    pub fn as_str(self) -> &'static str {
        self.into()
    }

    /// The exit code is the API: 0 go, 1 the patch is wrong, 2 a human must look.
    pub fn exit_code(self) -> u8 {
        match self {
            Disposition::MergeOk => 0,
            Disposition::Block => 1,
            Disposition::Escalate => 2,
        }
    }
}

crate::core::words! {
    "kebab-case";
    /// Where a reader should look first.
    pub enum Attribution {
        EvidenceGap,
        BehaviorAndInvariant,
        ConcreteBehavior,
        InvariantOrOverSpecifiedProperty,
        FrozenTestFailure,
        InadmissibleEvidence,
        AllGatesHeld,
    }
}

impl Attribution {
    pub fn as_str(self) -> &'static str {
        self.into()
    }
}

crate::core::words! {
    "kebab-case";
    /// The name of a ladder rule, as the answer's `rule` field carries it.
    pub enum RuleName {
        EvidenceGap,
        FailAbsorbs,
        Inadmissible,
        AllHeld,
    }
}

impl RuleName {
    pub fn as_str(self) -> &'static str {
        self.into()
    }
}

/// How a rule names its attribution: a fixed string, or the attribution function.
#[derive(Debug, Clone, Copy)]
pub enum AttributionSource {
    Fixed(Attribution),
    OfFailures,
}

/// What a rung of the ladder concludes.
#[derive(Debug, Clone, Copy)]
pub struct Rung {
    pub name: RuleName,
    pub disposition: Disposition,
    pub attribution: AttributionSource,
}

/// One row of the ladder (the contract's rule number, 1-4).
pub type Rule = rules::Rule<Verdicts, Rung>;

/// The ladder. Ordered, first match wins; the order is the policy.
pub const LADDER: [Rule; 4] = [
    Rule {
        number: 1,
        when: |v| v.any(Verdict::Missing),
        then: Rung {
            name: RuleName::EvidenceGap,
            disposition: Disposition::Escalate,
            attribution: AttributionSource::Fixed(Attribution::EvidenceGap),
        },
    },
    Rule {
        number: 2,
        when: |v| v.any(Verdict::Fail),
        then: Rung {
            name: RuleName::FailAbsorbs,
            disposition: Disposition::Block,
            attribution: AttributionSource::OfFailures,
        },
    },
    Rule {
        number: 3,
        when: |v| v.any(Verdict::Unknown),
        then: Rung {
            name: RuleName::Inadmissible,
            disposition: Disposition::Escalate,
            attribution: AttributionSource::Fixed(Attribution::InadmissibleEvidence),
        },
    },
    Rule {
        number: 4,
        when: |v| v.all(Verdict::Pass),
        then: Rung {
            name: RuleName::AllHeld,
            disposition: Disposition::MergeOk,
            attribution: AttributionSource::Fixed(Attribution::AllGatesHeld),
        },
    },
];

/// Names where to look first when at least one gate failed.
///
/// Differs from the article in one place, on purpose (see CONTRACT.md section 1): when only the
/// freeze gate failed, the answer names the frozen tests, not the property check that held.
pub fn attribute(v: &Verdicts) -> Attribution {
    match (v.property_check, v.fixture_check) {
        (Verdict::Fail, Verdict::Fail) => Attribution::BehaviorAndInvariant,
        (_, Verdict::Fail) => Attribution::ConcreteBehavior,
        (Verdict::Fail, _) => Attribution::InvariantOrOverSpecifiedProperty,
        _ => Attribution::FrozenTestFailure,
    }
}

/// The ladder's answer for one verdict triple.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Decision {
    pub disposition: Disposition,
    pub attribution: Attribution,
    pub rule: RuleName,
}

impl Decision {
    pub fn exit_code(&self) -> u8 {
        self.disposition.exit_code()
    }

    /// The article's one line: `BLOCK attribution=invariant-or-over-specified-property`.
    pub fn line(&self) -> String {
        format!(
            "{} attribution={}\n",
            self.disposition.as_str(),
            self.attribution.as_str()
        )
    }
}

/// Runs the ladder. Fails closed: were no rule to match (the table tests prove one always
/// does), the answer would be an escalation, never a merge.
pub fn route(v: &Verdicts) -> Decision {
    if let Some(rule) = rules::first_match(&LADDER, v, 1) {
        let rung = rule.then;
        let attribution = match rung.attribution {
            AttributionSource::Fixed(a) => a,
            AttributionSource::OfFailures => attribute(v),
        };
        return Decision {
            disposition: rung.disposition,
            attribution,
            rule: rung.name,
        };
    }
    Decision {
        disposition: Disposition::Escalate,
        attribution: Attribution::InadmissibleEvidence,
        rule: RuleName::Inadmissible,
    }
}

/// Every verdict triple with its decision, in the table's fixed order.
pub fn table() -> impl Iterator<Item = (Verdicts, Decision)> {
    Verdicts::every().map(|v| (v, route(&v)))
}
