"""Limits on what a visitor does, and whom each counts: the identity a submission's daily limit
counts (a signed-in account, else the network address, where ``X-Forwarded-For`` counts only
from the proxies in ``ETC_TRUSTED_PROXIES``), the global daily cap, the chat's model budget, and
the upload size, one figure everywhere (library, CLI, site, docs).
"""

from __future__ import annotations

import ipaddress
import json
import tomllib

import pytest

import leaderboard as lb
from etclib.core.errors import PredictionsError
from etclib.data.corpus import load_corpus
from etclib.tracks.predictions import MAX_FILE_BYTES, dumps_jsonl, read_predictions
from tests.conftest import REPO
from tests.fixtures.predictions import base_records, jsonl_lines

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


# Streamlit listens on "::": a proxy on the same host that connects to 127.0.0.1 arrives as
# ::ffff:127.0.0.1, which uvicorn does not rewrite (not in its 127.0.0.1,::1), so the site sees
# the mapped peer and the proxy's header. (reported, X-Forwarded-For, ETC_TRUSTED_PROXIES) -> key
MAPPED_CASES = [
    ("::ffff:127.0.0.1", ["198.51.100.9"], "127.0.0.1, ::1", "198.51.100.9"),
    ("::ffff:127.0.0.1", ["198.51.100.10"], "127.0.0.1, ::1", "198.51.100.10"),
    ("::ffff:127.0.0.1", ["6.6.6.6, 198.51.100.9"], "127.0.0.1", "198.51.100.9"),
    ("::ffff:10.0.0.2", ["::ffff:198.51.100.9"], "10.0.0.0/8", "198.51.100.9"),
    # a mapped proxy the operator does not trust: the header counts for nothing
    ("::ffff:127.0.0.1", ["198.51.100.9"], "", "same-host"),
    ("::ffff:127.0.0.1", ["evil-token-1"], "", "same-host"),
    # a direct visitor over IPv4 and over the mapped form share one key
    ("::ffff:203.0.113.5", [], "", "203.0.113.5"),
    ("203.0.113.5", [], "", "203.0.113.5"),
]


@pytest.mark.parametrize(("reported", "forwarded", "trusted", "expected"), MAPPED_CASES)
def test_mapped_proxy_address_is_trusted_like_its_ipv4_form(
    monkeypatch, reported, forwarded, trusted, expected
):
    from leaderboard import settings
    from views.identity import network_address, server_trusted

    monkeypatch.setenv("ETC_TRUSTED_PROXIES", trusted)
    monkeypatch.delenv("FORWARDED_ALLOW_IPS", raising=False)  # uvicorn's default: 127.0.0.1,::1
    got = network_address(reported, forwarded, settings.trusted_proxies(), server_trusted())
    assert got == expected


def test_trusted_proxies_setting(monkeypatch):
    from etclib.core.errors import ConfigError
    from leaderboard import settings

    assert settings.trusted_proxies() == []
    monkeypatch.setenv("ETC_TRUSTED_PROXIES", " 127.0.0.1, ::1 ,10.0.0.0/8")
    assert settings.trusted_proxies() == nets("127.0.0.1", "::1", "10.0.0.0/8")
    monkeypatch.setenv("ETC_TRUSTED_PROXIES", "127.0.0.1, proxy.local")
    with pytest.raises(ConfigError, match="'proxy.local' is not an IP address"):
        settings.trusted_proxies()


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


def padded(keys, size: int) -> bytes:
    """A valid JSONL file of exactly ``size`` bytes (spaces after the last record)."""
    data = ("\n".join(jsonl_lines(base_records(keys))) + "\n").encode()
    return data + b" " * (size - len(data))


def size_message() -> str:
    return (
        f"the file is larger than the limit of {MAX_FILE_BYTES // 10**6} MB "
        f"({MAX_FILE_BYTES:,} bytes); remove extra fields or check that it is the right file."
    )


def test_upload_limit_is_the_same_everywhere(keys, tmp_path, capsys):
    from etclib.cli import main as etclib_main
    from leaderboard.__main__ import main as lb_main
    from views.board import validate_upload

    ok, big = padded(keys, MAX_FILE_BYTES), padded(keys, MAX_FILE_BYTES + 1)
    assert len(ok) == MAX_FILE_BYTES and len(big) == MAX_FILE_BYTES + 1
    message = size_message()
    # library
    assert len(read_predictions(ok, corpus=load_corpus(), name="p.jsonl")) == 20
    with pytest.raises(PredictionsError) as err:
        read_predictions(big, corpus=load_corpus(), name="p.jsonl")
    assert [p.message for p in err.value.problems] == [message]
    # CLI
    (tmp_path / "ok.jsonl").write_bytes(ok)
    (tmp_path / "big.jsonl").write_bytes(big)
    assert etclib_main(["validate", str(tmp_path / "ok.jsonl")]) == 0
    capsys.readouterr()
    assert etclib_main(["validate", str(tmp_path / "big.jsonl")]) == 1
    assert message in capsys.readouterr().err
    assert lb_main(["submit", str(tmp_path / "big.jsonl"), "--name", "Big", "--create"]) == 1
    assert message in capsys.readouterr().err
    # site: the app's own check, the same message
    assert validate_upload(ok, "ok.jsonl").ok
    check = validate_upload(big, "big.jsonl")
    assert [p.message for p in check.problems] == [message]
    with pytest.raises(lb.SubmissionError) as err:
        lb.submit(big, {"name": "Big"}, file_name="big.jsonl")
    assert [p.message for p in err.value.problems] == [message]
    assert lb.submit(ok, {"name": "Exactly the limit"}, file_name="ok.jsonl").id


def test_streamlit_says_the_same_limit():
    """Streamlit's upload box prints ``server.maxUploadSize`` MB ("10MB per file"), counted as
    10^6 bytes by the browser: the limit itself, so that the page says one figure. The server
    (2^20 bytes per MB) lets every file up to the limit through."""
    config = tomllib.loads((REPO / ".streamlit" / "config.toml").read_text(encoding="utf-8"))
    mb = config["server"]["maxUploadSize"]
    assert isinstance(mb, int) and mb * 10**6 == MAX_FILE_BYTES
    assert mb * 2**20 >= MAX_FILE_BYTES


def test_docs_and_page_state_the_limit_as_one_figure():
    figure = f"{MAX_FILE_BYTES // 10**6} MB"
    assert MAX_FILE_BYTES % 10**6 == 0
    for doc in ("README.md", "docs/site.md", "docs/leaderboard.md"):
        text = (REPO / doc).read_text(encoding="utf-8")
        assert figure in text, doc
        assert "MiB" not in text and "11 MB" not in text and "11MB" not in text, doc
    page = (REPO / "site_pages" / "submit.py").read_text(encoding="utf-8")
    assert "MAX_FILE_BYTES // 10**6} MB" in page and "MiB" not in page


def test_the_model_budget_setting_is_checked(monkeypatch):
    from etclib.core.errors import ConfigError
    from views import chat

    assert [b[:2] for b in chat.model_budget()] == [(60, 60.0), (1000, 86400.0)]
    monkeypatch.setenv("ETC_CHAT_MODEL_PER_DAY", "lots")
    with pytest.raises(ConfigError, match="ETC_CHAT_MODEL_PER_DAY"):
        chat.model_budget()
