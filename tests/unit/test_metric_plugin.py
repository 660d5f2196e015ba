"""A throw-away metric, registered through etclib's registry alone, reaches every consumer.

The metric is declared in tests/fixtures/metric_plugin.py and nowhere else: no leaderboard,
page or CLI file names it. It must appear in ``etclib score --json`` (with ``--ci``
intervals), in the leaderboard's stored scores (its own stage, queued after the lexical one),
in the ranking columns with bootstrap intervals (and as a ``sort_by``), in ``python -m
leaderboard show``, and in the About page's metric table. Expected numbers are computed here, with numpy, from the predictions.
"""

from __future__ import annotations

import json
import types

import numpy as np
import pytest

import leaderboard as lb
from etclib import metrics, tracks
from etclib.core.errors import MetricError
from tests.fixtures.metric_plugin import (  # noqa: F401 - toy: a fixture
    ExactMatch,
    _independent_interval,
    _predictions,
    toy,
)


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
