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

import hashlib
import json
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
from leaderboard import worker
from leaderboard.db import open_db
from tests.conftest import REPO
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


def _env(corpus_dir: Path, **extra: str) -> dict[str, str]:
    env = dict(os.environ)
    env.update(PYTHONPATH=str(REPO), ETC_DATA_DIR=str(corpus_dir), **extra)
    return env


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
        env=_env(tiny_corpus, ETC_LEADERBOARD_DB=str(path)),
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
    env = _env(tiny_corpus, ETC_LEADERBOARD_DB=str(path), ETC_ADMIN_TOKEN=TOKEN)
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
        # (tests/unit/test_hostile_paths.py: the pages that do not need the board)
        assert len(shown) == 1 and "leaderboard is unavailable" in shown[0], (page, shown)
        assert str(path) not in re.sub(r"\\(.)", r"\1", shown[0])


def test_a_short_admin_token_is_refused_at_start_up(tiny, monkeypatch, capsys):
    from streamlit.testing.v1 import AppTest

    from etclib.errors import ConfigError
    from etclib.studies import annotation
    from leaderboard.__main__ import main

    monkeypatch.setenv("ETC_ADMIN_TOKEN", "s3cret-but-short")
    assert main(["show", "--create"]) == 2
    err = capsys.readouterr().err
    assert "ETC_ADMIN_TOKEN is shorter than 24 characters" in err and "s3cret" not in err
    with pytest.raises(ConfigError, match="shorter than 24"):
        lb.hide("x", "s3cret-but-short")
    with pytest.raises(ConfigError, match="shorter than 24"):
        annotation.issue_code("s3cret-but-short")
    at = AppTest.from_file(str(REPO / "streamlit_app.py"), default_timeout=60).run()
    assert any("shorter than 24 characters" in e.value for e in at.error)
    assert not at.title  # the site refused to start: no page ran


def test_wrong_tokens_are_rate_limited_per_session_and_logged(
    tiny, monkeypatch, caplog, board_engine
):
    from etclib import admintoken

    # the failures are counted per session for the whole process: sessions of this run's own
    visitor, other = f"visitor-1-{board_engine}", f"visitor-2-{board_engine}"

    monkeypatch.setenv("ETC_ADMIN_TOKEN", TOKEN)
    sid = lb.submit(jsonl(tiny), META).id
    outcomes = []
    with caplog.at_level(logging.WARNING, logger="etclib.admintoken"):
        with admintoken.session(visitor):
            for n in range(30):
                try:
                    lb.hide(sid, f"guess-{n:030d}")
                except lb.AdminError as exc:
                    outcomes.append("wait" if "Too many wrong admin tokens" in str(exc) else "no")
            with pytest.raises(lb.AdminError, match="Too many wrong admin tokens"):
                lb.hide(sid, TOKEN)  # locked out: even the right token waits
    limit = admintoken.MAX_FAILURES
    assert outcomes == ["no"] * limit + ["wait"] * (30 - limit)
    failures = [r for r in caplog.records if "wrong admin token" in r.getMessage()]
    assert len(failures) == limit and all(TOKEN not in r.getMessage() for r in caplog.records)
    assert all("guess-" not in r.getMessage() for r in caplog.records)
    with admintoken.session(other):  # another session is not locked out
        lb.hide(sid, TOKEN)
    assert lb.status(sid)["visibility"] == "hidden"


def test_the_judge_vs_human_admin_form_is_rate_limited(monkeypatch):
    from streamlit.testing.v1 import AppTest

    from etclib import admintoken

    monkeypatch.setenv("ETC_ADMIN_TOKEN", TOKEN)
    from views.judge_vs_human import TABS

    at = AppTest.from_file(str(REPO / "site_pages" / "judge_vs_human.py"), default_timeout=90).run()
    assert not at.exception, [e.value for e in at.exception]
    at.session_state["jvh_tab"] = TABS[1]  # Study 2 holds the admin form; only the open tab runs
    at.run()
    at.text_input(key="jvh_admin_token").set_value("wrong-wrong-wrong-wrong-wrong")
    errors = []
    for _ in range(admintoken.MAX_FAILURES + 2):
        at.button(key="jvh_issue").click().run()
        errors.append(at.error[-1].value if at.error else "")
    assert all("Wrong admin token" in e for e in errors[: admintoken.MAX_FAILURES])
    assert all("Too many wrong admin tokens" in e for e in errors[admintoken.MAX_FAILURES :])
    at.text_input(key="jvh_admin_token").set_value(TOKEN)
    at.button(key="jvh_issue").click().run()
    assert "Too many wrong admin tokens" in at.error[-1].value  # this session waits


def test_file_and_content_hashes_are_stored_apart(tiny):
    data = jsonl(tiny)
    sid = lb.submit(data, META).id
    file_sha, content_sha = open_db().query(
        "SELECT file_sha256, content_sha256 FROM submissions WHERE id = ?", [sid]
    )[0]
    assert file_sha == hashlib.sha256(data).hexdigest()
    body = [[*it.key, it.reference] for it in tiny]
    expected = hashlib.sha256(json.dumps(["etc-predictions-v1", body]).encode("ascii")).hexdigest()
    assert content_sha == expected
    crlf = data.replace(b"\n", b"\r\n")
    again = lb.submit(crlf, {**META, "contact": "other@x.org"})
    assert again.duplicate and again.id == sid


def test_seeding_an_unchanged_baseline_takes_the_fast_path(tiny, monkeypatch):
    from leaderboard import baselines

    submit = sys.modules["leaderboard.submit"]  # the package's `submit` is the function
    first = baselines.seed_computed(["constant"])
    assert first["constant"]["added"]

    def refuse(*args, **kwargs):
        raise AssertionError("store_submission called for an unchanged baseline")

    monkeypatch.setattr(submit, "store_submission", refuse)
    again = baselines.seed_computed(["constant"])
    assert again == {"constant": {"id": first["constant"]["id"], "added": False}}


def test_the_worker_warms_its_stages_before_it_claims_and_survives_a_failed_warm_up(
    tiny, monkeypatch, capsys, caplog
):
    """``python -m leaderboard worker`` pays each stage's one-time costs before its first claim;
    a warm-up that fails is logged (redacted) and the worker scores all the same."""
    import dataclasses

    from leaderboard import stages
    from leaderboard.__main__ import main

    order = []

    def broken() -> None:
        order.append("warm")
        raise RuntimeError("cannot load the tagger (key sk-abcdefghijklmnopqrstuvwxyz012345)")

    claim = worker.claim

    def counted(db, name):
        order.append("claim")
        return claim(db, name)

    monkeypatch.setitem(stages.RULES, "lexical", dataclasses.replace(stages.RULES["lexical"],
                                                                     warm=broken))  # fmt: skip
    monkeypatch.setattr(worker, "claim", counted)
    sid = lb.submit(jsonl(tiny), META).id
    with caplog.at_level(logging.WARNING, logger="leaderboard.worker"):
        assert main(["worker", "--once", "--threads", "1"]) == 0
    assert order[0] == "warm" and "claim" in order
    warned = [
        r.getMessage() for r in caplog.records if "warming the lexical stage" in r.getMessage()
    ]
    assert warned and "cannot load the tagger" in warned[0] and "sk-abcdef" not in warned[0]
    assert "warmed:" not in capsys.readouterr().out  # nothing was warmed
    assert lb.status(sid)["status"] == "scored"
