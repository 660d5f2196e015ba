"""Time to build the DuckDB corpus store, and p95 of the corpus-browser queries (target < 50 ms).

Run: ETC_DATA_DIR=../shared/ETCDataset/etc .venv/bin/python benchmarks/store.py
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

import numpy as np

from etclib.data import store
from etclib.data.corpus import load_corpus
from etclib.metrics import corpus_stats as stats


def main() -> None:
    load_corpus()  # parsing the JSON is timed separately from the database build
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "etc.duckdb"
        t0 = time.perf_counter()
        store.ensure(db)
        build = time.perf_counter() - t0
        t0 = time.perf_counter()
        store.ensure(db)
        fresh = time.perf_counter() - t0
        con = store.connect(db)
        queries = {
            "no filter, page 1": store.Filters(),
            "text search": store.Filters(text="嬉しかった"),
            "text + category + role": store.Filters(
                text="相手", categories=("joy",), role="listener"
            ),
            "split + emotion + agreement": store.Filters(
                split="test", dialogue_emotion="感謝する", agreement="unanimous"
            ),
            "Big Five ranges": store.Filters(big_five={"openness": (8, 14), "neuroticism": (2, 7)}),
            "hostile text": store.Filters(text="%'; DROP TABLE utterances; --"),
        }
        timings = []
        for _ in range(20):
            for f in queries.values():
                t0 = time.perf_counter()
                store.search(con, f, limit=50, offset=50)
                timings.append(time.perf_counter() - t0)
            for did in (14, 945, 500):
                t0 = time.perf_counter()
                store.dialogue(con, did)
                timings.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        stats.compute(con)
        stat_time = time.perf_counter() - t0
    ms = np.array(timings) * 1000
    print(f"store build: {build:.2f} s; freshness check when unchanged: {fresh * 1000:.0f} ms")
    print(
        f"corpus-browser queries ({len(ms)} runs of {len(queries)} searches + 3 dialogue views): "
        f"p50 {np.percentile(ms, 50):.1f} ms, p95 {np.percentile(ms, 95):.1f} ms, max {ms.max():.1f} ms (target p95 < 50 ms)"
    )
    print(f"etclib stats over the store: {stat_time * 1000:.0f} ms")


if __name__ == "__main__":
    main()
