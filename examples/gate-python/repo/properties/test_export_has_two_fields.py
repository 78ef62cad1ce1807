from hypothesis import given, settings, strategies as st

from shop.export import export_row


@settings(database=None, derandomize=True, max_examples=300)
@given(st.from_regex(r"[a-z]{1,10}", fullmatch=True), st.integers(min_value=0, max_value=10**6))
def test_export_has_two_fields(name, cents):
    assert len(export_row(name, cents).split(",")) == 2
