"""The limits on what one visitor does, in a real browser, counted for whom they should be.

- With a login provider (Streamlit's ``st.login``, OpenID Connect): Chromium signs in at a local
  OIDC provider on loopback (``oidc-provider-mock``), submits, hits the daily limit, and a
  reload does not reset it; the board shows the verified account beside the team name.
- Behind a reverse proxy on the same host that the operator trusts (docs/deploy.md): two
  visitors whose addresses the proxy forwards get a daily limit each, and the proxy keeps
  /_stcore/metrics private.
- One visitor's memory: the Submit page lets an upload go once it is refused or stored (the
  server's uploaded files, as its own metrics count them, drop to nothing while the refusal
  stays on the page), and a visitor's pages beyond ``ETC_PAGES_PER_VISITOR`` say so and stop
  until one of the others closes.
- With no trusted proxy: forged ``X-Forwarded-For`` values, addresses and non-addresses alike,
  sent straight to the site on loopback (whose server, uvicorn, copies the header into the
  client address for a loopback peer) and through a same-host proxy that passes the header on,
  count as one visitor for the admin token's guesses, the chat's per-minute limit and the daily
  quota.

Each configuration is a site of its own (four): they exclude each other. Identity and limits
without a browser: tests/unit/test_limits.py and tests/integration/test_limits.py.
"""

from __future__ import annotations

import csv
import re
import secrets
import sqlite3
import urllib.request

import pytest

from etclib.core import admintoken
from etclib.data.corpus import load_corpus
from etclib.data.task import items as split_items
from etclib.tracks.predictions import dumps_jsonl
from tests.conftest import REAL_CORPUS, needs_corpus, observed


@needs_corpus
def test_login_submit_limit_and_reload(tmp_path, warm_cache):
    """Sign in at the loopback provider, submit, hit the daily limit, reload: still the limit,
    still signed in; the leaderboard shows the account beside the team name."""
    from oidc_provider_mock import User, run_server_in_thread

    from tests.serve import (
        CHROMIUM,
        chromium,
        copy_warm_cache,
        free_port,
        running_site,
        wait_idle,
        wait_rendered,
    )

    if not CHROMIUM.exists():
        pytest.skip(f"Debian's Chromium is not installed at {CHROMIUM}")
    items = split_items(load_corpus(REAL_CORPUS), "test")
    files = []
    for n in range(3):
        path = tmp_path / f"preds{n}.jsonl"
        lines = ((it.key, it.utterance if i < n else it.reference) for i, it in enumerate(items))
        path.write_text(dumps_jsonl(lines), encoding="utf-8")
        files.append(str(path))
    user = User(sub="u-1001", claims={"preferred_username": "alice", "email": "a@example.org"})
    with run_server_in_thread(user_claims=[user]) as oidc:
        issuer = f"http://localhost:{oidc.server_port}"
        port = free_port()
        home = tmp_path / "site-home"
        (home / ".streamlit").mkdir(parents=True)
        # Streamlit reads ~/.streamlit/secrets.toml: the [auth] section st.login needs
        (home / ".streamlit" / "secrets.toml").write_text(
            "[auth]\n"
            f'redirect_uri = "http://127.0.0.1:{port}/oauth2callback"\n'
            f'cookie_secret = "{secrets.token_hex(32)}"\n'
            'client_id = "etc-site"\n'
            'client_secret = "etc-site-secret"\n'
            f'server_metadata_url = "{issuer}/.well-known/openid-configuration"\n',
            encoding="utf-8",
        )
        copy_warm_cache(warm_cache, tmp_path / "cache", tmp_path / "etc.duckdb")
        env = {
            "HOME": str(home),
            "ETC_DATA_DIR": str(REAL_CORPUS),
            "ETC_STORE_DB": str(tmp_path / "etc.duckdb"),
            "ETC_CACHE_DIR": str(tmp_path / "cache"),
            "ETC_LEADERBOARD_DB": str(tmp_path / "leaderboard.sqlite"),
            "ETC_SECRETS_FILE": str(home / ".streamlit" / "secrets.toml"),
            "ETC_LB_DAILY_LIMIT": "1",
            "ETC_LB_BOOTSTRAP": "50",
            "ETC_PROGRESS": "0",
            "HF_HUB_OFFLINE": "1",
        }
        with (
            running_site(env, port=port, log=tmp_path / "server.log") as url,
            chromium() as context,
        ):
            page = context.new_page()
            page.goto(f"{url}/submit")
            wait_rendered(page, timeout=120)
            page.get_by_text("Sign in to submit", exact=False).first.wait_for(timeout=30_000)
            assert page.get_by_role("button", name="Submit for scoring").is_disabled()

            page.get_by_role("button", name="Sign in").click()
            page.wait_for_url(f"{issuer}/**", timeout=30_000)
            page.get_by_role("button", name="u-1001").click()  # the predefined user
            page.wait_for_url(f"{url}/**", timeout=30_000)
            wait_rendered(page, timeout=60)

            def submit(path: str, name: str) -> None:
                page.goto(f"{url}/submit")
                wait_rendered(page, timeout=60)
                page.get_by_text("Signed in as alice", exact=False).first.wait_for(timeout=30_000)
                page.locator('input[type="file"]').set_input_files(path)
                page.get_by_text("valid, 1,010 predictions", exact=False).first.wait_for(
                    timeout=60_000
                )
                wait_idle(page, 60)
                page.get_by_label("Display name *").fill(name)
                page.get_by_label("Team or author").fill("Login test lab")
                page.get_by_role("button", name="Submit for scoring").click()

            submit(files[0], "First model")
            page.get_by_text("Received as submission", exact=False).first.wait_for(timeout=60_000)

            submit(files[1], "Second model")
            page.get_by_text("Daily limit reached", exact=False).first.wait_for(timeout=60_000)

            page.reload()  # a new session: the quota is the account's, not the session's
            wait_rendered(page, timeout=60)
            # ... as are its entries, and what is left of its quota
            page.get_by_text("First model · transcriptions", exact=False).first.wait_for(
                timeout=30_000
            )
            page.get_by_text("You can submit 0 more today", exact=False).first.wait_for(
                timeout=30_000
            )
            submit(files[2], "Third model")
            page.get_by_text("Daily limit reached", exact=False).first.wait_for(timeout=60_000)

            # the board: the verified account beside the team name (its grid is a canvas: the
            # board's CSV download holds the same rows)
            page.goto(f"{url}/leaderboard")
            wait_rendered(page, timeout=60)
            page.get_by_test_id("stDataFrame").first.wait_for(timeout=30_000)
            button = page.get_by_test_id("stDownloadButton").filter(has_text="Board (CSV)")
            with page.expect_download(timeout=60_000) as info:
                button.locator("button").click()
            board = list(csv.DictReader(open(info.value.path(), encoding="utf-8")))
            assert [(r["name"], r["team"], r["account"]) for r in board] == [
                ("First model", "Login test lab", "alice")
            ], board
        log = (tmp_path / "server.log").read_text(encoding="utf-8", errors="replace")

    import sqlite3

    con = sqlite3.connect(tmp_path / "leaderboard.sqlite")
    rows = con.execute(
        "SELECT s.name, s.team, a.account, a.issuer FROM submissions s "
        "JOIN submission_accounts a ON a.submission_id = s.id"
    ).fetchall()
    con.close()
    assert rows == [("First model", "Login test lab", "alice", issuer)], (rows, log[-2000:])


@pytest.fixture(scope="module")
def proxied(tmp_path_factory):
    """(the site's URL, its environment): Streamlit on "::" (its default), a same-host proxy at
    127.0.0.1 trusted, one submission a day."""
    from tests.data.make_tiny_corpus import write_tiny_corpus
    from tests.serve import CHROMIUM, running_site, site_env

    if not CHROMIUM.exists():
        pytest.skip(f"Debian's Chromium is not installed at {CHROMIUM}")
    base = tmp_path_factory.mktemp("proxied-site")
    env = site_env(
        base / "site",
        write_tiny_corpus(base / "tiny"),
        ETC_TRUSTED_PROXIES="127.0.0.1, ::1",
        ETC_LB_DAILY_LIMIT="1",
        ETC_LB_WORKERS="0",
    )
    with running_site(env, log=base / "server.log", address="::") as url:
        yield url, env


def test_two_visitors_behind_a_same_host_proxy_get_separate_quotas(proxied, tmp_path):
    """docs/deploy.md's set-up: a proxy on the same host that connects to 127.0.0.1 (so the site
    sees ::ffff:127.0.0.1) listed in ETC_TRUSTED_PROXIES as 127.0.0.1; the proxy forwards two
    visitors' addresses. Each gets its own daily limit of one submission, and the proxy keeps
    /_stcore/metrics private."""
    import urllib.error
    from urllib.parse import urlsplit

    from tests.proxy import ReverseProxy
    from tests.serve import chromium, submit_file

    site, env = proxied
    items = split_items(load_corpus(env["ETC_DATA_DIR"]), "test")
    files = []
    for n in range(3):
        path = tmp_path / f"p{n}.jsonl"
        path.write_text(dumps_jsonl((it.key, f"{it.reference}{n}") for it in items), "utf-8")
        files.append(path)
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
            page.get_by_text("Received as submission", exact=False).first.wait_for(timeout=60_000)
            submit_file(page, a_url, files[1], "Visitor A again")
            page.get_by_text("Daily limit reached", exact=False).first.wait_for(timeout=60_000)
            page.close()
        with chromium() as browser:  # another visitor, through the same proxy
            page = browser.new_page()
            submit_file(page, b_url, files[2], "Visitor B")
            page.get_by_text("Received as submission", exact=False).first.wait_for(timeout=60_000)
            assert page.get_by_text("Daily limit reached", exact=False).count() == 0
            page.close()
    keys = board_rows(
        env,
        "SELECT submitter_key, count(*) FROM submissions WHERE kind = 'submission' "
        "GROUP BY submitter_key",
    )
    assert sorted(n for _, n in keys) == [1, 1]  # two visitors, one submission each


def board_rows(env, sql: str) -> list[tuple]:
    con = sqlite3.connect(env["ETC_LEADERBOARD_DB"])
    try:
        return con.execute(sql).fetchall()
    finally:
        con.close()


def uploads_held(url: str) -> int:
    """Bytes of uploaded files the server holds (its /_stcore/metrics)."""
    with urllib.request.urlopen(f"{url}/_stcore/metrics", timeout=10) as resp:
        text = resp.read().decode()
    held = re.findall(r'cache_type="UploadedFileManager"[^}]*\} (\d+)', text)
    return sum(int(n) for n in held)


PAGES = 2


@pytest.fixture(scope="module")
def bounded(tmp_path_factory):
    """(the site's URL, its environment): ``PAGES`` open pages a visitor; no other test's
    uploads, which the server's metrics would count with this one's."""
    from tests.data.make_tiny_corpus import write_tiny_corpus
    from tests.serve import CHROMIUM, running_site, site_env

    if not CHROMIUM.exists():
        pytest.skip(f"Debian's Chromium is not installed at {CHROMIUM}")
    base = tmp_path_factory.mktemp("bounded-site")
    env = site_env(
        base, write_tiny_corpus(base / "tiny"), ETC_PAGES_PER_VISITOR=str(PAGES), ETC_LB_WORKERS="0"
    )
    with running_site(env, log=base / "server.log") as url:
        yield url, env


@pytest.fixture
def own_browser():
    """A Chromium of the test's own: no other test's page counts towards a visitor's bound."""
    from tests.serve import chromium

    with chromium() as context:
        yield context


def test_an_upload_is_let_go_once_refused_or_stored(bounded, own_browser, tmp_path):
    from tests.serve import rerun_after, wait_idle, wait_rendered

    url, env = bounded
    refused = tmp_path / "refused.jsonl"
    refused.write_bytes(b"{}\n" * 50_000)
    page = own_browser.new_page()
    page.goto(f"{url}/submit")
    wait_rendered(page, timeout=120)
    page.locator('input[type="file"]').set_input_files(str(refused))
    page.get_by_text("refused.jsonl was refused", exact=False).first.wait_for(timeout=60_000)
    wait_idle(page, 60)
    observed(lambda: uploads_held(url) == 0)
    # the refusal stays on the page through a rerun that no longer has the file
    assert rerun_after(
        page, lambda: page.get_by_role("button", name="Template (CSV)", exact=True).click()
    )
    assert page.get_by_text("refused.jsonl was refused", exact=False).count() == 1

    valid = tmp_path / "valid.jsonl"
    tiny = split_items(load_corpus(env["ETC_DATA_DIR"]), "test")
    valid.write_text(dumps_jsonl((it.key, it.reference) for it in tiny), encoding="utf-8")
    page.locator('input[type="file"]').set_input_files(str(valid))
    page.get_by_text("valid.jsonl: valid, ", exact=False).first.wait_for(timeout=60_000)
    wait_idle(page, 60)
    assert page.get_by_text("was refused", exact=False).count() == 0  # a new file: no refusal
    observed(lambda: uploads_held(url) == valid.stat().st_size)  # held until it is stored
    page.get_by_label("Display name *").fill("Kept until stored")
    page.get_by_role("button", name="Submit for scoring").click()
    page.get_by_text("Received as submission", exact=False).first.wait_for(timeout=60_000)
    observed(lambda: uploads_held(url) == 0)
    page.close()


def test_a_visitor_has_at_most_the_bound_of_open_pages(bounded, own_browser):
    from tests.conftest import observed
    from tests.serve import wait_idle, wait_rendered

    url, _ = bounded
    pages = []
    for _ in range(PAGES):
        page = own_browser.new_page()
        page.goto(url)
        wait_rendered(page, timeout=120)
        assert page.get_by_text("pages of this site open", exact=False).count() == 0
        pages.append(page)
    extra = own_browser.new_page()
    extra.goto(url)
    extra.get_by_text(f"You have {PAGES} pages of this site open", exact=False).wait_for(
        timeout=60_000
    )
    pages.pop().close()  # one of the others closes: this one may run after a reload

    def admitted() -> bool:  # once the server has seen the closed page's session end
        extra.reload()
        wait_idle(extra, timeout=120)
        return extra.get_by_text("pages of this site open", exact=False).count() == 0

    observed(admitted, timeout=120, every=0.5)
    wait_rendered(extra, timeout=120)
    for page in [*pages, extra]:
        page.close()


ADMIN_TOKEN = "s3cret-admin-token-0123456789"


@pytest.fixture(scope="module")
def forged_site(tmp_path_factory):
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


def visit(browser, base: str, path: str, forged: str):
    """A new session at ``base``/``path`` whose every request says ``X-Forwarded-For: forged``."""
    from tests.serve import wait_rendered

    page = browser.new_page()
    page.set_extra_http_headers({"X-Forwarded-For": forged})
    page.goto(f"{base}/{path}")
    wait_rendered(page, timeout=120)
    return page


def test_forged_headers_share_one_admin_token_limit(forged_site, browser):
    url, tunnel, env = forged_site
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
        page = visit(browser, base, "operator", forged)
        box = page.get_by_label("Admin token")
        box.fill(f"guess-{forged}")
        box.press("Enter")
        error = page.get_by_text(re.compile("Wrong admin token|Too many wrong admin tokens"))
        shown.append(error.first.inner_text(timeout=60_000))
        page.close()
    limit = admintoken.MAX_FAILURES
    assert all("Wrong admin token" in s for s in shown[:limit]), shown
    assert all("Too many wrong admin tokens" in s for s in shown[limit:]), shown
    rows = board_rows(env, "SELECT key_hash FROM limit_events WHERE bucket = 'admin-failure'")
    assert len(rows) == limit and len(set(rows)) == 1  # one visitor


def test_forged_headers_share_one_chat_limit(forged_site, browser):
    url, tunnel, env = forged_site
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


def test_forged_headers_share_one_daily_quota(forged_site, browser, tmp_path):
    from tests.serve import submit_file

    url, tunnel, env = forged_site
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
