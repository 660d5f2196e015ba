"""ROUGE-1, ROUGE-2 and ROUGE-L F-measure (rouge-score), mean over items, on MeCab tokens.

rouge-score's default tokenizer keeps only ``[a-z0-9]`` and so deletes Japanese entirely; we hand
it the MeCab tokens through a whitespace tokenizer instead. No stemming, no lower-casing.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from etclib.data import tokenize
from etclib.metrics import Context, Fact, MeanMetric, MetricData


class _Whitespace:
    """rouge-score tokenizer interface over pre-tokenised text."""

    def tokenize(self, text: str) -> list[str]:
        return text.split()


@lru_cache(maxsize=1)
def _scorer():
    from rouge_score import rouge_scorer

    return rouge_scorer.RougeScorer(list(Rouge.KEYS), use_stemmer=False, tokenizer=_Whitespace())


class Rouge(MeanMetric):
    FAMILY = "lexical"
    TOKENS = True
    FACTS = tuple(
        Fact(
            key,
            label,
            f"{what} F-measure per item on MeCab tokens, mean over items",
            summary=key != "rouge2",
        )
        for key, label, what in (
            ("rouge1", "ROUGE-1", "unigram-overlap"),
            ("rouge2", "ROUGE-2", "bigram-overlap"),
            ("rougeL", "ROUGE-L", "longest-common-subsequence"),
        )
    )

    def warm(self, ctx: Context) -> None:
        """rouge-score (and the nltk it imports) and MeCab, loaded; one item scored."""
        tokens = ctx.tokens(["準備"])
        _scorer().score(tokens[0], tokens[0])

    def signature(
        self, ctx: Context | None = None, data: MetricData | None = None
    ) -> dict[str, str]:
        from importlib.metadata import version

        return {
            "rouge": f"tok:{tokenize.signature()}|stem:no|F-measure|mean-over-items"
            f"|rouge-score:{version('rouge-score')}"
        }

    def compute(self, predictions: list[str], references: list[str], ctx: Context) -> MetricData:
        hyps = ctx.tokens(predictions)
        refs = ctx.tokens(references)
        scorer = _scorer()
        out = {k: np.empty(len(hyps)) for k in self.KEYS}
        for i, (h, r) in enumerate(zip(hyps, refs, strict=True)):
            s = scorer.score(r, h)  # rouge-score's order: (target, prediction)
            for k in self.KEYS:
                out[k][i] = s[k].fmeasure
        return MetricData(out)


METRIC = Rouge()
