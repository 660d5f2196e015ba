"""A scripted LLM judge for :class:`~tests.fakes.llm_server.FakeLLMServer`.

It reads the judge's user message (``# 心情記述`` for a decomposition, ``# ユニット`` ...
``# 対象の心情記述`` for an entailment, as rendered from ``etclib/judge/prompts/*.toml``) and
answers JSON from tables, so tests can work out the expected scores by hand:

- ``units[text]`` -> the units of ``text``; texts not in the table are split into sentences
  after each "。" (each non-empty sentence one unit);
- ``labels[(unit, target)]`` -> the label; pairs not in the table are "Supported" when the
  unit occurs verbatim in the target, else "Not Supported".

``ScriptedJudge.calls`` counts answered requests by kind and text, e.g.
``judge.decompose_calls["text"]`` and ``judge.entail_calls[(unit, target)]``.
"""

from __future__ import annotations

import collections
import json
import re
import threading

from .llm_server import FakeRequest

DECOMPOSE_HEAD = "# 心情記述\n"
ENTAIL_HEAD = "# ユニット\n"
ENTAIL_SEP = "\n\n# 対象の心情記述\n"


def request_kind(req: FakeRequest) -> tuple[str, tuple[str, ...]]:
    """``("decompose", (text,))`` or ``("entail", (unit, target))`` from a judge request."""
    user = req.user
    if user.startswith(DECOMPOSE_HEAD):
        return "decompose", (user[len(DECOMPOSE_HEAD) :],)
    if user.startswith(ENTAIL_HEAD) and ENTAIL_SEP in user:
        unit, target = user[len(ENTAIL_HEAD) :].split(ENTAIL_SEP, 1)
        return "entail", (unit, target)
    raise AssertionError(f"not a judge request: {user[:80]!r}")


def sentences(text: str) -> list[str]:
    """The default decomposition: one unit per non-empty sentence, "。" kept where present."""
    return [s.strip() for s in re.findall(r"[^。]+。?", text) if s.strip("。 \n")]


class ScriptedJudge:
    """Callable responder for the fake server (see the module docstring)."""

    def __init__(
        self,
        units: dict[str, list[str]] | None = None,
        labels: dict[tuple[str, str], str] | None = None,
        *,
        wrap: str = "plain",
    ):
        self.units = dict(units or {})
        self.labels = dict(labels or {})
        self.wrap = wrap  # "plain", "fence" (```json ...```) or "chatty" (text around JSON)
        self.decompose_calls: collections.Counter = collections.Counter()
        self.entail_calls: collections.Counter = collections.Counter()
        self._lock = threading.Lock()

    def units_of(self, text: str) -> list[str]:
        return self.units[text] if text in self.units else sentences(text)

    def label_of(self, unit: str, target: str) -> str:
        if (unit, target) in self.labels:
            return self.labels[(unit, target)]
        return "Supported" if unit in target else "Not Supported"

    def __call__(self, req: FakeRequest) -> str:
        kind, args = request_kind(req)
        if kind == "decompose":
            with self._lock:
                self.decompose_calls[args[0]] += 1
            answer = {"units": self.units_of(args[0])}
        else:
            with self._lock:
                self.entail_calls[args] += 1
            answer = {"reasoning": "表面の内容を比較した。", "label": self.label_of(*args)}
        body = json.dumps(answer, ensure_ascii=False)
        if self.wrap == "fence":
            return f"```json\n{body}\n```"
        if self.wrap == "chatty":
            return f"判定結果は次の通りです。\n{body}\n以上です。"
        return body
