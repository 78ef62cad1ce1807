"""The plain program (issue 66, CONTRACT.md 16.2, 16.3; docs/design/replay.md).

Run as `python -c CANON+NEIGHBOURS+PLAIN [--base] [--most N] [--neighbours LITERALS] OUT CALL...` in the
room (CANON is replay_canon.py and NEIGHBOURS replay_neighbours.py, put before this file by the
Rust that runs it), each CALL one call the observed run recorded, as JSON: `module`,
`function` (its qualified name), `firstline`, `path`, `root` (where its top package is found),
`args` (the pickled arguments, base64), `caller` (the calling module's name: the call is made
from a frame of that name), `generator`, and a generator's `take` and `ended`.

It is a plain script: no test runner or property engine imported, warnings and logging as the
interpreter starts them, a fresh empty working directory, a script's own `argv`. It imports each
call's module from its import root, finds the function as the module defines it (through
`staticmethod`, `classmethod`, `property` and `functools.wraps` to the function whose code
starts on the recorded line), and calls it with the recorded arguments, in the recorded order.
The test runner and the property engine are never imported: a call whose arguments import one
(a class a test module defines) is not made, nor any after it (such calls go last). Each call's
result, written by replay_canon's `canon` (a generator's: the items its caller took, and how it
ended), is one JSON line of `OUT.replay`, written and flushed as the call ends: a call
that never returns has no line. `OUT` gets a JUnit receipt of the calls made. The first line
says the program started, the last that it ended.

With `--neighbours LITERALS` (a JSON list of the integers the patch adds), after every recorded
call each call's neighbours are made too (replay_neighbours.py), one line each with `n` (1 on;
the recorded call is 0), the neighbour's label `input` and its changed argument `shown`; at most
N per call (`--most`). A call that returns an iterator has its items too (`items`, `drained`). With
`--base` the program runs on the base's tree: the function is found by its name and file, not by
the line its code starts on (the patch moved it).
"""

import sys

if "canon" not in globals():
    # Run on its own (its tests): the shared part from the file beside it.
    from replay_canon import CANON_PARTS, Uncomparable, canon, unpickled_args, yielded
    from replay_neighbours import applied, neighbours, shown_value
import base64
import importlib
import json
import os
import tempfile

ARGV, BASE, LITERALS, MOST = sys.argv[1:], False, None, 32
while ARGV[:1] in (["--base"], ["--neighbours"], ["--most"]):
    if ARGV[0] == "--base":
        BASE, ARGV = True, ARGV[1:]
    elif ARGV[0] == "--most":
        MOST, ARGV = int(ARGV[1]), ARGV[2:]
    else:
        LITERALS, ARGV = [int(x) for x in json.loads(ARGV[1])], ARGV[2:]
OUT, CALLS = ARGV[0], [json.loads(c) for c in ARGV[1:]]
HOME = tempfile.mkdtemp()
os.chdir(HOME)
sys.argv = [os.path.join(HOME, "main.py")]
globals()["__file__"] = sys.argv[0]
ROOTS = list(dict.fromkeys(c.get("root", "") for c in CALLS if c.get("root")))
sys.path[:] = [HOME] + ROOTS + [p for p in sys.path if p not in ("", ".") and p not in ROOTS]


def qualified(t):
    return "%s.%s" % (getattr(t, "__module__", "?"), getattr(t, "__qualname__", "?"))


def find(c):
    """The function `c` recorded, as its module defines it."""
    obj = importlib.import_module(c["module"])
    parts = c["function"].split(".")
    for part in parts[:-1]:
        obj = getattr(obj, part)
    own = getattr(obj, "__dict__", {})
    todo = [own[parts[-1]]] if parts[-1] in own else [getattr(obj, parts[-1])]
    seen = set()
    while todo:
        x = todo.pop()
        if id(x) in seen:
            continue
        seen.add(id(x))
        code = getattr(x, "__code__", None)
        if (
            code is not None
            and (code.co_name == parts[-1] if BASE else code.co_firstlineno == c["firstline"])
            and os.path.realpath(code.co_filename) == c["path"]
        ):
            return x
        # (A property's getter, setter and deleter share its name: each is looked at.)
        for attr in ("__func__", "fget", "fset", "fdel", "__wrapped__", "func"):
            y = getattr(x, attr, None)
            if y is not None:
                todo.append(y)
    raise LookupError("not found as its module defines it")


def consume(it, c):
    """What the caller consumed of a generator, taken again: as many items as it took (and on
    to its end, but no further than one item more, when it ended)."""
    items, end = [], "open"
    try:
        while c["ended"] != "open" or len(items) < c["take"]:
            if len(items) > c["take"]:
                break
            try:
                x = next(it)
            except StopIteration:
                end = "end"
                break
            items.append(canon(x))
    except Uncomparable:
        raise
    except BaseException as e:
        end = "raised " + qualified(type(e))
    return yielded(items, end)


# The test runner and the property engine: once imported (a call's arguments unpickled from a
# class a test module defines import that module), the program is no longer plain, and no later
# call is made.
RUNNERS = ("pytest", "_pytest", "hypothesis")


def runner_loaded():
    return any(m in sys.modules for m in RUNNERS)


def caller(name):
    """A function that calls from a frame whose module is `name`: the recorded call's caller, as
    code that reads its caller's frame (`attrs.make_class` names a class's module so) sees it."""
    scope = {"__name__": name}
    exec("def call(fn, args, kwargs):\n    return fn(*args, **kwargs)\n", scope)
    return scope["call"]


def replay(c):
    """One line: the call's result, or what it raised, or why it was not made."""
    try:
        fn = find(c)
        args, kwargs = unpickled_args(base64.b64decode(c["args"]), c["module"])
    except BaseException as e:
        return {"unreplayed": "%s: %s" % (qualified(type(e)), str(e)[:200])}
    return made(c, fn, args, kwargs)


# A neighbour's result may be as large as the lengths the patch's literals draw: written down
# with more parts, and, when long, as its SHA-256 and its start (the base's program and the
# patch's write it alike).
NEIGHBOUR_PARTS = 400000
LONG = 4096


def digested(line, keys=("result", "items")):
    import hashlib

    for key in keys:
        text = line.get(key)
        if text is not None and len(text) > LONG:
            digest = hashlib.sha256(text.encode("utf-8", "backslashreplace")).hexdigest()
            line[key] = "sha256:%s %s…" % (digest, text[:120])
    return line


# An iterator a function returns (not a generator function's own: that is `consume`d as its
# caller took it) is also written down by what it yields, at most ITEMS items and whether it
# ended: the base's answer and the patch's are compared so (16.3), two kinds of lazy iterator
# that yield the same items alike; 16.2 compares the result as written down.
ITEMS = 1000


def drained(result, parts):
    """What iterator `result` yields (`None` when it is no iterator)."""
    kind = type(result)
    if not hasattr(kind, "__next__") or not hasattr(kind, "__iter__"):
        return None
    items, end = [], "open"
    try:
        while len(items) < ITEMS:
            try:
                x = next(result)
            except StopIteration:
                end = "end"
                break
            items.append(canon(x, parts))
    except Uncomparable:
        raise
    except BaseException as e:
        end = "raised " + qualified(type(e))
    return yielded(items, end)


def made(c, fn, args, kwargs, parts=CANON_PARTS):
    """The call of `fn` with `args` and `kwargs` as `c` was made: its line."""
    if runner_loaded():
        return {"unreplayed": "its arguments import the test runner: not a plain program"}
    try:
        result = caller(c.get("caller") or "__main__")(fn, args, kwargs)
        if c.get("generator"):
            result = consume(result, c)
            return {"result": result}
    except Uncomparable as e:
        return {"unreplayed": "its result cannot be compared: %s" % e}
    except BaseException as e:
        return {"raised": qualified(type(e))}
    line = {}
    try:
        line["result"] = canon(result, parts)
    except Uncomparable as e:
        line["unreplayed"] = "its result cannot be compared: %s" % e
    try:
        items = drained(result, parts)
    except Uncomparable:
        items = None
    if items is not None:
        line["items"] = items
    return line


def neighboured(i, c):
    """The lines of call `c`'s neighbours (none when it cannot be made)."""
    try:
        fn = find(c)
        data = base64.b64decode(c["args"])
        args, kwargs = unpickled_args(data, c["module"])
        code = getattr(fn, "__code__", None)
        names = code.co_varnames[: code.co_argcount] if code is not None else ()
        near = neighbours(args, kwargs, names, LITERALS)[:MOST]
    except BaseException:
        return
    for n, (label, where, f) in enumerate(near, 1):
        line = {"i": i, "n": n, "input": label[:200]}
        try:
            args, kwargs = applied(*unpickled_args(data, c["module"]), where, f)
            line["shown"] = shown_value(args[where] if isinstance(where, int) else kwargs[where])
        except BaseException as e:
            line["unreplayed"] = "its neighbour cannot be made: %s" % qualified(type(e))
            yield line
            continue
        yield digested(dict(made(c, fn, args, kwargs, NEIGHBOUR_PARTS), **line))


def main():
    with open(OUT + ".replay", "w") as lines:
        lines.write(json.dumps({"start": len(CALLS)}) + "\n")
        lines.flush()
        # The calls whose arguments may name a test module's class last: a call that imports
        # the runner ends the plain calls (the order is only an order; the check is above).
        order = sorted(range(len(CALLS)), key=lambda i: b"test" in base64.b64decode(CALLS[i]["args"]))
        for i in order:
            c = CALLS[i]
            if runner_loaded():
                line = {"unreplayed": "not made: an earlier call imported the test runner", "i": i}
            else:
                line = digested(dict(replay(c), i=i), ("items",))
            lines.write(json.dumps(line) + "\n")
            lines.flush()
        if LITERALS is not None:
            for i in order:
                if runner_loaded():
                    break
                for line in neighboured(i, CALLS[i]):
                    lines.write(json.dumps(line) + "\n")
                    lines.flush()
        lines.write(json.dumps({"end": len(CALLS)}) + "\n")
    with open(OUT, "w") as junit:
        cases = "".join('<testcase classname="replay" name="call-%d"/>' % i for i in range(len(CALLS)))
        junit.write('<testsuite name="replay" tests="%d">%s</testsuite>\n' % (len(CALLS), cases))


main()
sys.stdout.flush()
sys.stderr.flush()
# (Threads the calls started are not waited for.)
os._exit(0)
