"""Named fault points that only a test enables (the etcd "failpoint" idea).

The scoring worker calls :func:`hit` at the named points of a job's life (:data:`POINTS`).
Nothing happens unless ``ETC_FAULTPOINTS`` is set, which only tests do: a comma-separated list
of ``point:N``, each meaning "SIGKILL this process at the N-th pass of that point", counted
per process over all its threads. ``ETC_FAULTPOINTS=after_compute:3`` kills a worker process
as its third job's scores are computed and before they are stored, so a crash test kills at the
moment it names, on any machine, instead of after a sleep that a fast machine outruns.

The machinery is etclib's (:mod:`etclib.core.faultpoints`, whose judge batch points a schedule may
name too); this module names the worker's points and registers them.

Before dying, the process writes ``faultpoint <point>:<N>`` on stderr (flushed), so the test
sees which point fired.
"""

from __future__ import annotations

import os  # noqa: F401 - tests record os.kill through this module

from etclib.core import faultpoints as _points
from etclib.core.faultpoints import ENV, _schedule, hit, reset

__all__ = ["ENV", "POINTS", "_schedule", "hit", "reset"]

#: The points the worker passes, in the order of a job's life.
POINTS = {
    "after_claim": "the job is claimed (running, leased), nothing computed yet",
    "after_compute": "its scores are computed, nothing stored",
    "before_store": "inside the storing transaction, before the job's row is locked and written",
    "after_store": "inside the storing transaction: scores written, job not yet marked done",
    "during_status": "inside the storing transaction: job marked done, submission status not",
    "after_commit": "the transaction committed: the job is done and its scores visible",
}

_points.register(POINTS)
