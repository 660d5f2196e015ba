"""Showing visitor-supplied text safely: Markdown-escaped, never a link, never HTML."""

from __future__ import annotations

import re

# Every character with a meaning in CommonMark, GitHub Markdown or Streamlit's extensions
# (``:emoji:``, ``:color[...]``, ``$`` LaTeX, ``~`` strikethrough).
_SPECIAL = re.compile(r"([\\`*_{}\[\]<>()#+\-.!|~$:&=\"'])")
#: Where GitHub Markdown's literal autolinks start; a word joiner there stops the link.
_AUTOLINK = re.compile(r"(?i)(:)(?=//)|(www)(?=\.)|()(?=@)")
WORD_JOINER = "\u2060"


def escape_markdown(text: object, max_chars: int | None = None) -> str:
    """``text`` printed as typed in Markdown, never a link; ``max_chars`` cuts it first."""
    s = "" if text is None else str(text)
    if max_chars is not None and len(s) > max_chars:
        s = s[: max(0, max_chars - 1)] + "…"
    s = _AUTOLINK.sub(lambda m: (m.group(1) or m.group(2) or "") + WORD_JOINER, s)
    escaped = _SPECIAL.sub(r"\\\1", s)
    return escaped.replace("\r\n", "\n").replace("\n", "  \n")


#: The most characters of a link's value a page quotes back (an entry id is 12).
QUOTED_CHARS = 24


def quoted(value: object) -> str:
    """A value a link carried, as a page quotes it: cut, escaped, in quotes."""
    return f"“{escape_markdown(value, QUOTED_CHARS)}”"


#: Why an entry a link names may be missing, in a visitor's words.
ENTRY_GONE = "the link may be mistyped, or the entry was withdrawn or removed"


def not_found(what: str, asked: object, where: str, why: str = ENTRY_GONE) -> str:
    """The sentence for a link naming nothing there: ``Entry B “…” was not found on …``."""
    return f"{what} {quoted(asked)} was not found {where}: {why}."
