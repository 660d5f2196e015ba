"""Several processes on one board while real sites serve it.

- The embedded SQLite board: a real ``streamlit run`` serves it with ``ETC_LB_WORKERS=0``; from
  other processes, every ``python -m leaderboard`` command works on the same file at the same
  time; a submission made through the Submit page (Chromium) is scored by a separate
  ``leaderboard worker`` process; a SIGKILL of that worker at a fault point loses nothing (its
  job is claimed again once its lease has expired: aged here, not waited for); and two site
  processes on the one board show the same new score.
- PostgreSQL, scaled out: two site processes and three worker processes, uploads through both
  sites' Submit pages in Chromium at once, a worker killed with SIGKILL twice mid-job
  (benchmarks/scale_out.py's own run, smaller).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys

import pytest

from benchmarks.scale_out import print_scale_out, scale_out
from etclib.data.corpus import load_corpus
from etclib.data.task import items as split_items
from etclib.tracks.predictions import dumps_jsonl
from tests.conftest import REPO

TOKEN = "a-long-enough-admin-token-0123456789"


@pytest.fixture(scope="module")
def shared(tmp_path_factory):
    """A running site on a fresh embedded board (tiny corpus, no scoring threads); its URL, the
    environment every other process of the test gets, and a predictions file."""
    from tests.data.make_tiny_corpus import write_tiny_corpus
    from tests.serve import CHROMIUM, running_site, site_env

    if not CHROMIUM.exists():
        pytest.skip(f"Debian's Chromium is not installed at {CHROMIUM}")
    base = tmp_path_factory.mktemp("shared-board")
    corpus = write_tiny_corpus(base / "tiny")
    env = site_env(
        base / "site", corpus, ETC_LB_WORKERS="0", ETC_ADMIN_TOKEN=TOKEN, ETC_LB_RETRY_BACKOFF="0"
    )
    env["ETC_LEADERBOARD_DB"] = str(base / "site" / "leaderboard.sqlite")
    items = split_items(load_corpus(corpus), "test")
    preds = base / "visitor.jsonl"
    preds.write_text(dumps_jsonl((it.key, f"{it.reference}ね") for it in items), "utf-8")
    # another content for the browser (the same file twice would be the same submission)
    preds.with_name("browser.jsonl").write_text(
        dumps_jsonl((it.key, f"{it.reference}よ") for it in items), "utf-8"
    )
    with running_site(env, log=base / "server.log") as url:
        yield url, {**os.environ, **env, "PYTHONPATH": str(REPO)}, preds


def cli(env: dict, *argv: str, timeout: float = 300, **extra: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "leaderboard", *argv],
        env={**env, **extra},
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def board_rows(env: dict, sql: str) -> list:
    """Rows of a query on the shared board, read by a process of its own."""
    code = (
        "import json, sys; from leaderboard.db import open_db; "
        "print(json.dumps(open_db(create=False).query(sys.argv[1]), default=str))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code, sql], env=env, cwd=REPO, capture_output=True, text=True,
        timeout=120, check=True,
    )  # fmt: skip
    return [tuple(r) for r in json.loads(out.stdout)]


def expire_leases(env: dict) -> int:
    """Age every running job's lease past its end, from a process of its own; how many."""
    code = (
        "from leaderboard.db import open_db; from tests.fixtures.board import age_leases; "
        "print(age_leases(db=open_db(create=False)))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, cwd=REPO, capture_output=True, text=True,
        timeout=120, check=True,
    )  # fmt: skip
    return int(out.stdout.strip())


def test_every_leaderboard_command_works_while_the_site_serves_the_board(shared, tmp_path):
    url, env, preds = shared
    got = cli(env, "seed-baselines", "--no-reported", "--backends", "constant", "--no-score")
    assert got.returncode == 0, got.stderr
    submitted = cli(env, "submit", str(preds), "--name", "From a terminal", "--contact", "t@x.org")
    assert submitted.returncode == 0, submitted.stderr
    (sid,) = board_rows(env, "SELECT id FROM submissions WHERE name = 'From a terminal'")[0]
    commands = {
        "status": ["status", sid],
        "show": ["show"],
        "export": ["export", "--format", "json", "--out", str(tmp_path / "board.json")],
        "admin list": ["admin", "list"],
        "admin hide": ["admin", "hide", sid, "--note", "a test"],
        "admin unhide": ["admin", "unhide", sid],
        "worker --once": ["worker", "--once", "--timeout", "240"],
    }
    for name, argv in commands.items():
        proc = cli(env, *argv)
        assert proc.returncode == 0, (name, proc.stdout, proc.stderr)
        assert "in use" not in proc.stderr and "Traceback" not in proc.stderr, name
    assert (tmp_path / "board.json").is_file()
    assert board_rows(env, f"SELECT status FROM submissions WHERE id = '{sid}'") == [("scored",)]
    # the site still answers, on the same board
    import urllib.request

    with urllib.request.urlopen(f"{url}/_stcore/health", timeout=10) as resp:
        assert resp.status == 200


def test_a_worker_process_scores_a_site_submission_and_a_sigkill_loses_nothing(shared, browser):
    from tests.serve import running_site, submit_file, wait_rendered

    url, env, preds = shared
    page = browser.new_page()
    submit_file(page, url, preds.with_name("browser.jsonl"), "Visitor model")
    page.get_by_text("Received as submission", exact=False).first.wait_for(timeout=60_000)
    page.close()
    (sid,) = board_rows(env, "SELECT id FROM submissions WHERE name = 'Visitor model'")[0]
    assert board_rows(env, f"SELECT status FROM submissions WHERE id = '{sid}'") == [("queued",)]
    # a worker process beside the site dies once it has computed the scores, before storing
    killed = cli(env, "worker", "--concurrency", "1", ETC_FAULTPOINTS="after_compute:1")
    assert killed.returncode == -signal.SIGKILL, killed.stdout + killed.stderr
    assert "faultpoint after_compute:1" in killed.stderr
    stored = board_rows(env, f"SELECT count(*) FROM scores WHERE submission_id = '{sid}'")
    assert stored == [(0,)]
    assert expire_leases(env) == 1  # its lease ends (instead of waiting ETC_LB_LEASE_SECONDS)
    done = cli(env, "worker", "--once", "--timeout", "240")
    assert done.returncode == 0, done.stdout + done.stderr
    assert board_rows(env, f"SELECT status FROM submissions WHERE id = '{sid}'") == [("scored",)]
    groups = board_rows(
        env, f"SELECT metric_group, count(*) FROM scores WHERE submission_id = '{sid}' GROUP BY 1"
    )
    assert sorted(groups) == [("bleu", 1), ("category", 1), ("rouge", 1)]  # each stored once
    (history,) = board_rows(
        env, f"SELECT count(*) FROM status_history WHERE submission_id = '{sid}' "
        "AND message LIKE '%lease%expired%'"
    )  # fmt: skip
    assert history[0] == 1
    # two site processes on the one board show the new score
    shown = []
    with running_site({k: v for k, v in env.items() if k != "PYTHONPATH"}) as second:
        for site in (url, second):
            page = browser.new_page()
            page.goto(f"{site}/leaderboard")
            wait_rendered(page, timeout=120)
            cell = page.locator('[role="gridcell"]', has_text="Visitor model").first
            cell.wait_for(state="attached", timeout=60_000)
            shown.append(page.locator('[role="gridcell"]').all_text_contents())
            page.close()
    assert "Visitor model" in shown[0]
    assert shown[0] == shown[1]  # the same rows, names and scores, in the same order


#: Files uploaded in the scale-out test: 12 (the benchmark runs 60): each upload is a fresh visit
#: to the Submit page in Chromium, about 7 s per file over both sites on two shared cores.
N_FILES = 12


def test_two_sites_three_workers_two_kills_score_every_file_once(tiny_corpus, postgres_url,
                                                                  tmp_path):  # fmt: skip
    """12 files (the benchmark's N is 60) uploaded through two sites at once,
    three workers, two SIGKILLs with a job in flight: all stored, all scored, each stage once,
    scores identical to one embedded process, no status stuck in "scoring"."""
    from tests.serve import CHROMIUM

    if not CHROMIUM.exists():
        pytest.skip(f"Debian's Chromium is not installed at {CHROMIUM} (apt-get install chromium)")
    work = tmp_path / "scale"
    work.mkdir()
    r = scale_out(N_FILES, postgres_url, tiny_corpus, work, kills=2)
    print_scale_out(r)
    assert r["upload_errors"] == []
    assert r["uploaded"] == r["stored"] == r["scored"] == N_FILES
    assert r["statuses"] == {"scored": N_FILES}  # nothing left in "scoring" (or anything else)
    assert r["stage_pairs"] == N_FILES and r["stage_jobs"] == [1]  # one finished job each
    assert r["score_rows_per_signature"] == [1]
    assert r["kills_in_flight"] == 2 and r["crashes"] >= 2
    assert r["single_files"] == N_FILES and r["identical"]
