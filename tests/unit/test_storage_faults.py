"""Hostile testing of the leaderboard's storage and admin (issue #12, items 6 and 9).

- Storage faults: a truncated, damaged or zero-length file, a foreign file, a directory in its
  place, a read-only folder and a missing (mistyped) path each give one clear message (the path
  and what to do) from every command, non-zero, at once (no pause, no retry, no scoring thread);
  nothing is written into a damaged file; the worker stops after repeated loop errors, with a
  growing pause between them; ``worker --once`` has a timeout.
- Admin token: shorter than 24 characters is refused at start-up; wrong tokens are rate-limited
  per session and logged.
- Duplicates: ``content_sha256`` holds the content hash, ``file_sha256`` the file's bytes hash.

Every test that uses the board runs on every engine (``board_engine``, tests/conftest.py) except
those marked ``embedded_only``: the storage faults are about the SQLite file itself. The queue's
fairness and SIGKILLs: tests/integration/test_queue.py.
"""

from __future__ import annotations

import pytest

import leaderboard as lb
from leaderboard.db import open_db
from tests.hostile_board import (  # noqa: F401 - fixtures, found by name
    META,
    TOKEN,
    _close_databases,
    fail_next,
    job_rows,
    jsonl,
    submit_many,
    tiny_fixture,
)


@pytest.mark.embedded_only  # about the SQLite file itself
def test_a_missing_database_is_created_only_when_asked(tiny, tmp_path, monkeypatch, capsys):
    from leaderboard.__main__ import main

    path = tmp_path / "new" / "board.sqlite"
    monkeypatch.setenv("ETC_LEADERBOARD_DB", str(path))
    assert main(["show"]) == 7 and not path.exists()
    assert "No leaderboard database at" in capsys.readouterr().err
    assert main(["show", "--create"]) == 0 and path.is_file()
    assert "created a new, empty leaderboard database" in capsys.readouterr().err
    lb.close_all()
    assert main(["show"]) == 0
    with pytest.raises(lb.DatabaseMissingError):
        open_db(tmp_path / "typo.sqlite", create=False)
