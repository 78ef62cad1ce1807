"""A recorded call's neighbours (issue 66, CONTRACT.md 16.3; docs/design/replay.md).

Each argument in turn replaced by variants of its kind, the others as recorded: a sequence as the
other sequence kinds (list, tuple, iterator, generator), empty, one shorter and one longer; a
number +1, -1, 0, negated and large; a string or bytes empty and one longer; a mapping with a key
less and a key more; a bool negated. Every integer literal the patch adds (`LITERALS`), ±1, is
also tried as a number's value and as a sequence's or string's length (its elements cycled): the
boundaries the patch itself draws. The variants are drawn from the recorded value alone, so the
base's program and the patch's draw the same ones, in the same order, under the same labels.

The Rust runner puts replay_canon.py and this file before the plain program (`include_str!`).
"""

if "canon" not in globals():
    # Run on its own (its tests): the shared part from the file beside it.
    from replay_canon import canon

# Most neighbours of one call; the longest sequence or string a neighbour is made.
MAX_NEIGHBOURS = 32
MAX_LENGTH = 100000


def _short(v):
    try:
        text = canon(v)
    except Exception:
        return "?"
    return text if len(text) <= 40 else text[:39] + "…"


def _cycled(v, n):
    """`v`'s elements (or characters) cycled to length `n`, of `v`'s kind."""
    if not v or n < 0 or n > MAX_LENGTH:
        return None
    reps = v * (n // len(v) + 1)
    return reps[:n]


def _lengths(v, literals):
    n = len(v)
    out = [("empty", 0), ("one shorter", n - 1), ("one longer", n + 1)]
    for lit in literals:
        for d in (-1, 0, 1):
            out.append(("of length %d" % (lit + d), lit + d))
    seen, kept = {n}, []
    for label, m in out:
        if 0 <= m <= MAX_LENGTH and m not in seen:
            seen.add(m)
            kept.append((label, m))
    return kept


def _number_variants(v, literals):
    if type(v) is int:
        out = [("+ 1", v + 1), ("- 1", v - 1), ("0", 0), ("negated", -v if v else -1), ("large", 2**64 + v)]
    else:
        out = [
            ("+ 1", v + 1.0),
            ("- 1", v - 1.0),
            ("0", 0.0),
            ("negated", -v if v else -1.0),
            ("large", 1e300),
        ]
    for lit in literals:
        for d in (-1, 0, 1):
            out.append(("= %d" % (lit + d), type(v)(lit + d)))
    seen, kept = {repr(v)}, []
    for label, x in out:
        if repr(x) not in seen:
            seen.add(repr(x))
            kept.append((label, lambda _v, x=x: x))
    return kept


def _sequence_variants(v, literals):
    t = type(v)
    out = []
    if t is list:
        out.append(("as a tuple", lambda x: tuple(x)))
    else:
        out.append(("as a list", lambda x: list(x)))
    out.append(("as an iterator", lambda x: iter(list(x))))
    out.append(("as a generator", lambda x: (e for e in list(x))))
    for label, m in _lengths(v, literals):
        if m == len(v) + 1 and v:
            out.append((label, lambda x: x + x[-1:]))
        elif m == 0:
            out.append((label, lambda x: x[:0]))
        elif v:
            out.append((label, lambda x, m=m: _cycled(x, m)))
    return out


def _text_variants(v, literals):
    out = []
    for label, m in _lengths(v, literals):
        if m == 0:
            out.append((label, lambda x: x[:0]))
        elif m == len(v) + 1:
            pad = v[-1:] or ("a" if type(v) is str else b"a")
            out.append((label, lambda x, pad=pad: x + pad))
        elif v:
            out.append((label, lambda x, m=m: _cycled(x, m)))
    return out


def _mapping_variants(v):
    out = []
    keys = list(dict.keys(v))
    if keys:
        last = keys[-1]
        out.append(("without its last key", lambda x, k=last: {a: b for a, b in dict.items(x) if a != k}))
        extra = None
        if all(type(k) is str for k in keys):
            extra = last + "_"
            while extra in keys:
                extra += "_"
        elif all(type(k) is int for k in keys):
            extra = max(keys) + 1
        if extra is not None:
            value = dict.__getitem__(v, last)
            out.append(("with a key more", lambda x, e=extra, val=value: {**x, e: val}))
    return out


def variants(v, literals):
    """The labelled variants of one argument: (label, a function of a fresh copy of it)."""
    t = type(v)
    if t is bool:
        return [("negated", lambda x: not x)]
    if t is int or t is float:
        return _number_variants(v, literals)
    if t is str or t is bytes:
        return _text_variants(v, literals)
    if t is list or t is tuple:
        return _sequence_variants(v, literals)
    if t is dict:
        return _mapping_variants(v)
    return []


def neighbours(args, kwargs, names, literals):
    """The call's neighbours: (label, index or key of the argument, its variant's function), at
    most MAX_NEIGHBOURS, the arguments in order."""
    out = []
    for i, v in enumerate(args):
        name = names[i] if i < len(names) else "argument %d" % (i + 1)
        if i == 0 and name in ("self", "cls"):
            continue
        for label, f in variants(v, literals):
            out.append(("%s %s" % (name, label), i, f))
    for k, v in kwargs.items():
        for label, f in variants(v, literals):
            out.append(("%s %s" % (k, label), k, f))
    return out[:MAX_NEIGHBOURS]


def applied(args, kwargs, where, f):
    """The arguments with the one at `where` (an index or a key) replaced by `f` of it."""
    if isinstance(where, int):
        args = list(args)
        args[where] = f(args[where])
        return tuple(args), kwargs
    kwargs = dict(kwargs)
    kwargs[where] = f(kwargs[where])
    return args, kwargs


def shown_value(x):
    """A neighbour's changed argument as shown (an iterator or generator by its kind)."""
    if hasattr(x, "__next__"):
        return "<%s>" % type(x).__name__
    if type(x) in (list, tuple, str, bytes, dict) and len(x) > 40:
        return "<%s of length %d>" % (type(x).__name__, len(x))
    return _short(x)
