"""Shared fixtures: every cache, database and home directory lives under tmp_path."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
DATA = Path(__file__).resolve().parent / "data"


def real_corpus_dir() -> Path | None:
    env = os.environ.get("ETC_DATA_DIR")
    for candidate in (env, REPO.parent / "shared" / "ETCDataset" / "etc"):
        if candidate and (Path(candidate) / "dialogues").is_dir():
            return Path(candidate).resolve()
    return None


REAL_CORPUS = real_corpus_dir()
needs_corpus = pytest.mark.skipif(
    REAL_CORPUS is None, reason="real ETC corpus not found: set ETC_DATA_DIR"
)


@pytest.fixture(autouse=True)
def _isolated(tmp_path, monkeypatch):
    """Point caches, databases, secrets and HOME at tmp_path; keep the real corpus reachable."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CACHE_HOME", str(home / ".cache"))
    monkeypatch.setenv("ETC_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("ETC_STORE_DB", str(tmp_path / "etc.duckdb"))
    monkeypatch.setenv("ETC_LEADERBOARD_DB", str(tmp_path / "leaderboard.duckdb"))
    monkeypatch.setenv("ETC_STUDIES_DB", str(tmp_path / "studies.duckdb"))
    monkeypatch.setenv("ETC_SECRETS_FILE", str(tmp_path / "secrets.toml"))
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("ETC_PROGRESS", "0")
    for var in (
        "OPENAI_API_KEY",
        "OPENAI_BASE_URL",
        "GEMINI_API_KEY",
        "GOOGLE_API_KEY",
        "ETC_GEMINI_BASE_URL",
        "ETC_ADMIN_TOKEN",
    ):
        monkeypatch.delenv(var, raising=False)
    if REAL_CORPUS is not None:
        monkeypatch.setenv("ETC_DATA_DIR", str(REAL_CORPUS))
    else:
        monkeypatch.delenv("ETC_DATA_DIR", raising=False)
    from etclib import config

    config._secrets.cache_clear()
    yield
    import sys

    lb = sys.modules.get("leaderboard")
    if lb is not None and hasattr(lb, "close_all"):
        lb.close_all()  # release the leaderboard databases opened under tmp_path


@pytest.fixture
def corpus():
    if REAL_CORPUS is None:
        pytest.skip("real ETC corpus not found: set ETC_DATA_DIR")
    from etclib.corpus import load_corpus

    return load_corpus(REAL_CORPUS)


@pytest.fixture
def tiny_corpus(tmp_path) -> Path:
    """A small corpus in the real schema, built by tests/data/make_tiny_corpus.py."""
    from tests.data.make_tiny_corpus import write_tiny_corpus

    return write_tiny_corpus(tmp_path / "tiny")


@pytest.fixture(scope="session")
def postgres_server():
    """One real PostgreSQL server for the session (tests/pgserver.py); skips with the reason
    when the machine has none."""
    from tests import pgserver

    reason = pgserver.why_unavailable()
    if reason:
        pytest.skip(reason)
    server = pgserver.PgServer().start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def postgres_url(postgres_server):
    """The URL of an empty database of this test's own on the session's PostgreSQL server."""
    url = postgres_server.new_database()
    try:
        yield url
    finally:
        postgres_server.drop_database(url)


def pytest_generate_tests(metafunc):
    """Tests that use ``board_engine`` run on both leaderboard engines; those marked
    ``embedded_only`` (about the DuckDB file itself) on DuckDB alone."""
    if "board_engine" in metafunc.fixturenames:
        only = metafunc.definition.get_closest_marker("embedded_only")
        engines = ["duckdb"] if only else ["duckdb", "postgresql"]
        metafunc.parametrize("board_engine", engines, indirect=True)


@pytest.fixture
def board_engine(request, monkeypatch):
    """The leaderboard's engine for this test: the embedded DuckDB file (``_isolated`` points
    ETC_LEADERBOARD_DB at one under tmp_path), or a database of its own on the session's
    PostgreSQL server (skipped, with the reason, where there is none)."""
    if request.param == "postgresql":
        monkeypatch.setenv("ETC_LEADERBOARD_DB", request.getfixturevalue("postgres_url"))
    yield request.param
    import sys

    lb = sys.modules.get("leaderboard")
    if lb is not None and hasattr(lb, "close_all"):
        lb.close_all()  # before the test's database is dropped
