from hypothesis import given, settings, strategies as st

from shop.pricing import apply_discount


@settings(database=None, derandomize=True, max_examples=300)
@given(
    st.integers(min_value=0, max_value=10**9),
    st.integers(min_value=0, max_value=99),
)
def test_discount_monotonic(cents, percent):
    assert apply_discount(cents, percent + 1) <= apply_discount(cents, percent)
