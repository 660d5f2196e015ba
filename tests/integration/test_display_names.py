"""Hostile inputs (issue #12): crafted predictions files, display names, upload size, duplicates.

Every crafted file goes through each way in: the library reader, ``etclib validate``,
``etclib score``, ``python -m leaderboard submit`` and the site's upload check (and a few through
the Submit page itself). A refusal is a line-numbered message, never a traceback; an accepted file
keeps exactly the text that was written. Expected predictions are the literal texts the tests
wrote, never the reader's own output.
"""

from __future__ import annotations

from tests.conftest import REPO
from tests.unit.test_prediction_files import (  # noqa: F401
    AUTOLINK,
    base_records,
    jsonl_lines,
    rendered_text,
    tiny,
)


def test_leaderboard_entry_title_is_not_a_link(tiny, monkeypatch):
    from streamlit.testing.v1 import AppTest

    import leaderboard as lb

    monkeypatch.setenv("ETC_LB_BOOTSTRAP", "50")
    name = "Visit https://phish.example/verify"
    records = base_records(tiny)
    receipt = lb.submit(("\n".join(jsonl_lines(records)) + "\n").encode(), {"name": name})
    lb.process_jobs()
    at = AppTest.from_file(str(REPO / "streamlit_app.py"), default_timeout=60)
    at.query_params["submission"] = receipt.id
    at.run()
    at.switch_page("site_pages/leaderboard.py").run()
    assert not at.exception, [e.value for e in at.exception]
    markdown = [m.value for m in at.markdown if "phish" in m.value]
    assert markdown, "the entry's title is shown"
    for m in markdown:
        assert not AUTOLINK.search(rendered_text(m)), m
