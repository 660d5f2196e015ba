"""Showing visitor-supplied text safely: as Markdown-escaped text, never as HTML.

Streamlit never renders HTML unless ``unsafe_allow_html`` is set (the site never sets it), but
Markdown alone can still turn a visitor's ``[x](https://...)``, ``**`` or ``$...$`` into links,
emphasis or LaTeX, and GitHub Markdown (remark-gfm) turns a bare ``https://...``, ``www.host``
or ``name@host`` into a link even when every character is escaped, because it looks for them in
the text after escapes are resolved. :func:`escape_markdown` makes such text print as typed and
never become a link.
"""

from __future__ import annotations

import re

# Every character with a meaning in CommonMark, GitHub Markdown or Streamlit's extensions
# (``:emoji:``, ``:color[...]``, ``$`` LaTeX, ``~`` strikethrough).
_SPECIAL = re.compile(r"([\\`*_{}\[\]<>()#+\-.!|~$:&=\"'])")
#: Where GitHub Markdown's literal autolinks start: "://", "www." and the "@" of an address. A
#: word joiner (U+2060: invisible, no line break) there keeps the text and stops the link.
_AUTOLINK = re.compile(r"(?i)(:)(?=//)|(www)(?=\.)|()(?=@)")
WORD_JOINER = "\u2060"


def escape_markdown(text: object, max_chars: int | None = None) -> str:
    """``text`` with every Markdown-active character backslash-escaped; newlines kept as breaks.

    A word joiner (U+2060) goes where a literal autolink would start, so no text becomes a link.

    ``max_chars`` cuts long text first (with an ellipsis), so a visitor cannot fill a page.
    """
    s = "" if text is None else str(text)
    if max_chars is not None and len(s) > max_chars:
        s = s[: max(0, max_chars - 1)] + "…"
    s = _AUTOLINK.sub(lambda m: (m.group(1) or m.group(2) or "") + WORD_JOINER, s)
    escaped = _SPECIAL.sub(r"\\\1", s)
    return escaped.replace("\r\n", "\n").replace("\n", "  \n")


#: The most characters of a link's value a page quotes back (an entry id is 12).
QUOTED_CHARS = 24


def quoted(value: object) -> str:
    """A value a visitor's link carried, as a page quotes it: cut to :data:`QUOTED_CHARS`,
    escaped, in quotes."""
    return f"“{escape_markdown(value, QUOTED_CHARS)}”"


#: Why an entry a link names may be missing, in a visitor's words.
ENTRY_GONE = "the link may be mistyped, or the entry was withdrawn or removed"


def not_found(what: str, asked: object, where: str, why: str = ENTRY_GONE) -> str:
    """The sentence for a link naming nothing there is: ``Entry B “deadbeef0000” was not found
    on the categories board: the link may be mistyped, …``."""
    return f"{what} {quoted(asked)} was not found {where}: {why}."
