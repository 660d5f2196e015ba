"""The categories (ERC) track in a real browser: an ERC file uploaded on Submit is recognised,
reaches "scored", and appears on the categories board with its interval; the chat shows the ERC
baseline's categories under each utterance (typed and replayed); the corpus page's "Category
classifier" view draws the classifier's confusion against the annotators.

Debian's Chromium driven by Playwright against `streamlit run` (tests/serve.py); skipped without
/usr/bin/chromium or the real corpus. Screenshots go to test-output/screenshots/.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from etclib.corpus import CATEGORIES
from tests.conftest import REAL_CORPUS, REPO, needs_corpus

pytestmark = needs_corpus

SHOTS = REPO / "test-output" / "screenshots"
NAME = "ERC browser entry"


@pytest.fixture(scope="module")
def site(tmp_path_factory, warm_cache, seeded_board):
    """The site on a copy of the run's ``seeded_board``: its categories baselines, scored, are
    the rows an uploaded ERC file is compared with."""
    from tests.conftest import copy_board
    from tests.serve import CHROMIUM, running_site, site_env

    if not CHROMIUM.exists():
        pytest.skip(f"Debian's Chromium is not installed at {CHROMIUM}")
    base = tmp_path_factory.mktemp("browser-erc")
    env = site_env(base, REAL_CORPUS, cache=warm_cache)
    copy_board(seeded_board, Path(env["ETC_LEADERBOARD_DB"]))
    with running_site(env, log=base / "server.log") as url:
        yield url


def _labels_file(tmp_path) -> str:
    from etclib.corpus import load_corpus
    from etclib.task import items

    path = tmp_path / "categories.jsonl"
    with open(path, "w", encoding="utf-8") as f:
        for i, it in enumerate(items(load_corpus(REAL_CORPUS), "test")):
            labels = list(it.label) if i % 2 else ["joy"]  # half right, half "joy"
            rec = {"dialogue_id": it.dialogue_id, "turn": it.turn, "role": it.role}
            f.write(json.dumps({**rec, "labels": labels}, ensure_ascii=False) + "\n")
    return str(path)


def _interval_of(page, name: str) -> tuple[float, float]:
    """The (low, high) ends of the error bar that plotly computed for bar ``name`` (labelled
    ``name · setting``; ``xs`` and ``xh`` of its calcdata point: value minus / plus the error)."""
    found = page.evaluate(
        """(name) => {
            for (const gd of document.querySelectorAll('.js-plotly-plot')) {
                for (const trace of gd.calcdata || []) {
                    const names = trace[0]?.trace?.y;
                    for (const pt of trace) {
                        const label = names ? names[pt.i] : undefined;
                        const named = label === name || String(label).startsWith(name + " · ");
                        if (named && pt.xs !== undefined) return [pt.xs, pt.xh];
                    }
                }
            }
            return null;
        }""",
        name,
    )
    assert found is not None, f"no error bar drawn for {name!r}"
    return float(found[0]), float(found[1])


def test_erc_upload_is_scored_and_on_the_categories_board(site, tmp_path):
    from tests.serve import chromium, submit_file, wait_idle

    with chromium() as context:
        page = context.new_page()
        submit_file(page, site, _labels_file(tmp_path), NAME, accepted="for the categories track")
        page.get_by_text("Received as submission", exact=False).first.wait_for(timeout=60_000)
        page.get_by_text("✅ scored", exact=False).first.wait_for(timeout=180_000)
        link = page.get_by_role("link", name="Open its detail view on the leaderboard").first
        link.wait_for()
        assert "track=erc" in (link.get_attribute("href") or "")
        SHOTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(SHOTS / "submit_erc.png"), full_page=True)
        link.click()
        page.get_by_role("heading", name="Leaderboard").first.wait_for(timeout=30_000)
        wait_idle(page, timeout=60)
        # the categories board: the reference row's caption, and the entry in the bar chart
        # (plotly draws names and interval bars as SVG), its detail title as text
        page.get_by_text("each annotator scored against the majority", exact=False).first.wait_for(
            timeout=60_000
        )
        page.locator('[data-testid="stMarkdownContainer"] strong', has_text=NAME).first.wait_for(
            timeout=30_000
        )
        page.get_by_role("tab", name="Charts").click()  # only the open tab is drawn
        page.locator(".js-plotly-plot text", has_text=NAME).first.wait_for(timeout=30_000)
        assert page.locator(".js-plotly-plot path.xerror, .js-plotly-plot .errorbar").count() > 0
        # the entry's own bar has an interval: plotly's computed error bar of that bar
        lo, hi = _interval_of(page, NAME)
        assert lo < hi, (lo, hi)
        page.locator('[data-testid="stMarkdownContainer"] strong', has_text=NAME).first.wait_for(
            timeout=30_000
        )
        assert page.locator('[data-testid="stException"]').count() == 0
        page.screenshot(path=str(SHOTS / "leaderboard_categories.png"), full_page=True)


def test_chat_shows_the_erc_baselines_categories(site):
    from tests.serve import PAGE_PATHS, chromium, screenshot, wait_idle, wait_rendered

    SHOTS.mkdir(parents=True, exist_ok=True)
    with chromium(viewport={"width": 1400, "height": 1400}) as context:
        page = context.new_page()
        page.goto(f"{site}/{PAGE_PATHS['chat']}")
        wait_rendered(page, timeout=60)
        box = page.get_by_test_id("stChatInputTextArea")
        box.fill("昨日、ずっと行きたかった大学に合格したんだ！")
        box.press("Enter")
        message = page.locator('[data-testid="stChatMessage"]').first
        # the classifier is trained once on this fresh server (seconds; more on a busy machine)
        message.get_by_text("Predicted emotion categories", exact=False).wait_for(timeout=180_000)
        wait_idle(page, timeout=120)
        shown = message.get_by_text("Predicted emotion categories", exact=False).inner_text()
        assert "tfidf" in shown and any(f"{c} (" in shown for c in CATEGORIES), shown
        assert page.locator('[data-testid="stException"]').count() == 0
        screenshot(page, SHOTS / "chat_categories.png")

        page.get_by_text("Replay a corpus dialogue").click()
        wait_idle(page, timeout=60)
        page.get_by_role("button", name="Next utterance").click()
        wait_idle(page, timeout=120)
        message = page.locator('[data-testid="stChatMessage"]').first
        message.get_by_text("Predicted emotion categories", exact=False).wait_for(timeout=60_000)
        message.get_by_text("Annotators' aggregated label", exact=False).wait_for(timeout=10_000)
        assert page.locator('[data-testid="stException"]').count() == 0
        screenshot(page, SHOTS / "chat_replay_categories.png")


def test_corpus_shows_the_category_classifiers_confusion(site):
    from tests.serve import PAGE_PATHS, chromium, screenshot, wait_idle, wait_rendered

    with chromium(viewport={"width": 1400, "height": 1200}) as context:
        page = context.new_page()
        page.goto(f"{site}/{PAGE_PATHS['corpus']}")
        wait_rendered(page, timeout=60)
        page.get_by_text("Category classifier", exact=True).first.click()
        page.get_by_role("heading", name="The category classifier against the annotators").wait_for(
            timeout=180_000
        )
        wait_idle(page, timeout=120)
        heatmap = page.locator(".js-plotly-plot", has_text="Annotators' label")
        heatmap.first.wait_for(timeout=30_000)
        # one cell per (annotators' category, classifier's category) pair, counts written in
        cells = page.evaluate(
            """() => {
                const gd = [...document.querySelectorAll('.js-plotly-plot')]
                    .find(g => (g.layout?.title?.text || '').includes("Annotators"));
                const z = gd?.calcdata?.[0]?.[0]?.z;
                return z ? z.map(r => Array.from(r)) : null;
            }"""
        )
        assert cells is not None and len(cells) == len(CATEGORIES)
        assert all(len(row) == len(CATEGORIES) for row in cells)
        assert page.get_by_test_id("stDataFrame").count() >= 1
        page.get_by_text("Macro-F1 on test").first.wait_for()
        page.get_by_text("multi-label pair counts", exact=False).first.wait_for()
        assert page.locator('[data-testid="stException"]').count() == 0
        screenshot(page, SHOTS / "corpus_classifier.png")
