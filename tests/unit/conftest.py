"""The unit tier: in-process tests that need no corpus, server, browser or GPU.

While a unit test runs, starting Python, a site, a browser or a server fails, naming the fix:
such a test belongs in tests/integration (library code that runs other programs is left alone,
and so is pytest itself: xdist starts its workers before).
"""

from __future__ import annotations

import os
import socketserver
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest


def _argv(args: Any) -> list[str]:
    raw = [args] if isinstance(args, str | bytes | os.PathLike) else list(args or [])
    return [os.fsdecode(a) for a in raw]


def _is_python_or_site(argv: list[str]) -> bool:
    if not argv:
        return False
    program = Path(argv[0].split()[0]).name
    return (
        argv[0] == sys.executable
        or program.startswith(("python", "streamlit", "chromium"))
        or any(a in ("streamlit", "leaderboard", "etclib") for a in argv[1:3])
    )


def _refuse(what: str) -> None:
    test = os.environ.get("PYTEST_CURRENT_TEST", "a test").rsplit(" ", 1)[0]
    pytest.fail(
        f"{test} starts {what} in the unit tier: move it to tests/integration", pytrace=False
    )


@pytest.fixture(autouse=True)
def _in_process_only(monkeypatch):
    original = subprocess.Popen.__init__

    def guarded(self, args, *a, **k):
        argv = _argv(args)
        if _is_python_or_site(argv):
            _refuse(f"a process ({' '.join(argv[:3])} ...)")
        original(self, args, *a, **k)

    monkeypatch.setattr(subprocess.Popen, "__init__", guarded)
    monkeypatch.setattr(
        socketserver.TCPServer,
        "server_bind",
        lambda self, *a, **k: _refuse(f"a server ({type(self).__name__})"),
    )
