"""A value written down for comparison (CONTRACT.md 16.1, 16.2; docs/design/replay.md).

The one way the observed run and the plain program write a call's result: by its type and its
data, walked by this code, never through the value's own comparison or representation methods
(`__eq__`, `__repr__`, `__str__`, `__hash__` are never called). Scalars of the built-in types are
written by the built-in type's own method; a container by its elements; any other object by
what pickling it would store (`object.__reduce_ex__(4)`: its class, its arguments, its state).
A set is written sorted (its order hangs on the hash seed); a dict in its order. A value of more
than `CANON_PARTS` parts, or one pickling refuses, cannot be compared (`Uncomparable`).

The Rust runner puts this file before the observed run's driver and the plain program
(`include_str!`): they share it, and it is tested on its own (tests/python).
"""

CANON_PARTS = 20000


class Uncomparable(Exception):
    """A value this module will not write down (too large, or pickling refuses it)."""


def _name(t):
    module = type.__getattribute__(t, "__module__") if isinstance(t, type) else "?"
    qual = type.__getattribute__(t, "__qualname__") if isinstance(t, type) else "?"
    return "%s.%s" % (module, qual)


_SCALARS = {
    type(None): lambda v: "None",
    bool: bool.__repr__,
    int: int.__repr__,
    float: float.__repr__,
    complex: complex.__repr__,
    str: str.__repr__,
    bytes: bytes.__repr__,
    bytearray: lambda v: "bytearray(%s)" % bytes.__repr__(bytes(v)),
}
_BASES = (bool, int, float, complex, str, bytes)


def canon(value, parts=CANON_PARTS):
    """`value` as text: equal texts, equal type and data (at most `parts` parts)."""
    out = []
    _walk(value, out, [parts], set())
    return "".join(out)


def _walk(v, out, left, path):
    left[0] -= 1
    if left[0] < 0:
        raise Uncomparable("too many parts")
    t = type(v)
    write = _SCALARS.get(t)
    if write is not None:
        out.append(write(v))
        return
    if id(v) in path:
        out.append("<cycle>")
        return
    path.add(id(v))
    try:
        _compound(v, t, out, left, path)
    finally:
        path.discard(id(v))


def _items(values, out, left, path):
    for i, x in enumerate(values):
        if i:
            out.append(", ")
        _walk(x, out, left, path)


def _compound(v, t, out, left, path):
    if t is list or t is tuple:
        out.append("[" if t is list else "(")
        _items(list.__iter__(v) if t is list else tuple.__iter__(v), out, left, path)
        out.append("]" if t is list else ",)" if tuple.__len__(v) == 1 else ")")
        return
    if t is dict:
        out.append("{")
        for i, (k, x) in enumerate(dict.items(v)):
            if i:
                out.append(", ")
            _walk(k, out, left, path)
            out.append(": ")
            _walk(x, out, left, path)
        out.append("}")
        return
    if t is set or t is frozenset:
        parts = []
        for x in (set.__iter__ if t is set else frozenset.__iter__)(v):
            one = []
            _walk(x, one, left, path)
            parts.append("".join(one))
        out.append("%s{%s}" % (t.__name__, ", ".join(sorted(parts))))
        return
    if isinstance(v, type):
        out.append("<class %s>" % _name(v))
        return
    kind = _callable_kind(v)
    if kind is not None:
        out.append(kind)
        return
    for base in _BASES:
        if issubclass(t, base):
            # A subclass of a scalar (an IntEnum member, a str subclass): its type and value.
            out.append("<%s %s>" % (_name(t), _SCALARS[base](v)))
            return
    _reduced(v, t, out, left, path)


def _callable_kind(v):
    import types

    if isinstance(v, (types.FunctionType, types.BuiltinFunctionType)):
        return "<function %s.%s>" % (getattr(v, "__module__", "?"), getattr(v, "__qualname__", "?"))
    if isinstance(v, types.ModuleType):
        return "<module %s>" % object.__getattribute__(v, "__name__")
    return None


def _reduced(v, t, out, left, path):
    try:
        reduced = object.__reduce_ex__(v, 4)
    except Exception as e:
        raise Uncomparable("%s cannot be pickled: %s" % (_name(t), type(e).__name__)) from None
    if isinstance(reduced, str):
        out.append("<global %s>" % reduced)
        return
    out.append("<%s" % _name(t))
    for part in tuple(reduced)[1:]:
        out.append(" ")
        if part is not None and not isinstance(part, (tuple, dict, list)) and hasattr(part, "__next__"):
            part = list(part)  # listitems, dictitems: iterators pickling would drain
        _walk(part, out, left, path)
    out.append(">")


def _by_name(v):
    import types

    plain = (
        type,
        types.ModuleType,
        types.FunctionType,
        types.BuiltinFunctionType,
        types.MethodType,
        bool,
        int,
        float,
        complex,
        str,
        bytes,
        type(None),
        list,
        tuple,
        dict,
        set,
        frozenset,
    )
    return not isinstance(v, plain)


def pickled_args(value, scope):
    """`value` pickled (protocol 4), each object that is a global of `scope` (the called
    function's module namespace) by its name: a sentinel (`_marker = object()`, a default the
    function tests with `is`) stays that very object when the plain program unpickles it."""
    import io
    import pickle

    refs = {id(v): k for k, v in list(scope.items()) if _by_name(v)}

    class Pickler(pickle.Pickler):
        def persistent_id(self, obj):
            name = refs.get(id(obj))
            return None if name is None else ("global", name)

    out = io.BytesIO()
    Pickler(out, 4).dump(value)
    return out.getvalue()


def unpickled_args(data, module):
    """`pickled_args`' bytes read back, a global of `module` by its name."""
    import importlib
    import io
    import pickle

    class Unpickler(pickle.Unpickler):
        def persistent_load(self, pid):
            if type(pid) is tuple and len(pid) == 2 and pid[0] == "global" and type(pid[1]) is str:
                return getattr(importlib.import_module(module), pid[1])
            raise pickle.UnpicklingError("not a reference this program writes")

    return Unpickler(io.BytesIO(data)).load()


def yielded(items, end):
    """A generator's result: the items its caller consumed (each as `canon` writes it) and how it
    ended: `open` (the caller stopped taking), `end`, or `raised T`."""
    return "<yielded [%s] %s>" % (", ".join(items), end)
