"""The adopter's one edit (docs/guide): test ids that do not hold the clock.

marshmallow's `test_invalid_datetime_deserialization` is parametrized with the current time
formatted as text, so its test ids change every second and no census could name them. Each
such value is named `now` here (pytest numbers the repeats), the values themselves unchanged.
"""

import re

PART = r"[0-9]{2,4}[-:][0-9]{2}[-:][0-9]{2,4}"
CLOCK = re.compile(PART + " " + PART)


def pytest_make_parametrize_id(config, val, argname):
    if isinstance(val, str) and CLOCK.fullmatch(val):
        return "now"
    return None
