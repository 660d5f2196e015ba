"""The board and its submissions in a real browser (Debian's Chromium driven by Playwright against
one served site on a copy of the run's seeded board, tests/browser/conftest.py): every click on
an export button downloads a file, each track's board its own; uploads through the Submit page
are scored and linked, a visitor's name never runs as HTML nor becomes a link, a refused file is
said in the page without hovering; from the Leaderboard to a comparison by clicks, a click on an
item row showing its dialogue. What a page shows for a given board, without a browser:
tests/integration/test_site_pages.py and the AppTest modules beside it."""

from __future__ import annotations

import csv
import io
import json
import os
import re

import pytest

from tests.conftest import REAL_CORPUS, needs_corpus
from tests.serve import grid_rows, open_page, shown_exceptions, wait_idle

pytestmark = needs_corpus

XSS_NAME = "<img src=x onerror=window.__x=1>"
NAME_ERC = "ERC browser entry"
#: A chart Streamlit shows (Vega draws it as SVG once the script has ended).
CHART = '[data-testid="stVegaLiteChart"]'


@pytest.fixture(scope="module")
def site(serve_seeded):
    with serve_seeded() as url:
        yield url


def predictions_file(tmp_path, name: str, text, field: str = "prediction") -> str:
    """A file of the real test split: ``text(item)`` for each item, under ``field``."""
    from etclib.data.corpus import load_corpus
    from etclib.data.task import items

    path = tmp_path / name
    rows = (
        {"dialogue_id": it.dialogue_id, "turn": it.turn, "role": it.role, field: text(i, it)}
        for i, it in enumerate(items(load_corpus(REAL_CORPUS), "test"))
    )
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), "utf-8")
    return str(path)


def test_every_export_click_downloads(site, page):
    open_page(page, f"{site}/leaderboard")
    labels = ("Board (CSV)", "Board (JSON)", "Published results (CSV)")
    got = []
    for _ in range(10):
        for label in labels:
            button = page.get_by_role("button", name=label, exact=True)
            wait_idle(page, timeout=60)  # a visitor clicks a drawn page, not one mid-rerun
            # Chromium drops a frame's 11th download that starts within a second of the first
            # of a burst of ten (blink's LocalFrame::ShouldThrottleDownload, a limit of 10): at
            # robot speed (about 0.1 s a click) the 21st click gave no file. A visitor is slower
            # than ten downloads a second; so is this test.
            page.wait_for_timeout(150)
            try:
                with page.expect_download(timeout=15_000) as info:
                    button.click()
            except Exception:
                raise AssertionError(f"no download at click {len(got) + 1} ({label})") from None
            download = info.value
            got.append((label, download.suggested_filename, os.path.getsize(download.path())))
    wait_idle(page, timeout=60)
    assert len(got) == 30
    assert all(size > 0 for *_, size in got)
    names = {label: {n for lab, n, _ in got if lab == label} for label in labels}
    assert names == {
        "Board (CSV)": {"etc_leaderboard.csv"},
        "Board (JSON)": {"etc_leaderboard.json"},
        "Published results (CSV)": {"etc_reported.csv"},
    }


def test_each_tracks_export_is_its_own_board(site, page):
    files = {}
    for track in ("transcription", "erc"):
        open_page(page, f"{site}/leaderboard?track={track}")
        button = page.get_by_role("button", name="Board (CSV)", exact=True)
        button.wait_for(timeout=60_000)
        wait_idle(page, timeout=60)
        with page.expect_download(timeout=30_000) as info:
            button.click()
        with open(info.value.path(), encoding="utf-8") as f:
            files[track] = (info.value.suggested_filename, f.read())
    assert files["transcription"][0] == "etc_leaderboard.csv"
    assert files["erc"][0] == "etc_leaderboard_erc.csv"
    header = next(csv.reader(io.StringIO(files["erc"][1])))
    assert {"macro_f1", "micro_f1", "trivial"} <= set(header) and "rougeL" not in header
    erc_rows = {r["name"]: r for r in csv.DictReader(io.StringIO(files["erc"][1]))}
    assert erc_rows["Always joy"]["trivial"] == "one label set (joy) for every item"


def test_from_the_board_to_a_comparison_by_clicks(site, page, entries):
    from tests.serve import click_grid_row

    name, sid = entries["real"]
    open_page(page, f"{site}/entry?submission={sid}")
    page.get_by_role("link", name="Compare with the one above").click()
    page.get_by_role("heading", name="Compare two entries").wait_for(timeout=60_000)
    wait_idle(page, timeout=60)
    page.get_by_text("95% interval", exact=False).first.wait_for(timeout=60_000)
    assert f"b={sid}" in page.url
    # a click on a row of the item table (the last data grid) shows that item's dialogue
    table = page.get_by_test_id("stDataFrame").last
    row = grid_rows(page, table)[2]
    click_grid_row(page, table, 2)
    wait_idle(page, timeout=60)
    title = (
        f"of the selected item (dialogue {row['dialogue'].replace(',', '')}, "
        f"turn {row['turn']}, {row['role']})"
    )
    page.get_by_text(title, exact=False).wait_for(timeout=30_000)
    # the distribution of the per-item differences, drawn when its tab is opened
    page.get_by_role("tab", name="Distribution of the differences").click()
    wait_idle(page, timeout=60)
    page.locator(f"{CHART} g.role-axis").first.wait_for(timeout=60_000)
    # the Leaderboard's pairwise matrix of the top entries, drawn when its expander opens
    open_page(page, f"{site}/leaderboard")
    page.get_by_text("Pairwise tests of the top 10", exact=False).click()
    wait_idle(page, timeout=60)
    page.locator(f"{CHART} g.role-axis").first.wait_for(timeout=60_000)
    assert shown_exceptions(page) == 0


def test_an_entry_title_is_not_a_link(site, page, entries):
    """The real renderer (remark-gfm in Chromium) on the real page: no link in the title."""
    name, sid = entries["phish"]
    open_page(page, f"{site}/entry?submission={sid}")
    title = page.locator("h1", has_text="phish")
    title.first.wait_for(timeout=90_000)
    assert title.first.inner_text().replace("\u2060", "") == name
    assert page.locator('a[href*="phish"]').count() == 0


def test_a_txt_upload_is_refused_in_the_page_without_hovering(site, page, tmp_path):
    """The upload box takes any file, so a refused type is said in the page: a box restricted
    by type would refuse it only in a tooltip, seen on hover. The box and the page's label say
    the upload limit as one figure."""
    open_page(page, f"{site}/submit")
    box = page.get_by_test_id("stFileUploaderDropzoneInstructions").first
    box.wait_for(timeout=60_000)
    assert "10MB per file" in box.inner_text()
    assert page.get_by_text("at most 10 MB", exact=False).count() >= 1
    assert "MiB" not in page.content()
    path = predictions_file(tmp_path, "predictions.txt", lambda i, it: "相手の話を聞いた。")
    page.locator('input[type="file"]').set_input_files(path)
    error = page.get_by_test_id("stAlert").filter(has_text="was refused")
    error.first.wait_for(timeout=60_000)
    wait_idle(page, timeout=60)
    assert error.count() == 1 and error.first.is_visible()  # in the page, no hover needed
    said = " ".join(error.first.inner_text().split())
    assert said.startswith("predictions.txt was refused: a .txt file is not taken here."), said
    assert "JSON Lines (.jsonl, .json, .ndjson) or CSV (.csv)" in said
    assert page.get_by_role("button", name="Submit for scoring").is_disabled()


def test_an_upload_is_scored_and_its_name_never_runs(site, page, tmp_path):
    from tests.serve import submit_file

    path = predictions_file(tmp_path, "preds.jsonl", lambda i, it: f"{it.utterance[:6]}と感じた!")
    submit_file(page, site, path, XSS_NAME, accepted="valid, 1,010 predictions", team="Browser")
    page.get_by_text("Received as submission", exact=False).first.wait_for(timeout=60_000)
    # the status refreshes by itself (st.fragment(run_every=2)) until the scores are in
    page.get_by_text("✅ scored", exact=False).first.wait_for(timeout=180_000)
    link = page.get_by_role("link", name="Open its page on the board").first
    link.wait_for()
    wait_idle(page, timeout=60)
    assert page.evaluate("() => typeof window.__x") == "undefined"
    assert re.search(r"entry\?submission=[0-9a-f]+", link.get_attribute("href") or "")
    link.click()
    # the entry's page is titled with the name as text (escaped Markdown)
    page.locator("h1", has_text=XSS_NAME).first.wait_for(timeout=30_000)
    wait_idle(page, timeout=60)
    assert shown_exceptions(page) == 0
    assert page.evaluate("() => typeof window.__x") == "undefined"
    assert page.locator("img[src='x']").count() == 0
    open_page(page, f"{site}/leaderboard")  # the board with the entry on it
    page.get_by_text("Published results (reported)").first.wait_for(timeout=30_000)
    assert page.evaluate("() => typeof window.__x") == "undefined"


def _interval_of(page, name: str) -> tuple[float, float]:
    """The (low, high) ends of the error bar drawn for bar ``name`` (labelled ``name`` or
    ``name · setting``), read from the description Vega gives each mark it draws
    (``aria-label``: the mark's fields, the interval's ends among them)."""
    found = page.evaluate(
        """(name) => {
            for (const el of document.querySelectorAll('[aria-roledescription="errorbar"]')) {
                const text = el.getAttribute('aria-label') || '';
                const named = text.includes(`name: ${name};`) || text.includes(`name: ${name} · `);
                const ends = text.match(/95% interval from: (-?[\\d.]+); to: (-?[\\d.]+)/);
                if (named && ends) return [ends[1], ends[2]];
            }
            return null;
        }""",
        name,
    )
    assert found is not None, f"no error bar drawn for {name!r}"
    return float(found[0]), float(found[1])


def test_an_erc_upload_is_scored_and_drawn_with_its_interval(site, page, tmp_path):
    from tests.serve import submit_file

    path = predictions_file(  # half right, half "joy"
        tmp_path, "categories.jsonl", lambda i, it: list(it.label) if i % 2 else ["joy"], "labels"
    )
    submit_file(page, site, path, NAME_ERC, accepted="for the categories track")
    page.get_by_text("Received as submission", exact=False).first.wait_for(timeout=60_000)
    page.get_by_text("✅ scored", exact=False).first.wait_for(timeout=180_000)
    page.get_by_role("link", name="Open its page on the board").first.click()
    page.locator("h1", has_text=NAME_ERC).first.wait_for(timeout=30_000)
    page.get_by_role("link", name="The categories board").click()  # the board it is on
    page.get_by_role("heading", name="Leaderboard").first.wait_for(timeout=30_000)
    wait_idle(page, timeout=60)
    page.get_by_role("tab", name="Charts").click()  # only the open tab is drawn
    page.locator(f"{CHART} text", has_text=NAME_ERC).first.wait_for(timeout=30_000)
    lo, hi = _interval_of(page, NAME_ERC)  # the entry's own bar has an interval
    assert lo < hi, (lo, hi)
    assert shown_exceptions(page) == 0
