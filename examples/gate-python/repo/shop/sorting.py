"""Listing order."""


def by_price(items):
    """Items (dicts with a `price`) cheapest first; items with equal prices keep their order."""
    return sorted(items, key=lambda item: item["price"])
