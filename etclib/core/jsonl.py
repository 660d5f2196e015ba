"""JSON Lines as every reader splits them: one record per line, whatever its text holds; values
as a message quotes them (:func:`shown`).

``json.dumps(..., ensure_ascii=False)`` leaves U+2028, U+2029 and U+0085 raw, and many readers
(``str.splitlines()``, editors, older JavaScript) break a line there; :func:`dumps_line` escapes
them (the same JSON value), and every JSONL writer of the project uses it.

>>> dumps_line({"prediction": "a\\u2028b"})
'{"prediction": "a\\\\u2028b"}'
"""

from __future__ import annotations

import json
from typing import Any

#: Characters that ``str.splitlines()`` breaks on and JSON may hold raw inside a string.
_LINE_BREAKS = {"\u2028": "\\u2028", "\u2029": "\\u2029", "\u0085": "\\u0085"}


def dumps_line(obj: Any, **kwargs: Any) -> str:
    """``obj`` as one JSON line (no newline at the end), UTF-8 text kept readable, the
    characters other readers break lines on escaped."""
    text = json.dumps(obj, ensure_ascii=False, **kwargs)
    for ch, escaped in _LINE_BREAKS.items():
        if ch in text:
            text = text.replace(ch, escaped)
    return text


class LongInt:
    """An integer literal too long to convert (``int()`` is quadratic in its length): a reader's
    ``parse_int`` hook keeps it so, and :func:`shown` names its length."""

    def __init__(self, text: str):
        self.digits = len(text.lstrip("-"))


def shown(value: Any, limit: int = 40) -> str:
    """A value as JSON text for a message: short, and printable (an unpaired surrogate escaped)."""
    if isinstance(value, LongInt):
        return f"a number of {value.digits:,} digits"
    try:
        text = json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        text = type(value).__name__
    if len(text) > limit:
        text = f"{text[:limit]}… ({len(text):,} characters)"
    return text.encode("utf-8", "backslashreplace").decode("utf-8")
