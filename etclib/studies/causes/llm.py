"""An LLM labels the causes of items (RECCON's question), through :mod:`..labelling`."""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import pandas as pd

from etclib.core.errors import JudgeError, TaskError
from etclib.data.corpus import ROLE_LETTER, Corpus, Dialogue, Utterance
from etclib.llm.chat import answer_object
from etclib.studies import db as studiesdb
from etclib.studies import labelling
from etclib.studies.causes.human import sample_keys
from etclib.studies.causes.store import SCHEMA, _join, _split
from etclib.studies.causes.typology import Key, cause_type

PROMPT_NAME = "causes"


@dataclass(frozen=True)
class CausePrompt(labelling.ChatPrompt):
    """The versioned cause prompt (``etclib/data/prompts/causes.toml``)."""

    def messages(self, dialogue: Dialogue, target: Utterance) -> list[dict[str, str]]:
        """Chat messages (system, user) asking for the causes of one item."""
        lines = [
            f"[{u.position}] {u.letter}: {u.text}"
            for u in dialogue.utterances
            if u.position <= target.position
        ]
        return self.chat(
            dialogue="\n".join(lines),
            target=target.position,
            letter=ROLE_LETTER[target.role],
            transcription=target.transcription,
        )


@lru_cache(maxsize=1)
def load_prompt() -> CausePrompt:
    """Load and check ``etclib/data/prompts/causes.toml``."""
    slots = ("dialogue", "target", "letter", "transcription")
    return labelling.load_prompt(PROMPT_NAME, slots, "cause", CausePrompt)


def parse_causes(text: str, target: int) -> tuple[int, ...]:
    """The cause positions in an answer ``{"reasoning": ..., "causes": [1, 3]}`` (``[]``: not in
    the dialogue); JudgeError for an unusable answer."""
    obj = answer_object(text)
    causes = obj.get("causes") if isinstance(obj, dict) else None
    if not isinstance(causes, list) or not all(
        isinstance(x, int) and not isinstance(x, bool) for x in causes
    ):
        raise JudgeError(f'The answer lacks a "causes" list of integers: {text[:80]!r}.')
    bad = [x for x in causes if not 1 <= x <= target]
    if bad:
        raise JudgeError(
            f"The answer names utterance {bad[0]}, outside 1..{target} (the dialogue so far)."
        )
    return tuple(sorted(set(causes)))


#: A stored LLM cause run: what was asked (``signature``) and how it went.
CauseRun = labelling.LabellingRun
STUDY = labelling.Study(
    kind="causes",
    name="causes",
    command="causes",
    who="LLM",
    what="items",
    schema=SCHEMA,
    runs="cause_runs",
    answers="cause_labels",
    of_run="source = 'llm' AND source_id = ?",
)


def _questions(items: list[tuple[Dialogue, Utterance]]) -> list[labelling.Question]:
    prompt = load_prompt()
    return [
        labelling.Question(
            u.key,
            prompt.messages(d, u),
            lambda text, target=u.position: parse_causes(text, target),
            {"item": list(u.key), "transcription": u.transcription},
        )
        for d, u in items
    ]


def _items(corpus: Corpus, split: str, db: str | Path | None) -> list[tuple[Dialogue, Utterance]]:
    if split == "sample":
        keys = sample_keys(db=db)
        if not keys:
            raise TaskError("The cause sample is empty: an admin draws it first (draw_sample).")
        return [(corpus.by_id[k[0]], _utterance(corpus, k)) for k in keys]
    return [
        (d, u)
        for d in labelling.dialogues_of(corpus, split, also=("sample",))
        for u in d.utterances
    ]


def _utterance(corpus: Corpus, key: Key) -> Utterance:
    d = corpus.by_id.get(int(key[0]))
    match = [u for u in (d.utterances if d else ()) if (u.turn, u.role) == (key[1], key[2])]
    if not match:
        raise TaskError(f"No item {key[0]}/{key[1]}/{key[2]} in the corpus.")
    return match[0]


def label_causes(
    corpus: Corpus,
    provider: str,
    model: str,
    *,
    split: str = "test",
    db: str | Path | None = None,
    **options: Any,
) -> CauseRun:
    """Ask an LLM for the cause utterances of every item of ``split`` (a corpus split, ``all``,
    or ``sample``: the items people label) and store the run, as
    :func:`etclib.studies.labeljudge.judge_labels` does. Each answer is cached as it arrives, so
    a rerun, or a run resumed after a crash, asks only what was not answered.
    """
    now = studiesdb.now()

    def row(run: CauseRun, a: labelling.Labelled) -> dict[str, Any]:
        causes = a.value
        return {
            "source": "llm",
            "source_id": run.run_id,
            "dialogue_id": a.key[0],
            "turn": a.key[1],
            "role": a.key[2],
            "causes": None if causes is None else _join(causes),
            "cause_type": None if causes is None else cause_type(a.key, causes),
            "raw": a.raw,
            "labelled_at": now,
        }

    items = _items(corpus, split, db)
    return STUDY.run(_questions, items, load_prompt(), provider, model, split, options, row, db)


def list_runs(*, db: str | Path | None = None) -> pd.DataFrame:
    """Stored LLM cause runs, newest first."""
    return STUDY.list_runs(db)


def _latest_run(db: str | Path | None) -> str | None:
    runs = list_runs(db=db)
    return None if runs.empty else str(runs.iloc[0]["run_id"])


def run_causes(run_id: str, *, db: str | Path | None = None) -> dict[Key, tuple[int, ...]]:
    """The cause positions of a stored LLM run by item key (unusable answers left out)."""
    return {key: _split(c) for key, c in STUDY.answers_of(run_id, "causes", db)}
