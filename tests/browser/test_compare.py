"""The comparison page in a real browser (Debian's Chromium, Playwright, ``streamlit run``):
from the Leaderboard to a comparison by clicks, the URL reloads the same comparison, the item
table filters by category and turn, and the judge's unit decisions show for two entries that
the fake judge server (tests/fakes/) scored. A board of the tiny corpus (tests/data/).
Screenshots go to test-output/screenshots/compare_*.png (gitignored)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from tests.conftest import REPO

SHOTS = REPO / "test-output" / "screenshots"

SCORE = """
import leaderboard as lb
from etclib.corpus import load_corpus
from etclib.predictions import dumps_jsonl
from etclib.task import items
its = items(load_corpus(), "test")
for name, text in (("unrelated", lambda it: "犬が好きです。"), ("oracle", lambda it: it.reference)):
    lb.submit(dumps_jsonl((it.key, text(it)) for it in its).encode("utf-8"), {"name": name})
lb.process_jobs()
for sid, name, status in lb.ranking()[["id", "name", "status"]].itertuples(index=False):
    print(sid, name, status)
"""


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    from tests.serve import CHROMIUM

    if not CHROMIUM.exists():
        pytest.skip(f"Debian's Chromium is not installed at {CHROMIUM} (apt-get install chromium)")
    from tests.data.make_tiny_corpus import write_tiny_corpus
    from tests.fakes.judge_fixtures import FAKE_MODEL
    from tests.fakes.judge_responder import ScriptedJudge
    from tests.fakes.llm_server import FakeLLMServer
    from tests.serve import running_site, site_env

    base = tmp_path_factory.mktemp("compare-site")
    corpus = write_tiny_corpus(base / "tiny")
    env = site_env(base, corpus)
    with FakeLLMServer(ScriptedJudge(), hang_seconds=10.0) as server:
        judge = {
            "ETC_JUDGE_PROVIDER": "gemini",
            "ETC_JUDGE_MODEL": FAKE_MODEL,
            "GEMINI_API_KEY": "test-key",
            "ETC_GEMINI_BASE_URL": server.gemini_base_url,
        }
        out = subprocess.run(
            [sys.executable, "-c", SCORE],
            cwd=REPO,
            env={**os.environ, **env, **judge},
            check=True,
            timeout=300,
            capture_output=True,
            text=True,
        ).stdout
    entries = [line.split() for line in out.strip().splitlines()]
    assert [e[2] for e in entries] == ["scored", "scored"], out
    with running_site(env, log=base / "server.log") as url:
        yield url, corpus, {name: sid for sid, name, _ in entries}


@pytest.fixture(scope="module")
def browser(site):
    from tests.serve import chromium

    with chromium() as context:
        yield context


def shot(page, name: str) -> None:
    from tests.serve import screenshot

    screenshot(page, SHOTS / f"compare_{name}.png")


def idle(page) -> None:
    from tests.serve import wait_idle

    wait_idle(page, timeout=60)


def pick(page, label: str, typed: str, option: str | None = None, exact: bool = True) -> None:
    """Choose an option in the (multi)select labelled ``label``: type ``typed`` (the widget
    filters its options by it) and click the option named ``option`` (default: ``typed``).
    Tried again when a rerun of the page closed the list before the click."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    for attempt in range(3):
        idle(page)
        box = page.get_by_role("combobox", name=label, exact=True)
        box.scroll_into_view_if_needed()
        box.click()
        box.fill(typed)
        try:
            page.get_by_role("option", name=option or typed, exact=exact).first.click(
                timeout=10_000
            )
            break
        except PlaywrightTimeout:
            if attempt == 2:
                raise
            page.keyboard.press("Escape")
    idle(page)


def no_exception(page) -> None:
    assert page.locator('[data-testid="stException"]').count() == 0


def test_from_the_board_to_a_comparison_and_back_by_url(site, browser):
    from etclib.corpus import load_corpus
    from etclib.task import items
    from leaderboard.compare import compare  # noqa: F401 - the page's own module imports
    from tests.serve import click_grid_row, wait_rendered

    url, corpus, ids = site
    page = browser.new_page()
    page.goto(f"{url}/leaderboard")
    wait_rendered(page, timeout=90)
    idle(page)
    # the entry ranked second (the unrelated one), then "Compare with the one above"
    pick(page, "Entry", ids["unrelated"], f"({ids['unrelated']})", exact=False)
    page.get_by_role("link", name="Compare with the one above").click()
    page.get_by_role("heading", name="Compare two entries").wait_for(timeout=60_000)
    idle(page)
    page.get_by_text("95% interval", exact=False).first.wait_for(timeout=60_000)
    assert f"a={ids['oracle']}" in page.url and f"b={ids['unrelated']}" in page.url
    page.get_by_text(f"oracle  ({ids['oracle']})", exact=False).first.wait_for()
    no_exception(page)
    shot(page, "board_to_comparison")

    # the URL alone reloads the same comparison
    page.goto(page.url)
    page.get_by_role("heading", name="Compare two entries").wait_for(timeout=60_000)
    idle(page)
    body = " ".join(page.locator("body").inner_text().split())
    assert f"A: oracle ({ids['oracle']})" in body
    assert f"B: unrelated ({ids['unrelated']})" in body

    # the judge's decisions of both entries for the first item
    page.get_by_text("The judge's units and decisions", exact=False).wait_for()
    body = page.locator("body").inner_text()
    assert "[Not Supported] 犬が好きです。" in body
    assert "against A: Supported · against B: Not Supported" in body
    assert "why: 表面の内容を比較した。" in body  # the scripted judge's reasoning, per decision
    page.get_by_text("The judge's units and decisions", exact=False).scroll_into_view_if_needed()
    shot(page, "judge_units")

    # a click on a row of the item table shows that item's dialogue (every difference is
    # -100 here, so the table keeps the items' order)
    its = items(load_corpus(corpus), "test")
    row = 2
    # the item table (the last data grid: the texts are a static table)
    click_grid_row(page, page.get_by_test_id("stDataFrame").last, row)
    idle(page)
    it = its[row]
    title = f"of the selected item (dialogue {it.dialogue_id}, turn {it.turn}, {it.role})"
    page.get_by_text(title, exact=False).wait_for(timeout=30_000)
    body = page.locator("body").inner_text()
    assert all(f"{line.letter}: {line.text}" in body for line in it.context)
    page.get_by_text(title, exact=False).scroll_into_view_if_needed()
    shot(page, "row_dialogue")

    # the distribution of the per-item differences, drawn when its tab is opened
    page.get_by_role("tab", name="Distribution of the differences").click()
    idle(page)
    page.locator(".js-plotly-plot").first.wait_for(timeout=60_000)
    page.locator(".js-plotly-plot").first.scroll_into_view_if_needed()
    shot(page, "difference_chart")
    page.get_by_role("tab", name="Where each one wins").click()
    idle(page)

    # the item table filters by category and turn
    pick(page, "Category", "sadness")
    page.keyboard.press("Escape")
    pick(page, "Turn", "1")
    page.keyboard.press("Escape")
    idle(page)
    expected = sum("sadness" in it.label and it.turn == 1 for it in its)
    page.get_by_text(f"{expected:,} of {len(its):,} items", exact=False).wait_for(timeout=30_000)
    no_exception(page)
    page.get_by_text(
        f"{expected:,} of {len(its):,} items", exact=False
    ).scroll_into_view_if_needed()
    shot(page, "filtered_items")

    # the Leaderboard's pairwise matrix of the top entries
    page.goto(f"{url}/leaderboard")
    wait_rendered(page, timeout=90)
    idle(page)
    page.get_by_text("Pairwise tests of the top 10", exact=False).click()
    idle(page)
    page.locator(".js-plotly-plot").first.wait_for(timeout=60_000)
    page.locator(".js-plotly-plot").first.scroll_into_view_if_needed()
    no_exception(page)
    shot(page, "pairwise_matrix")
    page.close()
