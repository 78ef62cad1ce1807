#!/usr/bin/env python3
"""What evidence integrity (CONTRACT.md section 11) costs on the honest example patch.

Builds `examples/gate-python` as a git repository (base `main`, the `good-fix` patch on top)
twice: with the starter's config (receipts `{junit}`, the census, the canary, integrity after
every run), and with all of that off (the same config without `{junit}`, the census and the
canary; the integrity check after every run cannot be turned off, so its own seconds are read
from the gate's stderr).
Gates each --repeat times and reports medians, against the baseline measured in the same run:
the same pytest commands the gate runs (two runs of each in-locality property, then the
suite), run plainly in the checkout, one after the other.

    cargo build --release && python3 scripts/bench_receipts.py --binary target/release/patchgate
"""

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXAMPLE = os.path.join(ROOT, "examples", "gate-python")
PYTEST = ["python3", "-P", "-s", "--check-hash-based-pycs", "always", "-m", "pytest", "-q",
          "-p", "no:cacheprovider", "-p", "_hypothesis_pytestplugin"]


def sh(cwd, *args, **kw):
    return subprocess.run(args, cwd=cwd, check=True, capture_output=True, **kw)


def build(root, receipts):
    shutil.copytree(os.path.join(EXAMPLE, "repo"), root, dirs_exist_ok=True)
    if not receipts:
        config = os.path.join(root, "patchgate.toml")
        text = open(config).read()
        at = text.index("\n[canary]\n") + 1
        end = at + text[at:].index("\n[sandbox]\n") + 1
        text = text[:at] + text[end:]
        text = text.replace('"--junitxml={junit}", ', "").replace('census = "suite.census"\n', "")
        # A batched command needs receipts: one process per property and run.
        text = text.replace("properties/test_{ids}.py", "properties/test_{id}.py").replace('case = "properties.test_{id}"\n', "")
        open(config, "w").write(text)
    env = {"GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@b", "GIT_COMMITTER_NAME": "b",
           "GIT_COMMITTER_EMAIL": "b@b"}
    os.environ.update(env)
    sh(root, "git", "init", "-q", "-b", "main")
    sh(root, "git", "add", "-A")
    sh(root, "git", "commit", "-q", "-m", "base")
    sh(root, "git", "checkout", "-q", "-b", "patch")
    sh(root, "git", "apply", os.path.join(EXAMPLE, "patches", "good-fix.patch"))
    sh(root, "git", "commit", "-q", "-am", "good fix")


def gate(binary, root):
    started = time.monotonic()
    run = subprocess.run([binary, "gate", "--base", "main"], cwd=root, capture_output=True, text=True)
    wall = time.monotonic() - started
    if run.returncode != 0:
        sys.exit(f"the honest patch did not merge (exit {run.returncode}):\n{run.stderr}")
    checked = re.search(r"integrity: the copy checked after (\d+) runs? \(([0-9.]+) s\)", run.stderr)
    return wall, float(checked.group(2)) if checked else 0.0, int(checked.group(1)) if checked else 0


def plain(root):
    """The gate's commands, run plainly in the checkout: 2 runs of each pricing property, then
    the suite."""
    started = time.monotonic()
    env = dict(os.environ, PYTEST_DISABLE_PLUGIN_AUTOLOAD="1")
    for prop in ["discount_bounded", "discount_monotonic"]:
        for _ in range(2):
            subprocess.run(PYTEST + [f"properties/test_{prop}.py"], cwd=root, env=env,
                           capture_output=True, check=True)
    subprocess.run(PYTEST + ["tests"], cwd=root, env=env, capture_output=True, check=True)
    return time.monotonic() - started


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--binary", type=os.path.abspath, default=os.path.join(ROOT, "target", "release", "patchgate"))
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        on, off = os.path.join(tmp, "on"), os.path.join(tmp, "off")
        build(on, True)
        build(off, False)
        runs = {"plain": [], "on": [], "off": [], "integrity": []}
        checks = 0
        for _ in range(args.repeat):
            runs["plain"].append(plain(on))
            sh(on, "git", "clean", "-qfdx")
            wall, integrity, checks = gate(args.binary, on)
            runs["on"].append(wall)
            runs["integrity"].append(integrity)
            runs["off"].append(gate(args.binary, off)[0])
        m = {k: statistics.median(v) for k, v in runs.items()}
        print(f"plain pytest, the gate's 5 commands: {m['plain']:.3f} s (baseline)")
        print(f"gate, receipts + census + canary:     {m['on']:.3f} s  ({m['on'] / m['plain']:.2f}x)")
        print(f"gate, all of that off:                {m['off']:.3f} s  ({m['off'] / m['plain']:.2f}x)")
        print(f"  of which the integrity checks:      {m['integrity']:.3f} s over {checks} checks "
              f"({m['integrity'] / max(checks, 1) * 1000:.1f} ms each)")


if __name__ == "__main__":
    main()
