#!/usr/bin/env python3
"""The third red team's seventeen attacks (issue 49), gated by a given binary.

Each attack is a patch in examples/gate-python/patches on the example repository, with the base
edits its test makes (a reading rule accepted where the attack is about a later defence, a
property admitted, the suite made to run the properties, a lower memory cap). For each it
prints what a plain pytest of the unmodified tests says, what production computes, and the
gate's answer; for the room's three, what leaked or was not held.

    cargo build --release
    python3 scripts/red_team.py --binary target/release/patchgate
    # the gate before issue 49 (its config reader knows no `[canary] twin`):
    git worktree add /tmp/old 7d0c633 && (cd /tmp/old && cargo build --release)
    python3 scripts/red_team.py --binary /tmp/old/target/release/patchgate --legacy-config

Needs python3 with pytest and hypothesis, git and bubblewrap, as the tests do.
"""

import argparse
import os
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
EXAMPLE = os.path.join(ROOT, "examples", "gate-python")
ENV = dict(os.environ, PYTEST_DISABLE_PLUGIN_AUTOLOAD="1")
ENV.pop("GITHUB_ACTIONS", None)


def git(d, *args):
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=d,
                   check=True, capture_output=True)


def edit(d, old, new):
    path = os.path.join(d, "patchgate.toml")
    text = open(path).read()
    assert old in text, old
    open(path, "w").write(text.replace(old, new, 1))


def allow(rules):
    listed = ", ".join(f'{{ path = "{p}", rule = "{r}" }}' for p, r in rules)
    return lambda d, _: edit(d, "\nallow = []\n", f"\nallow = [{listed}]\n")


def suite_with_properties(d, _):
    edit(d, '"--junitxml={junit}", "tests"]\ntimeout_s = 900',
         '"--junitxml={junit}", "tests", "properties", "--deselect", '
         '"properties/test_slug_never_empty.py::test_slug_never_empty"]\ntimeout_s = 900')


def cap_memory(d, _):
    edit(d, "memory_mib = 4096", "memory_mib = 256")


def admit(d, binary):
    git(d, "checkout", "-q", "-b", "mutant", "main")
    git(d, "apply", os.path.join(EXAMPLE, "patches", "mutant-discount-bounded.patch"))
    git(d, "commit", "-qam", "mutant")
    git(d, "checkout", "-q", "main")
    subprocess.run([binary, "admit", "discount_bounded", "--mutant", "mutant", "--base", "main",
                    "--write"], cwd=d, env=ENV, check=True, capture_output=True)
    git(d, "add", "-A")
    git(d, "commit", "-qm", "admit discount_bounded")
    git(d, "branch", "-D", "mutant")


def census(d, binary):
    subprocess.run([binary, "census", "--base", "main", "--write"], cwd=d, env=ENV, check=True,
                   capture_output=True)
    git(d, "add", "-A")
    git(d, "commit", "-qm", "census")


def pad(d):
    with open(os.path.join(d, "shop", "pricing.py"), "a") as f:
        for i in range(120000):
            f.write(f"# {i:06d} rounding table entry, kept for the audit trail of older invoices\n")


ROUNDS = (1999, 50, 999)
# (name, patch, base edits, after the base commit, after the patch, wrong price (cents, percent,
# right answer) or None, the room's check or None)
ATTACKS = [
    ("a .gitattributes marking *.py -diff", "attributes-hide-lines", [], [], None, ROUNDS, None),
    ("a bare CR inside a comment", "bare-carriage-return", [], [], None, ROUNDS, None),
    ("a # coding: utf-7 module", "utf7-cookie", [], [], None, ROUNDS, None),
    ("identifiers NFKC-normalising to sys.modules", "nfkc-names", [], [], None, ROUNDS, None),
    ("from .cli import sys", "re-exported-sys", [], [], None, ROUNDS, None),
    ("a .py link to a data file", "links-code-to-data", [], [], None, ROUNDS, None),
    ("exec bound to another name, fed a data file", "exec-aliased", [], [], None, ROUNDS, None),
    ("a module over the 8 MiB read limit", "test-aware", [], [], pad, ROUNDS, None),
    ("faulthandler.is_enabled()", "faulthandler-probe", [], [], None, ROUNDS, None),
    ("sys.modules through ctypes.pythonapi", "ctypes-modules", [], [], None, ROUNDS, None),
    ("a __subclasses__() walk to the discard exception", "subclass-walk", [], [], None,
     (1000, 95, 50), None),
    ("type('_Invoice', (int,), {'__eq__': ...})", "type-call-overload", [], [], None,
     (1000, 100, 0), None),
    ("a neuter that tells the re-proof by a self-test", "self-test-neuter",
     [allow([("shop/__init__.py", "interpreter")])], [admit], None, (1000, 95, 50), None),
    ("code right only when its argv names property files", "argv-aware-suite",
     [allow([("shop/pricing.py", "interpreter")]), suite_with_properties], [census], None,
     (1000, 95, 50), None),
    ("2 x 200 MiB in a memfd and /tmp under a 256 MiB cap", "holds-memory-outside-rss",
     [cap_memory], [], None, None, "memory"),
    ("$CARGO_HOME/config.toml and $VIRTUAL_ENV/pip.conf", "reads-toolchain-config",
     [allow([("shop/pricing.py", "environment")])], [], None, None, "secrets"),
    ("OSC 52, title and conceal escapes", "terminal-escapes", [], [], None, None, "escapes"),
]

TOKEN = "cio0123456789abcdef0123456789abcdef"
PASSWORD = "s3cr3t-pw-4242"


def plain_pytest(d):
    r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p",
                        "_hypothesis_pytestplugin", "tests", "properties/test_discount_bounded.py",
                        "properties/test_discount_monotonic.py"], cwd=d, env=ENV,
                       capture_output=True)
    return "passes" if r.returncode == 0 else f"fails ({r.returncode})"


def production(d, cents, percent):
    r = subprocess.run([sys.executable, "-c", "from shop.pricing import apply_discount; "
                        f"print(apply_discount({cents}, {percent}))"], cwd=d, env=ENV,
                       capture_output=True, text=True)
    return r.stdout.strip() or r.stderr.strip().splitlines()[-1]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--binary", required=True)
    ap.add_argument("--legacy-config", action="store_true",
                    help="the example's config without `[canary] twin` (a gate before issue 49)")
    ap.add_argument("--only", help="a substring of the attacks to run")
    args = ap.parse_args()
    binary = os.path.abspath(args.binary)
    scratch = tempfile.mkdtemp(prefix="red-team-")
    host = os.path.join(scratch, "host")
    os.makedirs(os.path.join(host, "cargo", "registry", "src"))
    os.makedirs(os.path.join(host, "venv", "bin"))
    os.makedirs(os.path.join(host, "venv", "lib"))
    open(os.path.join(host, "cargo", "config.toml"), "w").write(
        f'[registry]\ntoken = "{TOKEN}"\n')
    open(os.path.join(host, "venv", "pip.conf"), "w").write(
        f"[global]\nindex-url = https://ci:{PASSWORD}@pypi.example.com/simple\n")
    open(os.path.join(host, "venv", "pyvenv.cfg"), "w").write("home = /usr/bin\n")
    print(f"binary: {binary}")
    print(f"{'attack':52} {'plain pytest':13} {'production':18} gate")
    for name, patch, base_edits, after_base, after_patch, wrong, room in ATTACKS:
        if args.only and args.only not in name and args.only not in patch:
            continue
        d = os.path.join(scratch, patch)
        shutil.copytree(os.path.join(EXAMPLE, "repo"), d)
        if args.legacy_config:
            edit(d, "\ntwin = true\n", "\n")
        for e in base_edits:
            e(d, binary)
        git(d, "init", "-q", "-b", "main")
        git(d, "add", "-A")
        git(d, "commit", "-qm", "base")
        for step in after_base:
            step(d, binary)
        git(d, "checkout", "-q", "-b", "patch")
        git(d, "apply", "--whitespace=nowarn", os.path.join(EXAMPLE, "patches", patch + ".patch"))
        if after_patch:
            after_patch(d)
        git(d, "add", "-A")
        git(d, "commit", "-qm", patch)
        env = dict(ENV)
        if room == "secrets":
            env.update(CARGO_HOME=os.path.join(host, "cargo"),
                       VIRTUAL_ENV=os.path.join(host, "venv"))
        g = subprocess.run([binary, "gate", "--base", "main"], cwd=d, env=env,
                           capture_output=True)
        answer = g.stdout.decode("utf-8", "replace").strip() or f"exit {g.returncode}"
        stderr = g.stderr.decode("utf-8", "replace")
        plain = plain_pytest(d) if wrong else "-"
        if wrong:
            got = production(d, wrong[0], wrong[1])
            prod = f"{got} (right: {wrong[2]})"
        elif room == "memory":
            over = "over-memory" in stderr
            prod = "ended over-memory" if over else "held, never ended"
        elif room == "secrets":
            leaked = [s for s in (TOKEN, TOKEN[::-1], PASSWORD, PASSWORD[::-1])
                      if s in stderr or s in answer]
            prod = f"{len(leaked)} secrets shown" if leaked else "nothing shown"
        else:
            raw = g.stderr.count(b"\x1b") + g.stderr.count(b"\x07")
            prod = f"{raw} raw control bytes" if raw else "escaped"
        print(f"{name[:52]:52} {plain:13} {prod:18} {answer} (exit {g.returncode})")
    shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
