"""The corpus as an embedded DuckDB database, for the site's corpus browser and the statistics.

Tables: ``meta`` (the corpus ``content_hash``, ``schema`` version and file ``fingerprint``),
``dialogues``, ``utterances`` (one row per utterance with its labels, votes, ``agreement`` and
``search_text``) and ``participants``. The database is rebuilt only when the corpus changes,
into a temporary file that then replaces the old one, so a crash never leaves a half-built
store. Every query that takes user input is parameterised.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from etclib.core import config
from etclib.storage import duckfile
from etclib.data.corpus import BIG_FIVE, CATEGORIES, Corpus, check_root, load_corpus
from etclib.data.corpus import _fingerprint as corpus_fingerprint
from etclib.storage.duckfile import not_duckdb
from etclib.core.errors import StoreError

SCHEMA_VERSION = "2"
AGREEMENT_LEVELS = ("unanimous", "majority", "none")
_lock = threading.Lock()
_connections: dict[str, Any] = {}


def _agreement(annotations: tuple[tuple[str, ...], ...]) -> str:
    if len(set(annotations)) == 1:
        return "unanimous"
    if any(sum(c in a for a in annotations) >= 2 for c in CATEGORIES):
        return "majority"
    return "none"


def _build(con, corpus: Corpus) -> None:
    import pandas as pd

    dialogues = pd.DataFrame(
        [
            {
                "dialogue_id": d.dialogue_id,
                "file": d.file,
                "split": d.split,
                "dialogue_emotion": d.dialogue_emotion,
                "speaker_id": d.speaker_id,
                "listener_id": d.listener_id,
            }
            for d in corpus.dialogues
        ]
    )
    rows = []
    for d in corpus.dialogues:
        for u in d.utterances:
            label = u.label
            row = {
                "dialogue_id": u.dialogue_id,
                "turn": u.turn,
                "role": u.role,
                "position": u.position,
                "participant_id": u.participant_id,
                "split": d.split,
                "dialogue_emotion": d.dialogue_emotion,
                "utterance": u.text,
                "transcription": u.transcription,
                "ann1": list(u.annotations[0]),
                "ann2": list(u.annotations[1]),
                "ann3": list(u.annotations[2]),
                "label": list(label),
            }
            row.update({c: c in label for c in CATEGORIES})
            row.update({f"votes_{c}": sum(c in a for a in u.annotations) for c in CATEGORIES})
            row["agreement"] = _agreement(u.annotations)
            # Lower-cased utterance and transcription, for literal, case-insensitive search.
            row["search_text"] = f"{u.text}\x1f{u.transcription}".lower()
            row["utterance_chars"] = len(u.text)
            row["transcription_chars"] = len(u.transcription)
            rows.append(row)
    utterances = pd.DataFrame(rows)
    participants = pd.DataFrame(
        [
            {
                "participant_id": p.participant_id,
                **p.scores,
                "responses": json.dumps(p.responses, ensure_ascii=False),
            }
            for p in corpus.participants.values()
        ]
    )
    con.register("dialogues_df", dialogues)
    con.register("utterances_df", utterances)
    con.register("participants_df", participants)
    con.execute("CREATE TABLE dialogues AS SELECT * FROM dialogues_df ORDER BY dialogue_id")
    con.execute(
        "CREATE TABLE utterances AS SELECT * REPLACE ("
        "CAST(ann1 AS VARCHAR[]) AS ann1, CAST(ann2 AS VARCHAR[]) AS ann2, "
        "CAST(ann3 AS VARCHAR[]) AS ann3, CAST(label AS VARCHAR[]) AS label) "
        "FROM utterances_df ORDER BY dialogue_id, position"
    )
    con.execute(
        "CREATE TABLE participants AS SELECT * FROM participants_df ORDER BY participant_id"
    )
    con.execute("CREATE TABLE meta (key VARCHAR PRIMARY KEY, value VARCHAR)")
    con.execute(
        "INSERT INTO meta VALUES ('content_hash', ?), ('schema', ?), ('source', ?)",
        [corpus.content_hash, SCHEMA_VERSION, str(corpus.root)],
    )
    con.execute("CREATE INDEX utt_dialogue ON utterances (dialogue_id)")
    for name in ("dialogues_df", "utterances_df", "participants_df"):
        con.unregister(name)


def _stored_meta(path: Path) -> dict[str, str] | None:
    import duckdb

    if not_duckdb(path):
        return None  # rebuilt in its place
    try:
        con = duckfile.connect(path, read_only=True)
    except duckdb.Error:
        return None
    try:
        return _meta_of(con)
    finally:
        con.close()


def _quick_fingerprint(root: Path) -> str:
    """The corpus files' names, sizes and modification times, hashed with the folder."""
    digest = hashlib.sha256(str(root).encode())
    digest.update(repr(corpus_fingerprint(root)).encode())
    return digest.hexdigest()


def _fresh(meta: dict[str, str] | None, key: str, value: str) -> bool:
    return meta is not None and meta.get("schema") == SCHEMA_VERSION and meta.get(key) == value


def ensure(path: str | os.PathLike | None = None, data: str | os.PathLike | None = None) -> Path:
    """Build the store at ``path`` unless it is fresh for the corpus at ``data``: the files'
    facts are those recorded (the corpus is not read), else their content hash is the stored
    one (the new facts are then recorded when nothing else has the store open)."""
    import duckdb

    db = config.store_path(path).resolve()
    quick = _quick_fingerprint(check_root(config.data_dir(data).resolve()))
    if db.exists() and _fresh(_stored_meta(db), "fingerprint", quick):
        return db
    corpus = load_corpus(data)
    with _lock:
        if db.exists() and _fresh(_stored_meta(db), "content_hash", corpus.content_hash):
            if str(db) not in _connections:  # record the times (fails harmlessly when in use)
                with contextlib.suppress(duckdb.Error):
                    con = duckfile.connect(db)
                    try:
                        con.execute(
                            "INSERT OR REPLACE INTO meta VALUES ('fingerprint', ?)", [quick]
                        )
                    finally:
                        con.close()
            return db
        db.parent.mkdir(parents=True, exist_ok=True)
        tmp = db.with_name(f".{db.name}.{os.getpid()}.tmp")
        tmp.unlink(missing_ok=True)
        try:
            con = duckfile.connect(tmp)
            try:
                _build(con, corpus)
                con.execute("INSERT INTO meta VALUES ('fingerprint', ?)", [quick])
            finally:
                con.close()
            old = _connections.pop(str(db), None)
            if old is not None:
                old.close()
            os.replace(tmp, db)
        except duckdb.Error as exc:
            raise StoreError(f"Cannot build the corpus store at {db}: {exc}") from exc
        finally:
            tmp.unlink(missing_ok=True)
            Path(str(tmp) + ".wal").unlink(missing_ok=True)
    return db


def connect(path: str | os.PathLike | None = None, data: str | os.PathLike | None = None):
    """A read-only cursor on a fresh store (built first when needed); safe to use per thread.
    The connection is kept per process and store (opening a DuckDB file costs more than the
    freshness check); a rebuild by :func:`ensure` closes it."""
    import duckdb

    db = config.store_path(path).resolve()
    quick = _quick_fingerprint(check_root(config.data_dir(data).resolve()))
    with _lock:
        con = _connections.get(str(db))
        if con is None and db.exists() and not not_duckdb(db):
            with contextlib.suppress(duckdb.Error):
                first = duckfile.connect(db, read_only=True)
                if _fresh(_meta_of(first), "fingerprint", quick):
                    _connections[str(db)] = first
                    return first.cursor()
                first.close()  # no one else has it: ensure() may record the facts or rebuild
        elif con is not None and _fresh(_meta_of(con), "fingerprint", quick):
            return con.cursor()
    ensure(path, data)
    with _lock:
        con = _connections.get(str(db))
        if con is None:
            try:
                con = duckfile.connect(db, read_only=True)
            except duckdb.Error as exc:
                raise StoreError(f"Cannot open the corpus store {db}: {exc}") from exc
            _connections[str(db)] = con
    return con.cursor()


def _meta_of(con) -> dict[str, str] | None:
    import duckdb

    try:
        return dict(con.cursor().execute("SELECT key, value FROM meta").fetchall())
    except duckdb.Error:
        return None


# --- queries for the corpus browser ----------------------------------------------------------


@dataclass
class Filters:
    """Corpus browser filters; every field is optional. Text matches literally (no wildcards)."""

    text: str = ""
    split: str | None = None
    role: str | None = None
    dialogue_emotion: str | None = None
    categories: tuple[str, ...] = ()
    agreement: str | None = None
    big_five: dict[str, tuple[int, int]] | None = None


def _where(f: Filters) -> tuple[str, list[Any]]:
    clauses: list[str] = []
    params: list[Any] = []
    if f.text:
        clauses.append("contains(u.search_text, ?)")
        params.append(f.text.lower())
    for column, value in (
        ("u.split", f.split),
        ("u.role", f.role),
        ("u.dialogue_emotion", f.dialogue_emotion),
        ("u.agreement", f.agreement),
    ):
        if value:
            clauses.append(f"{column} = ?")
            params.append(value)
    for c in f.categories:
        if c not in CATEGORIES:
            raise StoreError(f"Unknown category {c!r}. Available: {', '.join(CATEGORIES)}.")
        clauses.append(f'u."{c}"')
    for trait, (lo, hi) in (f.big_five or {}).items():
        if trait not in BIG_FIVE:
            raise StoreError(f"Unknown Big Five trait {trait!r}. Available: {', '.join(BIG_FIVE)}.")
        clauses.append(f'p."{trait}" BETWEEN ? AND ?')
        params += [int(lo), int(hi)]
    return (" WHERE " + " AND ".join(clauses)) if clauses else "", params


def search(con, filters: Filters, limit: int = 50, offset: int = 0):
    """One page of matching utterances (a DataFrame) and the total number of matches."""
    where, params = _where(filters)
    join = " JOIN participants p USING (participant_id)" if filters.big_five else ""
    base = f"FROM utterances u{join}{where}"
    # One pass: the page and, on every row, the number of matches.
    page = con.execute(
        "SELECT u.dialogue_id, u.turn, u.role, u.split, u.dialogue_emotion, u.utterance, "
        f"u.transcription, u.label, u.agreement, count(*) OVER () AS _total {base} "
        "ORDER BY u.dialogue_id, u.position LIMIT ? OFFSET ?",
        [*params, int(limit), int(offset)],
    ).df()
    if len(page):
        total = int(page["_total"].iloc[0])
    elif offset <= 0:
        total = 0
    else:  # past the last page: count separately
        total = int(con.execute(f"SELECT count(*) {base}", params).fetchone()[0])
    return page.drop(columns="_total"), total


def dialogue(con, dialogue_id: int) -> dict[str, Any] | None:
    """A whole dialogue: metadata, ten utterances with labels, both participants' Big Five."""
    head = con.execute(
        "SELECT dialogue_id, file, split, dialogue_emotion, speaker_id, listener_id "
        "FROM dialogues WHERE dialogue_id = ?",
        [int(dialogue_id)],
    ).fetchone()
    if head is None:
        return None
    keys = ("dialogue_id", "file", "split", "dialogue_emotion", "speaker_id", "listener_id")
    out: dict[str, Any] = dict(zip(keys, head, strict=True))
    out["utterances"] = con.execute(
        "SELECT turn, role, participant_id, utterance, transcription, ann1, ann2, ann3, label, "
        "agreement FROM utterances WHERE dialogue_id = ? ORDER BY position",
        [int(dialogue_id)],
    ).df()
    out["participants"] = con.execute(
        f"SELECT participant_id, {', '.join(BIG_FIVE)} FROM participants "
        "WHERE participant_id IN (?, ?)",
        [out["speaker_id"], out["listener_id"]],
    ).df()
    return out


def dialogue_emotions(con) -> list[str]:
    return [
        r[0]
        for r in con.execute(
            "SELECT DISTINCT dialogue_emotion FROM dialogues ORDER BY 1"
        ).fetchall()
    ]


def dialogue_ids(con, split: str | None = None) -> list[int]:
    sql = (
        "SELECT dialogue_id FROM dialogues" + (" WHERE split = ?" if split else "") + " ORDER BY 1"
    )
    return [r[0] for r in con.execute(sql, [split] if split else []).fetchall()]
