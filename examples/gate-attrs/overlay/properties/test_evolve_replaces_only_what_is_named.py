"""evolve() changes the fields it is given and keeps every other one."""

from hypothesis import given, strategies as st

import attr


@attr.s(auto_attribs=True)
class Point:
    x: int
    y: object
    _tag: str = "p"


@given(st.integers(), st.one_of(st.integers(), st.text(), st.lists(st.integers())), st.text(), st.integers())
def test_evolve_replaces_only_what_is_named(x, y, tag, new_x):
    p = Point(x, y, tag)
    q = attr.evolve(p, x=new_x)
    assert (q.x, q.y, q._tag) == (new_x, y, tag)
    r = attr.evolve(p, tag=tag + "!")
    assert (r.x, r.y, r._tag) == (x, y, tag + "!")
