"""Shared fixtures: every cache, database and home directory lives under tmp_path."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import settings

from tests.serve import observed  # noqa: F401 - the tests import it from here

# A property test's verdict must not depend on the machine's speed: no per-example deadline
# (hypothesis's default of 200 ms fails examples on a loaded CI machine).
settings.register_profile("etc", deadline=None)
settings.load_profile("etc")

# One thread per library pool (torch, OpenBLAS) in each test process and the processes it
# starts: the suite runs one xdist worker more than the cores, and each worker's own pools
# would oversubscribe them (the tiny-model training tests took twice the CPU time so).
os.environ.setdefault("OMP_NUM_THREADS", "1")

REPO = Path(__file__).resolve().parent.parent
DATA = Path(__file__).resolve().parent / "data"


def real_corpus_dir() -> Path | None:
    env = os.environ.get("ETC_DATA_DIR")
    for candidate in (env, REPO.parent / "shared" / "ETCDataset" / "etc"):
        if candidate and (Path(candidate) / "dialogues").is_dir():
            return Path(candidate).resolve()
    return None


REAL_CORPUS = real_corpus_dir()
#: For a test that reads the real corpus without the ``corpus`` fixture: skipped, with the reason,
#: where there is no corpus.
needs_corpus = pytest.mark.skipif(
    REAL_CORPUS is None, reason="real ETC corpus not found: set ETC_DATA_DIR"
)


def pytest_collection_finish(session):
    """Each new AppTest reads every installed distribution's metadata for Streamlit components
    (about 1 s on two cores); nothing is installed during a run, so a process reads it once.

    Then what collection imported (the libraries, the test modules) leaves the garbage
    collector's view: a full collection, during the tests and the one pytest makes at its end,
    would otherwise walk those millions of long-lived objects each time."""
    import functools
    import gc
    import sys

    if "streamlit.testing.v1" in sys.modules:
        from streamlit.components.v2 import manifest_scanner

        scan = manifest_scanner.scan_component_manifests
        if not hasattr(scan, "cache_info"):
            manifest_scanner.scan_component_manifests = functools.cache(scan)
    gc.freeze()


@pytest.fixture(autouse=True, scope="session")
def _leaderboard_package():
    """Import the leaderboard package before any page runs, as a served site does
    (streamlit_app.py, at the repository root, imports it first): AppTest runs a page file with
    site_pages/ first on sys.path, where ``import leaderboard`` (the chat's and the admin forms'
    per-visitor limits, views/chat.py, views/admin.py) would find site_pages/leaderboard.py."""
    import leaderboard  # noqa: F401


@pytest.fixture(autouse=True)
def _isolated(tmp_path, monkeypatch):
    """Point caches, databases, secrets and HOME at tmp_path; keep the real corpus reachable."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CACHE_HOME", str(home / ".cache"))
    monkeypatch.setenv("ETC_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("ETC_STORE_DB", str(tmp_path / "etc.duckdb"))
    monkeypatch.setenv("ETC_LEADERBOARD_DB", str(tmp_path / "leaderboard.sqlite"))
    monkeypatch.setenv("ETC_STUDIES_DB", str(tmp_path / "studies.sqlite"))
    monkeypatch.setenv("ETC_SECRETS_FILE", str(tmp_path / "secrets.toml"))
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("ETC_PROGRESS", "0")
    from etclib.llm import providers

    provider_settings = [
        name
        for spec in providers.specs()
        for name in (*spec.secret_settings, spec.base_url_setting, spec.model_setting)
    ]
    for var in (*provider_settings, "ETC_ADMIN_TOKEN"):
        monkeypatch.delenv(var, raising=False)
    if REAL_CORPUS is not None:
        monkeypatch.setenv("ETC_DATA_DIR", str(REAL_CORPUS))
    else:
        monkeypatch.delenv("ETC_DATA_DIR", raising=False)
    from etclib.core import config

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
    from etclib.data.corpus import load_corpus

    return load_corpus(REAL_CORPUS)


@pytest.fixture(scope="session")
def _tiny_template(tmp_path_factory) -> Path:
    from tests.data.make_tiny_corpus import write_tiny_corpus

    return write_tiny_corpus(tmp_path_factory.mktemp("tiny-template") / "tiny")


@pytest.fixture
def tiny_corpus(tmp_path, _tiny_template) -> Path:
    """A small corpus in the real schema (tests/data/make_tiny_corpus.py), this test's own copy:
    written once per process, copied for each test (a test may change or break its copy)."""
    import shutil

    return Path(shutil.copytree(_tiny_template, tmp_path / "tiny"))


@pytest.fixture(scope="module")
def tiny_corpus_shared(tmp_path_factory, _tiny_template) -> Path:
    """One copy of the tiny corpus for a module whose tests only read it: what is built from it
    (a parse, a store) is built once for the module, not once a test."""
    import shutil

    return Path(shutil.copytree(_tiny_template, tmp_path_factory.mktemp("tiny") / "tiny"))


@pytest.fixture(scope="session")
def tiny_bert(tmp_path_factory) -> Path:
    """A random 2-layer BERT with a character vocabulary, saved with its tokenizer
    (tests/data/tiny_models.py): the BERTScore model of the tests. Read-only."""
    pytest.importorskip("bert_score")
    from tests.data.tiny_models import make_tiny_bert

    return make_tiny_bert(tmp_path_factory.mktemp("bert"))


@pytest.fixture
def tiny(tiny_corpus, monkeypatch):
    """The tiny corpus as ETC_DATA_DIR: its test items in order (20)."""
    from etclib.data.corpus import load_corpus
    from etclib.data.task import items

    monkeypatch.setenv("ETC_DATA_DIR", str(tiny_corpus))
    return items(load_corpus(tiny_corpus), "test")


@pytest.fixture
def keys(tiny):
    """The tiny corpus's test keys in order, the corpus as ETC_DATA_DIR."""
    return [it.key for it in tiny]


#: Build the corpus-derived caches that every served site builds on first use: the retrieval
#: index and the corpus store, and the category classifier for both inputs (each keyed by the
#: corpus's hash and its version, so a copy is what a site that ran before would have left). Two
#: processes at once, about 10 s each: the run's browser modules wait for them.
WARM_CACHE_SCRIPTS = (
    """
from etclib.data import store
from etclib.models import get_backend
get_backend("retrieval")
store.ensure()
""",
    """
from etclib.tracks.categories import classifier
from etclib.data.corpus import load_corpus
corpus = load_corpus()
classifier.cached(corpus, "transcription")
classifier.cached(corpus, "dialogue")
""",
)


@pytest.fixture(scope="session")
def warm_cache(tmp_path_factory) -> Path:
    """A cache folder holding the real corpus's retrieval index and category classifiers, and
    beside it the corpus store (``warm-cache.duckdb``), built once per run (shared by the xdist
    workers of one run, under a lock): the browser tests copy them into each served site's own
    cache and store (tests/serve.copy_warm_cache), as a site that had run before would have them,
    instead of building the same files again for every site. Read-only: copy it."""
    import fcntl
    import subprocess
    import sys

    from tests.serve import warm_store

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
                "ETC_STORE_DB": str(warm_store(cache)),
                "ETC_DATA_DIR": str(REAL_CORPUS),
                "ETC_PROGRESS": "0",
                "HF_HUB_OFFLINE": "1",
            }
            builds = [
                subprocess.Popen([sys.executable, "-c", script], cwd=REPO, env=env)
                for script in WARM_CACHE_SCRIPTS
            ]
            codes = [build.wait(timeout=600) for build in builds]
            assert codes == [0] * len(builds), f"building the warm cache failed: {codes}"
            (root / "warm-cache.done").touch()
    return cache


def copy_board(board: Path, dest: Path) -> Path:
    """Copy the embedded board ``board`` (a SQLite file in WAL mode) to ``dest`` with SQLite's
    online backup, so that what a write-ahead log still holds comes along."""
    import sqlite3

    dest.parent.mkdir(parents=True, exist_ok=True)
    source, target = sqlite3.connect(board), sqlite3.connect(dest)
    try:
        source.backup(target)
    finally:
        source.close()
        target.close()
    return dest


@pytest.fixture
def warmed(_isolated, warm_cache):
    """This test's own cache folder (ETC_CACHE_DIR, under tmp_path) starts as a copy of
    ``warm_cache``: for tests that use the index or the classifiers but are not about building
    or caching them (those keep a cold cache)."""
    import shutil

    shutil.copytree(warm_cache, os.environ["ETC_CACHE_DIR"], dirs_exist_ok=True)


@pytest.fixture
def backoff_delays(monkeypatch) -> list[float]:
    """The back-off waits the model clients chose, in order (each retry of a backend, a stream
    or the judge asks ``RetryPolicy.delay``; it is recorded, and still waited): a test asserts
    on the waits instead of timing them."""
    from etclib.llm.retry import RetryPolicy

    chosen: list[float] = []
    delay = RetryPolicy.delay

    def recorded(self, attempt: int, retry_after: float | None = None) -> float:
        chosen.append(delay(self, attempt, retry_after))
        return chosen[-1]

    monkeypatch.setattr(RetryPolicy, "delay", recorded)
    return chosen


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
    """Tests that use ``board_engine`` run on every leaderboard engine; those marked
    ``embedded_only`` (about the SQLite file itself) on the embedded one alone."""
    if "board_engine" in metafunc.fixturenames:
        only = metafunc.definition.get_closest_marker("embedded_only")
        engines = ["sqlite"] if only else ["sqlite", "postgresql"]
        metafunc.parametrize("board_engine", engines, indirect=True)


@pytest.fixture
def board_engine(request, monkeypatch):
    """The leaderboard's engine for this test: the embedded SQLite file (``_isolated`` points
    ETC_LEADERBOARD_DB at one under tmp_path), or a database of its own on the session's
    PostgreSQL server (skipped, with the reason, where there is none)."""
    if request.param == "postgresql":
        monkeypatch.setenv("ETC_LEADERBOARD_DB", request.getfixturevalue("postgres_url"))
    yield request.param
    import sys

    lb = sys.modules.get("leaderboard")
    if lb is not None and hasattr(lb, "close_all"):
        lb.close_all()  # before the test's database is dropped


# --- the parallel run (`make test`: pytest-xdist) ---------------------------------------------


#: The tiers, one folder each (README "Tests"); a test's tier marker is its folder's name.
TIERS = ("unit", "integration", "browser", "gpu")
#: A test's rough cost in seconds on a quiet two-core machine, by its tier: only the order of the
#: modules depends on it (longest first, so that the last module a worker takes is short).
EXPECTED_SECONDS = {"browser": 30.0, "gpu": 5.0, "integration": 1.0, "unit": 0.1}


def tier_of(item) -> str:
    """The tier of ``item``: the folder under tests/ that holds its module."""
    return Path(str(item.path)).relative_to(Path(__file__).parent).parts[0]


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config, items):
    """Mark each test with its folder's tier (before ``-m`` deselects), and put the modules that
    take longest first: `make test` hands whole modules to its workers (``--dist loadfile``, so
    a module's served site or trained model is set up once), and a long module left for the end
    would run alone while the other workers idle."""
    cost: dict[str, float] = {}
    for item in items:
        tier = tier_of(item)
        item.add_marker(getattr(pytest.mark, tier))
        module = item.nodeid.split("::", 1)[0]
        cost[module] = cost.get(module, 0.0) + EXPECTED_SECONDS[tier]
    items.sort(key=lambda item: -cost[item.nodeid.split("::", 1)[0]])  # stable within a module


# --- the unit tier's time budget (`make test-unit`) ---------------------------------------------


def pytest_addoption(parser):
    parser.addoption(
        "--time-budget",
        type=float,
        default=None,
        metavar="SECONDS",
        help="fail the run when it takes longer (from $ETC_TEST_STARTED, the epoch seconds at "
        "which `make test-unit` started, else from pytest's start), naming the slowest tests",
    )


#: Each test's time (setup + call + teardown), for the time budget's message.
_DURATIONS: dict[str, float] = {}


def pytest_configure(config):
    import time

    config._etc_started = float(os.environ.get("ETC_TEST_STARTED") or time.time())


def pytest_runtest_logreport(report):
    """Under xdist the controller receives every worker's reports: it sees every test's time."""
    _DURATIONS[report.nodeid] = _DURATIONS.get(report.nodeid, 0.0) + report.duration


def pytest_sessionfinish(session, exitstatus):
    import time

    config = session.config
    budget = config.getoption("--time-budget")
    if budget is None or hasattr(config, "workerinput"):  # an xdist worker: the controller says
        return
    took = time.time() - config._etc_started
    reporter = config.pluginmanager.get_plugin("terminalreporter")
    if reporter is not None:
        reporter.line("")
    load = f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs"
    if took <= budget:
        if reporter is not None:
            reporter.write_line(f"time budget: {took:.1f} s of {budget:g} s ({load})")
        return
    slowest = sorted(_DURATIONS.items(), key=lambda kv: -kv[1])[:10]
    lines = [
        f"time budget exceeded: this tier took {took:.1f} s ({load}: other work on the "
        f"machine slows every test), its budget is {budget:g} s. "
        "Make the slowest tests faster, or move them to tests/integration (they then run in "
        "`make test-fast` and `make test`); the budget is UNIT_BUDGET in the Makefile "
        "(`make test-unit UNIT_BUDGET=90` for one run). The slowest tests:",
        *(f"  {seconds:6.2f} s  {nodeid}" for nodeid, seconds in slowest),
    ]
    if reporter is not None:
        for line in lines:
            reporter.write_line(line, red=True)
    session.exitstatus = pytest.ExitCode.TESTS_FAILED
