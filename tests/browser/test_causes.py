"""The cause layer in a real browser (issue #14): an annotator marks the causes of three items
on the causes page, and the corpus dialogue view then highlights them; a submission scored by the
site's worker shows its scores by cause type in the Leaderboard's detail.

Debian's Chromium driven by Playwright against ``streamlit run`` (see tests/browser/test_pages.py).
Screenshots go to test-output/screenshots/causes_*.png (gitignored).
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests.conftest import REAL_CORPUS, REPO, needs_corpus

pytestmark = needs_corpus

SHOTS = REPO / "test-output" / "screenshots"
ADMIN = "browser-admin-token-of-24-characters"
ENTRY = "Cause breakdown entry"


def _submit_queued(env: dict, path) -> str:
    """Submit a transcription predictions file through the leaderboard API and leave it queued
    (the site's worker scores it); its submission id."""
    import os

    code = (
        "import sys, leaderboard as lb\n"
        f"r = lb.submit({str(path)!r}, {{'name': {ENTRY!r}, 'setting': 'other'}})\n"
        "print(r.id)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        cwd=REPO,
        env={**os.environ, **env},
        check=True,
        capture_output=True,
        text=True,
        timeout=300,
    )
    return out.stdout.strip().splitlines()[-1]


@pytest.fixture(scope="module")
def setup(tmp_path_factory, warm_cache):
    """A running site whose studies database holds a 3-item cause sample and one code."""
    from tests.serve import CHROMIUM, running_site, site_env

    if not CHROMIUM.exists():
        pytest.skip(f"Debian's Chromium is not installed at {CHROMIUM}")
    import os

    base = tmp_path_factory.mktemp("browser-causes")
    env = site_env(base, REAL_CORPUS, cache=warm_cache, ETC_ADMIN_TOKEN=ADMIN)
    from etclib.corpus import load_corpus
    from etclib.studies import annotation, causes

    corpus = load_corpus(REAL_CORPUS)
    db = env["ETC_STUDIES_DB"]
    os.environ["ETC_ADMIN_TOKEN"] = ADMIN  # the admin's token, as the site has it
    try:
        causes.draw_sample(ADMIN, corpus, 3, seed=7, db=db)
        code = annotation.issue_code(ADMIN, "browser", db=db).code
    finally:
        del os.environ["ETC_ADMIN_TOKEN"]
    keys = causes.sample_keys(db=db)
    from etclib.task import items

    preds = base / "preds.jsonl"
    with open(preds, "w", encoding="utf-8") as f:
        for it in items(corpus, "test"):  # the utterance's start: per-item scores that differ
            rec = {"dialogue_id": it.dialogue_id, "turn": it.turn, "role": it.role}
            f.write(json.dumps({**rec, "prediction": it.utterance[:8]}, ensure_ascii=False) + "\n")
    sid = _submit_queued(env, preds)
    with running_site(env, log=base / "server.log") as url:
        yield url, code, keys, corpus, env, sid


def test_annotator_marks_causes_for_three_items(setup):
    from tests.serve import chromium, screenshot, wait_idle, wait_rendered

    url, code, keys, corpus, env, _ = setup
    with chromium(viewport={"width": 1400, "height": 1800}) as context:
        page = context.new_page()
        page.goto(f"{url}/causes")
        wait_rendered(page, timeout=60)
        page.get_by_role("heading", name="Emotion causes").first.wait_for(timeout=30_000)
        page.get_by_role("textbox", name="Annotator code").fill(code)
        page.get_by_role("textbox", name="Annotator code").press("Enter")
        for i, key in enumerate(keys):
            page.get_by_text(f"Dialogue {key[0]} · turn {key[1]}", exact=False).first.wait_for(
                timeout=30_000
            )
            wait_idle(page, timeout=30)
            item = next(u for u in corpus.by_id[key[0]].utterances if u.key == key)
            if i == 2:  # the third: not in the dialogue
                page.get_by_text("Not in the dialogue (latent", exact=False).first.click()
            else:  # the target itself, and for a later item the first utterance too
                page.get_by_text("← target", exact=False).first.click()
                if item.position > 1:
                    page.get_by_text("[1] A:", exact=False).first.click()
            wait_idle(page, timeout=30)
            screenshot(page, SHOTS / f"causes_{i + 1}.png")
            page.get_by_role("button", name="Save causes").click()
            page.get_by_text(f"Saved item {key[0]}/{key[1]}/{key[2]}", exact=False).first.wait_for(
                timeout=30_000
            )
        page.get_by_text("Nothing left for you", exact=False).first.wait_for(timeout=30_000)
        assert page.locator('[data-testid="stException"]').count() == 0
        page.screenshot(path=str(SHOTS / "causes_done.png"), full_page=True)

    from etclib.studies import causes

    answers = causes.human_answers(db=env["ETC_STUDIES_DB"])
    got = {(r.dialogue_id, r.turn, r.role): r.causes for r in answers.itertuples()}
    assert set(got) == set(keys)
    for i, key in enumerate(keys):
        pos = causes.position(key[1], key[2])
        expected = () if i == 2 else tuple(sorted({1, pos}))
        assert got[key] == expected

    # the corpus dialogue view highlights each item's causes (one answer each: no majority yet)
    with chromium(viewport={"width": 1400, "height": 2200}) as context:
        page = context.new_page()
        for i, key in enumerate(keys):
            _check_highlights(page, url, key, got[key], i)


def _check_highlights(page, url: str, key, marked: tuple[int, ...], i: int) -> None:
    """Open ``key``'s dialogue on the corpus page, pick ``key`` as the target and check that
    exactly the utterances at ``marked`` carry a cause badge, and ``key`` the target badge."""
    from etclib.studies import causes
    from tests.serve import screenshot, wait_idle, wait_rendered
    from views import cause_layer

    page.goto(f"{url}/corpus?corpus_dialogue={key[0]}")
    wait_rendered(page, timeout=60)
    page.get_by_text(f"Dialogue {key[0]}", exact=False).first.wait_for(timeout=60_000)
    wait_idle(page, timeout=60)
    label = cause_layer.target_label(key[1], key[2]) + " · causes marked"
    page.get_by_label("Show the emotion causes of").click()
    page.get_by_role("option", name=label, exact=True).click()
    wait_idle(page, timeout=60)
    page.get_by_text(cause_layer.ONE_ANSWER, exact=False).first.wait_for(timeout=30_000)
    wait_idle(page, timeout=60)
    pos = causes.position(key[1], key[2])
    messages = page.locator('[data-testid="stChatMessage"]')
    messages.nth(9).wait_for(timeout=30_000)  # the whole dialogue is drawn
    page.locator("span.stMarkdownBadge", has_text="chosen utterance").wait_for(timeout=30_000)
    assert messages.count() == 10
    badges = page.locator("span.stMarkdownBadge")
    causes_shown = badges.filter(has_text=f"cause of utterance {pos}")
    assert causes_shown.count() == len(marked)
    for p in range(1, 11):
        here = messages.nth(p - 1).locator("span.stMarkdownBadge")
        assert here.filter(has_text="cause of utterance").count() == (1 if p in marked else 0)
        assert here.filter(has_text="chosen utterance").count() == (1 if p == pos else 0)
    if not marked:  # latent: nothing in the dialogue, and the summary says so
        page.get_by_text("none in the dialogue", exact=False).first.wait_for(timeout=10_000)
    assert page.locator('[data-testid="stException"]').count() == 0
    messages.nth(pos - 1).scroll_into_view_if_needed()  # the target and the turns before it
    screenshot(page, SHOTS / f"causes_corpus_{i + 1}.png", full_page=False)


def _grid_rows(table) -> dict[str, dict[str, str]]:
    """A Streamlit dataframe's cells, read from the grid's accessible table (the canvas draws
    them; glide-data-grid mirrors the visible cells as ``th`` / ``td`` for screen readers):
    first column -> {column name: cell text}."""
    names = [h.text_content() or "" for h in table.locator('th[role="columnheader"]').all()]
    out = {}
    for row in table.locator('tbody tr[role="row"]').all():
        cells = [c.text_content() or "" for c in row.locator('td[role="gridcell"]').all()]
        out[cells[0]] = dict(zip(names, cells))
    return out


def test_leaderboard_breaks_a_scored_entry_down_by_cause_type(setup):
    """The queued submission is scored by the site's worker; its detail has the breakdown."""
    import time

    from etclib.studies import causes
    from etclib.task import items
    from tests.serve import chromium, screenshot, wait_idle, wait_rendered

    url, _, _, corpus, _, sid = setup
    with chromium(viewport={"width": 1400, "height": 2400}) as context:
        page = context.new_page()
        deadline = time.monotonic() + 300
        while True:  # the worker scores it in the background: reload until it is on the board
            page.goto(f"{url}/leaderboard?submission={sid}")
            wait_rendered(page, timeout=60)
            wait_idle(page, timeout=120)
            title = page.locator('[data-testid="stMarkdownContainer"] strong', has_text=ENTRY)
            if title.count() and page.get_by_text("status: scored", exact=False).count():
                break
            assert time.monotonic() < deadline, "the submission was not scored within 300 s"
            page.wait_for_timeout(5_000)
        expander = page.locator('[data-testid="stExpander"]', has_text="By cause type")
        expander.get_by_text("By cause type").click()
        caption = expander.get_by_text("Mean per-item score (×100) by the emotion cause type")
        caption.wait_for(timeout=30_000)
        table = expander.get_by_test_id("stDataFrame")
        table.wait_for(timeout=30_000)
        text = caption.inner_text()
        # no type has two human answers yet: every item's type is the proxy's
        n = len(items(corpus, "test"))
        assert f"proxy (partner mention), {n:,} items" in text, text
        for kind in ("inter-personal", "other"):  # the grid mirrors its cells once drawn
            cell = table.locator('td[role="gridcell"]', has_text=kind).first
            cell.wait_for(state="attached", timeout=30_000)  # (hidden: inside the canvas)
        rows = _grid_rows(table)
        assert set(rows) == {"inter-personal", "other"}, rows
        # independently: etclib's ROUGE-L (mean of item F-measures, ×100) over each proxy type's
        # items, and the item counts by the proxy itself
        from etclib.metrics import rouge

        by_type: dict[str, tuple[list[str], list[str]]] = {}
        for it in items(corpus, "test"):
            preds, refs = by_type.setdefault(causes.proxy_type(it.reference, it.role), ([], []))
            preds.append(it.utterance[:8])
            refs.append(it.reference)
        for kind, (preds, refs) in by_type.items():
            assert int(rows[kind]["items"]) == len(preds)
            assert rows[kind]["source"] == f"proxy (partner mention) {len(preds)}"
            expected = rouge.METRIC.score(preds, refs)["rougeL"]
            # headed by the metric's name and direction (etclib.metrics.heading), not its key
            assert float(rows[kind]["ROUGE-L ↑"]) == pytest.approx(expected, abs=0.01)
            assert 0 <= float(rows[kind]["ROUGE-L ↑"]) <= 100
        assert page.locator('[data-testid="stException"]').count() == 0
        screenshot(expander, SHOTS / "causes_leaderboard_breakdown.png")
        screenshot(page, SHOTS / "causes_leaderboard.png")
