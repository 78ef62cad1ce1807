"""partition_all: the chunks, joined, are the input; every chunk but the last is full."""

import json
import pathlib

from hypothesis import given, settings, strategies as st

from toolz import partition_all

CASES = json.loads((pathlib.Path(__file__).parent.parent / "fixtures" / "partition-cases.json").read_text())


def test_partition_all_matches_the_sealed_cases():
    for case in CASES:
        assert [list(c) for c in partition_all(case["size"], case["items"])] == case["chunks"]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.integers(), min_size=20, max_size=200))
def test_partition_all_roundtrip(items):
    for size in range(1, 97):
        chunks = list(partition_all(size, items))
        assert [x for chunk in chunks for x in chunk] == items
        assert all(len(chunk) == size for chunk in chunks[:-1])
        assert all(0 < len(chunk) <= size for chunk in chunks)
