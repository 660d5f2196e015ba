"""A throw-away metric, registered through etclib's registry alone, reaches every consumer.

The metric is declared in tests/unit/test_metric_plugin.py and nowhere else: no leaderboard,
page or CLI file names it. It must appear in ``etclib score --json`` (with ``--ci``
intervals), in the leaderboard's stored scores (its own stage, queued after the lexical one),
in the ranking columns with bootstrap intervals (and as a ``sort_by``), in ``python -m
leaderboard show``, and in the About page's metric table. Expected numbers are computed here,
with numpy, from the predictions.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

import leaderboard as lb
from etclib.tracks.predictions import dumps_jsonl
from tests.fixtures.metric_plugin import (  # noqa: F401 - toy: a fixture
    SEED,
    B,
    _independent_interval,
    _predictions,
    toy,
)


def test_leaderboard_stores_ranks_and_shows_it(toy, capsys):
    from leaderboard.__main__ import main

    preds, data = _predictions(toy)
    sid = lb.submit(data, {"name": "a third right"}).id
    other = lb.submit(
        dumps_jsonl((it.key, it.reference) for it in toy).encode(), {"name": "all right"}
    ).id
    assert lb.process_jobs() == 4  # lexical and exactness, for each
    assert lb.status(sid)["status"] == "scored"

    # stored scores: a row of its own group, from the ScoreResult
    db = lb.open_db()
    rows = db.query(
        "SELECT scores, breakdown FROM scores WHERE submission_id = ? AND metric_group = 'toy'",
        [sid],
    )
    same = np.array([p == it.reference for p, it in zip(preds, toy)], dtype=float)
    assert len(rows) == 1
    assert json.loads(rows[0][0])["exact"] == pytest.approx(same.mean() * 100)
    assert "exact" in json.loads(rows[0][1])["role"]["speaker"]

    # ranking columns with intervals, and a sort key
    board = lb.ranking(sort_by="exact").set_index("id")
    assert board.loc[sid, "exact"] == pytest.approx(same.mean() * 100)
    assert (board.loc[sid, "exact_lo"], board.loc[sid, "exact_hi"]) == pytest.approx(
        _independent_interval(same, SEED, B)
    )
    assert board.loc[other, "exact"] == 100 and board.loc[other, "rank"] == 1
    assert board.loc[sid, "rank"] == 2  # 100 on every resample against about 35: significant
    assert board.loc[sid, "exact_chars"] == pytest.approx(np.mean([len(p) for p in preds]))
    assert lb.detail(sid)["scores"]["toy"]["intervals"]["exact"] == pytest.approx(
        _independent_interval(same, SEED, B)
    )

    # python -m leaderboard show
    assert main(["show", "--sort-by", "exact"]) == 0
    shown = capsys.readouterr().out
    # headed by the fact's label and direction, as every score column
    assert "sorted by Exact match ↑" in shown and " Exact match ↑ " in shown.splitlines()[1]
