"""A submission's details: checked, stored exactly as given, always shown as plain text.

Text fields are refused with control characters (a description may hold newlines and tabs) or
any format character (Unicode Cf: bidirectional overrides, zero-width spaces, ...), which could
disguise what a page shows; pages must show values as text, where nothing becomes a link
(``views.text.escape_markdown``). The model facts are optional; blank means not said.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import asdict, dataclass, fields
from typing import Any
from urllib.parse import urlsplit

from etclib.core import registry

from .errors import MetadataError

SETTINGS: tuple[str, ...] = ("zero-shot", "few-shot", "fine-tuned", "other")
SAW_TEST: tuple[str, ...] = ("no", "yes", "unknown")
#: Whether the model's weights are public ("": not said).
OPEN_WEIGHTS: tuple[str, ...] = ("", "yes", "no")
#: The fields an entry's owner may change after submitting (leaderboard.owners).
EDITABLE: tuple[str, ...] = (
    "name",
    "model_url",
    "paper_url",
    "parameters",
    "open_weights",
    "licence",
)

#: field -> maximum length in characters
MAX_LENGTH: dict[str, int] = {
    "name": 80,
    "team": 120,
    "contact": 200,
    "model_url": 500,
    "paper_url": 500,
    "description": 2000,
    "parameters": 12,
    "licence": 80,
}
#: Letters and symbols that draw nothing: the Hangul fillers (category Lo, default-ignorable)
#: and the blank Braille pattern (So). Names made only of these, of spaces, marks or format
#: characters are invisible on the board.
_BLANK = set("\u115f\u1160\u3164\uffa0\u2800")


def _visible(ch: str) -> bool:
    return unicodedata.category(ch)[0] in "LNPS" and ch not in _BLANK


@dataclass(frozen=True)
class Metadata:
    """What a submitter tells about a submission. ``contact`` is never shown publicly."""

    name: str
    team: str = ""
    contact: str = ""
    model_url: str = ""
    paper_url: str = ""
    description: str = ""
    setting: str = "other"
    saw_test: str = "unknown"
    #: the model's size in billions of parameters, as a number ("8", "0.35"); blank: not said
    parameters: str = ""
    open_weights: str = ""
    licence: str = ""

    @classmethod
    def from_dict(cls, raw: dict[str, Any] | Metadata) -> Metadata:
        """Check ``raw`` and build the metadata, or raise :class:`MetadataError` listing all."""
        if isinstance(raw, Metadata):
            raw = asdict(raw)
        if not isinstance(raw, dict):
            raise MetadataError({"metadata": f"expected a mapping, got {type(raw).__name__}."})
        known = [f.name for f in fields(cls)]
        problems: dict[str, str] = {}
        for key in raw:
            if key not in known:
                hint = registry.suggest(key, known)
                problems[str(key)] = f"unknown field.{hint} Known: {', '.join(known)}."
        values: dict[str, str] = {}
        for f in fields(cls):
            value = raw.get(f.name, f.default if f.name != "name" else None)
            if value is None:
                value = "" if f.name != "name" else None
            if value is None:
                problems[f.name] = "required: give a display name for the board."
                continue
            if not isinstance(value, str):
                problems[f.name] = f"must be text, got {type(value).__name__}."
                continue
            problem = check_field(f.name, value)
            if problem:
                problems[f.name] = problem
            values[f.name] = value
        if problems:
            raise MetadataError(problems)
        return cls(**values)

    def public(self) -> dict[str, str]:
        """Every field but ``contact``."""
        out = asdict(self)
        out.pop("contact")
        return out


def check_field(name: str, value: str) -> str | None:
    """What is wrong with ``value`` for the field ``name`` (None when nothing is)."""
    if name in MAX_LENGTH and len(value) > MAX_LENGTH[name]:
        return f"{len(value)} characters; the limit is {MAX_LENGTH[name]}."
    allowed = "\n\t" if name == "description" else ""
    for i, ch in enumerate(value):
        if ch in allowed:
            continue
        cat = unicodedata.category(ch)
        if cat in ("Cc", "Cs", "Zl", "Zp"):
            return (
                f"contains a control character (U+{ord(ch):04X} at position {i + 1}); "
                "use plain text."
            )
        if cat == "Cf":
            return (
                f"contains an invisible format character (U+{ord(ch):04X} at position {i + 1}, "
                "e.g. a direction mark or zero-width space); use plain text."
            )
    if name in ("name", "team") and value and not any(_visible(ch) for ch in value):
        if name == "name":
            return "required: give a display name with at least one visible character."
        return "has no visible character; write a team name or leave it empty."
    if name == "name" and not value.strip():
        return "required: give a display name for the board."
    if name == "setting" and value not in SETTINGS:
        return f"{value!r} is not one of: {', '.join(SETTINGS)}."
    if name == "saw_test" and value not in SAW_TEST:
        return f"{value!r} is not one of: {', '.join(SAW_TEST)}."
    if name == "open_weights" and value not in OPEN_WEIGHTS:
        return f"{value!r} is not one of: yes, no (or blank: not said)."
    if name == "parameters" and value and not _PARAMETERS.fullmatch(value):
        return "the number of parameters in billions, e.g. 8 or 0.35 (or blank: not said)."
    if name in ("model_url", "paper_url") and value:
        return _check_url(value)
    if name == "contact" and value and any(ch.isspace() for ch in value.strip()):
        return "one e-mail address or handle without spaces."
    return None


_PARAMETERS = re.compile(r"(?!0+(\.0*)?$)\d{1,6}(\.\d{1,4})?")


def _check_url(value: str) -> str | None:
    if value != value.strip() or any(ch.isspace() for ch in value):
        return "a link must not contain spaces."
    try:
        parts = urlsplit(value)
        parts.port  # noqa: B018 - raises ValueError on a bad port
    except ValueError as exc:
        return f"not a valid link ({exc})."
    if parts.scheme.lower() not in ("http", "https"):
        shown = parts.scheme or "none"
        return f"links must start with http:// or https:// (scheme found: {shown})."
    if not parts.hostname:
        return "the link has no host name, e.g. https://example.org/paper."
    return None
