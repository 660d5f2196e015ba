"""Morphological tokenisation of Japanese for the n-gram metrics: sacrebleu's ``ja-mecab``
(MeCab, stock IPA dictionary), named in every score's signature. Texts are tokenised once per
run (a ``TokenCache``) and the tokens reused by every metric.
"""

from __future__ import annotations

from functools import lru_cache

from etclib.core.errors import DependencyError

INSTALL_HINT = "pip install 'sacrebleu[ja]'  (installs mecab-python3 and ipadic)"


@lru_cache(maxsize=1)
def _tokenizer():
    try:
        import ipadic  # noqa: F401
        import MeCab  # noqa: F401
    except ImportError as exc:
        raise DependencyError(
            f"Japanese tokenisation needs MeCab and the IPA dictionary ({exc.name} is missing). "
            f"Install them with: {INSTALL_HINT}"
        ) from None
    from sacrebleu.tokenizers.tokenizer_ja_mecab import TokenizerJaMecab

    return TokenizerJaMecab()


def signature() -> str:
    """E.g. ``ja-mecab-0.996-IPA``."""
    return _tokenizer().signature()


def tokenize(text: str) -> str:
    """Space-separated tokens of ``text`` (outer whitespace stripped; empty text gives '')."""
    return _tokenizer()(text)


class TokenCache:
    """Tokens of every text seen in one scoring run, computed once."""

    def __init__(self) -> None:
        self._tokens: dict[str, str] = {}

    def __call__(self, texts: list[str]) -> list[str]:
        tok = _tokenizer()
        cache = self._tokens
        out = []
        for t in texts:
            hit = cache.get(t)
            if hit is None:
                hit = cache[t] = tok(t)
            out.append(hit)
        return out
