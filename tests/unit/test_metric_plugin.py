"""A throw-away metric, registered through etclib's registry alone, reaches every consumer.

The metric below is declared here and nowhere else: no leaderboard, page or CLI file names it.
It must appear in ``etclib score --json`` (with ``--ci`` intervals), in the leaderboard's stored
scores (its own stage, queued after the lexical one), in the ranking columns with bootstrap
intervals (and as a ``sort_by``), in ``python -m leaderboard show``, and in the About page's
metric table. Expected numbers are computed here, with numpy, from the predictions.
"""

from __future__ import annotations

import json
import types

import numpy as np
import pytest

import leaderboard as lb
from etclib import metrics, tracks
from etclib.corpus import load_corpus
from etclib.errors import MetricError
from etclib.metrics import Context, Fact, MeanMetric, MetricData
from etclib.predictions import dumps_jsonl
from etclib.task import items as split_items

SEED, B = 11, 200


class ExactMatch(MeanMetric):
    """Share of items whose prediction is exactly the reference (x100), in a new stage."""

    STAGE = "exactness"
    FACTS = (
        Fact("exact", "Exact match", "share of items whose prediction equals the reference"),
        Fact(
            "exact_chars",
            "Characters",
            "mean prediction length in characters",
            unit="count",
            ranking=False,
        ),
    )

    def signature(self, ctx=None, data=None):
        return {"toy": "exact-match|v1"}

    def compute(self, predictions, references, ctx: Context) -> MetricData:
        same = np.array([p == r for p, r in zip(predictions, references)], dtype=float)
        chars = np.array([len(p) for p in predictions], dtype=float)
        return MetricData({"exact": same, "chars": chars})

    def aggregate(self, data, idx=None):
        chars = data.arrays["chars"] if idx is None else data.arrays["chars"][idx]
        mean_chars = float(chars.mean()) if len(chars) else float("nan")
        return {**super().aggregate(data, idx), "exact_chars": mean_chars}


@pytest.fixture
def toy(tiny_corpus, monkeypatch):
    monkeypatch.setenv("ETC_DATA_DIR", str(tiny_corpus))
    monkeypatch.setenv("ETC_LB_SEED", str(SEED))
    monkeypatch.setenv("ETC_LB_BOOTSTRAP", str(B))
    metrics.register("toy", ExactMatch())
    yield split_items(load_corpus(tiny_corpus), "test")
    metrics.unregister("toy")
    lb.close_all()


def _predictions(items) -> tuple[list[str], bytes]:
    right = {it.key for it in items[::3]}
    preds = [it.reference if it.key in right else it.utterance for it in items]
    data = dumps_jsonl((it.key, p) for it, p in zip(items, preds)).encode("utf-8")
    return preds, data


def _independent_interval(values: np.ndarray, seed: int, resamples: int) -> tuple[float, float]:
    idx = np.random.default_rng(seed).integers(0, len(values), size=(resamples, len(values)))
    lo, hi = np.percentile(values[idx].mean(axis=1) * 100, [2.5, 97.5])
    return float(lo), float(hi)


def test_registry_reports_the_new_metric(toy):
    transcription = tracks.get()
    assert "exact" in transcription.keys(ranking=True)
    assert "exact_chars" in transcription.keys(ranking=False)
    assert metrics.fact("exact").group == "toy" and metrics.fact("exact").stage == "exactness"
    assert transcription.stages()["exactness"] == ("toy",)
    assert "exactness" in lb.configured_stages()
    with pytest.raises(MetricError, match="already produces"):
        metrics.register("toy2", ExactMatch())
    with pytest.raises(MetricError, match="not an etclib.metrics.Metric"):
        metrics.register("toy3", types.ModuleType("a_module_of_functions"))


def test_cli_score_json_and_ci(toy, tiny_corpus, tmp_path, capsys):
    from etclib.cli import main

    preds, data = _predictions(toy)
    path = tmp_path / "p.jsonl"
    path.write_bytes(data)
    args = ["score", str(path), "--metrics", "toy", "--json", "--ci", "--data", str(tiny_corpus)]
    assert main([*args, "--resamples", "300", "--seed", "5"]) == 0
    out = json.loads(capsys.readouterr().out)
    same = np.array([p == it.reference for p, it in zip(preds, toy)], dtype=float)
    assert out["exact"] == pytest.approx(same.mean() * 100)
    assert out["exact_chars"] == pytest.approx(np.mean([len(p) for p in preds]))
    assert out["signature"]["toy"] == "exact-match|v1"
    assert out["intervals"]["exact"] == pytest.approx(_independent_interval(same, 5, 300))
    assert "exact_chars" not in out["intervals"]  # a count, not a ranking metric


def test_about_page_lists_it(toy):
    from streamlit.testing.v1 import AppTest

    from tests.conftest import REPO
    from views.about import metric_table

    rows = {r["key"]: r for r in metric_table()}
    assert rows["exact"]["metric"] == "Exact match" and rows["exact"]["stage"] == "exactness"
    assert rows["exact_chars"]["unit"] == "count" and rows["exact_chars"]["ranking"] == "no"

    at = AppTest.from_file(str(REPO / "site_pages" / "about.py"), default_timeout=60).run()
    assert not at.exception
    table = next(df for df in at.dataframe if "definition" in df.value.columns)
    assert "exact" in set(table.value["key"])
    assert set(tracks.get().keys()) <= set(table.value["key"])
