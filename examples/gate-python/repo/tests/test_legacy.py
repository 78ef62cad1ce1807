"""The legacy export's format, pinned byte for byte."""

from shop.export import export_row


def test_legacy_export():
    assert export_row("tea", 1250) == "tea,$12.50"
