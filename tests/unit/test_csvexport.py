"""The export CSV writer's guard (etclib.core.csvexport): text hiding a formula where a spreadsheet
splitting on ``,``, ``;`` or a tab starts a cell, written and read back with each separator;
the guard only adds apostrophes. The exports themselves: tests/integration/test_csv_formulas.py.
"""

from __future__ import annotations

import pytest

from etclib.core import csvexport
from tests.fixtures.spreadsheets import HOSTILE, assert_no_formula


@pytest.mark.parametrize("text", HOSTILE)
def test_a_hostile_cell_is_no_formula_for_any_separator(text):
    assert_no_formula(csvexport.dumps(["h"], [[text], [1, text, -1.5]]), text)
    guarded = csvexport.safe_cell(text)
    assert guarded.replace("'", "") == text.replace("'", "")  # only apostrophes added


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("a;=cmd|' /C calc'!A0;b", "a;'=cmd|' /C calc'!A0;b"),
        ("=1", "'=1"),
        ("\tx", "'\tx"),
        ("a\r\n=1", "a\r\n'=1"),
        ("a\r=1", "a\r'=1"),
        ("怒り\n\t=1", "怒り\n'\t'=1"),
        ('x; "=1', "x;' \"=1"),
        ("a,=1", "a,=1"),  # the csv module quotes a cell holding a comma
        ("[0.5, -0.2]", "[0.5, -0.2]"),
        ("怒り", "怒り"),
        ("", ""),
        (3, 3),
        (None, None),
    ],
)
def test_where_the_apostrophes_go(text, expected):
    assert csvexport.safe_cell(text) == expected
