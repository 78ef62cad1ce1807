"""chunked: the chunks, joined, are the input; every chunk but the last is full."""

import json
import pathlib

from hypothesis import given, settings, strategies as st

from boltons.iterutils import chunked

CASES = json.loads((pathlib.Path(__file__).parent.parent / "fixtures" / "chunked-cases.json").read_text())


def test_chunked_matches_the_sealed_cases():
    for case in CASES:
        assert chunked(case["items"], case["size"]) == case["chunks"]


@settings(deadline=None)
@given(st.lists(st.integers()), st.integers(min_value=1, max_value=12))
def test_chunked_roundtrip(items, size):
    chunks = chunked(items, size)
    assert [x for chunk in chunks for x in chunk] == items
    assert all(len(chunk) == size for chunk in chunks[:-1])
    assert all(0 < len(chunk) <= size for chunk in chunks)
