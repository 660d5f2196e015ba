"""Named fault points that only a test enables (the etcd "failpoint" idea).

Code calls :func:`hit` at named points (:data:`POINTS`, and those the leaderboard registers).
``ETC_FAULTPOINTS``, set only by tests, lists ``point:N``: "SIGKILL this process at the N-th
pass of that point", counted per process, so a crash test kills at the moment it names instead
of after a sleep a fast machine outruns. The process first writes ``faultpoint <point>:<N>`` on
stderr, so the test sees which point fired.
"""

from __future__ import annotations

import os
import signal
import sys
import threading

__all__ = ["ENV", "POINTS", "hit", "register", "reset"]

#: The setting that enables fault points (unset everywhere but in tests).
ENV = "ETC_FAULTPOINTS"

#: The library's points.
POINTS = {
    "judge_batch_submitted": "a judge batch is created and its id stored, nothing polled yet",
    "judge_batch_polled": "a judge batch was read once (each poll passes it)",
}
#: Every point a schedule may name: the library's and the registered ones.
_KNOWN: dict[str, str] = dict(POINTS)


def register(points: dict[str, str]) -> None:
    """Add points (name -> when it passes) that a schedule may name (the leaderboard's)."""
    _KNOWN.update(points)


_lock = threading.Lock()
_passes: dict[str, int] = {}


def _schedule(raw: str) -> dict[str, int]:
    """``"after_compute:3,after_claim:1"`` as {point: pass}; an unknown point or a bad count
    raises ValueError (a test's typo must not pass silently)."""
    out: dict[str, int] = {}
    for part in filter(None, (p.strip() for p in raw.split(","))):
        name, _, count = part.partition(":")
        if name not in _KNOWN:
            raise ValueError(f"Unknown fault point {name!r} in {ENV}; known: {', '.join(_KNOWN)}")
        if not count.isdigit() or int(count) < 1:
            raise ValueError(f"{ENV}: {part!r} needs a pass number >= 1, e.g. {name}:1")
        out[name] = int(count)
    return out


def hit(name: str) -> None:
    """Pass the fault point ``name``: SIGKILL this process when ``ETC_FAULTPOINTS`` schedules
    it for this pass."""
    raw = os.environ.get(ENV)
    if not raw:
        return
    wanted = _schedule(raw).get(name)
    if wanted is None:
        return
    with _lock:
        _passes[name] = _passes.get(name, 0) + 1
        if _passes[name] != wanted:
            return
        sys.stderr.write(f"faultpoint {name}:{wanted}\n")
        sys.stderr.flush()
        os.kill(os.getpid(), signal.SIGKILL)


def reset() -> None:
    """Forget the passes counted so far (for a test that uses fault points in its own process)."""
    with _lock:
        _passes.clear()
