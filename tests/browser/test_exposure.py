"""No provider text in public: a model server that echoes the key it got.

The fake server answers every request with 401 and ``Incorrect API key provided: Bearer <key>``,
as some servers do. With the key set to :data:`SECRET`, the judge's failure on the leaderboard,
the chat's failure and the model picker must never show the key, the provider's words or the
server's address to the public: not the ``status`` output, the board and per-item exports (CSV
and JSON), the public status history, nor (in the browser test) any page's HTML or websocket
traffic. The admin view still gets the provider's text, redacted.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from etclib.corpus import load_corpus
from etclib.predictions import dumps_jsonl
from etclib.task import items as split_items
from tests.conftest import REAL_CORPUS, REPO, needs_corpus
from tests.fakes import FakeLLMServer
from tests.fixtures.secrets import ADMIN, SECRET, leaks


@needs_corpus
def test_no_page_html_or_websocket_frame_holds_the_secret(tmp_path, warm_cache):
    """Every page opened in Chromium, the chat used (its model refuses the key), the judge
    failure on the board: the secret, the provider's words and the server's address are in no
    page's HTML and no websocket frame, and in no download the board offers."""
    from tests.serve import (
        CHROMIUM,
        PAGE_PATHS,
        chromium,
        copy_warm_cache,
        running_site,
        wait_idle,
        wait_rendered,
    )

    if not CHROMIUM.exists():
        pytest.skip(f"Debian's Chromium is not installed at {CHROMIUM}")
    copy_warm_cache(warm_cache, tmp_path / "cache", tmp_path / "etc.duckdb")
    with FakeLLMServer(api_key="the-right-key") as server:
        server.models_check_key = False  # the chat's probe passes: its generation meets the 401
        env = {
            "HOME": str(tmp_path / "site-home"),
            "ETC_DATA_DIR": str(REAL_CORPUS),
            "ETC_STORE_DB": str(tmp_path / "etc.duckdb"),
            "ETC_CACHE_DIR": str(tmp_path / "cache"),
            "ETC_LEADERBOARD_DB": str(tmp_path / "leaderboard.sqlite"),
            "ETC_SECRETS_FILE": str(tmp_path / "no-secrets.toml"),
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
        (tmp_path / "site-home").mkdir()
        # a submission whose judge stage meets the echoing server, scored before the site starts
        preds = tmp_path / "preds.jsonl"
        items = split_items(load_corpus(REAL_CORPUS), "test")
        preds.write_text(dumps_jsonl((it.key, it.reference) for it in items), encoding="utf-8")
        subprocess.run(
            [sys.executable, "-m", "leaderboard", "submit", str(preds), "--name", "Leaky",
             "--setting", "fine-tuned", "--saw-test", "no", "--score", "--create"],
            cwd=REPO, env={**os.environ, **env}, check=True, timeout=300, capture_output=True,
        )  # fmt: skip
        assert any(r.fault == 401 for r in server.requests)
        frames: list[str] = []
        html: dict[str, str] = {}
        downloads: dict[str, str] = {}
        with running_site(env, log=tmp_path / "server.log") as url, chromium() as context:
            page = context.new_page()
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
        log = (tmp_path / "server.log").read_text(encoding="utf-8", errors="replace")
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
