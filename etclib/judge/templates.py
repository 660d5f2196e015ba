"""The judge's two prompt templates, loaded from versioned TOML files in ``prompts/``.

One file per kind (``decompose``, ``entail``) and named set: ``prompts/{kind}_{set}.toml``.
:data:`DEFAULT_SET` (``v2``, the paper's Figures 6 and 7 rule by rule; docs/judge.md) is used
unless a set is named; ``v1`` stays selectable so older scores can be reproduced. A template's
:attr:`JudgePrompt.tag` (kind, version, content hash) is part of the judge's signature and cache
keys, so two sets never share an answer.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import cache
from importlib import resources
from string import Template
from typing import Any

from etclib.core.errors import JudgeError
from etclib.data import prompts as prompts_

KINDS: tuple[str, ...] = ("decompose", "entail")
#: The prompt set used when none is named.
DEFAULT_SET = "v2"
_FILE = re.compile(r"(?P<kind>[a-z]+)_(?P<set>v(?P<version>[0-9]+))\.toml")
_FIELDS = {"decompose": ("text",), "entail": ("unit", "target")}
_REQUIRED = ("name", "kind", "version", "system", "user", "examples_header", "example", "examples")


@dataclass(frozen=True)
class JudgePrompt:
    """One loaded prompt template; :meth:`messages` renders a request."""

    kind: str
    name: str
    version: int
    system: str
    user: str
    digest: str
    n_examples: int

    @property
    def tag(self) -> str:
        """``kind-vN-<hash8>``, e.g. ``decompose-v1-1a2b3c4d``."""
        return f"{self.kind}-v{self.version}-{self.digest[:8]}"

    def messages(self, **fields: str) -> list[dict[str, str]]:
        """``[system, user]`` chat messages for one request (fields: see ``_FIELDS``)."""
        missing = [f for f in _FIELDS[self.kind] if f not in fields]
        if missing:
            raise JudgeError(f"Prompt {self.kind!r} needs the field(s) {', '.join(missing)}.")
        return [
            {"role": "system", "content": self.system},
            {"role": "user", "content": Template(self.user).substitute(fields)},
        ]


def _output(kind: str, example: dict[str, Any]) -> str:
    if kind == "decompose":
        return json.dumps({"units": list(example["units"])}, ensure_ascii=False)
    return json.dumps(
        {"reasoning": example["reasoning"], "label": example["label"]}, ensure_ascii=False
    )


def _check(kind: str, where: str, data: dict[str, Any]) -> None:
    if data["kind"] != kind or not isinstance(data["version"], int):
        raise JudgeError(f"{where}: expected kind = {kind!r} and an integer version.")
    need = ("text", "units") if kind == "decompose" else ("unit", "target", "reasoning", "label")
    for i, ex in enumerate(data["examples"], 1):
        absent = [k for k in need if k not in ex]
        if absent:
            raise JudgeError(f"{where}: example {i} lacks {', '.join(absent)}.")
        if kind == "entail" and ex["label"] not in ("Supported", "Neutral", "Not Supported"):
            raise JudgeError(f"{where}: example {i} has unknown label {ex['label']!r}.")


@cache
def sets() -> tuple[str, ...]:
    """The prompt sets shipped (each with a file for every kind), oldest first."""
    found: dict[str, set[str]] = {}
    for entry in (resources.files("etclib.judge") / "prompts").iterdir():
        m = _FILE.fullmatch(entry.name)
        if m:
            found.setdefault(m["set"], set()).add(m["kind"])
    complete = [name for name, kinds in found.items() if kinds >= set(KINDS)]
    return tuple(sorted(complete, key=lambda name: int(name[1:])))


def check_set(name: str | None) -> str:
    """``name`` (``None`` or empty: :data:`DEFAULT_SET`) when such a set is shipped, else
    JudgeError naming the sets there are."""
    name = str(name or DEFAULT_SET).strip()
    available = sets()
    if name not in available:
        raise JudgeError(
            f"Unknown judge prompts {name!r}. Available: {', '.join(available)} "
            f"(default {DEFAULT_SET}; etclib/judge/prompts/)."
        )
    return name


@cache
def load(kind: str, prompts: str = DEFAULT_SET) -> JudgePrompt:
    """The template for ``kind`` (``"decompose"`` or ``"entail"``) of the set ``prompts``,
    read once per process."""
    if kind not in KINDS:
        raise JudgeError(f"Unknown judge prompt {kind!r}. Available: {', '.join(KINDS)}.")
    prompts = check_set(prompts)
    p = prompts_.load(
        f"judge/prompts/{kind}_{prompts}.toml",
        required=_REQUIRED,
        what="judge prompt",
        error=JudgeError,
    )
    where, data = p.where, dict(p.data)
    _check(kind, where, data)
    if f"v{data['version']}" != prompts:
        raise JudgeError(f"{where}: holds version {data['version']}, not the set's {prompts}.")
    blocks = [
        Template(data["example"]).substitute(
            {k: v for k, v in ex.items() if isinstance(v, str)},
            number=str(i),
            output=_output(kind, ex),
        )
        for i, ex in enumerate(data["examples"], 1)
    ]
    examples = data["examples_header"] + "".join(blocks) if blocks else ""
    system = Template(data["system"]).substitute(examples=examples).rstrip() + "\n"
    return JudgePrompt(
        kind=kind,
        name=data["name"],
        version=data["version"],
        system=system,
        user=data["user"],
        digest=p.digest,
        n_examples=len(blocks),
    )


def tags(prompts: str = DEFAULT_SET) -> str:
    """``decompose-vN-<hash8>,entail-vN-<hash8>`` of the set ``prompts``, for the signature."""
    return ",".join(load(k, prompts).tag for k in KINDS)
