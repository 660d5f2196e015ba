"""The browser tests' own helpers in Chromium (tests/serve.py): the page script that tells a
finished script run from Streamlit's websocket messages, on messages encoded by Streamlit's own
protobuf classes."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="module")
def page():
    from tests.serve import CHROMIUM, chromium

    if not CHROMIUM.exists():
        pytest.skip(f"Debian's Chromium is not installed at {CHROMIUM}")
    with chromium() as context:
        p = context.new_page()
        p.goto("about:blank")
        yield p


def finished(page, msg) -> bool:
    return page.evaluate(
        "(bytes) => window.__etcScriptFinished(new Uint8Array(bytes).buffer)",
        list(msg.SerializeToString()),
    )


def test_a_finished_run_is_told_from_streamlits_messages(page):
    from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

    def message(**fields) -> ForwardMsg:
        msg = ForwardMsg(**fields)
        msg.metadata.active_script_hash = "e" * 36  # as the server sends it: metadata first
        return msg

    status = ForwardMsg.ScriptFinishedStatus
    assert finished(page, message(script_finished=status.FINISHED_SUCCESSFULLY))
    assert finished(page, message(script_finished=status.FINISHED_FRAGMENT_RUN_SUCCESSFULLY))
    assert not finished(page, message(script_finished=status.FINISHED_EARLY_FOR_RERUN))
    # other messages, one with a field longer than 127 bytes (a two-byte length) before it
    delta = message()
    delta.delta.new_element.markdown.body = "長い" * 200
    assert not finished(page, delta)
    assert not finished(page, message(session_status_changed={"script_is_running": False}))
    delta.hash = "h" * 200  # a long field before the finish (a message has one or the other)
    assert not finished(page, delta)
    ended = message(script_finished=status.FINISHED_SUCCESSFULLY)
    ended.hash = "h" * 200
    assert finished(page, ended)
