"""Wall time of `bleu,rouge` on the 1,010 test items, after imports (target: under 2 s on 2 cores).

Run: ETC_DATA_DIR=../shared/ETCDataset/etc .venv/bin/python benchmarks/score_lexical.py
"""

from __future__ import annotations

import statistics
import time

from etclib.corpus import load_corpus
from etclib.scoring import score
from etclib.task import items
from etclib.tokenize import tokenize


def main(repeats: int = 5) -> None:
    corpus = load_corpus()
    its = items(corpus, "test")
    # A realistic system output: a different train transcription for each item.
    train = [it.reference for it in items(corpus, "train")]
    preds = {it.key: train[(i * 7919) % len(train)] for i, it in enumerate(its)}
    tokenize("準備")  # load MeCab and the dictionary: part of imports, not of the timing
    import rouge_score.rouge_scorer  # noqa: F401
    import sacrebleu  # noqa: F401

    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        result = score(preds, corpus=corpus, metrics="bleu,rouge")
        result.to_json()  # includes the breakdowns
        times.append(time.perf_counter() - t0)
    print(f"items: {len(its)}")
    print(
        f"bleu,rouge with breakdowns, fresh tokenisation each run: median {statistics.median(times):.3f} s, "
        f"min {min(times):.3f} s, max {max(times):.3f} s over {repeats} runs (target < 2 s)"
    )
    print("scores: " + ", ".join(f"{k} {v:.2f}" for k, v in result.scores.items()))


if __name__ == "__main__":
    main()
