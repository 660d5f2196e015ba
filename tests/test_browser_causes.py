"""The causes page in a real browser: an annotator marks the causes of three items.

Debian's Chromium driven by Playwright against ``streamlit run`` (see tests/test_browser.py).
The screenshot goes to test-output/screenshots/causes.png (gitignored).
"""

from __future__ import annotations

import pytest

from tests.conftest import REAL_CORPUS, REPO, needs_corpus

pytestmark = [pytest.mark.browser, pytest.mark.slow, needs_corpus]

SHOTS = REPO / "test-output" / "screenshots"
ADMIN = "browser-admin-token-of-24-characters"


@pytest.fixture(scope="module")
def setup(tmp_path_factory):
    """A running site whose studies database holds a 3-item cause sample and one code."""
    from tests.serve import CHROMIUM, running_site

    if not CHROMIUM.exists():
        pytest.skip(f"Debian's Chromium is not installed at {CHROMIUM}")
    import os

    base = tmp_path_factory.mktemp("browser-causes")
    (base / "home").mkdir()
    env = {
        "HOME": str(base / "home"),
        "ETC_DATA_DIR": str(REAL_CORPUS),
        "ETC_STORE_DB": str(base / "etc.duckdb"),
        "ETC_CACHE_DIR": str(base / "cache"),
        "ETC_LEADERBOARD_DB": str(base / "leaderboard.duckdb"),
        "ETC_STUDIES_DB": str(base / "studies.duckdb"),
        "ETC_SECRETS_FILE": str(base / "no-secrets.toml"),
        "ETC_ADMIN_TOKEN": ADMIN,
        "ETC_PROGRESS": "0",
        "HF_HUB_OFFLINE": "1",
    }
    from etclib import annotation, causes
    from etclib.corpus import load_corpus

    corpus = load_corpus(REAL_CORPUS)
    db = env["ETC_STUDIES_DB"]
    os.environ["ETC_ADMIN_TOKEN"] = ADMIN  # the admin's token, as the site has it
    try:
        causes.draw_sample(ADMIN, corpus, 3, seed=7, db=db)
        code = annotation.issue_code(ADMIN, "browser", db=db).code
    finally:
        del os.environ["ETC_ADMIN_TOKEN"]
    keys = causes.sample_keys(db=db)
    with running_site(env, log=base / "server.log") as url:
        yield url, code, keys, corpus, env


def test_annotator_marks_causes_for_three_items(setup):
    from tests.serve import chromium, wait_idle, wait_rendered

    url, code, keys, corpus, env = setup
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
            page.wait_for_timeout(400)  # the rerun's elements finish drawing
            SHOTS.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(SHOTS / f"causes_{i + 1}.png"), full_page=True)
            page.get_by_role("button", name="Save causes").click()
            page.get_by_text(f"Saved item {key[0]}/{key[1]}/{key[2]}", exact=False).first.wait_for(
                timeout=30_000
            )
        page.get_by_text("Nothing left for you", exact=False).first.wait_for(timeout=30_000)
        assert page.locator('[data-testid="stException"]').count() == 0
        page.screenshot(path=str(SHOTS / "causes_done.png"), full_page=True)

    from etclib import causes

    answers = causes.human_answers(db=env["ETC_STUDIES_DB"])
    got = {(r.dialogue_id, r.turn, r.role): r.causes for r in answers.itertuples()}
    assert set(got) == set(keys)
    for i, key in enumerate(keys):
        pos = causes.position(key[1], key[2])
        expected = () if i == 2 else tuple(sorted({1, pos}))
        assert got[key] == expected
