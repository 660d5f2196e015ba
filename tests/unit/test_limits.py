"""Identity for submissions (issue 12, item 2): who the daily limit counts.

- With a login provider (Streamlit's ``st.login``, OpenID Connect): a real Chromium signs in at
  a local OIDC provider on loopback (``oidc-provider-mock``), submits, hits the daily limit,
  and a reload does not reset it; the board shows the verified account beside the team name.
- Without one: the network address, where ``X-Forwarded-For`` counts only from the proxies in
  ``ETC_TRUSTED_PROXIES``; a forged header and a new session change nothing.
- Everyone together: the global daily cap.
"""

from __future__ import annotations

import ipaddress
import json

import pytest

import leaderboard as lb
from etclib.corpus import load_corpus
from etclib.predictions import dumps_jsonl
from etclib.task import items as split_items
from tests.conftest import REPO

LOOPBACK = [ipaddress.ip_network("127.0.0.1/32"), ipaddress.ip_network("::1/128")]


def nets(*specs: str):
    return [ipaddress.ip_network(s, strict=False) for s in specs]


# (reported by the server, X-Forwarded-For values, ETC_TRUSTED_PROXIES) -> the quota's address.
# Uvicorn (Streamlit's server) already replaces a loopback peer by the header's right-most
# address; the site must see through that unless it trusts the loopback proxy.
ADDRESS_CASES = [
    # direct visitors: the header, forged or not, changes nothing
    ("203.0.113.5", [], [], "203.0.113.5"),
    ("203.0.113.5", ["6.6.6.6"], [], "203.0.113.5"),
    ("203.0.113.5", ["6.6.6.6, 7.7.7.7"], [], "203.0.113.5"),
    # a local visitor (reported None) with and without a forged header: one bucket
    (None, [], [], "same-host"),
    ("6.6.6.6", ["6.6.6.6"], [], "same-host"),  # the server believed the header; we do not
    ("7.7.7.7", ["6.6.6.6", "7.7.7.7"], [], "same-host"),
    (None, ["127.0.0.1"], [], "same-host"),
    # ... and a header that is no address, which the server copies in as it is
    ("evil-token-1", ["evil-token-1"], [], "same-host"),
    ("evil-token-2", ["evil-token-2:80"], [], "same-host"),
    ("", [""], [], "same-host"),
    ("[::1", ["[::1"], [], "same-host"),
    ("evil", ["6.6.6.6, evil"], [], "same-host"),
    # a remote visitor's header that is no address changes nothing either
    ("203.0.113.5", ["evil-token-1"], [], "203.0.113.5"),
    # a proxy on the same host that the operator trusts: its header counts, right-most first
    ("198.51.100.9", ["198.51.100.9"], ["127.0.0.1", "::1"], "198.51.100.9"),
    ("198.51.100.9", ["6.6.6.6, 198.51.100.9"], ["127.0.0.1"], "198.51.100.9"),
    # ... which forwards what a local visitor wrote: no address, the proxy's own bucket
    ("evil-token-1", ["evil-token-1"], ["127.0.0.1"], "same-host"),
    ("198.51.100.9", ["evil, 127.0.0.1, 198.51.100.9"], ["127.0.0.1"], "198.51.100.9"),
    # a remote proxy the operator trusts (the server does not rewrite for it)
    ("10.0.0.2", ["6.6.6.6, 198.51.100.9"], ["10.0.0.0/8"], "198.51.100.9"),
    ("10.0.0.2", ["198.51.100.9, 10.0.0.3"], ["10.0.0.0/8"], "198.51.100.9"),
    # ... relaying something that is no address: the key stays at the hop that relayed it
    ("10.0.0.2", ["evil-token-1"], ["10.0.0.0/8"], "10.0.0.2"),
    ("10.0.0.2", ["evil-token-1, 10.0.0.3"], ["10.0.0.0/8"], "10.0.0.3"),
    # ... but not a proxy it does not trust
    ("10.0.0.2", ["198.51.100.9"], ["192.168.0.0/16"], "10.0.0.2"),
    # a visitor who names their own address last lands in the shared bucket, not a new one
    ("203.0.113.5", ["203.0.113.5"], [], "same-host"),
]


@pytest.mark.parametrize(("reported", "forwarded", "trusted", "expected"), ADDRESS_CASES)
def test_network_address(reported, forwarded, trusted, expected):
    from views.identity import network_address

    assert network_address(reported, forwarded, nets(*trusted), LOOPBACK) == expected


def test_trusted_proxies_setting(monkeypatch):
    from etclib.errors import ConfigError
    from leaderboard import settings

    assert settings.trusted_proxies() == []
    monkeypatch.setenv("ETC_TRUSTED_PROXIES", " 127.0.0.1, ::1 ,10.0.0.0/8")
    assert settings.trusted_proxies() == nets("127.0.0.1", "::1", "10.0.0.0/8")
    monkeypatch.setenv("ETC_TRUSTED_PROXIES", "127.0.0.1, proxy.local")
    with pytest.raises(ConfigError, match="'proxy.local' is not an IP address"):
        settings.trusted_proxies()


@pytest.fixture
def tiny(tiny_corpus, monkeypatch):
    monkeypatch.setenv("ETC_DATA_DIR", str(tiny_corpus))
    return split_items(load_corpus(tiny_corpus), "test")


def distinct(items, n: int) -> bytes:
    """The n-th distinct valid file (the first n items say their utterance)."""
    return dumps_jsonl(
        (it.key, it.utterance if i < n else it.reference) for i, it in enumerate(items)
    ).encode("utf-8")


def test_global_cap_holds_across_submitters(tiny, monkeypatch):
    monkeypatch.setenv("ETC_LB_DAILY_LIMIT", "5")
    monkeypatch.setenv("ETC_LB_GLOBAL_DAILY_LIMIT", "3")
    for n in range(3):
        lb.submit(distinct(tiny, n), {"name": f"m{n}"}, submitter=f"key-{n}")
    with pytest.raises(lb.LimitError, match=r"3 of 3 submissions today \(UTC\) from everyone"):
        lb.submit(distinct(tiny, 3), {"name": "m3"}, submitter="a-fresh-key")
    assert lb.open_db().query("SELECT count(*) FROM submissions")[0][0] == 3


def test_account_is_public_and_counts_per_key(tiny, monkeypatch):
    monkeypatch.setenv("ETC_LB_DAILY_LIMIT", "1")
    r = lb.submit(
        distinct(tiny, 0),
        {"name": "Signed", "team": "Lab", "contact": "a@example.org"},
        submitter="account-key-1",
        account="alice",
        issuer="http://localhost:1/",
    )
    with pytest.raises(lb.LimitError, match="Daily limit reached"):
        # another contact and name: the same account's key still counts
        lb.submit(distinct(tiny, 1), {"name": "Other", "contact": "b@x"}, submitter="account-key-1")
    board = lb.ranking()
    assert board.set_index("id").loc[r.id, "account"] == "alice"
    assert lb.detail(r.id)["submission"]["account"] == "alice"
    assert "alice" in lb.export_csv("board") and json.loads(lb.export_json("board"))
    from views.board import board_table

    table = board_table(board, "bleu4" if "bleu4" in board else board.columns[-1])
    assert "verified account" in table.columns and "alice" in set(table["verified account"])


def test_board_table_has_no_account_column_without_accounts(tiny):
    from views.board import board_table

    lb.submit(distinct(tiny, 0), {"name": "Anonymous"}, submitter="address-key")
    table = board_table(lb.ranking(), "bleu4")
    assert "verified account" not in table.columns and "account" not in table.columns


def test_secrets_example_shows_the_login_section():
    """The [auth] keys st.login needs are in the example, commented out."""
    example = (REPO / ".streamlit" / "secrets.toml.example").read_text(encoding="utf-8")
    for key in ("redirect_uri", "cookie_secret", "client_id", "client_secret"):
        assert f"\n# {key} = " in example, key
    assert "\n# [auth]\n" in example and "server_metadata_url" in example
