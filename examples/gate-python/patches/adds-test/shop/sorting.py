"""Listing order."""


def by_price(items):
    """Items (dicts with a `price`) cheapest first; items with equal prices keep their order."""
    # sorted() is stable: equal prices keep their input order.
    return sorted(items, key=lambda item: item["price"])
