"""The board's resampled scores are computed once per stored score row and kept by content
(leaderboard/samples.py), and the site's scoring threads rank the board when their queue
empties: the ranking a visitor gets is the same as one computed from scratch."""

from __future__ import annotations

import numpy as np

from leaderboard import samples
from leaderboard.db import resolve
from tests.fixtures.board import (  # noqa: F401 - fixtures: "tiny", and one run for every test
    _fresh_samples,
    sampled_tiny,
)


def test_kept_values_are_keyed_by_the_metrics_code(tiny, monkeypatch):
    # category_f1 is erc's macro-F1 (erc.from_statistics): a change to erc's code must not
    # read the values category rows kept under the former code
    assert [m.__name__ for m in samples.definition_modules("category")] == [
        "etclib.metrics.base",
        "etclib.metrics.significance",
        "etclib.tracks.categories.metric",
        "etclib.tracks.transcription.category",
    ]
    arrays = {"pred": np.eye(7, dtype=np.uint8), "gold": np.eye(7, dtype=np.uint8)}
    res = samples.draw(7)
    before = samples.content_key("category", arrays, res)
    monkeypatch.setattr(samples, "definition", lambda group: "other code")
    assert samples.content_key("category", arrays, res) != before


def test_a_second_caller_waits_for_the_board_being_ranked_instead_of_ranking_it_again(tiny):
    import threading

    db = resolve(None)
    calls, asking = [], threading.Semaphore(0)

    def slow():  # still ranking until all three callers have asked
        calls.append(threading.get_ident())
        for _ in range(3):
            assert asking.acquire(timeout=60)
        return "board"

    def ask():
        asking.release()
        got.append(db.cached(("k",), slow))

    got = []
    threads = [threading.Thread(target=ask) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert got == ["board"] * 3 and len(calls) == 1

    # computed before a write: handed to its caller, not kept for the next one
    generation = db.generation
    db.invalidate()
    assert db.cached(("k2",), lambda: "stale", generation) == "stale"
    assert db.cached(("k2",), lambda: "fresh") == "fresh"
