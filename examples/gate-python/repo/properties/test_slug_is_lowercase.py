from hypothesis import given, settings, strategies as st

from shop.slugs import slugify


@settings(database=None, derandomize=True, max_examples=300)
@given(st.text())
def test_slug_is_lowercase(text):
    assert slugify(text) == slugify(text).lower()
