"""A CPU emotion-category classifier: MeCab-token TF-IDF + one-vs-rest logistic regression.

Trained on the train split, ``C`` and the probability threshold tuned on the valid split by
macro-F1. Inputs: ``"transcription"`` (the ``category`` metric) and ``"dialogue"`` (the ERC
``tfidf`` backend: the utterance, the two before it marked ``c:``, and the role). An item gets
every category over the threshold, else ``neutral`` alone. A trained model is cached as arrays
and JSON (no pickle), named by :data:`VERSION`, the input and a hash of the training data.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from etclib.core import config
from etclib.core.errors import DependencyError, TaskError
from etclib.core.files import write_atomic
from etclib.data.corpus import CATEGORIES, Corpus
from etclib.data.task import Item
from etclib.data.task import items as split_items
from etclib.data.tokenize import TokenCache
from etclib.tracks.categories.labels import LabelSet, from_indicator, indicator

if TYPE_CHECKING:  # scipy is imported where a matrix is built: the site's pages that only list
    from scipy import sparse  # the metrics (and import this module) never load it

#: Bump when features, model or tuning change: saved models of other versions are ignored.
VERSION = 1
INPUTS = ("transcription", "dialogue")
CONTEXT_LINES = 2
C_GRID = (0.5, 1.0, 2.0, 4.0)
THRESHOLDS = tuple(round(0.30 + 0.05 * i, 2) for i in range(9))  # 0.30 .. 0.70
#: the categories with a model of their own (neutral is what is left)
MODELLED = tuple(c for c in CATEGORIES if c != "neutral")


MISSING_SKLEARN = "The category classifier needs scikit-learn: pip install 'scikit-learn>=1.5'."


def sklearn_missing() -> str | None:
    """Why the classifier cannot run here, else None; without importing scikit-learn (about a
    second), so that a page that only lists the backends does not pay it."""
    import importlib.util

    return MISSING_SKLEARN if importlib.util.find_spec("sklearn") is None else None


def _sklearn():
    try:
        import sklearn
    except ImportError:
        raise DependencyError(MISSING_SKLEARN) from None
    return sklearn


def features(items: Sequence[Item], kind: str, tokens: TokenCache) -> list[str]:
    """Whitespace-joined feature tokens of each item for input ``kind``."""
    if kind == "transcription":
        return tokens([it.reference for it in items])
    if kind != "dialogue":
        raise TaskError(f"Unknown classifier input {kind!r}. Available: {', '.join(INPUTS)}.")
    out = []
    for it in items:
        own = tokens([it.utterance])[0]
        before = it.context[:-1][-CONTEXT_LINES:]
        ctx = " ".join("c:" + t for t in tokens([ln.text for ln in before]) for t in t.split())
        out.append(f"{own} {ctx} role:{it.role}".strip())
    return out


def text_features(texts: Sequence[str], tokens: TokenCache) -> list[str]:
    """Feature tokens of free transcriptions (the ``"transcription"`` input)."""
    return tokens(list(texts))


@dataclass
class Classifier:
    """A trained classifier: vocabulary, IDF, one weight row per modelled category."""

    kind: str
    vocabulary: dict[str, int]
    idf: np.ndarray
    coef: np.ndarray  # categories x terms
    intercept: np.ndarray
    C: float
    threshold: float
    data_hash: str
    sklearn_version: str
    #: scores on the valid split (×100): macro_f1, micro_f1, exact_match, n_items
    valid: dict[str, float] = field(default_factory=dict)

    @property
    def signature(self) -> str:
        return (
            f"tfidf-ovr-logreg-v{VERSION}|input:{self.kind}|tok:mecab-1-2gram|C:{self.C:g}"
            f"|threshold:{self.threshold:g}|data:{self.data_hash[:12]}"
            f"|sklearn:{self.sklearn_version}"
        )

    def matrix(self, feats: Sequence[str]) -> sparse.csr_matrix:
        """TF-IDF rows of feature strings (scikit-learn's TfidfVectorizer transform, with the
        saved vocabulary and IDF)."""
        from scipy import sparse
        from sklearn.feature_extraction.text import CountVectorizer
        from sklearn.preprocessing import normalize

        counts = CountVectorizer(
            tokenizer=str.split,
            token_pattern=None,
            lowercase=False,
            ngram_range=(1, 2),
            vocabulary=self.vocabulary,
        ).transform(feats)
        x = counts.astype(np.float64).tocsr()
        x.data = 1.0 + np.log(x.data)
        x = x @ sparse.diags(self.idf)
        return normalize(x, norm="l2", copy=False).tocsr()

    def probabilities(self, feats: Sequence[str]) -> np.ndarray:
        """Items x modelled categories: each category's probability."""
        z = self.matrix(feats) @ self.coef.T + self.intercept
        return 1.0 / (1.0 + np.exp(-np.asarray(z)))

    def decide(self, probs: np.ndarray, threshold: float | None = None) -> list[LabelSet]:
        t = self.threshold if threshold is None else threshold
        full = np.zeros((len(probs), len(CATEGORIES)), dtype=bool)
        full[:, : len(MODELLED)] = probs >= t
        return [from_indicator(row) for row in full]

    def predict_features(self, feats: Sequence[str]) -> list[LabelSet]:
        return self.decide(self.probabilities(feats)) if len(feats) else []

    def predict_items(self, items: Sequence[Item], tokens: TokenCache | None = None) -> list:
        return self.predict_features(features(items, self.kind, tokens or TokenCache()))

    def predict_texts(self, texts: Sequence[str], tokens: TokenCache | None = None) -> list:
        """Label sets of free transcriptions (input ``"transcription"``)."""
        return self.predict_features(text_features(texts, tokens or TokenCache()))


def data_hash(corpus: Corpus, kind: str) -> str:
    version = _sklearn().__version__
    text = f"{corpus.content_hash}|{kind}|v{VERSION}|sklearn:{version}"
    return hashlib.sha256(text.encode()).hexdigest()


def _macro_f1(pred: list[LabelSet], gold: list[LabelSet]) -> dict[str, float]:
    """Valid-split scores (×100) as the ERC metrics define them (scikit-learn's functions)."""
    from sklearn.metrics import accuracy_score, f1_score

    p, g = indicator(pred), indicator(gold)
    return {
        "macro_f1": float(f1_score(g, p, average="macro", zero_division=0)) * 100,
        "micro_f1": float(f1_score(g, p, average="micro", zero_division=0)) * 100,
        "exact_match": float(accuracy_score(g, p)) * 100,
    }


def _selection_f1(chosen: np.ndarray, gold: np.ndarray) -> float:
    """:func:`_macro_f1`'s macro F1 of the modelled categories ``chosen`` (neutral when none)
    against ``gold``, in one scikit-learn call (the tuning compares 36 of them)."""
    from sklearn.metrics import f1_score

    pred = np.zeros((len(chosen), len(CATEGORIES)), dtype=bool)
    pred[:, : len(MODELLED)] = chosen
    pred[:, CATEGORIES.index("neutral")] = ~chosen.any(axis=1)
    return float(f1_score(gold, pred, average="macro", zero_division=0)) * 100


def train(corpus: Corpus, kind: str = "transcription") -> Classifier:
    """Fit on the train split, choose ``C`` and the threshold on the valid split."""
    sk = _sklearn()
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.linear_model import LogisticRegression
    from threadpoolctl import threadpool_limits

    tokens = TokenCache()
    train_items = split_items(corpus, "train")
    valid_items = split_items(corpus, "valid")
    if not train_items:
        raise TaskError(f"{corpus.root}: the train split is empty; cannot train a classifier.")
    x_train_text = features(train_items, kind, tokens)
    vec = TfidfVectorizer(
        tokenizer=str.split,
        token_pattern=None,
        lowercase=False,
        ngram_range=(1, 2),
        min_df=2 if len(train_items) >= 1000 else 1,
        sublinear_tf=True,
    )
    x_train = vec.fit_transform(x_train_text)
    y_train = indicator([it.label for it in train_items])[:, : len(MODELLED)]
    x_valid = vec.transform(features(valid_items, kind, tokens)) if valid_items else None
    gold_valid = [it.label for it in valid_items]
    gold = indicator(gold_valid)

    def fit(c: float) -> tuple[np.ndarray, np.ndarray]:
        coef = np.zeros((len(MODELLED), x_train.shape[1]))
        intercept = np.zeros(len(MODELLED))
        for j in range(len(MODELLED)):
            y = y_train[:, j]
            if y.all() or not y.any():  # one class only: a constant answer
                intercept[j] = 30.0 if y.all() else -30.0
                continue
            model = LogisticRegression(
                C=c, class_weight="balanced", solver="liblinear", max_iter=1000
            )
            model.fit(x_train, y)
            coef[j], intercept[j] = model.coef_[0], model.intercept_[0]
        return coef, intercept

    best: tuple[float, float, float, np.ndarray, np.ndarray] | None = None
    # many BLAS threads on a small problem are slower (asked once: each ask reads the
    # process's loaded libraries)
    with threadpool_limits(1):
        for c in C_GRID if x_valid is not None else (1.0,):
            coef, intercept = fit(c)
            if x_valid is None:
                best = (0.0, c, 0.5, coef, intercept)
                break
            probs = 1.0 / (1.0 + np.exp(-np.asarray(x_valid @ coef.T + intercept)))
            for t in THRESHOLDS:
                f1 = _selection_f1(probs >= t, gold)
                if best is None or f1 > best[0] + 1e-12:
                    best = (f1, c, t, coef, intercept)
    assert best is not None
    _, c, t, coef, intercept = best
    model = Classifier(
        kind=kind,
        vocabulary={str(k): int(v) for k, v in vec.vocabulary_.items()},
        idf=np.asarray(vec.idf_, dtype=np.float64),
        coef=coef,
        intercept=intercept,
        C=c,
        threshold=t,
        data_hash=data_hash(corpus, kind),
        sklearn_version=sk.__version__,
    )
    if valid_items:
        pred = model.predict_items(valid_items, tokens)
        model.valid = {**_macro_f1(pred, gold_valid), "n_items": float(len(valid_items))}
    return model


# --- saving ----------------------------------------------------------------------------------

_MEMORY: dict[str, Classifier] = {}


def _base(corpus: Corpus, kind: str) -> Path:
    return config.cache_dir() / "classifier" / f"{kind}-v{VERSION}-{data_hash(corpus, kind)[:20]}"


def save(model: Classifier, base: Path) -> None:
    base.parent.mkdir(parents=True, exist_ok=True)
    meta = {
        "version": VERSION,
        "kind": model.kind,
        "terms": sorted(model.vocabulary, key=model.vocabulary.__getitem__),
        "C": model.C,
        "threshold": model.threshold,
        "data_hash": model.data_hash,
        "sklearn_version": model.sklearn_version,
        "valid": model.valid,
        "categories": list(MODELLED),
    }
    for suffix, write in (
        (
            ".npz",
            lambda f: np.savez(f, idf=model.idf, coef=model.coef, intercept=model.intercept),
        ),
        (".json", lambda f: f.write(json.dumps(meta, ensure_ascii=False).encode("utf-8"))),
    ):
        write_atomic(base.with_suffix(suffix), write)


def load(base: Path) -> Classifier | None:
    """A saved model, or None when absent, damaged or of another version."""
    try:
        meta = json.loads(base.with_suffix(".json").read_text(encoding="utf-8"))
        if meta.get("version") != VERSION or meta.get("categories") != list(MODELLED):
            return None
        with np.load(base.with_suffix(".npz")) as z:
            idf, coef, intercept = z["idf"], z["coef"], z["intercept"]
        return Classifier(
            kind=meta["kind"],
            vocabulary={t: i for i, t in enumerate(meta["terms"])},
            idf=idf,
            coef=coef,
            intercept=intercept,
            C=float(meta["C"]),
            threshold=float(meta["threshold"]),
            data_hash=meta["data_hash"],
            sklearn_version=meta["sklearn_version"],
            valid=meta.get("valid", {}),
        )
    except (OSError, ValueError, KeyError, TypeError):
        return None


def cached(corpus: Corpus, kind: str = "transcription") -> Classifier:
    """The classifier of ``corpus`` for input ``kind``: from memory, disk, else trained; saved
    in the cache folder when missing there. Memory is keyed by what the model is a function
    of (the file's name: input, version, data hash), so another cache folder does not train
    the same model again."""
    base = _base(corpus, kind)
    model = _MEMORY.get(base.name) or load(base)
    if model is None:
        model = train(corpus, kind)
    if not base.with_suffix(".json").exists():
        try:
            save(model, base)
        except OSError:
            pass  # a read-only cache only costs training again in the next process
    _MEMORY[base.name] = model
    return model


def describe(model: Classifier) -> dict[str, Any]:
    """What a report shows about a model: signature and its valid-split scores."""
    return {"signature": model.signature, "valid": dict(model.valid)}
