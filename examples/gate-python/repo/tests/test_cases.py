"""The fixture suite: concrete cases, one JSON file each, under fixtures/cases."""

import json
import pathlib

import pytest

from shop.pricing import apply_discount
from shop.slugs import slugify
from shop.sorting import by_price

CASES = sorted(pathlib.Path("fixtures/cases").glob("*.json"))
FUNCTIONS = {"apply_discount": apply_discount, "by_price": by_price, "slugify": slugify}


@pytest.mark.parametrize("path", CASES, ids=lambda p: p.stem)
def test_case(path):
    case = json.loads(path.read_text())
    assert FUNCTIONS[case["function"]](*case["args"]) == case["expected"]
