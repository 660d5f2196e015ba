"""The operator page: moderation, annotator codes and samples behind the admin token, declared
only where a token is configured; no visitor page holds an admin control."""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

import leaderboard as lb
from etclib.studies import annotation, causes
from tests.conftest import needs_corpus
from tests.site_apptest import (  # noqa: F401 - fixtures, found by name
    PAGES,
    _site,
    app,
    assert_clean,
    corpus_fixture,
    predictions_file,
    shared_dirs,
    texts,
)

ADMIN = "operator-page-token-0123456789"
OPERATOR = "site_pages/operator.py"
pytestmark = needs_corpus


def _operator(token: str | None = ADMIN) -> AppTest:
    at = app(OPERATOR)
    if token:
        at.text_input(key="op_token").set_value(token).run()
    assert_clean(at)
    return at


def test_without_a_token_the_site_has_no_operator_page():
    at = app()
    with pytest.raises(Exception, match="operator"):
        at.switch_page(OPERATOR).run()


@pytest.mark.parametrize("page", PAGES)
def test_no_visitor_page_asks_for_the_admin_token(page, monkeypatch):
    monkeypatch.setenv("ETC_ADMIN_TOKEN", ADMIN)
    at = app(page)
    assert_clean(at)
    assert not [t for t in at.text_input if "token" in t.label.lower()]
    assert "Admin" not in texts(at) + "".join(e.label for e in at.expander)


def test_the_operator_page_opens_with_the_token_only(monkeypatch):
    monkeypatch.setenv("ETC_ADMIN_TOKEN", ADMIN)
    at = _operator(token=None)
    assert not at.button, "controls before the token"
    at = _operator("a-wrong-token-of-thirty-characters")
    assert "Wrong admin token" in at.error[0].value and not at.button


def test_the_operator_moderates_issues_codes_and_draws_a_sample(monkeypatch, corpus):
    monkeypatch.setenv("ETC_ADMIN_TOKEN", ADMIN)
    sid = lb.submit(
        predictions_file(corpus), {"name": "Mine", "contact": "me@example.org"}, file_name="p.jsonl"
    ).id
    at = _operator()
    listed = next(d.value for d in at.dataframe if "contact" in d.value.columns)
    assert listed.loc[listed["id"] == sid, "contact"].tolist() == ["me@example.org"]
    at.selectbox(key="op_entry").select(sid).run()
    at.text_input(key="op_note").set_value("spam")
    at.button(key="op_hide").click().run()
    assert lb.status(sid)["visibility"] == "hidden"
    at.text_input(key="op_annotator").set_value("Rater one")
    at.button(key="op_issue").click().run()
    code = at.code[0].value
    assert annotation.annotator_for_code(code) is not None
    at.number_input(key="op_causes_size").set_value(3)
    at.button(key="op_causes_draw").click().run()
    assert "The cause sample holds 3 items." in texts(at)
    assert len(causes.sample_keys()) == 3
