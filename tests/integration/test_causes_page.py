"""The causes page with AppTest: the real corpus, an empty and a filled studies database."""

from __future__ import annotations

import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

from etclib.studies import annotation, causes
from tests.conftest import REPO, needs_corpus
from tests.fakes.cause_responder import ScriptedCauses
from tests.studies_engines import studies_db  # noqa: F401 - fixture: DuckDB and PostgreSQL
from views import causes as cv

PAGE = str(REPO / "site_pages" / "causes.py")
ADMIN = "page-admin-token-of-24-characters-or-more"
pytestmark = [needs_corpus, pytest.mark.usefixtures("studies_db")]


@pytest.fixture(autouse=True)
def _studies(monkeypatch):
    monkeypatch.setenv("ETC_ADMIN_TOKEN", ADMIN)
    st.cache_data.clear()
    yield
    st.cache_data.clear()


def _page(tab: str = cv.TABS[0]) -> AppTest:
    at = AppTest.from_file(PAGE, default_timeout=90)
    at.session_state["causes_tab"] = tab  # only the open tab runs
    at.run()
    assert not at.exception, at.exception
    return at


def _texts(at: AppTest) -> str:
    parts = [m.value for m in at.markdown] + [i.value for i in at.info]
    parts += [c.value for c in at.caption] + [e.value for e in at.error]
    parts += [s.value for s in at.success]
    return "\n".join(parts)


def test_page_without_labels():
    at = _page(cv.TABS[1])
    assert at.title[0].value == "Emotion causes"
    assert "No human cause labels yet" in _texts(at)
    shares = next(df.value for df in at.dataframe if "RECCON-DD" in df.value.columns)
    assert shares["cause type"].tolist() == list(causes.CAUSE_TYPES)
    assert shares["RECCON-DD"].tolist() == [43.0, 32.0, 9.0, 11.0, 5.0]  # the paper's Table 2
    assert list(shares.columns) == ["cause type", *causes.RECCON_SHARES]  # no ETC column yet
    assert cv.SHARES_PENDING in _texts(at)
    assert not at.error


def test_annotators_mark_causes_and_agreement_appears():
    from etclib.data.corpus import load_corpus

    corpus = load_corpus()
    at = AppTest.from_file(str(REPO / "site_pages" / "operator.py"), default_timeout=90).run()
    at.text_input(key="op_token").input(ADMIN).run()
    at.number_input(key="op_causes_size").set_value(2)
    at.button(key="op_causes_draw").click().run()
    assert "The cause sample holds 2 items." in _texts(at)
    keys = causes.sample_keys()
    codes = [annotation.issue_code(ADMIN, f"p{i}").code for i in range(3)]
    for code in codes:
        for _ in keys:
            at = _page()
            at.text_input(key="causes_code").input(code).run()
            item = causes.next_item(code)
            assert f"Dialogue {item[0]} · turn {item[1]}" in _texts(at)
            utterance = next(u for u in corpus.by_id[item[0]].utterances if u.key == item)
            assert utterance.transcription in _texts(at)
            stem = f"causes_pick_{item[0]}_{item[1]}_{item[2]}"
            assert at.button(key="causes_submit").disabled  # nothing ticked yet
            at.checkbox(key=f"{stem}_{utterance.position}").check().run()
            at.button(key="causes_submit").click().run()
            assert not at.exception, at.exception
            assert f"Saved item {item[0]}/{item[1]}/{item[2]}: no-context." in _texts(at)
    assert "Nothing left for you" in _texts(at)
    answers = causes.human_answers()
    assert len(answers) == 6 and set(answers["cause_type"]) == {"no-context"}
    # an LLM run, then the agreement tab shows people, the LLM and the proxy
    causes.label_causes(corpus, "openai", "scripted", split="sample", ask=ScriptedCauses())
    st.cache_data.clear()  # the page lists runs with a 30-second cache
    at = _page(cv.TABS[1])
    table = next(df.value for df in at.dataframe if "decisions compared" in df.value.columns)
    assert table["decision"].tolist() == ["cause utterance", "cause type", "partner involved"]
    assert {"LLM vs people's majority, κ", "lexical proxy vs people's majority, κ"} <= set(
        table.columns
    )
    assert "Items with 3 answers" in [m.label for m in at.metric]
    # RECCON's pair measures beside alpha and kappa: everyone ticked the target, as the LLM did
    f1 = next(df.value for df in at.dataframe if "F1, cause" in df.value.columns)
    assert f1["rater"].tolist() == ["LLM", "answer 1", "answer 2", "answer 3"]
    assert f1["F1, cause"].tolist() == ["100.00"] * 4
    assert f1["macro-F1 (mean of the two)"].tolist() == ["100.00"] * 4


def test_an_annotator_marks_several_utterances_or_none_in_the_dialogue():
    """The target and the first utterance ticked for one item, 'not in the dialogue' for the
    other: stored as those positions, and as no cause utterance (latent)."""
    from etclib.data.corpus import load_corpus

    corpus = load_corpus()
    causes.draw_sample(ADMIN, corpus, 2, seed=7)
    code = annotation.issue_code(ADMIN, "browser").code
    expected = {}
    for i in range(2):
        at = _page()
        at.text_input(key="causes_code").input(code).run()
        item = causes.next_item(code)
        stem = f"causes_pick_{item[0]}_{item[1]}_{item[2]}"
        pos = causes.position(item[1], item[2])
        if i == 0:
            for p in sorted({1, pos}):
                at.checkbox(key=f"{stem}_{p}").check()
            expected[item] = tuple(sorted({1, pos}))
        else:
            at.checkbox(key=f"{stem}_latent").check()
            expected[item] = ()
        at.run()
        at.button(key="causes_submit").click().run()
        assert not at.exception, at.exception
        assert f"Saved item {item[0]}/{item[1]}/{item[2]}" in _texts(at)
    answers = causes.human_answers()
    got = {(r.dialogue_id, r.turn, r.role): r.causes for r in answers.itertuples()}
    assert got == expected
