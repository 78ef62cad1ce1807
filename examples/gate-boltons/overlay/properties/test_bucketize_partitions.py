"""bucketize: the buckets partition the input, each value under its own key, order kept."""

from hypothesis import given, settings, strategies as st

from boltons.iterutils import bucketize


@settings(deadline=None)
@given(st.lists(st.integers()), st.integers(min_value=1, max_value=5))
def test_bucketize_partitions(items, mod):
    buckets = bucketize(items, key=lambda x: x % mod)
    assert sum(len(b) for b in buckets.values()) == len(items)
    for key, bucket in buckets.items():
        assert bucket == [x for x in items if x % mod == key]
