"""No import cycle between the files of src/: within src/core, src/cli, src/http, src/telemetry,
nor between the top-level files.

    python3 scripts/import_cycles.py [SRC]

Reads every `crate::…`, `super::…` and `self::…` path in each file (its tests left out),
grouped imports expanded (`use super::{a::X, b::{self, Y}}` names `super::a::X`,
`super::b` and `super::b::Y`),
resolves it to the file of the longest module it names, and lists every strongly connected
component of more than one file, within each area of src/ and across all of it. Exit 1 when
there is one. A module's `mod.rs` re-exporting its own children (`pub use parse::…`) is not
counted, nor a parent naming its children bare (`gate::run(..)`: the hub that wires them). A
glob (`use super::*`) is an import of the module it names.
"""

import os
import re
import sys

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "src")
PATH = r"(?:crate|super|self)(?:::[A-Za-z_][A-Za-z0-9_]*)*"


def modules():
    found = {}
    for directory, _, files in os.walk(ROOT):
        for name in files:
            if not name.endswith(".rs"):
                continue
            path = os.path.join(directory, name)
            parts = os.path.relpath(path, ROOT)[:-3].split(os.sep)
            if parts[-1] in ("mod", "lib"):
                parts = parts[:-1]
            found["::".join(parts)] = path
    return found


def resolve(mods, current, path):
    segs = path.split("::")
    if segs[0] == "crate":
        base, segs = [], segs[1:]
    elif segs[0] == "super":
        base, segs = current[:-1], segs[1:]
        while segs and segs[0] == "super":
            base, segs = base[:-1], segs[1:]
    else:  # self
        base, segs = current[:], segs[1:]
    for i in range(len(segs), -1, -1):
        name = "::".join(base + segs[:i])
        if name in mods:
            return name
    return None


def edges(mods):
    out = {m: set() for m in mods}
    for name, path in mods.items():
        current = name.split("::") if name else []
        with open(path, encoding="utf-8") as f:
            text = f.read()
        text = re.sub(r"#\[cfg\(test\)\]\s*mod tests \{.*", "", text, flags=re.S)
        paths = [m.group(1) for m in re.finditer(r"\b(" + PATH + r"(?:::\*)?)", text)]
        for m in re.finditer(r"\b(" + PATH + r")::\{", text):
            body = braced(text, m.end() - 1)
            if body is not None:
                paths += expand(m.group(1), body)
        for path in paths:
            if path in ("crate", "super", "self"):
                continue
            target = resolve(mods, current, path.removesuffix("::*"))
            if target and target != name:
                out[name].add(target)
    return out


def braced(text, at):
    """The text inside the braces opening at `at`, or None when they do not close."""
    depth = 0
    for i in range(at, len(text)):
        if text[i] == "{":
            depth += 1
        elif text[i] == "}":
            depth -= 1
            if depth == 0:
                return text[at + 1 : i]
    return None


def expand(prefix, body):
    """The paths a use group names: each item joined to `prefix`, nested groups expanded,
    `self` the prefix itself, an alias dropped."""
    items, depth, start = [], 0, 0
    for i, c in enumerate(body):
        if c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
        elif c == "," and depth == 0:
            items.append(body[start:i])
            start = i + 1
    items.append(body[start:])
    out = []
    for item in items:
        item = re.sub(r"\s+as\s+\w+\s*$", "", item.strip())
        if not item:
            continue
        if item in ("self", "*"):
            out.append(prefix)
        elif "::{" in item:
            head, rest = item.split("::{", 1)
            out += expand(prefix + "::" + head.strip(), rest.rsplit("}", 1)[0])
        else:
            out.append(prefix + "::" + item.removesuffix("::*"))
    return out


def components(nodes, graph):
    index, low, stack, on, found = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in graph[v]:
            if w not in nodes:
                continue
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            found.append(sorted(comp))

    for v in sorted(nodes):
        if v not in index:
            visit(v)
    return found


def main():
    global ROOT
    if len(sys.argv) > 1:
        ROOT = sys.argv[1]
    mods = modules()
    graph = edges(mods)
    cycles = []
    # Every file of src/ at once: a cycle within an area is one across src/ too.
    cycles += [c for c in components(set(mods), graph) if len(c) > 1]
    for c in cycles:
        print("import cycle: " + " <-> ".join(c))
    print(f"import cycles in src/ ({len(mods)} files): {len(cycles)}")
    return 1 if cycles else 0


if __name__ == "__main__":
    sys.exit(main())
