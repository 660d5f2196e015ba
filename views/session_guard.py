"""What a visitor's page may ask of the server and learn from it: ``clear_cache`` clears only its
own state, ``load_git_info`` gets nothing, no Python version or OS is sent (docs/deploy.md)."""

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
