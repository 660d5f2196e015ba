"""etclib: corpus, task items, model backends and scoring for the ETC benchmark."""

from __future__ import annotations

__version__ = "0.1.0"

__all__ = ["__version__", "compare", "load_corpus", "score"]


def __getattr__(name: str):
    # Lazy: `import etclib` stays fast; heavy modules load on first use.
    if name == "load_corpus":
        from etclib.data.corpus import load_corpus

        return load_corpus
    if name == "compare":
        from etclib.tracks.comparison import compare

        return compare
    if name == "score":
        from etclib.tracks.scoring import score

        return score
    raise AttributeError(f"module 'etclib' has no attribute {name!r}")
