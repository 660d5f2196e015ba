"""How a page shows a failure: an ``EtcError`` becomes an ``st.error`` whose text is escaped.

A library or leaderboard error's message may quote what a visitor typed or uploaded, so it is
printed literally (:func:`views.text.escape_markdown`), never as Markdown or HTML. Pages wrap a
step in :func:`shown_errors` (``with shown_errors(stop=True):`` when the page cannot go on
without it); nothing else is caught, so a bug still surfaces as Streamlit's exception. A board
storage error (``leaderboard.StorageError``) names the server's paths and is the operator's to
fix: a page shows :data:`BOARD_UNAVAILABLE` instead, and the full message goes to the server log
(:func:`board_unavailable`). See docs/leaderboard.md, "Storage faults".
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from etclib.core.errors import EtcError

from .text import escape_markdown

if TYPE_CHECKING:  # imported when needed: a page run on its own has site_pages/ first on sys.path,
    # where site_pages/leaderboard.py would shadow the package at import time
    from leaderboard.errors import StorageError

log = logging.getLogger("views.errors")

#: What a visitor reads when the leaderboard's database cannot be used.
BOARD_UNAVAILABLE = (
    "The leaderboard is unavailable right now: its database cannot be used. The site's operator "
    "has been told (the details are in the server's log). The other pages work as usual."
)
_LOGGED: set[str] = set()


def _storage_error(exc: BaseException) -> bool:
    from leaderboard.errors import StorageError

    return isinstance(exc, StorageError)


def board_unavailable(exc: StorageError, *, show: bool = True) -> None:
    """Log a storage error for the operator (once per distinct message in this process) and,
    when ``show``, tell the visitor :data:`BOARD_UNAVAILABLE` (no path, no engine detail)."""
    text = str(exc)
    if text not in _LOGGED:
        _LOGGED.add(text)
        log.error("The leaderboard database cannot be used: %s", text)
    if show:
        import streamlit as st

        st.error(BOARD_UNAVAILABLE)


def show_error(message: object, prefix: str = "") -> None:
    """``st.error`` with ``prefix`` + ``message`` printed literally (escaped)."""
    import streamlit as st

    st.error(escape_markdown(f"{prefix}{message}"))


@contextmanager
def shown_errors(prefix: str = "", *, stop: bool = False) -> Iterator[None]:
    """Run the block; an ``EtcError`` in it is shown with :func:`show_error` and swallowed.

    ``stop=True`` ends the page's run after the message (``st.stop``), for a step that the rest
    of the page needs. The block is left at the error, so code after the failing line in the
    block does not run (like ``try``/``else``).
    """
    try:
        yield
    except EtcError as exc:
        if _storage_error(exc):
            board_unavailable(exc)
        else:
            show_error(exc, prefix)
        if stop:
            import streamlit as st

            st.stop()
