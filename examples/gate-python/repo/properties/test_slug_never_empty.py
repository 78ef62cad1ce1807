from hypothesis import given, settings, strategies as st

from shop.slugs import slugify


# Frozen in the ledger: it fails on text without letters or digits, and the fix is owed.
@settings(database=None, derandomize=True, max_examples=100)
@given(st.text())
def test_slug_never_empty(text):
    assert slugify(text) != ""
