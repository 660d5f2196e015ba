"""Formulas hidden in exported text, read back as a spreadsheet would whatever its list
separator: entries named and described with formulas behind ``;``, tabs, quotes and line
breaks, and predictions holding them, submitted and scored; then the board's, an entry's items',
all items' and Compare's CSV (the files the site's download buttons serve) read with ``,``,
``;`` and a tab as the separator. No cell, nor any line of one, starts a formula.
"""

from __future__ import annotations

import csv
import io

import pytest

import leaderboard as lb
from etclib.tracks.predictions import dumps_jsonl
from tests.fixtures.spreadsheets import HOSTILE, assert_no_formula


@pytest.fixture
def entries(tiny):  # noqa: F811 - the fixture imported above
    """Two scored entries whose every text field and prediction is hostile."""
    ids = []
    for n in range(2):
        texts = {it.key: HOSTILE[(i + n) % len(HOSTILE)] for i, it in enumerate(tiny)}
        meta = {
            "name": HOSTILE[n],
            "team": HOSTILE[n + 3],
            "contact": "h@example.org",
            "description": HOSTILE[n + 5],
        }
        data = dumps_jsonl((it.key, texts[it.key]) for it in tiny).encode("utf-8")
        ids.append(lb.submit(data, meta, file_name=f"hostile{n}.jsonl").id)
    assert lb.process_jobs() == 2
    assert {lb.status(i)["status"] for i in ids} == {"scored"}
    return ids


def test_board_and_item_exports_hold_no_formula_for_any_separator(entries):
    from views import board

    exports = {
        "board": board.export_file("board_csv").decode("utf-8"),
        "items": lb.export_csv("items"),
        **{f"items of {i}": lb.export_csv("items", submission_id=i) for i in entries},
    }
    for what, text in exports.items():
        assert_no_formula(text, what)
    names = {row["name"] for row in csv.DictReader(io.StringIO(exports["board"], newline=""))}
    assert {"a;'=cmd|' /C calc'!A0;b", "a;'=2+3;b"} <= names
    items = list(csv.DictReader(io.StringIO(exports[f"items of {entries[0]}"], newline="")))
    assert "a;'=2+3;b" in {r["prediction"] for r in items}


def test_compare_exports_hold_no_formula_for_any_separator(entries):
    from leaderboard import compare as lbc

    c = lbc.compare(*entries)
    for what in ("metrics", "items"):
        assert_no_formula(lbc.export_csv(c, what), f"compare {what}")
    rows = list(csv.DictReader(io.StringIO(lbc.export_csv(c, "items"), newline="")))
    assert any("a\t'=2+3\tb" in row.values() for row in rows)
