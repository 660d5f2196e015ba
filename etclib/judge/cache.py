"""Persistent cache of judge answers: a SQLite file (default) or a PostgreSQL table.

Each row is one parsed answer, keyed by :func:`request_key`: a SHA-256 over the provider, the
model, the prompt template's tag (version and hash) and the full request as sent (messages,
temperature, structured-output settings). Anything that could change the answer changes the
key, so a key never returns a stale answer. Rows are written the moment an answer arrives
(autocommit), so a run that is killed resumes without repeating finished calls. The same answer
written twice is simply replaced.

Where (``ETC_JUDGE_CACHE``, see :func:`location`):

- a file path, or nothing: SQLite, by default ``judge.sqlite3`` under
  :func:`etclib.config.cache_dir` (``ETC_CACHE_DIR``). The file is in WAL mode with a busy
  timeout, so concurrent runs (threads or processes) read and write it without corrupting it.
  Deleting the file forgets every answer; nothing else refers to it.
- a ``postgresql://`` URL: the table ``judge_answers`` in that database (created on first use),
  shared by every scoring worker on every machine, so a reference is decomposed once for all.

Asked once: :meth:`AnswerCache.once` is the "get or compute once" step of
:meth:`etclib.judge.runner.Judge.ask`. Whoever asks a question first claims its key while it
calls the model; everyone else asking the same question waits and then reads the answer from
the cache. The claim is process-wide (every :class:`AnswerCache` of the process, every thread
and event loop) and, on PostgreSQL, server-wide: a session-level advisory lock on the key
(``pg_advisory_lock(hashtextextended(key, 0))``), which the server releases by itself if the
claiming process dies. On SQLite the claim reaches the other processes of the machine too: an
exclusive POSIX record lock (``lockf``) on one byte of ``<cache>.claims`` chosen by the key, which
the kernel releases by itself if the claiming process dies (one descriptor per file and process,
never closed: closing any descriptor of a file would drop all of the process's locks on it).
Should two answers still be stored for one key (a key's byte shared by chance does not cause
this: it only makes one asker wait), :attr:`AnswerCache.duplicates` counts such writes.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import logging
import os
import sqlite3
import threading
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from .. import config
from ..errors import JudgeError
from ..storage import dialect_for, server, target_of
from ..storage.dialects import sqlite as sqlite_engine

log = logging.getLogger("etclib.judge")

FILENAME = "judge.sqlite3"
#: The table on PostgreSQL (the SQLite file keeps its historical name ``answers``).
PG_TABLE = "judge_answers"
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
_SCHEMA = """
CREATE TABLE IF NOT EXISTS answers (
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
    created REAL NOT NULL
)
"""
# the same columns; REAL is single precision on PostgreSQL, too coarse for a Unix time
_PG_SCHEMA = _SCHEMA.replace("answers (", f"{PG_TABLE} (").replace(
    "created REAL", "created DOUBLE PRECISION"
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


#: claims file -> this process's descriptor of it (opened once, never closed: see above)
_claim_files: dict[str, int] = {}
#: Bytes of a claims file that keys are spread over.
_CLAIM_SPAN = 1 << 40


class _Sqlite:
    """The SQLite file: one connection per thread, WAL mode, autocommit."""

    table = "answers"
    #: Claims reach the other processes (a record lock per key).
    cross_process = True

    def _claims_fd(self) -> int:
        name = str(self.path.with_name(self.path.name + ".claims").resolve())
        with _claims_lock:
            fd = _claim_files.get(name)
            if fd is None:
                fd = os.open(name, os.O_RDWR | os.O_CREAT, 0o644)
                _claim_files[name] = fd
            return fd

    def try_lock(self, key: str) -> bool:
        """Claim ``key`` for this process if no other process holds it (never waits)."""
        import fcntl

        offset = int(hashlib.sha256(key.encode()).hexdigest()[:12], 16) % _CLAIM_SPAN
        try:
            fcntl.lockf(self._claims_fd(), fcntl.LOCK_EX | fcntl.LOCK_NB, 1, offset)
        except OSError:
            return False
        return True

    def unlock(self, key: str) -> None:
        import fcntl

        offset = int(hashlib.sha256(key.encode()).hexdigest()[:12], 16) % _CLAIM_SPAN
        fcntl.lockf(self._claims_fd(), fcntl.LOCK_UN, 1, offset)

    def __init__(self, path: Path):
        self.path = path
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._local = threading.local()
        self._all: list[sqlite3.Connection] = []
        self._lock = threading.Lock()

    def execute(self, sql: str, params: tuple | list = ()) -> sqlite3.Cursor:
        return self._conn().execute(sql, params)

    def _conn(self) -> sqlite3.Connection:
        conn = getattr(self._local, "conn", None)
        if conn is not None:
            return conn
        try:
            conn = sqlite_engine.connect(self.path, busy_ms=60_000).raw
            conn.execute(_SCHEMA)
        except sqlite3.DatabaseError as exc:
            raise JudgeError(
                f"{self.path}: cannot open the judge cache ({exc}). Delete the file to start "
                "an empty cache, or point ETC_JUDGE_CACHE (or ETC_CACHE_DIR) elsewhere."
            ) from exc
        self._local.conn = conn
        with self._lock:
            self._all.append(conn)
        return conn

    def close(self) -> None:
        with self._lock:
            for conn in self._all:
                with contextlib.suppress(sqlite3.Error):
                    conn.close()
            self._all.clear()
        self._local = threading.local()


class _Postgres:
    """The ``judge_answers`` table: statements on the process's pool, claims on a connection of
    this cache's own (advisory locks belong to the session that took them)."""

    table = PG_TABLE

    cross_process = True

    def __init__(self, url: str):
        self.url = url
        self._lock = threading.Lock()
        self._claims: server.Connection | None = None
        try:
            server.ensure_schema(url, "judge-cache", _PG_SCHEMA)
        except Exception as exc:
            raise self._error(exc) from exc

    def _error(self, exc: Exception) -> JudgeError:
        return JudgeError(
            f"The judge cache on {server.redacted(self.url)} failed: {exc}".rstrip()
            + " Check ETC_JUDGE_CACHE and that the server runs (or unset ETC_JUDGE_CACHE to use "
            "the local SQLite file)."
        )

    def execute(self, sql: str, params: tuple | list = ()) -> Any:
        import psycopg

        try:
            with server.pool(self.url).connection() as raw:
                cur = server.Connection(raw).execute(sql, list(params))
                return _Fetched(cur.fetchall() if cur.description else [], cur.rowcount)
        except psycopg.Error as exc:
            raise self._error(exc) from exc

    def try_lock(self, key: str) -> bool:
        """Take the server-wide claim on ``key`` if no other session holds it."""
        return self._advisory("pg_try_advisory_lock", key)

    def unlock(self, key: str) -> None:
        self._advisory("pg_advisory_unlock", key)

    def _advisory(self, function: str, key: str) -> bool:
        import psycopg

        with self._lock:
            try:
                if self._claims is None:
                    self._claims = server.connect(self.url, autocommit=True)
                sql = f"SELECT {function}(hashtextextended(?, 0))"
                return bool(self._claims.execute(sql, [key]).fetchone()[0])
            except psycopg.Error as exc:
                # a lost session has lost its claims too: reconnect on the next claim
                if self._claims is not None:
                    with contextlib.suppress(psycopg.Error):
                        self._claims.close()
                self._claims = None
                raise self._error(exc) from exc

    def close(self) -> None:
        with self._lock:
            if self._claims is not None:
                with contextlib.suppress(Exception):
                    self._claims.close()
                self._claims = None


#: Storage engine (:mod:`etclib.storage.dialects`) -> how the cache keeps its table there.
_ENGINES: dict[str, type] = {"sqlite": _Sqlite, "postgresql": _Postgres}


class _Fetched:
    """Rows read from the server before its connection went back to the pool."""

    def __init__(self, rows: list, rowcount: int):
        self._rows = rows
        self.rowcount = rowcount

    def fetchone(self):
        return self._rows[0] if self._rows else None

    def fetchall(self):
        return self._rows


class AnswerCache:
    """Key -> parsed answer, in SQLite or PostgreSQL (:func:`location`); safe for threads.

    ``path``: a file path or a ``postgresql://`` URL; default :func:`location`.
    """

    def __init__(self, path: str | Path | None = None):
        target = location() if path is None else path
        self.duplicates = 0  # answers stored for a key that was already stored
        self.waits = 0  # answers once() found written by another asker meanwhile
        self._counts = threading.Lock()
        self._dialect = dialect_for(target)
        if self._dialect.name not in _ENGINES:
            raise JudgeError(
                f"The judge cache cannot be kept in {target} ({self._dialect.name}). Point "
                f"ETC_JUDGE_CACHE at a file (SQLite) or a postgresql:// URL; engines: "
                f"{', '.join(_ENGINES)}."
            )
        if self._dialect.server:
            self.path: Path | None = None
            self.where = server.redacted(str(target))
            self._id = str(target)
            self._db: _Sqlite | _Postgres = _ENGINES[self._dialect.name](str(target))
        else:
            self.path = Path(target)
            self.where = str(self.path)
            self._db = _ENGINES[self._dialect.name](self.path)
            self._id = str(self.path.resolve())
            self._db._conn()  # create the schema now, so a bad location fails before any call

    @property
    def shared(self) -> bool:
        """Whether the cache is on a server (its round trips then run in a thread, off the
        event loop); claims reach other processes on both engines."""
        return self._dialect.server

    def get(self, key: str) -> dict[str, Any] | None:
        """The stored entry for ``key`` (``answer``, ``raw``, ``model_version``, token counts)."""
        row = self._db.execute(
            "SELECT answer, raw, model_version, input_tokens, output_tokens "
            f"FROM {self._db.table} WHERE key = ?",
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
        table = self._db.table
        marks = ", ".join("?" * len(_COLUMNS))
        added = self._db.execute(
            f"INSERT INTO {table} ({', '.join(_COLUMNS)}) VALUES ({marks}) "
            "ON CONFLICT (key) DO NOTHING",
            values,
        ).rowcount
        if added == 0:
            self._db.execute(
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

        ``stored`` is the cached entry (as :meth:`get`), possibly written by another asker while
        this one waited; when it is None, this asker holds the key's claim and should call the
        model and :meth:`put` the answer inside the block. The claim is released on exit, also
        when the call failed (the next waiter then tries itself). Waiting never blocks the event
        loop: it looks again after a short pause (0.02 s, growing to 0.5 s); on a server, each
        look runs in a thread.

        ``gate``: the asker's concurrency slots. The first claim is then tried while holding one
        of them, so an asker does not sit on a claim that others wait for while its own call
        waits for a slot (with several workers sharing references, the first to start would
        otherwise claim them all and answer them one slot at a time). Waiting for another
        asker's answer holds no slot (nor do the later looks, so the answer is seen as soon as
        it is stored, not after this asker's queue). When ``stored`` is None, this asker holds
        the claim and a slot, which passes to the block: the block must release it
        (``gate.release()``) once its first attempt is done.
        """
        name = (self._id, key)
        pause = _POLL_FIRST
        local = server = holding = False
        claiming: asyncio.Future | None = None
        db: Any = self._db
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
                    if self._db.cross_process:
                        claiming = asyncio.ensure_future(self._off_loop(db.try_lock, key))
                        server = await asyncio.shield(claiming)
                        claiming = None
                    else:
                        server = True
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
                if server and self._db.cross_process:
                    await self._off_loop(db.unlock, key)
            finally:
                if local:
                    with _claims_lock:
                        _claimed.discard(name)

    def __len__(self) -> int:
        return self._db.execute(f"SELECT COUNT(*) FROM {self._db.table}").fetchone()[0]

    def count(self, kind: str | None = None) -> int:
        """Stored answers, all or of one kind (``"decompose"``, ``"entail"``, ``"labels"``)."""
        if kind is None:
            return len(self)
        sql = f"SELECT COUNT(*) FROM {self._db.table} WHERE kind = ?"
        return self._db.execute(sql, (kind,)).fetchone()[0]

    def close(self) -> None:
        """Close every connection this object opened (a PostgreSQL pool stays for the process)."""
        self._db.close()
