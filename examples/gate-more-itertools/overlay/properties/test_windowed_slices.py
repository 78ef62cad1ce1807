"""windowed: over a sequence at least n long, the windows are its slices of n, in order."""

from hypothesis import assume, given, settings, strategies as st

from more_itertools import windowed


@settings(deadline=None)
@given(st.lists(st.integers(), min_size=1), st.integers(min_value=1, max_value=6))
def test_windowed_slices(seq, n):
    assume(len(seq) >= n)
    want = [tuple(seq[i : i + n]) for i in range(len(seq) - n + 1)]
    assert list(windowed(seq, n)) == want
