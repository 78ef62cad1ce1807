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
        --count 30 more-itertools=/path/to/more-itertools attrs=/path/to/attrs \\
        marshmallow=/path/to/marshmallow

Each PROJECT=REPO names a project of the table below and a clone or bare mirror of its
repository (`git clone --no-checkout`, local: nothing is written into it). `--jsonl FILE`
appends one row per commit. Exit 0 when it measured; the figures are printed, never asserted.

`--replay` adds `[replay] behaves_under_test = "listed"` to the adopted config (issue 66): each
row then says how many recorded calls the plain program replayed, and in what state
(`agrees`, `behaves-under-test`, `nondeterministic`, `unreplayed`), and how many calls could not
be recorded; a commit with a `behaves-under-test` call is one the rule, `required`, would stop.
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

PY_CANARY = ("properties/patchgate_canary.py",
             "# import mypackage  # noqa: F401  (your package: make the canary see what it does at import)")
RUST_CANARY = ("tests/patchgate_canary.rs",
               "    // let _ = mycrate::some_function();  // your crate: make the canary see what it does")
PYTEST = ["python3", "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider"]

# Each project: the release tag adopted; its examples/ directory (`overlay`, `patches`) and,
# where the history touches modules the example's properties do not, a `history` directory
# laid over it (more properties, their mutants); the canary's line and what it becomes; the
# property admissions (id, mutant patch); the plain suite's argv; what a commit must touch (a
# code file under one of these); `init`'s flags; an edit to make before `init` (the guide's).
PROJECTS = {
    "more-itertools": dict(
        tag="v10.8.0",
        example="gate-more-itertools",
        canary=(PY_CANARY, "import more_itertools  # noqa: F401"),
        proofs=[("chunked_roundtrip", "mutant-chunked"), ("windowed_slices", "mutant-windowed"),
                ("iter_index_finds_every_place", "mutant-iter-index")],
        plain=PYTEST + ["tests"],
        touches=("more_itertools/", "tests/"),
    ),
    "attrs": dict(
        tag="25.1.0",
        example="gate-attrs",
        canary=(PY_CANARY, "import attr  # noqa: F401"),
        proofs=[("evolve_replaces_only_what_is_named", "mutant-evolve"),
                ("asdict_roundtrip", "mutant-asdict")],
        # Its one test that fails under this CPython is frozen in the overlay's ledger.
        plain=PYTEST + ["tests", "--deselect",
                        "tests/test_converters.py::TestPipe::test_wrapped_annotation"],
        touches=("src/", "tests/", "conftest.py", "pyproject.toml"),
        edit="attrs-pythonpath",
    ),
    "marshmallow": dict(
        tag="3.19.0",
        example="gate-marshmallow",
        canary=(PY_CANARY, "import marshmallow  # noqa: F401"),
        proofs=[("dump_load_roundtrip", "mutant-roundtrip"),
                ("range_accepts_its_interval", "mutant-range")],
        plain=PYTEST + ["tests"],
        touches=("src/", "tests/"),
    ),
    "semver": dict(
        tag="1.0.0",
        example="gate-semver",
        canary=(RUST_CANARY, '    let _ = semver::Version::parse("1.2.3");'),
        proofs=[("version_display_parse_roundtrip", "mutant-display"),
                ("requirement_matches_as_the_numbers_compare", "mutant-greater-eq")],
        # Its one test that fails under today's Rust is frozen in the overlay's ledger.
        plain=["cargo", "test", "--offline", "-q", "--", "--skip", "test_parse_errors"],
        touches=("src/", "tests/", "Cargo.toml", "build.rs"),
        init=["--rust"],
    ),
}

CODE = (".py", ".pyi", ".rs", ".toml", ".cfg")


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


REPLAY = ("\n[replay]\nbehaves_under_test = \"listed\"\ncalls = 10\n"
          "unobserved_difference = \"listed\"\nspecial_case = \"listed\"\n"
          "unasserted_difference = \"listed\"\n")
AGAINST_BASE = ("unobserved-difference", "special-case", "unasserted-difference")


def replayed(answer):
    """The behaviour step's calls by state (CONTRACT.md 16.2, as the core decides it), the
    calls not recorded, and against the base (16.3): the rows' counts and the causes the step
    names (each `listed`, in its summary)."""
    states = collections.Counter()
    unrecorded = 0
    for s in answer.get("steps", []):
        facts = s.get("facts") or {}
        if s.get("step") != "behavior":
            continue
        unrecorded = sum(u.get("count", 0) for u in facts.get("unrecorded", []))
        for r in facts.get("against_base", []):
            states["base-" + r["recorded"]] += 1
            states["neighbours"] += r["neighbours"]
            states["neighbours-differ"] += r["differing"]
        for cause in AGAINST_BASE:
            if "; %s (listed)" % cause in s.get("summary", ""):
                states[cause] += 1
        for c in facts.get("calls", []):
            rec, plain = c["recorded"], c["plain"]
            key = lambda r: (r["end"], r.get("digest"))
            if "unreplayed" in (rec["end"], plain[0]["end"], plain[1]["end"]):
                states["unreplayed"] += 1
            elif key(plain[0]) != key(plain[1]):
                states["nondeterministic"] += 1
            elif key(plain[0]) != key(rec):
                states["behaves-under-test"] += 1
            else:
                states["agrees"] += 1
    return dict(states), unrecorded


def adopt(binary, name, mirror, work, replay=False):
    p = PROJECTS[name]
    example = ROOT / "examples" / p["example"]
    git(work.parent, "clone", "-q", "--no-checkout", str(mirror), work.name)
    git(work, "checkout", "-q", "-B", "main", p["tag"])
    if p.get("edit") == "attrs-pythonpath":
        # The guide's one edit to attrs: its package importable under the safe import path.
        py = work / "pyproject.toml"
        text = py.read_text()
        py.write_text(text.replace("[tool.pytest.ini_options]\n",
                                   "[tool.pytest.ini_options]\npythonpath = [\"src\"]\n", 1))
    shutil.copytree(example / "overlay", work, dirs_exist_ok=True)
    if (example / "history" / "overlay").is_dir():
        shutil.copytree(example / "history" / "overlay", work, dirs_exist_ok=True)
    run(work, binary, "init", *p.get("init", []))
    if replay:
        with open(work / "patchgate.toml", "a") as f:
            f.write(REPLAY)
    (path, line), mine = p["canary"]
    canary = work / path
    text = canary.read_text()
    if line not in text:
        raise SystemExit(f"{name}: the starter's canary no longer says {line!r}")
    canary.write_text(text.replace(line, mine))
    seal = run(work, binary, "seal", "fixtures").stdout
    (work / "fixtures.seal.expected").write_text(seal)
    commit(work, f"{name} {p['tag']} and its gate")
    if "--rust" in p.get("init", []):
        run(work, "cargo", "fetch", "--quiet")
        run(work, binary, "warm")
    run(work, binary, "census", "--write")
    commit(work, "the census")
    for _, mutant in p["proofs"]:
        git(work, "checkout", "-q", "-b", mutant, "main")
        patch = example / "patches" / f"{mutant}.patch"
        if not patch.exists():
            patch = example / "history" / "patches" / f"{mutant}.patch"
        git(work, "apply", str(patch))
        commit(work, mutant)
        git(work, "checkout", "-q", "main")
    for pid, mutant in p["proofs"]:
        run(work, binary, "admit", pid, "--mutant", mutant, "--write")
    commit(work, "the proofs")


def candidates(work, name):
    p = PROJECTS[name]
    listed = git(work, "rev-list", "--first-parent", "--reverse", f"{p['tag']}..origin/HEAD",
                 check=False)
    if listed.returncode != 0:
        listed = git(work, "rev-list", "--first-parent", "--reverse", f"{p['tag']}..FETCH_HEAD",
                     check=False)
    for c in listed.stdout.split():
        files = git(work, "diff", "--name-only", "--no-renames", f"{c}^1", c).stdout.split()
        code = [f for f in files if f.endswith(CODE)]
        if any(f.startswith(p["touches"]) or f in p["touches"] for f in code):
            yield c


def first_open(answer):
    """The first step whose verdict is neither a pass nor a failure, or the deciding rule's."""
    for s in answer.get("steps", []):
        if s.get("verdict") in ("unknown", "missing") or s.get("hits") or s.get("count"):
            return f"{s.get('step')}: {s.get('summary', '')[:300]}"
    return ""


def measure(binary, name, work, count, jsonl, only=(), after=None):
    plain = PROJECTS[name]["plain"]
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")
    rows = []
    skipped = collections.Counter()
    for c in candidates(work, name):
        if len(rows) == count:
            break
        if only and not c.startswith(tuple(only)):
            continue
        if after:
            after = None if c.startswith(after) else after
            continue
        subject = git(work, "log", "-1", "--format=%s", c).stdout.strip()
        diff = git(work, "diff", "--binary", "--full-index", "--no-renames", f"{c}^1", c).stdout
        git(work, "checkout", "-q", "-f", "-B", "measured", "main")
        git(work, "clean", "-qfdx", "-e", "target")
        # A three-way apply: a commit whose lines the adopted base holds as its parent had
        # them applies though the context around them moved; one that conflicts does not.
        applied = subprocess.run(["git", "apply", "--3way", "--index", "-"], cwd=work,
                                 input=diff, text=True, capture_output=True)
        if applied.returncode != 0:
            skipped["does not apply to the adopted base"] += 1
            continue
        if git(work, "diff", "--cached", "--quiet", check=False).returncode == 0:
            # Three-way, what the commit changes may already be the base's, or not there.
            skipped["changes nothing on the adopted base"] += 1
            continue
        commit(work, f"{c[:10]} {subject}")
        try:
            plain_failed = run(work, *plain, check=False, env=env, timeout=900).returncode != 0
        except subprocess.TimeoutExpired:
            plain_failed = True
        if plain_failed:
            skipped["its plain suite fails on the adopted base"] += 1
            git(work, "clean", "-qfdx", "-e", "target")
            continue
        git(work, "clean", "-qfdx", "-e", "target")
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
            "behavior": next((s.get("summary", "")[:1500] for s in answer.get("steps", [])
                              if s.get("step") == "behavior"), ""),
        }
        row["calls"], row["unrecorded"] = replayed(answer)
        rows.append(row)
        print(f"  {row['commit']} exit {row['exit']} {row['disposition']} {row['reason']}"
              f"{' (' + row['cause'] + ')' if row['cause'] else ''}  {subject[:60]}"
              f"{'  calls ' + json.dumps(row['calls']) if row['calls'] else ''}",
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
    calls = collections.Counter()
    for r in rows:
        calls.update(r.get("calls", {}))
    if calls:
        would = [r for r in rows if r.get("calls", {}).get("behaves-under-test")]
        print(f"  replay: {sum(bool(r.get('calls')) for r in rows)} commits with recorded calls; "
              f"calls {dict(calls)}; {sum(r.get('unrecorded', 0) for r in rows)} not recorded; "
              f"behaves-under-test would stop {len(would)}")
        for r in would:
            print(f"    {r['commit']} {r['subject'][:70]}")
        for cause in AGAINST_BASE:
            would = [r for r in rows if r.get("calls", {}).get(cause)]
            print(f"  {cause} would stop {len(would)}")
            for r in would:
                print(f"    {r['commit']} {r['subject'][:70]}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--binary", required=True)
    ap.add_argument("--count", type=int, default=30)
    ap.add_argument("--jsonl")
    ap.add_argument("--replay", action="store_true",
                    help="with [replay] listed: count the recorded calls' states (issue 66)")
    ap.add_argument("--only", default="",
                    help="comma-separated commit prefixes: gate only these (to look at one again)")
    ap.add_argument("--after", help="a commit prefix: gate only the candidates after it (to go on)")
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
            print(f"{name}: adopting at {PROJECTS[name]['tag']}", flush=True)
            adopt(binary, name, pathlib.Path(mirror).resolve(), work, args.replay)
            only = [c for c in args.only.split(",") if c]
            rows, skipped = measure(binary, name, work, args.count, args.jsonl, only, args.after)
        report(name, rows, skipped)
        total += rows
    stops = sum(r["exit"] != 0 for r in total)
    print(f"\nall: {len(total)} honest commits, {stops} stopped "
          f"({100 * stops / max(len(total), 1):.0f}%)")


if __name__ == "__main__":
    sys.exit(main())
