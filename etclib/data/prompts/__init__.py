"""The versioned prompt files, and the one loader that reads them all.

Prompts are data: each is a TOML file with a ``name`` and a ``version`` bumped when the prompt
changes (the scoring judge's sets are in ``etclib/judge/prompts/``). :func:`load` checks a file's
keys and ``$slots`` and hashes the text that reaches the model, so that every signature names
the exact prompt (``name-vN-<hash8>``).
"""

from __future__ import annotations

import hashlib
import json
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from importlib import resources
from string import Template
from typing import Any

from etclib.core.errors import EtcError, TaskError


@dataclass(frozen=True)
class Prompt:
    """A loaded prompt file: its ``data`` (the TOML table), name, version and content hash."""

    name: str
    version: int
    digest: str
    where: str
    data: Mapping[str, Any]

    @property
    def signature(self) -> str:
        """``name-vN-<hash8>``: what a score or a run records of its prompt."""
        return f"{self.name}-v{self.version}-{self.digest[:8]}"

    def template(self, key: str) -> Template:
        """The text under ``key`` as a ``$slot`` template."""
        return Template(self.data[key])


def load(
    path: str,
    *,
    required: Sequence[str] = ("name", "version", "system", "instruction"),
    slots: Mapping[str, Sequence[str]] | None = None,
    hashed: Sequence[str] | None = None,
    what: str = "prompt",
    error: type[EtcError] = TaskError,
) -> Prompt:
    """Read and check the prompt file ``etclib/<path>``: ``required`` keys, ``slots`` (key ->
    the ``$names`` its text must hold); the digest hashes the ``hashed`` keys' texts (None: the
    whole table as canonical JSON). Every problem is an ``error`` naming the file."""
    where = f"etclib/{path}"
    try:
        text = resources.files("etclib").joinpath(path).read_text("utf-8")
    except (FileNotFoundError, NotADirectoryError):
        raise error(f"The {what} {where} is missing.") from None
    try:
        data = tomllib.loads(text)
        missing = [k for k in required if k not in data]
        if missing:
            raise KeyError(", ".join(missing))
        version = int(data["version"])
    except (tomllib.TOMLDecodeError, KeyError, ValueError) as exc:
        raise error(f"{where} is invalid ({exc}): it needs {', '.join(required)}.") from None
    for key, names in (slots or {}).items():
        for slot in names:
            if f"${slot}" not in data[key]:
                raise error(f"{where}: {key} lacks ${slot}.")
    if hashed is None:
        body = json.dumps(data, ensure_ascii=False, sort_keys=True)
    else:
        body = "\x00".join(data[k] for k in hashed)
    digest = hashlib.sha256(body.encode("utf-8")).hexdigest()
    return Prompt(str(data["name"]), version, digest, where, data)
