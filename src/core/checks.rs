//! Verdicts from a forge's checks (CONTRACT.md section 9): a merge bot sends GitHub's
//! list-check-runs and combined-status responses verbatim, names which checks make up each of
//! the router's three gates, and gets the router's decision — read with four-state verdicts,
//! so a job skipped by a condition is `unknown`, never the pass branch protection counts it as.
//! While a check still runs the answer is `PENDING` (425), unless a gate has already failed
//! and none is missing: no pending check can change that block.

use std::collections::{HashMap, HashSet};

use serde::{Deserialize, Serialize};
use serde_json::Value;
use utoipa::ToSchema;

use super::fields::{self, Errors, MAX_ID_CHARS, Obj, object};
use super::json::Shape;
use super::route::{self, Attribution, Decision, Gate, RuleName, Verdict, Verdicts};

/// What of a `/route/checks` body is read: everything at the top (unknown fields there are
/// refused), and only the fields the router reads inside the two forge documents (the forge
/// adds fields over time; those are skipped unread, and cost no memory).
pub static SHAPE: Shape = Shape::Known(&[
    (
        "check_runs",
        Shape::Only(&[
            ("total_count", Shape::All),
            ("check_runs", Shape::Each(&RUN_SHAPE)),
        ]),
    ),
    (
        "statuses",
        Shape::Only(&[
            ("sha", Shape::All),
            ("statuses", Shape::Each(&STATUS_SHAPE)),
        ]),
    ),
]);
static RUN_SHAPE: Shape = Shape::Only(&[
    ("id", Shape::All),
    ("name", Shape::All),
    ("head_sha", Shape::All),
    ("status", Shape::All),
    ("conclusion", Shape::All),
    ("html_url", Shape::All),
]);
static STATUS_SHAPE: Shape = Shape::Only(&[
    ("context", Shape::All),
    ("state", Shape::All),
    ("updated_at", Shape::All),
    ("target_url", Shape::All),
]);

/// The fields of a `/route/checks` body.
pub const FIELDS: [&str; 5] = ["patch_id", "head_sha", "gates", "check_runs", "statuses"];
/// Longest list of checks (or names) an answer carries; the rest are counted. A merge bot posts
/// the answer as a comment, and one request's answer stays small whatever it sent.
pub const MAX_LISTED_CHECKS: usize = 100;
/// Longest check name, URL or word read from a forge document, in characters.
const MAX_TEXT: usize = 4096;
/// The largest id or count a forge sends: a signed 64-bit integer (GitHub's are far smaller),
/// as the API document declares them.
pub const MAX_FORGE_INT: u64 = i64::MAX as u64;

/// One check run, as read from a list-check-runs response.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckRun {
    pub id: u64,
    pub name: String,
    pub head_sha: String,
    pub status: String,
    pub conclusion: Option<String>,
    pub url: Option<String>,
}

/// One commit status, as read from a combined-status response.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommitStatus {
    pub context: String,
    pub state: String,
    pub updated_at: Option<String>,
    pub url: Option<String>,
}

/// A validated `/route/checks` request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChecksRequest {
    pub patch_id: Option<String>,
    /// Lowercase hex.
    pub head_sha: String,
    /// The check names of each gate, in [`Gate::ALL`] order.
    pub gates: [Vec<String>; 3],
    pub runs: Vec<CheckRun>,
    /// `total_count` of the check-runs response, when given.
    pub runs_total: Option<u64>,
    pub statuses: Vec<CommitStatus>,
    /// The commit the combined status is for (`sha`), when given.
    pub statuses_sha: Option<String>,
}

crate::core::words! {
    /// One check's verdict: the router's words, plus `pending` for a check still running.
    pub enum CheckVerdict {
        Pass,
        Fail,
        Unknown,
        Pending,
    }
}

impl CheckVerdict {
    /// How strongly a verdict speaks when one name reports twice (a check run and a status of
    /// the same name): a failure over anything, then no verdict, then still running.
    fn weight(self) -> u8 {
        match self {
            CheckVerdict::Fail => 3,
            CheckVerdict::Unknown => 2,
            CheckVerdict::Pending => 1,
            CheckVerdict::Pass => 0,
        }
    }
}

/// A completed check run's conclusion → its verdict. Only `success` passes and only `failure`
/// fails; `skipped` and the rest are no verdict, whatever branch protection counts them as. A
/// conclusion the forge adds later is no verdict either: never a pass.
pub fn run_verdict(status: &str, conclusion: Option<&str>) -> CheckVerdict {
    if status != "completed" {
        return CheckVerdict::Pending;
    }
    match conclusion {
        Some("success") => CheckVerdict::Pass,
        Some("failure") => CheckVerdict::Fail,
        _ => CheckVerdict::Unknown,
    }
}

/// A commit status's state → its verdict (`error` is the harness, not the patch).
pub fn status_verdict(state: &str) -> CheckVerdict {
    match state {
        "success" => CheckVerdict::Pass,
        "failure" => CheckVerdict::Fail,
        "pending" => CheckVerdict::Pending,
        _ => CheckVerdict::Unknown,
    }
}

/// Where a check's result came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum CheckSource {
    CheckRun,
    Status,
}

/// One check as read.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct CheckRead {
    pub name: String,
    pub source: CheckSource,
    /// The check run's id (check runs only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<u64>,
    /// The forge's word: a check run's conclusion (or its status while not completed), a
    /// status's state.
    pub conclusion: String,
    pub verdict: CheckVerdict,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
}

/// One gate over its checks.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct GateChecks {
    /// The gate's verdict (pending checks counted as `unknown` when the block is decided while
    /// they run).
    pub verdict: Verdict,
    /// The checks read, in the order the gate names them (a name reported both as a check run
    /// and as a status appears twice).
    pub checks: Vec<CheckRead>,
    /// Names the gate lists that no current run or status reports.
    pub absent: Vec<String>,
    /// Checks read and absent names past the first 100 of each list: counted, not listed.
    pub unlisted: u64,
}

/// The three gates, as read.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct ChecksGates {
    pub property_check: GateChecks,
    pub fixture_check: GateChecks,
    pub flaky_freeze: GateChecks,
}

/// What was not read, and why.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct Ignored {
    /// Check runs for another `head_sha`, and statuses of a combined status for another `sha`.
    pub stale: u64,
    /// Older runs of a name (a lower `id`) and older statuses of a context.
    pub superseded: u64,
    /// `total_count` says the forge has more check runs than were sent (another page).
    pub unsent_check_runs: u64,
}

crate::core::words! {
    "SCREAMING_SNAKE_CASE";
    /// What the merge bot does now.
    pub enum ChecksDisposition {
        MergeOk,
        Block,
        Escalate,
        /// A check still runs: wait, do not merge, do not escalate yet.
        Pending,
    }
}

impl ChecksDisposition {
    pub fn as_str(self) -> &'static str {
        self.into()
    }
}

/// The `/route/checks` decision.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChecksOutcome {
    /// `None`: PENDING.
    pub decision: Option<Decision>,
    pub verdicts: Option<Verdicts>,
    /// The names of the checks still running, each once, in gate order (the first 100).
    pub pending: Vec<String>,
    /// How many checks still run.
    pub pending_total: u64,
    pub gates: ChecksGates,
    pub ignored: Ignored,
}

/// How long a merge bot is asked to wait before asking again while checks run, in seconds.
pub const PENDING_RETRY_AFTER_S: u32 = 30;

/// The exit code of PENDING (sysexits' EX_TEMPFAIL).
pub const PENDING_EXIT: u8 = 75;

impl ChecksOutcome {
    pub fn disposition(&self) -> ChecksDisposition {
        match self.decision.map(|d| d.disposition) {
            None => ChecksDisposition::Pending,
            Some(route::Disposition::MergeOk) => ChecksDisposition::MergeOk,
            Some(route::Disposition::Block) => ChecksDisposition::Block,
            Some(route::Disposition::Escalate) => ChecksDisposition::Escalate,
        }
    }

    pub fn exit_code(&self) -> u8 {
        self.decision.map_or(PENDING_EXIT, |d| d.exit_code())
    }

    pub fn answer(&self, request: &ChecksRequest, decision_id: String) -> ChecksAnswer {
        ChecksAnswer {
            patch_id: request.patch_id.clone(),
            head_sha: request.head_sha.clone(),
            disposition: self.disposition(),
            attribution: self.decision.map(|d| d.attribution),
            rule: self.decision.map(|d| d.rule),
            exit_code: self.exit_code(),
            decision_id,
            verdicts: self.verdicts,
            pending: self.pending.clone(),
            pending_total: self.pending_total,
            gates: self.gates.clone(),
            ignored: self.ignored,
        }
    }
}

/// The `/route/checks` answer: `/route`'s fields (absent ones while PENDING), plus the checks
/// read per gate.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct ChecksAnswer {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub patch_id: Option<String>,
    pub head_sha: String,
    pub disposition: ChecksDisposition,
    /// Absent while PENDING.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub attribution: Option<Attribution>,
    /// The router's rule; absent while PENDING.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rule: Option<RuleName>,
    /// 0 MERGE_OK, 1 BLOCK, 2 ESCALATE, 75 PENDING.
    pub exit_code: u8,
    pub decision_id: String,
    /// The verdict triple the router read; absent while PENDING.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verdicts: Option<Verdicts>,
    /// The checks still running (the first 100, in gate order).
    pub pending: Vec<String>,
    /// How many checks still run.
    pub pending_total: u64,
    pub gates: ChecksGates,
    pub ignored: Ignored,
}

impl ChecksAnswer {
    /// The one line: the router's (`BLOCK attribution=concrete-behavior`), or
    /// `PENDING pending=2` (how many checks still run).
    pub fn line(&self) -> String {
        match self.attribution {
            Some(a) => format!("{} attribution={}\n", self.disposition.as_str(), a.as_str()),
            None => format!(
                "{} pending={}\n",
                self.disposition.as_str(),
                self.pending_total
            ),
        }
    }
}

impl super::decision::Decision for ChecksOutcome {
    const ENDPOINT: &'static str = "route/checks";
    type Request = ChecksRequest;
    type Answer = ChecksAnswer;

    /// A forge's documents are large: only the fields the router reads are kept ([`SHAPE`]).
    fn parse(body: &[u8]) -> Result<ChecksRequest, super::problem::Problem> {
        parse_checks_request(&super::json::parse_projected(body, &SHAPE)?)
            .map_err(super::problem::Problem::invalid)
    }

    fn decide(request: &ChecksRequest, _: &super::decision::Defaults) -> Self {
        decide_checks(request)
    }

    fn exit_code(&self) -> u8 {
        ChecksOutcome::exit_code(self)
    }

    fn label(&self) -> &'static str {
        self.disposition().as_str()
    }

    /// A routed decision carries the verdicts and the attribution (so `/review` counts it with
    /// `/route`'s); a PENDING one says how many checks still run.
    fn log_fields<'a>(&'a self, request: &'a ChecksRequest) -> super::decision::LogFields<'a> {
        use super::decision::{Field, log_key};
        let verdict = |pick: fn(&Verdicts) -> route::Verdict| {
            self.verdicts
                .as_ref()
                .map_or(Field::Absent, |v| Field::Plain(pick(v).as_str()))
        };
        let decided = |f: fn(&Decision) -> &'static str| {
            self.decision.map_or(Field::Absent, |d| Field::Plain(f(&d)))
        };
        super::decision::LogFields::of([
            (log_key!("patch_id"), request.patch_id.as_deref().into()),
            // Checked to be hex when the request was read; escaped all the same (it is the
            // client's).
            (log_key!("head_sha"), Field::Str(request.head_sha.as_str())),
            (log_key!("property_check"), verdict(|v| v.property_check)),
            (log_key!("fixture_check"), verdict(|v| v.fixture_check)),
            (log_key!("flaky_freeze"), verdict(|v| v.flaky_freeze)),
            (
                log_key!("disposition"),
                Field::Plain(self.disposition().as_str()),
            ),
            (log_key!("attribution"), decided(|d| d.attribution.as_str())),
            (log_key!("rule"), decided(|d| d.rule.as_str())),
            (log_key!("exit_code"), ChecksOutcome::exit_code(self).into()),
            // The answer's own count: how many checks still run (not how many it lists).
            (log_key!("pending_total"), self.pending_total.into()),
        ])
    }

    fn answer(&self, request: &ChecksRequest, decision_id: String) -> ChecksAnswer {
        ChecksOutcome::answer(self, request, decision_id)
    }

    fn answer_exit_code(answer: &ChecksAnswer) -> u8 {
        answer.exit_code
    }

    fn line(answer: &ChecksAnswer) -> String {
        answer.line()
    }

    fn retry_after(&self) -> Option<u32> {
        self.decision.is_none().then_some(PENDING_RETRY_AFTER_S)
    }
}

// ---------------------------------------------------------------------------------------------
// Deciding

/// The latest current report of each name: check runs by highest `id`, statuses by latest
/// `updated_at` then list order (the first of equals: GitHub lists the newest first).
struct Latest<'a> {
    runs: HashMap<&'a str, &'a CheckRun>,
    statuses: HashMap<&'a str, &'a CommitStatus>,
    ignored: Ignored,
}

fn latest(request: &ChecksRequest) -> Latest<'_> {
    let mut ignored = Ignored {
        stale: 0,
        superseded: 0,
        unsent_check_runs: request
            .runs_total
            .map_or(0, |t| t.saturating_sub(request.runs.len() as u64)),
    };
    let mut runs: HashMap<&str, &CheckRun> = HashMap::new();
    for run in &request.runs {
        if !run.head_sha.eq_ignore_ascii_case(&request.head_sha) {
            ignored.stale += 1;
            continue;
        }
        match runs.get(run.name.as_str()) {
            Some(kept) if kept.id >= run.id => ignored.superseded += 1,
            Some(_) => {
                ignored.superseded += 1;
                runs.insert(&run.name, run);
            }
            None => {
                runs.insert(&run.name, run);
            }
        }
    }
    let mut statuses: HashMap<&str, &CommitStatus> = HashMap::new();
    let stale_statuses = request
        .statuses_sha
        .as_ref()
        .is_some_and(|sha| !sha.eq_ignore_ascii_case(&request.head_sha));
    if stale_statuses {
        ignored.stale += request.statuses.len() as u64;
    } else {
        for status in &request.statuses {
            match statuses.get(status.context.as_str()) {
                // Strictly later only: of equals, the first listed stays.
                Some(kept) if status.updated_at > kept.updated_at => {
                    ignored.superseded += 1;
                    statuses.insert(&status.context, status);
                }
                Some(_) => ignored.superseded += 1,
                None => {
                    statuses.insert(&status.context, status);
                }
            }
        }
    }
    Latest {
        runs,
        statuses,
        ignored,
    }
}

/// One gate's verdict over its checks' verdicts (`None`: a check nobody reported). Any
/// absent → missing; else any fail → fail; else any unknown → unknown; else pass (pending
/// counts as pass here: the caller answers PENDING, or routes pending as `unknown`).
fn gate_verdict(checks: &[Option<CheckVerdict>]) -> Verdict {
    if checks.iter().any(Option::is_none) {
        Verdict::Missing
    } else if checks.contains(&Some(CheckVerdict::Fail)) {
        Verdict::Fail
    } else if checks.contains(&Some(CheckVerdict::Unknown)) {
        Verdict::Unknown
    } else {
        Verdict::Pass
    }
}

/// Decides. Pure and deterministic; linear in the documents.
pub fn decide_checks(request: &ChecksRequest) -> ChecksOutcome {
    let latest = latest(request);
    let mut pending: Vec<String> = Vec::new();
    // Names already counted as pending (a set: a hostile gate list stays linear).
    let mut pending_seen: HashSet<&str> = HashSet::new();
    let mut read: Vec<GateChecks> = Vec::with_capacity(3);
    // Each gate's merged verdict per name, for the routing below.
    let mut merged: Vec<Vec<Option<CheckVerdict>>> = Vec::with_capacity(3);
    for names in &request.gates {
        let mut checks = Vec::new();
        let mut absent = Vec::new();
        let mut unlisted = 0u64;
        let mut verdicts = Vec::with_capacity(names.len());
        for name in names {
            let run = latest.runs.get(name.as_str()).map(|r| CheckRead {
                name: name.clone(),
                source: CheckSource::CheckRun,
                id: Some(r.id),
                conclusion: if r.status == "completed" {
                    r.conclusion.clone().unwrap_or_else(|| "null".to_owned())
                } else {
                    r.status.clone()
                },
                verdict: run_verdict(&r.status, r.conclusion.as_deref()),
                url: r.url.clone(),
            });
            let status = latest.statuses.get(name.as_str()).map(|s| CheckRead {
                name: name.clone(),
                source: CheckSource::Status,
                id: None,
                conclusion: s.state.clone(),
                verdict: status_verdict(&s.state),
                url: s.url.clone(),
            });
            // A name reported twice speaks with its stronger verdict.
            let verdict = [&run, &status]
                .into_iter()
                .flatten()
                .map(|c| c.verdict)
                .max_by_key(|v| v.weight());
            if verdict.is_none() {
                if absent.len() < MAX_LISTED_CHECKS {
                    absent.push(name.clone());
                } else {
                    unlisted += 1;
                }
            }
            if verdict == Some(CheckVerdict::Pending)
                && pending_seen.insert(name.as_str())
                && pending.len() < MAX_LISTED_CHECKS
            {
                pending.push(name.clone());
            }
            verdicts.push(verdict);
            for c in [run, status].into_iter().flatten() {
                if checks.len() < MAX_LISTED_CHECKS {
                    checks.push(c);
                } else {
                    unlisted += 1;
                }
            }
        }
        read.push(GateChecks {
            verdict: gate_verdict(&verdicts),
            checks,
            absent,
            unlisted,
        });
        merged.push(verdicts);
    }
    let triple = |read: &[GateChecks]| {
        let v = |i: usize| read.get(i).map_or(Verdict::Missing, |g| g.verdict);
        Verdicts {
            property_check: v(0),
            fixture_check: v(1),
            flaky_freeze: v(2),
        }
    };
    let mut verdicts = triple(&read);
    let any = |v: &Verdicts, word: Verdict| Gate::ALL.into_iter().any(|g| v.get(g) == word);
    let decided_while_pending = any(&verdicts, Verdict::Fail) && !any(&verdicts, Verdict::Missing);
    if !pending_seen.is_empty() {
        if !decided_while_pending {
            return ChecksOutcome {
                decision: None,
                verdicts: None,
                pending,
                pending_total: pending_seen.len() as u64,
                gates: gates_of(read),
                ignored: latest.ignored,
            };
        }
        // No pending check can change the block: route the pending ones as `unknown`.
        for (gate, names) in read.iter_mut().zip(&merged) {
            let as_unknown: Vec<Option<CheckVerdict>> = names
                .iter()
                .map(|v| match v {
                    Some(CheckVerdict::Pending) => Some(CheckVerdict::Unknown),
                    other => *other,
                })
                .collect();
            gate.verdict = gate_verdict(&as_unknown);
        }
        verdicts = triple(&read);
    }
    ChecksOutcome {
        decision: Some(route::route(&verdicts)),
        verdicts: Some(verdicts),
        pending,
        pending_total: pending_seen.len() as u64,
        gates: gates_of(read),
        ignored: latest.ignored,
    }
}

fn gates_of(read: Vec<GateChecks>) -> ChecksGates {
    let mut it = read.into_iter();
    let mut next = || {
        it.next().unwrap_or(GateChecks {
            verdict: Verdict::Missing,
            checks: Vec::new(),
            absent: Vec::new(),
            unlisted: 0,
        })
    };
    ChecksGates {
        property_check: next(),
        fixture_check: next(),
        flaky_freeze: next(),
    }
}

// ---------------------------------------------------------------------------------------------
// Validation

fn is_sha(s: &str) -> bool {
    (4..=64).contains(&s.len()) && s.bytes().all(|b| b.is_ascii_hexdigit())
}

fn sha(obj: &Obj<'_>, key: &str, required: bool, e: &mut Errors) -> Option<String> {
    let s = if required {
        obj.req_string(key, 64, e)?
    } else {
        obj.opt_string(key, 64, e)?
    };
    if !is_sha(&s) {
        e.push(
            obj.pointer(key),
            format!("`{key}` must be a git commit id (4 to 64 hex digits)"),
        );
        return None;
    }
    Some(s.to_ascii_lowercase())
}

/// An optional string that may also be `null` (the forge writes `null` for "none").
fn nullable_string(obj: &Obj<'_>, key: &str, e: &mut Errors) -> Option<String> {
    match obj.get(key) {
        None | Some(Value::Null) => None,
        Some(_) => obj.opt_string(key, MAX_TEXT, e),
    }
}

/// Validates a `/route/checks` document (read with [`SHAPE`]), reporting every invalid field.
pub fn parse_checks_request(value: &Value) -> Result<ChecksRequest, Errors> {
    let mut e = Errors::default();
    let Some(doc) = object(value, "", "the checks request", &FIELDS, &mut e) else {
        return Err(e);
    };
    let patch_id = doc.opt_string("patch_id", MAX_ID_CHARS, &mut e);
    let head_sha = sha(&doc, "head_sha", true, &mut e);
    let gates = doc
        .required("gates", &mut e)
        .and_then(|g| parse_gates(g, &mut e));
    let (runs, runs_total) = doc
        .get("check_runs")
        .map(|v| parse_runs(v, &mut e))
        .unwrap_or_default();
    let (statuses, statuses_sha) = doc
        .get("statuses")
        .map(|v| parse_statuses(v, &mut e))
        .unwrap_or_default();
    match (head_sha, gates) {
        (Some(head_sha), Some(gates)) if e.is_empty() => Ok(ChecksRequest {
            patch_id,
            head_sha,
            gates,
            runs,
            runs_total,
            statuses,
            statuses_sha,
        }),
        _ => Err(e),
    }
}

fn parse_gates(v: &Value, e: &mut Errors) -> Option<[Vec<String>; 3]> {
    let words = Gate::ALL.map(Gate::field);
    let obj = object(v, "/gates", "`gates`", &words, e)?;
    let mut out: [Vec<String>; 3] = Default::default();
    let mut ok = true;
    for (slot, gate) in out.iter_mut().zip(Gate::ALL) {
        let key = gate.field();
        let Some(list) = obj.required(key, e) else {
            ok = false;
            continue;
        };
        let at = obj.pointer(key);
        // A set: a hostile list of names stays linear.
        let mut seen: HashSet<String> = HashSet::new();
        let names = fields::array(list, &at, &format!("`{key}`"), e, |x, p, e| {
            let name = fields::string(x, &p, "a check name", MAX_TEXT, e)?;
            if name.is_empty() {
                e.push(p, "a check name must not be empty");
                return None;
            }
            if !seen.insert(name.clone()) {
                e.push(
                    p,
                    format!("the check {name:?} is listed twice in this gate"),
                );
                return None;
            }
            Some(name)
        });
        match names {
            Some(names) if !names.is_empty() => *slot = names,
            Some(_) => {
                if list.as_array().is_some_and(Vec::is_empty) {
                    e.push(
                        at,
                        format!("`{key}` must name at least one check (a check run's `name` or a status's `context`)"),
                    );
                }
                ok = false;
            }
            None => ok = false,
        }
    }
    ok.then_some(out)
}

fn parse_runs(v: &Value, e: &mut Errors) -> (Vec<CheckRun>, Option<u64>) {
    let Some(doc) = object(
        v,
        "/check_runs",
        "`check_runs` (GitHub's list-check-runs response)",
        &["total_count", "check_runs"],
        e,
    ) else {
        return Default::default();
    };
    let total = doc.opt_uint("total_count", MAX_FORGE_INT, e);
    let runs = doc
        .required("check_runs", e)
        .and_then(|list| {
            fields::array(
                list,
                &doc.pointer("check_runs"),
                "`check_runs`",
                e,
                |x, at, e| {
                    let run = object(
                        x,
                        &at,
                        "a check run",
                        &["id", "name", "head_sha", "status", "conclusion", "html_url"],
                        e,
                    )?;
                    let id = run
                        .required("id", e)
                        .and_then(|v| fields::uint(v, &run.pointer("id"), "id", MAX_FORGE_INT, e));
                    let name = run.req_string("name", MAX_TEXT, e);
                    let head_sha = run.req_string("head_sha", 64, e);
                    let status = run.req_string("status", MAX_TEXT, e);
                    let conclusion = nullable_string(&run, "conclusion", e);
                    let url = nullable_string(&run, "html_url", e);
                    Some(CheckRun {
                        id: id?,
                        name: name?,
                        head_sha: head_sha?,
                        status: status?,
                        conclusion,
                        url,
                    })
                },
            )
        })
        .unwrap_or_default();
    (runs, total)
}

fn parse_statuses(v: &Value, e: &mut Errors) -> (Vec<CommitStatus>, Option<String>) {
    let Some(doc) = object(
        v,
        "/statuses",
        "`statuses` (GitHub's combined-status response)",
        &["sha", "statuses"],
        e,
    ) else {
        return Default::default();
    };
    let commit = sha(&doc, "sha", false, e);
    let statuses = doc
        .required("statuses", e)
        .and_then(|list| {
            fields::array(
                list,
                &doc.pointer("statuses"),
                "`statuses`",
                e,
                |x, at, e| {
                    let s = object(
                        x,
                        &at,
                        "a status",
                        &["context", "state", "updated_at", "target_url"],
                        e,
                    )?;
                    let context = s.req_string("context", MAX_TEXT, e);
                    let state = s.req_string("state", MAX_TEXT, e);
                    let updated_at = nullable_string(&s, "updated_at", e);
                    let url = nullable_string(&s, "target_url", e);
                    Some(CommitStatus {
                        context: context?,
                        state: state?,
                        updated_at,
                        url,
                    })
                },
            )
        })
        .unwrap_or_default();
    (statuses, commit)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verdicts_follow_the_contract() {
        // CONTRACT.md section 9, by hand.
        let completed = [
            ("success", CheckVerdict::Pass),
            ("failure", CheckVerdict::Fail),
            ("neutral", CheckVerdict::Unknown),
            ("skipped", CheckVerdict::Unknown),
            ("cancelled", CheckVerdict::Unknown),
            ("timed_out", CheckVerdict::Unknown),
            ("action_required", CheckVerdict::Unknown),
            ("stale", CheckVerdict::Unknown),
            ("startup_failure", CheckVerdict::Unknown),
        ];
        for (conclusion, want) in completed {
            assert_eq!(
                run_verdict("completed", Some(conclusion)),
                want,
                "{conclusion}"
            );
        }
        for status in ["queued", "in_progress", "waiting", "requested", "pending"] {
            assert_eq!(run_verdict(status, None), CheckVerdict::Pending, "{status}");
        }
        let states = [
            ("success", CheckVerdict::Pass),
            ("failure", CheckVerdict::Fail),
            ("error", CheckVerdict::Unknown),
            ("pending", CheckVerdict::Pending),
        ];
        for (state, want) in states {
            assert_eq!(status_verdict(state), want, "{state}");
        }
        let (p, f, u, n) = (
            Some(CheckVerdict::Pass),
            Some(CheckVerdict::Fail),
            Some(CheckVerdict::Unknown),
            Some(CheckVerdict::Pending),
        );
        assert_eq!(gate_verdict(&[p, None, f]), Verdict::Missing);
        assert_eq!(gate_verdict(&[p, u, f]), Verdict::Fail);
        assert_eq!(gate_verdict(&[p, u, n]), Verdict::Unknown);
        assert_eq!(gate_verdict(&[p, n]), Verdict::Pass);
    }
}
