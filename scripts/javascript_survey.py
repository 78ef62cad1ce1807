#!/usr/bin/env python3
"""A spelled pre-survey for issue 69's reading rules (decision 50): in the most recent
non-merge commits of real JavaScript/TypeScript projects that change code (a JS/TS file that
is not test-adjacent), the lines they add matched by regular expressions for the constructs
the issue names. Not the reader: no parser, no name resolution, comments and strings
matched too. So an upper bound on how many honest commits a rule could stop, per
construct, to decide which rules need narrowing before they are written; the parser's
replay (`scripts/reading_history.py`) replaces it once the reader parses JavaScript.

    python3 scripts/javascript_survey.py 50 path/to/date-fns path/to/zod path/to/immer path/to/axios
"""

import collections
import re
import subprocess
import sys

EXT = (".js", ".mjs", ".cjs", ".jsx", ".ts", ".mts", ".cts", ".tsx")


def test_adjacent(p):
    """Test files as these projects lay them out: `test/`, `tests/`, `__tests__/`, a basename
    `test.ts` (date-fns keeps one beside each function) or `*.test.*`/`*.spec.*`, type
    declarations, and the tools' own configuration and scripts."""
    parts = p.split("/")
    base = parts[-1]
    return (
        any(
            d
            in (
                "test",
                "tests",
                "__tests__",
                "__snapshots__",
                "fixtures",
                "e2e",
                "benchmark",
                "bench",
                "examples",
                "scripts",
                "docs",
                ".github",
            )
            for d in parts[:-1]
        )
        or re.search(r"(^|\.)(test|spec|bench)\.[cm]?[jt]sx?$", base) is not None
        or base.endswith(".d.ts")
        or base.startswith(
            (
                "vitest.config",
                "jest.config",
                "vite.config",
                "rollup.config",
                "webpack.config",
                "eslint",
                ".eslintrc",
                "babel.config",
                "tsup.config",
            )
        )
    )


CONSTRUCTS = {
    "process.env": r"\bprocess\.env\b",
    "process.argv/execArgv": r"\bprocess\.(argv|execArgv)\b",
    "process.exit/abort": r"\bprocess\.(exit|abort|reallyExit)\b",
    "process.cwd/chdir/pid": r"\bprocess\.(cwd|chdir|pid|ppid)\b",
    "import.meta.vitest/env": r"\bimport\.meta\.(vitest|env)\b",
    "test globals (vi./jest./expect()": r"(?<![\w.])(vi|jest)\.\w+|(?<![\w.])expect\(",
    "test-stack text (vitest/jest/JEST_)": r"['\"`][^'\"`]*(vitest|VITEST|jest|JEST_)[^'\"`]*['\"`]",
    "eval / new Function": r"(?<![\w.])eval\(|\bnew Function\(|(?<![\w.])Function\(",
    "vm module": r"['\"](node:)?vm['\"]",
    "require/import() computed": r"\brequire\(\s*[^'\"`)\s]|\bimport\(\s*[^'\"`)\s]",
    "valueOf": r"\bvalueOf\b",
    "toJSON": r"\btoJSON\b",
    "Symbol.toPrimitive": r"Symbol\.toPrimitive",
    "asymmetricMatch": r"asymmetricMatch",
    "new Proxy": r"\bnew Proxy\b",
    ".stack / captureStackTrace": r"\.stack\b|captureStackTrace|prepareStackTrace",
}


def commits(repo, n):
    out = subprocess.run(
        ["git", "-C", repo, "log", "--first-parent", "--no-merges", "--format=%H", "-n", str(n * 8)],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    picked = []
    for c in out:
        files = subprocess.run(
            [
                "git",
                "-C",
                repo,
                "diff-tree",
                "--no-commit-id",
                "--name-only",
                "-r",
                "--no-renames",
                c + "^",
                c,
            ],
            capture_output=True,
            text=True,
        ).stdout.split("\n")
        code = [f for f in files if f.endswith(EXT) and not test_adjacent(f)]
        if code:
            picked.append((c, code))
        if len(picked) == n:
            break
    return picked


for repo in sys.argv[2:]:
    n = int(sys.argv[1])
    per = collections.Counter()
    any_hit = 0
    examples = {}
    picked = commits(repo, n)
    for c, code in picked:
        diff = subprocess.run(
            ["git", "-C", repo, "diff", "-U0", "--no-renames", c + "^", c, "--"] + code,
            capture_output=True,
            text=True,
            errors="replace",
        ).stdout
        added = [x[1:] for x in diff.split("\n") if x.startswith("+") and not x.startswith("+++")]
        hit = set()
        if any(len(x) > 1000 for x in added):
            hit.add("a line over 1000 chars (minified: unread)")
            examples.setdefault(
                "a line over 1000 chars (minified: unread)", (c[:9], " ".join(f for f in code)[:100])
            )
        for name, rx in CONSTRUCTS.items():
            for line in added:
                if re.search(rx, line):
                    hit.add(name)
                    examples.setdefault(name, (c[:9], line.strip()[:100]))
                    break
        for h in hit:
            per[h] += 1
        any_hit += bool(hit)
    print(f"== {repo.split('/')[-2]}: {len(picked)} code commits, {any_hit} with any construct")
    for name, k in per.most_common():
        print(f"   {name}: {k}   e.g. {examples[name]}")
