"""unique: each value once, in the order it first appears."""

from hypothesis import given, settings, strategies as st

from boltons.iterutils import unique


@settings(deadline=None)
@given(st.lists(st.integers(min_value=-5, max_value=5)))
def test_unique_keeps_first(items):
    assert unique(items) == list(dict.fromkeys(items))
