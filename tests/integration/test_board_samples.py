"""The board's resampled scores are computed once per stored score row and kept by content
(leaderboard/samples.py), and the site's scoring threads rank the board when their queue
empties: the ranking a visitor gets is the same as one computed from scratch."""

from __future__ import annotations

import tempfile
import time

import numpy as np
import pandas as pd
import pytest

import leaderboard as lb
from etclib.metrics import significance
from etclib.tracks.predictions import dumps_jsonl
from leaderboard import board, samples
from leaderboard.db import resolve
from tests.fixtures.board import (  # noqa: F401 - fixtures: "tiny", and one run for every test
    _fresh_samples,
    sampled_tiny,
)


def submit(items, name, text) -> str:
    data = dumps_jsonl((it.key, text(it)) for it in items).encode("utf-8")
    return lb.submit(data, {"name": name}).id


def counting(monkeypatch) -> list[int]:
    """Rows resampled from scratch from now on (one number per resampled_many call)."""
    calls: list[int] = []
    real = significance.resampled_many

    def spy(scored, res):
        calls.append(len(scored))
        return real(scored, res)

    monkeypatch.setattr(significance, "resampled_many", spy)
    return calls


def from_scratch() -> pd.DataFrame:
    """The board ranked with nothing kept: an empty cache folder of its own, removed after
    (not a fixed path: written there as root, it kept one run's values for the next run's
    "from scratch"), nothing in memory."""
    with tempfile.TemporaryDirectory() as empty, pytest.MonkeyPatch.context() as m:
        m.setattr(samples, "folder", lambda: samples.Path(empty, "bootstrap"))
        samples.forget()
        lb.close_all()
        return lb.ranking()


def two_entries(items) -> None:
    submit(items, "copy", lambda it: it.utterance)
    submit(items, "half", lambda it: it.reference if it.turn % 2 else it.utterance)
    lb.process_jobs()


def test_scoring_keeps_each_rows_resamples_and_a_new_process_reads_them(tiny, monkeypatch):
    two_entries(tiny)
    files = sorted(samples.folder().glob("*.npy"))
    assert files, "the worker kept no resampled scores"
    first = lb.ranking()

    # a "new process": nothing in memory, the board reopened; every row read from disk
    samples.forget()
    lb.close_all()
    calls = counting(monkeypatch)
    again = lb.ranking()
    assert calls == []
    pd.testing.assert_frame_equal(again, first)
    pd.testing.assert_frame_equal(first, from_scratch())


def test_one_new_entry_resamples_that_entry_only(tiny, monkeypatch):
    two_entries(tiny)
    lb.ranking()
    # the worker resamples the new entry's rows when it stores them, nothing else
    calls = counting(monkeypatch)
    submit(tiny, "third", lambda it: "嬉しかった")
    lb.process_jobs()
    scored_rows = calls.copy()
    board_ranked = lb.ranking()
    assert sum(scored_rows) >= 1 and calls == scored_rows  # the board resampled nothing
    assert len(board_ranked) == 3


def test_a_damaged_file_is_recomputed_and_rewritten(tiny, monkeypatch):
    two_entries(tiny)
    first = lb.ranking()
    files = sorted(samples.folder().glob("*.npy"))
    files[0].write_bytes(b"not a numpy file")
    files[1].write_bytes(files[1].read_bytes()[:-80])  # cut short
    samples.forget()
    lb.close_all()
    resampled: list[str] = []  # the content key of each row resampled from scratch
    real = significance.resampled_many

    def spy(scored, res):
        resampled.extend(samples.content_key(g, data.arrays, res) for g, data in scored)
        return real(scored, res)

    monkeypatch.setattr(significance, "resampled_many", spy)
    pd.testing.assert_frame_equal(lb.ranking(), first)
    # the rows of the damaged files only (two entries' rows with the same content share a
    # file, so a damaged file can stand for more than one row)
    assert resampled and set(resampled) == {path.stem for path in files[:2]}
    for path in files[:2]:
        assert np.load(path, allow_pickle=False).ndim == 2


def test_other_bootstrap_settings_never_reuse_kept_values(tiny, monkeypatch):
    two_entries(tiny)
    first = lb.ranking()
    monkeypatch.setenv("ETC_LB_SEED", "12")
    lb.close_all()
    calls = counting(monkeypatch)
    other = lb.ranking()
    assert sum(calls) >= 2  # resampled again under the other seed
    assert not np.allclose(other["rougeL_lo"], first.set_index("id").loc[other["id"], "rougeL_lo"])
    pd.testing.assert_frame_equal(other, from_scratch())


def test_the_sites_scoring_threads_rank_the_board_when_the_queue_empties(tiny, monkeypatch):
    db = resolve(None)
    pool = lb.start_workers(1)
    try:
        two_entries_ids = [submit(tiny, "copy", lambda it: it.utterance)]
        assert pool.wait_idle(timeout=120)
        deadline = time.monotonic() + 30
        wanted = {"rougeL", "bleu4", "rouge1"}
        while time.monotonic() < deadline:
            if wanted <= {k[1] for k in list(db.cache) if k[0] == "ranking"}:
                break
            time.sleep(0.05)

        def no_recompute(*args, **kwargs):
            raise AssertionError("the board was ranked again on the visit")

        monkeypatch.setattr(board, "_base", no_recompute)
        monkeypatch.setattr(board, "_ranked", no_recompute)
        ranked = lb.ranking()
        assert list(ranked["id"]) == two_entries_ids
        assert ranked["rougeL"].notna().all()
        # and by every other metric it has (a visitor's metric switch)
        for key in ("bleu4", "rouge1"):
            assert lb.ranking(sort_by=key).attrs["sort_by"] == key
    finally:
        lb.stop_workers()


def test_a_rows_resamples_are_kept_before_its_scores_show(tiny, monkeypatch):
    # A visitor who opens the board the moment an entry reads "scored" must not wait for its
    # resampling: the worker resamples a result before the write that makes it visible.
    sid = submit(tiny, "copy", lambda it: it.utterance)
    statuses: list[str] = []
    real = samples.resampled_rows

    def spy(rows, n_items):
        statuses.append(lb.status(sid)["status"])
        return real(rows, n_items)

    monkeypatch.setattr(samples, "resampled_rows", spy)
    lb.process_jobs()
    assert lb.status(sid)["status"] == "scored"
    assert statuses and "scored" not in statuses


def test_the_erc_board_in_a_new_process_resamples_nothing(tiny, monkeypatch):
    # erc_loo ranks nothing (its like-for-like figures sit beside the board): before, every
    # process resampled it again for each ERC entry, one aggregate per resample, and kept nothing
    data = dumps_jsonl(((it.key, ("neutral",)) for it in tiny), track="erc").encode("utf-8")
    lb.submit(data, {"name": "all neutral"})
    lb.process_jobs()
    first = lb.ranking(track="erc")
    samples.forget()
    lb.close_all()
    calls = counting(monkeypatch)
    aggregates = []
    from etclib.tracks.categories import metric_loo as erc_loo

    real = erc_loo.METRIC.aggregate
    monkeypatch.setattr(
        erc_loo.METRIC, "aggregate", lambda *a, **k: aggregates.append(1) or real(*a, **k)
    )
    again = lb.ranking(track="erc")
    assert calls == [] and aggregates == []
    pd.testing.assert_frame_equal(again, first)
    samples.forget()
    lb.close_all()
    pd.testing.assert_frame_equal(first, from_scratch_erc())


def from_scratch_erc() -> pd.DataFrame:
    with tempfile.TemporaryDirectory() as empty, pytest.MonkeyPatch.context() as m:
        m.setattr(samples, "folder", lambda: samples.Path(empty, "bootstrap"))
        samples.forget()
        lb.close_all()
        return lb.ranking(track="erc")
