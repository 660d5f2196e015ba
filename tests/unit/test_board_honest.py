"""The honest board's words and marks: the lexical-only banner, floors, baseline marks, flags."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from views import board


def frame(rows, sort_by="rougeL") -> pd.DataFrame:
    out = pd.DataFrame(
        rows, columns=["id", "kind", "baseline", "name", "rougeL", "f1", "created_at"]
    )
    out["below_floor"] = False
    out.attrs["sort_by"] = sort_by
    return out


LEXICAL = [
    ("a", "baseline", "constant", "Constant", 32.64, math.nan, 1),
    ("b", "baseline", "copy", "Copy", 18.02, math.nan, 2),
    ("c", "baseline", "retrieval", "Retrieval", 26.88, math.nan, 3),
    ("d", "submission", "", "Mine", 20.0, math.nan, 4),
]


def test_banner_reads_the_constant_from_the_board():
    note = board.honesty_note(frame(LEXICAL))
    assert "ranked by ROUGE-L" in note
    assert "reaches ROUGE-L 32.64 here" in note  # as stored on the board, two decimals
    other = [(*r[:4], 40.04 if r[2] == "constant" else r[4], *r[5:]) for r in LEXICAL]
    assert "reaches ROUGE-L 40.04 here" in board.honesty_note(frame(other))


def test_banner_says_when_the_constant_is_absent_and_is_gone_once_judged():
    note = board.honesty_note(frame([r for r in LEXICAL if r[2] != "constant"]))
    assert "is not on this board" in note and "32.6" not in note
    judged = [(*r[:5], 50.0, r[6]) for r in LEXICAL]
    assert board.honesty_note(frame(judged, "f1")) is None
    assert board.honesty_note(frame([])) is None


def test_floors_are_the_trivial_baselines_only():
    assert board.floor_lines(frame(LEXICAL), "rougeL") == {"constant": 32.64, "copy": 18.02}


@pytest.mark.parametrize(
    ("kind", "backend", "shown"),
    [
        ("baseline", "constant", "baseline (floor)"),
        ("baseline", "copy", "baseline (floor)"),
        ("baseline", "retrieval", "baseline"),
        ("submission", "", "✅ scored here"),
        ("reported", "", "📄 reported"),
    ],
)
def test_baselines_say_baseline_never_a_medal(kind, backend, shown):
    assert board.badge(kind, backend) == shown


def test_board_table_marks_and_flags():
    f = frame(LEXICAL)
    f["below_floor"] = [False, False, False, True]
    t = board.board_table(f, "rougeL")
    assert list(t["kind"]) == ["baseline (floor)", "baseline (floor)", "baseline", "✅ scored here"]
    assert list(t["flag"]) == ["", "", "", board.FLAG_TEXT]
