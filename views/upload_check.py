"""The Submit page's check of an upload, cached for every visitor (pages rerun on every widget
change), bounded in bytes and time, one check at a time per visitor."""

from __future__ import annotations

import hashlib
import pickle
import threading
import time
from collections import OrderedDict

from .submission import Validation, validate_upload

#: The most bytes the cached checks may hold together (pickled).
MAX_BYTES = 8_000_000
#: How long a check is kept, in seconds.
TTL_S = 600.0

_LOCK = threading.Lock()
#: notified when a visitor's check ends
_ENDED = threading.Condition(_LOCK)
#: the visitors whose check is running, and how many checks wait for theirs
_RUNNING: set[str] = set()
_WAITING = [0]
#: key -> (stored at, size in bytes, the check), least recently used first
_ENTRIES: OrderedDict[str, tuple[float, int, Checked]] = OrderedDict()


#: The Submit page's check of an upload (when ``ok``, with the validated ``predictions``).
Checked = Validation
validate = validate_upload


def size_of(check: Validation) -> int:
    """The bytes an entry counts for: the check pickled."""
    return len(pickle.dumps(check, protocol=pickle.HIGHEST_PROTOCOL))


def held_bytes() -> int:
    """Bytes the cache holds now."""
    with _LOCK:
        return sum(size for _, size, _ in _ENTRIES.values())


def entries() -> int:
    """Checks the cache holds now."""
    with _LOCK:
        return len(_ENTRIES)


def clear() -> None:
    """Forget every cached check."""
    with _LOCK:
        _ENTRIES.clear()


def _evict(at: float) -> None:
    for key in [k for k, (stored, _, _) in _ENTRIES.items() if at - stored > TTL_S]:
        del _ENTRIES[key]
    total = sum(size for _, size, _ in _ENTRIES.values())
    while _ENTRIES and total > MAX_BYTES:
        _, (_, size, _) = _ENTRIES.popitem(last=False)
        total -= size


def waiting() -> int:
    """Checks waiting now for the same visitor's running one."""
    with _LOCK:
        return _WAITING[0]


def _cached(key: str, at: float) -> Checked | None:
    hit = _ENTRIES.get(key)
    if hit is None or at - hit[0] > TTL_S:
        return None
    _ENTRIES.move_to_end(key)
    return hit[2]


def checked(data: bytes, name: str, visitor: str = "") -> Checked:
    """The check of upload ``data``: cached, or made once ``visitor`` has no other running."""
    key = hashlib.sha256(data).hexdigest() + "\0" + name
    with _ENDED:
        _WAITING[0] += 1
        _ENDED.wait_for(lambda: visitor not in _RUNNING)
        _WAITING[0] -= 1
        hit = _cached(key, time.monotonic())
        if hit is not None:
            return hit
        _RUNNING.add(visitor)
    try:
        at = time.monotonic()
        check = validate(data, name)
        size = size_of(check)
    finally:
        with _ENDED:
            _RUNNING.discard(visitor)
            _ENDED.notify_all()
    with _LOCK:
        if size <= MAX_BYTES:
            _ENTRIES[key] = (at, size, check)
            _ENTRIES.move_to_end(key)
        _evict(at)
    return check
