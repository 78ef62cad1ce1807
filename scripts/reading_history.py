#!/usr/bin/env python3
"""Replays real projects' honest history through the reading rules (CONTRACT.md 14.3).

For each repository given (a path to a clone or a bare mirror), the most recent non-merge
commits that change code (a `.py` or `.rs` file that is not test-adjacent) are read as
patches against their parent with `patchgate read --base C^ --head C --json`, as the gate's
rule 4 reads a patch: nothing runs. A changed code file the reader could not read (`unread`,
CONTRACT.md 15.2) escalates too, and counts. Prints, per project and overall, how many of those honest
commits would escalate, per rule and per class, and every hit (so a reader can check one).

    cargo build --release
    python3 scripts/reading_history.py --per-repo 60 \\
        path/to/boltons path/to/more-itertools path/to/packaging path/to/itertools path/to/semver

Each repository is cloned (`git clone --no-checkout`, local, cheap) into a scratch directory,
so a bare mirror works and nothing is written into it.
"""

import argparse
import collections
import json
import os
import subprocess
import sys
import tempfile

TEST_DIRS = {"tests", "fixtures"}
TEST_FILES = {"conftest.py", "pytest.ini", "tox.ini"}


def test_adjacent(path):
    parts = path.split("/")
    return (
        any(p in TEST_DIRS for p in parts[:-1])
        or parts[-1] in TEST_FILES
        or parts[-1].startswith("test_")
    )


JAVASCRIPT = (".js", ".mjs", ".cjs", ".jsx", ".ts", ".mts", ".cts", ".tsx")
JAVASCRIPT_TEST_DIRS = {"test", "tests", "__tests__", "__mocks__", "__snapshots__"}


def javascript_test(path):
    """As `src/cli/reading/runtimes.rs` `is_javascript_test` says."""
    parts = path.split("/")
    stem = parts[-1]
    for e in JAVASCRIPT:
        if stem.endswith(e):
            stem = stem[: -len(e)]
            break
    return (stem in ("test", "spec") or stem.endswith((".test", ".spec"))
            or any(p in JAVASCRIPT_TEST_DIRS for p in parts[:-1]))


def code_files(repo, commit):
    out = subprocess.run(
        ["git", "-C", repo, "diff-tree", "-z", "--no-commit-id", "--name-only", "-r",
         "--no-renames", commit + "^", commit],
        check=True, capture_output=True).stdout
    names = [n.decode("utf-8", "replace") for n in out.split(b"\0") if n]
    if JAVASCRIPT_ONLY:
        return [n for n in names if n.endswith(JAVASCRIPT) and not test_adjacent(n)
                and not javascript_test(n)]
    return [n for n in names if n.endswith((".py", ".rs")) and not test_adjacent(n)]


# `--javascript`: the commits picked are those that change JavaScript or TypeScript code.
JAVASCRIPT_ONLY = False


def commits(repo, n):
    """The most recent `n` non-merge commits on HEAD's first-parent line that change code."""
    out = subprocess.run(
        ["git", "-C", repo, "log", "--first-parent", "--no-merges", "--format=%H", "-n",
         str(n * 6)],
        check=True, capture_output=True, text=True).stdout.split()
    picked = []
    for c in out:
        has_parent = subprocess.run(["git", "-C", repo, "rev-parse", "-q", "--verify", c + "^"],
                                    capture_output=True).returncode == 0
        if has_parent and code_files(repo, c):
            picked.append(c)
        if len(picked) == n:
            break
    return picked


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("repos", nargs="+")
    ap.add_argument("--per-repo", type=int, default=60)
    ap.add_argument("--binary", default=os.path.join(
        os.path.dirname(__file__), "..", "target", "release", "patchgate"))
    ap.add_argument("--hits", action="store_true", help="print every hit")
    ap.add_argument("--javascript", action="store_true",
                    help="JavaScript and TypeScript projects (issue 69): commits that change a "
                         "JS/TS file that is not a test, read with `patchgate read --javascript`")
    args = ap.parse_args()
    global JAVASCRIPT_ONLY
    JAVASCRIPT_ONLY = args.javascript
    total = 0
    flagged_all = 0
    by_rule_all = collections.Counter()
    by_class_all = collections.Counter()
    in_file_all = [0, 0]
    scratch = tempfile.mkdtemp(prefix="reading-history-")
    for repo in args.repos:
        name = os.path.basename(os.path.dirname(repo.rstrip("/"))) if repo.rstrip("/").endswith(
            "/repo") else os.path.basename(repo.rstrip("/"))
        clone = os.path.join(scratch, name)
        subprocess.run(["git", "clone", "-q", "--no-checkout", repo, clone], check=True)
        picked = commits(clone, args.per_repo)
        flagged = 0
        by_rule = collections.Counter()
        by_class = collections.Counter()
        in_file = [0, 0]
        for c in picked:
            r = subprocess.run([args.binary, "read", "-C", clone, "--base", c + "^", "--head", c,
                                "--json"] + (["--javascript"] if args.javascript else []),
                               capture_output=True, text=True)
            if r.returncode not in (0, 2):
                print(f"{name} {c[:10]}: exit {r.returncode}: {r.stderr.strip()}", file=sys.stderr)
                continue
            read = json.loads(r.stdout)
            hits, unread = read["hits"], read.get("unread", [])
            # Tests inside source files (issue 50): test lines the gate would run as the base
            # has them, and hunks it could not split from code (a scope hit, not a reading).
            lines = read.get("test_lines", {})
            if lines.get("from_base"):
                in_file[0] += 1
            if lines.get("mixed"):
                in_file[1] += 1
                if args.hits:
                    print(f"  {name} {c[:10]} test lines mixed with code: {lines['mixed']}")
            if not hits and not unread:
                continue
            flagged += 1
            # What the gate decides: an unread file first, then the first class among the hits
            # (probe, overload, special-case); each rule counted once per commit.
            order = {"probe": 0, "overload": 1, "special-case": 2}
            deciding = "unread" if unread else min(hits, key=lambda h: order[h["class"]])["class"]
            by_class[deciding] += 1
            for rule in sorted({h["rule"] for h in hits} | {"unread:" + u["reason"] for u in unread}):
                by_rule[rule] += 1
            if args.hits:
                for u in unread:
                    print(f"  {name} {c[:10]} {u['file']}: unread ({u['reason']}"
                          + (f": {u['detail']}" if u.get("detail") else "") + ")")
                for h in hits:
                    print(f"  {name} {c[:10]} {h['file']}:{h['line']} {h['rule']}: {h['code']}"
                          + (f" [pinned at {h['seen_in']}]" if h.get("seen_in") else ""))
        total += len(picked)
        flagged_all += flagged
        by_rule_all.update(by_rule)
        by_class_all.update(by_class)
        in_file_all[0] += in_file[0]
        in_file_all[1] += in_file[1]
        print(f"{name}: {len(picked)} commits that change code, {flagged} would escalate "
              f"({100.0 * flagged / max(len(picked), 1):.1f}%); by rule: {dict(by_rule)}; "
              f"test lines in code run from the base: {in_file[0]}, mixed with code "
              f"(a scope hit): {in_file[1]}")
    print(f"overall: {total} commits, {flagged_all} would escalate "
          f"({100.0 * flagged_all / max(total, 1):.1f}%, 1 in "
          f"{(total / flagged_all) if flagged_all else float('inf'):.0f}); "
          f"by deciding class: {dict(by_class_all)}; by rule: {dict(by_rule_all)}; "
          f"test lines in code run from the base: {in_file_all[0]} commits, mixed with code "
          f"(a scope hit): {in_file_all[1]} commits")


if __name__ == "__main__":
    main()
