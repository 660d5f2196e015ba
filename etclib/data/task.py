"""Task items and prompts: one item per utterance, keyed ``(dialogue_id, turn, role)``.

An item's context is the dialogue up to and including its utterance, with roles shown as
``A`` (the speaker role, who opens the dialogue) and ``B`` (the listener role). Prompts come from
the versioned template ``etclib/data/prompts/transcription.toml``; its version and a hash of its
text are part of every prediction run's signature.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass
from functools import cache
from string import Template

from etclib.data import prompts
from etclib.data.corpus import CATEGORY_TO_JA, ROLE_LETTER, ROLES, SPLITS, Corpus, Dialogue
from etclib.core.errors import TaskError

Key = tuple[int, int, str]


@dataclass(frozen=True, slots=True)
class Line:
    """One line of a dialogue as a prompt shows it: ``A: ...`` or ``B: ...``."""

    letter: str
    text: str


@dataclass(frozen=True, slots=True)
class Item:
    """One task item: infer the transcription of the last line's author."""

    dialogue_id: int
    turn: int
    role: str
    split: str
    context: tuple[Line, ...]
    reference: str
    label: tuple[str, ...]
    dialogue_emotion: str = ""

    @property
    def key(self) -> Key:
        return (self.dialogue_id, self.turn, self.role)

    @property
    def target(self) -> str:
        return ROLE_LETTER[self.role]

    @property
    def utterance(self) -> str:
        return self.context[-1].text


def dialogue_items(dialogue: Dialogue) -> list[Item]:
    """The ten items of one dialogue, in order."""
    lines: list[Line] = []
    items = []
    for u in dialogue.utterances:
        lines.append(Line(u.letter, u.text))
        items.append(
            Item(
                dialogue_id=dialogue.dialogue_id,
                turn=u.turn,
                role=u.role,
                split=dialogue.split,
                context=tuple(lines),
                reference=u.transcription,
                label=u.label,
                dialogue_emotion=dialogue.dialogue_emotion,
            )
        )
    return items


def items(corpus: Corpus, split: str = "test") -> list[Item]:
    """Every item of a split, ordered by dialogue, turn, then speaker before listener."""
    if split not in SPLITS:
        raise TaskError(f"Unknown split {split!r}. Available: {', '.join(SPLITS)}.")
    # built once per corpus object (reading a file and scoring it both ask), kept on the frozen
    # corpus as functools.cached_property keeps its values; the items are immutable
    memo = corpus.__dict__.setdefault("_items", {})
    if split not in memo:
        memo[split] = tuple(it for d in corpus.split(split) for it in dialogue_items(d))
    return list(memo[split])


def chat_item(lines: list[tuple[str, str]]) -> Item:
    """An item from free text, as the chat page has it: ``[("A", "..."), ("B", "..."), ...]``."""
    if not lines:
        raise TaskError("A conversation needs at least one utterance.")
    context = []
    for letter, text in lines:
        if letter not in ("A", "B"):
            raise TaskError(f"Unknown participant {letter!r}: use 'A' or 'B'.")
        context.append(Line(letter, text))
    role = ROLES[0] if context[-1].letter == "A" else ROLES[1]
    turn = sum(1 for ln in context if ln.letter == "A") or 1
    return Item(0, turn, role, "chat", tuple(context), "", ())


# --- prompts ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class PromptTemplate:
    """A few-shot chat prompt (the task's, the ERC classifier's): system text, an instruction
    with ``$examples``, and the header and template of one solved example."""

    name: str
    version: int
    system: str
    instruction: Template
    examples_header: str
    example: Template
    digest: str

    @property
    def signature(self) -> str:
        return f"{self.name}-v{self.version}-{self.digest[:8]}"


@cache
def prompt_template(name: str = "transcription") -> PromptTemplate:
    """Load a versioned template from ``etclib/data/prompts/NAME.toml`` (:func:`etclib.data.prompts.load`)."""
    fields = ("system", "instruction", "examples_header", "example")
    p = prompts.load(f"data/prompts/{name}.toml", required=("name", "version", *fields), hashed=fields)
    return PromptTemplate(
        name=p.name,
        version=p.version,
        system=p.data["system"],
        instruction=p.template("instruction"),
        examples_header=p.data["examples_header"],
        example=p.template("example"),
        digest=p.digest,
    )


def render_dialogue(context: tuple[Line, ...]) -> str:
    return "\n".join(f"{ln.letter}: {ln.text}" for ln in context)


def build_messages(
    item: Item, shots: list[Item] | tuple[Item, ...] = (), template: PromptTemplate | None = None
) -> list[dict[str, str]]:
    """Chat messages (system, user) asking for ``item``'s answer, with k solved examples (a
    template's example names a shot's ``$transcription`` or its ``$labels``)."""
    t = template or prompt_template()
    examples = ""
    if shots:
        blocks = [
            t.example.substitute(
                number=i + 1,
                dialogue=render_dialogue(s.context),
                target=s.target,
                transcription=s.reference,
                labels=json.dumps([CATEGORY_TO_JA[c] for c in s.label], ensure_ascii=False),
            )
            for i, s in enumerate(shots)
        ]
        examples = t.examples_header + "".join(blocks)
    user = t.instruction.substitute(
        target=item.target, dialogue=render_dialogue(item.context), examples=examples
    )
    return [{"role": "system", "content": t.system}, {"role": "user", "content": user}]


def choose_shots(item: Item, pool: list[Item], k: int, seed: int = 0) -> list[Item]:
    """k solved train examples for ``item`` from ``pool``, drawn from the seed and the item's
    key only, so a resumed or re-ordered run picks the same examples."""
    if k <= 0:
        return []
    candidates = [p for p in pool if p.split == "train" and p.dialogue_id != item.dialogue_id]
    if len(candidates) < k:
        raise TaskError(f"Only {len(candidates)} train items available for {k}-shot prompts.")
    rng = random.Random(f"{seed}:{item.dialogue_id}:{item.turn}:{item.role}")
    return rng.sample(candidates, k)
