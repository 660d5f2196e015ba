"""Latency of one ``retrieval`` prediction on the real corpus (the chat page's case).

Prints the cold index build, the cached (disk) load, and p50/p95/max of single-item predictions
over the test split; exits 1 when p95 exceeds the 50 ms budget.

    ETC_DATA_DIR=/path/to/ETCDataset/etc python benchmarks/retrieval.py [--items N]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

BUDGET_MS = 50.0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=0, help="test items to time (default: all)")
    parser.add_argument("--data", help="corpus folder (default: ETC_DATA_DIR)")
    args = parser.parse_args()
    os.environ.setdefault("ETC_CACHE_DIR", tempfile.mkdtemp(prefix="etc-bench-"))

    import numpy as np

    from etclib.data.corpus import load_corpus
    from etclib.data.task import items
    from etclib.models import get_backend, retrieval

    corpus = load_corpus(args.data)
    t = time.perf_counter()
    get_backend("retrieval", corpus=corpus)
    cold = time.perf_counter() - t
    retrieval._MEMORY.clear()
    t = time.perf_counter()
    backend = get_backend("retrieval", corpus=corpus)
    warm = time.perf_counter() - t

    test = items(corpus, "test")
    if args.items:
        test = test[: args.items]
    times = []
    for it in test:
        t = time.perf_counter()
        backend.predict([it])
        times.append((time.perf_counter() - t) * 1000)
    ms = np.array(times)
    p95 = float(np.percentile(ms, 95))
    print(f"corpus: {corpus.root} ({len(test)} test items); CPUs: {os.cpu_count()}")
    print(f"index build (cold): {cold:.2f} s; load from disk cache: {warm:.2f} s")
    print(
        f"single prediction: p50 {np.percentile(ms, 50):.2f} ms, p95 {p95:.2f} ms, "
        f"max {ms.max():.2f} ms (budget: p95 < {BUDGET_MS:.0f} ms)"
    )
    return 0 if p95 < BUDGET_MS else 1


if __name__ == "__main__":
    sys.exit(main())
