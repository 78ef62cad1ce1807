//! The answers patchgate gives, as the contract spells them. Shared by the server (which
//! serialises them) and the CLI (which prints them or reads them back from a server).

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::evidence::{RouteRequest, ScopedFreeze};
use super::json_out::{push_key, push_str_literal, push_u64};
use super::route::{self, Attribution, Decision, Disposition, RuleName, Verdict, Verdicts};

/// How the freeze gate was derived from the patch's scope.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct ScopedFreezeAnswer {
    /// The derived verdict: `unknown` when a frozen test covers a changed file, else `pass`.
    pub derived: Verdict,
    /// Ids of the frozen tests that cover a changed file, in request order.
    pub matched: Vec<String>,
}

/// The router's answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct RouteAnswer {
    /// Echoed from the request when given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub patch_id: Option<String>,
    /// `MERGE_OK`, `BLOCK` or `ESCALATE`.
    pub disposition: Disposition,
    /// Where to look first.
    pub attribution: Attribution,
    /// The ladder rule that matched first.
    pub rule: RuleName,
    /// 0 go, 1 the patch is wrong, 2 a human must look.
    pub exit_code: u8,
    /// Unique id of this decision, also in the decision log.
    pub decision_id: String,
    /// The verdict triple the ladder read (the freeze gate as derived, in the scoped form).
    pub verdicts: Verdicts,
    /// Present in the scoped-freeze form only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scoped_freeze: Option<ScopedFreezeAnswer>,
}

/// A decided `/route` request: what the ladder read and what it said.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RouteOutcome {
    pub patch_id: Option<String>,
    pub verdicts: Verdicts,
    pub scoped: Option<ScopedFreeze>,
    pub decision: Decision,
}

/// Decides one validated request. Pure: the same request always gets the same decision.
pub fn decide_route(request: &RouteRequest) -> RouteOutcome {
    let (verdicts, scoped) = request.verdicts();
    RouteOutcome {
        patch_id: request.patch_id.clone(),
        verdicts,
        scoped,
        decision: route::route(&verdicts),
    }
}

impl RouteOutcome {
    pub fn answer(&self, decision_id: String) -> RouteAnswer {
        RouteAnswer {
            patch_id: self.patch_id.clone(),
            disposition: self.decision.disposition,
            attribution: self.decision.attribution,
            rule: self.decision.rule,
            exit_code: self.decision.exit_code(),
            decision_id,
            verdicts: self.verdicts,
            scoped_freeze: self.scoped.as_ref().map(|s| ScopedFreezeAnswer {
                derived: s.derived,
                matched: s.matched.clone(),
            }),
        }
    }
}

impl RouteAnswer {
    /// The answer as JSON text, byte for byte what `serde_json::to_string` gives (a test holds
    /// the two together), written by hand because it is most of the hot path's output.
    pub fn to_json(&self) -> String {
        let mut out = String::with_capacity(320);
        out.push('{');
        if let Some(id) = &self.patch_id {
            push_key(&mut out, "patch_id");
            push_str_literal(&mut out, id);
            out.push(',');
        }
        for (key, word) in [
            ("disposition", self.disposition.as_str()),
            ("attribution", self.attribution.as_str()),
            ("rule", self.rule.as_str()),
        ] {
            push_key(&mut out, key);
            out.push('"');
            out.push_str(word);
            out.push_str("\",");
        }
        push_key(&mut out, "exit_code");
        push_u64(&mut out, u64::from(self.exit_code));
        out.push(',');
        push_key(&mut out, "decision_id");
        push_str_literal(&mut out, &self.decision_id);
        out.push(',');
        push_key(&mut out, "verdicts");
        out.push('{');
        for (i, (key, v)) in [
            ("property_check", self.verdicts.property_check),
            ("fixture_check", self.verdicts.fixture_check),
            ("flaky_freeze", self.verdicts.flaky_freeze),
        ]
        .into_iter()
        .enumerate()
        {
            if i > 0 {
                out.push(',');
            }
            push_key(&mut out, key);
            out.push('"');
            out.push_str(v.as_str());
            out.push('"');
        }
        out.push('}');
        if let Some(scoped) = &self.scoped_freeze {
            out.push(',');
            push_key(&mut out, "scoped_freeze");
            out.push('{');
            push_key(&mut out, "derived");
            out.push('"');
            out.push_str(scoped.derived.as_str());
            out.push_str("\",");
            push_key(&mut out, "matched");
            out.push('[');
            for (i, id) in scoped.matched.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                push_str_literal(&mut out, id);
            }
            out.push_str("]}");
        }
        out.push('}');
        out
    }
}

/// One row of `GET /route/table`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct TableRow {
    pub verdicts: Verdicts,
    pub disposition: Disposition,
    pub attribution: Attribution,
    pub rule: RuleName,
    pub exit_code: u8,
}

/// All 64 rows, in the table's fixed order, from the same ladder `/route` runs.
pub fn route_table() -> Vec<TableRow> {
    route::table()
        .map(|(v, d)| TableRow {
            verdicts: v,
            disposition: d.disposition,
            attribution: d.attribution,
            rule: d.rule,
            exit_code: d.exit_code(),
        })
        .collect()
}

impl super::decision::Decision for RouteOutcome {
    const ENDPOINT: &'static str = "route";
    type Request = RouteRequest;
    type Answer = RouteAnswer;

    fn parse(body: &[u8]) -> Result<RouteRequest, super::problem::Problem> {
        super::evidence::parse_route_bytes(body)
    }

    fn decide(request: &RouteRequest, _: &super::decision::Defaults) -> Self {
        decide_route(request)
    }

    fn exit_code(&self) -> u8 {
        self.decision.exit_code()
    }

    fn label(&self) -> &'static str {
        self.decision.disposition.as_str()
    }

    fn log_fields<'a>(&'a self, _: &'a RouteRequest) -> super::decision::LogFields<'a> {
        use super::decision::{Field, log_key};
        let (d, v) = (&self.decision, &self.verdicts);
        super::decision::LogFields::of([
            (log_key!("patch_id"), self.patch_id.as_deref().into()),
            (
                log_key!("property_check"),
                Field::Plain(v.property_check.as_str()),
            ),
            (
                log_key!("fixture_check"),
                Field::Plain(v.fixture_check.as_str()),
            ),
            (
                log_key!("flaky_freeze"),
                Field::Plain(v.flaky_freeze.as_str()),
            ),
            (
                log_key!("disposition"),
                Field::Plain(d.disposition.as_str()),
            ),
            (
                log_key!("attribution"),
                Field::Plain(d.attribution.as_str()),
            ),
            (log_key!("rule"), Field::Plain(d.rule.as_str())),
            (log_key!("exit_code"), d.exit_code().into()),
        ])
    }

    fn answer(&self, _: &RouteRequest, decision_id: String) -> RouteAnswer {
        RouteOutcome::answer(self, decision_id)
    }

    fn answer_exit_code(answer: &RouteAnswer) -> u8 {
        answer.exit_code
    }

    fn line(answer: &RouteAnswer) -> String {
        format!(
            "{} attribution={}\n",
            answer.disposition.as_str(),
            answer.attribution.as_str()
        )
    }

    fn json(answer: &RouteAnswer) -> Vec<u8> {
        answer.to_json().into_bytes()
    }
}
