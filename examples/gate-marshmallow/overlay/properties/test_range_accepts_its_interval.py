"""validate.Range accepts a value exactly when it lies in its interval."""

from hypothesis import given, settings, strategies as st

from marshmallow import ValidationError, validate


@settings(max_examples=300, deadline=None)
@given(st.integers(-20, 20), st.integers(-20, 20), st.integers(-25, 25), st.booleans(), st.booleans())
def test_range_accepts_its_interval(lo, hi, x, lo_in, hi_in):
    check = validate.Range(min=lo, max=hi, min_inclusive=lo_in, max_inclusive=hi_in)
    inside = (lo <= x if lo_in else lo < x) and (x <= hi if hi_in else x < hi)
    try:
        assert check(x) == x
        accepted = True
    except ValidationError:
        accepted = False
    assert accepted == inside
