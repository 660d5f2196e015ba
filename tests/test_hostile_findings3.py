"""The third hostile round's findings (issue #23, item 4), each through the path a visitor or an
operator uses: an upload then the CSV export read back with the csv module, a forwarded address
through a proxy, limits that survive a new session, the refusal cache's bound, DuckDB's
extension loading, a damaged board, and the low findings (stray fields, encodings, file names,
JSONL line separators, a full disk, the metrics endpoint)."""

from __future__ import annotations

import csv
import io
import re

import pytest

import leaderboard as lb
from etclib.corpus import load_corpus
from etclib.predictions import dumps_jsonl
from etclib.task import items as split_items

META = {"name": "Hostile", "team": "T", "contact": "h@example.org", "description": "d"}
FORMULA_START = ("=", "+", "-", "@", "\t")


@pytest.fixture
def tiny(tiny_corpus, monkeypatch):
    """The tiny corpus (20 test items) as ETC_DATA_DIR, on the default (DuckDB) board."""
    monkeypatch.setenv("ETC_DATA_DIR", str(tiny_corpus))
    return split_items(load_corpus(tiny_corpus), "test")


# --- 1. CSV export ---------------------------------------------------------------------------

# Texts whose line breaks once split a CSV row, each hiding a formula on a later line.
HOSTILE_TEXTS = [
    "ok\r=2+5",
    "x\n=cmd|' /C calc'!A0",
    "a\r\n@SUM(1)",
    "\r+1",
    "line\r\r-2+3",
    "怒り\n\t=1",
    "",
    "plain",
]


def cell_lines(cell: str) -> list[str]:
    return re.split(r"\r\n|\r|\n", cell)


def test_csv_export_keeps_one_row_per_item_and_guards_every_line(tiny):
    texts = {it.key: HOSTILE_TEXTS[n % len(HOSTILE_TEXTS)] for n, it in enumerate(tiny)}
    data = dumps_jsonl((it.key, texts[it.key]) for it in tiny).encode("utf-8")
    receipt = lb.submit(data, META, file_name="hostile.jsonl")
    assert lb.process_jobs() == 1
    assert lb.status(receipt.id)["status"] == "scored"

    # The site's "This entry's items (CSV)" button serves export_csv("items", submission_id=...);
    # the all-items export is the CLI's and the Hub's.
    for kwargs in ({"submission_id": receipt.id}, {}):
        text = lb.export_csv("items", **kwargs)
        rows = list(csv.reader(io.StringIO(text, newline="")))
        header, body = rows[0], rows[1:]
        assert len(body) == len(tiny), kwargs  # one row per item, whatever the text holds
        assert all(len(row) == len(header) for row in body)
        for row in rows:
            for cell in row:
                for line in cell_lines(cell):
                    assert not line.startswith(FORMULA_START), (kwargs, cell)
        got = {row[header.index("prediction")] for row in body}
        assert "ok\r'=2+5" in got and "x\n'=cmd|' /C calc'!A0" in got and "'\r'+1" in got
        # Take the guard off again and the text is what the visitor uploaded.
        unguarded = {re.sub(r"(^|\r\n|\r|\n)'", r"\1", cell) for cell in got}
        assert unguarded == set(HOSTILE_TEXTS)


# --- 2. IPv4-mapped addresses ----------------------------------------------------------------

# Streamlit listens on "::": a proxy on the same host that connects to 127.0.0.1 arrives as
# ::ffff:127.0.0.1, which uvicorn does not rewrite (not in its 127.0.0.1,::1), so the site sees
# the mapped peer and the proxy's header. (reported, X-Forwarded-For, ETC_TRUSTED_PROXIES) -> key
MAPPED_CASES = [
    ("::ffff:127.0.0.1", ["198.51.100.9"], "127.0.0.1, ::1", "198.51.100.9"),
    ("::ffff:127.0.0.1", ["198.51.100.10"], "127.0.0.1, ::1", "198.51.100.10"),
    ("::ffff:127.0.0.1", ["6.6.6.6, 198.51.100.9"], "127.0.0.1", "198.51.100.9"),
    ("::ffff:10.0.0.2", ["::ffff:198.51.100.9"], "10.0.0.0/8", "198.51.100.9"),
    # a mapped proxy the operator does not trust: the header counts for nothing
    ("::ffff:127.0.0.1", ["198.51.100.9"], "", "127.0.0.1"),
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
