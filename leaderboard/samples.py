"""Resampled scores of stored score rows, computed once per row and kept by content.

Resampling is the costly part of ranking, and a stored score row never changes, so its resampled
scores are kept in memory and under ``$ETC_CACHE_DIR/bootstrap/``, keyed by a hash of all they
depend on, the metric's code included (:func:`content_key`). A file that cannot be read is
recomputed: nothing here is the only copy of anything.
"""

from __future__ import annotations

import hashlib
import logging
import os
import sys
import tempfile
import threading
from collections import OrderedDict
from collections.abc import Mapping
from functools import lru_cache
from pathlib import Path
from types import ModuleType

import numpy as np

from etclib import metrics
from etclib.metrics import Metric, MetricData, significance

from . import settings

log = logging.getLogger(__name__)

#: Rows kept in this process (a row: each ranking key's resampled scores and interval).
MEMORY_ROWS = 4096

#: Ranking key -> (resampled scores, (lo, hi) of their 95% interval).
Row = dict[str, tuple[np.ndarray, tuple[float, float]]]

_memory: OrderedDict[str, Row] = OrderedDict()
_lock = threading.Lock()


def draw(n_items: int) -> significance.Resamples:
    """The board's shared resamples for ``n_items`` items under the current settings."""
    return significance.draw(n_items, settings.resamples(), settings.seed())


def ranking_keys(group: str) -> list[str]:
    """The ranking keys of a metric group, in the order its module declares them."""
    return [f.key for f in metrics.get(group).FACTS if f.ranking]


def definition_modules(group: str | Metric) -> list[ModuleType]:
    """The modules a row's resampled scores come from: the metric's classes and what they use."""
    registered = {m if isinstance(m, str) else type(m).__module__ for m in metrics.METRICS.values()}
    metric = metrics.get(group) if isinstance(group, str) else group
    found: dict[str, ModuleType] = {}
    todo = [sys.modules[c.__module__] for c in type(metric).__mro__ if issubclass(c, Metric)]
    while todo:
        module = todo.pop()
        if module.__name__ in found:
            continue
        found[module.__name__] = module
        todo.extend(
            v
            for v in vars(module).values()
            if isinstance(v, ModuleType) and v.__name__ in registered
        )
    found.setdefault(significance.__name__, significance)
    return [found[name] for name in sorted(found)]


def definition(group: str) -> str:
    """SHA-256 of the source of :func:`definition_modules`: a metric whose code changed never
    reads the values its former code kept."""
    return _definition(metrics.get(group))


@lru_cache(maxsize=64)
def _definition(metric: Metric) -> str:
    h = hashlib.sha256()
    for module in definition_modules(metric):
        h.update(f"{module.__name__}\0".encode())
        path = getattr(module, "__file__", None)
        try:
            h.update(Path(path).read_bytes() if path else b"")
        except OSError:  # no source to read (a frozen or generated module): its name only
            pass
        h.update(b"\0")
    return h.hexdigest()


def content_key(group: str, arrays: Mapping[str, np.ndarray], res: significance.Resamples) -> str:
    """SHA-256 of everything a row's resampled scores depend on."""
    h = hashlib.sha256()
    keys = ",".join(ranking_keys(group))
    h.update(f"{group}\0{definition(group)}\0{keys}\0".encode())
    h.update(f"{res.n_items}\0{len(res)}\0{res.seed}\0".encode())
    for name in sorted(arrays):
        arr = np.ascontiguousarray(arrays[name])
        h.update(f"{name}\0{arr.dtype.str}\0{arr.shape}\0".encode())
        h.update(arr.tobytes())
    return h.hexdigest()


def folder() -> Path:
    """Where rows are kept on disk (``$ETC_CACHE_DIR/bootstrap``)."""
    from etclib.core.config import cache_dir

    return cache_dir() / "bootstrap"


def _read(key: str, names: list[str], resamples: int) -> Row | None:
    # one row per ranking key: its resampled scores, then lo and hi
    path = folder() / f"{key}.npy"
    try:
        table = np.load(path, allow_pickle=False)
        if table.shape != (len(names), resamples + 2):
            raise ValueError(f"shape {table.shape}")
    except FileNotFoundError:
        return None
    except Exception as exc:  # noqa: BLE001 - a damaged file is recomputed
        log.warning("ignoring an unreadable bootstrap cache file %s: %s", path, exc)
        return None
    return {
        n: (table[i, :-2], (float(table[i, -2]), float(table[i, -1]))) for i, n in enumerate(names)
    }


def _write(key: str, row: Row) -> None:
    if not row:
        return
    table = np.vstack([np.concatenate([values, bounds]) for values, bounds in row.values()])
    try:
        where = folder()
        where.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=where, prefix=".tmp-", suffix=".npy")
        with os.fdopen(fd, "wb") as f:
            np.save(f, table, allow_pickle=False)
        os.replace(tmp, where / f"{key}.npy")  # readers see a whole file or none
    except OSError as exc:  # a read-only or full disk: the values stay in memory
        log.warning("could not keep bootstrap values on disk: %s", exc)


def _remember(key: str, row: Row) -> None:
    with _lock:
        _memory[key] = row
        _memory.move_to_end(key)
        while len(_memory) > MEMORY_ROWS:
            _memory.popitem(last=False)


def _recall(key: str) -> Row | None:
    with _lock:
        row = _memory.get(key)
        if row is not None:
            _memory.move_to_end(key)
        return row


def resampled_rows(rows: list[tuple[str, Mapping[str, np.ndarray]]], n_items: int) -> list[Row]:
    """For each (metric group, per-item arrays) of a stored score row: every ranking key's
    resampled scores and 95% interval on the board's resamples of ``n_items`` items. Rows not
    kept yet are resampled together, in one call."""
    res = draw(n_items)
    keys = [content_key(group, arrays, res) for group, arrays in rows]
    out: list[Row | None] = []
    for (group, _), key in zip(rows, keys):
        if not ranking_keys(group):
            # nothing ranks on it (erc_loo): resampling it would only cost every cold board
            out.append({})
            continue
        row = _recall(key)
        if row is None:
            row = _read(key, ranking_keys(group), len(res))
            if row is not None:
                _remember(key, row)
        out.append(row)
    missing = [i for i, row in enumerate(out) if row is None]
    if missing:
        fresh = significance.resampled_many(
            [(rows[i][0], MetricData(dict(rows[i][1]))) for i in missing], res
        )
        for i, samples in zip(missing, fresh):
            names = list(samples)
            bounds = (
                significance.interval_rows(np.vstack([samples[n] for n in names])) if names else []
            )
            row = {n: (samples[n], (float(b[0]), float(b[1]))) for n, b in zip(names, bounds)}
            _remember(keys[i], row)
            _write(keys[i], row)
            out[i] = row
    return [row or {} for row in out]


def warm(result) -> None:
    """Resample a just-stored ``ScoreResult``'s rows for the next board (failures are logged)."""
    try:
        rows = [
            (group, dict(data.arrays))
            for group, data in result.data.items()
            if group in metrics.METRICS and data.arrays
        ]
        if rows:
            resampled_rows(rows, int(result.n_items))
    except Exception:  # noqa: BLE001 - a cache, never a reason for a job to fail
        log.exception("could not precompute the bootstrap values of a stored score")


def forget() -> None:
    """Empty this process's memory of rows (tests; the disk copies stay)."""
    with _lock:
        _memory.clear()
