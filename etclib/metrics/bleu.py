"""Corpus BLEU with maximum n-gram order 1..4 (sacrebleu, uniform weights, brevity penalty).

Texts are tokenised by MeCab (``etclib.tokenize``) and handed to sacrebleu with its ``none``
tokenizer, which is what sacrebleu's own ``ja-mecab`` tokenizer does internally. Per item we keep
sacrebleu's sufficient statistics (lengths, matches and totals per order), so any subset or
bootstrap resample is scored exactly as sacrebleu would score it.
"""

from __future__ import annotations

from functools import cache

import numpy as np

from .. import tokenize
from . import Context, MetricData

KEYS = ("bleu1", "bleu2", "bleu3", "bleu4")
MAX_ORDER = 4


@cache
def _bleu(order: int, sentence: bool = False):
    from sacrebleu.metrics import BLEU

    if sentence:
        return BLEU(max_ngram_order=order, tokenize="none", effective_order=True)
    bleu = BLEU(max_ngram_order=order, tokenize="none")
    bleu.corpus_score(["a"], [["a"]])  # sacrebleu completes its signature on a first evaluation
    return bleu


def signature(ctx: Context | None = None) -> dict[str, str]:
    sig = _bleu(MAX_ORDER).get_signature().format(short=True)
    return {
        "bleu": sig.replace("tok:none", "tok:" + tokenize.signature()) + f"|order:1-{MAX_ORDER}",
    }


def compute(predictions: list[str], references: list[str], ctx: Context) -> MetricData:
    hyps = ctx.tokens(predictions)
    refs = ctx.tokens(references)
    # Stats of the order-4 metric: [hyp_len, ref_len, correct_1..4, total_1..4]; lower orders
    # use the first n of each block (n-gram counts do not depend on the maximum order).
    stats = np.asarray(_bleu(MAX_ORDER)._extract_corpus_statistics(hyps, [refs]), dtype=np.int64)
    if stats.size == 0:
        stats = np.zeros((0, 2 + 2 * MAX_ORDER), dtype=np.int64)
    return MetricData({"bleu_stats": stats})


def _order_stats(total: np.ndarray, n: int) -> list[int]:
    m = MAX_ORDER
    return (
        [int(total[0]), int(total[1])]
        + [int(x) for x in total[2 : 2 + n]]
        + [int(x) for x in total[2 + m : 2 + m + n]]
    )


def aggregate(data: MetricData, idx: np.ndarray | None = None) -> dict[str, float]:
    stats = data.arrays["bleu_stats"]
    sub = stats if idx is None else stats[idx]
    if len(sub) == 0:
        return {k: float("nan") for k in KEYS}
    total = sub.sum(axis=0)
    return {
        f"bleu{n}": float(_bleu(n)._compute_score_from_stats(_order_stats(total, n)).score)
        for n in range(1, MAX_ORDER + 1)
    }


def item_scores(data: MetricData, i: int) -> dict[str, float]:
    """Sentence BLEU of one item (sacrebleu's sentence settings: effective order, exp smoothing)."""
    row = data.arrays["bleu_stats"][i]
    return {
        f"bleu{n}": round(_bleu(n, True)._compute_score_from_stats(_order_stats(row, n)).score, 4)
        for n in range(1, MAX_ORDER + 1)
    }


def score(predictions: list[str], references: list[str], **options) -> dict[str, float]:
    return aggregate(compute(predictions, references, Context(options)))
