"""A scripted judge whose reasoning names the decision it explains, for the tests of the stored
and shown reasons (tests/integration/test_compare_board.py, tests/integration/test_compare_page.py).

:class:`ScriptedJudge` (tests/fakes/judge_responder.py) gives one reasoning to every
entailment; here each answer's ``reasoning`` is :func:`reason` of its unit and target, so a test
can tell, from the text alone, that each stored reason sits beside the unit and the direction
(the target) it was given for. The reply is built here, over the scripted judge's own answer.
:func:`strip_reasons` turns an entry's stored judge details back into the rows stored before
the reasons were kept.
"""

from __future__ import annotations

import json

import leaderboard as lb
from tests.fakes.judge_responder import ScriptedJudge, request_kind
from tests.fakes.llm_server import FakeRequest


def reason(unit: str, target: str) -> str:
    """The reasoning the judge gives for ``unit`` checked against ``target``."""
    return f"「{unit}」を「{target}」と比べた。"


class ReasoningJudge(ScriptedJudge):
    """:class:`ScriptedJudge` whose entailment answers carry :func:`reason`."""

    def __call__(self, req: FakeRequest) -> str:
        body = super().__call__(req)
        kind, args = request_kind(req)
        if kind != "entail":
            return body
        answer = json.loads(body)  # the default "plain" wrap: the bare JSON
        answer["reasoning"] = reason(*args)
        return json.dumps(answer, ensure_ascii=False)


def strip_reasons(submission_id: str) -> int:
    """Rewrite the stored judge details of ``submission_id`` as they were before the reasons
    were kept (no ``unit_reasons`` / ``ref_unit_reasons``); the number of rows rewritten."""
    db = lb.open_db()
    rows = db.query(
        "SELECT i.score_id, i.item_index, i.details FROM item_scores i "
        "JOIN scores s ON s.id = i.score_id "
        "WHERE s.submission_id = ? AND s.metric_group = 'judge'",
        [submission_id],
    )
    with db.write() as cur:
        for score_id, index, details in rows:
            old = {
                k: v
                for k, v in json.loads(details).items()
                if k not in ("unit_reasons", "ref_unit_reasons")
            }
            cur.execute(
                "UPDATE item_scores SET details = ? WHERE score_id = ? AND item_index = ?",
                [json.dumps(old, ensure_ascii=False), score_id, index],
            )
    db.invalidate()
    return len(rows)
