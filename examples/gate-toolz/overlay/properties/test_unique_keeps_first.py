"""unique: each value once, at its first place, in order."""

from hypothesis import given, settings, strategies as st

from toolz import unique


@settings(max_examples=300, deadline=None)
@given(st.lists(st.integers(min_value=-20, max_value=20), min_size=20, max_size=300))
def test_unique_keeps_first(items):
    for k in range(1, 37):
        assert list(unique(items, key=lambda x: x % k)) == [x for i, x in enumerate(items) if x % k not in [y % k for y in items[:i]]]
    seen = []
    for x in items:
        if x not in seen:
            seen.append(x)
    assert list(unique(items)) == seen
    assert list(unique(items, key=abs)) == [x for i, x in enumerate(items) if abs(x) not in map(abs, items[:i])]
