"""Start the site in a subprocess and drive it with Chromium: shared by the browser test and
``benchmarks/site.py``.

>>> with running_site(env={"ETC_LEADERBOARD_DB": "/tmp/lb.sqlite"}) as url:   # doctest: +SKIP
...     with chromium() as context:
...         page = context.new_page()
...         page.goto(url)
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from etclib.core.errors import ConfigError, DependencyError

REPO = Path(__file__).resolve().parents[1]  # tests/serve.py -> the checkout
CHROMIUM = Path("/usr/bin/chromium")
#: Flags for a quiet, reproducible headless Chromium that never calls home.
CHROMIUM_ARGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
)


def site_pages(*, hidden: bool = False) -> list[tuple[str, str]]:
    """(script, title) of each page the site declares, in navigation order: ``SITE_PAGES`` of
    streamlit_app.py, read from its source (importing it would run the site), those whose
    script exists (as the entry point itself filters them). The visitor's pages only, unless
    ``hidden``: then also the pages kept out of the navigation (``hidden=True``: the
    Documentation reader, whose text is the operator's documents)."""
    import ast

    tree = ast.parse((REPO / "streamlit_app.py").read_text(encoding="utf-8"))
    pages = [
        (call.args[0].value, call.args[1].value)
        for call in ast.walk(tree)
        if isinstance(call, ast.Call)
        and getattr(call.func, "id", "") == "SitePage"
        and (
            hidden
            or not any(
                k.arg == "hidden" and getattr(k.value, "value", False) for k in call.keywords
            )
        )
    ]
    if not pages:
        raise AssertionError("streamlit_app.py declares no SitePage: has the page list moved?")
    return [(path, title) for path, title in pages if (REPO / path).is_file()]


#: URL path of each page, by the name of its script (Streamlit derives the path from the file
#: name; Home, the default page, is the root).
PAGE_PATHS = {
    Path(path).stem: "" if Path(path).stem == "home" else Path(path).stem
    for path, _ in site_pages()
}


def site_env(
    base: Path, corpus: str | os.PathLike, cache: Path | None = None, **extra: str
) -> dict[str, str]:
    """The environment of a throw-away site for a browser test: every database, cache, home and
    secrets file under ``base`` (created), the real corpus, fewer bootstrap resamples, no hub,
    and no LLM key or judge provider inherited from the machine; ``extra`` on top.

    ``cache``: the conftest's ``warm_cache``, copied into ``base`` (:func:`copy_warm_cache`): the
    retrieval index, classifiers and corpus store that the site would otherwise build again."""
    (base / "home").mkdir(parents=True, exist_ok=True)
    if cache is not None:
        copy_warm_cache(cache, base / "cache", base / "etc.duckdb")
    env = {
        "HOME": str(base / "home"),
        "ETC_DATA_DIR": str(corpus),
        "ETC_STORE_DB": str(base / "etc.duckdb"),
        "ETC_CACHE_DIR": str(base / "cache"),
        "ETC_LEADERBOARD_DB": str(base / "leaderboard.sqlite"),
        "ETC_STUDIES_DB": str(base / "studies.sqlite"),
        "ETC_SECRETS_FILE": str(base / "no-secrets.toml"),
        "ETC_LB_BOOTSTRAP": "200",
        "ETC_PROGRESS": "0",
        "HF_HUB_OFFLINE": "1",
    }
    for var in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "GEMINI_API_KEY", "GOOGLE_API_KEY"):
        env[var] = ""
    env["ETC_JUDGE_PROVIDER"] = ""
    return {**env, **extra}


def warm_store(cache: Path) -> Path:
    """Where the conftest's ``warm_cache`` keeps its corpus store: beside the folder."""
    return cache.with_suffix(".duckdb")


def copy_warm_cache(cache: Path, cache_dest: Path, store_dest: Path) -> None:
    """Copy the conftest's ``warm_cache`` folder (the retrieval index and the classifiers) to
    ``cache_dest``, and the corpus store built beside it (``<cache>.duckdb``), when there is one,
    to ``store_dest`` (ETC_STORE_DB): about 2 s of building each saved for every served site."""
    shutil.copytree(cache, cache_dest, dirs_exist_ok=True)
    store = warm_store(cache)
    if store.is_file():
        store_dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(store, store_dest)


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def observed(condition: Callable[[], Any], timeout: float = 60.0, every: float = 0.1) -> Any:
    """Wait until ``condition()`` gives something true and return it: a state seen, never a
    pause; AssertionError once ``timeout`` seconds pass without it (``every``: seconds between
    looks, for a state with no other signal: a server's health, a line in its log)."""
    deadline = time.monotonic() + timeout
    while not (got := condition()):
        assert time.monotonic() < deadline, "the condition was never observed"
        time.sleep(every)
    return got


def wait_healthy(url: str, timeout: float = 90.0, proc: subprocess.Popen | None = None) -> None:
    """Wait until ``url``/_stcore/health answers ``ok``; ``ConfigError`` on timeout or exit."""

    def answers() -> bool:
        if proc is not None and proc.poll() is not None:
            raise ConfigError(f"The site exited with status {proc.returncode} before answering.")
        try:
            with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as resp:
                return resp.status == 200
        except (urllib.error.URLError, OSError):
            return False

    try:
        observed(answers, timeout, every=0.25)
    except AssertionError:
        raise ConfigError(
            f"The site at {url} did not answer /_stcore/health within {timeout:.0f} s."
        ) from None


@contextlib.contextmanager
def running_site(
    env: dict[str, str] | None = None,
    port: int | None = None,
    log: str | os.PathLike | None = None,
    timeout: float = 90.0,
    address: str = "127.0.0.1",
) -> Iterator[str]:
    """Serve the site as ``make run`` does (``serve.py``: ``streamlit run streamlit_app.py``) on
    127.0.0.1 (headless) and yield its URL. The server does not visit its own pages first
    (``ETC_WARM_UP=0``) unless ``env`` says so: a test's first visit is the one it checks.

    ``env`` is added to this process's environment; ``log`` receives the server's output
    (discarded by default); ``address``: where it listens (``"::"``, Streamlit's default, also
    takes IPv4 connections, which it then sees as ``::ffff:127.0.0.1``; the URL stays
    127.0.0.1). The server is stopped (its process group) on exit.
    """
    port = port or free_port()
    url = f"http://127.0.0.1:{port}"
    cmd = [
        sys.executable,
        "serve.py",  # `streamlit run streamlit_app.py`, the site's modules imported first
        "--server.port",
        str(port),
        "--server.address",
        address,
        "--server.headless",
        "true",
        "--browser.gatherUsageStats",
        "false",
    ]
    out = open(log, "ab") if log else subprocess.DEVNULL  # noqa: SIM115 - closed below
    proc = subprocess.Popen(
        cmd,
        cwd=REPO,
        env={**os.environ, "ETC_WARM_UP": "0", **(env or {})},
        stdout=out,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    try:
        wait_healthy(url, timeout, proc)
        yield url
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, 15)
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, 9)
            proc.wait(timeout=5)
        if log:
            out.close()


def warmed_up(log: str | os.PathLike, timeout: float = 300.0) -> str:
    """Wait until the log of a site served with its warm-up (``serve.py``) says the warm-up
    ended; that line, from its first word (``Warmed up: N pages visited in T s``, else why it
    stopped or was skipped)."""

    def line() -> re.Match | None:
        text = Path(log).read_text(encoding="utf-8", errors="replace")
        return re.search(r"(Warmed up|Warm-up \w+): .*", text)

    try:
        return observed(line, timeout, every=0.2).group(0).strip()
    except AssertionError:
        raise TimeoutError(
            f"the server did not end its warm-up in {timeout:.0f} s (see {log})"
        ) from None


@contextlib.contextmanager
def chromium(executable: str | os.PathLike = CHROMIUM, **context_options: Any) -> Iterator[Any]:
    """A Playwright browser context on Debian's Chromium with a fresh profile (no download).

    Raises ``DependencyError`` when Chromium or the ``playwright`` package is missing.
    """
    if not Path(executable).exists():
        raise DependencyError(
            f"Chromium is not installed at {executable}: apt-get install chromium (Debian)."
        )
    try:
        from playwright.sync_api import sync_playwright
    except ImportError as exc:
        raise DependencyError("Driving Chromium needs playwright: pip install playwright") from exc
    options = {"viewport": {"width": 1400, "height": 1000}, **context_options}
    with tempfile.TemporaryDirectory(prefix="etc-chromium-") as profile, sync_playwright() as p:
        context = p.chromium.launch_persistent_context(
            profile,
            executable_path=str(executable),
            headless=True,
            args=list(CHROMIUM_ARGS),
            **options,
        )
        context.add_init_script(COUNT_SENDS)
        try:
            yield context
        finally:
            context.close()


#: Installed in every page of :func:`chromium`: counts the messages the page sends on its
#: websockets (a widget that reruns the script sends Streamlit's ``rerunScript`` at once), and the
#: script runs the server says have finished: a received ``ForwardMsg`` whose top-level field 6
#: (``script_finished``, a varint) is set, other than 2 (``FINISHED_EARLY_FOR_RERUN``: another run
#: follows). The app root's ``data-test-script-state`` is not enough: a run that ends within the
#: tick it started in never shows ``running`` (React batches the two states), and a wait for that
#: attribute to change then waited out its whole timeout.
COUNT_SENDS = """(() => {
  const send = WebSocket.prototype.send;
  window.__etcSent = 0;
  window.__etcFinished = 0;
  WebSocket.prototype.send = function (data) { window.__etcSent += 1; return send.call(this, data); };
  const finished = (buffer) => {
    const b = new Uint8Array(buffer);
    let i = 0;
    const varint = () => {
      let value = 0, scale = 1, byte;
      do { byte = b[i++]; value += (byte & 127) * scale; scale *= 128; } while (byte & 128 && i < b.length);
      return value;
    };
    while (i < b.length) {
      const key = varint(), field = Math.floor(key / 8), wire = key % 8;
      if (wire === 0) { const value = varint(); if (field === 6) return value !== 2; }
      else if (wire === 2) { const length = varint(); i += length; }  // not i += varint()
      else if (wire === 1) i += 8;
      else if (wire === 5) i += 4;
      else return false;
    }
    return false;
  };
  window.__etcScriptFinished = finished;  // tests/browser/test_pages.py reads it
  const Native = window.WebSocket;
  window.WebSocket = class extends Native {
    constructor(...args) {
      super(...args);
      this.addEventListener('message', (event) => {
        if (event.data instanceof ArrayBuffer && finished(event.data)) window.__etcFinished += 1;
      });
    }
  };
})()"""
#: Before a click: the sends and the finished runs so far.
ARM_RERUN = """() => {
  window.__etcRerun = {sent: window.__etcSent, finished: window.__etcFinished};
}"""
#: After the click: did the page send anything? Two animation frames let the click's React
#: updates and effects run (a widget sends its rerun from its own handler, within them).
SENT_SINCE_ARMED = """() => new Promise((resolve) => requestAnimationFrame(() =>
  requestAnimationFrame(() => resolve(window.__etcSent > window.__etcRerun.sent))))"""
#: The app is connected and its script is not running: the page's clock then (a true value).
IDLE = """() => {
  const app = document.querySelector('[data-testid="stApp"]');
  return !!app && app.getAttribute('data-test-script-state') === 'notRunning'
    && app.getAttribute('data-test-connection-state') === 'CONNECTED' && performance.now();
}"""
#: The run armed by :data:`ARM_RERUN` has finished and the app is idle (:data:`IDLE`): the
#: page's clock then.
RERUN_ENDED = f"() => window.__etcFinished > window.__etcRerun.finished && ({IDLE})()"


def rerun_after(page: Any, click: Callable[[], Any], timeout: float = 120.0) -> bool:
    """``click()``, then wait for the script rerun it started to end; False when the click
    sent nothing to the server (an expander, a tab without ``on_change``: nothing reruns).

    Decided by what the page sent, not by a wait for a rerun that may never come: a page of
    :func:`chromium` counts its websocket sends (:data:`COUNT_SENDS`)."""
    page.evaluate(ARM_RERUN)
    click()
    if not page.evaluate(SENT_SINCE_ARMED):
        return False
    page.wait_for_function(RERUN_ENDED, timeout=timeout * 1000)
    return True


def script_state(page: Any) -> str | None:
    """``running``, ``notRunning`` (or ``initial``): Streamlit's own marker on the app root."""
    return page.evaluate(
        "() => document.querySelector('[data-testid=\"stApp\"]')"
        "?.getAttribute('data-test-script-state') ?? null"
    )


#: :data:`IDLE`, and the page's title (its first ``h1``) is drawn.
RENDERED = f"""() => {{
  const title = document.querySelector('h1');
  return !!title && title.checkVisibility() && ({IDLE})();
}}"""


def wait_idle(page: Any, timeout: float = 30.0) -> float:
    """Wait until the app is connected and its script is not running; the page's clock at the
    animation frame that saw it (milliseconds, ``performance.now()``).

    Checked on every animation frame (``wait_for_function``'s polling), not by a selector wait,
    whose polls back off to one every 500 ms: a state reached a few frames after the wait began
    was seen up to half a second late, in every test and every timing of benchmarks/."""
    return page.wait_for_function(IDLE, timeout=timeout * 1000).json_value()


#: The rows a data grid (``st.dataframe``, a canvas) has drawn, read from the accessible table it
#: keeps in the DOM: ``[[header, ...], [cell, ...], ...]``, or null before it drew.
GRID_ROWS = """(el) => {
  const table = el.querySelector('table[role="grid"]');
  if (!table) return null;
  const cells = (tr) => Array.from(tr.querySelectorAll('th, td')).map((c) => c.textContent);
  return Array.from(table.querySelectorAll('tr')).map(cells);
}"""
#: Resolves after two animation frames (a layout change started before it has been drawn).
TWO_FRAMES = "() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)))"


def _wait_rows_drawn(page: Any, grid: Any, timeout: float, what: str) -> None:
    """Wait until the data grid ``grid`` has drawn a row under its header (AssertionError
    naming ``what`` when it draws none within ``timeout`` seconds)."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    try:
        page.wait_for_function(
            f"(el) => {{ const rows = ({GRID_ROWS})(el); return !!rows && rows.length > 1; }}",
            arg=grid.element_handle(timeout=timeout * 1000),
            timeout=timeout * 1000,
        )
    except PlaywrightTimeout:
        raise AssertionError(f"{what} drew no row") from None


def grid_rows(page: Any, grid: Any, timeout: float = 60.0, what: str = "the table") -> list[dict]:
    """The rows the data grid ``grid`` (a ``stDataFrame`` locator) shows, as header -> text,
    once it has drawn one (AssertionError naming ``what`` when it draws none)."""
    _wait_rows_drawn(page, grid, timeout, what)
    deadline = time.monotonic() + timeout
    # a rerun may have put a new grid in the old one's place, not drawn yet: read until one is
    while not (rows := grid.evaluate(GRID_ROWS)) or len(rows) < 2:
        if time.monotonic() > deadline:
            raise AssertionError(f"{what} drew no row")
        page.evaluate(TWO_FRAMES)
    header, *body = rows
    return [dict(zip(header, row, strict=True)) for row in body]


#: The rows of a static table (``st.table``, drawn as HTML): ``[{header: text, ...}, ...]``.
STATIC_ROWS = """(el) => {
  const rows = Array.from(el.querySelectorAll('tr'))
    .map((tr) => Array.from(tr.querySelectorAll('th, td')).map((c) => c.textContent.trim()));
  const [header, ...body] = rows;
  return body.map((r) => Object.fromEntries(header.map((h, i) => [h, r[i]])));
}"""


def table_rows(table: Any) -> list[dict]:
    """The rows a static table ``table`` (an ``stTable`` locator) shows, as header -> text."""
    return table.evaluate(STATIC_ROWS)


def click_grid_row(page: Any, grid: Any, row: int, row_height: int = 35) -> None:
    """Click the row-marker box (the selection column) of row ``row`` of the data grid
    ``grid`` (a ``stDataFrame`` locator), once the grid has drawn its rows and stands still:
    a canvas takes a click at a coordinate, so the click waits for what it aims at (the rows
    drawn, the grid's box the same over two animation frames) rather than for a fixed pause."""
    _wait_rows_drawn(page, grid, 60.0, "the table")
    grid.scroll_into_view_if_needed()
    box = None
    for _ in range(100):  # ends when the box stands still (an event, not a time)
        before = grid.bounding_box()
        page.evaluate(TWO_FRAMES)
        box = grid.bounding_box()
        if box == before:
            break
    header = 35  # Glide's header row
    page.mouse.click(box["x"] + 18, box["y"] + header + row_height * row + row_height // 2)


def screenshot(page: Any, path: str | os.PathLike, *, full_page: bool = True) -> None:
    """Save a screenshot of ``page`` (or of an element: ``page`` a locator) once the app's
    script is idle, with CSS animations and transitions finished at once (Playwright's
    ``animations="disabled"``) rather than waited out by a fixed pause (docs/screenshots.py,
    ``make screenshots``)."""
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    app = page.page if hasattr(page, "page") else page  # a locator knows its page
    wait_idle(app, timeout=60)
    options = {"full_page": full_page} if app is page else {}
    page.screenshot(path=str(path), animations="disabled", **options)


def open_page(page: Any, url: str, timeout: float = 120.0) -> Any:
    """Go to ``url`` in ``page`` and wait until it is drawn (:func:`wait_rendered`); ``page``."""
    page.goto(url)
    wait_rendered(page, timeout=timeout)
    return page


def shown_exceptions(page: Any) -> int:
    """How many of Streamlit's exception boxes the page shows."""
    return page.locator('[data-testid="stException"]').count()


def wait_rendered(page: Any, timeout: float = 30.0) -> float:
    """Wait until Streamlit has drawn a page's title and finished running its script; the
    page's clock at the animation frame that saw it (as :func:`wait_idle`)."""
    return page.wait_for_function(RENDERED, timeout=timeout * 1000).json_value()


def submit_file(
    page: Any,
    url: str,
    path: str | os.PathLike,
    name: str,
    *,
    accepted: str = "valid, ",
    team: str | None = None,
    timeout: float = 60.0,
) -> None:
    """Upload ``path`` on the Submit page of the site at ``url`` and press "Submit for
    scoring" as ``name`` (and ``team``): the form is filled once the page has accepted the file
    (it shows ``accepted``) and its script is idle."""
    page.goto(f"{url}/{PAGE_PATHS['submit']}")
    wait_rendered(page, timeout=timeout)
    page.locator('input[type="file"]').set_input_files(str(path))
    page.get_by_text(accepted, exact=False).first.wait_for(timeout=timeout * 1000)
    wait_idle(page, timeout)
    page.get_by_label("Display name *").fill(name)
    if team:
        page.get_by_label("Team or author").fill(team)
    page.get_by_role("button", name="Submit for scoring").click()
