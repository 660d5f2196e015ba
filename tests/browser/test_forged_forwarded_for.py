"""Forged ``X-Forwarded-For`` headers against the per-visitor limits, in Chromium against a
served site with no trusted proxy (``ETC_TRUSTED_PROXIES`` unset): each visit sends its own
made-up value, addresses and non-addresses alike, straight to the site on loopback (whose
server, uvicorn, copies the header into the client address for a loopback peer) and through a
reverse proxy on the same host that passes the header on. The admin token's guesses, the
chat's per-minute limit and the daily upload quota all count them as one visitor.
"""

from __future__ import annotations

import re
import sqlite3

import pytest

from etclib import admintoken
from etclib.corpus import load_corpus
from etclib.predictions import dumps_jsonl
from etclib.task import items as split_items

ADMIN_TOKEN = "s3cret-admin-token-0123456789"


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    """(the site's URL on loopback, the same-host proxy's URL, the site's environment)."""
    from urllib.parse import urlsplit

    from tests.data.make_tiny_corpus import write_tiny_corpus
    from tests.proxy import ReverseProxy
    from tests.serve import CHROMIUM, running_site, site_env

    if not CHROMIUM.exists():
        pytest.skip(f"Debian's Chromium is not installed at {CHROMIUM}")
    base = tmp_path_factory.mktemp("forged-site")
    env = site_env(
        base,
        write_tiny_corpus(base / "tiny"),
        ETC_ADMIN_TOKEN=ADMIN_TOKEN,
        ETC_CHAT_PER_MINUTE="1",
        ETC_LB_DAILY_LIMIT="1",
        ETC_LB_WORKERS="0",
    )
    with running_site(env, log=base / "server.log") as url:
        with ReverseProxy("127.0.0.1", urlsplit(url).port, client=None) as tunnel:
            yield url, tunnel, env


@pytest.fixture(scope="module")
def browser(site):
    from tests.serve import chromium

    with chromium() as context:
        yield context


def visit(browser, base: str, path: str, forged: str):
    """A new session at ``base``/``path`` whose every request says ``X-Forwarded-For: forged``."""
    from tests.serve import wait_rendered

    page = browser.new_page()
    page.set_extra_http_headers({"X-Forwarded-For": forged})
    page.goto(f"{base}/{path}")
    wait_rendered(page, timeout=120)
    return page


def board_rows(env, sql: str) -> list[tuple]:
    con = sqlite3.connect(env["ETC_LEADERBOARD_DB"])
    try:
        return con.execute(sql).fetchall()
    finally:
        con.close()


def test_forged_headers_share_one_admin_token_limit(site, browser):
    url, tunnel, env = site
    guesses = [
        (url, "evil-token-1"),
        (tunnel, "evil-token-2"),
        (url, "6.6.6.6"),
        (tunnel, "198.51.100.7"),
        (url, "evil-token-3, 127.0.0.1"),
        # the limit is reached: fresh values, direct and through the proxy, change nothing
        (url, "evil-token-4"),
        (tunnel, "evil-token-5"),
        (tunnel, "203.0.113.9"),
    ]
    shown = []
    for base, forged in guesses:
        page = visit(browser, base, "leaderboard", forged)
        page.get_by_text("Admin: re-run failed jobs").click()
        page.get_by_label("Admin token").fill(f"guess-{forged}")
        page.get_by_role("button", name="Re-run failed jobs").click()
        error = page.get_by_text(re.compile("Wrong admin token|Too many wrong admin tokens"))
        shown.append(error.first.inner_text(timeout=60_000))
        page.close()
    limit = admintoken.MAX_FAILURES
    assert all("Wrong admin token" in s for s in shown[:limit]), shown
    assert all("Too many wrong admin tokens" in s for s in shown[limit:]), shown
    rows = board_rows(env, "SELECT key_hash FROM limit_events WHERE bucket = 'admin-failure'")
    assert len(rows) == limit and len(set(rows)) == 1  # one visitor


def test_forged_headers_share_one_chat_limit(site, browser):
    url, tunnel, env = site
    shown = []
    for base, forged in [(url, "evil-chat-1"), (url, "evil-chat-2"), (tunnel, "198.51.100.8")]:
        page = visit(browser, base, "chat", forged)
        box = page.get_by_test_id("stChatInputTextArea")
        box.fill("昨日、友達に裏切られて本当に悲しかったです。")
        box.press("Enter")
        outcome = page.get_by_text(
            re.compile("Predicted emotion transcription|predictions in the last minute")
        )
        shown.append(outcome.first.inner_text(timeout=120_000))
        page.close()
    assert "Predicted emotion transcription" in shown[0], shown
    assert all("1 predictions in the last minute" in s for s in shown[1:]), shown
    rows = board_rows(env, "SELECT key_hash FROM limit_events WHERE bucket = 'chat'")
    assert len(rows) == 1, rows  # the only prediction made


def test_forged_headers_share_one_daily_quota(site, browser, tmp_path):
    from tests.serve import submit_file

    url, tunnel, env = site
    items = split_items(load_corpus(env["ETC_DATA_DIR"]), "test")
    visits = [(url, "quota-token-A"), (url, "quota-token-B"), (tunnel, "quota-token-C")]
    visits.append((tunnel, "203.0.113.10"))
    for n, (base, forged) in enumerate(visits):
        path = tmp_path / f"p{n}.jsonl"
        path.write_text(dumps_jsonl((it.key, f"{it.reference}{n}") for it in items), "utf-8")
        page = browser.new_page()
        page.set_extra_http_headers({"X-Forwarded-For": forged})
        submit_file(page, base, path, f"Visitor {forged}")
        wanted = "Received as submission" if n == 0 else "Daily limit reached"
        page.get_by_text(wanted, exact=False).first.wait_for(timeout=60_000)
        page.close()
    keys = board_rows(env, "SELECT submitter_key FROM submissions WHERE kind = 'submission'")
    assert len(keys) == 1, keys
