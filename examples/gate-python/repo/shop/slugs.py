"""URL slugs."""

import re


def slugify(text: str) -> str:
    """Lowercase words joined by single dashes."""
    words = re.findall(r"[a-z0-9]+", text.lower())
    return "-".join(words)
