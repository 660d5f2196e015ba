"""The site's admin forms: each browser session counts its own wrong admin tokens.

``with admin_session():`` around an admin action makes :mod:`etclib.admintoken` count a wrong
token against this visitor's session (a random key kept in ``st.session_state``), so one
session gets :data:`etclib.admintoken.MAX_FAILURES` guesses per window, and each is logged.
"""

from __future__ import annotations

import secrets
from collections.abc import Iterator
from contextlib import contextmanager

from etclib import admintoken


def session_key() -> str:
    """This browser session's key for admin attempts (random; kept in ``st.session_state``)."""
    import streamlit as st

    return st.session_state.setdefault("admin_session_key", secrets.token_hex(16))


@contextmanager
def admin_session() -> Iterator[None]:
    """Count the admin attempts made in the block against this browser session."""
    with admintoken.session(session_key()):
        yield
