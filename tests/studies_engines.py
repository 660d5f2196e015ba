"""The studies database on both engines: the ``studies_db`` fixture.

Import into a test module (``from tests.studies_engines import studies_db  # noqa: F401``) and
request it, or use it for the whole module with
``pytestmark = pytest.mark.usefixtures("studies_db")``: each test then runs twice, once on a
SQLite file under tmp_path (the default engine) and once on a database of its own on the test
session's real PostgreSQL server (tests/pgserver.py; skipped, with the reason, where the machine
has no PostgreSQL). ``ETC_STUDIES_DB`` names the database; the fixture's value is the same.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

ENGINES = ("sqlite", "postgresql")


def use_engine(request: pytest.FixtureRequest, engine: str, monkeypatch, tmp_path) -> str:
    """Point ``ETC_STUDIES_DB`` at a fresh studies database on ``engine``; its location."""
    if engine == "sqlite":
        target = str(tmp_path / "studies.sqlite")
    else:
        target = request.getfixturevalue("postgres_url")
        request.addfinalizer(lambda: _close(target))  # before the database is dropped
    monkeypatch.setenv("ETC_STUDIES_DB", target)
    return target


def _close(url: str) -> None:
    from etclib.storage.database import close_all

    close_all(target=url)


@pytest.fixture(params=ENGINES)
def studies_db(request, monkeypatch, tmp_path) -> Iterator[str]:
    yield use_engine(request, request.param, monkeypatch, tmp_path)
