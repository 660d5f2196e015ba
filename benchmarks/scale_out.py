"""The scaled leaderboard (issue 15) end to end: site replicas and worker processes on one
PostgreSQL, with workers killed mid-job; and the judge backlog with one worker against three.

*Scale-out*: two site processes (``streamlit run streamlit_app.py``, ``ETC_LB_WORKERS=0``, each
on its own port) and three ``python -m leaderboard worker`` processes share one PostgreSQL
database on loopback. N distinct prediction files are uploaded through both sites' Submit pages
at once (Chromium driven by Playwright, one browser per site, each in its own thread) while one
worker is killed with SIGKILL twice with a job in flight (and restarted each time). Then it
checks: N stored, N scored, each (submission, stage) finished by one job, one score row per
(submission, metric group, signature), no status left in "scoring", and every score identical
to a single-process run of the same files (an embedded DuckDB board, ``worker --once``).
Lexical metrics only (no judge, no BERTScore).

*Judge backlog*: the fake LLM server (tests/fakes/llm_server/) answers the judge after 200 ms;
six submissions are queued, then scored with the judge by one worker process, then (on a fresh
database: board, shared judge cache ``ETC_JUDGE_CACHE`` and studies ``ETC_STUDIES_DB`` on the
same server) by three. Printed: the time each took to clear the judge backlog (from the first
judge job claimed to the last judge result, on the server's clock) and the wall time from the
workers being ready (with the lexical stage and the workers' first jobs), their ratios (target
>= 2.5, on the judge backlog), the decompositions of reference texts counted on the fake server
against the distinct references of the test split (target: equal, each once), and whether the
two runs stored the same scores. Each worker scores one job at a time (``--concurrency 1``) with
``ETC_JUDGE_CONCURRENCY=2`` (``SCALE_JUDGE_CONCURRENCY`` changes it) requests in flight, so one
worker is bound by the judge's latency, as a real backlog is. Workers warm the judge when they
start (``python -m leaderboard worker``), before the clock starts.

Both use a tiny corpus in the real schema (tests/data/make_tiny_corpus.py: 20 test items), so a
run takes minutes on a shared machine. PostgreSQL: Debian's binaries (``make postgres``), started
in a temporary directory on a loopback port (tests/pgserver.py). Chromium: /usr/bin/chromium.

Run:  .venv/bin/python benchmarks/scale_out.py            # N=60, then the judge backlog
      .venv/bin/python benchmarks/scale_out.py --n 12 --skip-judge
      .venv/bin/python benchmarks/scale_out.py --skip-sites --engine sqlite   # embedded board

With ``--engine sqlite`` the judge backlog runs on the embedded board (a SQLite file shared by
the worker processes; the judge cache a SQLite file, whose claims reach the other processes;
the studies a SQLite file).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from tests.pgserver import PgServer, why_unavailable  # noqa: E402
from tests.serve import chromium, free_port, running_site, submit_file  # noqa: E402

META = {"name": "scale", "team": "Scale-out", "setting": "zero-shot"}
JUDGE_LATENCY = 0.2
JUDGE_CONCURRENCY = int(os.environ.get("SCALE_JUDGE_CONCURRENCY", "2"))
TARGET_RATIO = 2.5


# --- shared pieces ---------------------------------------------------------------------------


def tiny_corpus(root: Path) -> Path:
    from tests.data.make_tiny_corpus import write_tiny_corpus

    return write_tiny_corpus(root / "tiny")


def split_items(corpus: Path) -> list:
    from etclib.data.corpus import load_corpus
    from etclib.data.task import items

    return items(load_corpus(corpus), "test")


def prediction_file(items: list, k: int) -> bytes:
    """The k-th distinct valid file: references and utterances mixed by k, a k-tag on some."""
    from etclib.tracks.predictions import dumps_jsonl

    def pred(j: int, it) -> str:
        base = it.reference if (j + k) % 3 else it.utterance
        return base + ("" if j % 4 else f"と思った{k}")

    return dumps_jsonl((it.key, pred(j, it)) for j, it in enumerate(items)).encode()


def base_env(corpus: Path, work: Path, db: str, **extra: str) -> dict[str, str]:
    """The environment of every process of a run: its own caches, corpus and board."""
    env = dict(os.environ)
    for var in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "GEMINI_API_KEY", "ETC_JUDGE_PROVIDER",
                "ETC_BERTSCORE_MODEL", "ETC_LB_BERTSCORE", "ETC_LB_WORKERS"):  # fmt: skip
        env.pop(var, None)
    env.update(
        PYTHONPATH=str(REPO),
        ETC_DATA_DIR=str(corpus),
        ETC_CACHE_DIR=str(work / "cache"),
        ETC_STORE_DB=str(work / "etc.duckdb"),
        ETC_STUDIES_DB=str(work / "studies.sqlite"),
        ETC_SECRETS_FILE=str(work / "secrets.toml"),
        ETC_LEADERBOARD_DB=db,
        ETC_LB_BOOTSTRAP="50",
        ETC_PROGRESS="0",
        HF_HUB_OFFLINE="1",
    )
    env.update(extra)
    return env


class Worker:
    """One ``python -m leaderboard worker`` process; its output goes to ``log``."""

    def __init__(self, env: dict[str, str], log: Path, *args: str):
        self.env, self.log, self.args = env, log, args
        self.proc: subprocess.Popen | None = None

    def start(self) -> Worker:
        with open(self.log, "ab") as out:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "leaderboard", "worker", *self.args],
                env=self.env, cwd=REPO, stdout=out, stderr=subprocess.STDOUT,
            )  # fmt: skip
        return self

    @property
    def pid(self) -> int:
        assert self.proc is not None
        return self.proc.pid

    def wait_ready(self, timeout: float = 120.0) -> None:
        """Until it printed its start line (``worker: N thread(s), PID ...``)."""
        deadline = time.monotonic() + timeout
        while f"PID {self.pid};" not in self.log.read_text(errors="replace"):
            if self.proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"worker {self.pid} did not start: {self.log.read_text()}")
            time.sleep(0.1)

    def kill(self) -> None:
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait()

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.kill()


def create_board(env: dict[str, str]) -> None:
    """Create the empty board of ``env`` (workers refuse a database without one)."""
    code = "from leaderboard.db import open_db; open_db(create=True); import leaderboard; leaderboard.close_all()"
    subprocess.run([sys.executable, "-c", code], env=env, cwd=REPO, check=True)


def pg_query(url: str, sql: str, params=()) -> list[tuple]:
    """Rows of ``sql`` (``%s`` placeholders) on the board ``url``: a PostgreSQL URL, or the path
    of an embedded SQLite board (``--engine sqlite``), each read with its own driver."""
    if not url.startswith("postgresql://"):
        import sqlite3

        con = sqlite3.connect(url, timeout=30)
        try:
            return con.execute(sql.replace("%s", "?"), list(params)).fetchall()
        finally:
            con.close()
    import psycopg

    with psycopg.connect(url, autocommit=True) as con:
        return con.execute(sql, list(params)).fetchall()


def _seconds(value) -> datetime:
    """A TIMESTAMP as either driver gives it (SQLite: the board's text form)."""
    return value if isinstance(value, datetime) else datetime.fromisoformat(value)


def stored_scores(rows) -> dict[str, dict[str, dict]]:
    """content_sha256 -> metric group -> scores, from (content_sha256, group, scores JSON)."""
    out: dict[str, dict[str, dict]] = {}
    for sha, group, scores in rows:
        out.setdefault(sha, {})[group] = json.loads(scores)
    return out


SCORES_SQL = (
    "SELECT s.content_sha256, sc.metric_group, sc.scores FROM scores sc "
    "JOIN submissions s ON s.id = sc.submission_id WHERE sc.metric_group <> 'reported'"
)


# --- scale-out: two sites, three workers, two kills -------------------------------------------


#: The line of the page that says "Received as submission ID", once there is one.
RECEIPT = (
    "() => document.body.innerText.split('\\n').find((l) => l.includes('Received as submission'))"
)


def upload_through_site(url: str, paths: list[Path], tag: str, done: list, errors: list) -> None:
    """Submit each file through the Submit page of the site at ``url`` (a fresh visit each)."""
    try:
        with chromium() as context:
            page = context.new_page()
            for path in paths:
                submit_file(page, url, path, f"{tag} {path.stem}", team="Scale-out")
                # the receipt's text as the page first shows it (a rerun may redraw it, and a
                # second read would wait for it again)
                received = page.wait_for_function(RECEIPT, timeout=120_000).json_value()
                done.append((tag, path.name, received))
    except Exception as exc:  # reported by the caller, with the site's log
        errors.append(f"{tag}: {type(exc).__name__}: {exc}")


def kill_in_flight(url: str, workers: list[Worker], kills: int, stop: threading.Event,
                   record: list, timeout: float) -> None:  # fmt: skip
    """SIGKILL a worker that holds a running job, ``kills`` times, restarting it each time.

    A kill counts when the job it targeted is still "running" afterwards (the dead process can
    no longer finish it); a kill that came after the job was stored is recorded and retried.
    """
    deadline = time.monotonic() + timeout
    while sum(1 for r in record if r["in_flight"]) < kills and not stop.is_set():
        if time.monotonic() > deadline:
            return
        running = pg_query(
            url, "SELECT id, claimed_by FROM jobs WHERE status = 'running' ORDER BY claimed_at"
        )
        target = next(
            ((job, w) for job, by in running for w in workers if by.startswith(f"pid {w.pid} ")),
            None,
        )
        if target is None:
            time.sleep(0.02)
            continue
        job, w = target
        pid = w.pid
        w.kill()
        (status,) = pg_query(url, "SELECT status FROM jobs WHERE id = %s", [job])[0]
        record.append({"pid": pid, "job": job, "in_flight": status == "running"})
        w.start()
        time.sleep(1.0)  # let the others work before the next kill


def single_process_scores(files: list[Path], corpus: Path, work: Path) -> dict:
    """Scores of the same files on an embedded (SQLite) board, scored by one ``worker --once``."""
    import sqlite3

    db = work / "single.sqlite"
    env = base_env(corpus, work, str(db), ETC_LB_DAILY_LIMIT="1000",
                   ETC_LB_GLOBAL_DAILY_LIMIT="1000", ETC_LB_MAX_QUEUE="1000")  # fmt: skip
    code = (
        "import sys, leaderboard as lb\n"
        "for i, p in enumerate(sys.argv[1:]):\n"
        "    lb.submit(open(p, 'rb').read(), {'name': f'single {i}', 'setting': 'zero-shot'},"
        " submitter='single')\n"
        "lb.close_all()\n"
    )
    subprocess.run([sys.executable, "-c", code, *map(str, files)], env=env, cwd=REPO, check=True)
    subprocess.run(
        [sys.executable, "-m", "leaderboard", "worker", "--once", "--concurrency", "1"],
        env=env, cwd=REPO, check=True, stdout=subprocess.DEVNULL,
    )  # fmt: skip
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        return stored_scores(con.execute(SCORES_SQL).fetchall())
    finally:
        con.close()


def scale_out(n: int, url: str, corpus: Path, work: Path, kills: int = 2) -> dict:
    """The scale-out run on the empty database ``url``; returns its figures and checks."""
    items = split_items(corpus)
    files = []
    for k in range(n):
        path = work / f"pred{k:03d}.jsonl"
        path.write_bytes(prediction_file(items, k))
        files.append(path)
    limits = {"ETC_LB_DAILY_LIMIT": str(n + 10), "ETC_LB_GLOBAL_DAILY_LIMIT": str(n + 10),
              "ETC_LB_MAX_QUEUE": str(n + 10), "ETC_LB_LEASE_SECONDS": "3",
              "ETC_LB_RETRY_BACKOFF": "0"}  # fmt: skip
    site_env = base_env(corpus, work, url, ETC_LB_WORKERS="0", **limits)
    worker_env = base_env(corpus, work, url, **limits)
    create_board(worker_env)
    workers = [Worker(worker_env, work / f"worker{i}.log", "--concurrency", "2") for i in range(3)]
    done: list = []
    errors: list[str] = []
    record: list[dict] = []
    started = time.monotonic()
    with contextlib.ExitStack() as stack:
        sites = [
            stack.enter_context(
                running_site(site_env, port=free_port(), log=work / f"site{i}.log", timeout=180)
            )
            for i in range(2)
        ]
        for w in workers:
            stack.callback(w.stop)
            w.start()
        for w in workers:
            w.wait_ready()
        ready = time.monotonic()
        halves = [files[0::2], files[1::2]]
        stop = threading.Event()
        uploaders = [
            threading.Thread(
                target=upload_through_site, args=(site, half, f"site{i}", done, errors)
            )
            for i, (site, half) in enumerate(zip(sites, halves, strict=True))
        ]
        killer = threading.Thread(
            target=kill_in_flight, args=(url, workers, kills, stop, record, 600.0)
        )
        for t in (*uploaders, killer):
            t.start()
        for t in uploaders:
            t.join()
        uploaded = time.monotonic()
        # the killer goes on while jobs remain; then every job must finish
        deadline = time.monotonic() + 600
        while time.monotonic() < deadline:
            (left,) = pg_query(url, "SELECT count(*) FROM jobs WHERE status IN ('queued', "
                               "'running')")[0]  # fmt: skip
            if left == 0 and not killer.is_alive():
                break
            if left == 0:
                stop.set()
            time.sleep(0.5)
        stop.set()
        killer.join()
        finished = time.monotonic()
    single = single_process_scores(files, corpus, work)
    ours = {
        sha
        for (sha,) in pg_query(
            url, "SELECT content_sha256 FROM submissions WHERE baseline_key IS NULL"
        )  # fmt: skip
    }
    statuses = pg_query(url, "SELECT status, count(*) FROM submissions GROUP BY 1")
    per_stage = pg_query(
        url, "SELECT submission_id, stage, count(*) FROM jobs WHERE status = 'done' GROUP BY 1, 2"
    )
    per_signature = pg_query(
        url, "SELECT submission_id, metric_group, signature, count(*) FROM scores GROUP BY 1, 2, 3"
    )
    # one job may be killed twice (claimed again by a worker killed next): count the crashes
    crashed = pg_query(url, "SELECT coalesce(sum(crashes), 0) FROM jobs")[0][0]
    scores = stored_scores(pg_query(url, SCORES_SQL))
    return {
        "n": n,
        "uploaded": len(done),
        "upload_errors": errors,
        "stored": len(ours),
        "statuses": dict(statuses),
        "scored": dict(statuses).get("scored", 0),
        "stage_jobs": sorted({c for _, _, c in per_stage}),
        "stage_pairs": len(per_stage),
        "score_rows_per_signature": sorted({c for *_, c in per_signature}),
        "kills": record,
        "kills_in_flight": sum(1 for r in record if r["in_flight"]),
        "crashes": crashed,
        "identical": scores == single and len(scores) == n,
        "single_files": len(single),
        "start_s": ready - started,
        "upload_s": uploaded - ready,
        "drain_s": finished - uploaded,
    }


# --- judge backlog: one worker against three --------------------------------------------------


def judge_backlog(processes: int, url: str, corpus: Path, work: Path, server,
                  submissions: int = 6, concurrency: int = JUDGE_CONCURRENCY,
                  latency: float = JUDGE_LATENCY) -> dict:  # fmt: skip
    """Score ``submissions`` files with the judge by ``processes`` workers on the empty database
    ``url`` (board, judge cache and studies); the fake ``server`` answers after ``latency``
    seconds and counts the requests."""
    from tests.fakes.judge_fixtures import FAKE_MODEL
    from tests.fakes.judge_responder import request_kind

    items = split_items(corpus)
    refs = {it.reference for it in items}
    embedded = not url.startswith("postgresql://")
    env = base_env(
        corpus, work, url,
        ETC_JUDGE_PROVIDER="openai", ETC_JUDGE_MODEL=FAKE_MODEL,
        ETC_JUDGE_CACHE=str(work / "judge.sqlite3") if embedded else url,
        ETC_STUDIES_DB=str(work / "studies.sqlite") if embedded else url,
        OPENAI_API_KEY="test-key", OPENAI_BASE_URL=server.openai_base_url,
        ETC_JUDGE_CONCURRENCY=str(concurrency), ETC_JUDGE_BACKOFF="0.01", ETC_LB_RETRY_BACKOFF="0",
    )  # fmt: skip
    server.reset()
    server.latency = latency
    workers = [
        Worker(env, work / f"judge{processes}-{i}.log", "--concurrency", "1")
        for i in range(processes)
    ]
    code = (
        "import sys, leaderboard as lb\n"
        "from benchmarks.scale_out import judge_file, split_items\n"
        "from leaderboard.db import open_db\n"
        "open_db(create=True)\n"
        "items = split_items(sys.argv[1])\n"
        "for k in range(int(sys.argv[2])):\n"
        "    lb.submit(judge_file(items, k), {'name': f'judge {k}', 'setting': 'zero-shot'},"
        " submitter=f'judge{k}')\n"
        "lb.close_all()\n"
    )
    cpu_before = _children_cpu()
    try:
        # one process creates the board and queues the submissions; then the workers start
        subprocess.run([sys.executable, "-c", code, str(corpus), str(submissions)], env=env,
                       cwd=REPO, check=True)  # fmt: skip
        for w in workers:
            w.start()
        for w in workers:
            w.wait_ready()
        started = time.monotonic()
        deadline = time.monotonic() + 900
        while True:
            (judged,) = pg_query(
                url, "SELECT count(*) FROM jobs WHERE stage = 'judge' AND status IN ('done', "
                "'failed')"
            )[0]  # fmt: skip
            if judged >= submissions:
                break
            if time.monotonic() > deadline:
                raise RuntimeError(f"the judge backlog did not finish: {judged} of {submissions}")
            time.sleep(0.2)
        wall = time.monotonic() - started
    finally:
        for w in workers:
            w.stop()
    cpu = _children_cpu() - cpu_before
    decomposed = [
        request_kind(r)[1][0]
        for r in list(server.requests)
        if r.fault is None and request_kind(r)[0] == "decompose"
    ]
    ref_calls = [t for t in decomposed if t in refs]
    failed = pg_query(url, "SELECT count(*) FROM jobs WHERE status <> 'done'")[0][0]
    groups = pg_query(url, "SELECT count(*) FROM scores WHERE metric_group = 'judge'")[0][0]
    spans = [
        (_seconds(c), _seconds(f))
        for c, f in pg_query(
            url, "SELECT claimed_at, finished_at FROM jobs WHERE stage = 'judge' "
            "AND finished_at IS NOT NULL"
        )
    ]  # fmt: skip
    job_s = sum((f - c).total_seconds() for c, f in spans)
    span_s = (max(f for _, f in spans) - min(c for c, _ in spans)).total_seconds() if spans else 0
    per_stage = pg_query(
        url, "SELECT submission_id, stage, count(*) FROM jobs WHERE status = 'done' GROUP BY 1, 2"
    )
    per_signature = pg_query(
        url, "SELECT submission_id, metric_group, signature, count(*) FROM scores GROUP BY 1, 2, 3"
    )
    judges = pg_query(
        url, "SELECT count(DISTINCT claimed_process) FROM jobs WHERE stage = 'judge'"
    )[0][0]
    return {
        "processes": processes,
        "submissions": submissions,
        "latency": latency,
        "wall_s": wall,
        "stage_jobs": sorted({c for _, _, c in per_stage}),
        "stage_pairs": len(per_stage),
        "score_rows_per_signature": sorted({c for *_, c in per_signature}),
        "judge_processes": judges,
        "scores": stored_scores(pg_query(url, SCORES_SQL)),
        "calls": len(server.requests),
        "ref_decompositions": len(ref_calls),
        "distinct_refs_decomposed": len(set(ref_calls)),
        "distinct_refs": len(refs),
        "jobs_not_done": failed,
        "judge_score_rows": groups,
        "judge_job_s": float(job_s or 0.0),
        "judge_span_s": float(span_s or 0.0),
        "max_in_flight": server.max_in_flight,
        "workers_cpu_s": cpu,
    }


def _children_cpu() -> float:
    """CPU seconds (user + system) of this process's finished child processes."""
    import resource

    use = resource.getrusage(resource.RUSAGE_CHILDREN)
    return use.ru_utime + use.ru_stime


def judge_file(items: list, k: int) -> bytes:
    """A judge file whose predictions never equal a reference (so reference decompositions
    can be told apart on the fake server)."""
    from etclib.tracks.predictions import dumps_jsonl

    return dumps_jsonl((it.key, f"{it.utterance}と感じた{k}。") for it in items).encode()


# --- the command ------------------------------------------------------------------------------


@contextlib.contextmanager
def postgres() -> Iterator[PgServer]:
    why = why_unavailable()
    if why:
        raise SystemExit(f"PostgreSQL is not available here: {why}")
    server = PgServer().start()
    try:
        yield server
    finally:
        server.stop()


def print_scale_out(r: dict) -> None:
    print(f"scale-out: N={r['n']} files through 2 sites, 3 workers, PostgreSQL on loopback")
    print(
        f"  uploaded through the sites: {r['uploaded']}  (errors: {r['upload_errors'] or 'none'})"
    )
    print(f"  stored: {r['stored']}   scored: {r['scored']}   statuses: {r['statuses']}")
    print(
        f"  finished jobs per (submission, stage): {r['stage_jobs']} over {r['stage_pairs']} pairs"
    )
    print(f"  score rows per (submission, group, signature): {r['score_rows_per_signature']}")
    print(f"  SIGKILLs: {len(r['kills'])}, with a job in flight: {r['kills_in_flight']}; "
          f"crashes recorded on jobs: {r['crashes']}")  # fmt: skip
    print(f"  scores identical to one embedded process (worker --once): {r['identical']} "
          f"({r['single_files']} files there)")  # fmt: skip
    print(f"  times: start {r['start_s']:.1f} s, uploads {r['upload_s']:.1f} s "
          f"({r['upload_s'] / max(r['n'], 1):.2f} s per file over both sites), "
          f"queue drained {r['drain_s']:.1f} s after the last upload")  # fmt: skip


def print_judge_run(r: dict) -> None:
    """One judge-backlog run's figures."""
    print(f"  {r['processes']} worker(s): judge backlog cleared in {r['judge_span_s']:.1f} s "
          f"(first judge claim to last judge result; {r['wall_s']:.1f} s from the workers being "
          f"ready with the backlog queued, with the lexical stage), {r['calls']} judge calls, at "
          f"most {r['max_in_flight']} in flight, {r['workers_cpu_s']:.1f} CPU s in the workers "
          "and the upload process; reference decompositions "
          f"{r['ref_decompositions']} for {r['distinct_refs']} distinct references "
          f"({r['distinct_refs_decomposed']} of them decomposed); jobs not done "
          f"{r['jobs_not_done']}")  # fmt: skip


def print_judge(one: dict, three: dict) -> None:
    print(f"judge backlog: {one['submissions']} submissions, fake judge at "
          f"{one['latency'] * 1000:.0f} ms, "
          f"ETC_JUDGE_CONCURRENCY={JUDGE_CONCURRENCY}, worker --concurrency 1; "
          f"{os.cpu_count()} cores, load average {os.getloadavg()[0]:.2f}")  # fmt: skip
    for r in (one, three):
        print_judge_run(r)
    print(
        f"  speed-up 3 vs 1: {judge_ratio(one, three):.2f}x on the judge backlog, "
        f"{one['wall_s'] / three['wall_s']:.2f}x from the workers being ready "
        f"(target >= {TARGET_RATIO})"
    )


def judge_ratio(one: dict, three: dict) -> float:
    """How much faster three workers cleared the judge backlog than one."""
    return one["judge_span_s"] / three["judge_span_s"]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=60, help="files submitted through the sites")
    ap.add_argument("--skip-sites", action="store_true", help="only the judge backlog")
    ap.add_argument("--skip-judge", action="store_true", help="only the scale-out run")
    ap.add_argument(
        "--engine",
        choices=("postgresql", "sqlite"),
        default="postgresql",
        help="the judge backlog's board: PostgreSQL (board, judge cache, studies on the server), "
        "or the embedded SQLite board (judge cache a SQLite file, studies a SQLite file)",
    )
    args = ap.parse_args(argv)
    from tests.fakes.judge_responder import ScriptedJudge
    from tests.fakes.llm_server import FakeLLMServer

    ok = True
    with tempfile.TemporaryDirectory(prefix="etc-scale-") as tmp, postgres() as server:
        root = Path(tmp)
        corpus = tiny_corpus(root)
        if not args.skip_sites:
            work = root / "scale"
            work.mkdir()
            r = scale_out(args.n, server.new_database(), corpus, work)
            print_scale_out(r)
            ok &= (r["stored"] == r["scored"] == r["n"] and r["stage_jobs"] == [1]
                   and r["score_rows_per_signature"] == [1] and r["identical"]
                   and "scoring" not in r["statuses"] and r["kills_in_flight"] >= 2)  # fmt: skip
        if not args.skip_judge:
            with FakeLLMServer(ScriptedJudge(), hang_seconds=10.0) as fake:
                runs = []
                for processes in (1, 3):
                    work = root / f"judge{processes}"
                    work.mkdir()
                    board = (
                        str(work / "leaderboard.sqlite")
                        if args.engine == "sqlite"
                        else server.new_database()
                    )
                    runs.append(judge_backlog(processes, board, corpus, work, fake))
            print(f"judge backlog board: {args.engine}")
            print_judge(*runs)
            print(f"  scores identical (1 vs 3 workers): {runs[0]['scores'] == runs[1]['scores']}")
            ok &= (judge_ratio(*runs) >= TARGET_RATIO and runs[0]["scores"] == runs[1]["scores"]
                   and all(r["ref_decompositions"] == r["distinct_refs"] and r["stage_jobs"] == [1]
                           for r in runs))  # fmt: skip
    print("all checks held" if ok else "SOME CHECKS FAILED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
