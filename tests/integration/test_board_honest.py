"""The honest board's words and marks: the lexical-only banner, floors, baseline marks, flags."""

from __future__ import annotations

import pytest


def test_ranking_flags_entries_below_the_constant(tiny_corpus, monkeypatch):
    """Through the leaderboard: a submission under the constant's ROUGE-L is flagged."""
    import leaderboard as lb
    from etclib.data.corpus import load_corpus
    from etclib.data.task import items
    from etclib.tracks.predictions import dumps_jsonl

    monkeypatch.setenv("ETC_DATA_DIR", str(tiny_corpus))
    monkeypatch.setenv("ETC_LB_BOOTSTRAP", "50")
    try:
        lb.seed_baselines(reported=False, backends=("constant",))
        its = items(load_corpus(tiny_corpus), "test")
        good = dumps_jsonl((it.key, it.reference) for it in its).encode()
        bad = dumps_jsonl((it.key, "x") for it in its).encode()
        g = lb.submit(good, {"name": "good"}).id
        b = lb.submit(bad, {"name": "bad"}).id
        lb.process_jobs()
        ranking = lb.ranking().set_index("id")
        constant = ranking[ranking["baseline"] == "constant"]["rougeL"].iloc[0]
        assert ranking.attrs["floors"] == {"constant": pytest.approx(constant)}
        assert ranking.loc[b, "rougeL"] < constant < ranking.loc[g, "rougeL"]
        assert bool(ranking.loc[b, "below_floor"]) and not bool(ranking.loc[g, "below_floor"])
        assert not ranking[ranking["kind"] == "baseline"]["below_floor"].any()
        # Another metric ranks from the same cached intervals, with its own floor.
        by_bleu = lb.ranking(sort_by="bleu4")
        assert by_bleu.attrs["floors"]["constant"] == pytest.approx(
            ranking[ranking["baseline"] == "constant"]["bleu4"].iloc[0]
        )
        v1 = lb.board_version()
        lb.submit(dumps_jsonl((it.key, "y") for it in its).encode(), {"name": "third"})
        assert lb.board_version() != v1  # a new submission changes the version
    finally:
        lb.close_all()
