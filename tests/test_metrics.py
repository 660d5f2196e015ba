import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from etclib import metrics
from etclib.errors import MetricError
from etclib.metrics import bertscore, bleu, rouge
from etclib.tokenize import TokenCache, tokenize
from tests.conftest import needs_corpus


def test_mecab_tokenises_japanese():
    assert tokenize("私は嬉しかった") == "私 は 嬉しかっ た"
    assert tokenize("") == ""


@pytest.mark.parametrize(
    "hyp, ref, expected",
    [
        # (hyp, ref, rouge1 F by hand on MeCab tokens)
        ("私は嬉しかった", "私は嬉しかった", 100.0),
        (
            "私は嬉しかった",
            "相手は悲しかった",
            2 * (2 / 4) * (2 / 4) / 1.0 * 100,
        ),  # は, た shared of 4 each
        ("", "私は嬉しかった", 0.0),
        ("ABC", "私は嬉しかった", 0.0),
    ],
)
def test_rouge1_by_hand(hyp, ref, expected):
    assert rouge.score([hyp], [ref])["rouge1"] == pytest.approx(expected)


def test_bleu_by_hand():
    # hyp 私 は 嬉しかっ た (4 tokens), ref 私 は 悲しかっ た: unigram 3/4, same length (BP = 1)
    assert bleu.score(["私は嬉しかった"], ["私は悲しかった"])["bleu1"] == pytest.approx(75.0)
    # bigrams: 私は (match), は嬉しかっ, 嬉しかった -> 1/3; bleu2 = sqrt(3/4 * 1/3) = 0.5
    assert bleu.score(["私は嬉しかった"], ["私は悲しかった"])["bleu2"] == pytest.approx(50.0)


def test_unknown_metric_suggests():
    with pytest.raises(MetricError, match="Unknown metric 'blue'. Did you mean 'bleu'?"):
        metrics.parse_metrics("blue,rouge")


def test_token_cache_tokenises_once(monkeypatch):
    cache = TokenCache()
    calls = []
    import etclib.tokenize as t

    real = t._tokenizer()
    monkeypatch.setattr(t, "_tokenizer", lambda: lambda s: calls.append(s) or real(s))
    cache(["私は", "私は", "犬"])
    cache(["犬"])
    assert calls == ["私は", "犬"]


@needs_corpus
def test_lexical_scores_equal_the_libraries_on_the_real_test_split(corpus):
    import sacrebleu
    from rouge_score import rouge_scorer

    from etclib.scoring import score
    from etclib.task import items

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


@settings(max_examples=25, deadline=None)
@given(
    st.lists(
        st.text(alphabet="私は相手が嬉しい悲しかった。犬", min_size=1, max_size=20),
        min_size=1,
        max_size=6,
    )
)
def test_identical_prediction_scores_maximum_and_ranges_hold(texts):
    # BLEU-n of a corpus without any n-gram is 0 by definition: keep texts of >= 4 tokens.
    texts = [t for t in texts if len(tokenize(t).split()) >= 4]
    if not texts:
        return
    s = {**bleu.score(texts, texts), **rouge.score(texts, texts)}
    assert all(v == pytest.approx(100.0) for v in s.values())
    other = {**bleu.score(texts[::-1], texts), **rouge.score(texts[::-1], texts)}
    assert all(0.0 <= v <= 100.0 + 1e-9 for v in other.values())


def test_bleu_subsets_match_direct_scores():
    preds = ["私は嬉しかった", "相手が悲しい", "犬が好き", "私は悲しかった"]
    refs = ["私は嬉しい", "相手が悲しかった", "犬が怖い", "私は悲しかった"]
    data = bleu.compute(preds, refs, metrics.Context())
    idx = np.array([0, 3])
    assert bleu.aggregate(data, idx) == pytest.approx(
        bleu.score([preds[0], preds[3]], [refs[0], refs[3]])
    )


@pytest.fixture(scope="module")
def tiny_bert(tmp_path_factory):
    from tests.data.tiny_models import make_tiny_bert

    return make_tiny_bert(tmp_path_factory.mktemp("bert"))


def test_bertscore_with_a_tiny_local_model(tiny_bert):
    preds = ["私は嬉しかった", "相手が悲しい", ""]
    refs = ["私は嬉しかった", "犬が怖い", "私は嬉しい"]
    s = bertscore.score(preds, refs, bertscore_model=str(tiny_bert), bertscore_layer=2)
    data = bertscore.compute(
        preds, refs, metrics.Context({"bertscore_model": str(tiny_bert), "bertscore_layer": 2})
    )
    f1 = data.arrays["bertscore"]
    assert f1[0] == pytest.approx(1.0, abs=1e-5)  # identical text
    assert f1[1] < 1.0
    assert s["bertscore"] == pytest.approx(f1.mean() * 100)
    sig = bertscore.signature(
        metrics.Context({"bertscore_model": str(tiny_bert), "bertscore_layer": 2})
    )
    assert "layer:2" in sig["bertscore"] and str(tiny_bert) in sig["bertscore"]


@pytest.mark.slow  # imports torch and transformers: seconds (tests/tiers.py)
def test_bertscore_unloadable_model_says_how_to_configure(tmp_path):
    with pytest.raises(MetricError, match="ETC_BERTSCORE_MODEL"):
        bertscore.score(["a"], ["b"], bertscore_model=str(tmp_path / "no-model"), bertscore_layer=2)


def test_bertscore_env_configuration(tiny_bert, monkeypatch):
    monkeypatch.setenv("ETC_BERTSCORE_MODEL", str(tiny_bert))
    monkeypatch.setenv("ETC_BERTSCORE_LAYER", "1")
    assert "layer:1" in bertscore.signature()["bertscore"]
    assert json.dumps(bertscore.score(["私"], ["私"]))
