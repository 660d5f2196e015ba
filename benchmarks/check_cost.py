"""What a crafted file costs to refuse, beside a valid file's check: the CPU seconds of
``etclib.tracks.predictions.read_predictions`` (what ``etclib validate`` and the Submit page's check
run) on the test split's valid file and on two 9.9 MB crafted files, the corpus already loaded
(as the site has it). Target: each crafted file refused within 3x the valid file's check.

- *empty records*: 3.3 million ``{}`` lines, one problem on every line, all merged into one run;
- *one record repeated*: a valid record for one item, over and over (a problem only for the
  coverage check, after parsing).

Each figure is the least of ``--runs`` runs (CPU seconds of this process, so a busy machine
changes it less than wall time).

Run:  .venv/bin/python benchmarks/check_cost.py [--runs 5]
Needs the real corpus (ETC_DATA_DIR).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from etclib.core.errors import PredictionsError  # noqa: E402
from etclib.data.corpus import load_corpus  # noqa: E402
from etclib.data.task import items  # noqa: E402
from etclib.tracks.predictions import FIELDS, dumps_jsonl, read_predictions  # noqa: E402

TARGET = 3.0
SIZE = 9_900_000


def cpu_seconds(data: bytes, corpus, runs: int) -> tuple[float, str]:
    """The least CPU seconds of ``runs`` checks of ``data``, and the outcome's first line."""
    best, said = float("inf"), ""
    for _ in range(runs):
        start = time.process_time()
        try:
            read_predictions(data, corpus=corpus, name="bench.jsonl")
            said = "accepted"
        except PredictionsError as exc:
            said = str(exc).splitlines()[-1].strip()
        best = min(best, time.process_time() - start)
    return best, said


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    corpus = load_corpus()
    test = items(corpus, "test")
    record = json.dumps(dict(zip(FIELDS, (*test[0].key, "x"), strict=True))) + "\n"
    files = {
        "valid test file": dumps_jsonl((it.key, it.reference) for it in test).encode("utf-8"),
        "empty records": b"{}\n" * (SIZE // 3),
        "one record repeated": (record * (SIZE // len(record))).encode("utf-8"),
    }
    valid = None
    for what, data in files.items():
        seconds, said = cpu_seconds(data, corpus, args.runs)
        valid = valid or seconds
        ratio = seconds / valid
        verdict = "" if what == "valid test file" else ("  ok" if ratio <= TARGET else "  OVER")
        print(f"{what:<20} {len(data):>10,} bytes  {seconds:7.3f} s CPU  {ratio:5.1f}x{verdict}")
        print(f"{'':<20} {said[:110]}")
    print(f"target: each crafted file within {TARGET:.0f}x the valid file's check")


if __name__ == "__main__":
    main()
