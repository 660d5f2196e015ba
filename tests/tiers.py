"""The test tiers: markers applied to each collected test from what it uses (tests/conftest.py
calls :func:`mark`), and the unit tier's guards.

=============  ===============================================================================
marker         applied when the test ...
=============  ===============================================================================
``postgres``   uses the PostgreSQL fixtures (``postgres_server``, ``postgres_url``, or a fixture
               built on them) or runs with an engine parameter ``postgresql`` / ``postgres``
               (``board_engine``, ``studies_db``)
``corpus``     needs the real corpus: the ``corpus``, ``warmed`` or ``warm_cache`` fixtures, or
               ``needs_corpus`` (which is this marker; without a corpus such a test skips)
``subprocess`` starts a process (``subprocess``, ``Popen``, ``sys.executable``, a served site,
               multiprocessing) or a server on loopback (the fake model server, an HTTP or
               OIDC server): found in the source of the test, of its fixtures and of the
               test-suite functions they call (:func:`starts_processes`); or marked by hand
``browser``    drives Chromium (marked by hand, per module)
``slow``       takes seconds: runs the scoring worker or builds a tiny model
               (:data:`SLOW_NAMES`, :data:`SLOW_FIXTURES`), or sits in a module that imports
               torch and the like at its top (:func:`heavy_module`); or marked by hand
               (`make test-unit` names the slowest tests when it runs over its budget)
=============  ===============================================================================

The tiers (README "Tests"): ``make test-unit`` runs what carries none of these markers
(:data:`UNIT`), ``make test-fast`` everything but ``browser``, ``make test`` everything.

In the unit tier (``ETC_TEST_TIER=unit``, set by ``make test-unit``) a test that starts a
Python process, a site or a server anyway fails with the fix (:func:`guard_unit_tier`): the
rule above missed it, and it must carry ``@pytest.mark.subprocess``. The unit tier does not
even import the modules that :func:`heavy_module` finds (tests/conftest.py
``pytest_ignore_collect``).
"""

from __future__ import annotations

import ast
import inspect
import os
import socketserver
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

#: The markers of the tiers, with their help text (registered in pyproject.toml too).
MARKERS = {
    "postgres": "uses a real PostgreSQL server (tests/pgserver.py)",
    "corpus": "needs the real ETC corpus (ETC_DATA_DIR)",
    "subprocess": "starts a process: a worker, a CLI run, a served site",
    "browser": "drives a real Chromium against a running site",
    "slow": "takes more than a few seconds",
}
#: ``make test-unit``'s selection.
UNIT = " and ".join(f"not {name}" for name in MARKERS)

CORPUS_FIXTURES = frozenset({"corpus", "warmed", "warm_cache"})
POSTGRES_FIXTURES = frozenset({"postgres_server", "postgres_url"})
POSTGRES_PARAMS = frozenset({"postgresql", "postgres"})
#: Names whose use in a test (or what it calls) means it starts a process or a server.
PROCESS_NAMES = frozenset(
    {
        "subprocess",
        "Popen",
        "executable",  # sys.executable
        "multiprocessing",
        "ProcessPoolExecutor",
        "fork",
        "running_site",  # tests/serve.py: streamlit in a subprocess
        # a server on loopback (in a thread): the fake model server, an HTTP or OIDC server
        "FakeLLMServer",
        "HTTPServer",
        "ThreadingHTTPServer",
        "serve_forever",
        "run_server_in_thread",
    }
)
#: Modules whose functions are followed when they are called (the test suite's own helpers and
#: the benchmarks the tests drive); the library's are not (it starts no processes).
FOLLOWED = ("tests", "benchmarks")

#: Names whose use in a test (or what it calls) makes it ``slow``: it runs the scoring worker
#: (MeCab, sacrebleu and the bootstrap resamples of each score: seconds per job, not
#: milliseconds), or builds a tiny model (tests/data/tiny_model*.py: torch, seconds each).
SLOW_NAMES = frozenset(
    {
        "process_jobs",
        "start_workers",
        "run_job",
        "run_one",
        "build_tiny_model",
        "make_tiny_bert",
    }
)
#: Fixtures that make a test ``slow`` (a model built with torch, or the worker run for it).
SLOW_FIXTURES = frozenset({"tiny_model", "tiny_llama31", "tiny_bert"})
#: Top-level imports that make a whole module ``slow``: importing torch or trl takes seconds,
#: which the unit tier would pay at collection even for a module's quick tests (it does not
#: import such a module at all: :func:`heavy_module`).
HEAVY_IMPORTS = frozenset({"torch", "trl", "transformers", "peft", "bert_score", "playwright"})

_cache: dict[tuple[Any, frozenset[str]], bool] = {}
_files: dict[str, dict[int, frozenset[str]]] = {}


def _names_by_line(filename: str) -> dict[int, frozenset[str]]:
    """The names used in each function of a source file (parsed once), by the function's first
    line (its ``def``, and its first decorator's line, as ``co_firstlineno`` gives it)."""
    if filename not in _files:
        table: dict[int, frozenset[str]] = {}
        try:
            tree = ast.parse(Path(filename).read_text(encoding="utf-8"))
        except (OSError, SyntaxError, ValueError):
            tree = None
        for node in ast.walk(tree) if tree is not None else ():
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                names: set[str] = set()
                body = [node.args, *node.body]  # not its decorators: parameters are data
                for sub in (n for part in body for n in ast.walk(part)):
                    if isinstance(sub, ast.Name):
                        names.add(sub.id)
                    elif isinstance(sub, ast.Attribute):
                        names.add(sub.attr)
                    elif isinstance(sub, ast.alias):
                        names.add(sub.name.rsplit(".", 1)[-1])
                frozen = frozenset(names)
                table[node.lineno] = frozen
                for decorator in node.decorator_list:
                    table.setdefault(decorator.lineno, frozen)
        _files[filename] = table
    return _files[filename]


def uses(func: Callable, wanted: frozenset[str], depth: int = 0) -> bool:
    """Whether ``func``'s source, or that of a test-suite function it names (followed four deep),
    uses one of the ``wanted`` names."""
    func = inspect.unwrap(func)
    code = getattr(func, "__code__", None)
    if code is None:
        return False
    key = (code, wanted)
    if key in _cache:
        return _cache[key]
    _cache[key] = False  # a recursion ends here
    names = _names_by_line(code.co_filename).get(code.co_firstlineno, frozenset())
    found = bool(names & wanted)
    if not found and depth < 4:
        scope = getattr(func, "__globals__", {})
        for name in names:
            target = scope.get(name)
            if (
                callable(target)
                and getattr(target, "__module__", "").startswith(FOLLOWED)
                and uses(target, wanted, depth + 1)
            ):
                found = True
                break
    _cache[key] = found
    return found


def starts_processes(func: Callable) -> bool:
    """Whether ``func`` (or a test-suite function it calls) starts a process."""
    return uses(func, PROCESS_NAMES)


def heavy_module(path: Path) -> bool:
    """Whether a test module imports a heavy package (:data:`HEAVY_IMPORTS`) at its top level
    (``import``, ``from ... import`` or ``pytest.importorskip("...")``), read from its source."""
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"))
    except (OSError, SyntaxError, ValueError):
        return False
    for node in tree.body:
        subs = ast.walk(node) if isinstance(node, ast.Try | ast.If | ast.Assign) else [node]
        for sub in subs:
            if isinstance(sub, ast.Import):
                roots = {a.name.split(".")[0] for a in sub.names}
            elif isinstance(sub, ast.ImportFrom):
                roots = {(sub.module or "").split(".")[0]}
            elif (
                isinstance(sub, ast.Call)
                and getattr(sub.func, "attr", "") == "importorskip"
                and sub.args
                and isinstance(sub.args[0], ast.Constant)
            ):
                roots = {str(sub.args[0].value).split(".")[0]}
            else:
                continue
            if roots & HEAVY_IMPORTS:
                return True
    return False


def _fixture_funcs(item: pytest.Item) -> list[Callable]:
    info = getattr(item, "_fixtureinfo", None)
    funcs = []
    for name in getattr(item, "fixturenames", ()):
        for fixturedef in info.name2fixturedefs.get(name, ()) if info else ():
            func = getattr(fixturedef, "func", None)
            if func is not None and getattr(func, "__module__", "").startswith(FOLLOWED):
                funcs.append(func)
    return funcs


def tier_markers(item: pytest.Item) -> set[str]:
    """The tier markers a test earns from what it uses (see the module docstring)."""
    found: set[str] = set()
    fixtures = set(getattr(item, "fixturenames", ()))
    callspec = getattr(item, "callspec", None)
    params = set()
    if callspec is not None:
        params = {v for v in callspec.params.values() if isinstance(v, str)}
    if fixtures & POSTGRES_FIXTURES or params & POSTGRES_PARAMS:
        found.add("postgres")
    if fixtures & CORPUS_FIXTURES:
        found.add("corpus")
    func = getattr(item, "obj", None)
    funcs = [func, *_fixture_funcs(item)] if func is not None else []
    if any(starts_processes(f) for f in funcs):
        found.add("subprocess")
    if fixtures & SLOW_FIXTURES or any(uses(f, SLOW_NAMES) for f in funcs) or _heavy(item):
        found.add("slow")
    return found


_heavy_modules: dict[Path, bool] = {}


def _heavy(item: pytest.Item) -> bool:
    path = Path(str(item.path))
    if path not in _heavy_modules:
        _heavy_modules[path] = heavy_module(path)
    return _heavy_modules[path]


def mark(items: list[pytest.Item], corpus_present: bool) -> None:
    """Add the earned tier markers to each test; skip the ``corpus`` ones without a corpus."""
    no_corpus = pytest.mark.skip(reason="real ETC corpus not found: set ETC_DATA_DIR")
    for item in items:
        for name in sorted(tier_markers(item)):
            if item.get_closest_marker(name) is None:
                item.add_marker(getattr(pytest.mark, name))
        if not corpus_present and item.get_closest_marker("corpus") is not None:
            item.add_marker(no_corpus)


# --- the unit tier's guard ----------------------------------------------------------------------

#: Set by ``make test-unit``.
TIER_ENV = "ETC_TEST_TIER"


def _argv(args: Any) -> list[str]:
    raw = [args] if isinstance(args, str | bytes | os.PathLike) else list(args or [])
    return [os.fsdecode(a) for a in raw]


def _is_python_or_site(argv: list[str]) -> bool:
    if not argv:
        return False
    program = Path(argv[0].split()[0]).name
    return (
        argv[0] == sys.executable
        or program.startswith(("python", "streamlit", "chromium"))
        or any(a in ("streamlit", "leaderboard", "etclib") for a in argv[1:3])
    )


def guard_unit_tier(monkeypatch: pytest.MonkeyPatch) -> None:
    """In the unit tier, while a test runs: starting Python, a site, a browser or a server fails,
    saying to mark it ``subprocess`` (the tier rule missed it). Library code that runs other
    programs is left alone, and so is pytest itself (xdist starts its workers before)."""
    if os.environ.get(TIER_ENV) != "unit":
        return
    original = subprocess.Popen.__init__

    def guarded(self, args, *a, **k):
        argv = _argv(args)
        if _is_python_or_site(argv):
            test = os.environ.get("PYTEST_CURRENT_TEST", "a test").rsplit(" ", 1)[0]
            pytest.fail(
                f"{test} starts a process ({' '.join(argv[:3])} ...) in the unit tier: mark it "
                "@pytest.mark.subprocess, or teach tests/tiers.py's rule to see it",
                pytrace=False,
            )
        original(self, args, *a, **k)

    monkeypatch.setattr(subprocess.Popen, "__init__", guarded)

    def no_server(self, *a, **k):
        test = os.environ.get("PYTEST_CURRENT_TEST", "a test").rsplit(" ", 1)[0]
        pytest.fail(
            f"{test} starts a server ({type(self).__name__}) in the unit tier: mark it "
            "@pytest.mark.subprocess, or teach tests/tiers.py's rule to see it",
            pytrace=False,
        )

    monkeypatch.setattr(socketserver.TCPServer, "server_bind", no_server)
