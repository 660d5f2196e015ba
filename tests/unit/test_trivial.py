"""Trivial submissions are recognised by the board itself (leaderboard/trivial.py): constant or
near-constant files, copies of the utterance, a baseline's predictions, all-one-label ERC files;
badged "⚠ trivial" with the reason (never "✅ scored here"), with a warning when one ranks above
a real entry."""

from __future__ import annotations

import pytest

from leaderboard import trivial

UTTERANCES = [f"発話{i}です" for i in range(20)]


VARIED = [f"気持ち{i}を伝えた" for i in range(20)]


@pytest.mark.parametrize(
    ("track", "predictions", "expected"),
    [
        ("transcription", ["嬉しかった"] * 20, "one text “嬉しかった” for every item"),
        ("transcription", ["a", "b", "c"] * 6 + ["a", "b"], "near-constant: 3 distinct texts"),
        ("transcription", ["同じ"] * 19 + ["別"], "near-constant: 2 distinct texts for 20 items"),
        (
            "transcription",
            ["同じ"] * 18 + VARIED[:2],  # 3 distinct: the distinct rule first
            "near-constant: 3 distinct texts for 20 items",
        ),
        (
            "transcription",
            UTTERANCES[:12] + VARIED[12:],
            "the utterance itself copied on 60% of items",
        ),
        ("transcription", UTTERANCES[:9] + VARIED[9:], ""),  # 45%: under the copy threshold
        ("transcription", VARIED, ""),
        ("transcription", [""] * 20, "one text “” for every item"),
        ("erc", ["joy"] * 20, "one label set (joy) for every item"),
        ("erc", ["joy;surprise"] * 20, "one label set (joy, surprise) for every item"),
        ("erc", ["joy", "neutral", "sadness", "fear"] * 5, ""),  # a real classifier's few sets
        ("erc", ["neutral"] * 19 + ["joy"], "near-constant: one label set (neutral) on 95%"),
    ],
)
def test_rules(track, predictions, expected):
    got = trivial.reason(trivial.profile(predictions, UTTERANCES), track)
    assert got.startswith(expected) and bool(got) == bool(expected), got


def test_the_same_as_a_baseline():
    base = trivial.profile(VARIED, UTTERANCES)
    near = trivial.profile(VARIED[:19] + ["違う"], UTTERANCES)
    half = trivial.profile(VARIED[:10] + [f"別{i}" for i in range(10)], UTTERANCES)
    assert (
        trivial.reason(near, "transcription", {"Retrieval": base})
        == "the same as the baseline “Retrieval” on 95% of items"
    )
    assert trivial.reason(half, "transcription", {"Retrieval": base}) == ""


@pytest.mark.parametrize(
    ("kind", "baseline", "why", "shown"),
    [
        ("submission", "", "one text “x” for every item", "⚠ trivial"),
        ("submission", "", "", "✅ scored here"),
        ("baseline", "constant", "", "baseline (floor)"),
        ("baseline", "majority", "", "baseline (floor)"),
        ("baseline", "retrieval", "", "baseline"),
        ("reported", "", "", "📄 reported"),
    ],
)
def test_badges_in_one_place(kind, baseline, why, shown):
    from views.board import badge

    assert trivial.badge(kind, baseline, why) == badge(kind, baseline, why) == shown
