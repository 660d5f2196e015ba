import json

import numpy as np
import pytest

from etclib import metrics
from etclib.core.errors import MetricError
from etclib.data.tokenize import tokenize
from etclib.metrics import bertscore
from tests.conftest import needs_corpus


@needs_corpus
def test_lexical_scores_equal_the_libraries_on_the_real_test_split(corpus):
    import sacrebleu
    from rouge_score import rouge_scorer

    from etclib.data.task import items
    from etclib.tracks.scoring import score

    its = items(corpus, "test")
    refs = [it.reference for it in its]
    # A plausible system: the utterance itself, with a twist every third item.
    preds = [it.utterance if i % 3 else "私は嬉しかった" for i, it in enumerate(its)]
    got = score({it.key: p for it, p in zip(its, preds)}, corpus=corpus).scores
    htok = [tokenize(p) for p in preds]
    rtok = [tokenize(r) for r in refs]
    for n in range(1, 5):
        ref_bleu = (
            sacrebleu.metrics.BLEU(tokenize="none", max_ngram_order=n)
            .corpus_score(htok, [rtok])
            .score
        )
        assert got[f"bleu{n}"] == pytest.approx(ref_bleu, abs=1e-6)
        # and sacrebleu's own ja-mecab tokenisation gives the same
        ja = (
            sacrebleu.metrics.BLEU(tokenize="ja-mecab", max_ngram_order=n)
            .corpus_score(preds, [refs])
            .score
        )
        assert got[f"bleu{n}"] == pytest.approx(ja, abs=1e-6)

    class WS:
        def tokenize(self, text):
            return text.split()

    scorer = rouge_scorer.RougeScorer(["rouge1", "rouge2", "rougeL"], tokenizer=WS())
    for key in ("rouge1", "rouge2", "rougeL"):
        expected = np.mean([scorer.score(r, h)[key].fmeasure for h, r in zip(htok, rtok)]) * 100
        assert got[key] == pytest.approx(expected, abs=1e-6)
    assert got["rouge1"] > 5 and got["bleu1"] > 5  # Japanese is never silently dropped

    same = score({it.key: it.reference for it in its}, corpus=corpus).scores
    assert all(v == pytest.approx(100.0) for v in same.values())


def test_bertscore_with_a_tiny_local_model(tiny_bert):
    preds = ["私は嬉しかった", "相手が悲しい", ""]
    refs = ["私は嬉しかった", "犬が怖い", "私は嬉しい"]
    s = bertscore.METRIC.score(preds, refs, bertscore_model=str(tiny_bert), bertscore_layer=2)
    data = bertscore.METRIC.compute(
        preds, refs, metrics.Context({"bertscore_model": str(tiny_bert), "bertscore_layer": 2})
    )
    f1 = data.arrays["bertscore"]
    assert f1[0] == pytest.approx(1.0, abs=1e-5)  # identical text
    assert f1[1] < 1.0
    assert s["bertscore"] == pytest.approx(f1.mean() * 100)
    sig = bertscore.METRIC.signature(
        metrics.Context({"bertscore_model": str(tiny_bert), "bertscore_layer": 2})
    )
    assert "layer:2" in sig["bertscore"] and str(tiny_bert) in sig["bertscore"]


def test_bertscore_unloadable_model_says_how_to_configure(tmp_path):
    with pytest.raises(MetricError, match="ETC_BERTSCORE_MODEL"):
        bertscore.METRIC.score(
            ["a"], ["b"], bertscore_model=str(tmp_path / "no-model"), bertscore_layer=2
        )


def test_bertscore_env_configuration(tiny_bert, monkeypatch):
    monkeypatch.setenv("ETC_BERTSCORE_MODEL", str(tiny_bert))
    monkeypatch.setenv("ETC_BERTSCORE_LAYER", "1")
    assert "layer:1" in bertscore.METRIC.signature()["bertscore"]
    assert json.dumps(bertscore.METRIC.score(["私"], ["私"]))
