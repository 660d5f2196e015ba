"""Persistent cache of judge answers: the table ``judge_answers`` of a SQLite file (default) or
of a PostgreSQL database (``ETC_JUDGE_CACHE``, :func:`location`), shared by scoring workers.

A key (:func:`request_key`) hashes everything sent, so it never returns a stale answer. Rows are
written the moment an answer arrives, so a killed run resumes without repeating finished calls.
:meth:`AnswerCache.once` asks each question once across runs, threads and processes.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import logging
import threading
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from etclib.core import config
from etclib.core.errors import JudgeError
from etclib.storage import Fault, target_of
from etclib.storage.database import Database, Schema, Store, key_of

log = logging.getLogger("etclib.judge")

FILENAME = "judge.sqlite3"
TABLE = "judge_answers"
_COLUMNS = (
    "key",
    "kind",
    "provider",
    "model",
    "prompt",
    "request",
    "raw",
    "answer",
    "model_version",
    "input_tokens",
    "output_tokens",
    "created",
)


def _adopt_answers(cur: Any) -> None:
    """A cache file of the earlier versions keeps its answers: its table ``answers`` takes the
    name the table has everywhere."""
    if cur.dialect.has_table(cur, "answers") and not cur.dialect.has_table(cur, TABLE):
        cur.execute(f"ALTER TABLE answers RENAME TO {TABLE}")


def _error(fault: Fault) -> JudgeError:
    if fault.kind == "server":
        todo = (
            "Check ETC_JUDGE_CACHE and that the server runs (or unset ETC_JUDGE_CACHE to use the "
            "local SQLite file)."
        )
    else:
        todo = (
            "Delete the file to start an empty cache, or point ETC_JUDGE_CACHE (or "
            "ETC_CACHE_DIR) elsewhere."
        )
    return JudgeError(f"{fault.where}: cannot open the judge cache ({fault.reason}). {todo}")


_DDL = f"""CREATE TABLE IF NOT EXISTS {TABLE} (
    key TEXT PRIMARY KEY,
    kind TEXT NOT NULL,
    provider TEXT NOT NULL,
    model TEXT NOT NULL,
    prompt TEXT NOT NULL,
    request TEXT NOT NULL,
    raw TEXT NOT NULL,
    answer TEXT NOT NULL,
    model_version TEXT,
    input_tokens INTEGER NOT NULL DEFAULT 0,
    output_tokens INTEGER NOT NULL DEFAULT 0,
    created DOUBLE PRECISION NOT NULL
)"""
#: The judge cache as the storage layer sees it.
CACHE = Store(
    name="judge-cache", error=_error, schema=Schema("judge-cache", [(1, [_adopt_answers, _DDL])])
)

#: First and longest pause (seconds) between looks while another asker holds a key.
_POLL_FIRST = 0.02
_POLL_MAX = 0.5

# Keys claimed in this process, by (cache location, key): the process-wide half of once().
_claims_lock = threading.Lock()
_claimed: set[tuple[str, str]] = set()


def request_key(provider: str, model: str, prompt_tag: str, request: dict[str, Any]) -> str:
    """The cache key of one request: SHA-256 of its canonical JSON with provider and model."""
    blob = json.dumps(
        {"provider": provider, "model": model, "prompt": prompt_tag, "request": request},
        ensure_ascii=False,
        sort_keys=True,
        separators=(",", ":"),
    )
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


def default_path() -> Path:
    """``<cache_dir>/judge.sqlite3``."""
    return config.cache_dir() / FILENAME


def location() -> str | Path:
    """Where the cache lives: ``ETC_JUDGE_CACHE`` (a file path or a ``postgresql://`` URL), else
    :func:`default_path`."""
    explicit = config.setting("ETC_JUDGE_CACHE")
    if not explicit:
        return default_path()
    target = target_of(explicit)
    return target if isinstance(target, str) else Path(target).expanduser()


class AnswerCache:
    """Key -> parsed answer, in SQLite or PostgreSQL (``path``, default :func:`location`);
    safe for threads."""

    def __init__(self, path: str | Path | None = None):
        target = location() if path is None else target_of(path)
        self.duplicates = 0  # answers stored for a key that was already stored
        self.waits = 0  # answers once() found written by another asker meanwhile
        self._counts = threading.Lock()
        self._db = Database(target, CACHE, busy_ms=60_000)
        self._claims = self._db.dialect.claims(target)
        #: The file, or None on a server; where: what messages show (no password).
        self.path: Path | None = None if self._db.dialect.server else Path(target)
        self.where = self._db.label
        self._id = key_of(target)

    @property
    def shared(self) -> bool:
        """Whether the cache is on a server (its round trips then run in a thread, off the
        event loop)."""
        return self._db.dialect.server

    def _execute(self, sql: str, params: tuple | list = ()) -> Any:
        return self._db.cursor().execute(sql, list(params))

    def _try_lock(self, key: str) -> bool:
        with self._db.faults():
            return self._claims.try_lock(key)

    def _unlock(self, key: str) -> None:
        with self._db.faults():
            self._claims.unlock(key)

    def get(self, key: str) -> dict[str, Any] | None:
        """The stored entry for ``key`` (``answer``, ``raw``, ``model_version``, token counts)."""
        row = self._execute(
            "SELECT answer, raw, model_version, input_tokens, output_tokens "
            f"FROM {TABLE} WHERE key = ?",
            (key,),
        ).fetchone()
        if row is None:
            return None
        return {
            "answer": json.loads(row[0]),
            "raw": row[1],
            "model_version": row[2],
            "input_tokens": row[3],
            "output_tokens": row[4],
        }

    def put(
        self,
        key: str,
        *,
        kind: str,
        provider: str,
        model: str,
        prompt: str,
        request: dict[str, Any],
        raw: str,
        answer: Any,
        model_version: str | None = None,
        input_tokens: int = 0,
        output_tokens: int = 0,
    ) -> None:
        """Store one answer now (committed before returning). ``request`` is what the row shows
        of the question (e.g. ``{"text": ...}``); the key is what identifies it. An answer
        stored before under the same key is replaced (and counted in :attr:`duplicates`)."""
        values = (
            key,
            kind,
            provider,
            model,
            prompt,
            json.dumps(request, ensure_ascii=False, sort_keys=True),
            raw,
            json.dumps(answer, ensure_ascii=False),
            model_version,
            int(input_tokens),
            int(output_tokens),
            time.time(),
        )
        table = TABLE
        marks = ", ".join("?" * len(_COLUMNS))
        added = self._execute(
            f"INSERT INTO {table} ({', '.join(_COLUMNS)}) VALUES ({marks}) "
            "ON CONFLICT (key) DO NOTHING",
            values,
        ).rowcount
        if added == 0:
            self._execute(
                f"UPDATE {table} SET {', '.join(f'{c} = ?' for c in _COLUMNS[1:])} WHERE key = ?",
                (*values[1:], key),
            )
            with self._counts:
                self.duplicates += 1
            log.info("judge cache %s: answer for key %s stored again", self.where, key[:12])

    async def aget(self, key: str) -> dict[str, Any] | None:
        """:meth:`get` from a coroutine: on a server, in a thread, so that the round trip does
        not stall the other requests of the event loop; the local file is read in place."""
        return await self._off_loop(self.get, key)

    async def aput(self, key: str, **fields: Any) -> None:
        """:meth:`put` from a coroutine (in a thread on a server, like :meth:`aget`)."""
        await self._off_loop(lambda: self.put(key, **fields))

    async def _off_loop(self, fn, *args):
        if self.shared:
            return await asyncio.to_thread(fn, *args)
        return fn(*args)

    @contextlib.asynccontextmanager
    async def once(
        self, key: str, gate: asyncio.Semaphore | None = None
    ) -> AsyncIterator[dict[str, Any] | None]:
        """Get or compute once: ``async with cache.once(key) as stored:``.

        ``stored`` is the cached entry, possibly written by another asker meanwhile; when it is
        None, this asker holds the key's claim (released on exit) and should call the model and
        :meth:`put` the answer inside the block. Waiting polls without blocking the event loop.

        ``gate``: the asker's concurrency slots. The first claim is tried holding one, so an
        asker never sits on a claim others wait for while its own call waits for a slot (the
        first worker would otherwise claim every shared reference). Waiting holds no slot. When
        ``stored`` is None the slot passes to the block, which must ``gate.release()`` it.
        """
        name = (self._id, key)
        pause = _POLL_FIRST
        local = server = holding = False
        claiming: asyncio.Future | None = None
        try:
            first = True
            while True:
                if gate is not None and first:
                    await gate.acquire()
                    holding = True
                first = False
                if not local:
                    with _claims_lock:
                        if name not in _claimed:
                            _claimed.add(name)
                            local = True
                if local and not server:
                    claiming = asyncio.ensure_future(self._off_loop(self._try_lock, key))
                    server = await asyncio.shield(claiming)
                    claiming = None
                stored = await self.aget(key)
                if stored is not None or server:
                    if stored is not None:  # another asker's answer
                        with self._counts:
                            self.waits += 1
                    break
                if holding:
                    gate.release()  # type: ignore[union-attr]
                    holding = False
                await asyncio.sleep(pause)
                pause = min(pause * 1.5, _POLL_MAX)
            if gate is not None and stored is None and not holding:
                await gate.acquire()  # claimed while waiting (the first asker failed)
                holding = True
            if holding and stored is not None:
                gate.release()  # type: ignore[union-attr]
            holding = False  # when claimed, the slot is the block's now
            yield stored
        finally:
            if holding:
                gate.release()  # type: ignore[union-attr]
            if claiming is not None:  # cancelled while claiming: the claim may have been taken
                with contextlib.suppress(Exception):
                    server = await claiming
            try:
                if server:
                    await self._off_loop(self._unlock, key)
            finally:
                if local:
                    with _claims_lock:
                        _claimed.discard(name)

    def __len__(self) -> int:
        return self._execute(f"SELECT COUNT(*) FROM {TABLE}").fetchone()[0]

    def count(self, kind: str | None = None) -> int:
        """Stored answers, all or of one kind (``"decompose"``, ``"entail"``, ``"labels"``)."""
        if kind is None:
            return len(self)
        sql = f"SELECT COUNT(*) FROM {TABLE} WHERE kind = ?"
        return self._execute(sql, (kind,)).fetchone()[0]

    def close(self) -> None:
        """Close every connection this object opened."""
        self._claims.close()
        self._db.close()
