"""sliding_window: window i is the slice items[i:i+n], and there are len - n + 1 of them."""

from hypothesis import given, settings, strategies as st

from toolz import sliding_window


@settings(max_examples=300, deadline=None)
@given(st.lists(st.integers(), min_size=20, max_size=200))
def test_sliding_window_slices(items):
    for n in range(1, 49):
        windows = list(sliding_window(n, items))
        assert windows == [tuple(items[i:i + n]) for i in range(len(items) - n + 1)]
