#!/usr/bin/env python3
"""Issue 67: what a gate split over N CI jobs costs against one machine, on real projects.

Each project is adopted at its release tag as the guide says (scripts/starter_history.py's
`adopt`: the overlay, `init`, the canary, the seal, `census --write`, each strong property
admitted), and its honest patch (`examples/gate-PROJECT/patches/honest.patch`) is committed on
a branch. Then, `--repeat` times, in turn: the gate on one machine, and the gate as N shards run
one after the other (one machine standing in for N jobs: `--shard K/N --facts-out`), their facts
combined (`--combine`). Printed: each answer's disposition and reason (the split must answer as
the one machine does, or this exits 1), the one-machine gate's wall seconds, each shard's, and
the longest shard against the one machine (medians over the repeats), with where each shard's
time went (`timings_ms`). Figures are printed, never asserted.

    cargo build --release
    python3 scripts/shards_bench.py --binary target/release/patchgate --shards 3 --repeat 3 \\
        more-itertools=/path/to/more-itertools marshmallow=/path/to/marshmallow

Each PROJECT=REPO names a project of starter_history.py's table and a clone or bare mirror of
its repository.
"""

import argparse
import json
import os
import pathlib
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import starter_history as history  # noqa: E402

ENV = dict(os.environ, PYTEST_DISABLE_PLUGIN_AUTOLOAD="1", PYTHONDONTWRITEBYTECODE="1")
ENV.pop("GITHUB_ACTIONS", None)


def gate(binary, work, *args):
    """The answer's (exit, disposition, reason), the wall seconds, and the facts' timings."""
    with tempfile.TemporaryDirectory() as tmp:
        facts = os.path.join(tmp, "facts.json")
        start = time.monotonic()
        out = subprocess.run([binary, "gate", "--base", "main", "--json", "--facts-out", facts,
                              *args], cwd=work, env=ENV, capture_output=True, text=True)
        took = time.monotonic() - start
        try:
            answer = json.loads(out.stdout)
        except ValueError:
            answer = {}
        try:
            with open(facts) as f:
                timings = json.load(f).get("timings_ms", {})
        except (OSError, ValueError):
            timings = {}
        return (out.returncode, answer.get("disposition"), answer.get("reason")), took, timings


def sharded(binary, work, n):
    """N shards in turn, combined: the combined answer, each shard's seconds and timings."""
    with tempfile.TemporaryDirectory() as tmp:
        paths, took, timings = [], [], []
        for k in range(1, n + 1):
            path = os.path.join(tmp, f"shard-{k}.json")
            start = time.monotonic()
            subprocess.run([binary, "gate", "--base", "main", "--shard", f"{k}/{n}",
                            "--facts-out", path], cwd=work, env=ENV, capture_output=True)
            took.append(time.monotonic() - start)
            try:
                with open(path) as f:
                    timings.append(json.load(f).get("timings_ms", {}))
            except (OSError, ValueError):
                timings.append({})
            paths.append(path)
        out = subprocess.run([binary, "gate", "--combine", *paths, "--json"], cwd=work, env=ENV,
                             capture_output=True, text=True)
        try:
            answer = json.loads(out.stdout)
        except ValueError:
            answer = {}
        return (out.returncode, answer.get("disposition"), answer.get("reason")), took, timings


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--binary", required=True)
    ap.add_argument("--shards", type=int, default=3)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("projects", nargs="+", metavar="PROJECT=REPO")
    args = ap.parse_args()
    binary = str(pathlib.Path(args.binary).resolve())
    differ = False
    for spec in args.projects:
        name, _, mirror = spec.partition("=")
        if name not in history.PROJECTS:
            raise SystemExit(f"{name}: not one of {', '.join(history.PROJECTS)}")
        with tempfile.TemporaryDirectory(dir=os.environ.get("MEASURE_DIR")) as tmp:
            work = pathlib.Path(tmp) / name
            print(f"{name}: adopting at {history.PROJECTS[name]['tag']}", flush=True)
            history.adopt(binary, name, pathlib.Path(mirror).resolve(), work)
            example = history.ROOT / "examples" / history.PROJECTS[name]["example"]
            history.git(work, "checkout", "-q", "-B", "honest", "main")
            history.git(work, "apply", str(example / "patches" / "honest.patch"))
            history.commit(work, "honest")
            ones, longest, shares = [], [], []
            for i in range(args.repeat):
                one, one_took, one_timings = gate(binary, work)
                split, took, timings = sharded(binary, work, args.shards)
                print(f"  run {i + 1}: one machine {one} {one_took:.1f} s {one_timings}")
                print(f"         {args.shards} shards {split} "
                      + ", ".join(f"{t:.1f} s" for t in took))
                for k, t in enumerate(timings, 1):
                    print(f"           shard {k}: {t}")
                if split[1:] != one[1:]:
                    differ = True
                    print("  the split did not answer as the one machine did")
                ones.append(one_took)
                longest.append(max(took))
                shares.append(took)
            one_m, long_m = statistics.median(ones), statistics.median(longest)
            each = [statistics.median(s[k] for s in shares) for k in range(args.shards)]
            print(f"{name}: one machine {one_m:.1f} s; {args.shards} shards: longest "
                  f"{long_m:.1f} s = {long_m / one_m:.2f}x; each "
                  + ", ".join(f"{t:.1f}" for t in each) + f" (medians of {args.repeat})",
                  flush=True)
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
