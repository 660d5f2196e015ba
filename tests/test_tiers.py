"""tests/tiers.py: which tier marker a test earns from what it uses."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests import tiers


def _helper_that_starts_python():
    return subprocess.run([sys.executable, "-c", "pass"], check=True)


def _helper_calling_a_helper():
    return _helper_that_starts_python()


def _pure(x):
    return sorted(x)


def _scores_a_board(lb):
    return lb.process_jobs()


@pytest.mark.parametrize(
    ("func", "starts", "slow"),
    [
        (_helper_that_starts_python, True, False),
        (_helper_calling_a_helper, True, False),  # followed into the suite's own helpers
        (_pure, False, False),
        (_scores_a_board, False, True),
        (sorted, False, False),  # a builtin has no source: nothing found
    ],
)
def test_the_rules_read_the_source_and_follow_helpers(func, starts, slow):
    assert tiers.starts_processes(func) is starts
    assert tiers.uses(func, tiers.SLOW_NAMES) is slow


@pytest.mark.parametrize(
    ("source", "heavy"),
    [
        ("import torch\n", True),
        ("from transformers import AutoModel\n", True),
        ('import pytest\ntorch = pytest.importorskip("torch")\n', True),
        ("try:\n    import torch\nexcept ImportError:\n    torch = None\n", True),
        ("def f():\n    import torch\n", False),  # imported when a test runs, not at collection
        ("import json\n", False),
        ("", False),
    ],
)
def test_a_heavy_module_imports_torch_and_the_like_at_its_top(tmp_path, source, heavy):
    path = tmp_path / "test_x.py"
    path.write_text(source, encoding="utf-8")
    assert tiers.heavy_module(path) is heavy


def test_the_unit_tier_excludes_every_tier_marker():
    assert tiers.UNIT == " and ".join(f"not {m}" for m in tiers.MARKERS)
    assert set(tiers.MARKERS) == {"postgres", "corpus", "subprocess", "browser", "slow"}


def test_parameters_are_data_not_use(request):
    """A test given a process-starting helper as a parameter does not itself start one."""
    assert request.node.get_closest_marker("subprocess") is None
    assert tiers.starts_processes(test_the_rules_read_the_source_and_follow_helpers) is False


@pytest.mark.parametrize(
    ("argv", "guarded"),
    [
        ([sys.executable, "-m", "leaderboard", "worker"], True),
        (["python3", "-c", "pass"], True),
        (["streamlit", "run", "streamlit_app.py"], True),
        (["/usr/bin/chromium", "--headless"], True),
        (["git", "status"], False),
        (["pg_ctl", "start"], False),
        ([], False),
    ],
)
def test_the_unit_tier_guard_knows_python_sites_and_browsers(argv, guarded):
    assert tiers._is_python_or_site(argv) is guarded


def test_the_guard_fails_an_unmarked_test_that_starts_python(monkeypatch):
    monkeypatch.setenv(tiers.TIER_ENV, "unit")
    with pytest.MonkeyPatch.context() as m:
        tiers.guard_unit_tier(m)
        with pytest.raises(pytest.fail.Exception, match="mark it @pytest.mark.subprocess"):
            subprocess.Popen([sys.executable, "-c", "pass"])
        with pytest.raises(pytest.fail.Exception, match="starts a server"):
            import http.server

            http.server.HTTPServer(("127.0.0.1", 0), http.server.BaseHTTPRequestHandler)
    subprocess.run(["true"], check=True)  # restored
