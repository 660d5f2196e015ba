"""Judge throughput: a whole test-split submission (1,010 items) against a fake LLM with 200 ms
latency. Prints calls made versus the naive count (every decomposition and entailment asked
fresh) and wall time versus the bound calls x latency / concurrency (target: within 1.25x at
concurrency 16); then the same file again (target: no call) and a second submission (only its
own side is asked).

The fake server (tests/fakes) runs in a child process so that its work does not share the
judge's interpreter; its scripted judge splits texts into sentences and calls a unit Supported
when it occurs verbatim in the other text. Uses the real corpus when ETC_DATA_DIR (or
../shared/ETCDataset/etc) is there, else 1,010 synthetic items. The cache is a fresh
temporary folder.

Run: ETC_DATA_DIR=../shared/ETCDataset/etc .venv/bin/python benchmarks/judge_throughput.py
     [--provider gemini|openai] [--concurrency 16] [--latency 0.2]
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))


def _serve(conn, latency: float) -> None:
    """Child process: run the fake server until told to stop, then report its counts."""
    from tests.fakes.judge_responder import ScriptedJudge
    from tests.fakes.llm_server import FakeLLMServer

    with FakeLLMServer(ScriptedJudge(), latency=latency) as server:
        conn.send(server.url)
        while True:
            msg = conn.recv()
            if msg == "count":
                conn.send((server.count(), server.max_in_flight))
                server.reset()
            elif msg == "stop":
                break


def _texts() -> tuple[list[str], list[str], list[str], str]:
    """References of the test split and two prediction sets (train transcriptions)."""
    candidates = [os.environ.get("ETC_DATA_DIR"), str(REPO.parent / "shared/ETCDataset/etc")]
    root = next((c for c in candidates if c and (Path(c) / "dialogues").is_dir()), None)
    if root is not None:
        from etclib.data.corpus import load_corpus
        from etclib.data.task import items

        corpus = load_corpus(root)
        test = items(corpus, "test")
        train = [it.reference for it in items(corpus, "train")]
        refs = [it.reference for it in test]
        sub_a = [train[(i * 7919) % len(train)] for i in range(len(test))]
        sub_b = [train[(i * 104729 + 17) % len(train)] for i in range(len(test))]
        return refs, sub_a, sub_b, f"real corpus ({root}), test split"
    refs = [f"相手の話{i % 97}に共感した。もっと知りたい{i % 13}と思った。" for i in range(1010)]
    sub_a = [f"相手の話{i % 89}に共感した。" for i in range(1010)]
    sub_b = [f"もっと知りたい{i % 13}と思った。嬉しかった{i % 7}。" for i in range(1010)]
    return refs, sub_a, sub_b, "1,010 synthetic items (no corpus found)"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--provider", choices=("gemini", "openai"), default="gemini")
    ap.add_argument("--concurrency", type=int, default=16)
    ap.add_argument("--latency", type=float, default=0.2)
    ap.add_argument("--items", type=int, default=0, help="use only the first N items (0: all)")
    args = ap.parse_args()

    # Fork the server before this process starts any thread or imports an SDK.
    ctx = multiprocessing.get_context("fork")
    parent, child = ctx.Pipe()
    proc = ctx.Process(target=_serve, args=(child, args.latency), daemon=True)
    proc.start()
    url = parent.recv()

    os.environ["ETC_CACHE_DIR"] = tempfile.mkdtemp(prefix="etc-judge-bench-")
    os.environ.setdefault("ETC_PROGRESS", "0")
    if args.provider == "gemini":
        os.environ["GEMINI_API_KEY"], os.environ["ETC_GEMINI_BASE_URL"] = "bench", url
    else:
        os.environ["OPENAI_API_KEY"], os.environ["OPENAI_BASE_URL"] = "bench", url + "/v1"

    from etclib.metrics import Context
    from etclib.metrics import judge as J

    refs, sub_a, sub_b, source = _texts()
    if args.items:
        refs, sub_a, sub_b = refs[: args.items], sub_a[: args.items], sub_b[: args.items]
    options = {
        "judge_provider": args.provider,
        "judge_model": "fake-judge",
        "concurrency": args.concurrency,
    }
    J.METRIC.score(["準備。"], ["準備。"], **options)  # SDK imports and client set-up, not timed
    parent.send("count")
    parent.recv()

    def run(preds: list[str], label: str):
        start, cpu = time.perf_counter(), time.process_time()
        data = J.METRIC.compute(preds, refs, Context(dict(options)))
        wall, cpu = time.perf_counter() - start, time.process_time() - cpu
        parent.send("count")
        served, peak = parent.recv()
        usage = data.extra["judge_usage"]
        # naive: both texts decomposed and every unit checked, nothing reused
        naive = sum(
            2 + (len(d["units"]) + len(d["ref_units"]) if d["units"] and d["ref_units"] else 0)
            for d in data.details
        )
        bound = usage["calls"] * args.latency / args.concurrency
        ratio = f"{wall / bound:.2f}x the bound" if bound else "no call"
        print(f"{label}:")
        print(
            f"  calls made {usage['calls']} (server saw {served}, peak in flight {peak}) "
            f"vs naive {naive}; cache hits {usage['cache_hits']}, retries {usage['retries']}, "
            f"errors {data.extra['judge_errors']}"
        )
        print(
            f"  wall {wall:.2f} s vs bound calls x {args.latency} s / {args.concurrency} = "
            f"{bound:.2f} s -> {ratio}; judge process CPU {cpu:.1f} s"
            + (f" ({cpu / usage['calls'] * 1000:.1f} ms per call)" if usage["calls"] else "")
        )
        return data, wall, bound

    print(
        f"{len(refs)} items from the {source}; provider {args.provider} (real SDK) -> fake "
        f"server with {args.latency * 1000:.0f} ms latency; concurrency {args.concurrency}"
    )
    data, wall, bound = run(sub_a, "1. submission A, empty cache")
    scores = J.METRIC.aggregate(data)
    print("  scores: " + ", ".join(f"{k} {v:.2f}" for k, v in scores.items()))
    run(sub_a, "2. submission A again")
    run(sub_b, "3. submission B (references already decomposed)")
    parent.send("stop")
    proc.join(timeout=10)
    verdict = "PASS" if bound and wall <= 1.25 * bound else "FAIL"
    print(f"target (run 1 within 1.25x of the bound): {verdict}")


if __name__ == "__main__":
    main()
