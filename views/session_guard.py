"""What a visitor's page may ask of the server and learn from it, beyond running the site.

Streamlit's websocket takes messages that a served site should not take from a visitor, and
tells every visitor facts about the server. The guard answers ``clear_cache`` by clearing only
the asking page's own state (not every visitor's cached board, store and classifiers),
answers nothing to ``load_git_info``, and sends the script's file name without Python's version
or the server's OS in the session-start message. :func:`install` patches Streamlit's
``AppSession`` once per process; ``tests/browser/test_exposure.py`` pins what it does. See
docs/deploy.md, "The proxy in front of the site".
"""

from __future__ import annotations

import logging
import os
import threading

_log = logging.getLogger(__name__)
_LOCK = threading.Lock()


def install() -> None:
    """Put the guards in front of Streamlit's session messages (once)."""
    from streamlit.runtime.app_session import AppSession

    with _LOCK:
        if getattr(AppSession, "_etc_guarded", False):
            return
        new_session_message = AppSession._create_new_session_message

        def clear_own_state(self: AppSession) -> None:
            _log.warning("a page asked to clear every cache; only its own state was cleared")
            self._session_state.clear()

        def no_git_info(self: AppSession) -> None:
            return None

        def plain_new_session_message(self: AppSession, *args, **kwargs):
            msg = new_session_message(self, *args, **kwargs)
            new = msg.new_session
            new.main_script_path = os.path.basename(new.main_script_path)
            new.initialize.environment_info.python_version = ""
            new.initialize.environment_info.server_os = ""
            return msg

        AppSession._handle_clear_cache_request = clear_own_state
        AppSession._handle_git_information_request = no_git_info
        AppSession._create_new_session_message = plain_new_session_message
        AppSession._etc_guarded = True
