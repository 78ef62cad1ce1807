"""Prices in integer cents."""

CURRENCY_SYMBOL = "$"


def apply_discount(cents: int, percent: int) -> int:
    """The price after a `percent` discount (0-100), rounded down to the cent."""
    if cents < 0:
        raise ValueError("a price is never negative")
    if not 0 <= percent <= 100:
        raise ValueError("a discount is 0 to 100 percent")
    # Integer arithmetic only: a float would round 0.29 * 100 to 28.999...
    return cents * (100 - percent) // 100


def format_price(cents: int) -> str:
    return f"{CURRENCY_SYMBOL}{cents // 100}.{cents % 100:02d}"
