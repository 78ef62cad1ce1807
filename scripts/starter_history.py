#!/usr/bin/env python3
"""What the whole starter stops of a real project's honest history (issue 65).

A real project is adopted as the guide says, at a release tag of its own repository: the
tree at the tag, the user's files from `examples/gate-PROJECT/overlay` (the catalog, its
properties, fixtures), `patchgate init`, the canary made to import the package, the seal,
`census --write` and `admit --write` for each strong property (its mutant from
`examples/gate-PROJECT/patches`), each committed on `main`. Then each later upstream commit
(first parent, in order) that changes code or tests is applied to that adopted base as a patch
(`git diff C^ C`), committed on a branch, and gated (`patchgate gate --base main --json`).
Skipped, and counted apart: a commit that does not apply to the adopted base (it builds on an
earlier one), and one whose plain suite fails on the patched tree (not honest *there*). The
rest are the honest commits; every one the gate does not merge is a stop, counted by
disposition, reason and cause, and listed.

    cargo build --release
    python3 -m pip install -r requirements-test.txt
    python3 scripts/starter_history.py --binary target/release/patchgate \\
        --count 30 more-itertools=/path/to/more-itertools attrs=/path/to/attrs

Each PROJECT=REPO names a project of the table below and a clone or bare mirror of its
repository (`git clone --no-checkout`, local: nothing is written into it). `--jsonl FILE`
appends one row per commit. Exit 0 when it measured; the figures are printed, never asserted.
"""

import argparse
import collections
import json
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent

# name: (tag, examples/ dir, import package for the canary, the property admissions as
# (id, mutant patch), the plain suite's argv, files a commit must touch one of, an edit to
# make before `init` (the guide's) or None).
PROJECTS = {
    "more-itertools": (
        "v10.8.0",
        "gate-more-itertools",
        "more_itertools",
        [("chunked_roundtrip", "mutant-chunked"), ("windowed_slices", "mutant-windowed")],
        ["python3", "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider", "tests"],
        ("more_itertools/", "tests/"),
        None,
    ),
    "attrs": (
        "25.4.0",
        "gate-attrs",
        "attr",
        [
            ("evolve_replaces_only_what_is_named", "mutant-evolve"),
            ("asdict_roundtrip", "mutant-asdict"),
        ],
        # Its one test that fails under this CPython is frozen in the overlay's ledger.
        ["python3", "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider", "tests", "--deselect",
         "tests/test_converters.py::TestPipe::test_wrapped_annotation"],
        ("src/", "tests/", "conftest.py", "pyproject.toml"),
        "attrs-pythonpath",
    ),
}


def run(cwd, *argv, check=True, env=None, timeout=1800):
    out = subprocess.run(argv, cwd=cwd, capture_output=True, text=True, env=env,
                         timeout=timeout)
    if check and out.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} in {cwd}: exit {out.returncode}\n"
                         f"{out.stdout[-2000:]}\n{out.stderr[-4000:]}")
    return out


def git(cwd, *args, check=True):
    return run(cwd, "git", *args, check=check)


def commit(work, message):
    git(work, "add", "-A")
    git(work, "-c", "user.name=m", "-c", "user.email=m@example.com", "commit", "-q",
        "--no-verify", "--allow-empty", "-m", message)


def adopt(binary, name, mirror, work):
    tag, example, package, proofs, _, _, edit = PROJECTS[name]
    example = ROOT / "examples" / example
    git(work.parent, "clone", "-q", "--no-checkout", str(mirror), work.name)
    git(work, "checkout", "-q", "-B", "main", tag)
    if edit == "attrs-pythonpath":
        # The guide's one edit to attrs: its package importable under the safe import path.
        py = work / "pyproject.toml"
        text = py.read_text()
        py.write_text(text.replace("[tool.pytest.ini_options]\n",
                                   "[tool.pytest.ini_options]\npythonpath = [\"src\"]\n", 1))
    shutil.copytree(example / "overlay", work, dirs_exist_ok=True)
    run(work, binary, "init")
    canary = work / "properties" / "patchgate_canary.py"
    canary.write_text(canary.read_text().replace(
        "# import mypackage  # noqa: F401  (your package: make the canary see what it does at import)",
        f"import {package}  # noqa: F401"))
    seal = run(work, binary, "seal", "fixtures").stdout
    (work / "fixtures.seal.expected").write_text(seal)
    commit(work, f"{name} {tag} and its gate")
    run(work, binary, "census", "--write")
    commit(work, "the census")
    for _, mutant in proofs:
        git(work, "checkout", "-q", "-b", mutant, "main")
        git(work, "apply", str(example / "patches" / f"{mutant}.patch"))
        commit(work, mutant)
        git(work, "checkout", "-q", "main")
    for pid, mutant in proofs:
        run(work, binary, "admit", pid, "--mutant", mutant, "--write")
    commit(work, "the proofs")


def candidates(work, name):
    tag, touches = PROJECTS[name][0], PROJECTS[name][5]
    listed = git(work, "rev-list", "--first-parent", "--reverse", f"{tag}..origin/HEAD",
                 check=False)
    if listed.returncode != 0:
        listed = git(work, "rev-list", "--first-parent", "--reverse", f"{tag}..FETCH_HEAD",
                     check=False)
    for c in listed.stdout.split():
        files = git(work, "diff", "--name-only", "--no-renames", f"{c}^1", c).stdout.split()
        code = [f for f in files if f.endswith((".py", ".pyi", ".toml", ".cfg"))]
        if any(f.startswith(touches) or f in touches for f in code):
            yield c


def first_open(answer):
    """The first step whose verdict is neither a pass nor a failure, or the deciding rule's."""
    for s in answer.get("steps", []):
        if s.get("verdict") in ("unknown", "missing") or s.get("hits") or s.get("count"):
            return f"{s.get('step')}: {s.get('summary', '')[:300]}"
    return ""


def measure(binary, name, work, count, jsonl):
    plain = PROJECTS[name][4]
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")
    rows = []
    skipped = collections.Counter()
    for c in candidates(work, name):
        if len(rows) == count:
            break
        subject = git(work, "log", "-1", "--format=%s", c).stdout.strip()
        diff = git(work, "diff", "--binary", "--no-renames", f"{c}^1", c).stdout
        git(work, "checkout", "-q", "-f", "-B", "measured", "main")
        git(work, "clean", "-qfdx")
        applied = subprocess.run(["git", "apply", "--index", "-"], cwd=work, input=diff,
                                 text=True, capture_output=True)
        if applied.returncode != 0:
            skipped["does not apply to the adopted base"] += 1
            continue
        commit(work, f"{c[:10]} {subject}")
        if run(work, *plain, check=False, env=env).returncode != 0:
            skipped["its plain suite fails on the adopted base"] += 1
            git(work, "clean", "-qfdx")
            continue
        git(work, "clean", "-qfdx")
        started = time.monotonic()
        out = run(work, binary, "gate", "--base", "main", "--json", check=False)
        seconds = time.monotonic() - started
        try:
            answer = json.loads(out.stdout)
        except json.JSONDecodeError:
            answer = {"disposition": "ERROR", "reason": out.stderr[-300:]}
        row = {
            "project": name,
            "commit": c[:10],
            "subject": subject,
            "exit": out.returncode,
            "disposition": answer.get("disposition"),
            "reason": answer.get("reason"),
            "cause": answer.get("cause"),
            "why": "" if out.returncode == 0 else first_open(answer),
            "failed": [f.get("id") for f in answer.get("failures", [])][:5],
            "seconds": round(seconds, 1),
        }
        rows.append(row)
        print(f"  {row['commit']} exit {row['exit']} {row['disposition']} {row['reason']}"
              f"{' (' + row['cause'] + ')' if row['cause'] else ''}  {subject[:60]}",
              flush=True)
        if jsonl:
            with open(jsonl, "a") as f:
                f.write(json.dumps(row) + "\n")
    return rows, skipped


def report(name, rows, skipped):
    stops = [r for r in rows if r["exit"] != 0]
    print(f"\n{name}: {len(rows)} honest commits gated, {len(stops)} stopped "
          f"({100 * len(stops) / max(len(rows), 1):.0f}%)")
    for why, n in sorted(skipped.items()):
        print(f"  skipped: {n} {why}")
    by = collections.Counter((r["disposition"], r["reason"], r["cause"]) for r in stops)
    for (d, reason, cause), n in by.most_common():
        print(f"  {n} x {d} {reason}{' / ' + cause if cause else ''}")
    for r in stops:
        print(f"    {r['commit']} {r['subject'][:70]}\n      {r['why'][:240]}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--binary", required=True)
    ap.add_argument("--count", type=int, default=30)
    ap.add_argument("--jsonl")
    ap.add_argument("projects", nargs="+", metavar="PROJECT=REPO")
    args = ap.parse_args()
    binary = str(pathlib.Path(args.binary).resolve())
    total = []
    for spec in args.projects:
        name, _, mirror = spec.partition("=")
        if name not in PROJECTS:
            raise SystemExit(f"{name}: not one of {', '.join(PROJECTS)}")
        with tempfile.TemporaryDirectory(dir=os.environ.get("MEASURE_DIR")) as tmp:
            work = pathlib.Path(tmp) / name
            print(f"{name}: adopting at {PROJECTS[name][0]}", flush=True)
            adopt(binary, name, pathlib.Path(mirror).resolve(), work)
            rows, skipped = measure(binary, name, work, args.count, args.jsonl)
        report(name, rows, skipped)
        total += rows
    stops = sum(r["exit"] != 0 for r in total)
    print(f"\nall: {len(total)} honest commits, {stops} stopped "
          f"({100 * stops / max(len(total), 1):.0f}%)")


if __name__ == "__main__":
    sys.exit(main())
