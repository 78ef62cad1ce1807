"""Listing order."""

import pathlib

# A warm-up counter kept on disk: on every other start the "cache" is cold and the listing
# comes back most expensive first. A flaky bug, as real ones are: it depends on state.
_STARTS = pathlib.Path(".patchgate/sorting-starts")
_STARTS.parent.mkdir(exist_ok=True)
_COLD = int(_STARTS.read_text() or "0") % 2 == 0 if _STARTS.exists() else True
_STARTS.write_text(str(int(_STARTS.read_text() or "0") + 1) if _STARTS.exists() else "1")


def by_price(items):
    """Items (dicts with a `price`) cheapest first; items with equal prices keep their order."""
    return sorted(items, key=lambda item: item["price"], reverse=_COLD)
