#!/usr/bin/env python3
"""The patch gate's own work on a large repository: git, seal, parse, decide, reports.

Builds a git repository with 20,000 fixture files and a 500-property catalog, commits a patch
that touches the locality of a few properties, and gates it with property and suite commands
that do nothing (`true`), so what is timed is patchgate's own work. Reports medians of
--repeat runs of:

  - `patchgate gate --dry-run` (git, the base's config/catalog/ledger, the seal, the decision:
    everything but running commands);
  - a full `patchgate gate --markdown-out --json-out --ledger` minus the seconds its commands
    took (read back from the ladder-ledger rows it appends);

and, as the baseline measured in the same run on the same tree, the coreutils pipeline CI jobs
already use to seal fixtures (`find | sort | xargs sha256sum | sha256sum`).

    cargo build --release && python3 scripts/bench_gate.py --binary target/release/patchgate
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

FILES = 20_000
PROPERTIES = 500


def sh(cwd, *args, **kw):
    return subprocess.run(args, cwd=cwd, check=True, capture_output=True, **kw)


def build(root):
    env = {"GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@b", "GIT_COMMITTER_NAME": "b", "GIT_COMMITTER_EMAIL": "b@b"}
    os.environ.update(env)
    sh(root, "git", "init", "-q", "-b", "main")
    # 20,000 fixture files in 200 directories, a few hundred bytes each.
    for d in range(200):
        path = os.path.join(root, "fixtures", f"set{d:03d}")
        os.makedirs(path)
        for f in range(FILES // 200):
            with open(os.path.join(path, f"case{f:03d}.json"), "w") as out:
                out.write(json.dumps({"set": d, "case": f, "input": list(range(f % 40)), "expected": f * d}))
    # 500 properties over 100 modules (five each), half strong.
    os.makedirs(os.path.join(root, "src"))
    for m in range(100):
        with open(os.path.join(root, "src", f"mod{m:03d}.py"), "w") as out:
            out.write(f"VALUE = {m}\n")
    lines = ["properties:"]
    for p in range(PROPERTIES):
        lines += [
            f"  - id: prop_{p:03d}",
            f"    strength: {'strong' if p % 2 == 0 else 'weak'}",
            f"    locality: [src/mod{p % 100:03d}.py]",
            f"    source: [properties/test_prop_{p:03d}.py]",
        ]
    with open(os.path.join(root, "catalog.yaml"), "w") as out:
        out.write("\n".join(lines) + "\n")
    ledger = [{"property_id": f"prop_{p:03d}", "state": "open", "owner": "x"} for p in (1, 102)]
    ledger.append({"test_id": "tests.test_a::test_b", "covers": ["legacy"], "state": "open"})
    with open(os.path.join(root, "freeze-ledger.json"), "w") as out:
        json.dump(ledger, out)
    with open(os.path.join(root, "patchgate.toml"), "w") as out:
        out.write(
            'debt_cap = 5\n'
            '[properties]\ncommand = ["true", "{id}"]\nruns = 2\ntimeout_s = 60\n'
            '[suite]\ncommand = ["true"]\ntimeout_s = 60\n'
        )
    seal = subprocess.run(
        "LC_ALL=C find fixtures -type f ! -name '*.seal' -print0 | LC_ALL=C sort -z | xargs -0 sha256sum | sha256sum",
        shell=True, cwd=root, check=True, capture_output=True, text=True,
    ).stdout
    with open(os.path.join(root, "fixtures.seal.expected"), "w") as out:
        out.write(seal)
    sh(root, "git", "add", "-A")
    sh(root, "git", "commit", "-q", "-m", "base")
    # The patch: two modules, so ten properties are in locality (two of them frozen).
    sh(root, "git", "checkout", "-q", "-b", "patch")
    for m in (1, 2):
        with open(os.path.join(root, "src", f"mod{m:03d}.py"), "a") as out:
            out.write("# patched\n")
    sh(root, "git", "commit", "-q", "-am", "patch")


def timed(fn):
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--binary", default="target/release/patchgate")
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    binary = os.path.abspath(args.binary)
    with tempfile.TemporaryDirectory() as root:
        build(root)
        baseline, dry, full, commands = [], [], [], []
        for i in range(args.repeat):
            baseline.append(timed(lambda: subprocess.run(
                "LC_ALL=C find fixtures -type f ! -name '*.seal' -print0 | LC_ALL=C sort -z | xargs -0 sha256sum | sha256sum",
                shell=True, cwd=root, check=True, capture_output=True)))
            dry.append(timed(lambda: sh(root, binary, "gate", "--base", "main", "--dry-run")))
            ledger = os.path.join(root, f".ledger-{i}.jsonl")
            run = lambda: subprocess.run(
                [binary, "gate", "--base", "main", "--ledger", ledger,
                 "--markdown-out", os.path.join(root, ".report.md"), "--json-out", os.path.join(root, ".answer.json")],
                cwd=root, capture_output=True, text=True)
            start = time.perf_counter()
            out = run()
            full.append(time.perf_counter() - start)
            if out.returncode != 0:
                sys.exit(f"the gate did not merge the patch (exit {out.returncode}): {out.stdout}{out.stderr}")
            rows = [json.loads(l) for l in open(ledger)]
            commands.append(sum(r["seconds"] for r in rows))
        answer = json.load(open(os.path.join(root, ".answer.json")))
        ran = [p for s in answer["steps"] if s["step"] == "properties" for p in s["properties"] if p["state"] == "pass"]
        own = [f - c for f, c in zip(full, commands)]
        med = statistics.median
        print(f"repository: {FILES} fixture files, {PROPERTIES} properties; the patch puts "
              f"{len(ran)} voting properties in locality ({2 * len(ran)} runs of `true`)")
        print(f"coreutils seal pipeline (baseline): {med(baseline):.3f} s")
        print(f"patchgate gate --dry-run:           {med(dry):.3f} s  ({med(dry) / med(baseline):.2f}x the baseline)")
        print(f"patchgate gate, full:               {med(full):.3f} s, of which its commands {med(commands):.3f} s")
        print(f"the gate's own work:                {med(own):.3f} s  ({med(own) / med(baseline):.2f}x the baseline; target < 1 s)")
        print(f"answer: {answer['disposition']} reason={answer['reason']}")


if __name__ == "__main__":
    main()
