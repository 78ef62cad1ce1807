#!/usr/bin/env python3
"""What a re-proof or an admission mutant run saves by not shrinking (issue 50).

toolz 1.0.0 (examples/gate-toolz) with its `mutant-unique` applied: the property
`unique_keeps_first` fails on it. Its test file is run by pytest as the property command runs
it, `--runs` times each way, alternating, each with a fresh example database (so no run replays
another's counterexample): as written (hypothesis shrinks the failure), and with the lines
patchgate prepends to a run that only detects (`DETECT_ONLY` in src/cli/gate/twin.rs: every
phase but `shrink`). Prints the medians and their ratio; same machine, same run.

    python3 scripts/bench_shrink.py --runs 5
"""

import argparse
import os
import shutil
import statistics
import subprocess
import tarfile
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
EXAMPLE = os.path.join(HERE, "..", "examples", "gate-toolz")
PROPERTY = "properties/test_unique_keeps_first.py"


def detect_only_prelude():
    """DETECT_ONLY, read from the Rust source so the bench runs what the gate writes."""
    src = open(os.path.join(HERE, "..", "src", "cli", "gate", "twin.rs")).read()
    start = src.index('const DETECT_ONLY: &str = "') + len('const DETECT_ONLY: &str = "')
    end = src.index('";\n', start)
    return src[start:end].encode().decode("unicode_escape")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=5)
    args = ap.parse_args()
    work = tempfile.mkdtemp(prefix="bench-shrink-", dir="/var/tmp")
    with tarfile.open(os.path.join(EXAMPLE, "toolz-1.0.0.tar.gz")) as t:
        t.extractall(work, filter="data")
    tree = os.path.join(work, "toolz-1.0.0")
    shutil.copytree(os.path.join(EXAMPLE, "overlay"), tree, dirs_exist_ok=True)
    subprocess.run(["patch", "-s", "-p1", "-i",
                    os.path.join(EXAMPLE, "patches", "mutant-unique.patch")], cwd=tree, check=True)
    plain = open(os.path.join(tree, PROPERTY), "rb").read()
    detect = detect_only_prelude().encode() + plain
    env = dict(os.environ, PYTEST_DISABLE_PLUGIN_AUTOLOAD="1")
    times = {"shrinks": [], "detects": []}
    for _ in range(args.runs):
        for kind, text in (("shrinks", plain), ("detects", detect)):
            open(os.path.join(tree, PROPERTY), "wb").write(text)
            shutil.rmtree(os.path.join(tree, ".hypothesis"), ignore_errors=True)
            started = time.monotonic()
            r = subprocess.run(["python3", "-P", "-s", "-m", "pytest", "-q", "-p", "no:cacheprovider",
                                "-p", "_hypothesis_pytestplugin", PROPERTY],
                               cwd=tree, env=env, capture_output=True)
            times[kind].append(time.monotonic() - started)
            assert r.returncode == 1, (kind, r.stdout[-500:])
    shrinks, detects = statistics.median(times["shrinks"]), statistics.median(times["detects"])
    print(f"mutant run of unique_keeps_first on toolz 1.0.0, median of {args.runs}: "
          f"shrinking {shrinks:.2f} s, detecting only {detects:.2f} s ({detects / shrinks:.2f}x)")
    shutil.rmtree(work)


if __name__ == "__main__":
    main()
