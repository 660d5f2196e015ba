"""Batch-generation throughput of the ``hf`` backend: items/s, new tokens/s and peak GPU memory.

With a CUDA GPU it times ``--model`` in bf16 and in 4-bit NF4 at each batch size. Without
``--model`` it builds, locally and without a download, a random Llama at the reference model's
shape (Llama-3.1-Swallow-8B: 32 layers, hidden 4096, MLP 14336, 32 heads, 8 KV heads, a 128,256
row vocabulary) with a small byte-level tokenizer and Llama 3.1's chat template; the head's rows
outside that tokenizer and its end-of-turn row are zero, so every answer runs to
``--max-new-tokens``: the same matrix shapes and work per token as the real model, random
words. Without a GPU it times a tiny random Llama on the CPU, which only shows that batching
works.

    python benchmarks/generate.py [--model M] [--batch-sizes 1,16,64] [--max-new-tokens 64]
        [--items 64]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

#: Llama-3.1-8B's shape (the reference model, Llama-3.1-Swallow-8B-Instruct-v0.3, shares it).
REFERENCE_SHAPE = dict(
    vocab_size=128256,
    hidden_size=4096,
    intermediate_size=14336,
    num_hidden_layers=32,
    num_attention_heads=32,
    num_key_value_heads=8,
    max_position_embeddings=131072,
    rope_theta=500000.0,
    rms_norm_eps=1e-5,
    tie_word_embeddings=False,
)


def bench_items(n: int):
    """The first ``n`` test items of the corpus (``ETC_DATA_DIR``), or made-up chats without one."""
    from etclib.core.errors import DataError
    from etclib.data.task import chat_item, items

    try:
        from etclib.data.corpus import load_corpus

        return items(load_corpus(), "test")[:n], "test split"
    except DataError:
        chats = [
            chat_item([("A", f"今日は{i}回目の練習でした。"), ("B", "どうでしたか？")])
            for i in range(n)
        ]
        return chats, "made-up chats (no corpus found)"


def build_reference_shape(folder: Path, device: str = "cuda") -> Path:
    """Save a random bf16 Llama of :data:`REFERENCE_SHAPE` and a small tokenizer to ``folder``
    (initialised on ``device``: on the GPU, seconds for 8B parameters)."""
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    from tests.data.tiny_model import build_tokenizer

    tokenizer = build_tokenizer(style="llama31")
    cfg = LlamaConfig(
        **REFERENCE_SHAPE,
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
        torch_dtype="bfloat16",
    )
    torch.manual_seed(0)
    with torch.device(device):
        model = LlamaForCausalLM(cfg).to(torch.bfloat16)
    with torch.no_grad():
        model.lm_head.weight[len(tokenizer) :].zero_()  # ids the tokenizer cannot decode
        model.lm_head.weight[tokenizer.eos_token_id].zero_()  # answers run to the token limit
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    del model
    if device != "cpu":
        torch.cuda.empty_cache()
    return folder


def run(model: str, load_in_4bit: bool, batch_size: int, max_new_tokens: int, todo) -> dict:
    """Time one generation pass over ``todo``: items/s, new tokens/s, prompt tokens, peak GiB."""
    import torch

    from etclib.models import get_backend

    backend = get_backend(
        "hf",
        model=model,
        load_in_4bit=load_in_4bit,
        batch_size=batch_size,
        max_new_tokens=max_new_tokens,
    )
    pad = backend.tokenizer.pad_token_id
    counted = {"new": 0, "prompt": 0}
    generate = backend.model.generate

    def counting(**kw):
        out = generate(**kw)
        new = out[:, kw["input_ids"].shape[1] :]
        counted["new"] += int((new != pad).sum()) if pad is not None else new.numel()
        counted["prompt"] += int(kw["attention_mask"].sum())
        return out

    backend.model.generate = counting
    backend.predict(todo[: min(len(todo), batch_size)])  # warm-up
    counted.update(new=0, prompt=0)
    cuda = torch.cuda.is_available()
    if cuda:
        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats()
    t = time.perf_counter()
    backend.predict(todo)
    if cuda:
        torch.cuda.synchronize()
    took = time.perf_counter() - t
    peak = torch.cuda.max_memory_allocated() / 2**30 if cuda else float("nan")
    del backend
    if cuda:
        torch.cuda.empty_cache()
    return {
        "items/s": len(todo) / took,
        "new tokens/s": counted["new"] / took,
        "prompt tokens": counted["prompt"] / len(todo),
        "peak GiB": peak,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", help="hub id or folder (default: the reference shape, random)")
    parser.add_argument("--items", type=int, default=64, help="items per batch size, at most")
    parser.add_argument("--batch-sizes", default="1,16,64")
    parser.add_argument("--max-new-tokens", type=int, default=64)
    args = parser.parse_args()
    os.environ.setdefault("ETC_CACHE_DIR", tempfile.mkdtemp(prefix="etc-bench-"))

    import torch

    cuda = torch.cuda.is_available()
    todo, source = bench_items(args.items)
    if cuda:
        if args.model:
            model = args.model
        else:
            model = str(build_reference_shape(Path(tempfile.mkdtemp(prefix="ref-shape-"))))
            print("model: a random Llama at the reference shape (8.0B parameters), built locally")
        modes = [False, True]
        print(f"GPU: {torch.cuda.get_device_name(0)}; torch {torch.__version__}")
    else:
        from tests.data.tiny_model import build_tiny_model

        model = str(build_tiny_model(Path(tempfile.mkdtemp(prefix="tiny-llama-"))))
        modes = [False]
        print(
            "No CUDA GPU: timing a TINY RANDOM Llama on the CPU (2 layers, hidden 32), not a real "
            "model; 4-bit is skipped (it needs CUDA). Numbers only show batching works."
        )
    print(f"items: up to {len(todo)} ({source}); max_new_tokens {args.max_new_tokens}; greedy")
    print(
        f"  {'weights':9s} {'batch':>5s} {'items':>5s} {'items/s':>8s} {'new tok/s':>9s} "
        f"{'prompt tok':>10s} {'peak GiB':>8s}"
    )
    for four in modes:
        for bs in (int(b) for b in args.batch_sizes.split(",")):
            batch = todo[: min(len(todo), max(8, 2 * bs))]  # two batches, at least 8 items
            r = run(model, four, bs, args.max_new_tokens, batch)
            print(
                f"  {'4-bit NF4' if four else ('bf16' if cuda else 'fp32'):9s} {bs:5d} "
                f"{len(batch):5d} {r['items/s']:8.2f} {r['new tokens/s']:9.1f} "
                f"{r['prompt tokens']:10.0f} {r['peak GiB']:8.2f}",
                flush=True,
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
