"""Persistent cache of judge answers: one SQLite file, safe for threads and processes.

Each row is one parsed answer, keyed by :func:`request_key`: a SHA-256 over the provider, the
model, the prompt template's tag (version and hash) and the full request as sent (messages,
temperature, structured-output settings). Anything that could change the answer changes the
key, so a key never returns a stale answer. Rows are written the moment an answer arrives
(autocommit), so a run that is killed resumes without repeating finished calls. The file is in
WAL mode with a busy timeout, so concurrent runs (threads or processes) read and write it
without corrupting it; the same answer written twice is simply replaced.

Location: ``judge.sqlite3`` under :func:`etclib.config.cache_dir` (``ETC_CACHE_DIR``).
Deleting the file forgets every answer; nothing else refers to it.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
import time
from pathlib import Path
from typing import Any

from .. import config
from ..errors import JudgeError

FILENAME = "judge.sqlite3"
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


class AnswerCache:
    """Key -> parsed answer, backed by SQLite; one connection per thread."""

    def __init__(self, path: str | Path | None = None):
        self.path = Path(path) if path is not None else default_path()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._local = threading.local()
        self._all: list[sqlite3.Connection] = []
        self._lock = threading.Lock()
        self._conn()  # create the schema now, so a bad location fails before any call

    def _conn(self) -> sqlite3.Connection:
        conn = getattr(self._local, "conn", None)
        if conn is not None:
            return conn
        try:
            conn = sqlite3.connect(
                self.path, timeout=60.0, isolation_level=None, check_same_thread=False
            )
            conn.execute("PRAGMA busy_timeout = 60000")
            for attempt in range(50):  # WAL switch needs a moment without other writers
                try:
                    conn.execute("PRAGMA journal_mode = WAL")
                    break
                except sqlite3.OperationalError:
                    time.sleep(0.05 * (attempt + 1))
            conn.execute("PRAGMA synchronous = NORMAL")
            conn.execute(_SCHEMA)
        except sqlite3.DatabaseError as exc:
            raise JudgeError(
                f"{self.path}: cannot open the judge cache ({exc}). Delete the file to start "
                "an empty cache, or point ETC_CACHE_DIR elsewhere."
            ) from exc
        self._local.conn = conn
        with self._lock:
            self._all.append(conn)
        return conn

    def get(self, key: str) -> dict[str, Any] | None:
        """The stored entry for ``key`` (``answer``, ``raw``, ``model_version``, token counts)."""
        row = (
            self._conn()
            .execute(
                "SELECT answer, raw, model_version, input_tokens, output_tokens "
                "FROM answers WHERE key = ?",
                (key,),
            )
            .fetchone()
        )
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
        of the question (e.g. ``{"text": ...}``); the key is what identifies it."""
        self._conn().execute(
            "INSERT OR REPLACE INTO answers VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
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
            ),
        )

    def __len__(self) -> int:
        return self._conn().execute("SELECT COUNT(*) FROM answers").fetchone()[0]

    def count(self, kind: str | None = None) -> int:
        """Stored answers, all or of one kind (``"decompose"``, ``"entail"``, ``"labels"``)."""
        if kind is None:
            return len(self)
        sql = "SELECT COUNT(*) FROM answers WHERE kind = ?"
        return self._conn().execute(sql, (kind,)).fetchone()[0]

    def close(self) -> None:
        """Close every connection this object opened."""
        with self._lock:
            for conn in self._all:
                try:
                    conn.close()
                except sqlite3.Error:
                    pass
            self._all.clear()
        self._local = threading.local()
