"""The programs the gate hands an interpreter (src/cli/gate/programs), tested as Python
(issue 66): the canonical writing of values, the observed run's recording, the plain program.
Run by `cargo test` (tests/house.rs) as `python3 -m pytest tests/python`."""

import base64
import json
import os
import pickle
import subprocess
import sys
import threading
from pathlib import Path

import pytest

PROGRAMS = Path(__file__).resolve().parents[2] / "src" / "cli" / "gate" / "programs"
sys.path.insert(0, str(PROGRAMS))

from replay_canon import Uncomparable, canon, yielded  # noqa: E402
import replay_neighbours  # noqa: E402


class Liar:
    """A value whose own methods lie or fail: canon never calls them."""

    def __init__(self, n):
        self.n = n

    def __eq__(self, other):
        return True

    def __hash__(self):
        raise AssertionError("hash called")

    def __repr__(self):
        raise AssertionError("repr called")


class Number(int):
    pass


def test_scalars_and_containers_are_written_by_type_and_data():
    # Written by hand: equal values of different types are different texts.
    assert canon(1) == "1"
    assert canon(1.0) == "1.0"
    assert canon(True) == "True"
    assert canon("a") == "'a'"
    assert canon([1, (2, "x")]) == "[1, (2, 'x')]"
    assert canon({"a": [None]}) == "{'a': [None]}"
    assert canon(Number(3)) == "<%s.Number 3>" % __name__
    assert canon([1]) != canon((1,))
    assert canon((1,)) == "(1,)"


def test_a_set_is_written_sorted_whatever_its_order():
    assert canon({"b", "a", "c"}) == "set{'a', 'b', 'c'}"
    assert canon(frozenset([3, 1])) == "frozenset{1, 3}"


def test_an_object_is_written_by_its_pickled_state_never_its_own_methods():
    a, b = canon(Liar(1)), canon(Liar(2))
    assert a != b
    assert "{'n': 1}" in a and "Liar" in a


def test_what_cannot_be_pickled_or_is_too_large_is_uncomparable():
    with pytest.raises(Uncomparable):
        canon(threading.Lock())
    with pytest.raises(Uncomparable):
        canon(list(range(30000)))


def test_a_cycle_is_written_once():
    x = []
    x.append(x)
    assert canon(x) == "[<cycle>]"


def test_a_generator_s_result_is_what_was_taken_and_how_it_ended():
    assert yielded(["1", "2"], "open") == "<yielded [1, 2] open>"


def program(name):
    parts = ["replay_canon.py"] + (["replay_neighbours.py"] if name == "replay_plain.py" else []) + [name]
    return "".join((PROGRAMS / p).read_text() for p in parts)


def observed(tree, report, lines, *head):
    """The observed run's driver on `tree`'s tests (`head` before its own flags), recording at
    most 5 calls of each changed function into `report`: the report."""
    argv = [sys.executable, "-c", program("observe_driver.py"), *head, "--record", "5", str(report), lines]
    argv += ["--", "-q", "-p", "no:cacheprovider", "tests"]
    done = subprocess.run(argv, cwd=tree, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    return json.loads(report.read_text())


def plain(out, specs, *flags, cwd=None):
    """The plain program on `specs` (JSON strings), writing beside `out`: its lines."""
    argv = [sys.executable, "-c", program("replay_plain.py"), *flags, str(out), *specs]
    done = subprocess.run(argv, cwd=cwd, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    return [json.loads(x) for x in out.with_name(out.name + ".replay").read_text().splitlines()]


def package(tmp_path):
    pkg = tmp_path / "tree" / "pkg"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "mod.py").write_text(
        "import os, sys, logging\n"
        "def where(x):\n"
        "    return (x, os.getcwd() == os.path.dirname(os.path.dirname(__file__)), len(sys.argv),\n"
        "            bool(logging.getLogger().handlers))\n"
        "def squares(n):\n"
        "    for i in range(n):\n"
        "        yield i * i\n"
        "class C:\n"
        "    @staticmethod\n"
        "    def twice(v):\n"
        "        return [v, v]\n"
        "def caller():\n"
        '    """The module that called (what attrs.make_class reads)."""\n'
        "    return sys._getframe(1).f_globals['__name__']\n"
        "def framed():\n"
        '    """What attrs\' test_missing_sys_getframe asks: it works without sys._getframe."""\n'
        "    return hasattr(sys, '_getframe')\n"
        "def spread(a, /, b, *rest, c, **more):\n"
        "    if a:\n"
        "        return (a, b, rest, c, more)\n"
        "    raise ValueError(b)\n"
    )
    tests = tmp_path / "tree" / "tests"
    tests.mkdir()
    (tests / "__init__.py").write_text("")
    (tests / "test_mod.py").write_text(
        "import pytest\n"
        "from pkg.mod import where, squares, C, caller, spread, framed\n"
        "def test_all():\n"
        "    assert where(1)[0] == 1\n"
        "    it = squares(5); next(it); next(it)\n"
        "    assert list(squares(3)) == [0, 1, 4]\n"
        "    assert C.twice('a') == ['a', 'a']\n"
        "    assert caller() == __name__\n"
        "    import sys\n"
        "    getframe = sys._getframe\n"
        "    del sys._getframe\n"
        "    try:\n"
        "        assert framed() is False\n"
        "    finally:\n"
        "        sys._getframe = getframe\n"
        "    assert spread(1, 2, 3, c=4, d=5) == (1, 2, (3,), 4, {'d': 5})\n"
        "    with pytest.raises(ValueError):\n"
        "        spread(0, 2, c=3)\n"
    )
    return tmp_path / "tree"


def test_the_observed_run_records_calls_and_the_plain_program_makes_them_again(tmp_path):
    tree = package(tmp_path)
    calls = observed(tree, tmp_path / "observe.json", "pkg/mod.py:1-21")["calls"]
    by = {(c["function"], c.get("take")): c for c in calls}
    where = by[("where", None)]
    # Under pytest: the tree is the working directory, and the logging plugin has a handler.
    assert where["result"] == "(1, True, %s, True)" % where["result"].split(", ")[2]
    assert where["check"] == "tests.test_mod::test_all"
    assert where["shown"] == "1"
    assert by[("squares", 2)]["result"] == "<yielded [0, 1] open>"
    assert by[("squares", 3)]["result"] == "<yielded [0, 1, 4] end>"
    assert by[("C.twice", None)]["result"] == "['a', 'a']"
    # No frame added between the caller and the function: it still sees its caller.
    assert by[("caller", None)]["result"] == "'tests.test_mod'"
    spreads = [c for c in calls if c["function"] == "spread"]
    assert [c.get("result", c.get("raised")) for c in spreads] == [
        "(1, 2, (3,), 4, {'d': 5})",
        "builtins.ValueError",
    ]
    assert spreads[0]["shown"] == "1, 2, 3, c=4, d=5"
    # The plain program: another working directory, a script's argv, no logging handler.
    lines = plain(tmp_path / "plain.xml", [json.dumps(c) for c in calls], cwd=tree)
    assert lines[0] == {"start": len(calls)} and lines[-1] == {"end": len(calls)}
    got = {calls[x["i"]]["function"] + str(calls[x["i"]].get("take")): x for x in lines[1:-1]}
    assert got["whereNone"]["result"] == "(1, False, 1, False)"
    assert got["squares2"]["result"] == "<yielded [0, 1] open>"
    assert got["squares3"]["result"] == "<yielded [0, 1, 4] end>"
    assert got["C.twiceNone"]["result"] == "['a', 'a']"
    # Called from a frame of the recorded caller's module name, as under the tests.
    assert got["callerNone"]["result"] == "'tests.test_mod'"
    spread = [x for x in lines[1:-1] if calls[x["i"]]["function"] == "spread"]
    assert sorted(str(x.get("result", x.get("raised"))) for x in spread) == [
        "(1, 2, (3,), 4, {'d': 5})",
        "builtins.ValueError",
    ]


def test_a_call_that_cannot_be_found_or_unpickled_is_unreplayed(tmp_path):
    tree = package(tmp_path)
    spec = {
        "module": "pkg.mod",
        "function": "gone",
        "firstline": 1,
        "path": str(tree / "pkg/mod.py"),
        "root": str(tree),
        "args": base64.b64encode(pickle.dumps(((), {}))).decode(),
    }
    lines = plain(tmp_path / "plain.xml", [json.dumps(spec)], cwd=os.getcwd())
    assert "unreplayed" in lines[1]


def test_a_call_whose_arguments_import_the_test_runner_is_not_made(tmp_path):
    tree = package(tmp_path)
    (tree / "tests" / "helpers.py").write_text("import pytest\nclass Box:\n    pass\n")
    sys.path.insert(0, str(tree))
    try:
        from tests.helpers import Box

        boxed = base64.b64encode(pickle.dumps(((Box(),), {}))).decode()
    finally:
        sys.path.remove(str(tree))
        for m in [m for m in sys.modules if m == "tests" or m.startswith("tests.")]:
            del sys.modules[m]
    mod = tree / "pkg" / "mod.py"
    args = base64.b64encode(pickle.dumps(((1,), {}))).decode()
    call = {"module": "pkg.mod", "function": "C.twice", "firstline": 9, "path": str(mod), "root": str(tree)}
    specs = [json.dumps(dict(call, args=boxed)), json.dumps(dict(call, args=args))]
    lines = {x.get("i"): x for x in plain(tmp_path / "plain.xml", specs)}
    # The plain call went first and was made; the one that imports pytest was not.
    assert lines[1]["result"] == "[1, 1]"
    assert "test runner" in lines[0]["unreplayed"]


def test_recording_works_beside_a_shard_s_or_the_ledger_s_except(tmp_path):
    # The driver's `--except` (tests other shards own, frozen tests) before `--observe`: the
    # recorder's names never shadow the driver's own (a function once named `keep` did).
    tree = package(tmp_path)
    head = ("--except", "tests.test_mod::test_gone", "--observe")
    report = observed(tree, tmp_path / "observe.json", "pkg/mod.py:1-21", *head)
    assert {c["function"] for c in report["calls"]} >= {"where", "caller", "spread"}


def labels(v, literals=()):
    return [label for label, _ in replay_neighbours.variants(v, list(literals))]


def made(v, literals=()):
    return {label: f(v) for label, f in replay_neighbours.variants(v, list(literals))}


def test_neighbours_are_drawn_by_kind_as_the_contract_lists_them():
    # CONTRACT.md 16.3, written by hand.
    assert made(5) == {"+ 1": 6, "- 1": 4, "0": 0, "negated": -5, "large": 2**64 + 5}
    assert made(0) == {"+ 1": 1, "- 1": -1, "large": 2**64}
    assert made(True) == {"negated": False}
    assert made("ab") == {"empty": "", "one shorter": "a", "one longer": "abb"}
    assert made(b"") == {"one longer": b"a"}
    seq = made([1, 2, 3])
    assert seq["as a tuple"] == (1, 2, 3) and list(seq["as an iterator"]) == [1, 2, 3]
    assert list(seq["as a generator"]) == [1, 2, 3] and type(seq["as a generator"]).__name__ == "generator"
    assert (seq["empty"], seq["one shorter"], seq["one longer"]) == ([], [1, 2], [1, 2, 3, 3])
    assert made((1,))["as a list"] == [1]
    assert made({"a": 1, "b": 2}) == {
        "without its last key": {"a": 1},
        "with a key more": {"a": 1, "b": 2, "b_": 2},
    }
    assert labels(object()) == [] and labels(None) == []


def test_the_patch_s_integer_literals_are_tried_as_values_and_as_lengths():
    assert made(5, [10]) == {
        "+ 1": 6,
        "- 1": 4,
        "0": 0,
        "negated": -5,
        "large": 2**64 + 5,
        "= 9": 9,
        "= 10": 10,
        "= 11": 11,
    }
    text = made("ab", [4])
    # (A length drawn twice is made once, under its first label.)
    assert (text["one longer"], text["of length 4"], text["of length 5"]) == ("abb", "abab", "ababa")
    assert "of length 3" not in text
    assert len(made([1], [8192])["of length 8193"]) == 8193
    # Past the longest made, or below nothing: not drawn.
    assert not [x for x in labels("ab", [10**6]) if "length" in x and "shorter" not in x]


def test_the_plain_program_makes_each_neighbour_on_the_base_by_name(tmp_path):
    tree = one_module(tmp_path, "\n\ndef first(items, n=1):\n    return list(items)[:n]\n")
    spec = {
        "module": "pkg.m",
        "function": "first",
        "firstline": 99,
        "path": str(tree / "pkg/m.py"),
        "root": str(tree),
        "args": base64.b64encode(pickle.dumps((([3, 4],), {"n": 1}))).decode(),
    }
    # The line its code starts on moved: found by name with --base, unreplayed without.
    for flags in ([], ["--base"]):
        lines = plain(tmp_path / "plain.xml", [json.dumps(spec)], *flags, "--neighbours", "[]")
        if not flags:
            assert "unreplayed" in lines[1] and len(lines) == 3
    assert lines[1] == {"i": 0, "result": "[3]"}
    near = {x["input"]: x for x in lines[2:-1]}
    assert near["items as a tuple"]["result"] == "[3]" and near["items as a tuple"]["shown"] == "(3, 4)"
    assert near["items empty"]["result"] == "[]"
    assert near["items as an iterator"]["shown"] == "<list_iterator>"
    assert near["n + 1"]["result"] == "[3, 4]" and near["n + 1"]["n"] >= 1
    assert lines[-1] == {"end": 1}


def one_module(tmp_path, text):
    """A tree with package `pkg` holding module `m` of `text`; the tree."""
    tree = tmp_path / "tree"
    (tree / "pkg").mkdir(parents=True)
    (tree / "pkg" / "__init__.py").write_text("")
    (tree / "pkg" / "m.py").write_text(text)
    return tree


def test_an_iterator_returned_is_also_written_down_by_what_it_yields(tmp_path):
    tree = one_module(
        tmp_path,
        "import itertools\n\ndef pairs(n):\n    return itertools.product(range(n), 'ab')\n\n"
        "def pairs_too(n):\n    return ((i, c) for i in range(n) for c in 'ab')\n",
    )
    results = {}
    for name, line in (("pairs", 3), ("pairs_too", 6)):
        spec = {
            "module": "pkg.m",
            "function": name,
            "firstline": line,
            "path": str(tree / "pkg/m.py"),
            "root": str(tree),
            "args": base64.b64encode(pickle.dumps(((2,), {}))).decode(),
        }
        results[name] = plain(tmp_path / "plain.xml", [json.dumps(spec)])[1]
    # Two kinds of iterator: written down otherwise, yielding the same items.
    want = "<yielded [(0, 'a'), (0, 'b'), (1, 'a'), (1, 'b')] end>"
    assert results["pairs"]["items"] == results["pairs_too"]["items"] == want
    assert results["pairs"].get("result") != results["pairs_too"].get("result")


def test_a_sentinel_default_stays_the_module_s_own_object(tmp_path):
    # more-itertools' minmax(iterable, default=_marker): recorded with its default bound, the
    # argument is the module's `_marker`; pickled as a copy it was another object, and the plain
    # program returned it where the tests saw ValueError.
    tree = one_module(
        tmp_path,
        "_marker = object()\n\ndef first(items, default=_marker):\n    for x in items:\n        return x\n"
        "    if default is _marker:\n        raise ValueError('empty')\n    return default\n",
    )
    tests = tree / "tests"
    tests.mkdir()
    (tests / "__init__.py").write_text("")
    (tests / "test_m.py").write_text(
        "import pytest\nfrom pkg.m import first\n\ndef test_empty():\n    with pytest.raises(ValueError):\n"
        "        first([])\n"
    )
    calls = observed(tree, tmp_path / "observe.json", "pkg/m.py:3-8")["calls"]
    assert [c.get("raised") for c in calls] == ["builtins.ValueError"]
    lines = plain(tmp_path / "plain.xml", [json.dumps(calls[0])], cwd=tree)
    assert lines[1] == {"raised": "builtins.ValueError", "i": 0}


def test_the_module_list_names_the_standard_the_built_in_and_the_installed_modules(tmp_path):
    # Isolated (-I) as shadows.rs runs it: a module in the working directory is not listed.
    (tmp_path / "only_here_9f1.py").write_text("")
    done = subprocess.run(
        [sys.executable, "-I", "-c", program("list_modules.py")],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=True,
    )
    names = done.stdout.splitlines()
    assert names == sorted(set(names))
    assert {"json", "sys", "pytest", "hypothesis"} <= set(names)
    assert "only_here_9f1" not in names
