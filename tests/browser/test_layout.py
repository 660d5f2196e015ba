"""Every page as a visitor sees it, at a laptop's 1280×800 and a phone's 390×844 (issue #26):
nothing wider than the window, chart labels that fit (long entry names shortened, the whole name
on hover), tables with their key column first, and no operator text (settings, commands, file
paths) in what the page shows, in each state a visitor reaches by clicking: every expander
open, each option of each segmented control, each tab, and on the Leaderboard an entry's detail.
Charts seen in each state are saved to test-output/screenshots/layout/ to look at.

Debian's Chromium driven by Playwright against one served site (tests/serve.py), its board
seeded with baselines and one entry with a very long name; skipped without /usr/bin/chromium or
the real corpus. A screenshot of each page at each size goes to docs/img/<page>-<width>.png.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest

from etclib.cli import COMMANDS
from tests.conftest import REAL_CORPUS, REPO, needs_corpus

pytestmark = needs_corpus

SIZES = ((1280, 800), (390, 844))
IMG = REPO / "docs" / "img"
LONG_NAME = "A very long entry name that a submitter chose to describe each setting of a run"
#: The longest entry name a chart writes out whole (a longer one is shortened).
LABEL_CHARS = 40
REPO_URL = "https://example.test/etc/benchmark"
#: What only an operator needs: settings, commands (make, python -m, any etclib command) and
#: file paths in the repository.
OPERATOR_TEXT = re.compile(
    r"ETC_[A-Z]|python -m|\bmake |(?<![\w/.])docs/\w|\betclib (?:"
    + "|".join(map(re.escape, COMMANDS))
    + r")\b"
)
SEED = f"""
import leaderboard as lb
from etclib.corpus import load_corpus
from etclib.predictions import dumps_jsonl
from etclib.task import items
its = items(load_corpus(), "test")
lb.seed_baselines(reported=True, backends=("copy", "majority"))
real = dumps_jsonl((it.key, it.utterance[:8] + "と思った") for it in its).encode()
receipt = lb.submit(real, {{"name": {LONG_NAME!r}}}, file_name="real.jsonl")
lb.process_jobs()
print(receipt.id)
"""
#: Visible text of the page, with every expander opened first (a closed one hides its text).
OPEN_EXPANDERS = """() => {
  for (const d of document.querySelectorAll('[data-testid="stExpander"] details:not([open])'))
    d.querySelector('summary')?.click();
}"""
OVERFLOW = """() => ({
  scroll: document.documentElement.scrollWidth,
  body: document.body.scrollWidth,
  width: window.innerWidth,
})"""
STATES = REPO / "test-output" / "screenshots" / "layout"
#: Widgets still being mounted show as skeletons: a screenshot waits for them.
SETTLED = """() => !document.querySelector('[data-testid="stSkeleton"]')"""
#: Pages whose first table is a ranking: the entry's name and its score among its first four
#: columns, so a phone shows them without scrolling sideways.
KEY_FIRST = ("home", "leaderboard")
GRID_HEADER = """(el) => Array.from(el.querySelector('table[role="grid"] tr').querySelectorAll('th, td'))
  .map((c) => c.textContent.trim()).filter((t) => t)"""
#: Plotly draws a chart after the script has ended: every shown chart has its axes drawn.
CHARTS_DRAWN = """() => !document.querySelector('[data-testid="stSkeleton"]') && Array.from(document.querySelectorAll('[data-testid="stPlotlyChart"]'))
  .every((p) => !p.offsetParent || p.querySelector('.main-svg .xtick, .main-svg .ytick'))"""
#: Each plotly chart's title and tick labels: their boxes, the chart's box, and the y labels.
CHART_BOXES = r"""() => Array.from(document.querySelectorAll('.js-plotly-plot')).map((plot) => {
  const box = (el) => { const r = el.getBoundingClientRect();
    return [r.left, r.top, r.right, r.bottom]; };
  const sel = (s) => Array.from(plot.querySelectorAll(s)).filter((e) => e.textContent.trim());
  // a rotated label's box is not its shape: those are left to plotly's own spacing
  const flat = (es) => es.filter((e) => !/rotate\(\s*-?[1-9]/.test(e.getAttribute('transform') || ''));
  return {
    chart: box(plot),
    title: sel('.gtitle').map(box),
    yticks: sel('.yaxislayer-above .ytick text, .yaxislayer-above text.ytick').map(box),
    ylabels: sel('.yaxislayer-above .ytick text, .yaxislayer-above text.ytick')
      .map((e) => e.textContent),
    xticks: flat(sel('.xaxislayer-above .xtick text, .xaxislayer-above text.xtick')).map(box),
  };
})"""


@pytest.fixture(scope="module")
def site(tmp_path_factory, warm_cache):
    from tests.serve import CHROMIUM, running_site, site_env

    if not CHROMIUM.exists():
        pytest.skip(f"Debian's Chromium is not installed at {CHROMIUM}")
    base = tmp_path_factory.mktemp("layout-site")
    env = site_env(base, REAL_CORPUS, cache=warm_cache, ETC_REPOSITORY_URL=REPO_URL)
    seeded = subprocess.run(
        [sys.executable, "-c", SEED],
        cwd=REPO,
        env={**os.environ, **env},
        check=True,
        timeout=600,
        capture_output=True,
        text=True,
    )
    with running_site(env, log=base / "server.log") as url:
        yield url, seeded.stdout.split()[-1]  # the site, and the long-named entry's id


def _overlap(a, b) -> bool:
    return a[0] < b[2] - 1 and b[0] < a[2] - 1 and a[1] < b[3] - 1 and b[1] < a[3] - 1


def _chart_problems(page, where: str) -> list[str]:
    """What is cut off or overlaps in the page's plotly charts."""
    problems = []
    for chart in page.evaluate(CHART_BOXES):
        left, top, right, bottom = chart["chart"]
        for label, b in zip(chart["ylabels"], chart["yticks"], strict=True):
            if b[0] < left - 1 or b[2] > right + 1:
                problems.append(f"{where}: y label {label!r} cut off")
            if len(label) > LABEL_CHARS:
                problems.append(f"{where}: y label {label!r} not shortened")
        for ticks in (chart["yticks"], chart["xticks"]):
            for i, a in enumerate(ticks):
                problems += [
                    f"{where}: tick labels overlap: {a} {b}"
                    for b in ticks[i + 1 :]
                    if _overlap(a, b)
                ]
        problems += [
            f"{where}: chart title cut off"
            for t in chart["title"]
            if t[0] < left - 1 or t[2] > right + 1 or t[1] < top - 1 or t[3] > bottom + 1
        ]
    return problems


def _operator_text(text: str, where: str) -> list[str]:
    return [
        f"{where}: operator text {text[max(0, m.start() - 40) : m.end() + 40]!r}"
        for m in OPERATOR_TEXT.finditer(text)
    ]


def _states(page, where: str) -> tuple[list[str], int]:
    """What is wrong in the page's states a visitor reaches by clicking: every expander open,
    each option of each segmented control, and in each, each tab of each tab bar (its text,
    and its charts once drawn); the number of charts looked at."""
    from tests.serve import rerun_after

    seen = [0]

    def state(name: str) -> list[str]:
        page.evaluate(OPEN_EXPANDERS)
        page.wait_for_function(CHARTS_DRAWN, timeout=60_000)
        charts = len(page.evaluate(CHART_BOXES))
        plots = page.locator(".js-plotly-plot")
        for i in range(charts):  # to look at (not committed): each chart drawn, in each state
            if plots.nth(i).is_visible():
                STATES.mkdir(parents=True, exist_ok=True)
                shot = f"{re.sub(r'[^A-Za-z0-9]+', '-', name).strip('-')}-{i}.png"
                plots.nth(i).screenshot(path=str(STATES / shot))
        seen[0] += charts
        return _operator_text(page.inner_text("body"), name) + _chart_problems(page, name)

    def tabs(name: str) -> list[str]:
        found = state(name)
        tab, i = page.get_by_role("tab"), 0
        while i < tab.count():  # a tab may hold tab bars of its own: counted again each time
            one = tab.nth(i)
            i += 1
            if one.is_visible():
                label = one.inner_text().strip()
                rerun_after(page, one.click)
                found += state(f"{name}, tab {label!r}")
        return found

    problems = tabs(where)
    options = page.locator('[data-testid="stButtonGroup"] button')
    for i in range(options.count()):
        option = options.nth(i)
        if option.is_visible() and option.get_attribute("aria-checked") != "true":
            label = option.inner_text().strip()
            rerun_after(page, option.click)
            problems += tabs(f"{where}, {label!r}")
    return problems, seen[0]


@pytest.mark.parametrize(("width", "height"), SIZES)
def test_every_page_fits_and_speaks_to_a_visitor(site, width, height):
    from tests.serve import PAGE_PATHS, chromium, site_pages, wait_idle, wait_rendered

    url, entry = site
    IMG.mkdir(parents=True, exist_ok=True)
    problems = []
    drawn = {}  # page -> charts looked at, over its states
    links: set[str] = set()
    with chromium(viewport={"width": width, "height": height}) as context:
        page = context.new_page()
        for script, title in site_pages():
            stem = script.rsplit("/", 1)[-1].removesuffix(".py")
            where = f"{title} at {width}×{height}"
            page.goto(f"{url}/{PAGE_PATHS[stem]}")
            wait_rendered(page, timeout=180)
            wait_idle(page, timeout=120)
            page.wait_for_function(CHARTS_DRAWN, timeout=60_000)
            page.wait_for_function(SETTLED, timeout=60_000)
            page.screenshot(path=str(IMG / f"{stem}-{width}.png"))  # the window, as it opens
            assert page.locator('[data-testid="stException"]').count() == 0, where
            size = page.evaluate(OVERFLOW)
            if max(size["scroll"], size["body"]) > size["width"]:
                problems.append(f"{where}: page {size} wider than the window")
            if stem in KEY_FIRST:
                grid = page.get_by_test_id("stDataFrame").first
                grid.locator('table[role="grid"] tr').first.wait_for(state="attached")
                header = grid.evaluate(GRID_HEADER)
                first = header[:4]
                if "name" not in first or not any("[95% CI]" in h for h in first):
                    problems.append(f"{where}: the table's key columns come late: {header}")
            found, charts = _states(page, where)
            problems += found
            if stem == "leaderboard":  # and an entry's detail, with its expanders open
                page.goto(f"{url}/{PAGE_PATHS[stem]}?submission={entry}")
                wait_rendered(page, timeout=180)
                page.get_by_text("By cause type").first.wait_for(timeout=60_000)
                found, _ = _states(page, f"{where}, an entry's detail")
                problems += found
            drawn[stem] = charts
            links |= set(page.eval_on_selector_all("a[href]", "(as) => as.map((a) => a.href)"))
    assert not problems, "\n".join(dict.fromkeys(problems))
    # "see docs/..." is a link to the rendered document in the repository
    assert f"{REPO_URL}/blob/main/docs/causes.md" in links, sorted(links)
    assert drawn["leaderboard"] >= 2 and drawn["corpus"] >= 1, drawn  # the checks saw charts


def test_a_ranking_row_opens_its_entrys_detail(site):
    """Selecting a row of the ranking (a grid drawn on a canvas: a real browser's click) opens
    that entry's detail and puts it in the URL, so the link reproduces it."""
    from tests.serve import chromium, click_grid_row, grid_rows, rerun_after, wait_rendered

    url, _ = site
    with chromium(viewport={"width": 1280, "height": 800}) as context:
        page = context.new_page()
        page.goto(f"{url}/leaderboard")
        wait_rendered(page, timeout=180)
        grid = page.get_by_test_id("stDataFrame").first
        second = grid_rows(page, grid)[1]  # header -> text
        rerun_after(page, lambda: click_grid_row(page, grid, 1))
        page.wait_for_url(re.compile(r"[?&]submission=\w+"), timeout=60_000)
        # the detail's heading names the row's entry, with its "compare with…" picker
        title = page.get_by_test_id("stMarkdown").filter(has_text=second["name"]).first
        title.wait_for(timeout=60_000)
        page.get_by_text("Compare with…").wait_for(timeout=60_000)
