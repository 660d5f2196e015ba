"""Corpus BLEU with maximum n-gram order 1..4 (sacrebleu, uniform weights, brevity penalty).

Texts are tokenised by MeCab and handed to sacrebleu with its ``none`` tokenizer, as its own
``ja-mecab`` does. Per item we keep sacrebleu's sufficient statistics, so any subset is scored by
sacrebleu itself and every bootstrap resample at once by :func:`scores_from_sums`.
"""

from __future__ import annotations

from functools import cache

import numpy as np

from etclib.data import tokenize
from etclib.metrics import Context, Fact, Metric, MetricData

MAX_ORDER = 4


@cache
def _bleu(order: int, sentence: bool = False):
    from sacrebleu.metrics import BLEU

    if sentence:
        return BLEU(max_ngram_order=order, tokenize="none", effective_order=True)
    bleu = BLEU(max_ngram_order=order, tokenize="none")
    bleu.corpus_score(["a"], [["a"]])  # sacrebleu completes its signature on a first evaluation
    return bleu


def _order_stats(total: np.ndarray, n: int) -> list[int]:
    m = MAX_ORDER
    return (
        [int(total[0]), int(total[1])]
        + [int(x) for x in total[2 : 2 + n]]
        + [int(x) for x in total[2 + m : 2 + m + n]]
    )


def scores_from_sums(s: np.ndarray, order: int) -> np.ndarray:
    """Corpus BLEU (x100) of ``order`` from summed statistics, one row per resample: sacrebleu's
    ``BLEU.compute_bleu`` with its defaults, on arrays (``exp`` smoothing, ``my_log(0)``)."""
    s = np.atleast_2d(s)
    sys_len, ref_len = s[:, 0], s[:, 1]
    correct = s[:, 2 : 2 + order]
    total = s[:, 2 + MAX_ORDER : 2 + MAX_ORDER + order]
    b = s.shape[0]
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        bp = np.where(
            sys_len < ref_len,
            np.where(sys_len > 0, np.exp(1 - ref_len / np.where(sys_len > 0, sys_len, 1)), 0.0),
            1.0,
        )
        logs = np.zeros((b, order))
        smooth = np.ones(b)
        stopped = np.zeros(b, dtype=bool)
        for n in range(order):
            c, t = correct[:, n], total[:, n]
            stopped |= t == 0
            zero = (c == 0) & ~stopped
            smooth = np.where(zero, smooth * 2, smooth)
            p = np.where(
                zero, 100.0 / (smooth * np.where(t > 0, t, 1)), 100.0 * c / np.where(t > 0, t, 1)
            )
            # sacrebleu's my_log(0) is -9999999999: an order it never reached zeroes the score
            logs[:, n] = np.where(stopped, -9999999999.0, np.log(np.where(p > 0, p, 1)))
        score = bp * np.exp(logs.sum(axis=1) / order)
    nothing = ~np.any(correct > 0, axis=1)
    return np.where(nothing, 0.0, score)


class BLEU(Metric):
    FAMILY = "lexical"
    TOKENS = True
    FACTS = tuple(
        Fact(
            f"bleu{n}",
            f"BLEU-{n}",
            f"corpus BLEU over all items on MeCab tokens, n-grams up to {n} with uniform weights "
            "and the brevity penalty (sacrebleu)",
            summary=n in (1, MAX_ORDER),
        )
        for n in range(1, MAX_ORDER + 1)
    )

    def warm(self, ctx: Context) -> None:
        """sacrebleu, its BLEU objects and MeCab with its dictionary, loaded."""
        ctx.tokens(["準備"])
        for n in range(1, MAX_ORDER + 1):
            _bleu(n), _bleu(n, True)

    def signature(
        self, ctx: Context | None = None, data: MetricData | None = None
    ) -> dict[str, str]:
        sig = _bleu(MAX_ORDER).get_signature().format(short=True)
        return {
            "bleu": sig.replace("tok:none", "tok:" + tokenize.signature())
            + f"|order:1-{MAX_ORDER}",
        }

    def compute(self, predictions: list[str], references: list[str], ctx: Context) -> MetricData:
        hyps = ctx.tokens(predictions)
        refs = ctx.tokens(references)
        # Stats of the order-4 metric: [hyp_len, ref_len, correct_1..4, total_1..4]; lower orders
        # use the first n of each block (n-gram counts do not depend on the maximum order).
        stats = np.asarray(
            _bleu(MAX_ORDER)._extract_corpus_statistics(hyps, [refs]), dtype=np.int64
        )
        if stats.size == 0:
            stats = np.zeros((0, 2 + 2 * MAX_ORDER), dtype=np.int64)
        return MetricData({"bleu_stats": stats})

    def aggregate(self, data: MetricData, idx: np.ndarray | None = None) -> dict[str, float]:
        stats = data.arrays["bleu_stats"]
        sub = stats if idx is None else stats[idx]
        if len(sub) == 0:
            return {k: float("nan") for k in self.KEYS}
        total = sub.sum(axis=0)
        return {
            f"bleu{n}": float(_bleu(n)._compute_score_from_stats(_order_stats(total, n)).score)
            for n in range(1, MAX_ORDER + 1)
        }

    def statistics(self, data: MetricData) -> np.ndarray:
        """Per item: sacrebleu's ``[hyp_len, ref_len, correct_1..4, total_1..4]``."""
        return np.asarray(data.arrays["bleu_stats"], dtype=float)

    def from_statistics(self, sums: np.ndarray) -> dict[str, np.ndarray]:
        """BLEU-1..4 from summed statistics, one row per resample."""
        return {f"bleu{n}": scores_from_sums(sums, n) for n in range(1, MAX_ORDER + 1)}

    def item_scores(self, data: MetricData, i: int) -> dict[str, float]:
        """Sentence BLEU of one item (sacrebleu's sentence settings: effective order, exp smoothing)."""
        row = data.arrays["bleu_stats"][i]
        return {
            f"bleu{n}": round(
                _bleu(n, True)._compute_score_from_stats(_order_stats(row, n)).score, 4
            )
            for n in range(1, MAX_ORDER + 1)
        }


METRIC = BLEU()
