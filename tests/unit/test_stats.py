"""Corpus statistics against values computed here from the raw JSON, independently of etclib."""

import pytest

from etclib.data import store
from etclib.metrics import corpus_stats as stats
from etclib.metrics.agreement import fleiss_kappa
from tests.fixtures.corpus import CATS


def test_fleiss_kappa_textbook_example():
    # Fleiss (1971)-style worked example from Wikipedia: 10 subjects, 14 raters, 5 categories.
    table = [
        [0, 0, 0, 0, 14],
        [0, 2, 6, 4, 2],
        [0, 0, 3, 5, 6],
        [0, 3, 9, 2, 0],
        [2, 2, 8, 1, 1],
        [7, 7, 0, 0, 0],
        [3, 2, 6, 3, 0],
        [2, 5, 3, 2, 2],
        [6, 5, 2, 1, 0],
        [0, 2, 2, 3, 7],
    ]
    assert fleiss_kappa(table) == pytest.approx(0.209930, abs=1e-6)


def test_stats_keys_on_tiny_corpus(tiny_corpus, tmp_path):
    got = stats.compute(store.connect(tmp_path / "t.duckdb", tiny_corpus))
    assert set(got) == {
        "dialogues",
        "participants",
        "utterances",
        "utterance_chars",
        "transcription_chars",
        "labels",
        "kappa_overall",
        "multi_label_share",
        "cooccurrence",
    }
    assert set(got["labels"]) == set(CATS)
    assert all(set(v) == {"speaker", "listener", "all", "kappa"} for v in got["labels"].values())
    assert got["dialogues"] == 8 and got["utterances"] == 80
