"""What one visitor may hold in the server's memory: at most ``ETC_PAGES_PER_VISITOR`` open pages
(default :data:`PAGES_PER_VISITOR`, 0 for no bound), each keeping at most :data:`UPLOADS_PER_PAGE`
uploaded files (Streamlit keeps them until the session ends). Outside a served site everything is
admitted."""

from __future__ import annotations

import threading
from typing import Any

from etclib.core.config import setting
from etclib.core.errors import ConfigError

PAGES_PER_VISITOR = 10
#: The most uploaded files one page keeps (the newest).
UPLOADS_PER_PAGE = 2

_LOCK = threading.Lock()
#: admitted session id -> its visitor's key
_VISITOR: dict[str, str] = {}
#: admitted session id -> the ids of the files it holds, oldest first
_FILES: dict[str, list[str]] = {}


def pages_per_visitor() -> int:
    """``ETC_PAGES_PER_VISITOR`` (0: no bound)."""
    raw = setting("ETC_PAGES_PER_VISITOR")
    if raw is None or not str(raw).strip():
        return PAGES_PER_VISITOR
    try:
        value = int(str(raw).strip())
    except ValueError:
        value = -1
    if value < 0:
        raise ConfigError(
            f"ETC_PAGES_PER_VISITOR must be a whole number, 0 or more (0: no bound); got {raw!r}."
        )
    return value


def _runtime() -> Any:
    """The served site's runtime, or None (no server, or AppTest's stand-in)."""
    from streamlit import runtime
    from streamlit.runtime import Runtime

    if not runtime.exists():
        return None
    rt = runtime.get_instance()
    return rt if type(rt) is Runtime else None


def admit() -> bool:
    """Whether this page may run: recorded under its visitor, unless too many are open."""
    from streamlit.runtime.scriptrunner import get_script_run_ctx

    from views.identity import limit_key

    ctx, rt = get_script_run_ctx(), _runtime()
    if ctx is None or rt is None:
        return True
    _guard(rt.uploaded_file_mgr)
    most = pages_per_visitor()
    key = limit_key()
    with _LOCK:
        for session in [s for s in _VISITOR if not rt.is_active_session(s)]:
            del _VISITOR[session]
            _FILES.pop(session, None)
        if ctx.session_id not in _VISITOR:
            if most and sum(1 for k in _VISITOR.values() if k == key) >= most:
                return False
            _VISITOR[ctx.session_id] = key
            _FILES[ctx.session_id] = []
    return True


def release(upload: Any, key: str) -> None:
    """Drop ``upload``, the file of the ``st.file_uploader`` keyed ``key``, from the server's
    memory: the page has what it needs of it."""
    import streamlit as st
    from streamlit.runtime.scriptrunner import get_script_run_ctx

    ctx = get_script_run_ctx()
    if ctx is None or upload is None:
        return
    ctx.uploaded_file_mgr.remove_file(ctx.session_id, upload.file_id)
    # the widget's value (the file's bytes) would stay in the page's state until its session
    # ends, two minutes after its tab closed
    st.session_state.pop(key, None)
    with _LOCK:
        held = _FILES.get(ctx.session_id, [])
        if upload.file_id in held:
            held.remove(upload.file_id)


def _guard(files: Any) -> None:
    """Have the upload endpoint keep files only for admitted pages, a few each."""
    with _LOCK:
        if getattr(files, "_etc_guarded", False):
            return
        add = files.add_file

        def add_file(session_id: str, file: Any) -> None:
            with _LOCK:
                held = _FILES.get(session_id)
                if held is None:  # a page that was not admitted keeps nothing
                    return
                held = [f for f in held if f != file.file_id] + [file.file_id]
                dropped, _FILES[session_id] = held[:-UPLOADS_PER_PAGE], held[-UPLOADS_PER_PAGE:]
            add(session_id, file)
            for file_id in dropped:
                files.remove_file(session_id, file_id)

        files.add_file = add_file
        files._etc_guarded = True
