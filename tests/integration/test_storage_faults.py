"""Storage faults as commands and pages meet them: a truncated, damaged or zero-length board, a
foreign file, a directory in its place, a read-only folder and a missing (mistyped) path each
give one clear message (the path and what to do) from every command, non-zero, at once (no
pause, no retry, no scoring thread); nothing is written into a damaged file; the worker stops
after repeated loop errors, with a growing pause between them, and on a full disk with one line;
``worker --once`` has a timeout; with a damaged board, the pages that need it say it is
unavailable without server details and the others work.

Every test that uses the board runs on every engine (``board_engine``, tests/conftest.py) except
those marked ``embedded_only``: these faults are about the SQLite file itself. The queue's
fairness and SIGKILLs: tests/integration/test_queue.py."""

from __future__ import annotations

import logging
import os
import re
import shutil
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

import leaderboard as lb
from etclib.tracks.predictions import dumps_jsonl
from leaderboard import worker
from tests.conftest import REPO
from tests.fixtures.board import (  # noqa: F401 - fixtures, found by name
    META,
    TOKEN,
    _close_databases,
    fail_next,
    job_rows,
    jsonl,
    process_env,
    submit_many,
    tiny_fixture,
)
from tests.site_apptest import app


def _good_database(items, path: Path) -> Path:
    os.environ["ETC_LEADERBOARD_DB"] = str(path)
    submit_many(items, 3)
    lb.process_jobs()
    lb.close_all()
    return path


def _data_block_flip(path: Path) -> int:
    """An offset in a data page (past the first) whose flipped bit SQLite reports when it checks
    the file: a page's header (SQLite keeps no checksum of the values themselves)."""
    data = path.read_bytes()
    size = int.from_bytes(data[16:18], "big")
    for offset in range(size, len(data), size):
        trial = path.with_name("trial.sqlite")
        trial.write_bytes(data[:offset] + bytes([data[offset] ^ 0x40]) + data[offset + 1 :])
        con = sqlite3.connect(str(trial))
        try:
            if con.execute("PRAGMA quick_check").fetchall() != [("ok",)]:
                return offset
        except sqlite3.DatabaseError:
            return offset
        finally:
            con.close()
            trial.unlink()
    raise AssertionError("no data page found")


def _damage(case: str, path: Path) -> Path:
    """Damage the good database at ``path`` in one way; the path the commands will use."""
    data = path.read_bytes()
    if case == "truncated":
        path.write_bytes(data[: len(data) // 2])
    elif case == "truncated-header":
        path.write_bytes(data[:4096])
    elif case == "bit-flipped-header":
        path.write_bytes(data[:3] + bytes([data[3] ^ 0x10]) + data[4:])
    elif case == "bit-flipped-data":
        offset = _data_block_flip(path)
        path.write_bytes(data[:offset] + bytes([data[offset] ^ 0x40]) + data[offset + 1 :])
    elif case == "zero-length":
        path.write_bytes(b"")
    elif case == "directory":
        path.unlink()
        path.mkdir()
    elif case == "missing":
        path.unlink()
        return path.with_name("leaderbord.sqlite")  # a typo
    else:  # pragma: no cover
        raise AssertionError(case)
    return path


CASES = {
    "truncated": "damaged or is not a leaderboard database",
    "truncated-header": "damaged or is not a leaderboard database",
    "bit-flipped-header": "damaged or is not a leaderboard database",
    "bit-flipped-data": "damaged or is not a leaderboard database",
    "zero-length": "damaged or is not a leaderboard database",
    "directory": "is a directory, not a database file",
    "missing": "No leaderboard database at",
}


TO_DO = {
    "truncated": "Restore it from a backup",
    "truncated-header": "Restore it from a backup",
    "bit-flipped-header": "Restore it from a backup",
    "bit-flipped-data": "Restore it from a backup",
    "zero-length": "Restore it from a backup",
    "directory": "Point ETC_LEADERBOARD_DB at a file",
    "missing": "--create",
    "read-only": "make the folder writable",
}


def commands(tmp_path: Path, items) -> dict[str, list[str]]:
    preds = tmp_path / "p.jsonl"
    preds.write_bytes(jsonl(items, 7))
    return {
        "submit": ["submit", str(preds), "--name", "New"],
        "status": ["status", "abcdef123456"],
        "show": ["show"],
        "export": ["export", "--format", "json"],
        "worker": ["worker", "--once", "--timeout", "5"],
        "admin": ["admin", "list", "--token", TOKEN],
        "rerun": ["admin", "rerun", "--token", TOKEN],
        "seed": ["seed-baselines", "--no-reported", "--backends", "constant", "--no-score"],
    }


@pytest.mark.embedded_only  # about the SQLite file itself
@pytest.mark.parametrize("case", list(CASES))
def test_every_command_refuses_a_damaged_or_missing_database(
    tiny, tmp_path, monkeypatch, capsys, case
):
    from leaderboard.__main__ import main

    monkeypatch.setenv("ETC_ADMIN_TOKEN", TOKEN)
    good = _good_database(tiny, tmp_path / "lb" / "leaderboard.sqlite")
    path = _damage(case, good)
    monkeypatch.setenv("ETC_LEADERBOARD_DB", str(path))
    before = path.read_bytes() if path.is_file() else None
    naps: list[float] = []  # a command that waited or retried would sleep
    monkeypatch.setattr(time, "sleep", naps.append)
    for name, argv in commands(tmp_path, tiny).items():
        if case == "missing" and name == "seed":
            continue  # seeding creates a board (see test_seed_creates_a_missing_board)
        code = main(argv)
        err = capsys.readouterr().err
        assert code == 7, (name, code, err)
        assert CASES[case] in err and str(path) in err and TO_DO[case] in err, (name, err)
        assert "Traceback" not in err and naps == [], (name, naps)
        assert not [t for t in threading.enumerate() if t.name.startswith("lb-worker")], name
        assert len(err.strip().splitlines()) <= 3, err  # one message, not a log
        if before is not None:
            assert path.read_bytes() == before, name  # nothing written into it
        else:
            assert not path.exists() or path.is_dir(), name  # nothing created
        lb.close_all()


@pytest.mark.embedded_only  # about the SQLite file itself
@pytest.mark.parametrize("case", ["truncated", "bit-flipped-data", "zero-length", "missing"])
def test_the_worker_process_exits_at_once_on_a_bad_database(tiny, tiny_corpus, tmp_path, case):
    path = _damage(case, _good_database(tiny, tmp_path / "leaderboard.sqlite"))
    proc = subprocess.run(
        [sys.executable, "-m", "leaderboard", "worker", "--once"],
        env=process_env(tiny_corpus, ETC_LEADERBOARD_DB=str(path)),
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 7 and CASES[case] in proc.stderr, proc.stderr
    assert "Traceback" not in proc.stderr
    assert "worker:" not in proc.stdout  # refused on opening: no scoring thread ever started


def _without_dac_override() -> list[str]:
    """A prefix that runs a command without root's permission override (setpriv), or []."""
    if os.geteuid() != 0:
        return []
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        pytest.skip("running as root without setpriv: a read-only folder cannot be tested")
    return [setpriv, "--bounding-set=-dac_override,-dac_read_search,-fowner", "--"]


@pytest.mark.embedded_only  # about the SQLite file itself
@pytest.mark.parametrize("state", ["existing", "new"])
def test_a_read_only_folder_gives_one_clear_message_from_every_command(
    tiny, tiny_corpus, tmp_path, state
):
    folder = tmp_path / "ro"
    folder.mkdir()
    path = folder / "leaderboard.sqlite"
    if state == "existing":
        _good_database(tiny, path)
    before = sorted(p.name for p in folder.iterdir())
    folder.chmod(0o555)
    prefix = _without_dac_override()
    env = process_env(tiny_corpus, ETC_LEADERBOARD_DB=str(path), ETC_ADMIN_TOKEN=TOKEN)
    try:
        for name, argv in commands(tmp_path, tiny).items():
            if state == "new" and name != "seed":
                argv = [*argv, "--create"]
            proc = subprocess.run(
                [*prefix, sys.executable, "-m", "leaderboard", *argv],
                env=env,
                cwd=REPO,
                capture_output=True,
                text=True,
                timeout=60,
            )
            assert proc.returncode == 7, (name, proc.stderr)
            assert "worker:" not in proc.stdout, name  # refused before any scoring
            assert "Cannot write the leaderboard database" in proc.stderr, proc.stderr
            assert str(path) in proc.stderr and TO_DO["read-only"] in proc.stderr
            assert "Traceback" not in proc.stderr
    finally:
        folder.chmod(0o755)
    assert sorted(p.name for p in folder.iterdir()) == before


@pytest.mark.embedded_only  # about the SQLite file itself
def test_seed_creates_a_missing_board(tiny, tmp_path, monkeypatch, capsys):
    """``make prepare`` on a fresh clone: seeding is how a board is made."""
    from leaderboard.__main__ import main

    path = tmp_path / "fresh" / "leaderboard.sqlite"
    monkeypatch.setenv("ETC_LEADERBOARD_DB", str(path))
    argv = ["seed-baselines", "--no-reported", "--backends", "constant", "--no-score"]
    assert main(argv) == 0, capsys.readouterr().err
    assert path.is_file() and "constant: added" in capsys.readouterr().out


@pytest.mark.embedded_only  # about the SQLite file itself
def test_submit_refuses_a_database_damaged_in_its_data(tiny, tmp_path, monkeypatch, capsys):
    """F9: submit returned 0, writing into a file with a damaged data block."""
    from leaderboard.__main__ import main

    path = _damage("bit-flipped-data", _good_database(tiny, tmp_path / "leaderboard.sqlite"))
    monkeypatch.setenv("ETC_LEADERBOARD_DB", str(path))
    before = path.read_bytes()
    preds = tmp_path / "p.jsonl"
    preds.write_bytes(jsonl(tiny, 9))
    assert main(["submit", str(preds), "--name", "Into a damaged file"]) == 7
    assert path.read_bytes() == before
    assert not Path(str(path) + "-wal").exists() or not Path(str(path) + "-wal").stat().st_size


def test_the_worker_stops_after_repeated_loop_errors(tiny, monkeypatch, capsys, caplog):
    from leaderboard.__main__ import main

    lb.submit(jsonl(tiny), META)
    calls = []

    def broken(db, name):
        calls.append(name)
        raise RuntimeError("disk on fire")

    monkeypatch.setattr(worker, "claim", broken)
    monkeypatch.setattr(worker, "LOOP_ERROR_PAUSE", 0.01)
    pauses: list[float] = []
    wait = threading.Event.wait

    def recorded_wait(self, timeout=None):
        if threading.current_thread().name.startswith("lb-worker"):
            pauses.append(timeout)
        return wait(self, timeout)

    monkeypatch.setattr(threading.Event, "wait", recorded_wait)
    with caplog.at_level(logging.ERROR, logger="leaderboard.worker"):
        code = main(["worker", "--once", "--threads", "1"])
    err = capsys.readouterr().err
    assert code == 8 and len(calls) == worker.MAX_LOOP_ERRORS
    # a growing pause between the errors (0.01, 0.02, 0.04, 0.08 s), none after the last
    assert pauses == [0.01 * 2**k for k in range(worker.MAX_LOOP_ERRORS - 1)]
    assert f"stopped after {worker.MAX_LOOP_ERRORS} consecutive errors" in err
    assert "disk on fire" in err and "Traceback" not in err


def test_worker_once_gives_up_after_its_timeout(tiny, monkeypatch, capsys):
    from leaderboard.__main__ import main

    sid = lb.submit(jsonl(tiny), META).id
    release, entered = threading.Event(), []

    def stuck(db, job):  # a job that never finishes while the worker waits
        entered.append(job.id)
        release.wait(timeout=120)
        raise RuntimeError("never reached in time")

    monkeypatch.setattr(worker, "compute", stuck)
    try:
        code = main(["worker", "--once", "--timeout", "1", "--threads", "1"])
    finally:
        release.set()
    err = capsys.readouterr().err
    assert code == 8 and "did not finish within 1 s" in err, err
    assert len(entered) == 1  # it gave up on the job it was running, not before it began
    lb.close_all()
    assert lb.status(sid)["status"] in ("queued", "failed")


@pytest.mark.embedded_only  # about the SQLite file itself
def test_every_page_shows_the_storage_message(tiny, tmp_path, monkeypatch):
    from streamlit.testing.v1 import AppTest

    path = _damage("truncated", _good_database(tiny, tmp_path / "leaderboard.sqlite"))
    monkeypatch.setenv("ETC_LEADERBOARD_DB", str(path))
    at = AppTest.from_file(str(REPO / "streamlit_app.py"), default_timeout=60).run()
    # The pages that read or write the board. (The entry point stops every page on a served site;
    # inside one pytest process an earlier AppTest can leave Streamlit's page manager running a
    # switched-to page without the entry point, so the board pages check the storage themselves.)
    for page in ("site_pages/home.py", "site_pages/leaderboard.py", "site_pages/submit.py"):
        at.switch_page(page).run()
        assert not at.exception, (page, [e.value for e in at.exception])
        shown = [e.value for e in at.error]
        # the visitor reads that the board is unavailable; the path and the detail are logged
        # (the pages that do not need the board: further down)
        assert len(shown) == 1 and "leaderboard is unavailable" in shown[0], (page, shown)
        assert str(path) not in re.sub(r"\\(.)", r"\1", shown[0])


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


@pytest.mark.embedded_only  # about the SQLite file itself
@pytest.mark.parametrize(
    "page", ["site_pages/chat.py", "site_pages/corpus.py", "site_pages/about.py"]
)
def test_pages_that_do_not_need_the_board_work_with_a_damaged_one(damaged_board, page, caplog):
    at = app(page)
    assert not at.error, [e.value for e in at.error]
    text = page_text(at)
    assert str(damaged_board) not in text and "DuckDB" not in text
    assert at.title and "refused to start" not in text


@pytest.mark.embedded_only  # about the SQLite file itself
def test_chat_works_with_a_damaged_board(damaged_board):
    at = app("site_pages/chat.py")
    at.chat_input(key="chat_input").set_value("こんにちは").run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert [t.value for t in at.text] == ["A: こんにちは"]


@pytest.mark.embedded_only  # about the SQLite file itself
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
        at = app(page)
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


@pytest.mark.embedded_only  # about the SQLite file itself
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
