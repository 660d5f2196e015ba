"""Defensive parsing of the judge's JSON answers.

Answers arrive wrapped in code fences, with a sentence around them, or with the label spelled
loosely; anything else raises :class:`AnswerParseError`, which the runner retries. An
unparseable answer is never taken as "Not Supported".
"""

from __future__ import annotations

import json
import re
from typing import Any

#: Entailment labels, in the SPEC's spelling.
SUPPORTED, NEUTRAL, NOT_SUPPORTED = "Supported", "Neutral", "Not Supported"
LABELS: tuple[str, ...] = (SUPPORTED, NEUTRAL, NOT_SUPPORTED)

_LABEL_FORMS = {
    "supported": SUPPORTED,
    "neutral": NEUTRAL,
    "notsupported": NOT_SUPPORTED,
    "unsupported": NOT_SUPPORTED,
}
_FENCE = re.compile(r"```[A-Za-z0-9_-]*\s*\n?(.*?)```", re.DOTALL)


class AnswerParseError(ValueError):
    """An answer that is not the JSON the prompt asked for (internal: the runner retries it)."""


def _snippet(text: str, n: int = 120) -> str:
    one_line = " ".join(text.split())
    return one_line if len(one_line) <= n else one_line[: n - 1] + "…"


def extract_json(text: str) -> Any:
    """The first JSON object (or array) in ``text``: bare, fenced, or amid other text."""
    if text is None:
        raise AnswerParseError("empty answer")
    candidates = [text.strip()]
    candidates += [m.group(1).strip() for m in _FENCE.finditer(text)]
    for c in candidates:
        if not c:
            continue
        try:
            return json.loads(c)
        except json.JSONDecodeError:
            pass
    decoder = json.JSONDecoder()
    for opener in ("{", "["):
        start = text.find(opener)
        while start != -1:
            try:
                value, _ = decoder.raw_decode(text, start)
                return value
            except json.JSONDecodeError:
                start = text.find(opener, start + 1)
    raise AnswerParseError(f"no JSON in answer: {_snippet(text) or '(empty)'!r}")


def parse_units(text: str) -> list[str]:
    """``{"units": [...]}`` -> the list of non-empty unit strings (possibly empty)."""
    value = extract_json(text)
    if isinstance(value, dict):
        if "units" not in value:
            raise AnswerParseError(f"answer has no 'units' key: {_snippet(text)!r}")
        value = value["units"]
    if value is None:
        return []
    if not isinstance(value, list):
        raise AnswerParseError(f"'units' is not a list: {_snippet(text)!r}")
    units: list[str] = []
    for u in value:
        if isinstance(u, dict):  # {"unit": "..."} or {"text": "..."}
            u = u.get("unit", u.get("text"))
        if not isinstance(u, str):
            raise AnswerParseError(f"a unit is not a string: {_snippet(text)!r}")
        u = u.strip()
        if u:
            units.append(u)
    return units


def normalise_label(label: Any) -> str:
    """``"not_supported"``, ``"NOT SUPPORTED"``, ... -> ``"Not Supported"``; else raise."""
    if isinstance(label, str):
        key = re.sub(r"[\s_\-]+", "", label).lower().strip(".")
        if key in _LABEL_FORMS:
            return _LABEL_FORMS[key]
    raise AnswerParseError(f"unknown label {label!r}; expected one of {', '.join(LABELS)}")


def parse_entailment(text: str) -> tuple[str, str]:
    """``{"reasoning": ..., "label": ...}`` -> ``(label, reasoning)``."""
    value = extract_json(text)
    if not isinstance(value, dict) or "label" not in value:
        raise AnswerParseError(f"answer has no 'label': {_snippet(text)!r}")
    reasoning = value.get("reasoning")
    return normalise_label(value["label"]), reasoning if isinstance(reasoning, str) else ""
