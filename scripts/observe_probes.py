#!/usr/bin/env python3
"""The observed run's probes against coverage.py, on a real project (docs/design/observe.md).

Unpacks boltons 26.2.0 (the PyPI sdist vendored in examples/gate-boltons), then runs its 519
tests three ways, alternating, --repeat times each: plain pytest; the gate's own driver (the
`DRIVER` program in src/cli/gate/observe_driver.rs, read from the source) with every line of
`boltons/iterutils.py` watched; and coverage.py (branch measurement, the same file, one
context per test) — and compares what the two observers say of that file: statements counted,
run or not, the tests that ran each line, and branches no test took.

    python3 -m pip install coverage pytest && python3 scripts/observe_probes.py
"""

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FILE = "boltons/iterutils.py"
COVERAGE = r"""
import sys, coverage, pytest
out = sys.argv[1]
def ident(item):
    mod = getattr(getattr(item, "module", None), "__name__", "")
    cls = getattr(item, "cls", None)
    return mod + ("." + cls.__qualname__ if cls is not None else "") + "::" + (getattr(item, "originalname", None) or item.name)
cov = coverage.Coverage(data_file=None, branch=True, config_file=False, include=[sys.argv[2]])
cov.start()
class Contexts:
    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_protocol(self, item, nextitem):
        cov.switch_context(ident(item))
        yield
        cov.switch_context("")
code = pytest.main(sys.argv[3:], plugins=[Contexts()])
cov.stop()
cov.json_report(outfile=out, include=[sys.argv[2]], show_contexts=True)
sys.exit(int(code))
"""


def driver():
    source = open(os.path.join(ROOT, "src", "cli", "gate", "observe_driver.rs")).read()
    return re.search(r'const DRIVER: &str = r#"(.*?)"#;', source, re.S).group(1)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    env = dict(os.environ, PYTEST_DISABLE_PLUGIN_AUTOLOAD="1")
    with tempfile.TemporaryDirectory() as root:
        subprocess.run(["tar", "xzf", os.path.join(ROOT, "examples", "gate-boltons", "boltons-26.2.0.tar.gz"),
                        "--strip-components=1"], cwd=root, check=True)
        lines = sum(1 for _ in open(os.path.join(root, FILE)))
        pytest_args = ["-q", "-p", "no:cacheprovider", "tests"]
        probes_out, coverage_out = os.path.join(root, "probes.json"), os.path.join(root, "coverage.json")
        runs = {
            "plain pytest": [sys.executable, "-m", "pytest"] + pytest_args,
            "the gate's probes": [sys.executable, "-c", driver(), probes_out, f"{FILE}:1-{lines}", "--"] + pytest_args,
            "coverage.py": [sys.executable, "-c", COVERAGE, coverage_out, FILE] + pytest_args,
        }
        times = {name: [] for name in runs}
        for _ in range(args.repeat):
            for name, argv in runs.items():
                start = time.perf_counter()
                subprocess.run(argv, cwd=root, env=env, check=True, capture_output=True)
                times[name].append(time.perf_counter() - start)
        base = statistics.median(times["plain pytest"])
        print(f"boltons 26.2.0, 519 tests, every line of {FILE} watched; medians of {args.repeat}, alternating")
        for name, t in times.items():
            print(f"  {name:18} {statistics.median(t):6.2f} s  ({statistics.median(t) / base:.2f}x)")
        p = json.load(open(probes_out))["files"][FILE]
        c = json.load(open(coverage_out))["files"][FILE]
        ps = set(p["executed_lines"]) | set(p["missing_lines"])
        cs = set(c["executed_lines"]) | set(c["missing_lines"])
        both = ps & cs
        ran = lambda r: set(r["executed_lines"]) & both
        tests = lambda r, n: {x for x in r["contexts"].get(str(n), []) if x}
        print(f"statements: probes {len(ps)}, coverage.py {len(cs)}, both {len(both)}; "
              f"only the probes' {sorted(ps - cs)}; only coverage.py's {sorted(cs - ps)}")
        print(f"of those both count, run by one and not the other: {sorted(ran(p) ^ ran(c))}")
        print(f"ran under different tests: {[n for n in sorted(both) if tests(p, n) != tests(c, n)]}")
        pb = {tuple(b) for b in p["missing_branches"]}
        cb = {(f, t if t > 0 else -1) for f, t in c["missing_branches"]}
        print(f"branches no test took: probes {len(pb)}, coverage.py {len(cb)}; only the probes' {sorted(pb - cb)}; "
              f"only coverage.py's {sorted(cb - pb)}")


if __name__ == "__main__":
    main()
