"""chunked: the chunks, joined, are the input; every chunk but the last holds n items."""

from hypothesis import given, settings, strategies as st

from more_itertools import chunked


@settings(deadline=None)
@given(st.lists(st.integers()), st.integers(min_value=1, max_value=12))
def test_chunked_roundtrip(items, n):
    chunks = list(chunked(items, n))
    assert [x for chunk in chunks for x in chunk] == items
    assert all(len(chunk) == n for chunk in chunks[:-1])
    assert all(0 < len(chunk) <= n for chunk in chunks)
