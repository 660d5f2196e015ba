import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from etclib import metrics, tracks
from etclib.core.errors import MetricError
from etclib.data.tokenize import TokenCache, tokenize
from etclib.metrics import bleu, rouge


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
    assert rouge.METRIC.score([hyp], [ref])["rouge1"] == pytest.approx(expected)


def test_bleu_by_hand():
    # hyp 私 は 嬉しかっ た (4 tokens), ref 私 は 悲しかっ た: unigram 3/4, same length (BP = 1)
    assert bleu.METRIC.score(["私は嬉しかった"], ["私は悲しかった"])["bleu1"] == pytest.approx(75.0)
    # bigrams: 私は (match), は嬉しかっ, 嬉しかった -> 1/3; bleu2 = sqrt(3/4 * 1/3) = 0.5
    assert bleu.METRIC.score(["私は嬉しかった"], ["私は悲しかった"])["bleu2"] == pytest.approx(50.0)


def test_unknown_metric_suggests():
    with pytest.raises(MetricError, match="Unknown metric 'blue'. Did you mean 'bleu'?"):
        tracks.get().parse_metrics("blue,rouge")


def test_token_cache_tokenises_once(monkeypatch):
    cache = TokenCache()
    calls = []
    import etclib.data.tokenize as t

    real = t._tokenizer()
    monkeypatch.setattr(t, "_tokenizer", lambda: lambda s: calls.append(s) or real(s))
    cache(["私は", "私は", "犬"])
    cache(["犬"])
    assert calls == ["私は", "犬"]


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
    s = {**bleu.METRIC.score(texts, texts), **rouge.METRIC.score(texts, texts)}
    assert all(v == pytest.approx(100.0) for v in s.values())
    other = {**bleu.METRIC.score(texts[::-1], texts), **rouge.METRIC.score(texts[::-1], texts)}
    assert all(0.0 <= v <= 100.0 + 1e-9 for v in other.values())


def test_bleu_subsets_match_direct_scores():
    preds = ["私は嬉しかった", "相手が悲しい", "犬が好き", "私は悲しかった"]
    refs = ["私は嬉しい", "相手が悲しかった", "犬が怖い", "私は悲しかった"]
    data = bleu.METRIC.compute(preds, refs, metrics.Context())
    idx = np.array([0, 3])
    assert bleu.METRIC.aggregate(data, idx) == pytest.approx(
        bleu.METRIC.score([preds[0], preds[3]], [refs[0], refs[3]])
    )
