"""The SQLite judge cache's claim reaches the other processes of the machine: a key
claimed by one process is refused to another until released, or until the claiming process
dies (the kernel drops its record lock), so worker processes beside each other ask the model
once per question, as they do on PostgreSQL (tests/integration/test_judge_cache_shared.py)."""

from __future__ import annotations

import signal
import subprocess
import sys

from etclib.judge.cache import AnswerCache
from tests.conftest import REPO

KEY = "a" * 64
OTHER = "b" * 64


def other_process(path, *lines: str) -> subprocess.CompletedProcess:
    code = "\n".join(
        [
            "import os, signal, sys",
            "from etclib.judge.cache import AnswerCache",
            f"db = AnswerCache({str(path)!r})._claims",
            *lines,
        ]
    )
    return subprocess.run(
        [sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=60
    )


def test_a_claim_is_refused_to_another_process_until_released(tmp_path):
    path = tmp_path / "judge.sqlite3"
    cache = AnswerCache(path)
    assert cache._claims.try_lock(KEY)
    got = other_process(path, f"print(db.try_lock({KEY!r}), db.try_lock({OTHER!r}))")
    assert got.stdout.split() == ["False", "True"], got.stderr
    cache._claims.unlock(KEY)
    got = other_process(path, f"print(db.try_lock({KEY!r}))")
    assert got.stdout.split() == ["True"], got.stderr


def test_the_claim_of_a_killed_process_is_free_again(tmp_path):
    path = tmp_path / "judge.sqlite3"
    AnswerCache(path)
    got = other_process(
        path,
        f"assert db.try_lock({KEY!r})",
        "sys.stdout.write('claimed\\n'); sys.stdout.flush()",
        "os.kill(os.getpid(), signal.SIGKILL)",
    )
    assert got.returncode == -signal.SIGKILL and got.stdout.split() == ["claimed"], got.stderr
    cache = AnswerCache(path)
    assert cache._claims.try_lock(KEY)  # the kernel dropped the dead process's lock
    cache._claims.unlock(KEY)
