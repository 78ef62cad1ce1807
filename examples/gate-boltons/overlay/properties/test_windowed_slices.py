"""windowed: every window is the slice of the input at its position."""

from hypothesis import given, settings, strategies as st

from boltons.iterutils import windowed


@settings(deadline=None)
@given(st.lists(st.integers()), st.integers(min_value=1, max_value=8))
def test_windowed_slices(items, size):
    windows = windowed(items, size)
    assert len(windows) == max(0, len(items) - size + 1)
    for i, window in enumerate(windows):
        assert list(window) == items[i : i + size]
