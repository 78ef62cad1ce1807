"""pairwise: each item with the next."""

from hypothesis import given, settings, strategies as st

from boltons.iterutils import pairwise


@settings(deadline=None)
@given(st.lists(st.integers()))
def test_pairwise_is_zip(items):
    assert [tuple(p) for p in pairwise(items)] == list(zip(items, items[1:]))
