"""LLM-judge metric: SPEC scoring rules with hand-worked numbers, parsing, prompts, CLI.

Every metric test runs twice, through the real Gemini SDK and the real OpenAI SDK, against the
loopback fake server (tests/fakes). Expected numbers are worked out by hand in the comments.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from etclib.core.errors import JudgeError
from etclib.judge.providers import SCHEMAS
from etclib.metrics import judge as J
from tests.fakes.judge_fixtures import FAKE_MODEL, judge_env  # noqa: F401 - fixture
from tests.fixtures.judge import NAN, NS, N, S
from tests.fixtures.judge import close_or_both_nan as _close

# Texts, their units, and labels. Each item is (prediction, reference).
UNITS = {
    # item 1: Neutral counts as not supported
    "予測一": ["嬉しくなった", "相手を励ましたいと思った"],
    "参照一": ["相手に共感した"],
    # item 2: reference without units -> excluded
    "予測二": ["驚いた"],
    "参照二": [],
    # item 3: prediction without units against a reference with units -> 0/0/0
    "予測三": [],
    "参照三": ["悲しくなった", "話題を変えようとした"],
    # items 4 and 5: f1 is the mean of item F1s
    "予測四": ["楽しかった"],
    "参照四": ["楽しかった", "感謝した", "安心した"],
    "予測五": ["怖かった", "迷った", "疲れた", "焦った"],
    "参照五": ["怖かった"],
    # item 6: p = r = 0 -> F1 0 (no division by zero)
    "予測六": ["怒った"],
    "参照六": ["喜んだ"],
}


LABELS = {
    ("嬉しくなった", "参照一"): S,
    ("相手を励ましたいと思った", "参照一"): N,
    ("相手に共感した", "予測一"): N,
    ("楽しかった", "参照四"): S,
    ("楽しかった", "予測四"): S,
    ("感謝した", "予測四"): NS,
    ("安心した", "予測四"): N,
    ("怖かった", "参照五"): S,
    ("迷った", "参照五"): NS,
    ("疲れた", "参照五"): N,
    ("焦った", "参照五"): NS,
    ("怖かった", "予測五"): S,
    ("怒った", "参照六"): NS,
    ("喜んだ", "予測六"): NS,
}


def _items(*numbers: str) -> tuple[list[str], list[str]]:
    return [f"予測{n}" for n in numbers], [f"参照{n}" for n in numbers]


# (items, precision, recall, f1, n_judged), scores x100, worked by hand:
#   item 1: P = 1/2 (one Supported, one Neutral), R = 0/1 (Neutral)  -> F1 = 0
#   item 2: excluded (reference has no unit)
#   item 3: 0 / 0 / 0
#   item 4: P = 1/1, R = 1/3            -> F1 = 2*(1)(1/3)/(4/3) = 0.5
#   item 5: P = 1/4, R = 1/1            -> F1 = 2*(1/4)(1)/(5/4) = 0.4
#   item 6: P = 0, R = 0                -> F1 = 0
CASES = [
    (("一",), 50.0, 0.0, 0.0, 1),
    (("二",), NAN, NAN, NAN, 0),
    (("三",), 0.0, 0.0, 0.0, 1),
    (("六",), 0.0, 0.0, 0.0, 1),
    # mean of item F1s (0.5 + 0.4) / 2 = 0.45, not the harmonic mean of the means
    # (P = 0.625, R = 2/3 -> 0.645)
    (("四", "五"), 62.5, 200 / 3, 45.0, 2),
    # all six: P = (0.5 + 0 + 1 + 0.25 + 0) / 5 = 0.35, R = (0 + 0 + 1/3 + 1 + 0) / 5 = 4/15,
    # F1 = (0 + 0 + 0.5 + 0.4 + 0) / 5 = 0.18; item 2 excluded
    (("一", "二", "三", "四", "五", "六"), 35.0, 400 / 15, 18.0, 5),
]


@pytest.fixture
def scripted(judge_env):  # noqa: F811 - fixture use
    judge_env.responder.units.update(UNITS)
    judge_env.responder.labels.update(LABELS)
    return judge_env


@pytest.mark.parametrize(("numbers", "precision", "recall", "f1", "n_judged"), CASES)
def test_scoring_rules(scripted, numbers, precision, recall, f1, n_judged):
    preds, refs = _items(*numbers)
    data = J.METRIC.compute(preds, refs, scripted.ctx())
    got = J.METRIC.aggregate(data)
    assert _close(got["precision"], precision), got
    assert _close(got["recall"], recall), got
    assert _close(got["f1"], f1), got
    assert got["n_judged"] == n_judged
    assert data.extra["judge_errors"] == 0


def test_unit_counts_and_details(scripted):
    preds, refs = _items("一", "二", "三", "四", "五", "六")
    data = J.METRIC.compute(preds, refs, scripted.ctx())
    # units per prediction: 2, 1, 0, 1, 4, 1 -> mean 9/6 = 1.5;
    #   squared deviations .25 .25 2.25 .25 6.25 .25 = 9.5 -> population SD sqrt(9.5/6)
    # units per reference: 1, 0, 2, 3, 1, 1 -> mean 8/6; squared deviations
    #   1/9 16/9 4/9 25/9 1/9 1/9 = 48/9 -> SD sqrt(48/54)
    got = J.METRIC.aggregate(data)
    assert got["units_mean"] == pytest.approx(1.5)
    assert got["units_sd"] == pytest.approx(math.sqrt(9.5 / 6))
    assert got["ref_units_mean"] == pytest.approx(8 / 6)
    assert got["ref_units_sd"] == pytest.approx(math.sqrt(48 / 54))
    assert list(data.arrays["units"]) == [2, 1, 0, 1, 4, 1]
    assert list(data.arrays["ref_units"]) == [1, 0, 2, 3, 1, 1]
    assert np.isnan(data.arrays["f1"][1]) and data.arrays["f1"][2] == 0.0
    d = data.details[0]
    why = "表面の内容を比較した。"  # the scripted judge's reasoning for every decision
    assert d == {
        "units": UNITS["予測一"],
        "unit_labels": [S, N],
        "unit_reasons": [why, why],
        "ref_units": UNITS["参照一"],
        "ref_unit_labels": [N],
        "ref_unit_reasons": [why],
        "error": None,
    }
    # nothing is asked where a side has no unit
    assert data.details[1]["unit_labels"] == [] and data.details[2]["ref_unit_labels"] == []
    assert J.METRIC.item_scores(data, 3) == {
        "precision": 100.0,
        "recall": pytest.approx(33.3333, abs=1e-4),
        "f1": 50.0,
        "n_units": 1,
        "n_ref_units": 3,
    }
    assert J.METRIC.item_scores(data, 1)["f1"] is None
    # a subset (as breakdowns and bootstrap use it): items 4 and 5 only
    sub = J.METRIC.aggregate(data, np.array([3, 4]))
    assert sub["f1"] == pytest.approx(45.0) and sub["n_judged"] == 2
    assert sub["units_mean"] == pytest.approx(2.5) and sub["units_sd"] == pytest.approx(1.5)


def test_no_entailment_asked_when_a_side_has_no_unit(scripted):
    preds, refs = _items("二", "三")
    J.METRIC.compute(preds, refs, scripted.ctx())
    assert sum(scripted.responder.entail_calls.values()) == 0
    assert sum(scripted.responder.decompose_calls.values()) == 4


def test_empty_prediction_costs_no_call_and_scores_zero(scripted):
    data = J.METRIC.compute(["", "   "], ["参照四", "参照四"], scripted.ctx())
    assert J.METRIC.aggregate(data)["f1"] == 0.0
    assert scripted.responder.decompose_calls == {"参照四": 1}


def test_identical_prediction_scores_maximum(scripted):
    # each unit of a text verbatim in itself -> default label Supported
    texts = ["相手が来てくれて嬉しかった。もっと話したいと思った。", "驚いた。"]
    got = J.METRIC.score(texts, texts, **scripted.options)
    assert got["precision"] == got["recall"] == got["f1"] == 100.0


def test_score_one_call_form_matches_compute(scripted):
    preds, refs = _items("四", "五")
    assert J.METRIC.score(preds, refs, **scripted.options)["f1"] == pytest.approx(45.0)


def test_requests_ask_for_structured_output_at_temperature_zero(scripted):
    J.METRIC.compute(*_items("一"), scripted.ctx())
    reqs = scripted.server.requests
    assert reqs and all(r.model == FAKE_MODEL for r in reqs)
    for r in reqs:
        settings = r.settings
        if scripted.provider == "anthropic":  # Claude takes no sampling settings
            assert "temperature" not in settings
        else:
            assert settings["temperature"] == 0
        if scripted.provider == "gemini":
            assert settings["responseMimeType"] == "application/json"
            assert "responseSchema" not in settings  # the JSON Schema as it is, no conversion
            assert settings["responseJsonSchema"] in SCHEMAS.values()
        elif scripted.provider == "anthropic":
            assert settings["output_config"]["format"]["type"] == "json_schema"
            assert r.body["system"][0]["cache_control"] == {"type": "ephemeral"}
        else:
            assert settings["response_format"]["type"] == "json_schema"
            assert settings["response_format"]["json_schema"]["strict"] is True


def test_openai_json_object_format(scripted, monkeypatch):
    if scripted.provider != "openai":
        pytest.skip("OpenAI-only setting")
    monkeypatch.setenv("ETC_JUDGE_OPENAI_FORMAT", "json_object")
    got = J.METRIC.score(*_items("四"), **scripted.options)
    assert got["f1"] == pytest.approx(50.0)
    assert {r.body["response_format"]["type"] for r in scripted.server.requests} == {"json_object"}
    monkeypatch.setenv("ETC_JUDGE_OPENAI_FORMAT", "yaml")
    with pytest.raises(JudgeError, match="ETC_JUDGE_OPENAI_FORMAT"):
        J.METRIC.score(*_items("四"), **scripted.options)


@pytest.mark.parametrize("wrap", ["fence", "chatty"])
def test_wrapped_answers_are_parsed(scripted, wrap):
    scripted.responder.wrap = wrap
    got = J.METRIC.score(*_items("四", "五"), **scripted.options)
    assert got["f1"] == pytest.approx(45.0)


def test_compute_from_inside_a_running_event_loop(scripted):
    import asyncio

    async def inside():
        return J.METRIC.score(*_items("四", "五"), **scripted.options)

    assert asyncio.run(inside())["f1"] == pytest.approx(45.0)


def test_cli_decompose_and_entail(scripted, monkeypatch, capsys):
    from etclib import cli

    monkeypatch.setitem(cli.COMMANDS, "judge", "etclib.cli.judge")
    common = ["--provider", scripted.provider, "--model", FAKE_MODEL]
    assert cli.main(["judge", "decompose", "予測一", *common]) == 0
    assert capsys.readouterr().out.splitlines() == UNITS["予測一"]
    assert cli.main(["judge", "decompose", "参照二", *common]) == 0
    assert "no unit" in capsys.readouterr().out
    assert cli.main(["judge", "entail", "相手に共感した", "予測一", *common, "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["label"] == N and out["usage"]["calls"] == 1
    assert out["signature"].startswith(f"provider:{scripted.provider}|model:{FAKE_MODEL}|")
    # asked again: answered from the cache
    assert cli.main(["judge", "entail", "相手に共感した", "予測一", *common, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["usage"] == {
        "calls": 0,
        "cache_hits": 1,
        "retries": 0,
        "input_tokens": 0,
        "output_tokens": 0,
        "cached_tokens": 0,
        "reasoning_tokens": 0,
        "cut_answers": 0,
        "cost_usd": None,
    }


def test_through_etclib_scoring_with_breakdowns_and_per_item(scripted, tiny_corpus, monkeypatch):
    # the metric registry line the integrator adds, set here for this test only
    from etclib import metrics
    from etclib.data.corpus import load_corpus
    from etclib.data.task import items
    from etclib.tracks.scoring import score

    monkeypatch.setitem(metrics.METRICS, "judge", "etclib.metrics.judge")
    corpus = load_corpus(tiny_corpus)
    test = items(corpus, "test")
    # an identical submission: every unit Supported, so every included item scores 100
    preds = {it.key: it.reference for it in test}
    result = score(preds, corpus=corpus, metrics="judge", options=scripted.options)
    assert result.scores["f1"] == 100.0 and result.scores["n_judged"] == len(test)
    assert result.signature["judge"].startswith(f"provider:{scripted.provider}|")
    out = result.to_json()
    assert out["judge_errors"] == 0 and out["judge_usage"]["calls"] > 0
    row = result.per_item()[0]
    assert row["n_units"] == len(row["units"]) and row["unit_labels"] == [S] * row["n_units"]
    assert row["f1"] == 100.0 and row["error"] is None


def test_order_of_items_does_not_change_the_score(scripted):
    preds, refs = _items("一", "二", "三", "四", "五", "六")
    forward = J.METRIC.score(preds, refs, **scripted.options)
    backward = J.METRIC.score(preds[::-1], refs[::-1], **scripted.options)
    assert forward == pytest.approx(backward, nan_ok=True)
