"""Batch-generation throughput of the ``hf`` backend, in items per second.

With a CUDA GPU it times ``--model`` (default: the reference Swallow 8B) in bf16 and in 4-bit
NF4; without one it builds a tiny random Llama locally (no download) and says so, which only
checks that batched generation works and how the batch size scales on a CPU.

    python benchmarks/generate.py [--model M] [--items 64] [--batch-sizes 1,8,32]
        [--max-new-tokens 128]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def bench_items(n: int):
    """The first ``n`` test items of the real corpus, or made-up chats without one."""
    from etclib.errors import DataError
    from etclib.task import chat_item, items

    try:
        from etclib.corpus import load_corpus

        return items(load_corpus(), "test")[:n], "test split"
    except DataError:
        chats = [
            chat_item([("A", f"今日は{i}回目の練習でした。"), ("B", "どうでしたか？")])
            for i in range(n)
        ]
        return chats, "made-up chats (no corpus found)"


def run(model: str, load_in_4bit: bool, batch_size: int, max_new_tokens: int, todo) -> float:
    from etclib.backends import get_backend

    backend = get_backend(
        "hf",
        model=model,
        load_in_4bit=load_in_4bit,
        batch_size=batch_size,
        max_new_tokens=max_new_tokens,
    )
    backend.predict(todo[: min(len(todo), batch_size)])  # warm-up
    t = time.perf_counter()
    backend.predict(todo)
    return len(todo) / (time.perf_counter() - t)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", help="hub id or folder (GPU only; default: reference 8B)")
    parser.add_argument("--items", type=int, default=32)
    parser.add_argument("--batch-sizes", default="1,8,32")
    parser.add_argument("--max-new-tokens", type=int, default=64)
    args = parser.parse_args()
    os.environ.setdefault("ETC_CACHE_DIR", tempfile.mkdtemp(prefix="etc-bench-"))

    import torch

    from etclib.backends.hf import DEFAULT_MODEL

    cuda = torch.cuda.is_available()
    todo, source = bench_items(args.items)
    if cuda:
        model = args.model or DEFAULT_MODEL
        modes = [False, True]
        print(f"GPU: {torch.cuda.get_device_name(0)}; model {model}")
    else:
        from tests.data.tiny_model import build_tiny_model

        model = str(build_tiny_model(Path(tempfile.mkdtemp(prefix="tiny-llama-"))))
        modes = [False]
        print(
            "No CUDA GPU: timing a TINY RANDOM Llama on the CPU (2 layers, hidden 32), not a real "
            "model; 4-bit is skipped (it needs CUDA). Numbers only show batching works."
        )
    print(f"items: {len(todo)} ({source}); max_new_tokens {args.max_new_tokens}; greedy")
    for four in modes:
        for bs in (int(b) for b in args.batch_sizes.split(",")):
            rate = run(model, four, bs, args.max_new_tokens, todo)
            print(
                f"  {'4-bit NF4' if four else 'bf16/fp32':10s} batch {bs:3d}: {rate:7.2f} items/s"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
