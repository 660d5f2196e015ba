"""etclib: corpus, task items, model backends and scoring for the ETC benchmark."""

from __future__ import annotations

__version__ = "0.1.0"

__all__ = ["__version__", "compare", "load_corpus", "score"]


def __getattr__(name: str):
    # Lazy: `import etclib` stays fast; heavy modules load on first use.
    if name == "load_corpus":
        from .corpus import load_corpus

        return load_corpus
    if name == "compare":
        from .comparison import compare

        return compare
    if name == "score":
        from .scoring import score

        return score
    raise AttributeError(f"module 'etclib' has no attribute {name!r}")
