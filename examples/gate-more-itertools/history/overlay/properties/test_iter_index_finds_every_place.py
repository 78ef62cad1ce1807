"""iter_index: the indexes in [start, stop) where the value occurs, for a sequence (its fast
path) and for an iterator (its slow path) alike."""

from hypothesis import given, settings, strategies as st

from more_itertools import iter_index


@settings(deadline=None)
@given(
    st.lists(st.integers(0, 3), max_size=30),
    st.integers(0, 3),
    st.integers(0, 35),
    st.one_of(st.none(), st.integers(0, 35)),
)
def test_iter_index_finds_every_place(seq, value, start, stop):
    end = len(seq) if stop is None else min(stop, len(seq))
    want = [i for i in range(start, end) if seq[i] == value]
    assert list(iter_index(seq, value, start, stop)) == want
    assert list(iter_index(iter(seq), value, start, stop)) == want
