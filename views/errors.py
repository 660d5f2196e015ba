"""How a page shows a failure: an ``EtcError`` becomes an ``st.error`` whose text is escaped.

Library and leaderboard errors carry a message written for the reader (what, where, what to
do). It can quote what a visitor typed or uploaded (a file name, a code, a CSV cell), so it is
printed literally with :func:`views.text.escape_markdown`, never as Markdown or HTML. Pages
wrap a step in :func:`shown_errors`::

    with shown_errors(stop=True):   # the page cannot go on without it
        stats = _stats()

    runs = pd.DataFrame()
    with shown_errors():            # the rest of the page can
        runs = _runs(DB)

Nothing else is caught: a bug still surfaces as Streamlit's exception (details hidden by
``client.showErrorDetails``).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from etclib.errors import EtcError

from .text import escape_markdown


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
        show_error(exc, prefix)
        if stop:
            import streamlit as st

            st.stop()
