#!/usr/bin/env python3
"""What the reading of a patch's code costs (CONTRACT.md 14.2): `patchgate read` on a patch of
about 5,000 added lines of real Python (boltons' own modules, from the sdist in
examples/gate-boltons, added as new files of the package) and 5,000 of real Rust (zeroize's
sources, from the crate in examples/gate-zeroize), against `git diff` of the same patch in the
same run (the baseline: what reading the patch at all costs). Medians of --repeat runs.

    cargo build --release && python3 scripts/bench_reading.py --repeat 9
"""

import argparse
import os
import pathlib
import statistics
import subprocess
import tarfile
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent


def git(cwd, *args):
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)


def repo_with_patch(scratch, archive, language, lines_wanted):
    """A repository: the sdist/crate as the base; the head adds copies of its own code
    files (the suffix `language` names) until about `lines_wanted` lines are added."""
    top = pathlib.Path(scratch) / language
    top.mkdir()
    with tarfile.open(archive) as t:
        t.extractall(top, filter="data")
    (src,) = [p for p in top.iterdir() if p.is_dir()]
    git(src, "init", "-q", "-b", "main")
    git(src, "-c", "user.email=b@e", "-c", "user.name=bench", "add", "-A")
    git(src, "-c", "user.email=b@e", "-c", "user.name=bench", "commit", "-qm", "base")
    suffix = {"python": ".py", "rust": ".rs"}[language]
    files = sorted(p for p in src.rglob("*" + suffix)
                   if "test" not in p.name and "tests" not in p.parts)
    added, n = 0, 0
    while added < lines_wanted:
        for f in files:
            text = f.read_text(encoding="utf-8", errors="replace")
            copy = f.with_name(f"{f.stem}_copy{n}{suffix}")
            copy.write_text(text, encoding="utf-8")
            added += text.count("\n")
            n += 1
            if added >= lines_wanted:
                break
    git(src, "-c", "user.email=b@e", "-c", "user.name=bench", "add", "-A")
    git(src, "-c", "user.email=b@e", "-c", "user.name=bench", "commit", "-qm", "head")
    return src, added


def timed(argv, cwd, repeat, ok=(0,)):
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        r = subprocess.run(argv, cwd=cwd, capture_output=True)
        times.append(time.perf_counter() - start)
        assert r.returncode in ok, (argv, r.returncode, r.stderr[-500:])
    return statistics.median(times)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=9)
    ap.add_argument("--lines", type=int, default=5000)
    ap.add_argument("--binary", default=str(ROOT / "target" / "release" / "patchgate"))
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        for language, archive in [
            ("python", ROOT / "examples/gate-boltons/boltons-26.2.0.tar.gz"),
            ("rust", ROOT / "examples/gate-zeroize/zeroize-1.9.2.crate"),
        ]:
            src, added = repo_with_patch(scratch, archive, language, args.lines)
            base = timed(["git", "diff", "HEAD~1", "HEAD"], src, args.repeat)
            read = timed([args.binary, "read", "--base", "HEAD~1", "--head", "HEAD", "--json"],
                         src, args.repeat, ok=(0, 2))
            print(f"{language}: {added} added lines; git diff {base * 1000:.1f} ms; "
                  f"patchgate read {read * 1000:.1f} ms ({read / base:.1f}x git diff)")


if __name__ == "__main__":
    main()
