#!/usr/bin/env python3
"""The seal against the coreutils pipeline it must equal, on the same tree, in the same run.

Two trees: 20,000 small files (100-600 bytes, 200 directories) and 4 files of 64 MiB. For each,
--repeat alternating runs of

    LC_ALL=C find fixtures -type f ! -name '*.seal' -print0 | LC_ALL=C sort -z \\
        | xargs -0 sha256sum | sha256sum                              (the baseline)
    patchgate seal fixtures                                           (all cores)
    taskset -c 0 patchgate seal fixtures                              (one core)

after one warm-up of each (so the page cache holds the tree for both), checking that the two
print the same line; prints medians and the ratios baseline / patchgate.

    cargo build --release && python3 scripts/bench_seal.py
"""

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

PIPELINE = ("LC_ALL=C find fixtures -type f ! -name '*.seal' -print0 | LC_ALL=C sort -z "
            "| xargs -0 sha256sum | sha256sum")


def small_tree(root):
    for d in range(200):
        path = os.path.join(root, "fixtures", f"set{d:03d}")
        os.makedirs(path)
        for f in range(100):
            with open(os.path.join(path, f"case{f:03d}.json"), "wb") as out:
                out.write(os.urandom(50 + (d * 7 + f * 13) % 275).hex().encode())


def large_tree(root):
    path = os.path.join(root, "fixtures")
    os.makedirs(path)
    block = os.urandom(1 << 20)
    for i in range(4):
        with open(os.path.join(path, f"blob{i}.bin"), "wb") as out:
            for _ in range(64):
                out.write(block)


def timed(cmd, cwd, shell=False):
    start = time.perf_counter()
    out = subprocess.run(cmd, cwd=cwd, shell=shell, check=True, capture_output=True, text=True)
    return time.perf_counter() - start, out.stdout


def bench(name, make, binary, repeat, taskset):
    root = tempfile.mkdtemp(prefix="bench-seal-")
    try:
        make(root)
        runs = {"coreutils": [], "patchgate": [], "patchgate, one core": []}
        commands = {
            "coreutils": (PIPELINE, True),
            "patchgate": ([binary, "seal", "fixtures"], False),
        }
        if taskset:
            commands["patchgate, one core"] = (["taskset", "-c", "0", binary, "seal", "fixtures"], False)
        else:
            del runs["patchgate, one core"]
        lines = set()
        for i in range(repeat + 1):
            for label, (cmd, shell) in commands.items():
                t, out = timed(cmd, root, shell)
                lines.add(out)
                if i > 0:  # the first round warms the page cache
                    runs[label].append(t)
        if len(lines) != 1:
            sys.exit(f"{name}: the seals differ: {lines}")
        med = {k: statistics.median(v) for k, v in runs.items()}
        base = med["coreutils"]
        print(f"{name}: coreutils {base * 1000:.0f} ms (median of {repeat})", flush=True)
        for label in runs:
            if label != "coreutils":
                print(f"  {label:<22} {med[label] * 1000:7.0f} ms  = {base / med[label]:.2f}x faster",
                      flush=True)
    finally:
        shutil.rmtree(root)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--binary", default="target/release/patchgate")
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    binary = os.path.abspath(args.binary)
    taskset = shutil.which("taskset") is not None
    print(f"cores: {os.cpu_count()}", flush=True)
    bench("20,000 small files", small_tree, binary, args.repeat, taskset)
    bench("4 x 64 MiB", large_tree, binary, args.repeat, taskset)


if __name__ == "__main__":
    main()
