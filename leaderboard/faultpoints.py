"""The scoring worker's named fault points, which only a test enables (the etcd "failpoint" idea).

The worker calls :func:`hit` at the points of a job's life (:data:`POINTS`); with
``ETC_FAULTPOINTS=after_compute:3`` (set only by tests) the process SIGKILLs itself at the third
pass of that point, so a crash test kills at the moment it names instead of after a sleep. The
machinery is etclib's (:mod:`etclib.core.faultpoints`); this module names the points.
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
