"""patchgate's canary (CONTRACT.md section 11.5): this test must FAIL.

Its file name matches no `test_*.py`, so a plain `pytest` never collects it; the gate runs it
by name (`pytest properties/patchgate_canary.py`).

The gate runs it on every patch before any property. If it passes, is skipped, or leaves no
report, something in the patch switched the checker off, and the gate escalates
`checker-neutered`. Import your package below: whatever it does when imported under test
(leave early, patch the test runner, empty the property engine), it then does here too.
"""

from hypothesis import given, settings, strategies as st

import shop  # noqa: F401  (the package: the canary sees what it does at import)


@settings(database=None, derandomize=True)
@given(st.integers(min_value=0))
def test_patchgate_canary(n):
    assert n < 10, "the canary fails, as it must"
