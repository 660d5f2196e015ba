"""Character n-gram TF-IDF vectors in numpy/scipy (no scikit-learn), for the CPU backends.

Japanese has no spaces, so texts are compared by their character n-grams (1 to 3 by default).
Weights are sublinear term frequency (``1 + log tf``) times smoothed inverse document frequency
(``log((1 + n) / (1 + df)) + 1``), and every row is L2-normalised, so a dot product is a cosine.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy import sparse


def ngrams(text: str, n_min: int = 1, n_max: int = 3) -> list[str]:
    """Every character n-gram of ``text`` with ``n_min <= n <= n_max``, in order."""
    out = []
    for n in range(n_min, n_max + 1):
        out.extend(text[i : i + n] for i in range(len(text) - n + 1))
    return out


@dataclass
class Vectorizer:
    """A fitted vocabulary (n-gram -> column) with its IDF weights."""

    vocab: dict[str, int]
    idf: np.ndarray
    n_min: int = 1
    n_max: int = 3

    @classmethod
    def fit(cls, texts: Sequence[str], n_min: int = 1, n_max: int = 3) -> Vectorizer:
        """Learn the vocabulary and document frequencies of ``texts``."""
        df: Counter[str] = Counter()
        for text in texts:
            df.update(set(ngrams(text, n_min, n_max)))
        terms = sorted(df)
        vocab = {t: i for i, t in enumerate(terms)}
        n = len(texts)
        dfs = np.fromiter((df[t] for t in terms), dtype=np.float64, count=len(terms))
        idf = np.log((1 + n) / (1 + dfs)) + 1.0
        return cls(vocab, idf, n_min, n_max)

    def _counts(self, text: str) -> tuple[list[int], list[int]]:
        vocab = self.vocab
        counts = Counter(g for g in ngrams(text, self.n_min, self.n_max) if g in vocab)
        return [vocab[g] for g in counts], list(counts.values())

    def _weights(self, cols: np.ndarray, counts: np.ndarray) -> np.ndarray:
        return (1.0 + np.log(counts)) * self.idf[cols]

    def transform(self, texts: Sequence[str]) -> sparse.csr_matrix:
        """One L2-normalised row per text (an empty or unknown text is a zero row)."""
        indptr = [0]
        indices: list[int] = []
        counts: list[int] = []
        for text in texts:
            cols, cnt = self._counts(text)
            indices.extend(cols)
            counts.extend(cnt)
            indptr.append(len(indices))
        cols_arr = np.array(indices, dtype=np.int64)
        data = self._weights(cols_arr, np.array(counts, dtype=np.float64))
        ptr = np.array(indptr, dtype=np.int64)
        lengths = np.diff(ptr)
        sq = np.add.reduceat(data * data, ptr[:-1][lengths > 0]) if len(data) else np.array([])
        norms = np.zeros(len(texts))
        norms[lengths > 0] = np.sqrt(sq)
        data = data / np.repeat(np.where(norms > 0, norms, 1.0), lengths)
        return sparse.csr_matrix((data, cols_arr, ptr), shape=(len(texts), len(self.vocab)))

    def transform_one(self, text: str) -> tuple[np.ndarray, np.ndarray]:
        """One text's non-zero ``(columns, weights)``: cheaper than a sparse matrix per query."""
        cols, counts = self._counts(text)
        cols_arr = np.array(cols, dtype=np.int64)
        vals = self._weights(cols_arr, np.array(counts, dtype=np.float64))
        norm = float(np.sqrt(vals @ vals)) if len(vals) else 0.0
        return cols_arr, (vals / norm if norm > 0 else vals)


def cosine_to_rows(matrix_t: sparse.csr_matrix, cols: np.ndarray, vals: np.ndarray) -> np.ndarray:
    """Cosine of one query ``(cols, vals)`` with every document.

    ``matrix_t`` is the *transposed* document matrix in CSR form (terms x documents), so only the
    rows of the query's terms are touched.
    """
    n_docs = matrix_t.shape[1]
    if len(cols) == 0:
        return np.zeros(n_docs)
    return np.asarray(matrix_t[cols].T @ vals).ravel()
