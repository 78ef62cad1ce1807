from collections import Counter

from hypothesis import given, settings, strategies as st

from shop.sorting import by_price

items = st.lists(st.fixed_dictionaries({"price": st.integers(min_value=0, max_value=1000)}))


@settings(database=None, derandomize=True, max_examples=300)
@given(items)
def test_sort_is_permutation(listing):
    key = lambda item: item["price"]
    assert Counter(map(key, by_price(listing))) == Counter(map(key, listing))
