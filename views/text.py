"""Showing visitor-supplied text safely: as Markdown-escaped text, never as HTML.

Streamlit never renders HTML unless ``unsafe_allow_html`` is set (the site never sets it), but
Markdown alone can still turn a visitor's ``[x](https://...)``, ``**`` or ``$...$`` into links,
emphasis or LaTeX. :func:`escape_markdown` makes such text print as typed.
"""

from __future__ import annotations

import re

# Every character with a meaning in CommonMark, GitHub Markdown or Streamlit's extensions
# (``:emoji:``, ``:color[...]``, ``$`` LaTeX, ``~`` strikethrough).
_SPECIAL = re.compile(r"([\\`*_{}\[\]<>()#+\-.!|~$:&=\"'])")


def escape_markdown(text: object, max_chars: int | None = None) -> str:
    """``text`` with every Markdown-active character backslash-escaped; newlines kept as breaks.

    ``max_chars`` cuts long text first (with an ellipsis), so a visitor cannot fill a page.
    """
    s = "" if text is None else str(text)
    if max_chars is not None and len(s) > max_chars:
        s = s[: max(0, max_chars - 1)] + "…"
    escaped = _SPECIAL.sub(r"\\\1", s)
    return escaped.replace("\r\n", "\n").replace("\n", "  \n")
