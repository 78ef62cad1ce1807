#!/usr/bin/env python3
"""Issue 53: does a gate split in N shards decide as one machine does?

For each patch of an example (or the patches named), the example's repository is made (the
base commit on `main`, the patch on `patch`), gated once on one machine, and gated again as N
shards (`--shard K/N --facts-out`, run one after the other: one machine standing in for N
jobs) whose facts are combined (`--combine`). It prints, per patch, both answers' disposition,
reason and failing case ids, and the wall seconds of the one-machine gate, of the longest
shard and of all shards; then the totals. Exit 1 when any patch's answers differ.

    python3 scripts/shards_agree.py examples/gate-python 3 [PATCH...]
    python3 scripts/shards_agree.py examples/gate-python 1,2,4 good-fix broken-case

The patchgate binary is target/release/patchgate (or $PATCHGATE).
"""

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BIN = os.environ.get("PATCHGATE", os.path.join(ROOT, "target", "release", "patchgate"))
ENV = dict(os.environ, PYTEST_DISABLE_PLUGIN_AUTOLOAD="1")
ENV.pop("GITHUB_ACTIONS", None)


def git(cwd, *args):
    subprocess.run(["git", "-c", "user.email=gate@example.com", "-c", "user.name=gate", *args],
                   cwd=cwd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def repository(example, patch, into):
    """The example's repo with `patch` on branch `patch` (its `.base.patch` on the base)."""
    shutil.copytree(os.path.join(example, "repo"), into, symlinks=True)
    patches = os.path.join(example, "patches")
    git(into, "init", "-q", "-b", "main")
    base_patch = os.path.join(patches, patch + ".base.patch")
    if os.path.exists(base_patch):
        git(into, "apply", base_patch)
    git(into, "add", "-A")
    git(into, "commit", "-q", "-m", "base")
    git(into, "checkout", "-q", "-b", "patch")
    git(into, "apply", "--binary", os.path.join(patches, patch + ".patch"))
    git(into, "add", "-A")
    git(into, "commit", "-q", "-m", patch)


def answer(args, cwd):
    """(disposition, reason, failing case ids) of a gate, and its wall seconds."""
    out = tempfile.mktemp(suffix=".json")
    start = time.monotonic()
    subprocess.run([BIN, "gate", *args, "--json-out", out], cwd=cwd, env=ENV,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    took = time.monotonic() - start
    try:
        with open(out) as f:
            a = json.load(f)
        os.unlink(out)
    except (OSError, ValueError):
        return ("no answer", "", ()), took
    return (a["disposition"], a["reason"], tuple(sorted(c["id"] for c in a.get("failures", [])))), took


def sharded(cwd, n, facts_dir):
    """The combined answer of `n` shards run in turn, and each shard's wall seconds."""
    paths, took = [], []
    for k in range(1, n + 1):
        path = os.path.join(facts_dir, f"shard-{k}.json")
        start = time.monotonic()
        subprocess.run([BIN, "gate", "--base", "main", "--shard", f"{k}/{n}", "--facts-out", path],
                       cwd=cwd, env=ENV, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        took.append(time.monotonic() - start)
        paths.append(path)
    combined, _ = answer(["--combine", *paths], cwd)
    return combined, took


def main():
    example, counts = os.path.abspath(sys.argv[1]), [int(n) for n in sys.argv[2].split(",")]
    patches = sys.argv[3:] or sorted(
        p[: -len(".patch")] for p in os.listdir(os.path.join(example, "patches"))
        if p.endswith(".patch") and not p.endswith(".base.patch") and not p.endswith(".later.patch"))
    differ, totals = 0, {"one": 0.0}
    for patch in patches:
        with tempfile.TemporaryDirectory() as tmp:
            repo = os.path.join(tmp, "repo")
            try:
                repository(example, patch, repo)
            except subprocess.CalledProcessError:
                print(f"{patch}: not applied, skipped")
                continue
            one, one_took = answer(["--base", "main"], repo)
            totals["one"] += one_took
            row = [f"{patch}: one machine {one[0]} {one[1]} {list(one[2])} {one_took:.1f}s"]
            for n in counts:
                combined, took = sharded(repo, n, tmp)
                totals.setdefault(f"{n} longest", 0.0)
                totals.setdefault(f"{n} all", 0.0)
                totals[f"{n} longest"] += max(took)
                totals[f"{n} all"] += sum(took)
                same = combined == one
                differ += not same
                row.append(f"  {n} shards {'same' if same else 'DIFFER: ' + repr(combined)}"
                           f" (longest {max(took):.1f}s, all {sum(took):.1f}s)")
            print("\n".join(row), flush=True)
    print("totals (s): " + ", ".join(f"{k} {v:.1f}" for k, v in totals.items()))
    print(f"{differ} answers differ")
    sys.exit(1 if differ else 0)


if __name__ == "__main__":
    main()
