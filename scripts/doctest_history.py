#!/usr/bin/env python3
"""What judging Python doctests from the base costs honest work (issue 50).

For each repository given, the most recent non-merge commits that change code (as
`reading_history.py` picks them) whose doctest examples `patchgate read` says the gate runs as
the base has them are replayed: each docstring whose examples the commit changed has the
base's examples run against the commit's module, as the gate's run would (doctest, the module's
globals). A commit counts as stopped when an example that passes on the base's own code fails
on the commit's: the gate would BLOCK an honest change of behaviour, or of how an example is
written, until a human looks. Examples that fail on the base too (they need a fixture, a
network, another platform) are left out. Nothing is installed: each tree is put first on
`sys.path` (and its `src/`).

    cargo build
    python3 scripts/doctest_history.py --binary target/debug/patchgate --per-repo 50 \\
        path/to/toolz path/to/more-itertools path/to/boltons path/to/packaging
"""

import argparse
import ast
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from reading_history import commits  # noqa: E402

# Run in a fresh interpreter: import `module` from `tree`, run each docstring text given on
# stdin (JSON: {owner: text}) as a doctest in the module's globals; print {owner: failures}.
RUNNER = r"""
import doctest, importlib, json, sys
tree, module = sys.argv[1], sys.argv[2]
sys.path[:0] = [tree + "/src", tree]
texts = json.load(sys.stdin)
try:
    mod = importlib.import_module(module)
except BaseException as e:
    print(json.dumps({"import": repr(e)[:200]}))
    sys.exit(0)
out = {}
parser = doctest.DocTestParser()
for owner, text in texts.items():
    test = parser.get_doctest(text, dict(vars(mod)), owner, None, 0)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    try:
        r = runner.run(test, out=lambda s: None)
        out[owner] = r.failed
    except BaseException as e:
        out[owner] = -1
print(json.dumps(out))
"""


def docstrings(source):
    """Each documented owner's docstring (dotted name; "" for the module)."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return {}
    found = {}

    def walk(node, prefix):
        doc = ast.get_docstring(node, clean=False) if isinstance(
            node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) else None
        if doc is not None:
            found.setdefault(prefix, doc)
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
                walk(child, f"{prefix}.{child.name}" if prefix else child.name)
            elif not isinstance(child, (ast.Lambda,)):
                for sub in ast.iter_child_nodes(child):
                    if isinstance(sub, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
                        walk(sub, f"{prefix}.{sub.name}" if prefix else sub.name)

    walk(tree, "")
    return found


def examples(text):
    return [(e.source, e.want) for e in doctest_parser().get_examples(text)]


def doctest_parser():
    import doctest
    return doctest.DocTestParser()


def export(repo, rev, dest):
    os.makedirs(dest)
    archive = subprocess.run(["git", "-C", repo, "archive", rev], check=True,
                             capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", dest], input=archive, check=True)


def run(tree, module, texts):
    r = subprocess.run([sys.executable, "-c", RUNNER, tree, module], input=json.dumps(texts),
                       capture_output=True, text=True, timeout=120, cwd=tree)
    try:
        return json.loads(r.stdout.strip().splitlines()[-1])
    except (IndexError, ValueError):
        return {"import": r.stderr[-200:]}


def module_of(path):
    parts = path[:-3].split("/")
    if parts[0] == "src":
        parts = parts[1:]
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("repos", nargs="+")
    ap.add_argument("--per-repo", type=int, default=50)
    ap.add_argument("--binary", required=True)
    args = ap.parse_args()
    scratch = tempfile.mkdtemp(prefix="doctest-history-")
    total_judged = total_stopped = total_unimportable = 0
    for repo in args.repos:
        name = os.path.basename(os.path.dirname(repo.rstrip("/")))
        clone = os.path.join(scratch, name)
        subprocess.run(["git", "clone", "-q", "--no-checkout", repo, clone], check=True)
        judged = stopped = unimportable = 0
        for c in commits(clone, args.per_repo):
            r = subprocess.run([args.binary, "read", "-C", clone, "--base", c + "^", "--head", c,
                                "--json"], capture_output=True, text=True)
            if r.returncode not in (0, 2):
                continue
            files = [f for f in json.loads(r.stdout).get("test_lines", {}).get("from_base", [])
                     if f.endswith(".py")]
            if not files:
                continue
            judged += 1
            base_tree, head_tree = (os.path.join(scratch, f"{name}-{c[:10]}-{s}")
                                    for s in ("base", "head"))
            export(clone, c + "^", base_tree)
            export(clone, c, head_tree)
            why = []
            for f in files:
                show = lambda rev: subprocess.run(["git", "-C", clone, "show", f"{rev}:{f}"],
                                                  capture_output=True, text=True).stdout
                base, head = docstrings(show(c + "^")), docstrings(show(c))
                changed = {o: t for o, t in base.items()
                           if examples(t) and o in head and examples(head[o]) != examples(t)}
                if not changed:
                    continue
                on_base = run(base_tree, module_of(f), changed)
                on_head = run(head_tree, module_of(f), changed)
                if "import" in on_base or "import" in on_head:
                    unimportable += 1
                    why.append(f"{f}: not importable here")
                    continue
                for owner in changed:
                    if on_base.get(owner) == 0 and on_head.get(owner, 0) != 0:
                        why.append(f"{f}::{owner}")
            if any("::" in w for w in why):
                stopped += 1
                print(f"  {name} {c[:10]} would BLOCK on the base's examples: "
                      + ", ".join(w for w in why if "::" in w))
        print(f"{name}: {judged} commits with doctest examples run from the base, {stopped} "
              f"would BLOCK on an example the base's code passes ({unimportable} files not "
              f"importable here)")
        total_judged += judged
        total_stopped += stopped
        total_unimportable += unimportable
    print(f"overall: {total_judged} commits, {total_stopped} would BLOCK "
          f"({total_unimportable} files not importable here)")


if __name__ == "__main__":
    main()
