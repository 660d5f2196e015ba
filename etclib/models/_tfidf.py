"""Character n-gram TF-IDF vectors for the CPU backends: scikit-learn's ``TfidfVectorizer``.

Japanese has no spaces, so texts are compared by their character n-grams (:func:`ngrams`;
newlines kept, unlike scikit-learn's ``char`` analyzer, which folds white space). Sublinear TF
times smoothed IDF, rows L2-normalised, so a dot product is a cosine.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial

import numpy as np
from scipy import sparse


def ngrams(text: str, n_min: int = 1, n_max: int = 3) -> list[str]:
    """Every character n-gram of ``text`` with ``n_min <= n <= n_max``, in order."""
    return [text[i : i + n] for n in range(n_min, n_max + 1) for i in range(len(text) - n + 1)]


def _sklearn_vectorizer(n_min: int, n_max: int, vocabulary: dict[str, int] | None = None):
    from sklearn.feature_extraction.text import TfidfVectorizer

    return TfidfVectorizer(
        analyzer=partial(ngrams, n_min=n_min, n_max=n_max),
        vocabulary=vocabulary,
        sublinear_tf=True,
        smooth_idf=True,
        norm="l2",
        dtype=np.float64,
    )


class Vectorizer:
    """A fitted vocabulary (n-gram -> column) with its IDF weights."""

    def __init__(self, fitted, n_min: int = 1, n_max: int = 3) -> None:
        self._sk = fitted
        self.n_min = n_min
        self.n_max = n_max

    @classmethod
    def fit_transform(
        cls, texts: Sequence[str], n_min: int = 1, n_max: int = 3
    ) -> tuple[Vectorizer, sparse.csr_matrix]:
        """Learn the vocabulary and IDF of ``texts``; their rows too."""
        sk = _sklearn_vectorizer(n_min, n_max)
        rows = sk.fit_transform(list(texts)).tocsr()
        return cls(sk, n_min, n_max), rows

    @classmethod
    def from_terms(
        cls, terms: Sequence[str], idf: np.ndarray, n_min: int = 1, n_max: int = 3
    ) -> Vectorizer:
        """The vectorizer that :meth:`terms` and :attr:`idf` describe."""
        sk = _sklearn_vectorizer(n_min, n_max, {t: i for i, t in enumerate(terms)})
        sk.idf_ = np.asarray(idf, dtype=np.float64)
        return cls(sk, n_min, n_max)

    def terms(self) -> list[str]:
        """The vocabulary in column order."""
        return list(self._sk.get_feature_names_out())

    @property
    def idf(self) -> np.ndarray:
        return self._sk.idf_

    def transform(self, texts: Sequence[str]) -> sparse.csr_matrix:
        """One L2-normalised row per text (an empty or unknown text is a zero row)."""
        return self._sk.transform(list(texts)).tocsr()


def cosine_to_rows(matrix_t: sparse.csr_matrix, cols: np.ndarray, vals: np.ndarray) -> np.ndarray:
    """Cosine of one query ``(cols, vals)`` with every document; ``matrix_t`` is the transposed
    document matrix (terms x documents), so only the query's terms' rows are touched."""
    n_docs = matrix_t.shape[1]
    if len(cols) == 0:
        return np.zeros(n_docs)
    return np.asarray(matrix_t[cols].T @ vals).ravel()
