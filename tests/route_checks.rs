//! `POST /route/checks` (CONTRACT.md section 9) over a real socket and through the CLI, with
//! GitHub documents shaped as the API returns them: complete check-run objects (`app`,
//! `output`, `pull_requests`, `check_suite`...) and combined-status responses (with their
//! `repository`). Every expectation is written by hand from the contract.

mod common;

use common::{TestServer, patchgate};
use patchgate::core::checks::ChecksOutcome;
use serde_json::{Value, json};

const HEAD: &str = "ce587453ced02b1526dfb4cb910479d431683101";
const OLD: &str = "3dca65fa3e8d4b3da3f3d056c59aee1c50f41390";

/// A check run as `GET /repos/{owner}/{repo}/commits/{ref}/check-runs` lists it.
fn run(id: u64, name: &str, sha: &str, status: &str, conclusion: Option<&str>) -> Value {
    let done = status == "completed";
    json!({
        "id": id,
        "name": name,
        "node_id": format!("CR_kwDOAAAB{id:08}"),
        "head_sha": sha,
        "external_id": "",
        "url": format!("https://api.github.com/repos/acme/shop/check-runs/{id}"),
        "html_url": format!("https://github.com/acme/shop/actions/runs/9{id}/job/{id}"),
        "details_url": format!("https://github.com/acme/shop/actions/runs/9{id}/job/{id}"),
        "status": status,
        "conclusion": conclusion,
        "started_at": "2026-11-29T10:00:00Z",
        "completed_at": if done { json!("2026-11-29T10:04:12Z") } else { Value::Null },
        "output": {
            "title": if done { json!(format!("{name}: {}", conclusion.unwrap_or("none"))) } else { Value::Null },
            "summary": if done { json!("Process completed.") } else { Value::Null },
            "text": Value::Null,
            "annotations_count": 0,
            "annotations_url": format!("https://api.github.com/repos/acme/shop/check-runs/{id}/annotations")
        },
        "check_suite": {"id": 21_000_000 + id},
        "app": {
            "id": 15368,
            "client_id": "Iv1.05c79e9ad1f6bdfa",
            "slug": "github-actions",
            "node_id": "MDM6QXBwMTUzNjg=",
            "owner": {
                "login": "github", "id": 9919, "node_id": "MDEyOk9yZ2FuaXphdGlvbjk5MTk=",
                "avatar_url": "https://avatars.githubusercontent.com/u/9919?v=4", "gravatar_id": "",
                "url": "https://api.github.com/users/github", "html_url": "https://github.com/github",
                "followers_url": "https://api.github.com/users/github/followers",
                "repos_url": "https://api.github.com/users/github/repos",
                "events_url": "https://api.github.com/users/github/events{/privacy}",
                "type": "Organization", "user_view_type": "public", "site_admin": false
            },
            "name": "GitHub Actions",
            "description": "Automate your workflow from idea to production",
            "external_url": "https://help.github.com/en/actions",
            "html_url": "https://github.com/apps/github-actions",
            "created_at": "2018-07-30T09:30:17Z",
            "updated_at": "2024-04-10T20:33:16Z",
            "permissions": {"actions": "write", "checks": "write", "contents": "write", "metadata": "read", "pull_requests": "write", "statuses": "write"},
            "events": ["branch_protection_rule", "check_run", "check_suite", "create", "delete", "pull_request", "push", "status"]
        },
        "pull_requests": [{
            "url": "https://api.github.com/repos/acme/shop/pulls/42",
            "id": 1_934_000_042u64,
            "number": 42,
            "head": {"ref": "fix-rounding", "sha": sha, "repo": {"id": 526, "url": "https://api.github.com/repos/acme/shop", "name": "shop"}},
            "base": {"ref": "main", "sha": "e7fdf7640066d71ad16a86fbcbb9c6a10a18af4f", "repo": {"id": 526, "url": "https://api.github.com/repos/acme/shop", "name": "shop"}}
        }]
    })
}

fn runs(list: Vec<Value>) -> Value {
    json!({"total_count": list.len(), "check_runs": list})
}

/// A status as the combined-status response lists it.
fn status(id: u64, context: &str, state: &str, updated_at: &str) -> Value {
    json!({
        "url": format!("https://api.github.com/repos/acme/shop/statuses/{HEAD}"),
        "avatar_url": "https://avatars.githubusercontent.com/u/1000?v=4",
        "id": id,
        "node_id": format!("SC_kwDOAAAB{id:08}"),
        "state": state,
        "description": format!("{context}: {state}"),
        "target_url": format!("https://ci.example.org/job/{id}"),
        "context": context,
        "created_at": "2026-11-29T09:58:00Z",
        "updated_at": updated_at
    })
}

/// `GET /repos/{owner}/{repo}/commits/{ref}/status`.
fn combined(sha: &str, list: Vec<Value>) -> Value {
    json!({
        "state": "pending",
        "statuses": list,
        "sha": sha,
        "total_count": list.len(),
        "repository": {
            "id": 526, "node_id": "MDEwOlJlcG9zaXRvcnk1MjY=", "name": "shop", "full_name": "acme/shop",
            "private": false,
            "owner": {"login": "acme", "id": 1000, "type": "Organization", "site_admin": false,
                      "url": "https://api.github.com/users/acme", "html_url": "https://github.com/acme"},
            "html_url": "https://github.com/acme/shop", "description": "A small shop", "fork": false,
            "url": "https://api.github.com/repos/acme/shop"
        },
        "commit_url": format!("https://api.github.com/repos/acme/shop/commits/{sha}"),
        "url": format!("https://api.github.com/repos/acme/shop/commits/{sha}/status")
    })
}

fn gates() -> Value {
    json!({
        "property_check": ["proptest"],
        "fixture_check": ["fixtures", "unit (3.12)"],
        "flaky_freeze": ["quarantine"]
    })
}

fn ok(id: u64, name: &str) -> Value {
    run(id, name, HEAD, "completed", Some("success"))
}

fn all_green() -> Vec<Value> {
    vec![
        ok(1, "proptest"),
        ok(2, "fixtures"),
        ok(3, "unit (3.12)"),
        ok(4, "quarantine"),
    ]
}

fn doc(check_runs: Option<Value>, statuses: Option<Value>) -> Value {
    let mut d = json!({"patch_id": "pr-42", "head_sha": HEAD, "gates": gates()});
    if let Some(r) = check_runs {
        d["check_runs"] = r;
    }
    if let Some(s) = statuses {
        d["statuses"] = s;
    }
    d
}

fn with_run(replace: &str, new: Value) -> Value {
    let list = all_green()
        .into_iter()
        .map(|r| if r["name"] == replace { new.clone() } else { r })
        .collect();
    doc(Some(runs(list)), None)
}

/// (name, document, status, disposition, attribution or None, verdicts or None, pending).
type Row = (
    &'static str,
    Value,
    u16,
    &'static str,
    Option<&'static str>,
    Option<[&'static str; 3]>,
    Vec<&'static str>,
);

fn rows() -> Vec<Row> {
    let mut rows: Vec<Row> = vec![
        (
            "all green",
            doc(Some(runs(all_green())), None),
            200,
            "MERGE_OK",
            Some("all-gates-held"),
            Some(["pass", "pass", "pass"]),
            vec![],
        ),
        (
            "a fixture job fails",
            with_run(
                "fixtures",
                run(2, "fixtures", HEAD, "completed", Some("failure")),
            ),
            409,
            "BLOCK",
            Some("concrete-behavior"),
            Some(["pass", "fail", "pass"]),
            vec![],
        ),
        (
            "the property job fails",
            with_run(
                "proptest",
                run(1, "proptest", HEAD, "completed", Some("failure")),
            ),
            409,
            "BLOCK",
            Some("invariant-or-over-specified-property"),
            Some(["fail", "pass", "pass"]),
            vec![],
        ),
        (
            "a check nobody reported",
            doc(Some(runs(all_green().into_iter().take(3).collect())), None),
            424,
            "ESCALATE",
            Some("evidence-gap"),
            Some(["pass", "pass", "missing"]),
            vec![],
        ),
        (
            "still running, nothing failed",
            with_run(
                "unit (3.12)",
                run(3, "unit (3.12)", HEAD, "in_progress", None),
            ),
            425,
            "PENDING",
            None,
            None,
            vec!["unit (3.12)"],
        ),
        (
            "queued",
            with_run("quarantine", run(4, "quarantine", HEAD, "queued", None)),
            425,
            "PENDING",
            None,
            None,
            vec!["quarantine"],
        ),
        (
            "a failure is decided while another check runs",
            doc(
                Some(runs(vec![
                    run(1, "proptest", HEAD, "completed", Some("failure")),
                    ok(2, "fixtures"),
                    run(3, "unit (3.12)", HEAD, "in_progress", None),
                    ok(4, "quarantine"),
                ])),
                None,
            ),
            409,
            "BLOCK",
            Some("invariant-or-over-specified-property"),
            Some(["fail", "unknown", "pass"]),
            vec!["unit (3.12)"],
        ),
        (
            "a failure waits while a gate is missing",
            doc(
                Some(runs(vec![
                    run(1, "proptest", HEAD, "completed", Some("failure")),
                    run(3, "unit (3.12)", HEAD, "in_progress", None),
                    ok(4, "quarantine"),
                ])),
                None,
            ),
            425,
            "PENDING",
            None,
            None,
            vec!["unit (3.12)"],
        ),
        (
            "a re-run that passed: the highest id counts",
            doc(
                Some(runs(vec![
                    ok(1, "proptest"),
                    run(20, "fixtures", HEAD, "completed", Some("success")),
                    run(2, "fixtures", HEAD, "completed", Some("failure")),
                    ok(3, "unit (3.12)"),
                    ok(4, "quarantine"),
                ])),
                None,
            ),
            200,
            "MERGE_OK",
            Some("all-gates-held"),
            Some(["pass", "pass", "pass"]),
            vec![],
        ),
        (
            "a re-run that failed",
            doc(
                Some(runs(vec![
                    ok(1, "proptest"),
                    ok(2, "fixtures"),
                    run(21, "fixtures", HEAD, "completed", Some("failure")),
                    ok(3, "unit (3.12)"),
                    ok(4, "quarantine"),
                ])),
                None,
            ),
            409,
            "BLOCK",
            Some("concrete-behavior"),
            Some(["pass", "fail", "pass"]),
            vec![],
        ),
        (
            "a re-run still running",
            doc(
                Some(runs(vec![
                    ok(1, "proptest"),
                    ok(2, "fixtures"),
                    run(22, "fixtures", HEAD, "in_progress", None),
                    ok(3, "unit (3.12)"),
                    ok(4, "quarantine"),
                ])),
                None,
            ),
            425,
            "PENDING",
            None,
            None,
            vec!["fixtures"],
        ),
        (
            "a green run for an older commit is stale",
            doc(
                Some(runs(vec![
                    ok(1, "proptest"),
                    run(90, "fixtures", OLD, "completed", Some("success")),
                    ok(3, "unit (3.12)"),
                    ok(4, "quarantine"),
                ])),
                None,
            ),
            424,
            "ESCALATE",
            Some("evidence-gap"),
            Some(["pass", "missing", "pass"]),
            vec![],
        ),
        (
            "a status-only CI",
            doc(
                None,
                Some(combined(
                    HEAD,
                    vec![
                        status(1, "proptest", "success", "2026-11-29T10:01:00Z"),
                        status(2, "fixtures", "success", "2026-11-29T10:02:00Z"),
                        status(3, "unit (3.12)", "success", "2026-11-29T10:03:00Z"),
                        status(4, "quarantine", "success", "2026-11-29T10:04:00Z"),
                    ],
                )),
            ),
            200,
            "MERGE_OK",
            Some("all-gates-held"),
            Some(["pass", "pass", "pass"]),
            vec![],
        ),
        (
            "a status in error is no verdict",
            doc(
                None,
                Some(combined(
                    HEAD,
                    vec![
                        status(1, "proptest", "success", "2026-11-29T10:01:00Z"),
                        status(2, "fixtures", "error", "2026-11-29T10:02:00Z"),
                        status(3, "unit (3.12)", "success", "2026-11-29T10:03:00Z"),
                        status(4, "quarantine", "success", "2026-11-29T10:04:00Z"),
                    ],
                )),
            ),
            424,
            "ESCALATE",
            Some("inadmissible-evidence"),
            Some(["pass", "unknown", "pass"]),
            vec![],
        ),
        (
            "statuses: the latest updated_at counts",
            doc(
                None,
                Some(combined(
                    HEAD,
                    vec![
                        status(1, "proptest", "success", "2026-11-29T10:01:00Z"),
                        status(2, "fixtures", "failure", "2026-11-29T10:02:00Z"),
                        status(5, "fixtures", "success", "2026-11-29T10:09:00Z"),
                        status(3, "unit (3.12)", "success", "2026-11-29T10:03:00Z"),
                        status(4, "quarantine", "success", "2026-11-29T10:04:00Z"),
                    ],
                )),
            ),
            200,
            "MERGE_OK",
            Some("all-gates-held"),
            Some(["pass", "pass", "pass"]),
            vec![],
        ),
        (
            "statuses: of equal times the first listed counts",
            doc(
                None,
                Some(combined(
                    HEAD,
                    vec![
                        status(1, "proptest", "success", "2026-11-29T10:01:00Z"),
                        status(6, "fixtures", "failure", "2026-11-29T10:02:00Z"),
                        status(2, "fixtures", "success", "2026-11-29T10:02:00Z"),
                        status(3, "unit (3.12)", "success", "2026-11-29T10:03:00Z"),
                        status(4, "quarantine", "success", "2026-11-29T10:04:00Z"),
                    ],
                )),
            ),
            409,
            "BLOCK",
            Some("concrete-behavior"),
            Some(["pass", "fail", "pass"]),
            vec![],
        ),
        (
            "a combined status for an older commit is stale",
            doc(
                Some(runs(vec![
                    ok(1, "proptest"),
                    ok(3, "unit (3.12)"),
                    ok(4, "quarantine"),
                ])),
                Some(combined(
                    OLD,
                    vec![status(2, "fixtures", "success", "2026-11-29T10:02:00Z")],
                )),
            ),
            424,
            "ESCALATE",
            Some("evidence-gap"),
            Some(["pass", "missing", "pass"]),
            vec![],
        ),
        (
            "a check in both lists: the failing report counts",
            doc(
                Some(runs(all_green())),
                Some(combined(
                    HEAD,
                    vec![status(9, "fixtures", "failure", "2026-11-29T10:02:00Z")],
                )),
            ),
            409,
            "BLOCK",
            Some("concrete-behavior"),
            Some(["pass", "fail", "pass"]),
            vec![],
        ),
        (
            "a check in both lists: a pending report waits",
            doc(
                Some(runs(all_green())),
                Some(combined(
                    HEAD,
                    vec![status(9, "quarantine", "pending", "2026-11-29T10:02:00Z")],
                )),
            ),
            425,
            "PENDING",
            None,
            None,
            vec!["quarantine"],
        ),
    ];
    // Every completed conclusion that is not success or failure is no verdict: never a pass.
    for conclusion in [
        "neutral",
        "skipped",
        "cancelled",
        "timed_out",
        "action_required",
        "stale",
        "startup_failure",
    ] {
        rows.push((
            conclusion,
            with_run(
                "quarantine",
                run(4, "quarantine", HEAD, "completed", Some(conclusion)),
            ),
            424,
            "ESCALATE",
            Some("inadmissible-evidence"),
            Some(["pass", "pass", "unknown"]),
            vec![],
        ));
    }
    rows
}

fn check(row: &Row, status: u16, answer: &Value, retry_after: Option<&str>) {
    let (name, _, want_status, disposition, attribution, verdicts, pending) = row;
    assert_eq!(status, *want_status, "{name}: {answer}");
    assert_eq!(answer["disposition"], *disposition, "{name}");
    assert_eq!(answer["head_sha"], HEAD, "{name}");
    assert_eq!(answer["patch_id"], "pr-42", "{name}");
    assert_eq!(answer["pending"], json!(pending), "{name}");
    assert_eq!(answer["pending_total"], pending.len(), "{name}");
    match attribution {
        Some(a) => {
            assert_eq!(answer["attribution"], *a, "{name}");
            assert_eq!(
                answer["exit_code"],
                common::exit_of_status(*want_status),
                "{name}"
            );
        }
        None => {
            assert!(answer.get("attribution").is_none(), "{name}");
            assert_eq!(answer["exit_code"], 75, "{name}");
        }
    }
    match verdicts {
        Some([p, f, z]) => assert_eq!(
            answer["verdicts"],
            json!({"property_check": p, "fixture_check": f, "flaky_freeze": z}),
            "{name}"
        ),
        None => assert!(answer.get("verdicts").is_none(), "{name}"),
    }
    if let Some(r) = retry_after {
        assert_eq!(*want_status, 425, "{name}: Retry-After only while PENDING");
        assert!(r.parse::<u32>().is_ok_and(|s| s > 0), "{name}: {r}");
    } else {
        assert_ne!(*want_status, 425, "{name}: PENDING needs Retry-After");
    }
}

#[tokio::test]
async fn every_row_over_a_real_socket() {
    let server = TestServer::start();
    let client = common::client();
    for row in rows() {
        let res = client
            .post(server.url("/route/checks"))
            .json(&row.1)
            .send()
            .await
            .unwrap();
        let status = res.status().as_u16();
        let retry = res
            .headers()
            .get("retry-after")
            .map(|v| v.to_str().unwrap().to_owned());
        let answer: Value = res.json().await.unwrap();
        check(&row, status, &answer, retry.as_deref());
    }
}

/// The same rows through the pure core alone: the decision, its status and `Retry-After` are
/// the core's.
#[test]
fn every_row_in_the_core() {
    use patchgate::core::decision::{Decision, Defaults};
    for row in rows() {
        let body = serde_json::to_vec(&row.1).unwrap();
        let request = ChecksOutcome::parse(&body).unwrap_or_else(|p| panic!("{}: {p:?}", row.0));
        let outcome = ChecksOutcome::decide(&request, &Defaults::default());
        let answer = serde_json::to_value(outcome.answer(&request, "d-1".into())).unwrap();
        let status = match outcome.exit_code() {
            75 => 425,
            code => common::status_of_exit(code),
        };
        let retry = outcome.retry_after().map(|s| s.to_string());
        check(&row, status, &answer, retry.as_deref());
    }
}

/// Writes a row's documents as the files a merge bot would have fetched.
fn files(dir: &std::path::Path, row: &Row) -> Vec<String> {
    let mut args = vec![];
    let gates = dir.join("gates.json");
    std::fs::write(&gates, row.1["gates"].to_string()).unwrap();
    args.extend(["--gates".to_owned(), gates.display().to_string()]);
    for (key, flag) in [("check_runs", "--checks"), ("statuses", "--statuses")] {
        if let Some(v) = row.1.get(key) {
            let p = dir.join(format!("{key}.json"));
            std::fs::write(&p, v.to_string()).unwrap();
            args.extend([flag.to_owned(), p.display().to_string()]);
        }
    }
    args.extend([
        "--head-sha".to_owned(),
        HEAD.to_owned(),
        "--patch-id".to_owned(),
        "pr-42".to_owned(),
    ]);
    args
}

#[test]
fn every_row_through_the_cli_locally_and_against_a_server() {
    let server = TestServer::start();
    for row in rows() {
        let dir = tempfile::tempdir().unwrap();
        let args = files(dir.path(), &row);
        let local = patchgate()
            .arg("route")
            .args(&args)
            .arg("--json")
            .output()
            .unwrap();
        let remote = patchgate()
            .arg("route")
            .args(&args)
            .args(["--json", "--server", &server.url("")])
            .output()
            .unwrap();
        for out in [&local, &remote] {
            let answer: Value = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
            let exit = out.status.code().unwrap();
            let status = if exit == 75 {
                425
            } else {
                common::status_of_exit(exit as u8)
            };
            let retry = (status == 425).then_some("1");
            check(&row, status, &answer, retry);
        }
        let strip = |out: &std::process::Output| {
            let mut v: Value = serde_json::from_slice(&out.stdout).unwrap();
            v.as_object_mut().unwrap().remove("decision_id");
            v
        };
        assert_eq!(strip(&local), strip(&remote), "{}", row.0);
        // The one line.
        let line = patchgate().arg("route").args(&args).output().unwrap();
        let want = match row.4 {
            Some(a) => format!("{} attribution={a}\n", row.3),
            None => format!("PENDING pending={}\n", row.6.len()),
        };
        assert_eq!(String::from_utf8_lossy(&line.stdout), want, "{}", row.0);
    }
}

#[tokio::test]
async fn the_skipped_job_that_branch_protection_counts_as_passing() {
    // Jobs A → B → C: B fails, so C is skipped by its `needs:` condition. Branch protection
    // requiring C counts the skip as a pass and auto-merge merges; patchgate does not.
    let server = TestServer::start();
    let chain = runs(vec![
        run(101, "build", HEAD, "completed", Some("success")),
        run(102, "integration", HEAD, "completed", Some("failure")),
        run(103, "release-check", HEAD, "completed", Some("skipped")),
        ok(104, "proptest"),
        ok(105, "quarantine"),
    ]);
    let only_c = json!({"head_sha": HEAD, "check_runs": chain, "gates": {
        "property_check": ["proptest"], "fixture_check": ["release-check"], "flaky_freeze": ["quarantine"]}});
    let (status, answer) = common::post_json(&server, "/route/checks", &only_c).await;
    assert_eq!(
        (status, &answer["disposition"]),
        (424, &json!("ESCALATE")),
        "{answer}"
    );
    let read = &answer["gates"]["fixture_check"]["checks"][0];
    assert_eq!(
        (&read["conclusion"], &read["verdict"], &read["id"]),
        (&json!("skipped"), &json!("unknown"), &json!(103))
    );
    assert_eq!(
        read["url"],
        "https://github.com/acme/shop/actions/runs/9103/job/103"
    );
    let b_and_c = json!({"head_sha": HEAD, "check_runs": chain, "gates": {
        "property_check": ["proptest"], "fixture_check": ["integration", "release-check"], "flaky_freeze": ["quarantine"]}});
    let (status, answer) = common::post_json(&server, "/route/checks", &b_and_c).await;
    assert_eq!(
        (status, &answer["attribution"]),
        (409, &json!("concrete-behavior"))
    );
}

#[tokio::test]
async fn a_page_of_5000_runs() {
    let server = TestServer::start();
    let mut list: Vec<Value> = (0..3996u64)
        .map(|i| {
            run(
                10_000 + i,
                &format!("matrix ({i})"),
                HEAD,
                "completed",
                Some("success"),
            )
        })
        .collect();
    // A thousand failed runs of the gates' own names for older commits, with higher ids.
    let names = ["proptest", "fixtures", "unit (3.12)", "quarantine"];
    list.extend((0..1000u64).map(|i| {
        run(
            20_000 + i,
            names[(i % 4) as usize],
            OLD,
            "completed",
            Some("failure"),
        )
    }));
    list.extend(all_green());
    assert_eq!(list.len(), 5000);
    let body = doc(Some(runs(list)), None);
    let bytes = serde_json::to_vec(&body).unwrap();
    assert!(bytes.len() > 8 * 1024 * 1024, "{} bytes", bytes.len());
    let (status, answer) = common::post(&server, "/route/checks", "application/json", bytes).await;
    assert_eq!(status, 200, "{answer}");
    assert_eq!(answer["disposition"], "MERGE_OK");
    assert_eq!(answer["ignored"]["superseded"], 0);
    assert_eq!(answer["ignored"]["stale"], 1000);
    // Each gate lists only its own checks.
    assert_eq!(
        answer["gates"]["fixture_check"]["checks"]
            .as_array()
            .unwrap()
            .len(),
        2
    );
}

#[tokio::test]
async fn counts_what_was_not_read() {
    let server = TestServer::start();
    let mut list = all_green();
    list.push(run(90, "fixtures", OLD, "completed", Some("failure")));
    list.push(run(0, "proptest", HEAD, "completed", Some("failure")));
    let mut page = runs(list);
    page["total_count"] = json!(250);
    let (status, answer) =
        common::post_json(&server, "/route/checks", &doc(Some(page), None)).await;
    assert_eq!(status, 200, "{answer}");
    assert_eq!(
        answer["ignored"],
        json!({"stale": 1, "superseded": 1, "unsent_check_runs": 244})
    );
}

#[tokio::test]
async fn invalid_documents_name_the_field() {
    let server = TestServer::start();
    let mut bad_id = doc(Some(runs(all_green())), None);
    bad_id["check_runs"]["check_runs"][0]["id"] = json!("one");
    let mut no_name = doc(Some(runs(all_green())), None);
    no_name["check_runs"]["check_runs"][1]
        .as_object_mut()
        .unwrap()
        .remove("name");
    let mut empty_gate = doc(Some(runs(all_green())), None);
    empty_gate["gates"]["flaky_freeze"] = json!([]);
    let mut missing_gate = doc(Some(runs(all_green())), None);
    missing_gate["gates"]
        .as_object_mut()
        .unwrap()
        .remove("fixture_check");
    let mut extra_gate = doc(Some(runs(all_green())), None);
    extra_gate["gates"]["lint"] = json!(["ruff"]);
    let mut twice = doc(Some(runs(all_green())), None);
    twice["gates"]["fixture_check"] = json!(["fixtures", "fixtures"]);
    let mut sha = doc(Some(runs(all_green())), None);
    sha["head_sha"] = json!("main");
    let mut unknown = doc(Some(runs(all_green())), None);
    unknown["checks"] = json!([]);
    let cases = [
        (bad_id, "/check_runs/check_runs/0/id"),
        (no_name, "/check_runs/check_runs/1/name"),
        (empty_gate, "/gates/flaky_freeze"),
        (missing_gate, "/gates/fixture_check"),
        (extra_gate, "/gates/lint"),
        (twice, "/gates/fixture_check/1"),
        (sha, "/head_sha"),
        (unknown, "/checks"),
    ];
    for (body, pointer) in cases {
        let (status, problem) = common::post_json(&server, "/route/checks", &body).await;
        assert_eq!(status, 422, "{pointer}: {problem}");
        let pointers: Vec<&str> = problem["errors"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e["pointer"].as_str().unwrap())
            .collect();
        assert!(pointers.contains(&pointer), "{pointer}: {problem}");
    }
    // A known field given twice inside a forge document is refused; an unknown one is not read.
    let text = doc(Some(runs(all_green())), None).to_string();
    let twice_known = text.replacen(
        "\"conclusion\":\"success\"",
        "\"conclusion\":\"failure\",\"conclusion\":\"success\"",
        1,
    );
    let (status, _) = common::post(&server, "/route/checks", "application/json", twice_known).await;
    assert_eq!(status, 422);
    let twice_unknown = text.replacen(
        "\"external_id\":\"\"",
        "\"external_id\":\"\",\"external_id\":\"x\"",
        1,
    );
    let (status, _) =
        common::post(&server, "/route/checks", "application/json", twice_unknown).await;
    assert_eq!(status, 200);
    common::assert_healthy(&server).await;
}

#[tokio::test]
async fn text_answers() {
    let server = TestServer::start();
    let client = common::client();
    let pending = with_run(
        "unit (3.12)",
        run(3, "unit (3.12)", HEAD, "in_progress", None),
    );
    let res = client
        .post(server.url("/route/checks"))
        .header("accept", "text/plain")
        .json(&pending)
        .send()
        .await
        .unwrap();
    assert_eq!(res.status().as_u16(), 425);
    assert!(res.headers().contains_key("retry-after"));
    assert_eq!(res.text().await.unwrap(), "PENDING pending=1\n");
}

/// `deploy/ci/merge_bot.py` against a real server, with a stand-in `gh` that serves recorded
/// documents (one file per fetch, the last one repeated) and records what the bot did.
struct FakeGh {
    dir: tempfile::TempDir,
}

impl FakeGh {
    fn new(check_run_pages: &[Vec<Value>], statuses: Value) -> Self {
        let dir = tempfile::tempdir().unwrap();
        for (i, pages) in check_run_pages.iter().enumerate() {
            // `gh api --paginate` prints the pages back to back.
            let text: String = pages.iter().map(|p| p.to_string() + "\n").collect();
            std::fs::write(dir.path().join(format!("runs-{i}.json")), text).unwrap();
        }
        std::fs::write(dir.path().join("status.json"), statuses.to_string()).unwrap();
        let script = format!(
            r#"#!/usr/bin/env python3
import glob, json, os, sys
d = {dir:?}
a = sys.argv[1:]
open(os.path.join(d, "calls.log"), "a").write(json.dumps(a) + "\n")
if a[:2] == ["pr", "view"]:
    print("{HEAD}")
elif a[:1] == ["api"] and "check-runs" in a[-1]:
    n = len([l for l in open(os.path.join(d, "calls.log")) if "check-runs" in l]) - 1
    pages = sorted(glob.glob(os.path.join(d, "runs-*.json")))
    sys.stdout.write(open(pages[min(n, len(pages) - 1)]).read())
elif a[:1] == ["api"] and a[-1].endswith("/status?per_page=100"):
    sys.stdout.write(open(os.path.join(d, "status.json")).read())
elif a == ["api", "user", "-q", ".login"]:
    print("patchgate-bot")
elif a[:2] == ["api", "--paginate"] and "/issues/42/comments" in a[-1]:
    p = os.path.join(d, "comments.json")
    sys.stdout.write(open(p).read() if os.path.exists(p) else "[]")
elif a[:3] == ["api", "-X", "PATCH"]:
    pass
elif a[:2] in (["pr", "merge"], ["pr", "comment"]):
    pass
else:
    sys.exit("unexpected gh call: " + " ".join(a))
"#,
            dir = dir.path().display().to_string()
        );
        let gh = dir.path().join("gh");
        std::fs::write(&gh, script).unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&gh, std::fs::Permissions::from_mode(0o755)).unwrap();
        std::fs::write(dir.path().join("gates.json"), gates().to_string()).unwrap();
        Self { dir }
    }

    fn bot(&self, server: &str, extra: &[&str]) -> (i32, Vec<String>) {
        let path = format!(
            "{}:{}",
            self.dir.path().display(),
            std::env::var("PATH").unwrap_or_default()
        );
        let script =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("deploy/ci/merge_bot.py");
        let out = std::process::Command::new("python3")
            .arg(script)
            .args(["acme/shop", "42", "--gates"])
            .arg(self.dir.path().join("gates.json"))
            .args(["--server", server, "--poll-cap", "0.2"])
            .args(extra)
            .env("PATH", path)
            .env_remove("PATCHGATE_TOKEN")
            .output()
            .unwrap();
        let calls = std::fs::read_to_string(self.dir.path().join("calls.log"))
            .unwrap_or_default()
            .lines()
            .map(|l| serde_json::from_str::<Vec<String>>(l).unwrap().join(" "))
            .filter(|l| {
                l.starts_with("pr merge")
                    || l.starts_with("pr comment")
                    || l.starts_with("api -X PATCH")
            })
            .collect();
        (out.status.code().unwrap_or(-1), calls)
    }
}

#[test]
fn the_merge_bot_acts_on_the_status_only() {
    let server = TestServer::start();
    let url = server.url("");
    let green = all_green();
    let no_statuses = combined(HEAD, vec![]);

    // Green over two pages: merged, pinned to the judged head.
    let pages = vec![runs(green[..2].to_vec()), runs(green[2..].to_vec())];
    let gh = FakeGh::new(&[pages], no_statuses.clone());
    let (exit, calls) = gh.bot(&url, &[]);
    assert_eq!(exit, 0);
    assert_eq!(
        calls,
        [format!(
            "pr merge 42 -R acme/shop --squash --match-head-commit {HEAD}"
        )]
    );

    // On a queue-protected branch (issue 39): enqueued, pinned to the judged head, with no
    // merge method of ours; the bot says it enqueued.
    let gh = FakeGh::new(
        &[vec![runs(green[..2].to_vec()), runs(green[2..].to_vec())]],
        no_statuses.clone(),
    );
    let (exit, calls) = gh.bot(&url, &["--enqueue"]);
    assert_eq!(exit, 0);
    assert_eq!(
        calls,
        [format!(
            "pr merge 42 -R acme/shop --auto --match-head-commit {HEAD}"
        )]
    );

    // The skipped job: never merged; the comment says why.
    let mut skipped = green.clone();
    skipped[3] = run(4, "quarantine", HEAD, "completed", Some("skipped"));
    let gh = FakeGh::new(&[vec![runs(skipped)]], no_statuses.clone());
    let (exit, calls) = gh.bot(&url, &[]);
    assert_eq!(exit, 2);
    assert_eq!(calls.len(), 1, "{calls:?}");
    assert!(
        calls[0].starts_with("pr comment 42 -R acme/shop --body **patchgate: ESCALATE**"),
        "{calls:?}"
    );
    assert!(
        calls[0].contains("`quarantine` skipped → unknown"),
        "{calls:?}"
    );

    // Pending, then green: waits, fetches again, merges.
    let mut running = green.clone();
    running[1] = run(2, "fixtures", HEAD, "in_progress", None);
    let gh = FakeGh::new(
        &[vec![runs(running.clone())], vec![runs(green.clone())]],
        no_statuses.clone(),
    );
    let (exit, calls) = gh.bot(&url, &[]);
    assert_eq!(exit, 0);
    assert_eq!(calls.len(), 1);
    assert!(calls[0].starts_with("pr merge"));

    // Pending past --max-wait: 75, nothing merged.
    let gh = FakeGh::new(&[vec![runs(running)]], no_statuses.clone());
    let (exit, calls) = gh.bot(&url, &["--max-wait", "0.5"]);
    assert_eq!((exit, calls.len()), (75, 0));

    // A failure: blocked, commented.
    let mut failed = green.clone();
    failed[0] = run(1, "proptest", HEAD, "completed", Some("failure"));
    let gh = FakeGh::new(&[vec![runs(failed.clone())]], no_statuses.clone());
    let (exit, calls) = gh.bot(&url, &[]);
    assert_eq!((exit, calls.len()), (1, 1));
    assert!(calls[0].starts_with("pr comment"), "{calls:?}");

    // One comment per pull request (issue 27): the bot's earlier comment, found by its marker
    // among the comments its own user wrote, is edited; a look-alike by someone else is not.
    let gh = FakeGh::new(&[vec![runs(failed)]], no_statuses.clone());
    let marker = "<!-- patchgate merge bot -->";
    std::fs::write(
        gh.dir.path().join("comments.json"),
        json!([
            {"id": 7, "body": format!("{marker}\nold"), "user": {"login": "someone-else"}},
            {"id": 11, "body": format!("{marker}\nolder"), "user": {"login": "patchgate-bot"}},
            {"id": 12, "body": format!("{marker}\nold"), "user": {"login": "patchgate-bot"}},
            {"id": 13, "body": "thanks!", "user": {"login": "patchgate-bot"}}
        ])
        .to_string(),
    )
    .unwrap();
    let (exit, calls) = gh.bot(&url, &[]);
    assert_eq!((exit, calls.len()), (1, 1), "{calls:?}");
    assert!(
        calls[0].starts_with(
            "api -X PATCH repos/acme/shop/issues/comments/12 -f body=**patchgate: BLOCK**"
        ) && calls[0].ends_with(marker),
        "{calls:?}"
    );

    // No server: 69, never a merge.
    let gh = FakeGh::new(&[vec![runs(green)]], no_statuses);
    let (exit, calls) = gh.bot("http://127.0.0.1:9", &[]);
    assert_eq!((exit, calls.len()), (69, 0));
}

#[test]
fn gates_may_be_toml_and_the_cli_needs_the_head() {
    let dir = tempfile::tempdir().unwrap();
    let gates = dir.path().join("gates.toml");
    std::fs::write(
        &gates,
        "# which checks make up each gate\nproperty_check = [\"proptest\"]\nfixture_check = [\"fixtures\", \"unit (3.12)\"]\nflaky_freeze = [\"quarantine\"]\n",
    )
    .unwrap();
    let checks = dir.path().join("runs.json");
    let mut failed = all_green();
    failed[2] = run(3, "unit (3.12)", HEAD, "completed", Some("failure"));
    std::fs::write(&checks, runs(failed).to_string()).unwrap();
    let out = patchgate()
        .args(["route", "--checks"])
        .arg(&checks)
        .arg("--gates")
        .arg(&gates)
        .args(["--head-sha", HEAD])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "BLOCK attribution=concrete-behavior\n"
    );
    // Without the head there is no telling a stale run from a current one: a usage error.
    let out = patchgate()
        .args(["route", "--checks"])
        .arg(&checks)
        .arg("--gates")
        .arg(&gates)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(64));
    // A gates file with a typo'd gate: 65, the field named.
    std::fs::write(
        &gates,
        "property_check = [\"p\"]\nfixture_chek = [\"f\"]\nflaky_freeze = [\"q\"]\n",
    )
    .unwrap();
    let out = patchgate()
        .args(["route", "--checks"])
        .arg(&checks)
        .arg("--gates")
        .arg(&gates)
        .args(["--head-sha", HEAD])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(65));
    assert!(String::from_utf8_lossy(&out.stderr).contains("/gates/fixture_chek"));
}

#[tokio::test]
async fn long_lists_are_capped_and_counted() {
    // 150 checks in one gate, all still running: the answer names the first 100 and counts
    // the rest, so one request's answer stays small whatever it sent.
    let server = TestServer::start();
    let names: Vec<String> = (0..150).map(|i| format!("shard {i}")).collect();
    let mut list: Vec<Value> = names
        .iter()
        .enumerate()
        .map(|(i, n)| run(100 + i as u64, n, HEAD, "in_progress", None))
        .collect();
    list.extend([ok(1, "proptest"), ok(4, "quarantine")]);
    let body = json!({"head_sha": HEAD, "check_runs": runs(list), "gates": {
        "property_check": ["proptest"], "fixture_check": names, "flaky_freeze": ["quarantine"]}});
    let (status, answer) = common::post_json(&server, "/route/checks", &body).await;
    assert_eq!(status, 425, "{answer}");
    assert_eq!(answer["pending"].as_array().unwrap().len(), 100);
    assert_eq!(answer["pending"][0], "shard 0");
    assert_eq!(answer["pending_total"], 150);
    // Issue 23, bug 4: the decision log counts what the answer counts (it said
    // `"pending":100`, the listed names, before).
    use patchgate::core::decision::{Decision, Defaults, Field};
    let bytes = serde_json::to_vec(&body).unwrap();
    let request = ChecksOutcome::parse(&bytes).unwrap();
    let outcome = ChecksOutcome::decide(&request, &Defaults::default());
    let fields = outcome.log_fields(&request);
    let logged = |name: &str| fields.get(name);
    assert_eq!(logged("pending_total"), Some(Field::U64(150)));
    assert_eq!(logged("pending"), None);
    let gate = &answer["gates"]["fixture_check"];
    assert_eq!(gate["checks"].as_array().unwrap().len(), 100);
    assert_eq!(gate["unlisted"], 50);
    let line = common::client()
        .post(server.url("/route/checks"))
        .header("accept", "text/plain")
        .json(&body)
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert_eq!(line, "PENDING pending=150\n");
}
