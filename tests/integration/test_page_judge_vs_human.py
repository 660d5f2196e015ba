"""The judge-versus-human page with AppTest: real corpus, with and without stored studies."""

from __future__ import annotations

import json
import re
from collections import Counter

import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

from etclib.data.corpus import CATEGORY_TO_JA
from etclib.studies import annotation, labeljudge
from tests import vega
from tests.conftest import REPO, needs_corpus
from tests.studies_engines import studies_db  # noqa: F401 - fixture: DuckDB and PostgreSQL
from views.judge_vs_human import LABEL_VIEWS

PAGE = str(REPO / "site_pages" / "judge_vs_human.py")
ADMIN = "page-admin-token-0123456789abc"


@pytest.fixture(autouse=True)
def _studies(tmp_path, monkeypatch):
    monkeypatch.setenv("ETC_STUDIES_DB", str(tmp_path / "studies.sqlite"))
    monkeypatch.setenv("ETC_ADMIN_TOKEN", ADMIN)
    monkeypatch.delenv("ETC_REFERENCE_DIR", raising=False)  # the figures shipped in etclib
    st.cache_data.clear()
    yield
    st.cache_data.clear()


def _page(study: int = 1) -> AppTest:
    """The page with the tab of ``study`` open (only the open tab runs)."""
    at = AppTest.from_file(PAGE, default_timeout=90)
    at.run()
    assert not at.exception, at.exception
    return _open(at, study) if study != 1 else at


def _open(at: AppTest, study: int) -> AppTest:
    from views.judge_vs_human import TABS

    at.session_state["jvh_tab"] = TABS[study - 1]
    at.run()
    assert not at.exception, at.exception
    assert at.header[0].value.startswith(f"Study {study}")
    return at


def _frame(at: AppTest, column: str):
    """The first table on the page that has ``column`` (tables have no keys in AppTest)."""
    for df in at.dataframe:
        if column in df.value.columns:
            return df.value
    raise AssertionError(f"no table with column {column!r} on the page")


def _texts(at: AppTest) -> str:
    parts = (
        [m.value for m in at.markdown] + [i.value for i in at.info] + [c.value for c in at.caption]
    )
    parts += (
        [e.value for e in at.error] + [s.value for s in at.success] + [w.value for w in at.warning]
    )
    return "\n".join(parts)


@needs_corpus
def test_page_without_any_study_shows_the_yardstick():
    at = _page()
    assert at.title[0].value == "Judge versus human"
    assert at.selectbox(key="jvh_run").value == "none"
    assert "only the human yardstick is shown" in _texts(at)
    table = _frame(at, "annotator vs the other two, κ (yardstick)")
    assert len(table) == 7 and "annotator vs the other two, κ (yardstick)" in table.columns
    assert "judge vs people's majority, κ [95% CI]" not in table.columns
    assert not at.error
    assert not vega.shown(at)  # the chart tab is closed: a visit draws no chart
    at.session_state["jvh_label_view"] = LABEL_VIEWS[1]
    at.run()
    (bars,) = vega.marks(vega.shown(at)[0], "bar")
    per_series = Counter(r["series"] for r in bars["rows"])
    assert set(per_series.values()) == {7}  # one bar per category in each series
    at.session_state["jvh_label_view"] = LABEL_VIEWS[0]
    at.run()
    assert "Study 2" not in "\n".join(h.value for h in at.header)  # closed tabs do not run
    _open(at, 2)
    assert "No answers yet" in _texts(at)
    assert "add_decisions" not in _texts(at)  # no internal names for visitors
    _open(at, 3)
    assert "EmplifAI" in "\n".join(s.value for s in at.subheader)
    assert "another dataset" in "\n".join(s.value for s in at.subheader)
    assert "not ETC's" in _texts(at)
    assert len(_frame(at, "5 − people's mean")) == 28


@pytest.mark.usefixtures("studies_db")  # after _studies: both engines
@needs_corpus
def test_page_after_a_judge_labels_run(corpus):
    items = [u for d in corpus.split("test") for u in d.utterances][:30]
    answers = {u.transcription: u.label for u in reversed(items)}

    def ask(messages):
        text = messages[1]["content"].rsplit("# 心情記述\n", 1)[1].strip()
        return json.dumps(
            {"labels": [CATEGORY_TO_JA[c] for c in answers[text]]}, ensure_ascii=False
        )

    run = labeljudge.judge_labels(corpus, "openai", "fake-judge", limit=30, ask=ask)
    at = _page()
    at.selectbox(key="jvh_run").set_value(run.run_id).run()
    assert not at.exception, at.exception
    table = _frame(at, "annotator vs the other two, κ (yardstick)")
    assert "judge vs people's majority, κ [95% CI]" in table.columns
    joy = table[table["category"] == "joy"].iloc[0]
    assert joy["judge vs people's majority, κ [95% CI]"].startswith("1.00")
    assert any(run.signature in c.value for c in at.caption)
    assert at.selectbox(key="jvh_label_category").value == "joy"


@pytest.mark.usefixtures("studies_db")  # after _studies: both engines
@needs_corpus
def test_annotation_flow_on_the_page():
    rows = [
        {
            "submission_id": "sub",
            "dialogue_id": 1,
            "turn": 1,
            "role": "speaker",
            "side": side,
            "unit": f"相手に共感したかった{i}",
            "target": "私は相手に共感したかった。",
            "label": label,
        }
        for i, (side, label) in enumerate([("precision", "Supported"), ("recall", "Neutral")])
    ]
    annotation.add_decisions(rows)
    annotation.draw_sample(ADMIN, "sub", per_label=5)
    code = annotation.issue_code(ADMIN, "page").code

    at = _page(2)
    at.text_input(key="jvh_code").input("wrong-code").run()
    assert any("Unknown annotator code" in e.value for e in at.error)

    at.text_input(key="jvh_code").input(code).run()
    assert not at.exception
    radio = next(r for r in at.radio if r.key.startswith("jvh_answer_"))
    assert at.button(key="jvh_submit").disabled
    shown_unit = at.text[0].value
    radio.set_value("Not Supported").run()
    at.button(key="jvh_submit").click().run()
    assert not at.exception, at.exception
    judge = next(r["label"] for r in rows if r["unit"] == shown_unit)
    assert f"the judge said **{judge}**" in _texts(at)
    assert annotation.results().n_answers == 1
    at.button(key="jvh_next").click().run()
    second = next(r for r in at.radio if r.key.startswith("jvh_answer_"))
    second.set_value("Supported").run()
    at.button(key="jvh_submit").click().run()
    at.button(key="jvh_next").click().run()
    assert "Nothing left to check" in _texts(at)
    assert at.metric[0].value == "2"


@needs_corpus
def test_ratings_upload_errors_and_results():
    at = _page(3)
    at.file_uploader(key="jvh_ratings_upload").upload(
        "bad.csv", b"item,system,metric,rater_kind,rater_id,score\n1,a,m,robot,x,3\n", "text/csv"
    ).run()
    assert not at.exception
    # The message is shown literally: Markdown-escaped, so unescape it to read it.
    assert any("line 2: rater_kind 'robot'" in re.sub(r"\\(.)", r"\1", e.value) for e in at.error)

    rows = ["item,system,metric,rater_kind,rater_id,score"]
    for i, (llm, human) in enumerate([(5, 4), (5, 5), (5, 3), (5, 4)]):
        rows += [f"{i},GPT,harmlessness,llm,j,{llm}", f"{i},GPT,harmlessness,human,h,{human}"]
    at.file_uploader(key="jvh_ratings_upload").set_value(
        ("ok.csv", "\n".join(rows).encode(), "text/csv")
    ).run()
    assert not at.exception, at.exception
    table = _frame(at, "Pearson's r [95% CI]")
    assert table.iloc[0]["Pearson's r [95% CI]"] == "undefined"
    assert "the LLM gave every item 5" in table.iloc[0]["note"]
    assert table.iloc[0]["mean absolute difference"] == 1.0
