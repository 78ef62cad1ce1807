"""The legacy CSV export."""

from shop.pricing import format_price


def export_row(name: str, cents: int) -> str:
    return f"{name},{format_price(cents)}"
