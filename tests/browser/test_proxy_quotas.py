"""The third hostile round's findings (issue #23, item 4), each through the path a visitor or an
operator uses: an upload then the CSV export read back with the csv module, a forwarded address
through a proxy, limits that survive a new session, the refusal cache's bound, DuckDB's
extension loading, a damaged board, and the low findings (stray fields, encodings, file names,
JSONL line separators, a full disk, the metrics endpoint)."""

from __future__ import annotations

import pytest

from etclib.corpus import load_corpus
from etclib.predictions import dumps_jsonl
from etclib.task import items as split_items


def test_two_visitors_behind_a_same_host_proxy_get_separate_quotas(tiny_corpus, tmp_path):
    """docs/deploy.md's set-up: Streamlit on "::" (its default), a proxy on the same host that
    connects to 127.0.0.1 (so the site sees ::ffff:127.0.0.1) listed in ETC_TRUSTED_PROXIES as
    127.0.0.1; the proxy forwards two visitors' addresses. Each gets its own daily limit of one
    submission, and the proxy keeps /_stcore/metrics private."""
    import urllib.error
    import urllib.request
    from urllib.parse import urlsplit

    from tests.proxy import ReverseProxy
    from tests.serve import CHROMIUM, chromium, running_site, site_env, submit_file

    if not CHROMIUM.exists():
        pytest.skip(f"Debian's Chromium is not installed at {CHROMIUM}")
    items = split_items(load_corpus(tiny_corpus), "test")
    files = []
    for n in range(3):
        path = tmp_path / f"p{n}.jsonl"
        path.write_text(dumps_jsonl((it.key, f"{it.reference}{n}") for it in items), "utf-8")
        files.append(path)
    env = site_env(
        tmp_path / "site",
        tiny_corpus,
        ETC_TRUSTED_PROXIES="127.0.0.1, ::1",
        ETC_LB_DAILY_LIMIT="1",
        ETC_LB_WORKERS="0",
    )
    with running_site(env, log=tmp_path / "server.log", address="::") as site:
        port = urlsplit(site).port
        with (
            ReverseProxy("127.0.0.1", port, client="198.51.100.1") as a_url,
            ReverseProxy("127.0.0.1", port, client="198.51.100.2") as b_url,
        ):
            with urllib.request.urlopen(f"{a_url}/_stcore/health", timeout=10) as resp:
                assert resp.status == 200
            with pytest.raises(urllib.error.HTTPError) as info:
                urllib.request.urlopen(f"{a_url}/_stcore/metrics", timeout=10)
            assert info.value.code == 404
            with chromium() as browser:
                page = browser.new_page()
                submit_file(page, a_url, files[0], "Visitor A")
                page.get_by_text("Received as submission", exact=False).first.wait_for(
                    timeout=60_000
                )
                submit_file(page, a_url, files[1], "Visitor A again")
                page.get_by_text("Daily limit reached", exact=False).first.wait_for(timeout=60_000)
                page.close()
            with chromium() as browser:  # another visitor, through the same proxy
                page = browser.new_page()
                submit_file(page, b_url, files[2], "Visitor B")
                page.get_by_text("Received as submission", exact=False).first.wait_for(
                    timeout=60_000
                )
                assert page.get_by_text("Daily limit reached", exact=False).count() == 0
                page.close()
    import sqlite3

    con = sqlite3.connect(env["ETC_LEADERBOARD_DB"])
    try:
        keys = con.execute(
            "SELECT submitter_key, count(*) FROM submissions WHERE kind = 'submission' "
            "GROUP BY submitter_key"
        ).fetchall()
    finally:
        con.close()
    assert sorted(n for _, n in keys) == [1, 1]  # two visitors, one submission each
