"""groupby: the groups partition the input, each in input order, keyed by the function."""

from hypothesis import given, settings, strategies as st

from toolz import groupby


@settings(max_examples=300, deadline=None)
@given(st.lists(st.integers(), min_size=20, max_size=200))
def test_groupby_partitions(items):
    for m in range(1, 61):
        groups = groupby(lambda x: x % m, items)
        assert sorted(x for g in groups.values() for x in g) == sorted(items)
        for key, group in groups.items():
            assert group == [x for x in items if x % m == key]
