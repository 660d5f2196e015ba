"""The browser tier's shared parts: the run's seeded board, a site served on a copy of it, one
Chromium per module and a fresh page per test. Each module serves one site for all its tests."""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import REAL_CORPUS, REPO, copy_board

#: The entries a visitor added to the seeded board, by what the tests use each for.
ENTRIES = {
    "real": "Real but simple",
    "joy": "Always joy",
    "long": "A very long entry name that a submitter chose to describe each setting of a run",
    "phish": "Visit https://phish.example/verify or www.phish.example, a@phish.example",
}
#: Seeds and scores a board as `make prepare` leaves it (the paper's reported rows and every
#: computed baseline of both tracks), with ENTRIES submitted by visitors; prints name -> id.
SEED = f"""
import json, leaderboard as lb
from etclib.data.corpus import load_corpus
from etclib.tracks.predictions import dumps_jsonl
from etclib.data.task import items
its = items(load_corpus(), "test")
names = {ENTRIES!r}
lb.seed_baselines()
files = {{
    "real": dumps_jsonl((it.key, it.utterance[:8] + "と思った") for it in its),
    "joy": dumps_jsonl(((it.key, ("joy",)) for it in its), "erc"),
    "long": dumps_jsonl((it.key, it.utterance[:6] + "と感じた") for it in its),
    "phish": dumps_jsonl((it.key, it.utterance[:4] + "と思う") for it in its),
}}
ids = {{names[k]: lb.submit(data.encode(), {{"name": names[k]}}, file_name=k + ".jsonl").id
       for k, data in files.items()}}
lb.process_jobs()
print(json.dumps(ids))
"""


@pytest.fixture(scope="session")
def seeded_board(tmp_path_factory, warm_cache) -> Path:
    """A leaderboard database (the embedded SQLite file) holding the reported rows, every
    computed baseline and :data:`ENTRIES`, scored, built once per run (shared by the xdist
    workers of one run, under a lock): each served site starts with a copy (``serve_seeded``).
    Beside it, ``<board>.json``: each entry's id by its name. Read-only: copy it."""
    from tests.serve import site_env

    if REAL_CORPUS is None:
        pytest.skip("real ETC corpus not found: set ETC_DATA_DIR")
    root = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        root = root.parent  # this run's folder, shared by its workers
    base = root / "seeded-board"
    env = site_env(base, REAL_CORPUS, cache=warm_cache)
    board = Path(env["ETC_LEADERBOARD_DB"])
    with open(root / "seeded-board.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
        if not board.with_suffix(".json").exists():
            out = subprocess.run(
                [sys.executable, "-c", SEED],
                cwd=REPO,
                env={**os.environ, **env},
                check=True,
                timeout=600,
                capture_output=True,
                text=True,
            )
            board.with_suffix(".json").write_text(out.stdout.splitlines()[-1])
    return board


@pytest.fixture(scope="session")
def entries(seeded_board) -> dict[str, tuple[str, str]]:
    """What the tests use each visitor's entry for -> (its name, its id) on the seeded board."""
    ids = json.loads(seeded_board.with_suffix(".json").read_text())
    return {use: (name, ids[name]) for use, name in ENTRIES.items()}


@pytest.fixture(scope="module")
def serve_seeded(tmp_path_factory, warm_cache, seeded_board):
    """``serve_seeded(**extra)``: a context serving the site on a copy of ``seeded_board``,
    ``extra`` in its environment, that yields its URL."""
    from tests.serve import CHROMIUM, running_site, site_env

    if not CHROMIUM.exists():
        pytest.skip(f"Debian's Chromium is not installed at {CHROMIUM} (apt-get install chromium)")

    @contextlib.contextmanager
    def serve(**extra: str) -> Iterator[str]:
        base = tmp_path_factory.mktemp("site")
        env = site_env(base, REAL_CORPUS, cache=warm_cache, **extra)
        copy_board(seeded_board, Path(env["ETC_LEADERBOARD_DB"]))
        with running_site(env, log=base / "server.log") as url:
            yield url

    return serve


@pytest.fixture(scope="module")
def browser():
    """One Chromium for the module's tests (a context of its own: a fresh profile)."""
    from tests.serve import CHROMIUM, chromium

    if not CHROMIUM.exists():
        pytest.skip(f"Debian's Chromium is not installed at {CHROMIUM} (apt-get install chromium)")
    with chromium() as context:
        yield context


@pytest.fixture
def page(browser):
    p = browser.new_page()
    yield p
    p.close()
