"""The field facts: every column a visitor reads named in words, from one place; a metric's
undefined per-category scores; chart labels on two lines."""

from __future__ import annotations

import pytest


@pytest.mark.parametrize(
    ("column", "label"),
    [
        ("saw_test", "saw test data"),
        ("rank_band", "rank band"),
        ("n_items", "items"),
        ("created_at", "submitted (UTC)"),
        ("rougeL", "ROUGE-L ↑"),  # a metric key: its fact's heading
        ("ROUGE-L ↑", "ROUGE-L ↑"),  # a heading already
        ("ROUGE-L ↑ [95% CI]", "ROUGE-L ↑ [95% CI]"),
        ("macro_f1", "Macro-F1 ↑"),
        ("something else", "something else"),  # unknown: as it is
    ],
)
def test_each_column_has_a_readers_name(column, label):
    from views.fields import label as field_label

    assert field_label(column) == label


def test_a_header_carries_its_meaning():
    from views.fields import RANK_BAND, column_config

    config = column_config(["rank_band", "rougeL", "name"], name="medium")
    assert config["rank_band"]["label"] == "rank band" and config["rank_band"]["help"] == RANK_BAND
    assert config["rougeL"]["help"] == (
        "Longest-common-subsequence F-measure per item on MeCab tokens, mean over items."
    )  # the metric's own definition
    assert config["name"]["width"] == "medium"


def test_a_score_column_keeps_two_decimals_and_other_numbers_their_own():
    from views.fields import column_config

    numbers = ["ROUGE-L ↑", "rougeL", "p", "n_items"]
    config = column_config(["ROUGE-L ↑", "rougeL", "p", "n_items", "name"], numbers)
    for score in ("ROUGE-L ↑", "rougeL"):  # 45.4 shows as 45.40 beside 43.56
        assert config[score]["type_config"]["format"] == "%.2f"
    for other in ("p", "n_items", "name"):  # a p-value or a count is not a score
        assert "format" not in config[other].get("type_config", {})


def test_undefined_per_category_scores_say_why():
    import numpy as np

    from etclib.metrics import MetricData
    from etclib.tracks.categories.labels import indicator
    from etclib.tracks.categories.metric import METRIC

    predictions = [("joy",), ("joy",), ("neutral",)]
    gold = [("joy",), ("sadness",), ("sadness",)]
    data = MetricData(
        {"pred": indicator(predictions).astype(np.uint8), "gold": indicator(gold).astype(np.uint8)}
    )
    missing = METRIC.undefined(data)
    assert missing["precision_sadness"] == "never predicts sadness"
    assert missing["recall_fear"] == "no item is labelled fear"
    assert "precision_joy" not in missing and "recall_sadness" not in missing
    assert "recall_neutral" in missing and "precision_neutral" not in missing  # predicted once


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("short name", "short name"),
        (
            "A very long entry name that a submitter chose",
            "A very long entry name that\na submitter chose",
        ),
        (
            "A very long entry name that a submitter chose to describe each setting of a run",
            "A very long entry name that\na submitter chose to descri…",
        ),
        (
            "GPT-4.1, four solved examples, long run (reported)",
            "GPT-4.1, four solved\nexamples, long r… (reported)",  # "(reported)" kept
        ),
    ],
)
def test_chart_labels_wrap_onto_two_lines_before_they_are_cut(name, expected):
    from views.charts import short_labels

    assert short_labels([name], 28, lines=2) == [expected]
