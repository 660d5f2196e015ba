"""Text tables for the command line: aligned by terminal columns (a Japanese name is as wide
as it looks)."""

from __future__ import annotations

from typing import Any


def _width(text: str) -> int:
    """Terminal columns of ``text``: wide (CJK) characters take two."""
    import unicodedata

    return sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in text)


def _pad(text: str, width: int) -> str:
    return text + " " * (width - _width(text))


def _table(headers: list[str], rows: list[list[str]]) -> str:
    """An aligned text table (by terminal columns: a Japanese name is as wide as it looks)."""
    widths = [max([_width(h)] + [_width(r[i]) for r in rows]) for i, h in enumerate(headers)]
    line = "  ".join(_pad(h, w) for h, w in zip(headers, widths))
    out = [line.rstrip(), "  ".join("-" * w for w in widths)]
    out += ["  ".join(_pad(c, w) for c, w in zip(r, widths)).rstrip() for r in rows]
    return "\n".join(out)


def _clip(text: Any, n: int) -> str:
    s = "" if text is None else str(text)
    s = "".join(ch if ch.isprintable() else " " for ch in s)
    return s if len(s) <= n else s[: n - 1] + "…"
