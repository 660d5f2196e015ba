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
from etclib.predictions import dumps_jsonl
from tests.unit.test_hostile_paths import META, tiny, unknown_items  # noqa: F401

FORMULA_START = ("=", "+", "-", "@", "\t")


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
        # The guard only adds apostrophes: without them, the text is what the visitor uploaded.
        assert {c.replace("'", "") for c in got} == {t.replace("'", "") for t in HOSTILE_TEXTS}


ADMIN_TOKEN = "s3cret-admin-token-0123456789"


def new_session(page: str):
    """A new browser session (a reload) on ``page``: a fresh AppTest of the whole site."""
    from streamlit.testing.v1 import AppTest

    from tests.conftest import REPO

    at = AppTest.from_file(str(REPO / "streamlit_app.py"), default_timeout=90).run()
    at.switch_page(page).run()
    assert not at.exception, [e.value for e in at.exception]
    return at


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


def test_many_crafted_refused_uploads_leave_the_cache_under_its_bound(tiny, monkeypatch):
    from etclib.predictions import MAX_PROBLEMS
    from views import upload_check

    upload_check.clear()
    monkeypatch.setattr(upload_check, "MAX_BYTES", 400_000)
    at = new_session("site_pages/submit.py")
    sizes = []
    n_items = len(tiny) + MAX_PROBLEMS  # as many records as the reader reads
    for n in range(8):
        at.file_uploader(key="submit_file").upload(f"crafted{n}.jsonl", unknown_items(n_items, n))
        at.run()
        assert not at.exception, [e.value for e in at.exception]
        assert any(f"refused\\: {n_items + 1:,} problem" in e.value for e in at.error), at.error
        assert upload_check.held_bytes() <= upload_check.MAX_BYTES
        sizes.append(upload_check.held_bytes())
    entry = upload_check.size_of(upload_check.checked(unknown_items(n_items, 7), "crafted7.jsonl"))
    assert entry > 100_000  # a full refusal is large...
    assert 1 <= upload_check.entries() <= upload_check.MAX_BYTES // entry < 8  # ...a few stay
    check = upload_check.checked(unknown_items(n_items, 0), "crafted0.jsonl")
    assert len(check.problems) <= MAX_PROBLEMS and check.problem_count == n_items + 1


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


BIDI = "\u202e"  # RIGHT-TO-LEFT OVERRIDE: "evil\u202elmsj.exe" shows as "evilexe.jsml"


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
