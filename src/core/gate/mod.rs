//! The patch gate (CONTRACT.md sections 8, 11 and 12): one verdict for one patch. Facts in,
//! plan or decision out: the runner (the CLI, or any client of `POST /gate/next`) executes the
//! step [`next_step`] names ([`PLAN`]: build, canary and property runs, re-proof, suite,
//! re-run) and reports what it saw as [`Facts`]; [`decide_gate`] decides them.
//!
//! The gate's own rules are data ([`GATE_RULES`]), first match wins, like the router's ladder
//! and the quorum's rules: merge, seal, debt, guard, binary, test-aware code, integrity,
//! build, canary, re-proof; the last hands over to the router over the three verdicts derived
//! from the runs (t0 scope, t1 property quorum counted by receipts, t2 fixture suite, scoped
//! freeze). The answer's `steps` say what each step saw and concluded.

mod against_base;
mod answer;
mod apart;
mod base_facts;
mod behaved;
mod behavior;
mod call_result;
mod candidates;
mod combine;
mod combine_observe;
mod facts;
mod fixtures;
mod observe;
mod observed;
mod parse;
mod parse_steps;
mod plan;
mod reads;
mod recorded;
mod replay_table;
mod report;
mod report_next;
mod report_text;
mod request;
mod rules;
mod shape;
mod shard;
mod shard_facts;
mod steps;
mod verdicts;
mod work;

use super::route::{Verdict, Verdicts};

pub use against_base::*;
pub use answer::*;
pub use apart::is_test_file;
pub use base_facts::*;
pub use behavior::*;
pub use combine::{combine, parse_gate_body};
pub use facts::*;
pub use observe::*;
pub use parse::parse_gate_request;
pub use plan::*;
pub use reads::*;
pub use replay_table::replay_table;
pub use report::{markdown, markdown_as, step_name, text_line};
pub use request::*;
pub use rules::*;
pub use shape::{
    BUILD_FIELDS, CANARY_FIELDS, CONFIGURED_FIELDS, FAILURE_FIELDS, GATE_FIELDS, INTEGRITY_FIELDS,
    JUDGED_FIELDS, MAX_CHANGED_TESTS, MAX_FAILURE_BYTES, MAX_FAILURES, MAX_GROUP_PULL_REQUESTS,
    MAX_PROPERTY_CASES, MAX_REPROOFS, MAX_TEST_ID_CHARS, MERGE_GROUP_FIELDS, OVER_FIELDS,
    REPLAY_FIELDS, REPROOF_FIELDS, RERUN_FIELDS, ROOM_CAPS, ROOM_FIELDS, SUITE_FIELDS,
    SUSPICIOUS_FIELDS, TIMING_STEPS, UNREAD_FIELDS, clip_failure, fit_test_id,
};
pub use shard::{MAX_SHARDS, Shard, Split, Unit, hashed_shard, partition};
pub use shard_facts::{
    SHARD_FIELDS, SHARDS_FIELDS, ShardFacts, ShardsFacts, partition_digest, seal_shard,
    set_shard_key, shard_digest, shard_key,
};
pub use steps::*;
pub use work::{NextStep, WorkItem, WorkKind, WorkTree, work_id};

impl super::decision::Decision for GateDecision {
    const ENDPOINT: &'static str = "gate";
    const MARKDOWN: bool = true;
    type Request = GateRequest;
    type Answer = GateAnswer;

    fn parse(body: &[u8]) -> Result<GateRequest, super::problem::Problem> {
        super::decision::json_body(body, combine::parse_gate_body)
    }

    fn decide(request: &GateRequest, defaults: &super::decision::Defaults) -> Self {
        decide_gate(request, defaults.debt_cap)
    }

    fn exit_code(&self) -> u8 {
        self.disposition.exit_code()
    }

    fn label(&self) -> &'static str {
        self.disposition.as_str()
    }

    /// A decision the router made also carries its verdicts and `attribution`, so `/review`
    /// counts it with the router's own.
    fn log_fields<'a>(&'a self, request: &'a GateRequest) -> super::decision::LogFields<'a> {
        use super::decision::{Field, log_key};
        let verdict = |pick: fn(&Verdicts) -> Verdict| {
            self.evidence
                .as_ref()
                .map_or(Field::Absent, |v| Field::Plain(pick(v).as_str()))
        };
        let debt = self.steps.iter().find_map(|s| match s {
            Step::Debt { counted, cap, .. } => Some((*counted, *cap)),
            _ => None,
        });
        super::decision::LogFields::of([
            (log_key!("patch_id"), request.patch_id.as_deref().into()),
            (log_key!("rule"), Field::Plain(<&str>::from(self.rule))),
            (
                log_key!("disposition"),
                Field::Plain(self.disposition.as_str()),
            ),
            (log_key!("reason"), Field::Plain(self.reason.as_str())),
            (
                log_key!("attribution"),
                self.evidence
                    .map_or(Field::Absent, |_| Field::Plain(self.reason.as_str())),
            ),
            (log_key!("property_check"), verdict(|v| v.property_check)),
            (log_key!("fixture_check"), verdict(|v| v.fixture_check)),
            (log_key!("flaky_freeze"), verdict(|v| v.flaky_freeze)),
            (log_key!("exit_code"), self.exit_code().into()),
            (
                log_key!("changed_files"),
                (request.changed_files.len() as u64).into(),
            ),
            // The freeze debt, as a quorum decision logs it: the review draws it over time.
            (
                log_key!("debt_counted"),
                debt.map_or(Field::Absent, |(c, _)| c.into()),
            ),
            (
                log_key!("debt_cap"),
                debt.map_or(Field::Absent, |(_, cap)| cap.into()),
            ),
            // The commits judged: calibration follows a blocked head to its merged one.
            (
                log_key!("base"),
                request
                    .judged
                    .as_ref()
                    .map_or(Field::Absent, |j| Field::Plain(j.base.as_str())),
            ),
            (
                log_key!("head"),
                request
                    .judged
                    .as_ref()
                    .map_or(Field::Absent, |j| Field::Plain(j.head.as_str())),
            ),
        ])
    }

    fn answer(&self, request: &GateRequest, decision_id: String) -> GateAnswer {
        GateDecision::answer(self, request, decision_id)
    }

    fn answer_exit_code(answer: &GateAnswer) -> u8 {
        answer.exit_code
    }

    fn line(answer: &GateAnswer) -> String {
        text_line(answer)
    }

    fn markdown(answer: &GateAnswer) -> String {
        markdown(answer)
    }
}
