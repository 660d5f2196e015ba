"""A new storage engine is one dialect module and one line in ``etclib.storage.ENGINES``: this
module is such a module (an engine named by the ``scratch:///`` scheme, kept in SQLite files),
and the board, the studies and the judge cache all open on it with no other change."""

from __future__ import annotations

import pytest

import leaderboard as lb
from etclib import storage
from etclib.judge.cache import AnswerCache, request_key
from etclib.storage.copier import copy_store
from etclib.storage.dialects.sqlite import SQLite
from etclib.studies import db as studiesdb
from leaderboard.clock import now


class Scratch(SQLite):
    name = "scratch"
    schemes = ("scratch:///",)


DIALECT = Scratch()


@pytest.fixture
def scratch(monkeypatch, tmp_path):
    """The engine registered; a target of it under tmp_path, by name."""
    monkeypatch.setitem(storage.ENGINES, "scratch", __name__)
    yield lambda name: f"scratch:///{tmp_path / name}"
    lb.close_all()
    storage.database.close_all()


def test_the_registry_line_picks_the_engine_by_its_scheme(scratch):
    target = scratch("x.sqlite")
    assert storage.target_of(target) == target  # a URL, kept as text
    assert storage.dialect_for(target) is DIALECT
    assert storage.dialect_for("data/x.sqlite").name == storage.EMBEDDED


def test_the_board_opens_on_a_new_engine_and_copies_into_another(scratch, tmp_path):
    board = lb.open_db(scratch("lb.sqlite"))
    assert board.engine == "scratch" and board.created and board.schema_version() > 0
    with board.write() as cur:
        cur.execute("INSERT INTO moderation_log VALUES (?, 'abc', 'hide', '嬉しい')", [now()])
    assert board.query("SELECT action, note FROM moderation_log") == [("hide", "嬉しい")]
    report = copy_store(board.target, lb.open_db(tmp_path / "plain.sqlite"))
    assert report.ok and report.tables["moderation_log"].rows_target == 1


def test_the_studies_and_the_judge_cache_open_on_a_new_engine(scratch):
    with studiesdb.connect(scratch("studies.sqlite")) as con:
        assert con.engine == "scratch"
        con.schema("probe", "CREATE TABLE IF NOT EXISTS probe (x INTEGER)")
        con.execute("INSERT INTO probe VALUES (?)", [7])
    with studiesdb.connect(scratch("studies.sqlite"), read_only=True) as con:
        assert con.execute("SELECT x FROM probe").fetchall() == [(7,)]
    cache = AnswerCache(scratch("judge.sqlite3"))
    key = request_key("p", "m", "t", {})
    cache.put(
        key, kind="entail", provider="p", model="m", prompt="t", request={}, raw="", answer=[1]
    )
    assert cache.get(key)["answer"] == [1] and len(cache) == 1
    assert cache._claims.try_lock(key)
    cache._claims.unlock(key)
    cache.close()
