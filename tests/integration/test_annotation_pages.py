"""The annotation parts of the Judge vs Human and Causes pages on an install without annotators:
what annotation is for, that codes come from the maintainers, what to read instead; the code box
once a code is in use."""

from __future__ import annotations

import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

from tests.conftest import REPO, needs_corpus

ADMIN = "page-admin-token-0123456789abc"
pytestmark = needs_corpus


@pytest.fixture(autouse=True)
def _admin(monkeypatch):
    monkeypatch.setenv("ETC_ADMIN_TOKEN", ADMIN)
    st.cache_data.clear()
    yield
    st.cache_data.clear()


def _run(page: str, tab: tuple[str, str] | None = None) -> AppTest:
    at = AppTest.from_file(str(REPO / "streamlit_app.py"), default_timeout=90).run()
    at.switch_page(page).run()
    if tab:
        at.session_state[tab[0]] = tab[1]
        at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def _shown(at: AppTest) -> str:
    return "\n".join([i.value for i in at.info] + [m.value for m in at.markdown])


def _pages():
    from views.judge_vs_human import TABS

    return [
        ("site_pages/causes.py", None, "causes_code", "where a transcribed state comes from"),
        ("site_pages/judge_vs_human.py", ("jvh_tab", TABS[1]), "jvh_code", "checks its LLM judge"),
    ]


@pytest.mark.parametrize("case", range(2))
def test_without_annotators_the_page_says_why_and_what_instead(case):
    page, tab, box, purpose = _pages()[case]
    at = _run(page, tab)
    text = _shown(at)
    assert "**Annotation is how this" in text and purpose in text
    assert "the benchmark's maintainers give to the people taking part" in text
    assert "nobody can annotate here" in text
    assert box not in [t.key for t in at.text_input]  # no box that no code can open
    if page == "site_pages/causes.py":
        links = [link.proto.page for link in at.get("page_link")]
        assert any(p.endswith("judge_vs_human.py") or p == "judge_vs_human" for p in links), links
    else:
        assert "first tab of this page" in text

    from etclib.studies import annotation

    annotation.issue_code(ADMIN, "someone")
    at = _run(page, tab)
    assert box in [t.key for t in at.text_input]
    assert "nobody can annotate here" not in _shown(at)
