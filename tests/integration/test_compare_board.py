"""Comparing two stored entries (leaderboard/compare.py, ``python -m leaderboard compare``):
the same numbers as ``etclib compare`` on the two predictions, the judge's stored decisions,
the pairwise matrix of the board's top entries, and the exports."""

from __future__ import annotations

import csv
import io
import json

import pytest

import leaderboard as lb
from etclib.data.corpus import load_corpus
from etclib.tracks import comparison
from etclib.tracks.predictions import dumps_jsonl
from leaderboard import compare as lbc
from leaderboard.__main__ import main as lb_main
from leaderboard.errors import LeaderboardError
from tests.fakes.judge_fixtures import FAKE_MODEL, point_provider_at
from tests.fakes.llm_server import FakeLLMServer
from tests.fixtures.board import _fresh_samples, sampled_tiny  # noqa: F401 - fixtures
from tests.reasoning_judge import ReasoningJudge, reason, strip_reasons

TRIALS = 1000


def submit(items, name, text, track=None) -> tuple[str, dict]:
    preds = {it.key: text(it) for it in items}
    data = dumps_jsonl(preds.items(), track=track).encode("utf-8")
    return lb.submit(data, {"name": name}).id, preds


def entries(items):
    a = submit(items, "copy", lambda it: it.utterance)
    b = submit(items, "half", lambda it: it.reference if it.turn % 2 else it.utterance)
    c = submit(items, "=formula", lambda it: "=1+1 " + it.reference)
    lb.process_jobs()
    return a, b, c


def test_stored_entries_give_etclibs_numbers(tiny, tiny_corpus, capsys):
    (ida, pa), (idb, pb), _ = entries(tiny)
    stored = lbc.compare(ida, idb, trials=TRIALS)
    groups = list(stored.modules)
    assert {"bleu", "rouge"} <= set(groups)
    offline = comparison.compare(
        pa, pb, groups, corpus=load_corpus(tiny_corpus), resamples=200, seed=11, trials=TRIALS
    )
    assert list(stored.metrics) == list(offline.metrics)
    for key, m in stored.metrics.items():
        o = offline.metrics[key]
        assert (m.a, m.b, m.difference) == pytest.approx((o.a, o.b, o.difference))
        assert m.interval == pytest.approx(o.interval)
        assert m.p_value == o.p_value and m.verdict == o.verdict
    assert stored.per_item()[3]["prediction_b"] == pb[tiny[3].key]
    # the stored item scores (read, not recomputed) are etclib's item scores of the files
    assert stored.item_scores_a and set(stored.item_scores_a) == set(groups)
    for row, again in zip(stored.per_item(), offline.per_item()):
        assert row.keys() == again.keys()
        for k, v in row.items():
            assert v == (pytest.approx(again[k]) if isinstance(v, float) else again[k])
    assert stored.a == {"name": "copy", "source": ida}
    # the command line prints the same JSON shape and numbers
    assert lb_main(["compare", ida, idb, "--json", "--trials", str(TRIALS)]) == 0
    got = json.loads(capsys.readouterr().out)
    assert got["metrics"] == json.loads(json.dumps(stored.to_json()["metrics"]))
    assert set(got) == {"a", "b", "signature", "n_items", "metrics"}
    assert "bootstrap:200|seed:11" in got["signature"]["compare"]
    assert lb_main(["compare", ida, idb, "--trials", str(TRIALS)]) == 0
    text = capsys.readouterr().out
    assert f"{stored.metrics['rougeL'].difference:+.2f}" in text


def test_an_entry_against_itself(tiny):
    (ida, _), _, _ = entries(tiny)
    same = lbc.compare(ida, ida, trials=TRIALS)
    assert {m.verdict for m in same.metrics.values()} == {comparison.NO_DIFFERENCE}
    assert all(m.difference == 0 and m.p_value == 1.0 for m in same.metrics.values())


def test_pairwise_matrix_agrees_with_each_comparison(tiny):
    entries(tiny)
    matrix = lbc.pairwise(trials=TRIALS)
    order = matrix.attrs["order"]
    metric = matrix.attrs["metric"]
    assert len(order) == 3 and len(matrix) == 9
    board = lb.ranking()
    assert order == list(board[board["rank"] > 0]["id"])
    for r in matrix.itertuples():
        if r.a_id == r.b_id:
            assert r.verdict == "same"
            continue
        m = lbc.compare(r.a_id, r.b_id, trials=TRIALS).metrics[metric]
        assert r.difference == pytest.approx(-m.difference)  # row − column
        assert r.p_value == pytest.approx(m.p_value)
        expected = {comparison.A_BETTER: "better", comparison.B_BETTER: "worse"}.get(
            m.verdict, comparison.NO_DIFFERENCE
        )
        assert r.verdict == expected


def test_exports_are_formula_safe_and_complete(tiny):
    (ida, _), _, (idc, _) = entries(tiny)
    c = lbc.compare(ida, idc, trials=TRIALS)
    table = list(csv.DictReader(io.StringIO(lbc.export_csv(c, "metrics"))))
    assert [r["metric"] for r in table] == list(c.metrics)
    assert float(table[0]["difference"]) == pytest.approx(next(iter(c.metrics.values())).difference)
    items = list(csv.DictReader(io.StringIO(lbc.export_csv(c, "items"))))
    assert len(items) == len(tiny)
    assert all(r["prediction_b"].startswith("'=1+1") for r in items)
    data = json.loads(lbc.export_json(c))
    assert len(data["items"]) == len(tiny) and set(data["metrics"]) == set(c.metrics)
    with pytest.raises(LeaderboardError):
        lbc.export_csv(c, "nothing")


def test_entries_of_different_tracks_are_refused(tiny):
    (ida, _), _, _ = entries(tiny)
    idl, _ = submit(tiny, "labels", lambda it: ("joy",), track="erc")
    lb.process_jobs()
    with pytest.raises(LeaderboardError, match="track"):
        lbc.compare(ida, idl, trials=TRIALS)


def test_erc_entries_compare_per_category(tiny):
    ida, _ = submit(tiny, "joy", lambda it: ("joy",), track="erc")
    idb, _ = submit(tiny, "gold", lambda it: it.label, track="erc")
    lb.process_jobs()
    c = lbc.compare(ida, idb, trials=TRIALS)
    assert c.track == "erc"
    assert "macro_f1" in c.metrics and "f1_sadness" in c.metrics
    rows = c.per_item()
    assert sum(r["labels_differ"] for r in rows) == sum(set(it.label) != {"joy"} for it in tiny)
    assert rows[0]["prediction_b"] == list(tiny[0].label)


@pytest.fixture
def judged(tiny, monkeypatch):
    responder = ReasoningJudge()
    with FakeLLMServer(responder, hang_seconds=10.0) as server:
        point_provider_at(monkeypatch, "gemini", server)
        monkeypatch.setenv("ETC_JUDGE_PROVIDER", "gemini")
        monkeypatch.setenv("ETC_JUDGE_MODEL", FAKE_MODEL)
        a = submit(tiny, "unrelated", lambda it: "犬が好きです。")
        b = submit(tiny, "oracle", lambda it: it.reference)
        lb.process_jobs()
        yield tiny, a, b


def test_judge_decisions_of_both_entries_are_compared(judged):
    tiny, (ida, _), (idb, _) = judged
    assert lb.status(idb)["status"] == "scored", lb.status(idb)
    c = lbc.compare(ida, idb, trials=TRIALS)
    assert {"precision", "recall", "f1"} <= set(c.metrics)
    assert c.metrics["f1"].verdict == comparison.B_BETTER
    details_b = c.data_b["judge"].details
    assert details_b is not None and details_b[0]["units"] and details_b[0]["unit_labels"]
    assert set(details_b[0]["unit_labels"]) == {"Supported"}
    assert set(c.data_a["judge"].details[0]["unit_labels"]) == {"Not Supported"}
    row = c.per_item()[0]
    assert row["f1_a"] == 0 and row["f1_b"] == 100.0 and row["f1_diff"] == 100.0
    assert c.primary_item_key() == "f1"


def test_the_judges_reasoning_is_stored_beside_each_decision(judged):
    tiny, (ida, pa), (idb, pb) = judged
    c = lbc.compare(ida, idb, trials=TRIALS)
    for name, data, preds in (("A", c.data_a, pa), ("B", c.data_b, pb)):
        for i, it in enumerate(tiny):
            d = data["judge"].details[i]
            assert d["error"] is None and d["units"] and d["ref_units"], (name, i, d)
            # each unit of the prediction was checked against the reference, and each unit
            # of the reference against the prediction: the reason names that unit and target
            assert d["unit_reasons"] == [reason(u, it.reference.strip()) for u in d["units"]]
            assert d["ref_unit_reasons"] == [
                reason(u, preds[it.key].strip()) for u in d["ref_units"]
            ]
    first = c.data_a["judge"].details[0]
    assert first["unit_reasons"] == [
        f"「犬が好きです。」を「{tiny[0].reference.strip()}」と比べた。"
    ]


def test_stored_decisions_without_reasoning_still_compare(judged):
    tiny, (ida, _), (idb, _) = judged
    before = lbc.compare(ida, idb, trials=TRIALS)
    assert strip_reasons(ida) == len(tiny)
    c = lbc.compare(ida, idb, trials=TRIALS)
    d = c.data_a["judge"].details[0]
    assert "unit_reasons" not in d and d["unit_labels"] == ["Not Supported"]
    assert "unit_reasons" in c.data_b["judge"].details[0]
    for key, m in c.metrics.items():
        o = before.metrics[key]
        assert (m.a, m.b, m.difference, m.p_value) == (o.a, o.b, o.difference, o.p_value)
