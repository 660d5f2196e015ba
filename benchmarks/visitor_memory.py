"""The served site's memory through one visitor's many refused uploads: ``--tabs`` pages (20)
of the Submit page in Chromium, each given a refused 9.9 MB file (3.3 million ``{}`` lines) and
kept open until its refusal shows; then every tab closes. Printed: the server's resident memory
(RSS) before (after one warm-up visit of the Submit page), at its peak and every few seconds for
a minute after the tabs closed, and whether it came back within 10 % of where it started.

The site runs with ``ETC_PAGES_PER_VISITOR=0`` (no bound of pages), so that every tab uploads:
what is measured is what the Submit page and the upload guard let go (views/visitors.py), not
tabs turned away. On a shared machine the figures move with what else runs; memory less so
than time.

Run:  .venv/bin/python benchmarks/visitor_memory.py [--tabs 20] [--after 60]
Needs the real corpus (ETC_DATA_DIR) and /usr/bin/chromium (apt-get install chromium).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.site import server_pid  # noqa: E402
from tests.serve import chromium, running_site, site_env, wait_rendered  # noqa: E402

TARGET = 0.10


def rss_mb(pid: int) -> float:
    """Resident memory of process ``pid`` in MB (Linux /proc)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tabs", type=int, default=20)
    parser.add_argument("--after", type=float, default=60.0, help="seconds watched after")
    args = parser.parse_args()
    corpus = os.environ.get("ETC_DATA_DIR")
    if not corpus:
        sys.exit("Set ETC_DATA_DIR to the corpus folder.")
    with tempfile.TemporaryDirectory(prefix="etc-memory-") as tmp:
        base = Path(tmp)
        refused = base / "empty.jsonl"
        refused.write_bytes(b"{}\n" * 3_300_000)
        env = site_env(base / "site", corpus, ETC_PAGES_PER_VISITOR="0", ETC_LB_WORKERS="0")
        with running_site(env, log=base / "server.log") as url, chromium() as browser:
            pid = server_pid(url)
            if pid is None:
                sys.exit("The server's process was not found.")
            warm = browser.new_page()
            warm.goto(f"{url}/submit")
            wait_rendered(warm, timeout=120)
            warm.close()
            start = rss_mb(pid)
            print(f"start          {start:8.1f} MB (after one visit of the Submit page)")
            pages, peak = [], start
            for _ in range(args.tabs):
                page = browser.new_page()
                page.goto(f"{url}/submit")
                wait_rendered(page, timeout=120)
                page.locator('input[type="file"]').set_input_files(str(refused))
                page.get_by_text("was refused", exact=False).first.wait_for(timeout=300_000)
                pages.append(page)
                peak = max(peak, rss_mb(pid))
            print(f"{args.tabs} tabs open   {rss_mb(pid):8.1f} MB (peak {peak:.1f} MB)")
            for page in pages:
                page.close()
            closed = time.monotonic()
            back = None
            while (waited := time.monotonic() - closed) <= args.after:
                now = rss_mb(pid)
                if back is None and now <= start * (1 + TARGET):
                    back = waited
                print(f"after {waited:5.1f} s  {now:8.1f} MB")
                time.sleep(5)
            verdict = (
                f"back within {TARGET:.0%} of the start after {back:.0f} s"
                if back is not None
                else f"NOT back within {TARGET:.0%} of the start in {args.after:.0f} s"
            )
            print(verdict)


if __name__ == "__main__":
    main()
