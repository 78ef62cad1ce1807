"""asdict() of an instance builds it again, nested instances and collections included."""

from hypothesis import given, strategies as st

import attr


@attr.s(auto_attribs=True)
class Inner:
    a: int
    b: tuple


@attr.s(auto_attribs=True)
class Outer:
    inner: Inner
    items: list
    name: str


@given(st.integers(), st.tuples(st.integers(), st.text()), st.lists(st.integers()), st.text())
def test_asdict_roundtrip(a, b, items, name):
    o = Outer(Inner(a, b), items, name)
    d = attr.asdict(o, retain_collection_types=True)
    assert d == {"inner": {"a": a, "b": b}, "items": items, "name": name}
    assert Outer(Inner(**d["inner"]), d["items"], d["name"]) == o
