"""Display names where the site shows them: an entry's title on its page is no link,
whatever URL or address its name holds (the Markdown as AppTest sees it; Streamlit's own
renderer in Chromium: tests/browser/test_board.py)."""

from __future__ import annotations

from tests.conftest import REPO
from tests.fixtures.names import AUTOLINK, rendered_text
from tests.fixtures.predictions import base_records, jsonl_lines


def test_an_entrys_title_is_not_a_link(keys, monkeypatch):
    from streamlit.testing.v1 import AppTest

    import leaderboard as lb

    monkeypatch.setenv("ETC_LB_BOOTSTRAP", "50")
    name = "Visit https://phish.example/verify"
    records = base_records(keys)
    receipt = lb.submit(("\n".join(jsonl_lines(records)) + "\n").encode(), {"name": name})
    lb.process_jobs()
    at = AppTest.from_file(str(REPO / "streamlit_app.py"), default_timeout=60)
    at.query_params["submission"] = receipt.id
    at.run()
    at.switch_page("site_pages/entry.py").run()
    assert not at.exception, [e.value for e in at.exception]
    markdown = [m.value for m in [*at.title, *at.markdown] if "phish" in m.value]
    assert markdown, "the entry's title is shown"
    for m in markdown:
        assert not AUTOLINK.search(rendered_text(m)), m
