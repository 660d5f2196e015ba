"""Time to first render of every page of the site (cold and warm), of a visitor's clicks and of a
corpus search, measured in Debian's Chromium driven by Playwright. Targets: cold <= 1.5 s, warm
<= 0.3 s, a click <= 1 s (on a quiet machine; the load average is printed beside the figures),
search < 500 ms.

Every page of ``streamlit_app.py``'s navigation is timed, and the views a page shows for its
query parameters (:data:`VIEWS`): the comparison of two entries (``compare?track=...&a=ID&b=ID``)
and the ERC board (``leaderboard?track=erc``). On its own server the benchmark seeds the
throw-away board with two lexically scored transcription entries and one ERC entry for them. A
view's *cold* is its URL's first load; its *warm* the way a visitor reaches it within a session
(a view has no sidebar link): the comparison by the Leaderboard's "Compare with the one above"
link in the lower entry's detail, the ERC board by the Leaderboard's track control.

A render is done when the page's title is drawn and Streamlit's script has finished (its
``data-test-script-state`` is ``notRunning``), and for a view its own texts are shown. Each render
is timed on the page's own clock (``performance.now()``), to the first animation frame at which
that holds: a page load from the start of its navigation, a visitor's click from the click event
the page received (:func:`click_to_frame`). *Cold*: the first visit to a page after the server
started, as a visitor of a site served by ``make run`` meets it: the server has visited each page
once itself (``serve.py``'s warm-up, awaited), the browser is new (its first page loads
Streamlit's front end uncached); ``--no-warm-up``: the server's caches empty, its very first
visit the first page timed. *Warm*: later visits in the same
session through the sidebar (median of ``--runs``). *Search*: a query typed in the corpus
browser, from its Enter key to the animation frame that paints the new number of matches, timed
by the page itself (:data:`SEARCH_PROBE`); the end of that rerun (results and dialogue drawn)
is printed beside it.

*Leaderboard with N entries* (``--entries 50``): N - 1 distinct files lexically scored into the
throw-away database before the server starts; the server is warmed by a first visit to Home
(a warm server, as a visitor meets it), the N-th file is uploaded on the Submit page and
scored by the site's own scoring threads; then the Leaderboard's first render right after
that scoring (the issue's "first load right after new entries were scored") and a metric
switch (pick another metric until the script is idle). Targets: first render <= 2 s, switch
<= 0.5 s. The first visit of a server that has served nothing yet (Python imports, corpus and
board loaded) is printed beside them for information.

Beside each cold render and the Leaderboard's two figures, the server's CPU seconds (user +
system, all threads, from /proc): on a shared machine the wall-clock figures grow with the
load, the CPU seconds much less.

Run:  .venv/bin/python benchmarks/site.py                 # starts its own server
      .venv/bin/python benchmarks/site.py --url http://127.0.0.1:8501
Its own server uses the corpus store and caches of your settings and a throw-away leaderboard
database. Needs /usr/bin/chromium (apt-get install chromium).
"""

from __future__ import annotations

import argparse
import compileall
import contextlib
import functools
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.serve import (  # noqa: E402
    ARM_RERUN,
    IDLE,
    PAGE_PATHS,
    RERUN_ENDED,
    chromium,
    running_site,
    submit_file,
    wait_idle,
    wait_rendered,
    warmed_up,
)

QUERIES = ("嬉しい", "相手", "%", "悲しかった", "'; DROP TABLE utterances; --")
TARGETS = {
    "cold": 1.5,
    "warm": 0.3,
    "search": 0.5,
    "board_first": 2.0,
    "board_switch": 0.5,
    "interaction": 1.0,
}
#: What shows that the comparison is drawn (its metric table's caption, its item count).
COMPARE_READY = ("95% interval", "of 1,010 items")


#: Armed before a visitor's click: records the click's event time on the page's clock.
ARM_CLICK = """() => {
  window.__etcClick = undefined;
  document.addEventListener('click', (e) => { window.__etcClick = e.timeStamp; },
                            {capture: true, once: true});
}"""
#: A page is drawn: its title (the first ``h1``; ``title``: this text, ``before``: another text
#: than this one) is shown, Streamlit is idle (tests/serve.IDLE) and each of ``texts`` is on
#: the page; then the page's clock (a true value), else false.
DRAWN = f"""({{title, before, texts}}) => {{
  const h = document.querySelector('h1');
  if (!h || !h.checkVisibility()) return false;
  const shown = h.textContent.trim();
  if ((title && shown !== title) || (before && shown === before)) return false;
  const idle = ({IDLE})();
  return !!idle && texts.every((t) => document.body.innerText.includes(t)) && idle;
}}"""


def drawn(title: str | None = None, before: str | None = None, texts=()) -> dict:
    """The argument of :data:`DRAWN`."""
    return {"title": title, "before": before, "texts": list(texts)}


def click_to_frame(page, click: Callable[[], Any], done: str, arg: Any = None) -> float:
    """Seconds from a visitor's click (``click()``) to the first animation frame at which the
    page function ``done`` (of ``arg``; it returns the page's clock when it holds) holds, both
    on the page's own clock: from the click event the page received, not from Playwright's
    call, and to the frame, not to the next poll of a wait from outside. For a click that stays
    in the page (Streamlit's own navigation and reruns): a new document has another clock."""
    page.evaluate(ARM_CLICK)
    click()
    at = page.wait_for_function(done, arg=arg, timeout=120_000).json_value()
    return (at - page.evaluate("() => window.__etcClick")) / 1000


def comparison_by_link(
    context, url: str, lower: str, pid: int | None = None
) -> tuple[float, float]:
    """The Leaderboard with the lower of two entries chosen (untimed), then a click on "Compare
    with the one above" until the comparison is drawn (:func:`click_to_frame`): (seconds, the
    server's CPU seconds). Also benchmarks/compare.py's warm figure."""
    page = context.new_page()
    try:
        page.goto(f"{url}/{PAGE_PATHS['leaderboard']}?submission={lower}")
        wait_rendered(page, timeout=120)
        link = page.get_by_role("link", name="Compare with the one above")
        link.wait_for(timeout=120_000)
        cpu0 = cpu_seconds(pid)
        took = click_to_frame(
            page, link.click, DRAWN, drawn("Compare two entries", texts=COMPARE_READY)
        )
        return took, cpu_seconds(pid) - cpu0
    finally:
        page.close()


def _erc_by_track_control(context, url: str) -> float:
    """The Leaderboard (transcriptions, untimed), then a click on the track control's
    "categories" until the rerun it starts has ended (:func:`click_to_frame`): seconds."""
    page = context.new_page()
    try:
        page.goto(f"{url}/{PAGE_PATHS['leaderboard']}")
        wait_rendered(page, timeout=120)
        option = page.locator('[data-testid="stButtonGroup"] button', has_text="categories")
        option.first.wait_for(timeout=60_000)
        page.evaluate(ARM_RERUN)
        return click_to_frame(page, option.first.click, RERUN_ENDED)
    finally:
        page.close()


#: Views of a page reached through its query parameters: name -> (URL path and query, how a
#: visitor reaches the view within a session, timed: ``reach(context, url, a, b)`` -> seconds),
#: with ``a`` and ``b`` the two seeded transcription entries (``b`` ranked below ``a``).
VIEWS = {
    "compare (a, b)": (
        "compare?track=transcription&a={a}&b={b}",
        lambda context, url, a, b: comparison_by_link(context, url, b)[0],
    ),
    "leaderboard ERC": (
        "leaderboard?track=erc",
        lambda context, url, a, b: _erc_by_track_control(context, url),
    ),
}


#: Every chart shown has its axes drawn (Vega draws it after the script has ended) and
#: Streamlit is idle: the page's clock then.
CHARTS_SHOWN = f"""() => {{
  const idle = ({IDLE})();
  const charts = Array.from(document.querySelectorAll('[data-testid="stVegaLiteChart"]'));
  const drawn = charts.every((c) => !c.offsetParent || c.querySelector('svg g.role-axis, canvas'));
  return !!idle && drawn && !document.querySelector('[data-testid="stSkeleton"]') && idle;
}}"""
#: The rerun a click started has ended and its charts are drawn (:data:`CHARTS_SHOWN`).
RERUN_DRAWN = f"() => window.__etcFinished > window.__etcRerun.finished && ({CHARTS_SHOWN})()"


def click_time(context, url: str, path: str, target: Callable[[Any], Any]) -> float:
    """The page at ``path`` (untimed), then a click on ``target(page)`` until the rerun it
    starts has ended and its charts are drawn (:func:`click_to_frame`): seconds."""
    page = context.new_page()
    try:
        page.goto(f"{url}/{path}")
        wait_rendered(page, timeout=120)
        element = target(page)
        element.wait_for(timeout=60_000)
        page.evaluate(ARM_RERUN)
        return click_to_frame(page, element.click, RERUN_DRAWN)
    finally:
        page.close()


def link_time(context, url: str, path: str, texts=(), new_browser: bool = False) -> float:
    """A new tab (a fresh session, the server's caches warm) opening ``path``: seconds from its
    navigation's start to the frame where the page is drawn with ``texts`` and its charts.
    ``new_browser``: as a browser that never loaded the site would (its HTTP cache off)."""
    page = context.new_page()
    try:
        if new_browser:
            cdp = context.new_cdp_session(page)
            cdp.send("Network.setCacheDisabled", {"cacheDisabled": True})
        page.goto(f"{url}/{path}")
        done = f"(arg) => ({DRAWN})(arg) && ({CHARTS_SHOWN})()"
        at = page.wait_for_function(done, arg=drawn(texts=texts), timeout=120_000)
        return at.json_value() / 1000
    finally:
        page.close()


def _tab(name: str) -> Callable[[Any], Any]:
    return lambda page: page.get_by_role("tab", name=name).first


def _pick_b(context, url: str, a: str, b: str) -> float:
    """The comparison page with A chosen (untimed), then B picked in its box until the
    comparison is drawn: seconds."""
    page = context.new_page()
    try:
        page.goto(f"{url}/compare?track=transcription&a={a}")
        wait_rendered(page, timeout=120)
        page.get_by_test_id("stSelectbox").nth(1).click()
        option = page.get_by_role("option").filter(has_text=f"({b})").first
        option.wait_for(timeout=60_000)
        return click_to_frame(page, option.click, DRAWN, drawn(texts=COMPARE_READY))
    finally:
        page.close()


#: A visitor's clicks that were slow (the Charts tab, the pairwise tests, an entry's detail by
#: its link, Compare, the Causes and Judge vs Human tabs, Corpus statistics) and the views added
#: since, each timed warm from the click to the frame that shows its result: name -> ``time(context, url, a, b)`` -> seconds,
#: ``a`` and ``b`` the seeded transcription entries (``b`` below ``a``). Target: 1 s.
INTERACTIONS: dict[str, Callable[..., float]] = {
    "leaderboard: Charts tab": lambda c, u, a, b: click_time(c, u, "leaderboard", _tab("Charts")),
    "leaderboard: pairwise tests": lambda c, u, a, b: click_time(
        c, u, "leaderboard", lambda p: p.get_by_text("Pairwise tests of the top 10", exact=False)
    ),
    "leaderboard ERC: Charts tab": lambda c, u, a, b: click_time(
        c, u, "leaderboard?track=erc", _tab("Charts")
    ),
    "an entry's detail by link": lambda c, u, a, b: link_time(
        c, u, f"entry?submission={b}", ("Breakdown by role",)
    ),
    "compare: picking B": lambda c, u, a, b: _pick_b(c, u, a, b),
    "compare: a shared link, new browser": lambda c, u, a, b: link_time(
        c, u, f"compare?track=transcription&a={a}&b={b}", COMPARE_READY, new_browser=True
    ),
    "corpus: Statistics": lambda c, u, a, b: click_time(
        c,
        u,
        "corpus",
        lambda p: p.locator('[data-testid="stButtonGroup"] button', has_text="Statistics").first,
    ),
    "causes: Agreement and shares": lambda c, u, a, b: click_time(
        c, u, "causes", _tab("Agreement and shares")
    ),
    **{
        f"judge vs human: tab {n}": (
            lambda c, u, a, b, name=name: click_time(c, u, "judge_vs_human", _tab(name))
        )
        for n, name in enumerate(
            ("2 · Atomic-unit decisions", "3 · Likert ratings", "4 · This judge vs the paper's"),
            start=2,
        )
    },
}


def load() -> str:
    """The 1-, 5- and 15-minute load averages."""
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def server_pid(url: str) -> int | None:
    """The PID of the ``streamlit run`` serving ``url`` (Linux /proc; None when not found)."""
    port = f"--server.port\0{urlparse(url).port}\0"
    for proc in Path("/proc").iterdir():
        if proc.name.isdigit():
            with contextlib.suppress(OSError):
                if port in (proc / "cmdline").read_text():
                    return int(proc.name)
    return None


def cpu_seconds(pid: int | None) -> float:
    """User + system CPU time of process ``pid`` so far, all threads (0 when unknown).

    On a shared machine wall-clock figures grow with the load; the server's CPU seconds for a
    render do not, so the benchmark prints both."""
    if pid is None:
        return 0.0
    try:
        fields = (Path("/proc") / str(pid) / "stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def seed_entries(n: int) -> list[str]:
    """``n`` distinct lexically scored submissions in the leaderboard database of the settings,
    and one ERC submission (every item ``neutral``); the transcription entries' ids, in the
    board's order (best first)."""
    import leaderboard as lb
    from benchmarks.leaderboard import _predictions
    from etclib.data.corpus import load_corpus
    from etclib.data.task import items
    from etclib.tracks.predictions import dumps_jsonl

    its = items(load_corpus(), "test")
    ids = [
        lb.submit(_predictions(its, k), {"name": f"bench {k}", "setting": "zero-shot"}).id
        for k in range(n)
    ]
    erc = dumps_jsonl(((it.key, ("neutral",)) for it in its), track="erc").encode("utf-8")
    lb.submit(erc, {"name": "bench erc", "setting": "zero-shot"})
    lb.process_jobs()
    ranked = [sid for sid in lb.ranking(track="transcription")["id"] if sid in ids]
    lb.close_all()
    return ranked  # best first, as the board ranks them


def upload_until_scored(context, url: str, k: int, folder: Path) -> float:
    """Upload the ``k``-th benchmark file on the Submit page and wait until the page shows it
    scored (by the site's own scoring threads); the seconds that took."""
    from benchmarks.leaderboard import _predictions
    from etclib.data.corpus import load_corpus
    from etclib.data.task import items

    path = folder / f"bench-{k}.jsonl"
    path.write_bytes(_predictions(items(load_corpus(), "test"), k))
    page = context.new_page()
    try:
        t0 = time.perf_counter()
        submit_file(page, url, path, f"bench {k}", timeout=120)
        page.get_by_text("✅ scored", exact=False).first.wait_for(timeout=600_000)
        return time.perf_counter() - t0
    finally:
        page.close()


def board_times(
    context, url: str, metric: str = "bleu4", pid: int | None = None
) -> tuple[float, float, float, float]:
    """(first render of the Leaderboard, a switch of its metric picker to ``metric``) in
    seconds, then the server's CPU seconds for each."""
    from etclib import metrics

    cpu0 = cpu_seconds(pid)
    first = render_time(context, f"{url}/leaderboard")
    first_cpu = cpu_seconds(pid) - cpu0
    page = context.new_page()
    try:
        page.goto(f"{url}/leaderboard")
        wait_rendered(page, timeout=120)
        page.get_by_test_id("stSelectbox").first.click()
        # the picker shows each metric as a reader sees it ("BLEU-4 ↑"), not its key
        option = page.get_by_role("option", name=metrics.heading(metric), exact=True)
        cpu0 = cpu_seconds(pid)
        page.evaluate(ARM_RERUN)
        switch = click_to_frame(page, option.click, RERUN_ENDED)  # the pick's rerun, to its end
        return first, switch, first_cpu, cpu_seconds(pid) - cpu0
    finally:
        page.close()


def render_time(context, url: str) -> float:
    """Seconds from the start of a new page's navigation to ``url`` to the first animation
    frame at which it is drawn (tests/serve.wait_rendered), on the page's own clock."""
    page = context.new_page()
    try:
        page.goto(url)
        return wait_rendered(page, timeout=120) / 1000
    finally:
        page.close()


def navigation_times(context, url: str, pages: list[str], runs: int) -> dict[str, list[float]]:
    """Warm renders through the sidebar (no reload, same session), ``runs`` rounds."""
    page = context.new_page()
    out: dict[str, list[float]] = {p: [] for p in pages}
    try:
        page.goto(url)
        wait_rendered(page, timeout=120)
        # Each page's sidebar link, found by its URL path (streamlit_app.py names the pages).
        links = {}
        for link in page.get_by_test_id("stSidebarNav").get_by_role("link").all():
            path = urlparse(link.get_attribute("href") or "").path.strip("/")
            links[path] = link
        order = pages[1:] + pages[:1]  # start away from Home
        for _ in range(runs):
            for name in order:
                before = page.evaluate("() => document.querySelector('h1').textContent.trim()")
                link = links[PAGE_PATHS[name]]
                out[name].append(click_to_frame(page, link.click, DRAWN, drawn(before=before)))
    finally:
        page.close()
    return out


#: Installed in the page before a query's Enter: records, on the page's own clock, the Enter
#: key's event time, the first animation frame after the new count is in the document (the
#: frame that paints it) and the end of the rerun (every result and the dialogue drawn).
SEARCH_PROBE = """(want) => {
  const app = document.querySelector('[data-testid="stApp"]');
  const t = (window.__search = {});
  document.addEventListener('keydown', (e) => {
    if (e.key === 'Enter' && t.enter === undefined) t.enter = e.timeStamp;
  }, {capture: true, once: true});
  const seen = () => Array.from(
    document.querySelectorAll('[data-testid="stMarkdownContainer"] p'),
  ).some((p) => p.textContent === want);
  const obs = new MutationObserver((records) => {
    if (t.enter === undefined) return;
    // any change of the script state after Enter: the rerun started (it may have ended too
    // by the time this runs, so the record is what counts, not the current value)
    if (records.some((r) => r.attributeName === 'data-test-script-state')) t.ran = true;
    const state = app.getAttribute('data-test-script-state');
    if (t.shown === undefined && seen()) {
      t.shown = performance.now();
      requestAnimationFrame(() => { t.painted = performance.now(); });
    }
    if (t.ran && state === 'notRunning' && t.done === undefined) t.done = performance.now();
    if (t.done !== undefined && t.shown !== undefined) obs.disconnect();
  });
  obs.observe(document.body, {subtree: true, childList: true, characterData: true,
                              attributes: true, attributeFilter: ['data-test-script-state']});
}"""


def search_times(context, url: str) -> list[tuple[str, float, float]]:
    """(query, Enter -> the frame showing the new count, Enter -> the rerun finished) in
    seconds, each timed on the page's clock (a Playwright wait from outside sees the count
    only once the page's main thread is free again, i.e. after the whole rerun is drawn)."""
    from etclib.data.corpus import load_corpus

    utterances = load_corpus().utterances
    page = context.new_page()
    out = []
    try:
        page.goto(f"{url}/corpus")
        wait_rendered(page, timeout=120)
        box = page.get_by_label("Search utterances and transcriptions (literal text)")
        for q in QUERIES:
            n = sum(
                q.lower() in u.text.lower() or q.lower() in u.transcription.lower()
                for u in utterances
            )
            box.fill(q)
            page.evaluate(SEARCH_PROBE, f"{n:,} matching utterances")
            box.press("Enter")
            page.wait_for_function(
                "() => window.__search.done !== undefined && window.__search.painted !== undefined",
                timeout=30_000,
            )
            t = page.evaluate("() => window.__search")
            out.append((q, (t["painted"] - t["enter"]) / 1000, (t["done"] - t["enter"]) / 1000))
            wait_idle(page)
    finally:
        page.close()
    return out


def verdict(seconds: float, target: float) -> str:
    return "ok" if seconds < target else f"SLOW (target < {target:g} s)"


def measure(
    url: str,
    runs: int,
    pages: list[str],
    entries: int = 0,
    views: dict[str, tuple[str, Callable[[Any, str], float]]] | None = None,
    interactions: dict[str, Callable[[Any, str], float]] | None = None,
) -> int:
    """``pages``: name -> URL path (and query); those in :data:`PAGE_PATHS` are also timed
    warm through the sidebar, the views of :data:`VIEWS` by their link or control."""
    views = views or {}
    slow = 0
    cold: dict[str, float] = {}
    cold_cpu: dict[str, float] = {}
    pid = server_pid(url)
    with chromium() as context, tempfile.TemporaryDirectory(prefix="etc-bench-up-") as up:
        if entries:
            cpu0 = cpu_seconds(pid)
            server_first = render_time(context, f"{url}/")
            print(
                f"home, the server's first visit: {server_first:.2f} s "
                f"(server CPU {cpu_seconds(pid) - cpu0:.2f} s; informational)"
            )
            took = upload_until_scored(context, url, entries - 1, Path(up))
            print(f"entry {entries} uploaded on Submit and scored by the site in {took:.1f} s")
            first, switch, first_cpu, switch_cpu = board_times(context, url, pid=pid)
            slow += first > TARGETS["board_first"]
            slow += switch > TARGETS["board_switch"]
            print(
                f"leaderboard with {entries} scored entries: first render {first:.2f} s "
                f"({verdict(first, TARGETS['board_first'] + 1e-9)}), metric switch "
                f"{switch:.2f} s ({verdict(switch, TARGETS['board_switch'] + 1e-9)}); "
                f"server CPU {first_cpu:.2f} s and {switch_cpu:.2f} s\n"
            )
        paths = {
            **{name: PAGE_PATHS[name] for name in pages},
            **{name: path for name, (path, _) in views.items()},
        }
        loads = [load()]
        for name, path in paths.items():
            cpu0 = cpu_seconds(pid)
            cold[name] = render_time(context, f"{url}/{path}")
            cold_cpu[name] = cpu_seconds(pid) - cpu0
        loads.append(load())
        warm = navigation_times(context, url, pages, runs)
        reload = {name: [] for name in paths}
        for _ in range(runs):
            for name, path in paths.items():
                reload[name].append(render_time(context, f"{url}/{path}"))
        for name, (_, reach) in views.items():
            warm[name] = [reach(context, url) for _ in range(runs)]
        clicks = {
            name: [time(context, url) for _ in range(runs)]
            for name, time in (interactions or {}).items()
        }
        loads.append(load())
        searches = search_times(context, url)
    print(
        f"site at {url}; medians of {runs} rounds. cold: first load of the page after the "
        "server started; warm: opened from the sidebar (same session, server caches warm; a "
        "view: reached as a visitor does, by its link or control); reload: a new tab on the page's URL (new session, caches "
        f"warm; informational). Load average (1, 5, 15 min) before the cold renders, after "
        f"them, after the warm ones: {' / '.join(loads)}\n"
    )
    print(
        f"{'page':<16} {'cold (s)':>9}  {'':<22} {'warm (s)':>9}  {'':<22} {'reload (s)':>10}"
        f"  {'cold CPU (s)':>12}"
    )
    for name in paths:
        w = statistics.median(warm[name])
        r = statistics.median(reload[name])
        slow += cold[name] > TARGETS["cold"]
        slow += w > TARGETS["warm"]
        print(
            f"{name:<16} {cold[name]:9.2f}  {verdict(cold[name], TARGETS['cold'] + 1e-9):<22} "
            f"{w:9.2f}  {verdict(w, TARGETS['warm'] + 1e-9):<22} {r:10.2f}  "
            + (f"{cold_cpu[name]:12.2f}" if pid else f"{'?':>12}")
        )
    if clicks:
        print("\n" + "a visitor's click, warm (median)".ljust(38) + "    (s)")
    for name, times in clicks.items():
        t = statistics.median(times)
        slow += t > TARGETS["interaction"]
        print(f"{name:<38} {t:6.2f}  {verdict(t, TARGETS['interaction'] + 1e-9)}")
    print(
        "\ncorpus search: Enter -> the frame that shows the new count (target), and -> the "
        "rerun finished (every result and the dialogue drawn; informational)"
    )
    for q, shown, done in searches:
        slow += shown >= TARGETS["search"]
        print(
            f"  {q!r:<34} {shown * 1000:7.0f} ms  {verdict(shown, TARGETS['search']):<24}"
            f" {done * 1000:7.0f} ms"
        )
    for i, what in ((1, "count shown"), (2, "rerun finished")):
        values = [row[i] for row in searches]
        print(
            f"  {what}: median {statistics.median(values) * 1000:.0f} ms, "
            f"max {max(values) * 1000:.0f} ms"
        )
    return slow


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--url", help="a running site (default: start one on a free port)")
    parser.add_argument("--runs", type=int, default=3, help="warm visits per page (default 3)")
    parser.add_argument("--strict", action="store_true", help="exit 1 when a target is missed")
    parser.add_argument(
        "--entries",
        type=int,
        default=0,
        help="score N entries into the throw-away board first and time the Leaderboard",
    )
    parser.add_argument(
        "--no-warm-up",
        action="store_true",
        help="the server does not visit its pages before the first timed visit (ETC_WARM_UP=0)",
    )
    args = parser.parse_args(argv)
    root = Path(__file__).resolve().parents[1]
    # The site's code as a deployed site's second start finds it: compiled once, bytecode kept
    # (a shell's PYTHONDONTWRITEBYTECODE, which this project's machines set, would make the
    # server compile every module of etclib, leaderboard and views again on its first visit).
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    for package in ("etclib", "leaderboard", "views"):
        compileall.compile_dir(root / package, quiet=1)
    pages = [
        p
        for p in PAGE_PATHS
        if p != "judge_vs_human" or (root / "site_pages/judge_vs_human.py").is_file()
    ]
    views: dict[str, tuple[str, Callable[[Any, str], float]]] = {}
    interactions: dict[str, Callable[[Any, str], float]] = {}
    with contextlib.ExitStack() as stack:
        url = args.url
        if not url:
            tmp = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="etc-bench-")))
            env = {
                "ETC_LEADERBOARD_DB": str(tmp / "leaderboard.sqlite"),
                "ETC_WARM_UP": "0" if args.no_warm_up else "1",
            }
            os.environ.update(env)
            # the last of --entries is uploaded through the site; two at least for a comparison:
            # the top two (B, the second, links to the comparison with the one above it)
            a, b, *_ = seed_entries(max(args.entries - 1, 2))
            views = {
                name: (path.format(a=a, b=b), functools.partial(reach, a=a, b=b))
                for name, (path, reach) in VIEWS.items()
            }
            interactions = {
                name: functools.partial(time, a=a, b=b) for name, time in INTERACTIONS.items()
            }
            url = stack.enter_context(running_site(env, log=tmp / "server.log"))
            if not args.no_warm_up:
                print(warmed_up(tmp / "server.log"))
        else:
            print(
                "(a running site: the views of VIEWS and the clicks of INTERACTIONS need its "
                "entries' ids; not timed)"
            )
        slow = measure(url.rstrip("/"), args.runs, pages, args.entries, views, interactions)
    print(f"\n{slow} measurement(s) over target" if slow else "\nevery measurement within target")
    return 1 if (slow and args.strict) else 0


if __name__ == "__main__":
    sys.exit(main())
