"""Every page as a visitor meets it in a real browser (Debian's Chromium driven by Playwright
against one served site on a copy of the run's seeded board, tests/browser/conftest.py): the
site's navigation from a first visit to any page; at a laptop's 1440×900 and a phone's 390×844,
nothing wider than the window, chart labels that fit (long entry names on two lines, cut beyond,
the whole name on hover), chart titles clear of subplot titles and line labels, the columns a
visitor came for in view (Home's whole entry names, each ranking row's score with its interval,
each Compare row's verdict, a refused upload's problems), and no operator text (settings, commands, file paths) in any state a
visitor reaches by clicking (every expander open, each option of each segmented control, each
tab, and an entry's page); a click on a ranking row opening its entry's page; the chat's
speakers alternating when a visitor sends the moment a prediction appears, and an overlong paste
kept in the box; a click on a corpus search result's row opening its
dialogue; and the page script that tells a finished script run from Streamlit's websocket
messages (tests/serve.py). What each page shows, without a browser:
tests/integration/test_site_pages.py and the AppTest modules beside it."""

from __future__ import annotations

import re

import pytest

from etclib.cli import COMMANDS
from tests.conftest import REAL_CORPUS, REPO, needs_corpus
from tests.serve import PAGE_PATHS, open_page, shown_exceptions, wait_idle

pytestmark = needs_corpus

SIZES = ((1440, 900), (390, 844))
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
#: Opens the page's first closed expander (a closed one hides its text); whether there was one.
OPEN_EXPANDER = """() => {
  const closed = document.querySelector('[data-testid="stExpander"] details:not([open])');
  closed?.querySelector('summary')?.click();
  return !!closed;
}"""
OVERFLOW = """() => ({
  scroll: document.documentElement.scrollWidth,
  body: document.body.scrollWidth,
  width: window.innerWidth,
})"""
#: The headers of the columns a data grid has drawn: those in view (it draws no other), the
#: last of them perhaps only in part.
GRID_HEADER = """(el) => Array.from(el.querySelector('table[role="grid"] tr').querySelectorAll('th, td'))
  .map((c) => c.textContent.trim()).filter((t) => t)"""
#: A file the Submit page refuses with a problem per line (a long message among them).
BROKEN = b'{"dialogue_id": 1, "turn": 1, "role": "speaker"}\nnot json at all\n'
#: A static table (st.table): how wide it is, and how wide its box.
STATIC_WIDTH = (
    """(el) => [el.querySelector('table').scrollWidth, el.getBoundingClientRect().width]"""
)
#: Vega draws a chart after the script has ended: every shown chart has its axes drawn.
CHARTS_DRAWN = """() => !document.querySelector('[data-testid="stSkeleton"]') && Array.from(document.querySelectorAll('[data-testid="stVegaLiteChart"]'))
  .every((c) => !c.offsetParent || c.querySelector('svg g.role-axis, canvas'))"""
#: Each Vega chart's titles and axis labels (their boxes and lines), the texts it writes in
#: the plot (a floor line's name among them), and the chart's box.
CHART_BOXES = r"""() => Array.from(document.querySelectorAll('[data-testid="stVegaLiteChart"]')).map((chart) => {
  const box = (el) => { const r = el.getBoundingClientRect();
    return [r.left, r.top, r.right, r.bottom]; };
  const sel = (s) => Array.from(chart.querySelectorAll(s)).filter((e) => e.textContent.trim());
  // a rotated label's box is not its shape: those are left to Vega's own spacing
  const flat = (es) => es.filter((e) => !/rotate\(\s*-?[1-9]/.test(e.getAttribute('transform') || ''));
  // a text on several lines: Vega draws a tspan per line
  const lines = (e) => { const t = Array.from(e.querySelectorAll('tspan'));
    return t.length ? t.map((l) => l.textContent) : [e.textContent]; };
  const labels = (axis) => sel(`g.role-axis[aria-label^="${axis}-axis"] g.role-axis-label text`);
  return {
    chart: box(chart),
    title: sel('g.role-title text').map(box),
    titles: sel('g.role-title text').map(lines),
    notes: sel('g.role-mark text').map(box),
    yticks: labels('Y').map(box),
    ylabels: labels('Y').map(lines),
    xticks: flat(labels('X')).map(box),
  };
})"""


#: What a change of the window's size redraws: the page's width, and each chart's, grid's and
#: static table's box and drawing (Vega draws again at the new width after the resize).
LAYOUT = """() => JSON.stringify([document.documentElement.scrollWidth, document.body.scrollWidth,
  ...Array.from(document.querySelectorAll(
    '[data-testid="stVegaLiteChart"], [data-testid="stDataFrame"], [data-testid="stTable"]'))
  .map((e) => { const r = e.getBoundingClientRect(), svg = e.querySelector('svg');
    return [r.width, r.height, svg && svg.getAttribute('width')]; })])"""


def _at_each_width(page):
    """Each of :data:`SIZES`, the window's present one first, with the page redrawn for it: a
    resize reruns no script (the site lays out in the browser alone), so one visit of a state
    checks both widths. Yields "W×H" once the page's boxes stay the same over two frames."""
    from tests.serve import TWO_FRAMES

    now = (page.viewport_size["width"], page.viewport_size["height"])
    for width, height in sorted(SIZES, key=lambda size: size != now):
        if (width, height) != now:
            page.set_viewport_size({"width": width, "height": height})
            before = None
            for _ in range(100):
                page.evaluate(TWO_FRAMES)
                drawn = page.evaluate(LAYOUT)
                if drawn == before:
                    break
                before = drawn
            page.wait_for_function(CHARTS_DRAWN, timeout=60_000)
        now = (width, height)
        yield f"{width}×{height}"


def _overlap(a, b) -> bool:
    return a[0] < b[2] - 1 and b[0] < a[2] - 1 and a[1] < b[3] - 1 and b[1] < a[3] - 1


def _chart_problems(page, where: str) -> list[str]:
    """What is cut off or overlaps in the page's Vega charts: by the chart's box, or by Vega
    itself (a title longer than its room ends in "…")."""
    problems = []
    for chart in page.evaluate(CHART_BOXES):
        left, top, right, bottom = chart["chart"]
        for lines, b in zip(chart["ylabels"], chart["yticks"], strict=True):
            if b[0] < left - 1 or b[2] > right + 1:
                problems.append(f"{where}: y label {lines!r} cut off")
            if len(lines) > 2 or any(len(line) > LABEL_CHARS for line in lines):
                problems.append(f"{where}: y label {lines!r} not shortened")
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
        problems += [
            f"{where}: chart title {lines!r} cut short"
            for lines in chart["titles"]
            if "…" in "".join(lines)
        ]
        problems += [
            f"{where}: chart title over a panel's title or a line's name: {t} {n}"
            for i, t in enumerate(chart["title"])
            for n in chart["notes"] + chart["title"][i + 1 :]
            if _overlap(t, n)
        ]
    return problems


def _whole_in_view(page, grid, wanted: str, where: str) -> list[str]:
    """The column of data grid ``grid`` headed ``wanted`` (or a heading containing it) is
    whole in the window: drawn, and a column after it drawn too."""
    from tests.serve import TWO_FRAMES

    grid.locator('table[role="grid"] tr').first.wait_for(state="attached")
    page.evaluate(TWO_FRAMES)
    header = grid.evaluate(GRID_HEADER)
    at = next((i for i, h in enumerate(header) if wanted in h), None)
    if at is None or at == len(header) - 1:
        return [f"{where}: the column {wanted!r} is not whole in the window: {header}"]
    return []


def _key_columns(page, url: str, stem: str, where: str, long_name: str, ids) -> list[str]:
    """What a visitor came for on ``stem``'s page is in view at each width: Home's whole entry
    names (a static table no wider than its box); each ranking row's score with its interval;
    each Compare row's verdict; a refused upload's problems (on a laptop's width)."""
    from tests.serve import table_rows

    if stem == "compare":
        open_page(
            page, f"{url}/{PAGE_PATHS[stem]}?track=transcription&a={ids[0]}&b={ids[1]}", timeout=180
        )
        # the caption under the metric table (the page's intro also says "95% interval")
        page.get_by_text("randomization trials", exact=False).first.wait_for(timeout=120_000)
        wait_idle(page, timeout=120)
    if stem == "submit":
        page.set_viewport_size({"width": SIZES[0][0], "height": SIZES[0][1]})
        page.locator('input[type="file"]').set_input_files(
            files=[{"name": "broken.jsonl", "mimeType": "text/plain", "buffer": BROKEN}]
        )
        page.get_by_text("was refused", exact=False).first.wait_for(timeout=120_000)
        grid = page.get_by_test_id("stDataFrame").first
        grid.locator('table[role="grid"] tr').first.wait_for(state="attached")
        header = grid.evaluate(GRID_HEADER)
        return [] if header == ["line", "problem"] else [f"{where}: problems cut: {header}"]
    problems = []
    for size in _at_each_width(page):
        at = f"{where} at {size}"
        if stem == "home":
            table = page.get_by_test_id("stTable").first
            names = [row["name"] for row in table_rows(table)]
            wide, box = table.evaluate(STATIC_WIDTH)
            problems += [f"{at}: Home's names cut: {names}"] if long_name not in names else []
            problems += [f"{at}: Home's table wider than its box"] if wide > box + 1 else []
        if stem == "leaderboard":
            grid = page.get_by_test_id("stDataFrame").first
            problems += _whole_in_view(page, grid, "[95% CI]", f"{at}, the ranking")
        if stem == "compare":
            grid = page.get_by_test_id("stDataFrame").first
            problems += _whole_in_view(page, grid, "verdict", f"{at}, the metric table")
    return problems


def _operator_text(text: str, where: str) -> list[str]:
    return [
        f"{where}: operator text {text[max(0, m.start() - 40) : m.end() + 40]!r}"
        for m in OPERATOR_TEXT.finditer(text)
    ]


def _states(page, where: str, clicks: bool = True) -> tuple[list[str], int]:
    """What is wrong in the page's states a visitor reaches by clicking: every expander open,
    each option of each segmented control, and in each, each tab of each tab bar (its text,
    and its charts once drawn); the number of charts looked at. ``clicks=False``: the state
    with every expander open only (its tabs and options were looked at before)."""
    from tests.serve import rerun_after

    seen = [0]

    def open_expanders() -> None:
        # one at a time: an expander drawn when opened (on_change="rerun") reruns the script
        opened = [True]
        for _ in range(50):
            rerun_after(page, lambda: opened.append(page.evaluate(OPEN_EXPANDER)))
            if not opened[-1]:
                return
        raise AssertionError(f"{where}: expanders that do not stay open")

    def state(name: str) -> list[str]:
        open_expanders()
        page.wait_for_function(CHARTS_DRAWN, timeout=60_000)
        seen[0] += len(page.evaluate(CHART_BOXES))
        found = _operator_text(page.inner_text("body"), name)
        for size in _at_each_width(page):
            found += _chart_problems(page, f"{name} at {size}")
        return found

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

    if not clicks:
        return state(where), seen[0]
    problems = tabs(where)
    options = page.locator('[data-testid="stButtonGroup"] button')
    for i in range(options.count()):
        option = options.nth(i)
        if option.is_visible() and option.get_attribute("aria-checked") != "true":
            label = option.inner_text().strip()
            rerun_after(page, option.click)
            problems += tabs(f"{where}, {label!r}")
    return problems, seen[0]


@pytest.fixture(scope="module")
def site(serve_seeded):
    # the chat race sends 100 utterances in about a minute from one address (the limit counts
    # per visitor, not per session); the docs links go to a repository of the test's own
    with serve_seeded(ETC_CHAT_PER_MINUTE="1000", ETC_REPOSITORY_URL=REPO_URL) as url:
        yield url


def test_first_visit_to_a_page_gets_the_site_navigation(site, page):
    """The very first session of the server opens a page that is not Home."""
    open_page(page, f"{site}/corpus")
    nav = page.get_by_test_id("stSidebarNav")
    nav.get_by_text(
        "Judge vs Human" if (REPO / "site_pages/judge_vs_human.py").is_file() else "About"
    ).wait_for()
    assert nav.get_by_text("streamlit app").count() == 0
    wide = page.get_by_test_id("stMainBlockContainer").bounding_box()["width"]
    assert wide > 900  # the page config of streamlit_app.py (layout="wide") applies


def test_every_page_fits_and_speaks_to_a_visitor(site, browser, entries):
    """Every page, each state a visitor reaches by clicking, at a laptop's and a phone's width
    (the window resized in one visit: the layout is the browser's alone)."""
    from tests.serve import site_pages

    long_name, entry = entries["long"]
    other = entries["real"][1]
    problems = []
    drawn = {}  # page -> charts looked at, over its states
    links: set[str] = set()
    page = browser.new_page()
    page.set_viewport_size({"width": SIZES[0][0], "height": SIZES[0][1]})
    for script, where in site_pages():
        stem = script.rsplit("/", 1)[-1].removesuffix(".py")
        open_page(page, f"{site}/{PAGE_PATHS[stem]}", timeout=180)
        wait_idle(page, timeout=120)
        page.wait_for_function(CHARTS_DRAWN, timeout=60_000)
        assert shown_exceptions(page) == 0, where
        assert page.locator('[data-testid="stAlertContentError"]').count() == 0, where
        for size in _at_each_width(page):
            widths = page.evaluate(OVERFLOW)
            if max(widths["scroll"], widths["body"]) > widths["width"]:
                problems.append(f"{where} at {size}: page {widths} wider than the window")
        problems += _key_columns(page, site, stem, where, long_name, (entry, other))
        if stem in ("compare", "submit"):  # the checks moved on from the page as it opens
            open_page(page, f"{site}/{PAGE_PATHS[stem]}", timeout=180)
        found, charts = _states(page, where)
        problems += found
        if stem == "leaderboard":  # and an entry's page, with its expanders open
            open_page(page, f"{site}/entry?submission={entry}", timeout=180)
            page.get_by_text("By cause type").first.wait_for(timeout=60_000)
            found, _ = _states(page, "Entry", clicks=False)
            problems += found
        drawn[stem] = charts
        links |= set(page.eval_on_selector_all("a[href]", "(as) => as.map((a) => a.href)"))
    page.close()
    assert not problems, "\n".join(dict.fromkeys(problems))
    # "see docs/..." is a link to the rendered document in the repository
    assert f"{REPO_URL}/blob/main/docs/causes.md" in links, sorted(links)
    assert drawn["leaderboard"] >= 2 and drawn["corpus"] >= 1, drawn  # the checks saw charts


def test_a_ranking_row_opens_its_entrys_page(site, page):
    """Selecting a row of the ranking (a grid drawn on a canvas: a real browser's click) opens
    that entry's page, whose URL is the entry's link."""
    from tests.serve import click_grid_row, grid_rows, rerun_after
    from views.board import RANKING_ROW_HEIGHT

    page.set_viewport_size({"width": 1280, "height": 800})
    open_page(page, f"{site}/leaderboard", timeout=180)
    grid = page.get_by_test_id("stDataFrame").first
    second = grid_rows(page, grid)[1]  # header -> text
    rerun_after(page, lambda: click_grid_row(page, grid, 1, RANKING_ROW_HEIGHT))
    page.wait_for_url(re.compile(r"/entry\?submission=\w+"), timeout=60_000)
    # the page's title names the row's entry, with its "compare with…" picker
    page.locator("h1", has_text=second["name"]).first.wait_for(timeout=60_000)
    page.get_by_text("Compare with…").wait_for(timeout=60_000)


#: Conversations of ten utterances in the chat race test: the page that took the speaker from a
#: widget instead of the conversation failed 2 or 3 runs of 3, so three runs miss it with a
#: chance of about 1 in 100 (each run about 6 s with the retrieval backend on two shared cores).
RACE_RUNS = 3


def test_chat_speakers_alternate_when_sending_as_soon_as_a_prediction_appears(site, browser):
    """The next utterance is sent the moment the previous prediction is shown. The speaker must
    come from the conversation (A, B, A, B, ...), not from a widget that has not caught up yet.
    Each run is a new visitor session (the site allows this visitor 1,000 predictions a minute:
    ETC_CHAT_PER_MINUTE in the fixture)."""
    got = []
    for run in range(RACE_RUNS):
        page = browser.new_page()
        try:
            open_page(page, f"{site}/chat")
            caption = page.get_by_text("Predicted emotion transcription", exact=False)
            for i in range(10):
                box = page.get_by_test_id("stChatInputTextArea")
                box.fill(f"発話{run}-{i}: 今日は少し疲れました。")  # waits while it is disabled
                box.press("Enter")
                caption.nth(i).wait_for(timeout=60_000)  # the prediction is shown: send at once
            wait_idle(page, timeout=60)
            assert shown_exceptions(page) == 0
            texts = page.locator('[data-testid="stChatMessage"] [data-testid="stText"]')
            texts = texts.all_inner_texts()
            assert [t.split("発話")[1].split(":")[0] for t in texts] == [
                f"{run}-{i}" for i in range(10)
            ]
            got.append("".join(t[0] for t in texts))
        finally:
            page.close()
    assert got == ["ABABABABAB"] * RACE_RUNS


def test_chat_overlong_paste_gets_a_message_and_stays_in_the_box(site, page):
    from views.chat import MAX_UTTERANCE_CHARS

    open_page(page, f"{site}/chat")
    text = "あ" * (MAX_UTTERANCE_CHARS + 100)
    box = page.get_by_test_id("stChatInputTextArea")
    box.fill(text)
    assert box.input_value() == text  # no max_chars: the browser takes the whole paste
    box.press("Enter")
    page.get_by_text(f"The utterance has {len(text)} characters", exact=False).wait_for()
    wait_idle(page, timeout=60)
    assert page.get_by_test_id("stChatInputTextArea").input_value() == text
    assert page.locator('[data-testid="stChatMessage"]').count() == 0
    assert shown_exceptions(page) == 0


def _pick(page, label: str, option: str) -> None:
    """Choose ``option`` in the selectbox labelled ``label``."""
    page.get_by_label(label).click()
    page.get_by_role("option", name=option, exact=True).click()
    wait_idle(page, timeout=60)


def test_corpus_result_row_click_opens_that_dialogue(site, page):
    from etclib.data.corpus import load_corpus
    from tests.serve import click_grid_row
    from views.corpus import RESULT_ROW_HEIGHT

    corpus = load_corpus(REAL_CORPUS)
    rows = [
        (d.dialogue_id, u.text)
        for d in sorted(corpus.split("test"), key=lambda d: d.dialogue_id)
        for u in d.utterances
        if u.role == "listener"
    ]
    row = 5  # the sixth result: the second test dialogue's first listener turn
    did, text = rows[row]
    assert did != rows[0][0]
    open_page(page, f"{site}/corpus")
    _pick(page, "Split", "test")
    _pick(page, "Role", "listener")
    page.get_by_text(f"{len(rows):,} matching utterances").first.wait_for(timeout=30_000)
    # With nothing selected the view follows the results: the first result's dialogue.
    page.get_by_text(f"Dialogue {rows[0][0]}", exact=False).first.wait_for(timeout=30_000)
    click_grid_row(page, page.get_by_test_id("stDataFrame").first, row, RESULT_ROW_HEIGHT)
    page.get_by_text(f"Dialogue {did} ·", exact=False).first.wait_for(timeout=30_000)
    wait_idle(page, timeout=60)
    assert f"corpus_dialogue={did}" in page.url
    page.get_by_text(f"B: {text}", exact=True).first.wait_for()
    assert shown_exceptions(page) == 0


def _finished(page, msg) -> bool:
    return page.evaluate(
        "(bytes) => window.__etcScriptFinished(new Uint8Array(bytes).buffer)",
        list(msg.SerializeToString()),
    )


def test_a_finished_run_is_told_from_streamlits_messages(page):
    """The page script of tests/serve.py (every page of its Chromium runs it) reads messages
    encoded by Streamlit's own protobuf classes: no site needed."""
    from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

    page.goto("about:blank")

    def message(**fields) -> ForwardMsg:
        msg = ForwardMsg(**fields)
        msg.metadata.active_script_hash = "e" * 36  # as the server sends it: metadata first
        return msg

    status = ForwardMsg.ScriptFinishedStatus
    assert _finished(page, message(script_finished=status.FINISHED_SUCCESSFULLY))
    assert _finished(page, message(script_finished=status.FINISHED_FRAGMENT_RUN_SUCCESSFULLY))
    assert not _finished(page, message(script_finished=status.FINISHED_EARLY_FOR_RERUN))
    # other messages, one with a field longer than 127 bytes (a two-byte length) before it
    delta = message()
    delta.delta.new_element.markdown.body = "長い" * 200
    assert not _finished(page, delta)
    assert not _finished(page, message(session_status_changed={"script_is_running": False}))
    delta.hash = "h" * 200  # a long field before the finish (a message has one or the other)
    assert not _finished(page, delta)
    ended = message(script_finished=status.FINISHED_SUCCESSFULLY)
    ended.hash = "h" * 200
    assert _finished(page, ended)
