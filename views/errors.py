"""How a page shows a failure: an ``EtcError`` becomes an ``st.error`` printed literally (it may
quote what a visitor typed), nothing else is caught. A board storage error names the server's paths:
visitors read :data:`BOARD_UNAVAILABLE`, the server log the message."""

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

BOARD_UNAVAILABLE = (
    "The leaderboard is unavailable right now: its database cannot be used. The site's operator "
    "has been told (the details are in the server's log). The other pages work as usual."
)
_LOGGED: set[str] = set()


def board_unavailable(exc: StorageError, *, show: bool = True) -> None:
    """Log a storage error once; with ``show``, say :data:`BOARD_UNAVAILABLE`."""
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
    """Run the block; an ``EtcError`` leaves it, shown; ``stop``: end the page's run."""
    try:
        yield
    except EtcError as exc:
        from leaderboard.errors import StorageError

        if isinstance(exc, StorageError):
            board_unavailable(exc)
        else:
            show_error(exc, prefix)
        if stop:
            import streamlit as st

            st.stop()
