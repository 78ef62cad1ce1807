#!/usr/bin/env python3
"""A merge bot's last step: ask patchgate, then act on its answer (GitHub, with the `gh` CLI).

    PATCHGATE_SERVER=https://patchgate.example.org PATCHGATE_TOKEN=... \\
        python3 merge_bot.py acme/shop 42 --gates gates.json

It fetches the pull request's head commit, its check runs (every page) and its combined
status with `gh api`, sends them verbatim to `POST /route/checks` with the gates file (which
checks make up each gate), and acts on the status — and only on the status:

    200 MERGE_OK    merge, pinned to the head commit that was judged (--match-head-commit);
                    with --enqueue, add it to the branch's merge queue instead (`gh pr merge
                    --auto`: the queue builds the group and runs the required checks, the
                    gate among them, on it), and say which it did
    425 PENDING     checks still run: wait Retry-After seconds, fetch again (up to --max-wait)
    409 BLOCK       comment why on the pull request; exit 1
    424 ESCALATE    comment what a human must check; exit 2
    423 STOP_QUEUE  the queue is stopped: comment, merge nothing; exit 3
    anything else   not a decision: exit 69, never a merge

One comment per pull request: the bot's comment carries a hidden marker, and a later answer
edits the bot's own earlier comment (found by the marker, among the comments the bot's user
wrote) instead of adding another.

A skipped job is never read as a pass, whatever branch protection says. Python 3 standard
library only, plus `gh` (authenticated, e.g. GH_TOKEN in a workflow).
"""

import argparse
import json
import os
import subprocess
import sys
import time
import urllib.error
import urllib.request


def gh(*args):
    out = subprocess.run(["gh", *args], check=True, capture_output=True, text=True)
    return out.stdout


def json_stream(text):
    """`gh api --paginate` prints one JSON document per page, back to back."""
    decoder, i, docs = json.JSONDecoder(), 0, []
    while True:
        while i < len(text) and text[i].isspace():
            i += 1
        if i == len(text):
            return docs
        doc, i = decoder.raw_decode(text, i)
        docs.append(doc)


def fetch(repo, head):
    pages = json_stream(gh("api", "--paginate", f"repos/{repo}/commits/{head}/check-runs?per_page=100"))
    runs = [r for page in pages for r in page.get("check_runs", [])]
    total = max((page.get("total_count", 0) for page in pages), default=len(runs))
    statuses = json.loads(gh("api", f"repos/{repo}/commits/{head}/status?per_page=100"))
    return {"total_count": total, "check_runs": runs}, statuses


def ask(server, token, body):
    req = urllib.request.Request(
        server.rstrip("/") + "/route/checks",
        data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json", "Accept": "application/json"},
        method="POST",
    )
    if token:
        req.add_header("Authorization", f"Bearer {token}")
    try:
        with urllib.request.urlopen(req, timeout=60) as res:
            return res.status, dict(res.headers), res.read()
    except urllib.error.HTTPError as e:
        return e.code, dict(e.headers), e.read()
    except OSError as e:  # unreachable, refused, timed out: not a decision
        return None, {}, str(e).encode()


MARKER = "<!-- patchgate merge bot -->"


def why(answer):
    lines = [f"**patchgate: {answer['disposition']}** (`{answer.get('attribution')}`, exit {answer['exit_code']})", ""]
    for gate, read in answer.get("gates", {}).items():
        checks = ", ".join(f"`{c['name']}` {c['conclusion']} → {c['verdict']}" for c in read["checks"])
        absent = "".join(f", `{n}` absent" for n in read["absent"])
        lines.append(f"- `{gate}`: **{read['verdict']}** — {checks}{absent}")
    return "\n".join(lines + ["", MARKER])


def me():
    """The login the bot's token acts as (an Actions token cannot ask: github-actions[bot])."""
    try:
        return gh("api", "user", "-q", ".login").strip() or "github-actions[bot]"
    except subprocess.CalledProcessError:
        return "github-actions[bot]"


def comment(repo, pr, body):
    """Edits the bot's own earlier comment (its marker, its author), else adds one."""
    pages = json_stream(gh("api", "--paginate", f"repos/{repo}/issues/{pr}/comments?per_page=100"))
    login = me()
    mine = [c for page in pages for c in page
            if MARKER in (c.get("body") or "") and (c.get("user") or {}).get("login") == login]
    if mine:
        last = max(mine, key=lambda c: c["id"])
        gh("api", "-X", "PATCH", f"repos/{repo}/issues/comments/{last['id']}", "-f", f"body={body}")
    else:
        gh("pr", "comment", pr, "-R", repo, "--body", body)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("repo", help="OWNER/REPO")
    ap.add_argument("pr", help="the pull request number")
    ap.add_argument("--gates", required=True, help="JSON: {property_check: [...], fixture_check: [...], flaky_freeze: [...]}")
    ap.add_argument("--server", default=os.environ.get("PATCHGATE_SERVER"))
    ap.add_argument("--max-wait", type=float, default=3600, help="seconds to wait for pending checks in all")
    ap.add_argument("--poll-cap", type=float, default=300, help="longest single wait, whatever Retry-After says")
    ap.add_argument("--merge-method", default="squash", choices=["merge", "squash", "rebase"])
    ap.add_argument("--enqueue", action="store_true",
                    help="the base branch has a merge queue: enqueue instead of merging (the queue's own "
                         "method applies); the gate runs again on the group, as a required check")
    args = ap.parse_args()
    if not args.server:
        sys.exit("set PATCHGATE_SERVER or --server")
    with open(args.gates) as f:
        gates = json.load(f)
    head = gh("pr", "view", args.pr, "-R", args.repo, "--json", "headRefOid", "-q", ".headRefOid").strip()
    deadline = time.monotonic() + args.max_wait
    while True:
        check_runs, statuses = fetch(args.repo, head)
        body = {"patch_id": f"{args.repo}#{args.pr}", "head_sha": head, "gates": gates,
                "check_runs": check_runs, "statuses": statuses}
        status, headers, raw = ask(args.server, os.environ.get("PATCHGATE_TOKEN"), body)
        try:
            answer = json.loads(raw)
        except ValueError:
            answer = {}
        print(f"patchgate answered {status}: {answer.get('disposition', raw[:200])}", file=sys.stderr)
        if status == 425:
            wait = float(headers.get("Retry-After") or headers.get("retry-after") or 30)
            if time.monotonic() + min(wait, args.poll_cap) > deadline:
                print("still pending at --max-wait; not merging", file=sys.stderr)
                return 75
            time.sleep(min(wait, args.poll_cap))
            continue
        if status == 200 and answer.get("exit_code") == 0:
            if args.enqueue:
                # On a queue-protected branch `--auto` adds the pull request to the queue; a
                # merge method is the queue's, not ours.
                gh("pr", "merge", args.pr, "-R", args.repo, "--auto", "--match-head-commit", head)
                print(f"enqueued {args.repo}#{args.pr} at {head} in the merge queue", file=sys.stderr)
            else:
                gh("pr", "merge", args.pr, "-R", args.repo, f"--{args.merge_method}", "--match-head-commit", head)
                print(f"merged {args.repo}#{args.pr} at {head}", file=sys.stderr)
            return 0
        if status in (409, 423, 424) and answer.get("exit_code") in (1, 2, 3):
            comment(args.repo, args.pr, why(answer))
            return answer["exit_code"]
        print(f"not a decision ({status}); not merging", file=sys.stderr)
        return 69


if __name__ == "__main__":
    sys.exit(main())
