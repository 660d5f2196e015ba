"""The export CSV writer's guard (etclib.csvexport): text hiding a formula where a spreadsheet
splitting on ``,``, ``;`` or a tab starts a cell, written and read back with each separator;
the guard only adds apostrophes. The exports themselves: tests/integration/test_csv_formulas.py.
"""

from __future__ import annotations

import csv
import io
import re

import pytest

from etclib import csvexport

SEPARATORS = (",", ";", "\t")
FORMULA_START = ("=", "+", "-", "@")

# Each hides a formula where a spreadsheet splitting on one of SEPARATORS starts a cell.
HOSTILE = [
    "a;=cmd|' /C calc'!A0;b",
    "a;=2+3;b",
    "a\t=2+3\tb",
    'x; "=1+1";y',
    'x;""@SUM(1)',
    "a;-2+3;b",
    "p,+1+1,q",
    "=HYPERLINK(1)",
    "\t=1",
    "ok\r=2+5",
    "line\r\n;@SUM(1)",
    "怒り;＝ではない;=1",
    "",
    "plain",
]


def starts_formula(cell: str) -> bool:
    """Whether a spreadsheet would run ``cell`` (or a line of it) as a formula: text starting,
    past spaces, quotes, tabs and carriage returns, with a formula sign (a number such as
    ``-1.5`` is a number)."""
    for line in re.split(r"\r\n|\n", cell):
        text = line.lstrip(' "\t\r')
        if text.startswith(FORMULA_START):
            try:
                float(text)
            except ValueError:
                return True
    return False


def assert_no_formula(text: str, what: str) -> None:
    for sep in SEPARATORS:
        for row in csv.reader(io.StringIO(text, newline=""), delimiter=sep):
            for cell in row:
                assert not starts_formula(cell), (what, repr(sep), cell)


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
