"""A fresh clone served by the README's `make run`, checked in a real browser.

The committed HEAD is cloned into a temporary folder with no ``../shared`` beside it, so the
corpus comes from ``ETC_DATA_DIR`` alone and the published rows from the copy shipped in etclib.
`make run` prepares everything there (``etclib db``, ``python -m leaderboard seed-baselines``)
and serves the clone with ``streamlit run``; the clone's databases are its defaults under
``data/`` (inside the temporary folder), caches and HOME are the test's (tests/conftest.py).
The test's cache starts warm (conftest ``warmed``: the run's retrieval index and category
classifiers, keyed by the corpus's hash, as a machine that ran the site before has them; they
live outside the clone): what is under test is the clone's own preparation and serving, and
building those caches cold is tested where they are built (tests/unit/test_backends.py,
tests/integration/test_erc.py), not again here.
The install step is skipped with ``make -o VENV/.installed ... VENV=<this venv>``: it would run
``pip install -e .`` and repoint the shared venv's editable install at the clone.

Chromium then opens the Leaderboard (the paper's rows, read from paper_baselines.json, and the
three reproduced baselines seeded by leaderboard.baselines) and Home (the top entry of that
board). Uncommitted changes are not in the clone: commit first.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import REAL_CORPUS, REPO, needs_corpus
from tests.serve import grid_rows, site_pages, table_rows, warmed_up

pytestmark = needs_corpus

#: `make prepare` (store, seeding and scoring of every baseline) plus Streamlit's start.
START_TIMEOUT = 240.0


def _grid(page, heading: str, timeout: float = 60.0) -> list[dict[str, str]]:
    """The rows of the first dataframe after the heading ``heading``, as header -> text."""
    grid = page.locator(
        f"xpath=//h3[contains(normalize-space(.), '{heading}')]"
        "/following::*[@data-testid='stDataFrame'][1]"
    )
    grid.wait_for(timeout=timeout * 1000)
    grid.scroll_into_view_if_needed()
    return grid_rows(page, grid, timeout, f"the dataframe after {heading!r}")


def _first_grid(page, timeout: float = 60.0) -> list[dict[str, str]]:
    """The rows of the page's first dataframe (the Leaderboard's ranking has no heading)."""
    grid = page.get_by_test_id("stDataFrame").first
    return grid_rows(page, grid, timeout, "the Leaderboard's ranking")


def _stop(proc: subprocess.Popen) -> None:
    """Stop make and the server it started (one process group), SIGKILL after 15 s."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGTERM)
    try:
        proc.wait(timeout=15)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=5)
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)  # a straggler of the group (streamlit's children)


def _clone(dest: Path) -> str:
    """Clone the repository's committed HEAD into ``dest``; its commit."""
    if shutil.which("git") is None or shutil.which("make") is None:
        pytest.skip("git and make are needed to clone and run the repository")
    head = subprocess.run(
        ["git", "-C", str(REPO), "rev-parse", "HEAD"], capture_output=True, text=True
    )
    if head.returncode != 0:
        pytest.skip(f"{REPO} is not a git checkout: nothing to clone")
    commit = head.stdout.strip()
    subprocess.run(["git", "clone", "--quiet", str(REPO), str(dest)], check=True, timeout=120)
    subprocess.run(
        ["git", "-C", str(dest), "checkout", "--quiet", "--detach", commit], check=True, timeout=60
    )
    return commit


def _child_env(tmp_path: Path) -> dict[str, str]:
    """This test's environment (caches and HOME under tmp_path) as a fresh clone would see it."""
    env = dict(os.environ)
    # The clone's own defaults (data/etc.duckdb, data/leaderboard.sqlite, data/studies.sqlite
    # inside the clone), its own code (no PYTHONPATH to this checkout), the shipped reference
    # rows, no outer make's flags.
    for var in (
        "ETC_STORE_DB",
        "ETC_LEADERBOARD_DB",
        "ETC_STUDIES_DB",
        "ETC_REFERENCE_DIR",
        "PYTHONPATH",
        "MAKEFLAGS",
        "MFLAGS",
        "MAKELEVEL",
        "VENV",
        "PORT",
    ):
        env.pop(var, None)
    env["ETC_DATA_DIR"] = str(REAL_CORPUS)
    assert env["ETC_CACHE_DIR"].startswith(str(tmp_path)), "conftest's isolation is missing"
    assert env["HOME"].startswith(str(tmp_path))
    return env


def test_fresh_clone_make_run_serves_the_board(tmp_path, warmed):
    from etclib import tracks
    from tests.serve import CHROMIUM, chromium, free_port, wait_healthy, wait_rendered

    if not CHROMIUM.exists():
        pytest.skip(f"Debian's Chromium is not installed at {CHROMIUM} (apt-get install chromium)")
    venv = Path(sys.prefix)
    if sys.prefix == sys.base_prefix or not (venv / "bin" / "streamlit").exists():
        pytest.skip("not running in a virtualenv with streamlit: nothing to reuse for make run")

    started = time.monotonic()
    work = tmp_path / "work"  # the clone's parent: nothing named shared beside it
    work.mkdir()
    clone = work / "etc"
    commit = _clone(clone)
    assert not (clone.parent / "shared").exists()
    reported = json.loads(
        (clone / "etclib" / "data" / "reference" / "paper_baselines.json").read_text(
            encoding="utf-8"
        )
    )["rows"]

    port = free_port()
    url = f"http://127.0.0.1:{port}"
    log_path = tmp_path / "make-run.log"
    cmd = ["make", "-o", f"{venv}/.installed", "run", f"VENV={venv}", f"PORT={port}"]
    with open(log_path, "wb") as log:
        proc = subprocess.Popen(
            cmd,
            cwd=clone,
            env=_child_env(tmp_path),
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    timings: dict[str, float] = {}
    try:
        try:
            wait_healthy(url, START_TIMEOUT, proc)
        except Exception as exc:
            tail = log_path.read_text(encoding="utf-8", errors="replace")[-4000:]
            raise AssertionError(
                f"`{' '.join(cmd)}` in a fresh clone did not serve:\n{tail}"
            ) from exc
        timings["clone + make prepare + streamlit start"] = time.monotonic() - started

        with chromium() as context:
            page = context.new_page()
            page.goto(f"{url}/leaderboard")
            wait_rendered(page, timeout=120)
            ranking = _first_grid(page)
            published = _grid(page, "Published results (reported)")
            assert page.locator('[data-testid="stException"]').count() == 0

            # The paper's rows, one each, apart from the ranking.
            assert len(reported) == 5
            assert len(published) == len(reported), published
            for row in reported:
                matches = [
                    r
                    for r in published
                    if row["model"] in r["name"] and row["setting"] in r["name"]
                ]
                assert len(matches) == 1, (row, published)
            # The three reproduced baselines, ranked; the trivial ones marked as floors.
            transcription = tracks.get()
            baselines = transcription.baselines
            assert sorted(r["name"] for r in ranking) == sorted(baselines.values()), ranking
            kinds = {r["name"]: r["kind"] for r in ranking}
            for backend, name in baselines.items():
                assert "baseline" in kinds[name], kinds
                assert ("floor" in kinds[name]) == (backend in transcription.floors), kinds
            assert [r["rank"] for r in ranking][0] == "1"
            top = ranking[0]["name"]

            home = context.new_page()
            home.goto(url)
            wait_rendered(home, timeout=120)
            table = home.locator(
                "xpath=//h3[contains(normalize-space(.), 'Top of the leaderboard')]"
                "/following::*[@data-testid='stTable'][1]"
            )
            table.wait_for(timeout=120_000)
            shown = table_rows(table)
            assert home.locator('[data-testid="stException"]').count() == 0
            assert shown[0]["name"] == top, (top, shown)
            assert [r["name"] for r in shown] == [r["name"] for r in ranking][: len(shown)]
            assert len(shown) == min(5, len(ranking))
        timings["browser checks"] = time.monotonic() - started - sum(timings.values())
        # The server visited each page once itself (serve.py's warm-up): every page declared
        # without an admin token (the Operator page is declared only with one).
        warmed = warmed_up(log_path, timeout=120).split(" visited")[0]
        assert warmed == f"Warmed up: {len(site_pages(hidden=True)) - 1} pages", log_path
    finally:
        _stop(proc)

    log_text = log_path.read_text(encoding="utf-8", errors="replace")
    assert "pip install" not in log_text, "make run installed into the shared venv"
    assert "python -m etclib db" in log_text and "seed-baselines" in log_text, log_text[-2000:]
    assert f"reported rows: {len(reported)} added" in log_text, log_text[-2000:]
    # The clone's board and store are its own, inside the temporary folder.
    assert (clone / "data" / "leaderboard.sqlite").is_file()
    assert (clone / "data" / "etc.duckdb").is_file()
    print(
        f"fresh clone of {commit[:12]}: " + ", ".join(f"{k} {v:.0f} s" for k, v in timings.items())
    )
