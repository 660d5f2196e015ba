"""The ERC (emotion categories) track: file format, metrics against scikit-learn, the human
ceiling, the CPU baselines, the LLM classifier against the fake server, the category metric,
and the leaderboard keyed by track."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.metrics import (
    f1_score,
)

from etclib import tracks
from etclib.core.errors import MetricError
from etclib.data.corpus import CATEGORIES
from etclib.tracks.categories import metric as erc
from etclib.tracks.categories.labels import indicator
from tests.fixtures.erc import NON_NEUTRAL, _sklearn

HAND = [  # (prediction, gold)
    (("joy",), ("joy",)),
    (("joy", "surprise"), ("joy",)),
    (("neutral",), ("sadness",)),
    (("sadness",), ("sadness", "fear")),
    (("anger",), ("anger",)),
    (("neutral",), ("neutral",)),
    (("disgust",), ("neutral",)),
    (("joy",), ("surprise",)),
]


def test_every_metric_equals_scikit_learn_on_a_hand_made_case():
    pred, gold = zip(*HAND)
    got = erc.METRIC.score(list(pred), list(gold))
    want = _sklearn(list(pred), list(gold))
    assert set(got) == set(want)
    for k in want:
        assert got[k] == pytest.approx(want[k], abs=1e-9), k


# (prediction, gold) tables, each with a category absent from gold and predictions (fear here;
# neutral and fear in the second), one with no non-neutral label at all
ABSENT = [
    [(("joy",), ("joy",)), (("neutral",), ("sadness",)), (("joy", "anger"), ("anger",))],
    [(("joy",), ("joy", "surprise")), (("disgust",), ("sadness",)), (("anger",), ("anger",))],
    [(("neutral",), ("neutral",)), (("neutral",), ("neutral",))],
    [(("joy",), ("surprise",))],
]


@pytest.mark.parametrize("rows", ABSENT)
def test_an_absent_category_is_na_and_left_out_of_the_macro_average(rows):
    pred, gold = (list(x) for x in zip(*rows))
    got = erc.METRIC.score(pred, gold)
    g, p = indicator(gold), indicator(pred)
    absent = [c for j, c in enumerate(CATEGORIES) if not g[:, j].any() and not p[:, j].any()]
    assert absent
    for c in absent:
        assert np.isnan(got[f"f1_{c}"]) and np.isnan(got[f"precision_{c}"])
    # scikit-learn's zero_division=np.nan leaves undefined categories out of the average
    want = f1_score(g, p, average="macro", zero_division=np.nan) * 100
    present = [j for j, c in enumerate(CATEGORIES) if c not in absent]
    by_hand = np.mean(f1_score(g, p, average=None, zero_division=0)[present]) * 100
    assert got["macro_f1"] == pytest.approx(want, abs=1e-9)
    assert got["macro_f1"] == pytest.approx(by_hand, abs=1e-9)
    assert got["weighted_f1"] == pytest.approx(
        f1_score(g, p, average="weighted", zero_division=0) * 100, abs=1e-9
    )
    nn = f1_score(g, p, average="micro", labels=NON_NEUTRAL, zero_division=np.nan) * 100
    if np.isnan(nn):  # no non-neutral gold or predicted label: n/a, as scikit-learn's nan
        assert np.isnan(got["micro_f1_no_neutral"])
    else:
        assert got["micro_f1_no_neutral"] == pytest.approx(nn, abs=1e-9)


def test_wa_and_uwa_match_a_hand_worked_example():
    # Single-label items of HAND: joy x2 (right, wrong: joy+surprise), sadness (wrong), anger
    # (right), neutral x2 (right, wrong), surprise (wrong); the sadness+fear item is not one.
    # WA = right / all = 3 / 7. Per category: joy 1/2, sadness 0/1, anger 1/1, neutral 1/2,
    # surprise 0/1; UWA = (0.5 + 0 + 1 + 0.5 + 0) / 5 = 0.4.
    pred, gold = zip(*HAND)
    got = erc.METRIC.score(list(pred), list(gold))
    assert got["wa"] == pytest.approx(300 / 7, abs=1e-9)
    assert got["uwa"] == pytest.approx(40.0, abs=1e-9)


def test_metric_of_another_track_is_refused():
    with pytest.raises(MetricError, match="scores the erc track"):
        tracks.get("transcription").parse_metrics("erc")


def test_tracks_registry_is_data():
    assert [t.field for t in tracks.TRACKS.values()] == ["prediction", "labels"]
    assert tracks.get("erc").rank_order == ("macro_f1",)
    with pytest.raises(Exception, match="Did you mean 'erc'"):
        tracks.get("ecr")
