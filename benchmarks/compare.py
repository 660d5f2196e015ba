"""Render time of the comparison page for two 1,010-item entries with every lexical metric
(BLEU-1..4, ROUGE-1/2/L, category F1) and their intervals and tests, in Debian's Chromium
driven by Playwright. Targets: cold <= 3 s, warm <= 1 s.

Two computed baselines (constant, copy) are lexically scored into a throw-away leaderboard
database on the real corpus before the server starts (the board's real settings: 1,000
bootstrap resamples; the comparison adds 10,000 randomization trials). A render is done when
the page's title is drawn, its script is idle and the metric table and the item count are on
the page. *Cold*: the first visit of the comparison URL after the server started, the server
warmed by one visit to the Leaderboard (a warm server as a visitor meets it; the comparison
itself not computed yet). *Warm*: the visitor's way there in a running session, as
``benchmarks/site.py`` measures warm renders (no page reload): on the Leaderboard with entry B
chosen, a click on "Compare with the one above" until the comparison is drawn (median of
``--runs``). A fresh session's direct visit of the URL (a page load) is printed beside it.
Printed beside them: the in-process figures of ``leaderboard.compare.compare`` (first call and
cached; wall and CPU seconds) and of ``etclib.compare`` on the two predictions files.

On a shared machine the wall-clock figures grow with the load: beside each render the server's
CPU seconds (user + system, all threads: ``benchmarks.site.cpu_seconds``) are printed, which do
not, and the load averages before and after the run.

Run:  .venv/bin/python benchmarks/compare.py [--runs 5]
Needs the real corpus (ETC_DATA_DIR) and /usr/bin/chromium (apt-get install chromium).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.site import (  # noqa: E402
    COMPARE_READY,
    DRAWN,
    comparison_by_link,
    cpu_seconds,
    drawn,
    load,
    server_pid,
)
from tests.serve import chromium, running_site  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
TARGETS = {"cold": 3.0, "warm": 1.0}

SEED = """
import json
import leaderboard as lb
lb.seed_baselines(reported=False, backends=("constant", "copy"))
lb.process_jobs()
board = lb.ranking()
print(json.dumps(list(board["id"])))
"""

IN_PROCESS = """
import json, sys, time
import leaderboard as lb
from etclib.data.corpus import load_corpus
from leaderboard import compare as lbc
a, b = sys.argv[1], sys.argv[2]
load_corpus(); lb.open_db()
t, p = time.perf_counter(), time.process_time()
c = lbc.compare(a, b); c.per_item()
first, first_cpu = time.perf_counter() - t, time.process_time() - p
t = time.perf_counter(); lbc.compare(a, b).per_item(); cached = time.perf_counter() - t
db = lb.open_db()
files = []
for sid in (a, b):
    rows = db.query("SELECT dialogue_id, turn, role, prediction FROM predictions "
                    "WHERE submission_id = ? ORDER BY item_index", [sid])
    path = f"{sys.argv[3]}/{sid}.jsonl"
    with open(path, "w", encoding="utf-8") as f:
        for d, tn, r, p in rows:
            rec = {"dialogue_id": d, "turn": tn, "role": r, "prediction": p}
            f.write(json.dumps(rec, ensure_ascii=False) + "\\n")
    files.append(path)
import etclib
t = time.perf_counter()
etclib.compare(files[0], files[1], list(c.modules))
offline = time.perf_counter() - t
print(json.dumps({"metrics": len(c.metrics), "first": first, "first_cpu": first_cpu,
                  "cached": cached, "offline": offline}))
"""


def render(context, url: str, ready: tuple[str, ...] = COMPARE_READY, pid: int | None = None):
    """(wall seconds, the server's CPU seconds) of one visit of ``url`` in a new page."""
    page = context.new_page()
    try:
        cpu0 = cpu_seconds(pid)
        page.goto(url)
        # from the navigation's start to the frame that shows it, on the page's clock
        at = page.wait_for_function(DRAWN, arg=drawn(texts=ready), timeout=120_000).json_value()
        return at / 1000, cpu_seconds(pid) - cpu0
    finally:
        page.close()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5, help="warm visits (default 5)")
    args = parser.parse_args()
    print(f"load average at the start: {load()}")
    with tempfile.TemporaryDirectory(prefix="etc-bench-compare-") as tmp:
        base = Path(tmp)
        env = {
            "ETC_LEADERBOARD_DB": str(base / "leaderboard.duckdb"),
            "ETC_STUDIES_DB": str(base / "studies.sqlite"),
            "ETC_SECRETS_FILE": str(base / "no-secrets.toml"),
            "ETC_PROGRESS": "0",
            "ETC_JUDGE_PROVIDER": "",
            "HF_HUB_OFFLINE": "1",
        }
        run_env = {**os.environ, **env}
        t = time.perf_counter()
        out = subprocess.run(
            [sys.executable, "-c", SEED],
            cwd=REPO,
            env=run_env,
            check=True,
            capture_output=True,
            text=True,
            timeout=900,
        ).stdout
        ids = json.loads(out.strip().splitlines()[-1])
        a, b = ids[0], ids[1]
        print(f"board: {len(ids)} entries scored in {time.perf_counter() - t:.1f} s; A={a} B={b}")
        got = json.loads(
            subprocess.run(
                [sys.executable, "-c", IN_PROCESS, a, b, tmp],
                cwd=REPO,
                env=run_env,
                check=True,
                capture_output=True,
                text=True,
                timeout=900,
            )
            .stdout.strip()
            .splitlines()[-1]
        )
        print(
            f"in process: leaderboard.compare first {got['first']:.2f} s "
            f"(CPU {got['first_cpu']:.2f} s), cached "
            f"{got['cached'] * 1000:.0f} ms ({got['metrics']} metric keys, per-item rows "
            f"included); etclib.compare on the two files (scoring both) {got['offline']:.2f} s"
        )
        with running_site(env) as url, chromium() as context:
            pid = server_pid(url)
            # the server warmed, the pair not compared
            render(context, f"{url}/leaderboard", (), pid)
            target = f"{url}/compare?track=transcription&a={a}&b={b}"
            cold, cold_cpu = render(context, target, pid=pid)
            warm = [comparison_by_link(context, url, b, pid) for _ in range(args.runs)]
            direct = [render(context, target, pid=pid) for _ in range(args.runs)]
        median = statistics.median(w for w, _ in warm)
        median_cpu = statistics.median(c for _, c in warm)
        for name, value, cpu in (("cold", cold, cold_cpu), ("warm", median, median_cpu)):
            verdict = "ok" if value <= TARGETS[name] else "OVER TARGET"
            print(
                f"comparison page {name}: {value:.2f} s (target <= {TARGETS[name]:.0f} s) "
                f"{verdict}; server CPU {cpu:.2f} s"
            )
        print(
            "warm runs (board -> comparison): "
            + ", ".join(f"{w:.2f} s (CPU {c:.2f})" for w, c in warm)
        )
        print(
            f"direct visits of the URL in fresh sessions (page loads): median "
            f"{statistics.median(w for w, _ in direct):.2f} s "
            f"({', '.join(f'{w:.2f}' for w, _ in direct)})"
        )
    print(f"load average at the end: {load()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
