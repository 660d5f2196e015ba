"""The daily submission limit in a real browser, counted for whom it should be.

- With a login provider (Streamlit's ``st.login``, OpenID Connect): Chromium signs in at a local
  OIDC provider on loopback (``oidc-provider-mock``), submits, hits the daily limit, and a
  reload does not reset it; the board shows the verified account beside the team name.
- Without one, behind a reverse proxy on the same host (docs/deploy.md): two visitors whose
  addresses the proxy forwards get a limit each, and the proxy keeps /_stcore/metrics private.

Each test serves a site of its own (a login provider, or a proxy in front): the two
configurations are exclusive. Identity and limits without a browser: tests/unit/test_limits.py
and tests/integration/test_limits.py.
"""

from __future__ import annotations

import csv
import secrets

import pytest

from etclib.corpus import load_corpus
from etclib.predictions import dumps_jsonl
from etclib.task import items as split_items
from tests.conftest import REAL_CORPUS, needs_corpus


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
