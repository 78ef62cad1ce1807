#!/usr/bin/env python3
"""Replays real projects' honest history through the observe rules (issue 52).

For each repository given (a clone or a bare mirror), the most recent non-merge commits that
change Python code (a `.py` file that is not test-adjacent, the same selection as
`scripts/reading_history.py`) are checked out and the project's own suite is run on them by
the gate's own observed-run driver (`DRIVER` in src/cli/gate/observe_driver.rs: probes compiled into
the changed lines), as the gate runs it.
Then, with the gate's definitions (docs/design/observe.md):

- a *changed code line* is a line the commit adds or changes that is part of a statement of a
  changed code file (docs/design/observe.md, O.2);
- `unobserved-change`: the commit changes at least one code line and the suite runs none;
- `unobserved-branch`: some branch leaving a line the commit adds (an `if`/`elif`/`else`, a
  `match` arm, a loop's exit: the driver's branch probes) is taken by no test.

- with `--binary`, the *patch mutants*: `patchgate observe --coverage` picks them as the gate
  does (`--mutants`, one per changed code line a test ran, the syntax tree's operators); each is
  applied and the tests that ran its line run (pytest, those node ids): a failure kills it,
  a pass lets it survive, anything else (an error, a timeout) is void. `unobserved-change`
  also counts a commit whose mutants no test kills (the gate's second clause).

Prints, per project and overall, how many honest commits each rule would stop, and every hit.

    cargo build --release
    python3 -m pip install pytest hypothesis
    python3 scripts/observe_history.py --per-repo 30 --binary target/release/patchgate \\
        path/to/boltons path/to/more-itertools path/to/tomli

Each repository is cloned (`git clone --no-checkout`, local) into a scratch directory, so a bare
mirror works and nothing is written into it. A commit whose suite cannot be collected (exit 2-5
with no test run) is counted apart ("suite did not run"), never as a hit.
"""

import argparse
import json
import os
import re
import subprocess
import sys

from observe_probes import driver  # the gate's DRIVER, read from src/cli/gate/observe_driver.rs
import tempfile
import time

TEST_DIRS = {"tests", "test", "fixtures", "docs"}
TEST_FILES = {"conftest.py", "setup.py", "noxfile.py"}


def code_file(path):
    parts = path.split("/")
    return (
        path.endswith(".py")
        and not any(p in TEST_DIRS for p in parts[:-1])
        and parts[-1] not in TEST_FILES
        and not parts[-1].startswith("test_")
        and not parts[-1].endswith("_test.py")
    )


def git(repo, *args):
    return subprocess.run(["git", "-C", repo, *args], check=True, capture_output=True,
                          text=True).stdout


def changed_code_files(repo, commit):
    out = git(repo, "diff-tree", "--no-commit-id", "--name-only", "-r", "--no-renames",
              "--diff-filter=AM", commit + "^", commit)
    return [n for n in out.split("\n") if n and code_file(n)]


def added_lines(repo, commit, path):
    """The line numbers, in the commit's tree, of the lines it adds or changes in `path`."""
    out = git(repo, "diff", "-U0", "--no-color", commit + "^", commit, "--", path)
    lines = set()
    for m in re.finditer(r"^@@ -\S+ \+(\d+)(?:,(\d+))? @@", out, re.M):
        start, count = int(m.group(1)), int(m.group(2) or "1")
        lines.update(range(start, start + count))
    return lines


def commits(repo, n):
    out = git(repo, "log", "--first-parent", "--no-merges", "--format=%H", "-n", str(n * 8))
    picked = []
    for c in out.split():
        try:
            files = changed_code_files(repo, c)
        except subprocess.CalledProcessError:
            continue
        if files:
            picked.append((c, files))
        if len(picked) == n:
            break
    return picked


def packages(work):
    """The project's import packages at its newest commit: the directories, at the top or under
    `src/`, that hold an `__init__.py` (test directories aside). A gate's properties of such a
    project name these as their locality; a change outside them no strong property observes,
    and the gate escalates it as `unobserved-files` (issue 27) whatever the observe step says."""
    names = git(work, "ls-tree", "-r", "--name-only", "HEAD").split("\n")
    found = set()
    for n in names:
        parts = n.split("/")
        if parts[-1] != "__init__.py" or any(p in TEST_DIRS for p in parts[:-1]):
            continue
        if len(parts) == 2 or (len(parts) == 3 and parts[0] == "src"):
            found.add("/".join(parts[:-1]))
    return sorted(found)


def in_package(files, pkgs):
    return any(f == p or f.startswith(p + "/") for f in files for p in pkgs)


def suite_env(work):
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")
    if os.path.isdir(os.path.join(work, "src")):
        # A src layout: its tests import the package from `src/`, not an installed copy.
        env["PYTHONPATH"] = os.path.join(work, "src")
    return env


def observe(work, commit, files, timeout):
    git(work, "checkout", "-q", "--force", commit)
    git(work, "clean", "-qfdx")
    report = os.path.join(work, "..", "observe.json")
    if os.path.exists(report):
        os.remove(report)
    watched = []
    for f in files:
        lines = sorted(added_lines(work, commit, f))
        if lines:
            watched.append("%s:%s" % (f, ",".join(map(str, lines))))
    env = suite_env(work)
    try:
        run = subprocess.run(
            [sys.executable, "-c", driver(), report] + watched + ["--", "-q", "-p", "no:cacheprovider"],
            cwd=work, capture_output=True, text=True, timeout=timeout, env=env)
    except subprocess.TimeoutExpired:
        return None, "timeout"
    tail = run.stdout.strip().split("\n")[-1:] if run.stdout else [""]
    if run.returncode not in (0, 1):
        return None, "suite did not run (exit %d): %s" % (run.returncode, tail[0][:120])
    if not os.path.exists(report):
        return {}, tail[0]
    with open(report) as fh:
        return json.load(fh).get("files", {}), tail[0]


def node_id(work, check):
    """pytest's node id of a JUnit-style check id (`tests.test_x::f`, `tests.test_x.Cls::f`)."""
    owner, _, name = check.partition("::")
    parts = owner.split(".")
    for k in range(len(parts), 0, -1):
        path = "/".join(parts[:k]) + ".py"
        if os.path.isfile(os.path.join(work, path)):
            return "::".join([path] + parts[k:] + [name])
    return None


def mutants(work, commit, binary, n, env, timeout):
    """(made, killed, survived, void) for the commit's patch mutants, as the gate picks them."""
    report = os.path.join(work, "..", "observe.json")
    out = subprocess.run([binary, "observe", "--base", commit + "^", "--head", commit, "--coverage",
                          report, "--mutants", str(n), "--json", "-C", work],
                         capture_output=True, text=True)
    if out.returncode != 0:
        return None
    doc = json.loads(out.stdout)
    facts = {(m["file"], m["line"]): m for m in doc["observe"].get("mutants", [])}
    made = killed = survived = void = 0
    fates = []
    for a in doc["apply"]:
        m = facts.get((a["file"], a["line"]))
        ids = [node_id(work, c) for c in (m or {}).get("checks", [])]
        ids = [i for i in ids if i]
        made += 1
        if not ids:
            void += 1
            fates.append((a["file"], a["line"], a["operator"], "void"))
            continue
        path = os.path.join(work, a["file"])
        original = open(path, "rb").read()
        mutated = original[:a["start"]] + a["replacement"].encode() + original[a["end"]:]
        open(path, "wb").write(mutated)
        try:
            run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                                  "-x", *ids], cwd=work, capture_output=True, text=True,
                                 timeout=timeout, env=env)
            code = run.returncode
        except subprocess.TimeoutExpired:
            code = None
        finally:
            open(path, "wb").write(original)
        if code == 1:
            killed += 1
        elif code == 0:
            survived += 1
        else:
            void += 1
        fates.append((a["file"], a["line"], a["operator"], {1: "killed", 0: "survived"}.get(code, "void")))
    return made, killed, survived, void, fates


def judge(work, commit, files, covered):
    """(changed statement lines, executed ones, untaken branches from added lines)."""
    statements, executed, untaken = 0, 0, []
    for f in files:
        added = added_lines(work, commit, f)
        entry = covered.get(f) or covered.get(os.path.join(work, f))
        if entry is None:
            # No report (the run never returned to the driver): every changed line is unrun
            # code, as the gate counts it.
            statements += len(added)
            continue
        ran = set(entry.get("executed_lines", []))
        stmts = ran | set(entry.get("missing_lines", [])) | set(entry.get("excluded_lines", []))
        statements += len(added & stmts)
        executed += len(added & ran)
        for src, dst in entry.get("missing_branches", []):
            if src in added and src in ran:
                untaken.append("%s:%d->%d" % (f, src, dst))
            elif src in added:
                pass  # the line itself never ran: counted by unobserved lines, not as a branch
    return statements, executed, untaken


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("repos", nargs="*")
    ap.add_argument("--per-repo", type=int, default=30)
    ap.add_argument("--timeout", type=int, default=600)
    ap.add_argument("--json", help="write every commit's figures here")
    ap.add_argument("--binary", help="patchgate, to make and run the patch mutants")
    ap.add_argument("--mutants", type=int, default=5, help="patch mutants per commit (the starter's)")
    ap.add_argument("--summarize", metavar="JSON",
                    help="print the stops of a replay written by --json, running nothing")
    args = ap.parse_args()
    if args.summarize:
        with open(args.summarize) as fh:
            stops(json.load(fh)["commits"])
        return
    scratch = tempfile.mkdtemp(prefix="observe-history-")
    rows = []
    keys = ["commits", "ran", "no_code_line", "change", "branch", "lines_unrun", "none_killed",
            "mutants", "killed", "survived", "void", "dead_branch"]
    totals = dict.fromkeys(keys, 0)
    for repo in args.repos:
        name = os.path.basename(os.path.normpath(repo.rstrip("/").removesuffix("/repo")))
        work = os.path.join(scratch, name, "w")
        os.makedirs(os.path.dirname(work))
        subprocess.run(["git", "clone", "-q", "--no-checkout", repo, work], check=True)
        t = dict.fromkeys(keys, 0)
        pkgs = packages(work)
        for commit, files in commits(work, args.per_repo):
            t["commits"] += 1
            started = time.time()
            covered, said = observe(work, commit, files, args.timeout)
            row = {"repo": name, "commit": commit[:12], "files": files, "suite": said,
                   "seconds": round(time.time() - started, 1),
                   "in_package": in_package(files, pkgs)}
            if covered is None:
                print("%s %s suite did not run: %s" % (name, commit[:12], said))
                rows.append(row)
                continue
            t["ran"] += 1
            statements, executed, untaken = judge(work, commit, files, covered)
            row.update(statements=statements, executed=executed, untaken=untaken)
            rows.append(row)
            got = None
            if args.binary and executed > 0:
                started = time.time()
                got = mutants(work, commit, args.binary, args.mutants, suite_env(work),
                              max(10, 3 * row.get("seconds", 10)))
                row["mutant_seconds"] = round(time.time() - started, 1)
            dead = []
            if got:
                made, killed, survived, void, fates = got
                row.update(mutants=made, killed=killed, survived=survived, void=void, fates=fates)
                # An added branch no test takes whose condition, made true, no test notices.
                removable = {"%s:%d" % (f, l) for f, l, op, fate in fates
                             if op == "condition-true" and fate == "survived"}
                dead = [u for u in untaken if u.split("->")[0] in removable]
                row["dead_branches"] = dead
                t["mutants"] += made
                t["killed"] += killed
                t["survived"] += survived
                t["void"] += void
            if statements == 0:
                t["no_code_line"] += 1
            elif executed == 0:
                t["change"] += 1
                t["lines_unrun"] += 1
                print("%s %s unobserved-change: %d changed code lines, none run (%s)"
                      % (name, commit[:12], statements, ", ".join(files)))
            elif got and got[0] > 0 and got[1] == 0:
                t["change"] += 1
                t["none_killed"] += 1
                print("%s %s unobserved-change: %d patch mutants, none killed (%d survived, %d void)"
                      % (name, commit[:12], got[0], got[2], got[3]))
            if dead:
                t["dead_branch"] += 1
                print("%s %s dead branch: %s" % (name, commit[:12], ", ".join(dead[:5])))
            if untaken:
                t["branch"] += 1
                print("%s %s unobserved-branch: %s" % (name, commit[:12], ", ".join(untaken[:5])))
        print("%s: %d commits, %d with a suite that ran, %d changing no code line; "
              "unobserved-change %d (%d no line run, %d no mutant killed), unobserved-branch %d; "
              "mutants %d: %d killed, %d survived, %d void; a dead added branch %d"
              % (name, t["commits"], t["ran"], t["no_code_line"], t["change"], t["lines_unrun"],
                 t["none_killed"], t["branch"], t["mutants"], t["killed"], t["survived"], t["void"],
                 t["dead_branch"]))
        for k in totals:
            totals[k] += t[k]
    print("all: %d commits, %d with a suite that ran, %d changing no code line; "
          "unobserved-change %d (%.1f%%: %d no line run, %d no mutant killed), "
          "unobserved-branch %d (%.1f%%); mutants %d: %d killed, %d survived, %d void; "
          "a dead added branch %d (%.1f%%)"
          % (totals["commits"], totals["ran"], totals["no_code_line"], totals["change"],
             100.0 * totals["change"] / max(totals["ran"], 1), totals["lines_unrun"],
             totals["none_killed"], totals["branch"],
             100.0 * totals["branch"] / max(totals["ran"], 1), totals["mutants"],
             totals["killed"], totals["survived"], totals["void"], totals["dead_branch"],
             100.0 * totals["dead_branch"] / max(totals["ran"], 1)))
    stops(rows)
    if args.json:
        with open(args.json, "w") as fh:
            json.dump({"totals": totals, "commits": rows}, fh, indent=1)


def stops(rows):
    """How many commits `changes = "required"` stops (any of its three clauses), and how many
    of those it adds to the gate's own stops: a commit changing no file of the project's
    packages escalates `unobserved-files` already (no property's locality covers it), or,
    when its files are listed `inert`, is not observed at all."""
    ran = [r for r in rows if "statements" in r]
    hit = []
    for r in ran:
        unrun = r["statements"] > 0 and r["executed"] == 0
        none_killed = r.get("mutants", 0) > 0 and r.get("killed", 0) == 0
        if unrun or none_killed or r.get("dead_branches"):
            hit.append(r)
    added = [r for r in hit if r["in_package"]]
    outside = [r for r in hit if not r["in_package"]]
    print("changes = \"required\" stops %d of %d (%.1f%%); %d of them change no package file "
          "(already unobserved-files); it adds %d (%.1f%%)"
          % (len(hit), len(ran), 100.0 * len(hit) / max(len(ran), 1), len(outside), len(added),
             100.0 * len(added) / max(len(ran), 1)))
    for r in outside:
        print("  outside the packages: %s %s %s" % (r["repo"], r["commit"], ", ".join(r["files"])))


if __name__ == "__main__":
    main()
