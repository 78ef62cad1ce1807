"""Pinned cases of last(), from the sealed fixtures (fixtures/last-cases.json)."""

import json
import pathlib
from unittest import TestCase

import more_itertools as mi

CASES = json.loads(
    (pathlib.Path(__file__).parent.parent / "fixtures" / "last-cases.json").read_text()
)


class PinnedLastTests(TestCase):
    def test_pinned_cases(self):
        for case in CASES:
            with self.subTest(items=case["items"]):
                self.assertEqual(mi.last(case["items"]), case["last"])
