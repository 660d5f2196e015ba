"""etclib: corpus, task items, model backends and scoring for the ETC benchmark."""

from __future__ import annotations

__version__ = "0.1.0"

__all__ = ["__version__", "compare", "load_corpus", "score"]


#: Lazy: `import etclib` stays fast; heavy modules load on first use.
_LAZY = {
    "load_corpus": "etclib.data.corpus",
    "compare": "etclib.tracks.comparison",
    "score": "etclib.tracks.scoring",
}


def __getattr__(name: str):
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'etclib' has no attribute {name!r}")
