"""``retrieval``: answer with the consensus transcription of the most similar train items.

The default backend: CPU only, a few milliseconds per prediction. Train items of the target's
role are scored by TF-IDF cosines of the utterance and the preceding lines, plus a same-turn
bonus; the answer is the candidates' consensus transcription. The index comes from the train
split only and is cached per corpus content. docs/models.md, "The retrieval baseline".
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from scipy import sparse

from etclib.core import config
from etclib.core.errors import ConfigError
from etclib.core.files import write_atomic
from etclib.data.corpus import Corpus, load_corpus
from etclib.data.task import Item
from etclib.data.task import items as split_items
from etclib.models._tfidf import Vectorizer, cosine_to_rows
from etclib.models.base import Backend

#: Bump when the index layout or features change: old cache files are then ignored.
INDEX_VERSION = 2


@dataclass
class Index:
    """Train items as vectors: utterance and context matrices (transposed), their answers
    (rows, for the consensus step) and a digest of each item's exact text, role included."""

    vectorizer: Vectorizer
    utterance_t: sparse.csr_matrix
    context_t: sparse.csr_matrix
    answers: sparse.csr_matrix
    roles: np.ndarray
    turns: np.ndarray
    keys: list[tuple[int, int, str]]
    transcriptions: list[str]
    digests: list[str]

    def __post_init__(self) -> None:
        self.exact: dict[str, list[int]] = {}
        for i, d in enumerate(self.digests):
            self.exact.setdefault(d, []).append(i)


MATRICES = ("utterance_t", "context_t", "answers")


def context_text(item: Item, lines: int) -> str:
    """The up to ``lines`` utterances before the item's own, joined by newlines."""
    before = item.context[:-1][-lines:] if lines > 0 else ()
    return "\n".join(ln.text for ln in before)


def text_digest(role: str, utterance: str, context: str) -> str:
    """What "the same utterance in the same context" means for the exact-match shortcut."""
    return hashlib.sha1(f"{role}\0{utterance}\0{context}".encode()).hexdigest()[:16]


def build_index(corpus: Corpus, context_lines: int = 2) -> Index:
    """Vectorise every train item of ``corpus`` (and nothing from another split)."""
    train = split_items(corpus, "train")
    utterances = [it.utterance for it in train]
    contexts = [context_text(it, context_lines) for it in train]
    answers = [it.reference for it in train]
    vec, rows = Vectorizer.fit_transform(utterances + contexts + answers)
    n = len(train)
    return Index(
        vectorizer=vec,
        utterance_t=rows[:n].T.tocsr(),
        context_t=rows[n : 2 * n].T.tocsr(),
        answers=rows[2 * n :],
        roles=np.array([it.role == "listener" for it in train], dtype=bool),
        turns=np.array([it.turn for it in train], dtype=np.int64),
        keys=[it.key for it in train],
        transcriptions=answers,
        digests=[
            text_digest(it.role, u, c) for it, u, c in zip(train, utterances, contexts, strict=True)
        ],
    )


# --- cache ---------------------------------------------------------------------------------------

_MEMORY: dict[str, Index] = {}


def _cache_name(corpus: Corpus, context_lines: int) -> str:
    h = hashlib.sha256(f"{corpus.content_hash}:{INDEX_VERSION}:{context_lines}".encode())
    return f"index-v{INDEX_VERSION}-{h.hexdigest()[:20]}"


def _save(index: Index, base: Path) -> None:
    base.parent.mkdir(parents=True, exist_ok=True)
    arrays: dict[str, np.ndarray] = {
        "idf": index.vectorizer.idf,
        "roles": index.roles,
        "turns": index.turns,
    }
    for name in MATRICES:
        m: sparse.csr_matrix = getattr(index, name)
        arrays.update(
            {f"{name}_{part}": getattr(m, part) for part in ("data", "indices", "indptr")}
        )
        arrays[f"{name}_shape"] = np.array(m.shape)
    meta = {
        "terms": index.vectorizer.terms(),
        "n_min": index.vectorizer.n_min,
        "n_max": index.vectorizer.n_max,
        "keys": index.keys,
        "transcriptions": index.transcriptions,
        "digests": index.digests,
    }
    # Write both files under temporary names, then rename: a crash never leaves half an index.
    for suffix, write in (
        (".npz", lambda f: np.savez(f, **arrays)),
        (".json", lambda f: f.write(json.dumps(meta, ensure_ascii=False).encode("utf-8"))),
    ):
        write_atomic(base.with_suffix(suffix), write)


def _load(base: Path) -> Index | None:
    npz, meta_path = base.with_suffix(".npz"), base.with_suffix(".json")
    if not (npz.is_file() and meta_path.is_file()):
        return None
    try:
        meta = json.loads(meta_path.read_text(encoding="utf-8"))
        with np.load(npz) as z:
            mats = {
                name: sparse.csr_matrix(
                    (z[f"{name}_data"], z[f"{name}_indices"], z[f"{name}_indptr"]),
                    shape=tuple(z[f"{name}_shape"]),
                )
                for name in MATRICES
            }
            idf, roles, turns = z["idf"], z["roles"], z["turns"]
        vec = Vectorizer.from_terms(meta["terms"], idf, meta["n_min"], meta["n_max"])
        return Index(
            vec,
            mats["utterance_t"],
            mats["context_t"],
            mats["answers"],
            roles,
            turns,
            [tuple(k) for k in meta["keys"]],
            meta["transcriptions"],
            meta["digests"],
        )
    except (OSError, ValueError, KeyError, TypeError, json.JSONDecodeError):
        return None  # a damaged cache file is rebuilt


def cached_index(corpus: Corpus, context_lines: int = 2) -> Index:
    """The train index of ``corpus``: from memory, else from the disk cache, else built."""
    name = _cache_name(corpus, context_lines)
    hit = _MEMORY.get(name)
    if hit is not None:
        return hit
    base = config.cache_dir() / "retrieval" / name
    index = _load(base)
    if index is None:
        index = build_index(corpus, context_lines)
        try:
            _save(index, base)
        except OSError:
            pass  # a read-only cache only costs a rebuild next time
    _MEMORY[name] = index
    return index


def load_corpus_option(corpus: Corpus | None, data: str | os.PathLike | None) -> Corpus:
    """The corpus a CPU backend indexes: the one given, else the one at ``data``/ETC_DATA_DIR."""
    if corpus is not None:
        return corpus
    return load_corpus(data)


def corpus_availability() -> tuple[bool, str]:
    """Whether the corpus that the CPU backends need can be found."""
    root = config.data_dir()
    if (root / "dialogues").is_dir():
        return True, f"ready (train split of {root})"
    return False, (
        f"needs the ETC corpus: {root / 'dialogues'} is missing; set ETC_DATA_DIR or run "
        "`etclib download`."
    )


def _row(matrix, i: int) -> tuple[np.ndarray, np.ndarray]:
    """Row ``i`` of a CSR matrix as its ``(columns, values)``."""
    at = slice(matrix.indptr[i], matrix.indptr[i + 1])
    return matrix.indices[at].astype(np.int64), matrix.data[at]


class RetrievalBackend(Backend):
    """Most similar train utterances (same role) by character n-gram TF-IDF; their consensus."""

    name = "retrieval"
    description = (
        "Most similar train-split utterances by character n-gram TF-IDF (CPU, no download)."
    )

    def __init__(
        self,
        corpus: Corpus | None = None,
        data: str | None = None,
        context_weight: float = 0.5,
        turn_weight: float = 0.1,
        context_lines: int = 2,
        neighbours: int = 20,
    ) -> None:
        """Index the train split of ``corpus`` (default: the corpus at ``data``/ETC_DATA_DIR)."""
        for option, value in (("context_weight", context_weight), ("turn_weight", turn_weight)):
            if not isinstance(value, int | float) or value < 0:
                raise ConfigError(
                    f"Backend 'retrieval': option {option!r} must be a number >= 0, got {value!r}."
                )
        for option, value, least in (
            ("context_lines", context_lines, 0),
            ("neighbours", neighbours, 1),
        ):
            if isinstance(value, bool) or not isinstance(value, int) or value < least:
                raise ConfigError(
                    f"Backend 'retrieval': option {option!r} must be an integer >= {least}, "
                    f"got {value!r}."
                )
        self.corpus = load_corpus_option(corpus, data)
        self.context_weight = float(context_weight)
        self.turn_weight = float(turn_weight)
        self.context_lines = context_lines
        self.neighbours = neighbours
        self.index = cached_index(self.corpus, context_lines)

    availability = staticmethod(corpus_availability)

    #: The queries of the items being predicted (:meth:`queries`), keyed by their texts.
    _batch: dict[tuple[str, str], Any] = {}

    def queries(self, items: Sequence[Item]) -> dict[tuple[str, str], Any]:
        """Each item's utterance and preceding lines as TF-IDF ``(columns, weights)``, by those
        two texts: one vectorizer call for all of them (scikit-learn's checks cost about a
        millisecond a call), the same rows as one call per text."""
        texts = list(
            dict.fromkeys((it.utterance, context_text(it, self.context_lines)) for it in items)
        )
        u, c = (self.index.vectorizer.transform([t[k] for t in texts]) for k in (0, 1))
        return {t: (_row(u, i), _row(c, i)) for i, t in enumerate(texts)}

    @contextlib.contextmanager
    def batch(self, items: Sequence[Item]) -> Iterator[None]:
        """Within it, :meth:`scores` finds the queries of ``items`` vectorized at once."""
        self._batch = self.queries(items)
        try:
            yield
        finally:
            self._batch = {}

    def predict(self, items, progress=None, shots=None):
        with self.batch(items):
            return super().predict(items, progress, shots)

    def scores(self, item: Item) -> np.ndarray:
        """Similarity of ``item`` to every train item (``-inf`` for the other role)."""
        ix = self.index
        key = (item.utterance, context_text(item, self.context_lines))
        (u_cols, u_vals), (c_cols, c_vals) = self._batch.get(key) or self.queries([item])[key]
        score = cosine_to_rows(ix.utterance_t, u_cols, u_vals)
        if self.context_weight:
            score += self.context_weight * cosine_to_rows(ix.context_t, c_cols, c_vals)
        if self.turn_weight:
            score += self.turn_weight * (ix.turns == item.turn)
        score[ix.roles != (item.role == "listener")] = -np.inf
        return score

    def candidates(self, item: Item) -> tuple[np.ndarray, np.ndarray]:
        """Index positions of the candidate train items and their weights, best first: exact
        matches (role, utterance, preceding lines) if any, else the ``neighbours`` best."""
        ix = self.index
        digest = text_digest(item.role, item.utterance, context_text(item, self.context_lines))
        exact = ix.exact.get(digest)
        if exact:
            return np.array(exact, dtype=np.int64), np.ones(len(exact))
        score = self.scores(item)
        k = min(self.neighbours, int(np.isfinite(score).sum()))
        if k <= 0:
            return np.array([0], dtype=np.int64), np.ones(1)
        top = np.argpartition(-score, k - 1)[:k]
        top = top[np.lexsort((top, -score[top]))]  # best first; ties by position
        return top, np.maximum(score[top], 0.0)

    def nearest(self, item: Item) -> int:
        """Index position of the train item whose transcription answers ``item``."""
        idx, weights = self.candidates(item)
        if len(idx) == 1:
            return int(idx[0])
        sub = self.index.answers[idx]
        sim = (sub @ sub.T).toarray()
        np.fill_diagonal(sim, 0.0)
        consensus = weights @ sim
        if not consensus.any():
            return int(idx[0])
        best = np.flatnonzero(np.isclose(consensus, consensus.max(), rtol=0, atol=1e-12))
        return int(idx[best].min())

    def answer(self, item: Item, shots: Sequence[Item] = ()) -> str:
        return self.index.transcriptions[self.nearest(item)]

    def signature(self) -> dict[str, Any]:
        return {
            "backend": self.name,
            "index": INDEX_VERSION,
            "ngrams": f"{self.index.vectorizer.n_min}-{self.index.vectorizer.n_max}",
            "context_weight": self.context_weight,
            "turn_weight": self.turn_weight,
            "context_lines": self.context_lines,
            "neighbours": self.neighbours,
            "train": self.corpus.content_hash[:12],
        }


BACKEND = RetrievalBackend
