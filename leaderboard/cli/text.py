"""What the commands print: aligned text tables (a Japanese name is as wide as it looks), scores
and an entry's standing."""

from __future__ import annotations

import math
from typing import Any

from etclib.metrics import heading


def columns(text: str) -> int:
    """Terminal columns of ``text``: wide (CJK) characters take two."""
    import unicodedata

    return sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in text)


def pad(text: str, width: int) -> str:
    return text + " " * (width - columns(text))


def table(headers: list[str], rows: list[list[str]]) -> str:
    """An aligned text table (by terminal columns: a Japanese name is as wide as it looks)."""
    widths = [max([columns(h)] + [columns(r[i]) for r in rows]) for i, h in enumerate(headers)]
    line = "  ".join(pad(h, w) for h, w in zip(headers, widths))
    out = [line.rstrip(), "  ".join("-" * w for w in widths)]
    out += ["  ".join(pad(c, w) for c, w in zip(r, widths)).rstrip() for r in rows]
    return "\n".join(out)


def clip(text: Any, n: int) -> str:
    s = "" if text is None else str(text)
    s = "".join(ch if ch.isprintable() else " " for ch in s)
    return s if len(s) <= n else s[: n - 1] + "…"


def fmt(value: Any, width: int = 6) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "-".rjust(width)
    if isinstance(value, float):
        return f"{value:.2f}".rjust(width)
    return str(value).rjust(width)


def standing_text(standing: dict[str, Any]) -> str:
    """An entry's rank and main scores with their intervals, in a line or two."""
    if standing["rank"] is None:
        where = "not ranked on the board (private, withdrawn, hidden or not scored yet)"
    else:
        where = (
            f"rank {standing['rank']} (band {standing['rank_band']}) of {standing['of']} by "
            f"{heading(standing['sort_by'])}"
        )
    scores = "; ".join(
        f"{heading(k)} {v:.2f}" + ("" if lo is None else f" [{lo:.2f}, {hi:.2f}]")
        for k, (v, lo, hi) in standing["scores"].items()
    )
    return f"{where}\n  {scores}" if scores else where
