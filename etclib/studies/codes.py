"""Annotator codes: who may answer in a study (Study 2's decisions, the cause layer's items).

An admin issues a code per person and may revoke it; only a SHA-256 hash of each code is stored,
so a leaked database does not leak codes. :func:`annotator` turns a code into the annotator id or
raises AccessDenied.
"""

from __future__ import annotations

import hashlib
import secrets
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from etclib.core.errors import AccessDenied, AnnotationError
from etclib.studies import db as studiesdb

SCHEMA = studiesdb.register(
    "codes",
    """
CREATE TABLE IF NOT EXISTS annotators (
    annotator_id VARCHAR PRIMARY KEY,
    name VARCHAR NOT NULL,
    code_hash VARCHAR NOT NULL UNIQUE,
    issued_at TIMESTAMP NOT NULL,
    revoked BOOLEAN NOT NULL
);
""",
)


def require_admin(token: str | None) -> None:
    """Raise AccessDenied unless ``token`` is the admin token (``ETC_ADMIN_TOKEN``); the check
    of :mod:`etclib.core.admintoken` (strength, rate limit, logging)."""
    from etclib.core import admintoken

    admintoken.verify(token, "judge-vs-human admin")


def _hash_code(code: str) -> str:
    return hashlib.sha256(f"etc-annotator-code:{code.strip()}".encode()).hexdigest()


@dataclass(frozen=True)
class IssuedCode:
    """A new annotator code: show ``code`` once to the annotator; only its hash is stored."""

    annotator_id: str
    name: str
    code: str


def issue_code(
    admin_token: str | None, name: str = "", *, db: str | Path | None = None
) -> IssuedCode:
    """Issue a new annotator code (needs the admin token). ``name`` is a note for the admin."""
    require_admin(admin_token)
    code = secrets.token_urlsafe(12)
    annotator_id = f"ann-{secrets.token_hex(4)}"
    with studiesdb.connect(db) as con:
        con.schema("codes", SCHEMA)
        con.execute(
            "INSERT INTO annotators VALUES (?, ?, ?, ?, false)",
            [annotator_id, name.strip(), _hash_code(code), studiesdb.now()],
        )
    return IssuedCode(annotator_id, name.strip(), code)


def revoke_code(
    admin_token: str | None, annotator_id: str, *, db: str | Path | None = None
) -> None:
    """Revoke an annotator's code (needs the admin token); their past answers are kept."""
    require_admin(admin_token)
    with studiesdb.connect(db) as con:
        con.schema("codes", SCHEMA)
        found = con.execute(
            "UPDATE annotators SET revoked = true WHERE annotator_id = ? RETURNING annotator_id",
            [annotator_id],
        ).fetchall()
    if not found:
        raise AnnotationError(f"No annotator {annotator_id!r}: see annotators() for the ids.")


def annotator(con: Any, code: str | None) -> str:
    """The annotator id of ``code`` on an open connection; AccessDenied for a bad code."""
    if not code or not str(code).strip():
        raise AccessDenied("An annotator code is needed to answer: ask the study's admin for one.")
    con.schema("codes", SCHEMA)
    row = con.execute(
        "SELECT annotator_id, revoked FROM annotators WHERE code_hash = ?", [_hash_code(str(code))]
    ).fetchone()
    if row is None:
        raise AccessDenied("Unknown annotator code: check it for typos or ask the admin for one.")
    if row[1]:
        raise AccessDenied("This annotator code was revoked: ask the admin for a new one.")
    return row[0]


def annotator_for_code(code: str | None, *, db: str | Path | None = None) -> str:
    """The annotator id that ``code`` belongs to; raises AccessDenied for a bad code."""
    with studiesdb.connect(db, read_only=True) as con:
        return annotator(con, code)
