"""What a visitor's page can ask of a served site and learn from it (views/session_guard.py), in
Chromium: Streamlit's ``clear_cache`` message, sent on the page's own websocket, leaves every
shared cache as it was (the server's metrics list the same entries afterwards); the
session-start frame names no server path and no Python version.
"""

from __future__ import annotations

import re
import sys
import time
import urllib.request

import pytest

from tests.conftest import REPO

#: Installed in each page before its scripts: keeps the page's websockets, to send on them.
KEEP_SOCKETS = """(() => {
  const send = WebSocket.prototype.send;
  window.__etcSockets = [];
  WebSocket.prototype.send = function (data) {
    if (!window.__etcSockets.includes(this)) window.__etcSockets.push(this);
    return send.call(this, data);
  };
})();"""


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    """(the site's URL, its server log)."""
    from tests.data.make_tiny_corpus import write_tiny_corpus
    from tests.serve import CHROMIUM, running_site, site_env

    if not CHROMIUM.exists():
        pytest.skip(f"Debian's Chromium is not installed at {CHROMIUM}")
    base = tmp_path_factory.mktemp("guard-site")
    env = site_env(base, write_tiny_corpus(base / "tiny"), ETC_LB_WORKERS="0")
    log = base / "server.log"
    with running_site(env, log=log) as url:
        yield url, log


def cache_entries(url: str) -> set[tuple[str, str]]:
    """(kind, function) of every st.cache_data / st.cache_resource entry the server reports."""
    with urllib.request.urlopen(
        f"{url}/_stcore/metrics?families=cache_memory_bytes", timeout=10
    ) as resp:
        text = resp.read().decode()
    return set(re.findall(r'cache_type="(st_cache_\w+)",cache="([^"]*)"', text))


def observed(condition, timeout: float = 60.0):
    """Wait until ``condition()`` gives something true (the metrics are recomputed every few
    seconds); return it."""
    deadline = time.monotonic() + timeout
    while not (got := condition()):
        assert time.monotonic() < deadline, "the condition was never observed"
        time.sleep(0.5)
    return got


def test_a_page_cannot_clear_the_shared_caches(site):
    from streamlit.proto.BackMsg_pb2 import BackMsg

    from tests.serve import chromium, wait_rendered

    url, log = site
    with chromium() as context:
        context.add_init_script(KEEP_SOCKETS)
        page = context.new_page()
        page.goto(f"{url}/submit")
        wait_rendered(page, timeout=120)
        before = observed(lambda: cache_entries(url))
        clear = list(BackMsg(clear_cache=True).SerializeToString())
        page.evaluate(
            "(bytes) => window.__etcSockets.forEach(s => s.send(new Uint8Array(bytes)))", clear
        )
        observed(lambda: "asked to clear every cache" in log.read_text(errors="replace"))
        # new entries (another page's) show the server's metrics were computed after it
        page.goto(url)
        wait_rendered(page, timeout=120)
        after = observed(lambda: (now := cache_entries(url)) - before and now)
    assert before <= after, before - after


def test_the_session_start_frame_names_no_server_path(site):
    from tests.serve import chromium, wait_rendered

    url, _ = site
    frames: list[bytes] = []
    with chromium() as context:
        page = context.new_page()
        page.on("websocket", lambda ws: ws.on("framereceived", lambda f: frames.append(f)))
        page.goto(url)
        wait_rendered(page, timeout=120)
    text = b"".join(f if isinstance(f, bytes) else f.encode() for f in frames)
    assert b"streamlit_app.py" in text  # the session start is there, by the script's name
    assert str(REPO).encode() not in text
    assert ".".join(map(str, sys.version_info)).encode() not in text
