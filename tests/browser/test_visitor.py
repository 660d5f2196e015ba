"""What a new visitor reads, in a real browser (issue #26): Home's score column headed by the
ranking metric's name and direction with each entry's value and interval; an uploaded constant
file badged trivial with its reason; the categories board's export is that board's; the upload
limit one figure; a wrong-keys file's error in the page, grouped.

Debian's Chromium driven by Playwright against `streamlit run` (tests/serve.py) at 1280×800;
skipped without /usr/bin/chromium or the real corpus. Screenshots go to
test-output/screenshots/visitor_*.png.
"""

from __future__ import annotations

import csv
import io
import json
import os
import re
import subprocess
import sys

import pytest

from tests.conftest import REAL_CORPUS, REPO, needs_corpus
from tests.serve import grid_rows

pytestmark = needs_corpus

SHOTS = REPO / "test-output" / "screenshots"
CONSTANT = "相手の話を聞いて嬉しい気持ちになった。"
SEED = """
import json, leaderboard as lb
from etclib.corpus import load_corpus
from etclib.predictions import dumps_jsonl
from etclib.task import items
its = items(load_corpus(), "test")
lb.seed_baselines(reported=False, backends=("copy", "majority", "prior"))
real = dumps_jsonl((it.key, it.utterance[:8] + "と思った") for it in its).encode()
lb.submit(real, {"name": "Real but simple"}, file_name="real.jsonl")
joy = dumps_jsonl(((it.key, ("joy",)) for it in its), "erc").encode()
lb.submit(joy, {"name": "Always joy"}, file_name="joy.jsonl")
lb.process_jobs()
"""


@pytest.fixture(scope="module")
def site(tmp_path_factory, warm_cache):
    from tests.serve import CHROMIUM, running_site, site_env

    if not CHROMIUM.exists():
        pytest.skip(f"Debian's Chromium is not installed at {CHROMIUM}")
    base = tmp_path_factory.mktemp("visitor-site")
    env = site_env(base, REAL_CORPUS, cache=warm_cache)
    subprocess.run(
        [sys.executable, "-c", SEED],
        cwd=REPO,
        env={**os.environ, **env},
        check=True,
        timeout=600,
    )
    with running_site(env, log=base / "server.log") as url:
        yield url, base


@pytest.fixture(scope="module")
def browser(site):
    from tests.serve import chromium

    with chromium(viewport={"width": 1280, "height": 800}) as context:
        yield context


def _open(browser, url: str):
    from tests.serve import wait_rendered

    page = browser.new_page()
    page.goto(url)
    wait_rendered(page, timeout=120)
    return page


def _shot(page, name: str) -> None:
    from tests.serve import screenshot

    screenshot(page, SHOTS / f"visitor_{name}.png")


def _constant_file(tmp_path) -> str:
    from etclib.corpus import load_corpus
    from etclib.predictions import dumps_jsonl
    from etclib.task import items

    path = tmp_path / "constant.jsonl"
    its = items(load_corpus(REAL_CORPUS), "test")
    path.write_text(dumps_jsonl((it.key, CONSTANT) for it in its), encoding="utf-8")
    return str(path)


def test_upload_limit_and_a_constant_upload_badged_trivial(site, browser, tmp_path):
    from tests.serve import submit_file, wait_idle

    url, _ = site
    page = browser.new_page()
    # the upload box's own text and the page's label: one figure, one unit
    page.goto(f"{url}/submit")
    page.get_by_test_id("stFileUploaderDropzoneInstructions").first.wait_for(timeout=60_000)
    box = page.get_by_test_id("stFileUploaderDropzoneInstructions").first.inner_text()
    assert "10MB per file" in box, box
    assert page.get_by_text("at most 10 MB", exact=False).count() >= 1
    assert "MiB" not in page.content()

    submit_file(page, url, _constant_file(tmp_path), "My constant upload")
    page.get_by_text("✅ scored", exact=False).first.wait_for(timeout=240_000)
    _shot(page, "submit_scored")

    board = _open(browser, f"{url}/leaderboard")
    rows = {r["name"]: r for r in grid_rows(board, board.get_by_test_id("stDataFrame").first)}
    mine = rows["My constant upload"]
    assert mine["kind"] == "⚠ trivial"  # never "✅ scored here"
    assert mine["flag"] == f"⚠ trivial: one text “{CONSTANT}” for every item"
    assert rows["Real but simple"]["kind"] == "✅ scored here"
    assert "ROUGE-L ↑ [95% CI]" in mine and "rougeL [95% CI]" not in mine, list(mine)
    alerts = " ".join(a.inner_text() for a in board.get_by_test_id("stAlert").all())
    names = list(rows)
    if names.index("My constant upload") < names.index("Real but simple"):
        assert "My constant upload (one text" in alerts
    wait_idle(board, timeout=60)
    _shot(board, "leaderboard_trivial")
    assert board.locator('[data-testid="stException"]').count() == 0
    board.close()

    # Home: the score column a visitor came for, headed by name and direction, with intervals
    home = _open(browser, url)
    grid = home.locator(
        "xpath=//h3[contains(normalize-space(.), 'Top of the leaderboard')]"
        "/following::*[@data-testid='stDataFrame'][1]"
    )
    top = grid_rows(home, grid)
    grid.scroll_into_view_if_needed()
    SHOTS.mkdir(parents=True, exist_ok=True)
    grid.screenshot(path=str(SHOTS / "visitor_home_top.png"))
    assert all("ROUGE-L ↑ [95% CI]" in r for r in top), top[0]
    for r in top:
        assert re.fullmatch(r"\d+\.\d\d \[\d+\.\d\d, \d+\.\d\d\]", r["ROUGE-L ↑ [95% CI]"]), r
    by_name = {r["name"]: r for r in top}
    assert (
        by_name["Real but simple"]["ROUGE-L ↑ [95% CI]"]
        == (rows["Real but simple"]["ROUGE-L ↑ [95% CI]"])
    )
    _shot(home, "home")
    assert home.get_by_text("ranked by ROUGE-L ↑", exact=False).count() >= 1
    if names.index("My constant upload") < names.index("Real but simple"):
        alerts = " ".join(a.inner_text() for a in home.get_by_test_id("stAlert").all())
        assert "My constant upload (one text" in alerts
    home.close()
    page.close()


def test_categories_export_is_the_categories_board(site, browser):
    from tests.serve import wait_idle

    url, _ = site
    page = _open(browser, f"{url}/leaderboard")
    files = {}
    for track in ("transcription", "erc"):
        page.goto(f"{url}/leaderboard?track={track}")
        wait_idle(page, timeout=120)
        page.get_by_role("button", name="Board (CSV)", exact=True).wait_for(timeout=60_000)
        with page.expect_download(timeout=30_000) as info:
            page.get_by_role("button", name="Board (CSV)", exact=True).click()
        download = info.value
        with open(download.path(), encoding="utf-8") as f:
            files[track] = (download.suggested_filename, f.read())
        wait_idle(page, timeout=60)
    assert files["transcription"][0] == "etc_leaderboard.csv"
    assert files["erc"][0] == "etc_leaderboard_erc.csv"
    assert files["erc"][1] != files["transcription"][1]
    header = next(csv.reader(io.StringIO(files["erc"][1])))
    assert {"macro_f1", "micro_f1", "trivial"} <= set(header) and "rougeL" not in header
    erc_rows = {r["name"]: r for r in csv.DictReader(io.StringIO(files["erc"][1]))}
    assert erc_rows["Always joy"]["trivial"] == "one label set (joy) for every item"
    # the categories board as a visitor sees it: the trivial badge, and the floors on its chart
    rows = {r["name"]: r for r in grid_rows(page, page.get_by_test_id("stDataFrame").first)}
    assert rows["Always joy"]["kind"] == "⚠ trivial"
    assert "Macro-F1 ↑ [95% CI]" in rows["Always joy"]
    page.get_by_role("tab", name="Charts").click()
    page.get_by_text("majority baseline (floor)", exact=False).first.wait_for(timeout=30_000)
    page.get_by_text("prior baseline (floor)", exact=False).first.wait_for(timeout=30_000)
    _shot(page, "leaderboard_categories_charts")
    assert page.locator('[data-testid="stException"]').count() == 0
    page.close()


def test_wrong_keys_error_is_in_the_page_and_grouped(site, browser, tmp_path):
    from etclib.corpus import load_corpus
    from etclib.task import items
    from tests.serve import wait_idle, wait_rendered

    url, _ = site
    path = tmp_path / "wrong.jsonl"
    its = items(load_corpus(REAL_CORPUS), "test")
    path.write_text(
        "\n".join(
            json.dumps(
                {
                    "dialogue_id": it.dialogue_id,
                    "turn": it.turn,
                    "role": it.role,
                    "pred": "x",
                    "text": "y",
                }
            )
            for it in its
        ),
        encoding="utf-8",
    )
    page = browser.new_page()
    page.goto(f"{url}/submit")
    wait_rendered(page, timeout=60)
    page.locator('input[type="file"]').set_input_files(str(path))
    page.get_by_text("was refused", exact=False).first.wait_for(timeout=60_000)
    wait_idle(page, timeout=60)
    assert page.get_by_text("was refused", exact=False).first.is_visible()  # no hover needed
    grid = page.locator(
        "xpath=//*[contains(normalize-space(.), 'was refused')]"
        "/following::*[@data-testid='stDataFrame'][1]"
    )
    rows = grid_rows(page, grid)
    assert len(rows) == 1 and rows[0]["line"] == "1–1010", rows
    assert (
        '"pred", "text"' in rows[0]["problem"]
        and "missing field(s): prediction" in (rows[0]["problem"])
    )
    grid.scroll_into_view_if_needed()
    _shot(page, "submit_wrong_keys")
    page.close()


def test_a_txt_upload_is_refused_in_the_page_without_hovering(site, browser, tmp_path):
    """The upload box takes any file, so a refused type is said in the page: a box restricted
    by type would refuse it only in a tooltip, seen on hover."""
    from tests.serve import wait_idle, wait_rendered

    url, _ = site
    path = tmp_path / "predictions.txt"  # valid predictions, under a name the page does not take
    os.replace(_constant_file(tmp_path), path)
    page = browser.new_page()
    page.goto(f"{url}/submit")
    wait_rendered(page, timeout=60)
    page.locator('input[type="file"]').set_input_files(str(path))
    error = page.get_by_test_id("stAlert").filter(has_text="was refused")
    error.first.wait_for(timeout=60_000)
    wait_idle(page, timeout=60)
    assert error.count() == 1 and error.first.is_visible()  # in the page, no hover needed
    said = " ".join(error.first.inner_text().split())
    assert said.startswith("predictions.txt was refused: a .txt file is not taken here."), said
    assert "JSON Lines (.jsonl, .json, .ndjson) or CSV (.csv)" in said
    assert page.get_by_role("button", name="Submit for scoring").is_disabled()
    error.first.scroll_into_view_if_needed()
    _shot(page, "submit_txt_refused")
    page.close()
