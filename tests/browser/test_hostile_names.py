"""Hostile inputs (issue #12): crafted predictions files, display names, upload size, duplicates.

Every crafted file goes through each way in: the library reader, ``etclib validate``,
``etclib score``, ``python -m leaderboard submit`` and the site's upload check (and a few through
the Submit page itself). A refusal is a line-numbered message, never a traceback; an accepted file
keeps exactly the text that was written. Expected predictions are the literal texts the tests
wrote, never the reader's own output.
"""

from __future__ import annotations

from tests.fixtures.predictions import base_records, jsonl_lines


def test_entry_title_is_not_a_link_in_a_browser(keys, monkeypatch):
    """The real renderer (remark-gfm in Chromium) on the real page: no link in the title."""
    import leaderboard as lb
    from tests.serve import chromium, running_site

    monkeypatch.setenv("ETC_LB_BOOTSTRAP", "50")
    name = "Visit https://phish.example/verify or www.phish.example, a@phish.example"
    records = base_records(keys)
    receipt = lb.submit(("\n".join(jsonl_lines(records)) + "\n").encode(), {"name": name})
    lb.process_jobs()
    lb.close_all()
    with running_site() as url, chromium() as context:
        page = context.new_page()
        page.goto(f"{url}/leaderboard?submission={receipt.id}")
        title = page.locator('[data-testid="stMarkdownContainer"] strong', has_text="phish")
        title.first.wait_for(timeout=90_000)
        assert title.first.inner_text().replace("\u2060", "") == name
        assert page.locator('a[href*="phish"]').count() == 0
