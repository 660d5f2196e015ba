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


# --- 3. every per-visitor limit counts like the upload quota ---------------------------------

ADMIN_TOKEN = "s3cret-admin-token-0123456789"


def new_session(page: str):
    """A new browser session (a reload) on ``page``: a fresh AppTest of the whole site."""
    from streamlit.testing.v1 import AppTest

    from tests.conftest import REPO

    at = AppTest.from_file(str(REPO / "streamlit_app.py"), default_timeout=90).run()
    at.switch_page(page).run()
    assert not at.exception, [e.value for e in at.exception]
    return at


@pytest.mark.slow  # an AppTest page run or many requests: seconds, not the unit tier's
def test_admin_guesses_from_new_sessions_are_refused_after_the_limit(tiny, monkeypatch, caplog):
    from etclib import admintoken

    monkeypatch.setenv("ETC_ADMIN_TOKEN", ADMIN_TOKEN)
    errors = []
    for n in range(admintoken.MAX_FAILURES + 2):
        at = new_session("site_pages/leaderboard.py")  # each guess from a reloaded page
        at.text_input(key="lb_admin_token").set_value(f"guess-{n:030d}")
        at.button(key="lb_admin_rerun").click().run()
        errors.append(at.error[-1].value if at.error else "")
    limit = admintoken.MAX_FAILURES
    assert all("Wrong admin token" in e for e in errors[:limit]), errors
    assert all("Too many wrong admin tokens" in e for e in errors[limit:]), errors
    # the count is in the board's database (where the upload quota is counted), key hashed
    rows = lb.open_db().query("SELECT bucket, key_hash FROM limit_events")
    assert len(rows) == limit and {r[0] for r in rows} == {"admin-failure"}
    assert all(len(r[1]) == 64 for r in rows)
    # even the right token waits, in yet another session
    at = new_session("site_pages/leaderboard.py")
    at.text_input(key="lb_admin_token").set_value(ADMIN_TOKEN)
    at.button(key="lb_admin_rerun").click().run()
    assert "Too many wrong admin tokens" in at.error[-1].value


@pytest.fixture
def chat_server(tiny_corpus, monkeypatch):
    """A loopback OpenAI-compatible server as the chat's paid model (``openai``)."""
    import streamlit as st

    from tests.fakes import FakeLLMServer

    st.cache_resource.clear()  # the chat keeps its backend (and so the server's URL) per process
    monkeypatch.setenv("ETC_DATA_DIR", str(tiny_corpus))
    with FakeLLMServer(lambda req: "嬉しかった。") as server:
        monkeypatch.setenv("OPENAI_API_KEY", "test")
        monkeypatch.setenv("OPENAI_BASE_URL", server.openai_base_url)
        yield server


def chat_once(text: str):
    at = new_session("site_pages/chat.py")
    at.selectbox(key="chat_model").set_value("openai").run()
    at.chat_input(key="chat_input").set_value(text).run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def test_chat_messages_from_new_sessions_are_refused_after_the_limit(chat_server, monkeypatch):
    from views import chat

    monkeypatch.setattr(chat, "RATE_PER_MINUTE", 2)
    shown = [" ".join(w.value for w in chat_once(f"発話{n}").warning) for n in range(4)]
    assert chat_server.count("openai-stream") == 2  # the model was called twice, not four times
    assert not shown[0] and not shown[1]
    assert all("2 predictions in the last minute" in s for s in shown[2:]), shown


def test_a_paid_model_has_one_budget_for_every_visitor(chat_server, monkeypatch):
    import views.identity

    monkeypatch.setenv("ETC_CHAT_MODEL_PER_MINUTE", "3")
    visitors = iter(f"visitor-{n}" for n in range(100))
    monkeypatch.setattr(views.identity, "limit_key", lambda: next(visitors))
    shown = [" ".join(w.value for w in chat_once(f"発話{n}").warning) for n in range(5)]
    assert chat_server.count("openai-stream") == 3, (shown, chat_server.counts())
    assert not any(shown[:3])
    assert all("3 predictions per minute for all visitors together" in s for s in shown[3:])


def test_limits_count_per_key_in_the_board_on_both_engines(board_engine):
    from leaderboard import limits

    assert [limits.take("chat", "visitor-a", 2, 60) for _ in range(2)] == [0.0, 0.0]
    wait = limits.take("chat", "visitor-a", 2, 60)
    assert 1.0 <= wait <= 60.0  # refused, and nothing counted for it
    assert limits.take("chat", "visitor-b", 2, 60) == 0.0  # another visitor
    assert limits.take("admin-failure", "visitor-a", 2, 60) == 0.0  # another bucket
    assert len(limits.recent("chat", "visitor-a", 60)) == 2
    limits.clear("chat", "visitor-a")
    assert limits.recent("chat", "visitor-a", 60) == []
    rows = lb.open_db().query("SELECT key_hash FROM limit_events")
    assert rows and all("visitor" not in r[0] for r in rows)  # keys are stored hashed


def test_the_model_budget_setting_is_checked(monkeypatch):
    from etclib.errors import ConfigError
    from views import chat

    assert [b[:2] for b in chat.model_budget()] == [(60, 60.0), (1000, 86400.0)]
    monkeypatch.setenv("ETC_CHAT_MODEL_PER_DAY", "lots")
    with pytest.raises(ConfigError, match="ETC_CHAT_MODEL_PER_DAY"):
        chat.model_budget()


# --- 4. refusals are bounded ---------------------------------------------------------------


def unknown_items(n: int, start: int = 0) -> bytes:
    """A JSONL file of ``n`` well-formed records for items that do not exist: every line is a
    problem of the coverage check (the parser caps its own problems, this check did not)."""
    rows = (
        f'{{"dialogue_id": {900000 + start + i}, "turn": 1, "role": "speaker", "prediction": ""}}\n'
        for i in range(n)
    )
    return "".join(rows).encode("utf-8")


def test_the_coverage_check_lists_at_most_the_cap_and_counts_the_rest(tiny_corpus):
    from etclib.corpus import load_corpus
    from etclib.errors import PredictionsError
    from etclib.predictions import MAX_PROBLEMS, check_coverage

    corpus = load_corpus(tiny_corpus)
    rows = [(n + 1, (900000 + n, 1, "speaker"), "") for n in range(160_000)]
    with pytest.raises(PredictionsError) as info:
        check_coverage(rows, "test", corpus, "crafted.jsonl")
    exc = info.value
    assert len(exc.problems) <= MAX_PROBLEMS
    assert exc.total == 160_001  # 160,000 unknown items and the missing test items
    assert exc.problems[0].line == 1 and "unknown item" in exc.problems[0].message
    assert any("have no prediction" in p.message for p in exc.problems)  # the whole-file one
    listed = len(exc.problems) - 1
    assert exc.problems[-1].message.startswith(f"... and {160_001 - listed:,} more problems")
    assert "refused, 160001 problems" in str(exc)


@pytest.mark.slow  # an AppTest page run or many requests: seconds, not the unit tier's
def test_many_crafted_refused_uploads_leave_the_cache_under_its_bound(tiny, monkeypatch):
    from etclib.predictions import MAX_PROBLEMS
    from views import upload_check

    upload_check.clear()
    monkeypatch.setattr(upload_check, "MAX_BYTES", 400_000)
    at = new_session("site_pages/submit.py")
    sizes = []
    for n in range(8):
        at.file_uploader(key="submit_file").upload(f"crafted{n}.jsonl", unknown_items(5000, n))
        at.run()
        assert not at.exception, [e.value for e in at.exception]
        assert any("refused\\: 5,001 problem" in e.value for e in at.error), at.error
        assert upload_check.held_bytes() <= upload_check.MAX_BYTES
        sizes.append(upload_check.held_bytes())
    entry = upload_check.size_of(upload_check.checked(unknown_items(5000, 7), "crafted7.jsonl"))
    assert entry > 100_000  # a full refusal is large...
    assert 1 <= upload_check.entries() <= upload_check.MAX_BYTES // entry < 8  # ...a few stay
    check = upload_check.checked(unknown_items(5000, 0), "crafted0.jsonl")
    assert len(check.problems) <= MAX_PROBLEMS and check.problem_count == 5001


def test_cached_checks_expire(tiny, monkeypatch):
    from views import upload_check

    upload_check.clear()
    clock = [1000.0]
    monkeypatch.setattr(upload_check.time, "monotonic", lambda: clock[0])
    upload_check.checked(unknown_items(10), "a.jsonl")
    assert upload_check.entries() == 1
    clock[0] += upload_check.TTL_S + 1
    upload_check.checked(unknown_items(10, 50), "b.jsonl")  # any check drops the expired ones
    assert upload_check.entries() == 1
    upload_check.clear()


# --- 5. DuckDB never installs or loads an extension ----------------------------------------

SQLITE_HEADER = b"SQLite format 3\x00" + b"\x00" * 4080


def no_extension_dirs(home) -> bool:
    return not any(p.name == "extensions" for p in home.rglob("*"))


def test_a_foreign_file_as_the_board_is_named_and_nothing_is_installed(tmp_path, monkeypatch):
    """The board is SQLite; a SQLite file that is no database, or a Parquet file, is named as
    such, and nothing (no DuckDB extension) is installed on the way."""
    from leaderboard.db import open_db

    home = tmp_path / "home"  # HOME (tests/conftest.py): where DuckDB keeps its extensions
    parquet = tmp_path / "board.parquet"
    parquet.write_bytes(b"PAR1" + b"\x00" * 100)
    with pytest.raises(lb.DatabaseCorruptError) as info:
        open_db(parquet, create=False)
    assert "the file is a Parquet file" in str(info.value)
    assert parquet.read_bytes() == b"PAR1" + b"\x00" * 100
    board = tmp_path / "leaderboard.sqlite"
    board.write_bytes(SQLITE_HEADER)
    monkeypatch.setenv("http_proxy", "http://127.0.0.1:9")  # no network: a download would fail
    with pytest.raises(lb.DatabaseCorruptError) as info:
        open_db(board, create=False)
    message = str(info.value)
    assert "damaged or is not a leaderboard database" in message
    assert "extension" not in message.lower() and "download" not in message.lower()
    assert no_extension_dirs(home)
    assert board.read_bytes() == SQLITE_HEADER  # nothing was written to it


def test_a_file_that_is_no_studies_database_is_named(tmp_path, monkeypatch):
    from etclib.errors import StoreError
    from etclib.studies.db import connect

    path = tmp_path / "studies.sqlite"
    path.write_text("name,score\n", encoding="utf-8")
    with pytest.raises(StoreError, match="does not start with SQLite's header"):
        with connect(path):
            pass
    damaged = tmp_path / "damaged.sqlite"
    damaged.write_bytes(SQLITE_HEADER)  # the header and nothing after it
    with pytest.raises(StoreError, match=f"Cannot open the studies database {damaged}"):
        with connect(damaged):
            pass
    assert path.read_text(encoding="utf-8") == "name,score\n"
    assert no_extension_dirs(tmp_path / "home")


def test_every_duckdb_connection_has_extension_loading_off(tmp_path):
    """Even a connection given a SQLite file directly fails locally, at once, not by download."""
    import duckdb

    from etclib import duckfile

    path = tmp_path / "x.db"
    path.write_bytes(SQLITE_HEADER)
    with pytest.raises(duckdb.Error) as info:
        duckfile.connect(path)
    assert "Failed to download" not in str(info.value)
    con = duckfile.connect(":memory:")
    settings = dict(
        con.execute(
            "SELECT name, value FROM duckdb_settings() WHERE name IN "
            "('autoinstall_known_extensions', 'autoload_known_extensions')"
        ).fetchall()
    )
    assert settings == {
        "autoinstall_known_extensions": "false",
        "autoload_known_extensions": "false",
    }


def test_no_module_opens_duckdb_but_through_duckfile():
    from tests.conftest import REPO

    offenders = [
        str(p.relative_to(REPO))
        for folder in ("etclib", "leaderboard", "views", "site_pages")
        for p in (REPO / folder).rglob("*.py")
        if "duckdb.connect(" in p.read_text(encoding="utf-8") and p.name != "duckfile.py"
    ]
    assert offenders == []


# --- 6. a damaged board ----------------------------------------------------------------------


@pytest.fixture
def damaged_board(tiny, tmp_path, monkeypatch):
    """A board with a scored entry, then cut in half (SQLite then finds pages missing on
    its check)."""
    path = tmp_path / "leaderboard.sqlite"
    data = dumps_jsonl((it.key, it.reference) for it in tiny).encode("utf-8")
    lb.submit(data, META, file_name="good.jsonl")
    lb.process_jobs()
    lb.close_all()
    whole = path.read_bytes()
    path.write_bytes(whole[: len(whole) // 2])
    with pytest.raises(lb.StorageError):
        lb.open_db(path, create=False)
    return path


def page_text(at) -> str:
    parts = [m.value for m in at.markdown] + [c.value for c in at.caption]
    parts += [e.value for e in at.error] + [w.value for w in at.warning]
    parts += [i.value for i in at.info] + [t.value for t in at.title]
    return re.sub(r"\\(.)", r"\1", "\n".join(str(p) for p in parts))


@pytest.mark.parametrize(
    "page", ["site_pages/chat.py", "site_pages/corpus.py", "site_pages/about.py"]
)
def test_pages_that_do_not_need_the_board_work_with_a_damaged_one(damaged_board, page, caplog):
    at = new_session(page)
    assert not at.error, [e.value for e in at.error]
    text = page_text(at)
    assert str(damaged_board) not in text and "DuckDB" not in text
    assert at.title and "refused to start" not in text


def test_chat_works_with_a_damaged_board(damaged_board):
    at = new_session("site_pages/chat.py")
    at.chat_input(key="chat_input").set_value("こんにちは").run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert [t.value for t in at.text] == ["A: こんにちは"]


@pytest.mark.parametrize(
    "page", ["site_pages/leaderboard.py", "site_pages/submit.py", "site_pages/home.py"]
)
def test_board_pages_say_unavailable_without_server_details(
    damaged_board, page, caplog, monkeypatch
):
    import logging

    import views.errors

    monkeypatch.setattr(views.errors, "_LOGGED", set())
    with caplog.at_level(logging.ERROR, logger="views.errors"):
        at = new_session(page)
    text = page_text(at)
    assert [e.value for e in at.error] == [
        "The leaderboard is unavailable right now: its database cannot be used. The site's "
        "operator has been told (the details are in the server's log). The other pages work "
        "as usual."
    ]
    assert str(damaged_board.parent) not in text and "/tmp" not in text
    for detail in ("SQLite", "sqlite", "malformed", "DuckDB", "Restore it from a backup"):
        assert detail not in text, detail
    # the operator's copy, with the path, is in the server log (once per process per message)
    logged = [r.getMessage() for r in caplog.records if r.name == "views.errors"]
    assert logged and all(str(damaged_board) in m for m in logged)


# --- 7. the low findings ---------------------------------------------------------------------


def erc_record(it, extra: dict | None = None) -> dict:
    return {"dialogue_id": it.key[0], "turn": it.key[1], "role": it.key[2], "labels": ["joy"]} | (
        extra or {}
    )


def test_an_erc_file_with_a_stray_prediction_field_is_refused_naming_both(tiny):
    import json

    lines = [
        erc_record(it, {"prediction": "嬉しい"} if n == 3 else None) for n, it in enumerate(tiny)
    ]
    data = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in lines).encode("utf-8")
    with pytest.raises(lb.SubmissionError) as info:
        lb.submit(data, META, file_name="erc.jsonl")
    problems = [str(p) for p in info.value.problems]
    assert len(problems) == 1 and problems[0].startswith("line 4: this record has both")
    assert "'prediction' (the transcription track)" in problems[0]
    assert "'labels' (the erc track)" in problems[0]
    # every record with both: the same, on each line (not silently scored as transcriptions)
    both = [erc_record(it, {"prediction": "x"}) for it in tiny]
    data = "".join(json.dumps(r) + "\n" for r in both).encode("utf-8")
    with pytest.raises(lb.SubmissionError) as info:
        lb.submit(data, META, file_name="erc.jsonl")
    (problem,) = info.value.problems  # one problem, naming every line (identical ones grouped)
    assert (problem.line, problem.until) == (1, len(tiny)) and "has both" in str(problem)


def test_a_csv_with_both_track_columns_is_refused(tiny):
    rows = ["dialogue_id,turn,role,prediction,labels"]
    rows += [f"{it.key[0]},{it.key[1]},{it.key[2]},x,joy" for it in tiny]
    with pytest.raises(lb.SubmissionError, match="has both 'prediction'"):
        lb.submit("\r\n".join(rows).encode(), META, file_name="both.csv")


@pytest.mark.parametrize(
    ("encoding", "called"),
    [("utf-32", "UTF-32"), ("utf-32-be", "UTF-32"), ("utf-16", "UTF-16"), ("utf-16-be", "UTF-16")],
)
def test_a_utf32_file_is_called_utf32(tiny, encoding, called):
    from views.board import validate_upload

    text = dumps_jsonl((it.key, it.reference) for it in tiny)
    bom = {"utf-32-be": "\ufeff", "utf-16-be": "\ufeff"}.get(encoding, "")
    check = validate_upload((bom + text).encode(encoding), "p.jsonl")
    assert not check.ok
    assert [str(p) for p in check.problems] == [f"line 1: the file is {called}; save it as UTF-8."]


def test_a_cr_only_file_gets_a_hint_about_line_ends(tiny):
    from etclib.predictions import CR_ONLY
    from views.board import validate_upload

    text = dumps_jsonl((it.key, it.reference) for it in tiny).replace("\n", "\r")
    check = validate_upload(text.encode("utf-8"), "mac.jsonl")
    assert not check.ok and check.problems[0].message == CR_ONLY
    assert "LF or CRLF" in check.message


BIDI = "\u202e"  # RIGHT-TO-LEFT OVERRIDE: "evil\u202elmsj.exe" shows as "evilexe.jsml"


@pytest.mark.slow  # an AppTest page run or many requests: seconds, not the unit tier's
def test_bidi_controls_are_stripped_from_file_names_on_the_page_and_in_the_history(tiny):
    name = f"evil{BIDI}lnosj\u200b.jsonl"
    # the Submit page's message, for a refused file
    at = new_session("site_pages/submit.py")
    at.file_uploader(key="submit_file").upload(name, b'{"dialogue_id": 1}\n').run()
    shown = " ".join(e.value for e in at.error)
    assert "was refused" in shown and BIDI not in shown and "\u200b" not in shown
    assert "evillnosj" in shown
    # the status history of an accepted one
    data = dumps_jsonl((it.key, it.reference) for it in tiny).encode("utf-8")
    receipt = lb.submit(data, META, file_name=name)
    history = " ".join(h["message"] or "" for h in lb.status(receipt.id)["history"])
    assert "received evillnosj.jsonl" in history and BIDI not in history


def test_score_per_item_file_has_one_line_per_record_for_splitlines(tiny, tmp_path, capsys):
    import json

    from etclib.cli import main

    odd = ["a\u2028b", "c\u2029d", "e\u0085f", "g\r\nh"]
    preds = tmp_path / "p.jsonl"
    preds.write_text(dumps_jsonl((it.key, odd[n % 4]) for n, it in enumerate(tiny)), "utf-8")
    assert len(preds.read_text(encoding="utf-8").splitlines()) == len(tiny)  # the writer too
    out = tmp_path / "items.jsonl"
    code = main(["score", str(preds), "--metrics", "bleu", "--per-item", str(out)])
    capsys.readouterr()
    assert code == 0
    lines = out.read_text(encoding="utf-8").splitlines()
    assert len(lines) == len(tiny)
    assert [json.loads(line)["prediction"] for line in lines][:4] == odd


@pytest.mark.slow  # an AppTest page run or many requests: seconds, not the unit tier's
def test_a_full_disk_stops_the_worker_with_one_line_and_no_chmod_advice(
    tiny, monkeypatch, capsys, caplog
):
    """ENOSPC met while storing a result (DuckDB's own error, raised where DuckDB raises it:
    inside the write transaction) through ``python -m leaderboard worker --once``."""
    import logging
    import sqlite3

    from leaderboard import worker
    from leaderboard.__main__ import main

    for n in range(3):
        texts = {it.key: f"{it.reference}{n}" for it in tiny}
        lb.submit(dumps_jsonl(texts.items()).encode("utf-8"), META, file_name=f"p{n}.jsonl")
    calls = []

    def full_disk(*args, **kwargs):
        calls.append(1)
        raise sqlite3.OperationalError("database or disk is full")

    monkeypatch.setattr(worker, "store_result", full_disk)
    lb.close_all()
    with caplog.at_level(logging.DEBUG):
        code = main(["worker", "--once", "--threads", "2", "--timeout", "600"])
    out = capsys.readouterr()
    assert code == 8 and calls  # the worker stopped (exit status 8) after the write failed
    said = [line for line in (out.out + out.err).splitlines() if "space left" in line]
    assert len(said) == 1 and "the scoring worker stopped" in said[0], out
    assert "Free space on the disk" in said[0]
    assert "chown" not in out.out + out.err and "chmod" not in out.out + out.err
    assert "Traceback" not in out.out + out.err
    # nothing logged about it (with or without a traceback): the command printed it once
    records = [r for r in caplog.records if r.name.startswith("leaderboard")]
    assert not any("space left" in r.getMessage() for r in records)
    assert not any(r.exc_info and "space left" in str(r.exc_info[1]) for r in records)


# --- 2 (end to end) and the metrics endpoint: a real proxy on loopback ------------------------


@pytest.mark.browser
@pytest.mark.slow
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


def test_streamlit_still_offers_no_switch_for_the_metrics_endpoint():
    """docs/deploy.md says the proxy must keep /_stcore/metrics private because Streamlit has no
    option to turn it off; when a Streamlit upgrade adds one, set it and update the docs."""
    from streamlit import config

    from tests.conftest import REPO
    from tests.proxy import BLOCKED

    options = [
        k
        for k in config._config_options_template
        if k.lower().startswith("server.") and "metric" in k.lower()
    ]
    assert options == ["server.unsafeMetricsUserAttributes"], options
    assert config.get_option("server.unsafeMetricsUserAttributes") == []
    assert config.get_option("server.enableExpensiveMemoryStats") is False
    deploy = (REPO / "docs" / "deploy.md").read_text(encoding="utf-8")
    assert "location = /_stcore/metrics { return 404; }" in deploy
    assert BLOCKED.match("/_stcore/metrics") and BLOCKED.match("/_stcore/metrics?families=x")
    assert not BLOCKED.match("/_stcore/metricsx") and not BLOCKED.match("/_stcore/health")
