"""What a visitor can learn from or do to a served site, in Chromium.

- No provider text in public: with a model server that echoes the key it got (401, ``Incorrect
  API key provided: Bearer <key>``, as some servers answer) and the key set to :data:`SECRET`,
  the judge's failure on the leaderboard, the chat's failure and the model picker never show the
  key, the provider's words or the server's address in any page's HTML, websocket frame or
  download; the server log has the provider's text, redacted.
- Streamlit's ``clear_cache`` message, sent on the page's own websocket, leaves every shared
  cache as it was (views/session_guard.py; the server's metrics list the same entries after),
  and the session-start frame names no server path and no Python version.

One site for the module: the real corpus, that key, and a submission whose judge stage met the
echoing server; the cache tests come first, while Home has cache entries still to make. Without a
browser: tests/integration/test_secrets_leak.py.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import urllib.request

import pytest

from etclib.data.corpus import load_corpus
from etclib.data.task import items as split_items
from etclib.tracks.predictions import dumps_jsonl
from tests.conftest import REAL_CORPUS, REPO, needs_corpus, observed
from tests.fakes import FakeLLMServer
from tests.fixtures.secrets import ADMIN, SECRET, leaks

pytestmark = needs_corpus

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
def site(tmp_path_factory, warm_cache):
    """(the site's URL, its server log, the echoing model server)."""
    from tests.serve import CHROMIUM, copy_warm_cache, running_site

    if not CHROMIUM.exists():
        pytest.skip(f"Debian's Chromium is not installed at {CHROMIUM}")
    base = tmp_path_factory.mktemp("exposure-site")
    copy_warm_cache(warm_cache, base / "cache", base / "etc.duckdb")
    with FakeLLMServer(api_key="the-right-key") as server:
        server.models_check_key = False  # the chat's probe passes: its generation meets the 401
        env = {
            "HOME": str(base / "site-home"),
            "ETC_DATA_DIR": str(REAL_CORPUS),
            "ETC_STORE_DB": str(base / "etc.duckdb"),
            "ETC_CACHE_DIR": str(base / "cache"),
            "ETC_LEADERBOARD_DB": str(base / "leaderboard.sqlite"),
            "ETC_SECRETS_FILE": str(base / "no-secrets.toml"),
            "ETC_LB_BOOTSTRAP": "50",
            "ETC_PROGRESS": "0",
            "HF_HUB_OFFLINE": "1",
            "OPENAI_API_KEY": SECRET,
            "OPENAI_BASE_URL": server.openai_base_url,
            "ETC_OPENAI_MODEL": "fake-model",
            "ETC_FINETUNED_BASE_URL": server.openai_base_url,
            "ETC_FINETUNED_MODEL": "fake-model",
            "ETC_FINETUNED_API_KEY": SECRET,
            "ETC_JUDGE_PROVIDER": "openai",
            "ETC_JUDGE_MODEL": "fake-model",
            "ETC_JUDGE_MAX_ATTEMPTS": "1",
            "ETC_ADMIN_TOKEN": ADMIN,
        }
        (base / "site-home").mkdir()
        # a submission whose judge stage meets the echoing server, scored before the site starts
        preds = base / "preds.jsonl"
        items = split_items(load_corpus(REAL_CORPUS), "test")
        preds.write_text(dumps_jsonl((it.key, it.reference) for it in items), encoding="utf-8")
        subprocess.run(
            [sys.executable, "-m", "leaderboard", "submit", str(preds), "--name", "Leaky",
             "--setting", "fine-tuned", "--saw-test", "no", "--score", "--create"],
            cwd=REPO, env={**os.environ, **env}, check=True, timeout=300, capture_output=True,
        )  # fmt: skip
        assert any(r.fault == 401 for r in server.requests)
        with running_site(env, log=base / "server.log") as url:
            yield url, base / "server.log", server


def cache_entries(url: str) -> set[tuple[str, str]]:
    """(kind, function) of every st.cache_data / st.cache_resource entry the server reports."""
    with urllib.request.urlopen(
        f"{url}/_stcore/metrics?families=cache_memory_bytes", timeout=10
    ) as resp:
        text = resp.read().decode()
    return set(re.findall(r'cache_type="(st_cache_\w+)",cache="([^"]*)"', text))


def test_a_page_cannot_clear_the_shared_caches(site):
    from streamlit.proto.BackMsg_pb2 import BackMsg

    from tests.serve import chromium, wait_rendered

    url, log, _ = site
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

    url, _, _ = site
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


def test_no_page_html_or_websocket_frame_holds_the_secret(site, browser):
    """Every page opened in Chromium, the chat used (its model refuses the key), the judge
    failure on the board: the secret, the provider's words and the server's address are in no
    page's HTML and no websocket frame, and in no download the board offers."""
    from tests.serve import PAGE_PATHS, wait_idle, wait_rendered

    url, log_path, server = site
    frames: list[str] = []
    html: dict[str, str] = {}
    downloads: dict[str, str] = {}
    page = browser.new_page()
    page.on(
        "websocket",
        lambda ws: (
            ws.on("framereceived", lambda p: frames.append(_frame_text(p))),
            ws.on("framesent", lambda p: frames.append(_frame_text(p))),
        ),
    )
    for name, path in PAGE_PATHS.items():
        page.goto(f"{url}/{path}")
        wait_rendered(page, timeout=120)
        html[name] = page.content()
        if name == "chat":
            _use_the_chat(page)
            html["chat (after a prediction)"] = page.content()
        if name == "leaderboard":
            downloads.update(_downloads(page))
            # an entry's items CSV is offered once an entry is chosen
            entry = page.get_by_text("Entry", exact=True)
            page.get_by_test_id("stSelectbox").filter(has=entry).click()
            page.get_by_role("option").filter(has_text="Leaky").first.click()
            items_button = page.get_by_test_id("stDownloadButton").filter(has_text="items")
            items_button.wait_for(timeout=60_000)
            wait_idle(page, 60)
            downloads.update(_downloads(page))
    page.close()
    log = log_path.read_text(encoding="utf-8", errors="replace")
    assert any("(ref " in h for h in html.values()), "the chat's failure was not shown"
    for name, text in html.items():
        assert not leaks(text, server), (name, leaks(text, server))
    assert frames, "no websocket traffic was recorded"
    for text in frames:
        assert not leaks(text, server), leaks(text, server)
    assert {"etc_leaderboard.csv", "etc_leaderboard.json"} <= set(downloads), downloads
    assert any(n.startswith("etc_items_") for n in downloads), list(downloads)
    for name, text in downloads.items():
        assert not leaks(text, server), (name, leaks(text, server))
    assert SECRET not in log  # the server log has the provider's text, redacted


def _frame_text(payload) -> str:
    if isinstance(payload, bytes | bytearray):
        return bytes(payload).decode("utf-8", errors="replace")
    return str(payload)


def _use_the_chat(page) -> None:
    """Pick the hosted model and send one utterance; wait for the failure to be shown."""
    from tests.serve import wait_idle

    page.get_by_test_id("stSelectbox").filter(has_text="Model").click()
    page.get_by_role("option").filter(has_text="fake-model").first.click()
    wait_idle(page, 60)
    box = page.get_by_test_id("stChatInputTextArea")
    box.fill("こんにちは")
    box.press("Enter")
    page.get_by_test_id("stAlertContentError").first.wait_for(timeout=60_000)
    wait_idle(page, 60)


def _downloads(page) -> dict[str, str]:
    """Every download button on the page, clicked one after the other; file name -> text."""
    from tests.serve import wait_idle

    out = {}
    buttons = page.get_by_test_id("stDownloadButton")
    buttons.first.wait_for(timeout=60_000)  # drawn by a chunk loaded on first use
    labels = [t.strip() for t in buttons.all_inner_texts()]
    for label in labels:
        wait_idle(page, 60)  # a click may rerun the page (a download made on click)
        button = page.get_by_test_id("stDownloadButton").filter(has_text=label).first
        with page.expect_download(timeout=120_000) as info:
            button.locator("button").click()
        d = info.value
        out[d.suggested_filename] = open(d.path(), encoding="utf-8", errors="replace").read()
    return out
