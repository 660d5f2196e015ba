"""Study 2 fed by the leaderboard's judge, end to end: a file scored through the leaderboard with
the judge (real SDKs against the fake server), the page's pool, two annotators, agreement.

Runs with both SDKs on a DuckDB studies file, and once (OpenAI SDK) with the studies on
PostgreSQL: the storage engine is the point there, and the run is the slowest of the studies'."""

from __future__ import annotations

import pytest
import streamlit as st
from sklearn.metrics import cohen_kappa_score
from streamlit.testing.v1 import AppTest

import leaderboard as lb
from etclib.data.corpus import load_corpus
from etclib.data.task import items as split_items
from etclib.studies import annotation
from etclib.tracks.predictions import dumps_jsonl
from tests.conftest import REPO
from tests.fakes.judge_fixtures import FAKE_MODEL, JudgeEnv, point_provider_at
from tests.fakes.judge_responder import ScriptedJudge
from tests.fakes.llm_server import FakeLLMServer
from tests.studies_engines import use_engine

ADMIN = "study2-admin-token-of-24-characters-or-more"
PER_STRATUM = 3
NEUTRAL = "猫が好きです。"
UNRELATED = "犬が好きです。"


@pytest.fixture(autouse=True)
def _clean():
    st.cache_data.clear()
    st.cache_resource.clear()  # the page caches the corpus: here the tiny one
    yield
    st.cache_data.clear()
    st.cache_resource.clear()
    lb.close_all()


@pytest.fixture(
    params=[("gemini", "sqlite"), ("openai", "sqlite"), ("openai", "postgresql")],
    ids=lambda p: "-".join(p),
)
def judge_env(request, monkeypatch, tmp_path):
    """The fake judge for one SDK, and the studies database on one engine."""
    provider, engine = request.param
    use_engine(request, engine, monkeypatch, tmp_path)
    responder = ScriptedJudge()
    with FakeLLMServer(responder, hang_seconds=10.0) as server:
        point_provider_at(monkeypatch, provider, server)
        yield JudgeEnv(provider=provider, server=server, responder=responder)


def fleiss(pairs: list[tuple[str, str]], labels) -> float:
    """Fleiss' kappa of two raters, written out (not etclib's)."""
    n, counts = 2, [[pair.count(lab) for lab in labels] for pair in pairs]
    p_i = [(sum(c * c for c in row) - n) / (n * (n - 1)) for row in counts]
    p_bar = sum(p_i) / len(p_i)
    p_j = [sum(row[j] for row in counts) / (len(counts) * n) for j in range(len(labels))]
    p_e = sum(p * p for p in p_j)
    return (p_bar - p_e) / (1 - p_e)


def _score_with_judge(judge_env, tiny_corpus, monkeypatch) -> str:
    monkeypatch.setenv("ETC_DATA_DIR", str(tiny_corpus))
    monkeypatch.setenv("ETC_JUDGE_PROVIDER", judge_env.provider)
    monkeypatch.setenv("ETC_JUDGE_MODEL", FAKE_MODEL)
    monkeypatch.setenv("ETC_STUDY2_PER_STRATUM", str(PER_STRATUM))
    monkeypatch.setenv("ETC_ADMIN_TOKEN", ADMIN)
    monkeypatch.setenv("ETC_LB_BOOTSTRAP", "100")
    its = split_items(load_corpus(tiny_corpus), "test")
    preds = {}
    for i, it in enumerate(its):  # a third of each: Supported, Neutral, Not Supported
        preds[it.key] = (it.reference, NEUTRAL, UNRELATED)[i % 3]
        if i % 3 == 1:
            judge_env.responder.labels[(NEUTRAL, it.reference)] = "Neutral"
            judge_env.responder.labels[(it.reference, NEUTRAL)] = "Neutral"
    data = dumps_jsonl(preds.items()).encode("utf-8")
    receipt = lb.submit(data, {"name": "judged", "setting": "zero-shot", "saw_test": "no"})
    lb.process_jobs()
    assert lb.status(receipt.id)["status"] == "scored", lb.status(receipt.id)
    assert lb.ranking().attrs["sort_by"] == "f1"
    return receipt.id


def _page() -> AppTest:
    from views.judge_vs_human import TABS

    at = AppTest.from_file(str(REPO / "site_pages" / "judge_vs_human.py"), default_timeout=90)
    at.session_state["jvh_tab"] = TABS[1]
    at.run()
    assert not at.exception, at.exception
    return at


def _metric(at: AppTest, label: str) -> str:
    return next(m.value for m in at.metric if m.label == label)


def _answer(at: AppTest, pick) -> tuple[str, str, str]:
    """Answer the decision the page shows; (decision id, judge label, answer)."""
    radio = next(r for r in at.radio if r.key.startswith("jvh_answer_"))
    decision = radio.key.removeprefix("jvh_answer_")
    label = _judge_label(decision)
    answer = pick(label)
    radio.set_value(answer).run()
    at.button(key="jvh_submit").click().run()
    assert not at.exception, at.exception
    assert f"the judge said **{label}**" in "\n".join(
        [s.value for s in at.success] + [w.value for w in at.warning]
    )
    at.button(key="jvh_next").click().run()
    return decision, label, answer


def _judge_label(decision_id: str) -> str:
    with annotation.connect_studies(read_only=True) as con:
        return con.execute(
            "SELECT label FROM judge_decisions WHERE decision_id = ?", [decision_id]
        ).fetchone()[0]


def test_judge_run_feeds_study2_and_two_annotators_give_agreement(
    judge_env,
    tiny_corpus,
    monkeypatch,
):
    sid = _score_with_judge(judge_env, tiny_corpus, monkeypatch)

    # Every decision of the judge run is stored; the sample is balanced over label x side.
    with annotation.connect_studies(read_only=True) as con:
        stored = con.execute(
            "SELECT label, side, count(*) FROM judge_decisions WHERE submission_id = ? "
            "GROUP BY label, side",
            [sid],
        ).fetchall()
        sampled = con.execute(
            "SELECT d.label, d.side, count(*) FROM annotation_sample s "
            "JOIN judge_decisions d USING (decision_id) GROUP BY d.label, d.side"
        ).fetchall()
    assert {(lab, side) for lab, side, _ in stored} == {
        (lab, side) for lab in annotation.LABELS for side in annotation.SIDES
    }
    assert all(n >= PER_STRATUM for *_, n in stored)
    assert sorted(n for *_, n in sampled) == [PER_STRATUM] * 6
    total = 6 * PER_STRATUM

    # The same run again (a re-score) adds nothing to the pool.
    assert annotation.feed(annotation_rows(sid), per_stratum=PER_STRATUM)["sampled"] == total

    a = annotation.issue_code(ADMIN, "A").code
    b = annotation.issue_code(ADMIN, "B").code
    at = _page()
    assert _metric(at, "Decisions in the pool") == str(total)
    assert _metric(at, "Waiting for answers") == str(total)
    assert "No answers yet" in "\n".join(i.value for i in at.info)

    at.text_input(key="jvh_code").input(a).run()
    first = [_answer(at, lambda judge: judge) for _ in range(6)]
    at = _page()
    at.text_input(key="jvh_code").input(b).run()
    other = {"Supported": "Neutral", "Neutral": "Not Supported", "Not Supported": "Supported"}
    second = [
        _answer(at, (lambda judge: other[judge]) if i == 0 else (lambda judge: judge))
        for i in range(6)
    ]
    # B is given the decisions A answered, so each has two answers (pairs first).
    assert [d for d, *_ in second] == [d for d, *_ in first]

    at = _page()
    assert _metric(at, "Answers given") == _metric(at, "Answers") == "12"
    assert _metric(at, "Waiting for answers") == str(total - 6)
    assert _metric(at, "Annotators who answered") == "2"
    judge = [lab for _, lab, _ in first + second]
    human = [ans for *_, ans in first + second]
    expected_jh = cohen_kappa_score(judge, human, labels=list(annotation.LABELS))
    expected_hh = fleiss([(x[2], y[2]) for x, y in zip(first, second)], list(annotation.LABELS))
    # shown with two decimals: equal to the independent figure within rounding
    assert float(_metric(at, "Judge–human κ")) == pytest.approx(expected_jh, abs=0.0051)
    assert float(_metric(at, "Human–human κ")) == pytest.approx(expected_hh, abs=0.0051)


def annotation_rows(sid: str) -> list[dict]:
    with annotation.connect_studies(read_only=True) as con:
        frame = con.frame(
            "SELECT submission_id, dialogue_id, turn, role, side, unit, target, label "
            "FROM judge_decisions WHERE submission_id = ?",
            [sid],
        )
    return frame.to_dict("records")
