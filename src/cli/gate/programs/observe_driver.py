"""The observed run's program (issue 52; docs/design/observe.md, docs/design/replay.md).

Run as `python -c CANON+DRIVER OUT FILE:LINES... -- PYTEST-ARGS` (`LINES` as `3,9-12`; CANON is
replay_canon.py, put before this file by the Rust that runs it): pytest in-process with the
changed lines' probes, the JSON report written to `OUT` when pytest returns. A run that never
returns (an exit under test) writes none: then nothing is known to be observed. A file imported
other than through the import system (read and `exec`'d) has no probes: its lines are unrun,
never run by a check.

`--record N` before `OUT` (issue 66, CONTRACT.md 16.1): each function or method whose lines
the patch changes also records its calls, at most N distinct ones each, first seen first: its
arguments pickled by this program when the call is made (compiled into the function's body:
no frame or local name added), its result written down by replay_canon's `canon` when it
returns (or the type of what it raised; a generator's, what its caller consumed of it). The
report's `calls` hold them, and `unrecorded` what could not be.

A patch mutant's run is `python -c DRIVER --select --mutant FILE START END HEX ID... -- ARGS`:
pytest with only the tests named (JUnit's `module::function`, `module.Class::function`) kept,
and only the files that may hold them collected; `--except ID...` runs every test but those.
"""

import ast
import importlib.abc
import importlib.machinery
import json
import os
import sys
import threading

import pytest

if "canon" not in globals():
    # Run on its own (its tests): the shared part from the file beside it.
    from replay_canon import canon, pickled_args, yielded, Uncomparable
split = sys.argv.index("--")
head, args = sys.argv[1:split], sys.argv[split + 1 :]
plugins, watch = [], {}


def ident(item):
    mod = getattr(getattr(item, "module", None), "__name__", "")
    cls = getattr(item, "cls", None)
    owner = mod + ("." + cls.__qualname__ if cls is not None else "")
    return owner + "::" + (getattr(item, "originalname", None) or item.name)


def junit_id(item):
    # The id pytest's JUnit report gives the item (its `mangle_test_address`): a shard's share
    # is census ids.
    path, bracket, params = item.nodeid.partition("[")
    names = path.split("::")
    names[0] = names[0].replace("/", ".")
    names[0] = names[0][:-3] if names[0].endswith(".py") else names[0]
    names[-1] += bracket + params
    return ".".join(names[:-1]) + "::" + names[-1]


MUTANT = None
if head[:1] == ["--select"] and head[1:2] == ["--mutant"]:
    # A patch mutant, applied as the import system loads its file: the bytes `start:end` of
    # the file's text replaced, the file on disk left as it is (what the code reads of its own
    # file is the judged text: no mutant can be told apart by it).
    path, start, end, replacement = head[2:6]
    MUTANT = (path, int(start), int(end), bytes.fromhex(replacement))
    head = head[:1] + head[6:]
if head[:1] in (["--select"], ["--except"]):
    # `--except ID...`: every test but those named by their JUnit ids (a shard's run, issue 53:
    # the tests other shards own left out). Either may be the observed run too: `... --observe
    # OUT FILE:LINES...`.
    select = head[0] == "--select"
    rest = head[1:]
    cut = rest.index("--observe") if "--observe" in rest else len(rest)
    keep, head = set(rest[:cut]), rest[cut + 1 :]
    # Only the files that may hold a test kept are collected (a name of the test's module or
    # class); every file when a test has no module (a doctest), or with `--except`.
    owners = [k.partition("::")[0] for k in keep] if select else [""]
    stems = None if "" in owners else {p for o in owners for p in o.split(".")}

    class Select:
        # First: a project's own hook may answer "collect" (False) and end the asking.
        @pytest.hookimpl(tryfirst=True)
        def pytest_ignore_collect(self, collection_path, config):
            if (
                stems is not None
                and collection_path.suffix == ".py"
                and collection_path.stem not in stems
                and collection_path.name not in ("conftest.py", "__init__.py")
                and collection_path.is_file()
            ):
                return True

        def pytest_collection_modifyitems(self, config, items):
            kept = (
                (lambda i: ident(i) in keep or junit_id(i) in keep)
                if select
                else (lambda i: junit_id(i) not in keep)
            )
            dropped = [i for i in items if not kept(i)]
            items[:] = [i for i in items if kept(i)]
            config.hook.pytest_deselected(items=dropped)

    plugins.append(Select())
RECORD = 0
if head[:1] == ["--record"]:
    RECORD, head = int(head[1]), head[2:]
if head:
    out = head[0]
    for spec in head[1:]:
        path, _, ranges = spec.rpartition(":")
        lines = set()
        for r in filter(None, ranges.split(",")):
            a, _, b = r.partition("-")
            lines.update(range(int(a), int(b or a) + 1))
        watch[path] = lines

# A probe is `NAME.add(id)`, compiled into a changed module as it is imported, before each
# statement a changed line is part of (id: its first line) and at the head of each way out of
# a changed `if`, `while`, `for`, `match` (id: the pair of lines, -1 for leaving the function).
NAME = "__patchgate_%s__" % os.urandom(8).hex()
PLANS = {}


def probe(node, value):
    call = ast.Expr(
        ast.Call(ast.Attribute(ast.Name(NAME, ast.Load()), "add", ast.Load()), [ast.Constant(value)], [])
    )
    return ast.fix_missing_locations(ast.copy_location(call, node))


def visit(tree, lines, edit):
    """The probes of `lines` in `tree` ({statement line: its changed lines}, {(from, to)}),
    put into the tree when `edit`."""
    stmts, branches = {}, set()

    def own(start, end):
        return [n for n in range(start, end + 1) if n in lines]

    def first(items):
        return items[0].lineno if items else None

    def head(s):
        # The last line of a statement's own part: a compound statement's head (its test, its
        # target, its arguments), not the comments between it and its body.
        end = getattr(s, "lineno", 0)  # (a `case` has none of its own: its pattern's)
        for field, value in ast.iter_fields(s):
            if field not in ("body", "orelse", "finalbody", "handlers", "cases"):
                for v in value if isinstance(value, list) else [value]:
                    if isinstance(v, ast.AST):
                        end = max([end] + [getattr(n, "end_lineno", None) or end for n in ast.walk(v)])
        return end

    def block(items, after, entry=()):
        out = [probe(items[0], v) for v in entry] if edit and items else []
        for i, s in enumerate(items):
            nxt = items[i + 1].lineno if i + 1 < len(items) else after
            if (
                isinstance(s, ast.Expr)
                and isinstance(s.value, ast.Constant)
                and isinstance(s.value.value, str)
            ):
                out.append(s)
                continue
            subs = [
                b
                for b in (getattr(s, "body", None), getattr(s, "orelse", None), getattr(s, "finalbody", None))
                if isinstance(b, list) and b
            ]
            subs += [h.body for h in getattr(s, "handlers", [])] + [c.body for c in getattr(s, "cases", [])]
            start = min([s.lineno] + [d.lineno for d in getattr(s, "decorator_list", [])])
            mine = own(start, head(s) if subs else (s.end_lineno or s.lineno))
            if mine:
                stmts[s.lineno] = mine
                if edit:
                    out.append(probe(s, s.lineno))
            if isinstance(s, (ast.If, ast.While, ast.For, ast.AsyncFor)):
                loop = not isinstance(s, ast.If)
                taken, other = (s.lineno, s.body[0].lineno), (s.lineno, first(s.orelse) or nxt)
                # `while True:` has no way out but `break`.
                endless = isinstance(s, ast.While) and isinstance(s.test, ast.Constant) and bool(s.test.value)
                if mine:
                    branches.update((taken,) if endless else (taken, other))
                s.body = block(s.body, s.lineno if loop else nxt, [taken] if mine else [])
                if s.orelse:
                    s.orelse = block(s.orelse, nxt, [other] if mine else [])
                elif mine and edit and not endless:
                    s.orelse = [probe(s, other)]
            elif isinstance(s, ast.Match):
                for c in s.cases:
                    way, case = (s.lineno, c.body[0].lineno), c.pattern.lineno
                    cmine = own(case, head(c))
                    if cmine:
                        stmts[case] = cmine
                    if mine:
                        branches.add(way)
                    c.body = block(c.body, nxt, ([way] if mine else []) + ([case] if cmine else []))
            else:
                for h in getattr(s, "handlers", []):
                    hmine = own(h.lineno, head(h))
                    if hmine:
                        stmts[h.lineno] = hmine
                    h.body = block(h.body, nxt, [h.lineno] if hmine else [])
                leaves = isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef))
                for field in ("body", "orelse", "finalbody"):
                    sub = getattr(s, field, None)
                    if isinstance(sub, list) and sub:
                        setattr(s, field, block(sub, -1 if leaves else nxt))
            out.append(s)
        return out

    # `from __future__` imports stay first: probes of what precedes them go after them.
    at = max(
        (
            i + 1
            for i, s in enumerate(tree.body)
            if isinstance(s, ast.ImportFrom) and s.module == "__future__"
        ),
        default=0,
    )
    early = block(tree.body[:at], first(tree.body[at:]) or -1)
    rest = block(tree.body[at:], -1)
    moved = [
        s
        for s in early
        if s.__class__ is ast.Expr
        and getattr(getattr(s.value, "func", None), "value", None) is not None
        and getattr(s.value.func.value, "id", None) == NAME
    ]
    tree.body = [s for s in early if not any(s is m for m in moved)] + moved + rest
    return stmts, branches


class Loader(importlib.machinery.SourceFileLoader):
    # `rewriter`: pytest's assertion rewriter, when it would have taken this file (a module the
    # project registers with `pytest.register_assert_rewrite`, a test module, a conftest): its
    # asserts are rewritten as pytest rewrites them, probes or mutant beside.
    rewriter = None

    def rewritten(self, tree, text):
        if self.rewriter is not None:
            from _pytest.assertion.rewrite import rewrite_asserts

            rewrite_asserts(tree, text, self.path, self.rewriter.config)
        return compile(tree, self.path, "exec", dont_inherit=True)

    def get_code(self, fullname):
        # Compiled from the source every time: no bytecode cache read or written.
        real = os.path.realpath(self.path)
        text = self.get_data(self.path)
        if real == MUTATED:
            text = text[: MUTANT[1]] + MUTANT[3] + text[MUTANT[2] :]
            if real not in WATCHED:
                return self.rewritten(ast.parse(text, self.path), text)
        try:
            tree = ast.parse(text, self.path)
            PLANS[real] = visit(tree, WATCHED[real], True)
            if RECORD:
                record(tree, WATCHED[real])
            return self.rewritten(tree, text)
        except Exception:
            # Whatever the probes cannot be put into loads as it is, and none of its changed
            # lines counts as run: never a failure the plain run would not have.
            PLANS[real] = ({n: [n] for n in WATCHED[real]}, set())
            if real == MUTATED:
                return self.rewritten(ast.parse(text, self.path), text)
            return super().get_code(fullname)

    def exec_module(self, module):
        real = os.path.realpath(self.path)
        if real in HITS:
            module.__dict__[NAME] = HITS[real]
            if RECORD:
                module.__dict__[RNAME] = recorder(module.__name__, real)
        super().exec_module(module)


class Finder(importlib.abc.MetaPathFinder):
    # Takes only the changed files (and the mutant's): every other module is left to the finders
    # after it, pytest's assertion rewriter among them, so the tests run as a plain pytest runs
    # them (issue 64: a finder that answered for every module loaded the tests unrewritten).
    def find_spec(self, name, path, target=None):
        spec = importlib.machinery.PathFinder.find_spec(name, path, target)
        if spec is None or not spec.origin or os.path.realpath(spec.origin) not in LOADED:
            return None
        loader = Loader(name, spec.origin)
        for finder in sys.meta_path:
            if finder is not self and type(finder).__name__ == "AssertionRewritingHook":
                theirs = finder.find_spec(name, path, target)
                if theirs is not None and theirs.loader is finder:
                    loader.rewriter = finder
        spec.loader = loader
        return spec


MUTATED = os.path.realpath(MUTANT[0]) if MUTANT else None
WATCHED = {os.path.realpath(p): lines for p, lines in watch.items()}
LOADED = set(WATCHED) | ({MUTATED} if MUTATED else set())
NAMES = {os.path.realpath(p): p for p in watch}
# Each file's own hits, and by test: two files' line 3 are two statements.
HITS = {real: set() for real in WATCHED}
SEEN = {real: {} for real in WATCHED}
FINDER = Finder()
if LOADED:
    sys.meta_path.insert(0, FINDER)
# Recorded calls (issue 66, CONTRACT.md 16.1), compiled into the body of each function or
# method (of a module or a class, at any depth of classes) whose lines the patch changes, as
# the probes are: no wrapper, so no frame is added between a caller and the function (code that
# reads its caller's frame, as `attrs.make_class` does for `__module__`, sees what it would),
# and no local name added. The body becomes
#     RNAME.enter("Qual.name")
#     try:
#         BODY   (each `return X` of its own scope `return RNAME.exit(X)`, each `yield X`
#                 `yield RNAME.item(X)`)
#         RNAME.exit(None)
#     except BaseException:
#         RNAME.raised()
#         raise
# (a docstring stays first). Each call is known by its frame: `enter` reads the parameters
# from it, `exit`, `item` and `raised` find the call by it.
RNAME = "__patchgate_%s__" % os.urandom(8).hex()
CALLS, UNRECORDED = [], {}
MAX_ARGS_BYTES, MAX_CALLS, MAX_YIELDED = 32 << 10, 500, 10000
CO_VARARGS, CO_VARKEYWORDS, CO_GENERATOR = 0x04, 0x08, 0x20

BUSY = threading.local()
# The driver's own reference: code under test that takes `sys._getframe` away (attrs' tests do)
# takes nothing from the recorder.
GETFRAME = sys._getframe


class Returns(ast.NodeTransformer):
    # The function's own `return` and `yield` (never those of a function, lambda or class
    # defined in it).
    def visit_FunctionDef(self, node):
        return node

    visit_AsyncFunctionDef = visit_ClassDef = visit_Lambda = visit_FunctionDef

    def hook(self, name, value, node):
        call = ast.Call(
            ast.Attribute(ast.Name(RNAME, ast.Load()), name, ast.Load()), [value or ast.Constant(None)], []
        )
        return ast.copy_location(call, node)

    def visit_Return(self, node):
        self.generic_visit(node)
        node.value = self.hook("exit", node.value, node)
        return node

    def visit_Yield(self, node):
        self.generic_visit(node)
        node.value = self.hook("item", node.value, node)
        return node

    def visit_YieldFrom(self, node):
        # What a `yield from` hands on is not seen item by item: the call cannot be compared.
        self.generic_visit(node)
        node.value = self.hook("delegates", node.value, node)
        return node


def instrument(s, qual):
    body = s.body
    doc = (
        body[:1]
        if body
        and isinstance(body[0], ast.Expr)
        and isinstance(body[0].value, ast.Constant)
        and isinstance(body[0].value.value, str)
        else []
    )
    rest = [Returns().visit(x) for x in body[len(doc) :]]

    def hook(name, args):
        return ast.Expr(ast.Call(ast.Attribute(ast.Name(RNAME, ast.Load()), name, ast.Load()), args, []))

    guarded = ast.Try(
        body=rest + [hook("exit", [ast.Constant(None)])],
        handlers=[
            ast.ExceptHandler(ast.Name("BaseException", ast.Load()), None, [hook("raised", []), ast.Raise()])
        ],
        orelse=[],
        finalbody=[],
    )
    at = rest[0] if rest else s
    s.body = doc + [
        ast.copy_location(hook("enter", [ast.Constant(qual)]), at),
        ast.copy_location(guarded, at),
    ]
    ast.fix_missing_locations(s)


def record(tree, lines):
    def walk(body, prefix):
        for s in body:
            if isinstance(s, ast.ClassDef):
                walk(s.body, prefix + s.name + ".")
            elif isinstance(s, (ast.If, ast.Try)):
                # (Definitions under `if TYPE_CHECKING:`, `try: ... except ImportError:`.)
                for part in (
                    s.body,
                    s.orelse,
                    getattr(s, "finalbody", []),
                    *[h.body for h in getattr(s, "handlers", [])],
                ):
                    walk(part, prefix)
            elif isinstance(s, ast.FunctionDef):
                start = min([s.lineno] + [d.lineno for d in s.decorator_list])
                if any(start <= n <= (s.end_lineno or s.lineno) for n in lines):
                    instrument(s, prefix + s.name)

    walk(tree.body, "")


def qualified(t):
    return "%s.%s" % (getattr(t, "__module__", "?"), getattr(t, "__qualname__", "?"))


def import_root(module, real):
    # The directory the module's top package is found in: what the plain program imports from.
    up = len(module.split(".")) - (0 if os.path.basename(real) == "__init__.py" else 1)
    d = os.path.dirname(real)
    for _ in range(up):
        d = os.path.dirname(d)
    return d


def unrecorded(site, why):
    key = (site["file"], site["function"], why)
    UNRECORDED[key] = UNRECORDED.get(key, 0) + 1


def written(entry, key, value):
    # `value` written down into the call's `key` (the recorder's own calls are never recorded).
    BUSY.on = True
    try:
        if key == "yielded":
            if len(entry["yielded"]) >= MAX_YIELDED:
                raise Uncomparable("more than %d items consumed" % MAX_YIELDED)
            entry["yielded"].append(canon(value))
        else:
            entry[key] = canon(value)
    except Uncomparable as e:
        entry["uncomparable"] = str(e)
    except Exception as e:
        entry["uncomparable"] = "it cannot be written down (%s)" % type(e).__name__
    finally:
        BUSY.on = False


class Recorder:
    # One per instrumented module: its calls, by frame.
    def __init__(self, module, real):
        self.site = {"module": module, "root": import_root(module, real), "path": real, "file": NAMES[real]}
        self.seen, self.active = {}, {}

    def enter(self, qual):
        # Never raises into the code under test.
        try:
            self.entered(qual, GETFRAME(1))
        except Exception:
            pass

    def entered(self, qual, frame):
        import base64

        code = frame.f_code
        site = dict(
            self.site,
            function=qual,
            line=code.co_firstlineno,
            firstline=code.co_firstlineno,
            generator=bool(code.co_flags & CO_GENERATOR),
        )
        seen = self.seen.setdefault(qual, set())
        if getattr(BUSY, "on", False) or len(seen) >= RECORD or len(CALLS) >= MAX_CALLS:
            return
        BUSY.on = True
        try:
            # The caller's module name: what code that reads its caller's frame sees (the plain
            # program calls from a frame of that name).
            caller = frame.f_back.f_globals.get("__name__") if frame.f_back is not None else None
            site["caller"] = caller if isinstance(caller, str) else "__main__"
            # The call's arguments, from its parameters as bound: positional ones by position,
            # then `*args`; keyword-only ones and `**kwargs` by name.
            names, values = code.co_varnames, frame.f_locals
            n, k = code.co_argcount, code.co_kwonlyargcount
            a = [values[x] for x in names[:n]]
            kw = {x: values[x] for x in names[n : n + k]}
            i = n + k
            if code.co_flags & CO_VARARGS:
                a += list(values[names[i]])
                i += 1
            if code.co_flags & CO_VARKEYWORDS:
                kw.update(values[names[i]])
            try:
                data = pickled_args((tuple(a), kw), frame.f_globals)
            except Exception as e:
                unrecorded(site, "its arguments cannot be pickled (%s)" % type(e).__name__)
                return
            if len(data) > MAX_ARGS_BYTES:
                unrecorded(site, "its arguments are over 32 KiB pickled")
                return
            if data in seen:
                return
            seen.add(data)
            try:
                shown = ", ".join([canon(x) for x in a] + ["%s=%s" % (m, canon(x)) for m, x in kw.items()])
            except Uncomparable:
                shown = "(not shown)"
            entry = dict(
                site, args=base64.b64encode(data).decode(), shown=shown[:200], check=CONTEXT or "(import)"
            )
            if site["generator"]:
                entry["yielded"], entry["end"] = [], "open"
            CALLS.append(entry)
            self.active[id(frame)] = entry
        except Exception as e:
            unrecorded(site, "its arguments cannot be read (%s)" % type(e).__name__)
        finally:
            BUSY.on = False

    def exit(self, value):
        entry = self.active.pop(id(GETFRAME(1)), None)
        if entry is not None:
            if entry["generator"]:
                entry["end"] = "end"
            else:
                written(entry, "result", value)
        return value

    def item(self, value):
        entry = self.active.get(id(GETFRAME(1)))
        if entry is not None and "uncomparable" not in entry:
            written(entry, "yielded", value)
        return value

    def delegates(self, value):
        entry = self.active.get(id(GETFRAME(1)))
        if entry is not None:
            entry["uncomparable"] = "it delegates with `yield from`"
        return value

    def raised(self):
        entry = self.active.pop(id(GETFRAME(1)), None)
        if entry is not None:
            e = sys.exc_info()[0]
            if not entry["generator"]:
                entry["raised"] = qualified(e)
            elif e is GeneratorExit:
                entry["end"] = "open"
            else:
                entry["end"] = "raised " + qualified(e)


def recorder(module, real):
    return Recorder(module, real)


CONTEXT = ""


def switch(ctx):
    global CONTEXT
    for real, hits in HITS.items():
        for h in hits:
            SEEN[real].setdefault(h, set()).add(CONTEXT)
        hits.clear()
    CONTEXT = ctx


if LOADED:

    class First:
        # First again once pytest's assertion rewriter is in: it takes the files named on the
        # command line (`--doctest-modules pkg/mod.py`), and would load them without probes.
        @pytest.hookimpl(tryfirst=True)
        def pytest_sessionstart(self, session):
            if FINDER in sys.meta_path:
                sys.meta_path.remove(FINDER)
            sys.meta_path.insert(0, FINDER)

    plugins.append(First())
if watch:

    class Contexts:
        # One context per test, switched by pytest's own protocol (setup, call, teardown).
        @pytest.hookimpl(hookwrapper=True)
        def pytest_runtest_protocol(self, item, nextitem):
            switch(ident(item))
            yield
            switch("")

    plugins.append(Contexts())
# The code under test sees the argv a plain `python -m pytest ARGS` gives it: neither this
# driver's arguments nor whether it keeps only a mutant's tests.
sys.argv = [os.path.join(os.path.dirname(pytest.__file__), "__main__.py")] + args
try:
    code = pytest.main(args, plugins=plugins)
finally:
    if watch:
        switch("")
        files = {}
        for real, lines in WATCHED.items():
            if real not in PLANS:
                # Never imported: its probes as its text has them, none of them hit.
                try:
                    PLANS[real] = visit(ast.parse(open(real, "rb").read(), real), lines, False)
                except (OSError, SyntaxError, ValueError, RecursionError):
                    # Not read as Python reads it: every changed line is code no check ran.
                    PLANS[real] = ({n: [n] for n in lines}, set())
            stmts, branches = PLANS[real]
            executed, missing, contexts = [], [], {}
            for at, mine in stmts.items():
                ran = SEEN[real].get(at)
                for n in mine:
                    (executed if ran else missing).append(n)
                    if ran:
                        contexts[str(n)] = sorted(ran)
            files[NAMES[real]] = {
                "executed_lines": sorted(executed),
                "missing_lines": sorted(missing),
                "contexts": contexts,
                "missing_branches": sorted([f, t] for (f, t) in branches if (f, t) not in SEEN[real]),
            }
        calls = []
        for c in CALLS:
            c = dict(c)
            if "yielded" in c:
                items, c["ended"] = c.pop("yielded"), c.pop("end")
                c["take"], c["result"] = len(items), yielded(items, c["ended"])
            if "result" in c or "raised" in c or "uncomparable" in c:
                calls.append(c)
        lost = [
            {"file": k[0], "function": k[1], "why": k[2], "count": n} for k, n in sorted(UNRECORDED.items())
        ]
        with open(out, "w") as f:
            json.dump({"files": files, "calls": calls, "unrecorded": lost}, f)
sys.exit(int(code))
