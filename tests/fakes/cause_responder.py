"""A scripted cause labeller for :class:`~tests.fakes.llm_server.FakeLLMServer` or ``ask=``.

It reads the cause prompt's last ``対象発話: N（A）`` and ``心情記述: ...`` lines (as rendered from
``etclib/data/prompts/causes.toml``) and answers ``{"reasoning": ..., "causes": [...]}`` from a table
keyed by ``(transcription, target number)``; items not in the table get ``default(target)``
(by default ``[target]``: the cause lies in the target itself).
"""

from __future__ import annotations

import collections
import json
import re
import threading
from collections.abc import Callable

_TARGET = re.compile(r"対象発話: (\d+)（([AB])）\n心情記述: (.*)\n答え:\s*$", re.S)


def cause_question(user: str) -> tuple[int, str, str]:
    """``(target number, letter, transcription)`` of a cause prompt's user message."""
    match = _TARGET.match(user[user.rfind("対象発話: ") :])
    if not match:
        raise AssertionError(f"not a cause request: {user[-120:]!r}")
    return int(match.group(1)), match.group(2), match.group(3).strip()


class ScriptedCauses:
    """Callable for the fake server (``FakeRequest``) and for ``ask(messages)``."""

    def __init__(
        self,
        table: dict[tuple[str, int], list[int]] | None = None,
        default: Callable[[int], list[int]] | None = None,
    ):
        self.table = dict(table or {})
        self.default = default or (lambda target: [target])
        self.calls: collections.Counter = collections.Counter()
        self._lock = threading.Lock()

    def answer(self, user: str) -> str:
        target, _, text = cause_question(user)
        with self._lock:
            self.calls[(text, target)] += 1
        causes = self.table.get((text, target), self.default(target))
        return json.dumps({"reasoning": "台本の答え。", "causes": causes}, ensure_ascii=False)

    def __call__(self, req) -> str:
        if isinstance(req, list):  # ask(messages)
            return self.answer(req[-1]["content"])
        return self.answer(req.user)
