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

The clean room's cost (CONTRACT.md section 12), in the same run:

  - the copy of the judged tree the runs work on (what the gate's stderr reports), against
    `git archive HEAD | tar -x`, the standard tools' export of the same tree;
  - the sandbox's cost per run: the seconds the same commands took inside bubblewrap
    (`[sandbox] mode = "required"`) and without it (`mode = "off"`, a second repository built
    the same way), divided by the number of runs.

    cargo build --release && python3 scripts/bench_gate.py --binary target/release/patchgate
"""

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

FILES = 20_000
# Where the gate makes its room without TMPDIR, when /dev/shm has space (src/cli/sandbox.rs).
ROOM_PARENT = os.environ.get("TMPDIR") or ("/dev/shm" if os.path.isdir("/dev/shm") else "/var/tmp")
PROPERTIES = 500


def sh(cwd, *args, **kw):
    return subprocess.run(args, cwd=cwd, check=True, capture_output=True, **kw)


def build(root, mode="required"):
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
    # The starter's shape (batched properties, receipts), with commands that test nothing: one
    # process per run writes a passing case for each property it is given.
    os.makedirs(os.path.join(root, "checks"))
    with open(os.path.join(root, "checks", "batch.sh"), "w") as out:
        out.write('out=$1; shift\n{ printf "<testsuite>"; for id in "$@"; do '
                  'printf \'<testcase classname="p.%s" name="t"/>\' "$id"; done; printf "</testsuite>"; } > "$out"\n')
    with open(os.path.join(root, "patchgate.toml"), "w") as out:
        out.write(
            'debt_cap = 5\n'
            '[properties]\ncommand = ["sh", "checks/batch.sh", "{junit}", "{ids}"]\ncase = "p.{id}"\n'
            'runs = 2\ntimeout_s = 60\n'
            '[suite]\ncommand = ["sh", "checks/batch.sh", "{junit}", "suite"]\ntimeout_s = 60\n'
            f'[sandbox]\nmode = "{mode}"\n'
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
    # Packed, as a clone (a CI checkout) has its objects: 20,000 loose objects cost git a file
    # each to read, three times the export.
    sh(root, "git", "repack", "-adq")


def developer_checkout(root, work, run, *command):
    """A developer's checkout of `root`'s main in `work`, `command` run there once to build it,
    then moved to the patch: `(plain, restore)`, where `plain()` runs `command` (it recompiles
    what the patch changed) and `restore()` puts back the target/ built on main."""
    checkout, snapshot = os.path.join(work, "checkout"), os.path.join(work, "target-of-main")
    run(root, "git", "worktree", "add", "-q", "--detach", checkout, "main")
    plain = lambda: run(checkout, *command)
    plain()
    run(work, "cp", "-a", os.path.join(checkout, "target"), snapshot)
    run(checkout, "git", "checkout", "-q", "--detach", "patch")

    def restore():
        shutil.rmtree(os.path.join(checkout, "target"))
        run(work, "cp", "-a", snapshot, os.path.join(checkout, "target"))

    return plain, restore


def timed(fn):
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def gate_full(root, binary, i):
    """One full gate: (wall seconds, seconds its commands took, runs, copy seconds, stdout)."""
    ledger = os.path.join(root, f".ledger-{i}.jsonl")
    start = time.perf_counter()
    out = subprocess.run(
        [binary, "gate", "--base", "main", "--jobs", "1", "--ledger", ledger,
         "--markdown-out", os.path.join(root, ".report.md"), "--json-out", os.path.join(root, ".answer.json")],
        cwd=root, capture_output=True, text=True)
    wall = time.perf_counter() - start
    if out.returncode != 0:
        sys.exit(f"the gate did not merge the patch (exit {out.returncode}): {out.stdout}{out.stderr}")
    rows = [json.loads(l) for l in open(ledger)]
    copied = re.search(r"copied \((\d+) files, ([0-9.]+) s\)", out.stderr)
    runs = len(re.findall(r"run \d+/\d+(?: \(\d+ properties\))?: (?:exit|stopped)", out.stderr)) + \
        len(re.findall(r"t2-fixtures: (?:exit|stopped)", out.stderr))
    return wall, sum(r["seconds"] for r in rows), runs, float(copied.group(2)), out.stdout


ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# The real Python rows: a PyPI sdist, the user's overlay (catalog, properties, fixtures), then
# `patchgate init` as a user runs it. boltons: five light properties beside a larger suite of
# its own tests. toolz: four heavy ones (300 hypothesis examples each) that are part of its
# suite too, every one admitted with its mutant (`require_admission`), so the re-proof runs.
PROJECTS = {
    "boltons": {
        "dir": "gate-boltons", "sdist": "boltons-26.2.0.tar.gz", "import": "boltons.iterutils",
        "says": "boltons 26.2.0 (PyPI sdist), five light properties outside its suite",
        "patch": "chunked: a list comprehension", "suite": None, "admit": {},
    },
    "toolz": {
        "dir": "gate-toolz", "sdist": "toolz-1.0.0.tar.gz", "import": "toolz",
        "says": "toolz 1.0.0 (PyPI sdist), four heavy properties (300 examples each) also in its suite, all admitted",
        "patch": "frequencies: an explicit add", "suite": ["toolz/tests", "properties"],
        "admit": {"unique_keeps_first": "mutant-unique", "groupby_partitions": "mutant-groupby",
                  "partition_all_roundtrip": "mutant-partition", "sliding_window_slices": "mutant-sliding"},
    },
    # Issue 64: attrs set up as the guide says (`pythonpath = ["src"]`, attrs also installed in
    # the interpreter), its test that fails on CPython 3.11 frozen in the overlay's ledger (left
    # out of the plain run too), the starter's [observe] on.
    "attrs": {
        "dir": "gate-attrs", "sdist": "attrs-26.1.0.tar.gz", "import": "attr",
        "says": "attrs 26.1.0 (PyPI sdist, src/ layout), two hypothesis properties outside its suite, admitted",
        "patch": "evolve: one condition", "suite": None, "pythonpath": "src",
        "deselect": ["tests/test_converters.py::TestPipe::test_wrapped_annotation"],
        "admit": {"evolve_replaces_only_what_is_named": "mutant-evolve", "asdict_roundtrip": "mutant-asdict"},
    },
}


def build_project(root, binary, spec):
    """A real project set up as a user would: the sdist, the overlay, `patchgate init` (the
    starter: receipts, the canary importing the package, the census), the suite's paths where
    the project keeps its tests, the seal, each property admitted on its mutant, and
    `patchgate census --write`, committed to `main`; the honest one-line patch on `patch`."""
    project = os.path.join(ROOT, "examples", spec["dir"])
    sh(root, "tar", "xzf", os.path.join(project, spec["sdist"]), "--strip-components=1")
    shutil.copytree(os.path.join(project, "overlay"), root, dirs_exist_ok=True)
    if spec.get("pythonpath"):
        pyproject = os.path.join(root, "pyproject.toml")
        text = open(pyproject).read()
        mine = text.replace("[tool.pytest.ini_options]\n", f'[tool.pytest.ini_options]\npythonpath = ["{spec["pythonpath"]}"]\n', 1)
        assert mine != text, "the project's pytest config"
        open(pyproject, "w").write(mine)
    sh(root, binary, "init")
    canary = os.path.join(root, "properties", "patchgate_canary.py")
    text = open(canary).read()
    mine = text.replace("# import mypackage  # noqa: F401  (your package: make the canary see what it does at import)",
                        f"import {spec['import']}  # noqa: F401")
    assert mine != text, "the starter's canary"
    open(canary, "w").write(mine)
    if spec["suite"]:
        config = os.path.join(root, "patchgate.toml")
        text = open(config).read()
        mine = text.replace('"--junitxml={junit}", "tests"', '"--junitxml={junit}", ' +
                            ", ".join(f'"{p}"' for p in spec["suite"]))
        assert mine.count(spec["suite"][0]) == 2, "the starter's suite and test command"
        open(config, "w").write(mine)
    with open(os.path.join(root, "fixtures.seal.expected"), "wb") as out:
        out.write(sh(root, binary, "seal", "fixtures").stdout)
    sh(root, "git", "init", "-q", "-b", "main")
    sh(root, "git", "add", "-A")
    sh(root, "git", "commit", "-q", "-m", "the project and its gate")
    if spec["admit"]:
        for pid, mutant in spec["admit"].items():
            sh(root, "git", "checkout", "-q", "-b", mutant, "main")
            sh(root, "git", "apply", os.path.join(project, "patches", f"{mutant}.patch"))
            sh(root, "git", "commit", "-q", "-am", mutant)
            sh(root, "git", "checkout", "-q", "main")
        for pid, mutant in spec["admit"].items():
            sh(root, binary, "admit", pid, "--mutant", mutant, "--write")
        config = os.path.join(root, "patchgate.toml")
        text = open(config).read()
        open(config, "w").write(text.replace("require_admission = false", "require_admission = true"))
        sh(root, "git", "add", "-A")
        sh(root, "git", "commit", "-q", "-m", "the proofs")
    sh(root, binary, "census", "--write")
    sh(root, "git", "add", "suite.census")
    sh(root, "git", "commit", "-q", "-m", "the census")
    sh(root, "git", "checkout", "-q", "-b", "patch")
    sh(root, "git", "apply", os.path.join(project, "patches", "honest.patch"))
    sh(root, "git", "commit", "-q", "-am", spec["patch"])


# `--replay`: the starter's commented `[replay]` turned on, every rule required (issue 66).
REPLAY = """
[replay]
behaves_under_test = "required"
unobserved_difference = "required"
special_case = "required"
unasserted_difference = "required"
calls = 10
"""


def project(binary, repeat, name, replay=False):
    """A real-project row: `patchgate gate` on the honest patch against a plain pytest of the
    same suite (the suite's own command, its receipt flag left out) in a checkout, alternating,
    --repeat times each after a warm-up; medians. With `replay`, then the same with `[replay]`
    on (committed to the base), alternating with the plain run again: before and after in one
    run."""
    import tomllib
    spec = PROJECTS[name]
    with tempfile.TemporaryDirectory() as root:
        build_project(root, binary, spec)
        config = tomllib.load(open(os.path.join(root, "patchgate.toml"), "rb"))
        plain_argv = [a for a in config["suite"]["command"] if "{junit}" not in a]
        plain_argv += [a for d in spec.get("deselect", []) for a in ("--deselect", d)]
        env = dict(os.environ, PYTEST_DISABLE_PLUGIN_AUTOLOAD="1")
        tests = None

        def plain():
            nonlocal tests
            out = subprocess.run(plain_argv, cwd=root, env=env, capture_output=True, text=True)
            if out.returncode != 0:
                sys.exit(f"plain pytest failed:\n{out.stdout[-2000:]}")
            tests = re.search(r"(\d+) passed", out.stdout).group(1)

        def gate(jobs=None):
            extra = ["--jobs", str(jobs)] if jobs else []
            out = subprocess.run([binary, "gate", "--base", "main", "--json"] + extra, cwd=root, env=env,
                                 capture_output=True, text=True)
            if out.returncode != 0:
                sys.exit(f"the honest patch did not merge (exit {out.returncode}):\n{out.stdout[-3000:]}\n{out.stderr[-3000:]}")
            return json.loads(out.stdout), out.stderr

        plain()
        answer, said = gate()
        plains, gates, in_turn = [], [], []
        for _ in range(repeat):
            plains.append(timed(plain))
            gates.append(timed(gate))
            in_turn.append(timed(lambda: gate(1)))
        med = statistics.median
        t1 = next(s for s in answer["steps"] if s["step"] == "properties")
        voting = [p["id"] for p in t1["properties"] if p["vote"] == "yes"]
        processes = len(re.findall(r": (?:exit \d+|stopped|killed)", said))
        print(f"real project: {spec['says']}; {tests} tests in the plain run, {len(voting)} voting "
              f"properties in the patch's locality; receipts, canary, census and integrity on")
        print(f"plain pytest of the suite (baseline): {med(plains):.2f} s")
        print(f"patchgate gate:                       {med(gates):.2f} s  ({med(gates) / med(plains):.2f}x the baseline; target <= 1.5x)")
        print(f"patchgate gate --jobs 1:              {med(in_turn):.2f} s  ({med(in_turn) / med(plains):.2f}x)")
        print(f"  test processes the gate started: {processes}; where the time went (last gate, ms): {answer.get('timings_ms')}")
        print(f"answer: {answer['disposition']} reason={answer['reason']}")
        if not replay:
            return
        sh(root, "git", "checkout", "-q", "main")
        with open(os.path.join(root, "patchgate.toml"), "a") as f:
            f.write(REPLAY)
        sh(root, "git", "commit", "-q", "-am", "[replay] on")
        sh(root, "git", "checkout", "-q", "patch")
        answer, _ = gate()
        plains2, replays = [], []
        for _ in range(repeat):
            plains2.append(timed(plain))
            replays.append(timed(gate))
        behavior = next((s for s in answer["steps"] if s["step"] == "behavior"), {})
        print(f"plain pytest again:                   {med(plains2):.2f} s")
        print(f"patchgate gate, [replay] on:          {med(replays):.2f} s  ({med(replays) / med(plains2):.2f}x the plain run; "
              f"{med(replays) / med(gates):.2f}x the gate without it)")
        print(f"  behavior: {behavior.get('summary', '')[:300]}")
        print(f"  where the time went (last gate, ms): {answer.get('timings_ms')}")
        print(f"answer: {answer['disposition']} reason={answer['reason']}")


RUST = os.path.join(ROOT, "examples", "gate-rust")


def rust(binary, repeat):
    """The Rust row: `examples/gate-rust` gated on its good fix with the build cache
    `patchgate warm` kept from the base, against a warm `cargo nextest run` of the same patch in
    a developer's checkout (its target/ built on the base, then the patch checked out: both
    compile what the patch changed and run the tests), alternating, --repeat times each;
    medians. Also, for scale: the gate with no cache (every room builds from nothing) and
    nextest with nothing to compile."""
    env = {k: v for k, v in os.environ.items() if k != "CARGO_TARGET_DIR"}
    for k, v in {"GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@b", "GIT_COMMITTER_NAME": "b",
                 "GIT_COMMITTER_EMAIL": "b@b"}.items():
        env[k] = v
    with tempfile.TemporaryDirectory() as root, tempfile.TemporaryDirectory() as work:
        run = lambda cwd, *a: subprocess.run(a, cwd=cwd, env=env, check=True, capture_output=True, text=True)
        shutil.copytree(os.path.join(RUST, "repo"), root, dirs_exist_ok=True)
        run(root, "git", "init", "-q", "-b", "main")
        run(root, "git", "add", "-A")
        run(root, "git", "commit", "-q", "-m", "base")
        run(root, "git", "checkout", "-q", "-b", "patch")
        run(root, "git", "apply", os.path.join(RUST, "patches", "good-fix.patch"))
        run(root, "git", "commit", "-q", "-am", "good fix")
        run(root, "git", "checkout", "-q", "main")
        run(root, binary, "warm")
        nextest, restore = developer_checkout(root, work, run, "cargo", "nextest", "run", "--offline")

        current = os.path.join(root, ".git", "patchgate", "build", "current")

        def gate(cold=False):
            if cold:
                os.rename(current, current + ".off")
            try:
                out = subprocess.run([binary, "gate", "--base", "main", "--head", "patch", "--json"], cwd=root,
                                     env=env, capture_output=True, text=True)
            finally:
                if cold:
                    os.rename(current + ".off", current)
            if out.returncode != 0 or ("restored" in out.stderr) == cold:
                sys.exit(f"the good fix did not merge as expected (exit {out.returncode}):\n{out.stderr[-3000:]}")
            return json.loads(out.stdout)

        answer = gate()
        plains, noop, gates, colds = [], [], [], []
        for _ in range(repeat):
            restore()
            plains.append(timed(nextest))
            noop.append(timed(nextest))
            gates.append(timed(gate))
            colds.append(timed(lambda: gate(cold=True)))
        med = statistics.median
        print("rust: examples/gate-rust, the good fix (src/lib.rs), build cache from `patchgate warm` on the base")
        print(f"cargo nextest run, warm, the patch compiled (baseline): {med(plains):.2f} s")
        print(f"patchgate gate, from the build cache:                  {med(gates):.2f} s  "
              f"({med(gates) / med(plains):.2f}x the baseline; target <= 1.5x)")
        print(f"patchgate gate, no cache (the room builds everything): {med(colds):.2f} s  ({med(colds) / med(plains):.2f}x)")
        print(f"cargo nextest run, nothing to compile:                 {med(noop):.2f} s")
        print(f"  where the time went (last gate, ms): {answer.get('timings_ms')}")
        print(f"answer: {answer['disposition']} reason={answer['reason']}")


ZEROIZE = os.path.join(ROOT, "examples", "gate-zeroize")


def zeroize(binary, repeat):
    """The real-crate row (issue 35): zeroize 1.9.2 from crates.io set up as
    tests/real_projects.rs sets it up (init --rust, the canary declared and calling into the
    crate, `--features std`, warm, census, both properties admitted), its honest patch
    (src/lib.rs) gated from the build cache, against a developer's `cargo test` of the same
    patch in a checkout whose target/ was built on the base (it recompiles what the patch
    changed and runs the tests), alternating, --repeat times each; medians. Also: the gate
    with no cache, and the re-proof's own cost (its phase in timings_ms)."""
    env = {k: v for k, v in os.environ.items() if k != "CARGO_TARGET_DIR"}
    env.update({"GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@b", "GIT_COMMITTER_NAME": "b",
                "GIT_COMMITTER_EMAIL": "b@b", "RUSTC_BOOTSTRAP": "1"})
    with tempfile.TemporaryDirectory() as root, tempfile.TemporaryDirectory() as work:
        run = lambda cwd, *a: subprocess.run(a, cwd=cwd, env=env, check=True, capture_output=True, text=True)
        run(root, "tar", "xzf", os.path.join(ZEROIZE, "zeroize-1.9.2.crate"), "--strip-components=1")
        shutil.copytree(os.path.join(ZEROIZE, "overlay"), root, dirs_exist_ok=True)
        manifest = os.path.join(root, "Cargo.toml")
        declare = lambda name: open(manifest, "a").write(f'\n[[test]]\nname = "{name}"\npath = "tests/{name}.rs"\n')
        declare("properties")
        declare("pinned")
        run(root, binary, "init", "--rust")
        declare("patchgate_canary")
        canary = os.path.join(root, "tests", "patchgate_canary.rs")
        text = open(canary).read()
        open(canary, "w").write(text.replace(
            "    // let _ = mycrate::some_function();  // your crate: make the canary see what it does",
            "    let mut v = vec![1u8];\n    zeroize::Zeroize::zeroize(&mut v);"))
        config = os.path.join(root, "patchgate.toml")
        text = open(config).read()
        open(config, "w").write(text.replace('"--offline"', '"--offline", "--features", "std"')
                                .replace("--offline ", "--offline --features std "))
        with open(os.path.join(root, "fixtures.seal.expected"), "wb") as out:
            out.write(subprocess.run([binary, "seal", "fixtures"], cwd=root, check=True, capture_output=True).stdout)
        run(root, "git", "init", "-q", "-b", "main")
        run(root, "git", "add", "-A")
        run(root, "git", "commit", "-q", "-m", "zeroize and its gate")
        run(root, "cargo", "fetch", "--quiet")
        run(root, binary, "warm")
        run(root, binary, "census", "--write")
        run(root, "git", "add", "-A")
        run(root, "git", "commit", "-q", "-m", "census")
        proofs = [("vec_zeroize_clears_the_allocation", "mutant-vec"),
                  ("array_zeroize_zeroes_every_element", "mutant-array")]
        for _, mutant in proofs:
            run(root, "git", "checkout", "-q", "-b", mutant, "main")
            run(root, "git", "apply", os.path.join(ZEROIZE, "patches", f"{mutant}.patch"))
            run(root, "git", "commit", "-q", "-am", mutant)
            run(root, "git", "checkout", "-q", "main")
        for pid, mutant in proofs:
            run(root, binary, "admit", pid, "--mutant", mutant, "--write")
        run(root, "git", "add", "-A")
        run(root, "git", "commit", "-q", "-m", "proofs")
        run(root, binary, "warm")
        run(root, "git", "checkout", "-q", "-b", "patch")
        run(root, "git", "apply", os.path.join(ZEROIZE, "patches", "honest.patch"))
        run(root, "git", "commit", "-q", "-am", "honest")
        run(root, "git", "checkout", "-q", "main")
        plain, restore = developer_checkout(root, work, run, "cargo", "test", "--quiet", "--offline", "--features", "std")

        current = os.path.join(root, ".git", "patchgate", "build", "current")

        def gate(cold=False):
            if cold:
                os.rename(current, current + ".off")
            try:
                out = subprocess.run([binary, "gate", "--base", "main", "--head", "patch", "--json"], cwd=root,
                                     env=env, capture_output=True, text=True)
            finally:
                if cold:
                    os.rename(current + ".off", current)
            if out.returncode != 0:
                sys.exit(f"the honest patch did not merge (exit {out.returncode}):\n{out.stderr[-3000:]}")
            return json.loads(out.stdout)

        answer = gate()
        plains, noop, gates, colds, reproofs, cold_reproofs = [], [], [], [], [], []
        for _ in range(repeat):
            restore()
            plains.append(timed(plain))
            noop.append(timed(plain))
            gates.append(timed(lambda: reproofs.append(gate().get("timings_ms", {}).get("reproof", 0))))
            colds.append(timed(lambda: cold_reproofs.append(
                gate(cold=True).get("timings_ms", {}).get("reproof", 0))))
        med = statistics.median
        print("real crate: zeroize 1.9.2 (crates.io), its honest patch (src/lib.rs); build cache from `patchgate warm`")
        print(f"cargo test, the patch recompiled (baseline):           {med(plains):.2f} s")
        print(f"patchgate gate, from the build cache:                  {med(gates):.2f} s  "
              f"({med(gates) / med(plains):.2f}x the baseline; target <= 1.5x)")
        print(f"  of which the re-proof (from the built copy):         {med(reproofs) / 1000:.2f} s")
        print(f"patchgate gate, no cache (the room builds everything): {med(colds):.2f} s  ({med(colds) / med(plains):.2f}x)")
        print(f"  of which the re-proof (from the built copy):         {med(cold_reproofs) / 1000:.2f} s")
        print(f"cargo test, nothing to compile:                        {med(noop):.2f} s")
        print(f"  where the time went (last gate, ms): {answer.get('timings_ms')}")
        print(f"answer: {answer['disposition']} reason={answer['reason']}")


# Crates from crates.io adopted as a new user adopts one with the Rust starter (issue 68): the
# .crate downloaded once into ~/.cache/patchgate-bench, its canary calling into it, an empty
# sealed fixtures directory, `warm`, `census --write`; and an honest patch that changes code
# lines the tests run (a refactor that keeps the behaviour), as (file, old text, new text).
CRATES = {
    "strsim": ("strsim", "0.11.1", 'let _ = strsim::hamming("a", "b");', (
        "src/lib.rs",
        "                if x != y {\n                    count += 1;\n                }\n",
        "                count += usize::from(x != y);\n")),
    "semver": ("semver", "1.0.27", 'let _ = semver::Version::parse("1.0.0");', (
        "src/eval.rs",
        "    for cmp in &req.comparators {\n        if !matches_impl(cmp, ver) {\n            return false;\n        }\n    }\n",
        "    if !req.comparators.iter().all(|cmp| matches_impl(cmp, ver)) {\n        return false;\n    }\n")),
}


def registry_crate(binary, repeat, name):
    """A crate from crates.io under the Rust starter (`[observe]` on, no property: the starter's
    first day), its honest patch gated from the build cache, against a developer's `cargo
    test` of the same patch in a checkout whose target/ was built on the base (it recompiles
    what the patch changed and runs every test, doctests too), alternating, medians; and
    `cargo test` with nothing to compile."""
    crate, version, call, (path, old, new) = CRATES[name]
    cache = os.path.expanduser("~/.cache/patchgate-bench")
    os.makedirs(cache, exist_ok=True)
    archive = os.path.join(cache, f"{crate}-{version}.crate")
    if not os.path.exists(archive):
        subprocess.run(["curl", "-sSfL", "-o", archive,
                        f"https://static.crates.io/crates/{crate}/{crate}-{version}.crate"], check=True)
    env = {k: v for k, v in os.environ.items() if k != "CARGO_TARGET_DIR"}
    env.update({"GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@b", "GIT_COMMITTER_NAME": "b",
                "GIT_COMMITTER_EMAIL": "b@b", "RUSTC_BOOTSTRAP": "1"})
    with tempfile.TemporaryDirectory() as root, tempfile.TemporaryDirectory() as work:
        run = lambda cwd, *a: subprocess.run(a, cwd=cwd, env=env, check=True, capture_output=True, text=True)
        run(root, "tar", "xzf", archive, "--strip-components=1")
        run(root, binary, "init", "--rust")
        manifest = os.path.join(root, "Cargo.toml")
        if "autotests = false" in open(manifest).read():
            open(manifest, "a").write('\n[[test]]\nname = "patchgate_canary"\npath = "tests/patchgate_canary.rs"\n')
        canary = os.path.join(root, "tests", "patchgate_canary.rs")
        text = open(canary).read()
        open(canary, "w").write(text.replace(
            "    // let _ = mycrate::some_function();  // your crate: make the canary see what it does", f"    {call}"))
        os.makedirs(os.path.join(root, "fixtures"))
        open(os.path.join(root, "fixtures", ".gitkeep"), "w").close()
        run(root, binary, "seal", "fixtures", "--out", "fixtures.seal.expected")
        run(root, "git", "init", "-q", "-b", "main")
        run(root, "git", "add", "-A")
        run(root, "git", "commit", "-q", "-m", f"{crate} and its gate")
        run(root, "cargo", "fetch", "--quiet")
        run(root, binary, "warm")
        run(root, binary, "census", "--write")
        run(root, "git", "add", "-A")
        run(root, "git", "commit", "-q", "-m", "census")
        run(root, binary, "warm")
        run(root, "git", "checkout", "-q", "-b", "patch")
        text = open(os.path.join(root, path)).read()
        assert old in text, f"the honest patch does not apply to {crate} {version}"
        open(os.path.join(root, path), "w").write(text.replace(old, new, 1))
        run(root, "git", "commit", "-q", "-am", "honest")
        run(root, "git", "checkout", "-q", "main")
        plain, restore = developer_checkout(root, work, run, "cargo", "test", "--quiet", "--offline")

        answers = []

        def gate():
            out = subprocess.run([binary, "gate", "--base", "main", "--head", "patch", "--json"], cwd=root,
                                 env=env, capture_output=True, text=True)
            if out.returncode != 0:
                sys.exit(f"the honest patch did not merge (exit {out.returncode}):\n{out.stderr[-3000:]}")
            answers.append(json.loads(out.stdout))

        plains, noop, gates = [], [], []
        for _ in range(repeat):
            restore()
            plains.append(timed(plain))
            noop.append(timed(plain))
            gates.append(timed(gate))
        med = statistics.median
        answer = answers[-1]
        fates = [(m["line"], m["operator"], m["state"]) for s in answer["steps"] if s["step"] == "observe"
                 for m in (s.get("facts") or {}).get("mutants", [])]
        print(f"real crate: {crate} {version} (crates.io) under the Rust starter, its honest patch ({path}); "
              f"build cache from `patchgate warm`")
        print(f"cargo test, the patch recompiled (baseline):           {med(plains):.2f} s")
        print(f"patchgate gate, from the build cache:                  {med(gates):.2f} s  "
              f"({med(gates) / med(plains):.2f}x the baseline)")
        print(f"cargo test, nothing to compile:                        {med(noop):.2f} s  "
              f"(the gate {med(gates) / med(noop):.2f}x it)")
        print(f"  where the time went (last gate, ms): {answer.get('timings_ms')}")
        print(f"  patch mutants (line, operator, fate): {fates}")
        print(f"answer: {answer['disposition']} reason={answer['reason']}")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--binary", default="target/release/patchgate")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--rows", default="overhead,boltons,toolz,attrs,rust,zeroize",
                    help="which rows: overhead (20,000 fixtures, 500 properties), boltons, toolz and attrs (real Python "
                         "projects; project: both), "
                         "rust (examples/gate-rust against cargo nextest), zeroize (a real crate against cargo test), "
                         "strsim and semver (crates from crates.io under the Rust starter, against cargo test)")
    ap.add_argument("--replay", action="store_true",
                    help="the Python project rows again with [replay] on (issue 66), after the rows as they are")
    args = ap.parse_args()
    binary = os.path.abspath(args.binary)
    rows = args.rows.split(",")
    for name in ("boltons", "toolz", "attrs"):
        if name in rows or "project" in rows:
            project(binary, args.repeat, name, args.replay)
    if "rust" in rows:
        rust(binary, args.repeat)
    if "zeroize" in rows:
        zeroize(binary, args.repeat)
    for name in CRATES:
        if name in rows:
            registry_crate(binary, args.repeat, name)
    if "overhead" not in rows:
        return
    with tempfile.TemporaryDirectory() as root, tempfile.TemporaryDirectory() as off_root:
        build(root)
        build(off_root, mode="off")
        baseline, dry, full, commands, copies, archive, at_once = [], [], [], [], [], [], []
        off_commands, runs, disk = [], 0, []
        for i in range(args.repeat):
            baseline.append(timed(lambda: subprocess.run(
                "LC_ALL=C find fixtures -type f ! -name '*.seal' -print0 | LC_ALL=C sort -z | xargs -0 sha256sum | sha256sum",
                shell=True, cwd=root, check=True, capture_output=True)))
            # The standard tools' export, into the same place the gate makes its room.
            with tempfile.TemporaryDirectory(dir=ROOM_PARENT) as export:
                archive.append(timed(lambda: subprocess.run(
                    f"git archive HEAD | tar -x -C {export}", shell=True, cwd=root, check=True, capture_output=True)))
            disk_out = subprocess.run([binary, "gate", "--base", "main", "--dry-run"], cwd=root,
                                      capture_output=True, text=True, env={**os.environ, "TMPDIR": "/var/tmp"})
            disk.append(float(re.search(r"copied \(\d+ files, ([0-9.]+) s\)", disk_out.stderr).group(1)))
            dry.append(timed(lambda: sh(root, binary, "gate", "--base", "main", "--dry-run")))
            at_once.append(timed(lambda: sh(root, binary, "gate", "--base", "main")))
            wall, cmds, runs, copy, _ = gate_full(root, binary, i)
            full.append(wall)
            commands.append(cmds)
            copies.append(copy)
            _, off_cmds, off_runs, _, _ = gate_full(off_root, binary, i)
            off_commands.append(off_cmds)
            assert off_runs == runs, (off_runs, runs)
        answer = json.load(open(os.path.join(root, ".answer.json")))
        ran = [p for s in answer["steps"] if s["step"] == "properties" for p in s["properties"] if p["state"] == "pass"]
        own = [f - c for f, c in zip(full, commands)]
        med = statistics.median
        per_run = (med(commands) - med(off_commands)) / runs
        print(f"repository: {FILES} fixture files, {PROPERTIES} properties; the patch puts "
              f"{len(ran)} voting properties in locality (2 batched runs and the suite, each a shell that writes a passing receipt; --jobs 1)")
        print(f"coreutils seal pipeline (baseline): {med(baseline):.3f} s")
        print(f"patchgate gate --dry-run:           {med(dry):.3f} s  ({med(dry) / med(baseline):.2f}x the baseline)")
        print(f"patchgate gate, full:               {med(full):.3f} s, of which its commands {med(commands):.3f} s")
        print(f"the gate's own work:                {med(own):.3f} s  ({med(own) / med(baseline):.2f}x the baseline; target < 1 s)")
        print(f"patchgate gate, default --jobs:     {med(at_once):.3f} s wall (the suite's second copy included)")
        print(f"the copy of the judged tree:        {med(copies):.3f} s in {ROOM_PARENT}  ({med(copies) / med(archive):.2f}x `git archive | tar -x` there, {med(archive):.3f} s); "
              f"on disk (TMPDIR=/var/tmp) {med(disk):.3f} s")
        print(f"the sandbox, per run:               {per_run * 1000:.1f} ms  ({runs} runs: {med(commands):.3f} s in bubblewrap, "
              f"{med(off_commands):.3f} s without)")
        print(f"answer: {answer['disposition']} reason={answer['reason']} sandbox={answer.get('sandbox')}")


if __name__ == "__main__":
    main()
