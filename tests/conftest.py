"""Shared fixtures: every cache, database and home directory lives under tmp_path."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
DATA = Path(__file__).resolve().parent / "data"


def real_corpus_dir() -> Path | None:
    env = os.environ.get("ETC_DATA_DIR")
    for candidate in (env, REPO.parent / "shared" / "ETCDataset" / "etc"):
        if candidate and (Path(candidate) / "dialogues").is_dir():
            return Path(candidate).resolve()
    return None


REAL_CORPUS = real_corpus_dir()
needs_corpus = pytest.mark.skipif(
    REAL_CORPUS is None, reason="real ETC corpus not found: set ETC_DATA_DIR"
)


@pytest.fixture(autouse=True)
def _isolated(tmp_path, monkeypatch):
    """Point caches, databases, secrets and HOME at tmp_path; keep the real corpus reachable."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CACHE_HOME", str(home / ".cache"))
    monkeypatch.setenv("ETC_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("ETC_STORE_DB", str(tmp_path / "etc.duckdb"))
    monkeypatch.setenv("ETC_LEADERBOARD_DB", str(tmp_path / "leaderboard.duckdb"))
    monkeypatch.setenv("ETC_STUDIES_DB", str(tmp_path / "studies.duckdb"))
    monkeypatch.setenv("ETC_SECRETS_FILE", str(tmp_path / "secrets.toml"))
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("ETC_PROGRESS", "0")
    for var in (
        "OPENAI_API_KEY",
        "OPENAI_BASE_URL",
        "GEMINI_API_KEY",
        "GOOGLE_API_KEY",
        "ETC_GEMINI_BASE_URL",
        "ETC_ADMIN_TOKEN",
    ):
        monkeypatch.delenv(var, raising=False)
    if REAL_CORPUS is not None:
        monkeypatch.setenv("ETC_DATA_DIR", str(REAL_CORPUS))
    else:
        monkeypatch.delenv("ETC_DATA_DIR", raising=False)
    from etclib import config

    config._secrets.cache_clear()
    import sys

    chat = sys.modules.get("views.chat")
    if chat is not None:
        chat.PROBE.clear()  # a model server's state is never carried from one test to the next
    yield

    lb = sys.modules.get("leaderboard")
    if lb is not None and hasattr(lb, "close_all"):
        lb.close_all()  # release the leaderboard databases opened under tmp_path


@pytest.fixture
def corpus():
    if REAL_CORPUS is None:
        pytest.skip("real ETC corpus not found: set ETC_DATA_DIR")
    from etclib.corpus import load_corpus

    return load_corpus(REAL_CORPUS)


@pytest.fixture
def tiny_corpus(tmp_path) -> Path:
    """A small corpus in the real schema, built by tests/data/make_tiny_corpus.py."""
    from tests.data.make_tiny_corpus import write_tiny_corpus

    return write_tiny_corpus(tmp_path / "tiny")


#: Builds the corpus-derived caches that every served site builds on first use: the retrieval
#: index and the category classifier for both inputs (each keyed by the corpus's hash and its
#: version, so a copy is what a site that ran before would have left).
WARM_CACHE_SCRIPT = """
from etclib import classifier
from etclib.backends import get_backend
from etclib.corpus import load_corpus
corpus = load_corpus()
get_backend("retrieval", corpus=corpus)
classifier.cached(corpus, "transcription")
classifier.cached(corpus, "dialogue")
"""


@pytest.fixture(scope="session")
def warm_cache(tmp_path_factory) -> Path:
    """A cache folder holding the real corpus's retrieval index and category classifiers, built
    once per run (shared by the xdist workers of one run, under a lock): the browser tests copy it
    into each served site's own cache (tests/serve.site_env), as a site that had run before would
    have it, instead of building the same files again for every site. Read-only: copy it."""
    import fcntl
    import subprocess
    import sys

    if REAL_CORPUS is None:
        pytest.skip("real ETC corpus not found: set ETC_DATA_DIR")
    root = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        root = root.parent  # this run's folder, shared by its workers
    cache = root / "warm-cache"
    with open(root / "warm-cache.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
        if not (root / "warm-cache.done").exists():
            home = root / "warm-cache-home"
            home.mkdir(exist_ok=True)
            env = {
                **os.environ,
                "HOME": str(home),
                "ETC_CACHE_DIR": str(cache),
                "ETC_DATA_DIR": str(REAL_CORPUS),
                "ETC_PROGRESS": "0",
                "HF_HUB_OFFLINE": "1",
            }
            subprocess.run(
                [sys.executable, "-c", WARM_CACHE_SCRIPT],
                cwd=REPO,
                env=env,
                check=True,
                timeout=600,
            )
            (root / "warm-cache.done").touch()
    return cache


@pytest.fixture
def warmed(_isolated, warm_cache):
    """This test's own cache folder (ETC_CACHE_DIR, under tmp_path) starts as a copy of
    ``warm_cache``: for tests that use the index or the classifiers but are not about building
    or caching them (those keep a cold cache)."""
    import shutil

    shutil.copytree(warm_cache, os.environ["ETC_CACHE_DIR"], dirs_exist_ok=True)


@pytest.fixture(scope="session")
def postgres_server():
    """One real PostgreSQL server for the session (tests/pgserver.py); skips with the reason
    when the machine has none."""
    from tests import pgserver

    reason = pgserver.why_unavailable()
    if reason:
        pytest.skip(reason)
    server = pgserver.PgServer().start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def postgres_url(postgres_server):
    """The URL of an empty database of this test's own on the session's PostgreSQL server."""
    url = postgres_server.new_database()
    try:
        yield url
    finally:
        postgres_server.drop_database(url)


def pytest_generate_tests(metafunc):
    """Tests that use ``board_engine`` run on both leaderboard engines; those marked
    ``embedded_only`` (about the DuckDB file itself) on DuckDB alone."""
    if "board_engine" in metafunc.fixturenames:
        only = metafunc.definition.get_closest_marker("embedded_only")
        engines = ["duckdb"] if only else ["duckdb", "postgresql"]
        metafunc.parametrize("board_engine", engines, indirect=True)


@pytest.fixture
def board_engine(request, monkeypatch):
    """The leaderboard's engine for this test: the embedded DuckDB file (``_isolated`` points
    ETC_LEADERBOARD_DB at one under tmp_path), or a database of its own on the session's
    PostgreSQL server (skipped, with the reason, where there is none)."""
    if request.param == "postgresql":
        monkeypatch.setenv("ETC_LEADERBOARD_DB", request.getfixturevalue("postgres_url"))
    yield request.param
    import sys

    lb = sys.modules.get("leaderboard")
    if lb is not None and hasattr(lb, "close_all"):
        lb.close_all()  # before the test's database is dropped


# --- the parallel run (`make test`: pytest-xdist, then the serial pass) -------------------------

#: Tests that run alone in `make test`'s second, serial pass (``-m serial``), never beside
#: another test: they bound a wall-clock time, compare throughputs, or SIGKILL workers whose
#: leases must expire on time. A node id names a test with all its parameters. Kept here, in one
#: place, rather than as marks in each file.
SERIAL = {
    # throughput of one worker against three; two sites, three workers and SIGKILLs
    "tests/test_scale_out.py": "*",
    "tests/test_hostile_storage.py": (
        "test_submissions_survive_sigkills_of_the_worker",  # leases after SIGKILLs
        "test_every_command_refuses_a_damaged_or_missing_database",  # each command < 10 s
        "test_the_worker_process_exits_at_once_on_a_bad_database",  # < 10 s
        "test_a_read_only_folder_gives_one_clear_message_from_every_command",  # < 10 s
        "test_the_worker_stops_after_repeated_loop_errors",  # < 10 s
        "test_worker_once_gives_up_after_its_timeout",  # < 8 s
    ),
    "tests/test_judge_cache_shared.py": (
        "test_a_killed_worker_leaves_its_answers_and_no_claim",  # SIGKILL; the rest < 30 s
    ),
    "tests/test_judge_fake_server.py": ("test_latency_and_parallel_requests",),  # < 1.5 s
    "tests/test_judge_faults.py": (
        "test_hanging_call_times_out_and_is_retried",  # < 5 s
        "test_unreachable_endpoint_stops_at_once",  # < 3 s
        "test_calls_run_in_parallel",  # < 2.4 s
    ),
    "tests/test_backends.py": (
        "test_retrieval_on_the_real_corpus_finds_train_items_and_is_fast",  # p95 < 50 ms
    ),
}


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config, items):
    """Mark the :data:`SERIAL` tests ``serial``, and put the modules that drive a browser first,
    then those that hold a slow test, each group's larger modules first: `make test` hands whole
    modules to its workers (``--dist loadfile``, so a module's served site or trained model is set
    up once), and a long module left for the end would run alone while the other worker idles."""
    seen = {module: set() for module in SERIAL}
    for item in items:
        module, _, rest = item.nodeid.partition("::")
        names = SERIAL.get(module)
        function = rest.split("[", 1)[0]
        if names is not None and (names == "*" or function in names):
            item.add_marker(pytest.mark.serial)
            seen[module].add(function)
    collected = {item.nodeid.split("::", 1)[0] for item in items}
    whole = not any("::" in arg for arg in config.args)
    for module, names in SERIAL.items():
        stale = [] if names == "*" else sorted(set(names) - seen[module])
        if whole and module in collected and stale:
            raise pytest.UsageError(
                f"tests/conftest.py SERIAL names tests that {module} no longer has: {stale}; "
                "update the list."
            )

    sizes: dict[str, int] = {}
    browser: set[str] = set()
    slow: set[str] = set()
    for item in items:
        module = item.nodeid.split("::", 1)[0]
        sizes[module] = sizes.get(module, 0) + 1
        if item.get_closest_marker("browser") is not None:
            browser.add(module)
        if item.get_closest_marker("slow") is not None:
            slow.add(module)

    def order(item) -> tuple[bool, bool, int]:
        module = item.nodeid.split("::", 1)[0]
        return module not in browser, module not in slow, -sizes[module]

    items.sort(key=order)  # stable: each module's tests stay together and in their order
