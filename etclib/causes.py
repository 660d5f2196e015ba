"""The cause layer (docs/causes.md): which utterances an ETC transcription's state comes from.

After RECCON (Poria et al., "Recognizing Emotion Cause in Conversations", Cognitive Computation
2021; github.com/declare-lab/RECCON). For an item ``(dialogue_id, turn, role)`` the *cause set* is
the set of utterances of the dialogue so far, the target utterance included (RECCON never uses
later turns), that the author's emotion transcription is about: what the stated emotion or
intention was felt about or in response to. An empty set means "not in the dialogue".

**Cause types.** RECCON's five types, derived here from the cause set of a target spoken by
participant X (the other participant is the partner):

- ``no-context`` (RECCON type 1): the cause is in the target utterance itself: the speaker
  names what they feel about in the utterance they are speaking; the set is exactly {target};
- ``inter-personal`` (type 2, "inter-personal emotional influence"): the cause is in the
  partner's utterances: an event or concept the partner mentioned (2a, trigger events) or the
  partner's own emotion (2b, emotional dependency); the set holds partner utterances and no
  earlier utterance of X (the target may be in it too);
- ``self-contagion`` (type 3): the cause is in X's own earlier utterances: a mood or topic X set
  up before persists; the set holds earlier utterances of X and no partner utterance;
- ``hybrid`` (type 4): types 2 and 3 together: partner utterances and earlier utterances of X;
- ``latent`` (type 5, "unmentioned latent cause"): no utterance of the dialogue so far holds
  the cause (the empty set).

:func:`cause_type` gives this one type per item, a partition: the context part decides, and
``no-context`` means the cause lies *solely* in the target. RECCON itself annotates a list of
type labels per utterance, one per cause: ``no-context`` whenever the target is among the causes,
plus the type of the context part. :func:`reccon_labels` gives that list, so shares can be
counted RECCON's way (its Table 2 shares are over type labels; see :data:`RECCON_SHARES`).

**Storage** (the studies database, ``ETC_STUDIES_DB``: a DuckDB file or a ``postgresql://`` URL,
beside the judge-vs-human studies):

- ``cause_runs``: one row per LLM run: run id, signature (provider, model, prompt name, version
  and hash, decoding settings, etclib version), split, item counts, time;
- ``cause_labels``: one row per (source, source id, item): ``source`` is ``llm`` (``source_id``
  the run id) or ``human`` (``source_id`` the annotator id, whose code is stored only as a hash
  in :mod:`etclib.annotation`'s ``annotators`` table); ``causes`` the comma-joined positions
  (1..10, ``''`` for latent; NULL when an LLM answer was unusable), ``cause_type``, the raw answer;
- ``cause_sample``: the items people label, drawn by an admin (:func:`draw_sample`).

**Sources.** :func:`label_causes` asks an LLM through the scoring judge's stack (providers with
the ``causes`` JSON schema, answer cache, retries; a rerun or a resumed run costs no call for
what was answered). People label in the site with the annotator codes of
:mod:`etclib.annotation` (:func:`next_item`, :func:`record_causes`): every item of the sample is
handed out until it has :data:`ANNOTATORS_PER_ITEM` answers, items with fewer answers first. The
*human majority* of an item (2 or more answers) marks a candidate as a cause when more than half
of the answers mark it; its type is derived from that set. :func:`partner_reference` is a
lexical proxy that needs nothing: whether the transcription refers to the partner.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import math
import re
import tomllib
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from pathlib import Path
from string import Template
from typing import Any

import numpy as np
import pandas as pd

from . import __version__, llm, studiesdb
from .agreement import cohen_kappa, confusion_matrix, fleiss_kappa, krippendorff_alpha
from .annotation import annotator_for_code, connect_studies, require_admin
from .corpus import ROLE_LETTER, ROLES, SPLITS, TURNS_PER_DIALOGUE, Corpus, Dialogue, Utterance
from .errors import AnnotationError, ConfigError, JudgeError, TaskError
from .jsonl import dumps_line
from .judge import providers, runner
from .judge.parse import AnswerParseError
from .llm.models import Decoding

#: RECCON's cause types, in its order (type 1..5).
CAUSE_TYPES: tuple[str, ...] = (
    "no-context",
    "inter-personal",
    "self-contagion",
    "hybrid",
    "latent",
)
#: The proxy's two classes (it cannot tell the other four types apart).
PROXY_TYPES: tuple[str, ...] = ("inter-personal", "other")
#: Share (%) of each type label in RECCON's Table 2 (RECCON.pdf in declare-lab/RECCON, commit
#: 579ea8a): DailyDialog part (RECCON-DD, 5,861 annotated utterances) and IEMOCAP part (RECCON-IE,
#: 494). The shares are over type labels, one label per cause (see the module docstring); they
#: equal the label counts of the released data/original_annotation/*.json files.
RECCON_SHARES: dict[str, dict[str, float]] = {
    "RECCON-DD": {
        "no-context": 43.0,
        "inter-personal": 32.0,
        "self-contagion": 9.0,
        "hybrid": 11.0,
        "latent": 5.0,
    },
    "RECCON-IE": {
        "no-context": 35.0,
        "inter-personal": 19.0,
        "self-contagion": 20.0,
        "hybrid": 17.0,
        "latent": 10.0,
    },
}
ANNOTATORS_PER_ITEM = 3
SOURCES: tuple[str, ...] = ("auto", "human", "llm", "proxy")
PROMPT_NAME = "causes"
PROVIDERS: tuple[str, ...] = ("gemini", "openai")
LICENCE = (
    "CC BY-NC 4.0: derived from the ETC corpus (github.com/UEC-InabaLab/ETCDataset), which is "
    "licensed CC BY-NC 4.0; cite the ETC paper and follow the dataset's use guidelines."
)
#: Called with one message list, returns the model's reply text.
Ask = Callable[[list[dict[str, str]]], str]
Key = tuple[int, int, str]


# --- positions and types -----------------------------------------------------------------------


def position(turn: int, role: str) -> int:
    """1-based position of ``(turn, role)`` in a dialogue: turn 1 speaker is 1, listener 2."""
    if role not in ROLES:
        raise AnnotationError(f"Role {role!r} is not one of {', '.join(ROLES)}.")
    if isinstance(turn, bool) or not isinstance(turn, int | np.integer):
        raise AnnotationError(f"Turn must be an integer, got {turn!r}.")
    if not 1 <= turn <= TURNS_PER_DIALOGUE:
        raise AnnotationError(f"Turn {turn} is outside 1..{TURNS_PER_DIALOGUE}.")
    return 2 * (int(turn) - 1) + (1 if role == "speaker" else 2)


def turn_role(pos: int) -> tuple[int, str]:
    """``(turn, role)`` of a 1-based position (the inverse of :func:`position`)."""
    if isinstance(pos, bool) or not 1 <= int(pos) <= 2 * TURNS_PER_DIALOGUE:
        raise AnnotationError(f"Position {pos!r} is outside 1..{2 * TURNS_PER_DIALOGUE}.")
    pos = int(pos)
    return (pos + 1) // 2, ("speaker" if pos % 2 == 1 else "listener")


def _positions(key: Key, causes: Iterable[Any]) -> tuple[int, ...]:
    """Cause positions from ``(turn, role)`` pairs or positions, checked against the target."""
    target = position(key[1], key[2])
    out = set()
    for c in causes:
        p = position(*c) if isinstance(c, tuple | list) else int(c)
        if not 1 <= p <= target:
            raise AnnotationError(
                f"Item {key[0]}/{key[1]}/{key[2]}: cause at position {p} is not among the "
                f"utterances up to the target (1..{target}); later turns are never causes."
            )
        out.add(p)
    return tuple(sorted(out))


def cause_type(key: Key, causes: Iterable[Any]) -> str:
    """The one RECCON type of a cause set (see the module docstring). ``causes`` holds
    ``(turn, role)`` pairs or positions 1..10; the target is ``key = (dialogue, turn, role)``."""
    target = position(key[1], key[2])
    pos = _positions(key, causes)
    if not pos:
        return "latent"
    own = key[2]
    partner = any(turn_role(p)[1] != own for p in pos)
    earlier_own = any(turn_role(p)[1] == own and p < target for p in pos)
    if partner and earlier_own:
        return "hybrid"
    if partner:
        return "inter-personal"
    if earlier_own:
        return "self-contagion"
    return "no-context"


def reccon_labels(key: Key, causes: Iterable[Any]) -> tuple[str, ...]:
    """RECCON's type labels of a cause set: ``no-context`` when the target is a cause, plus the
    context part's type (``inter-personal`` / ``self-contagion`` / ``hybrid``); ``latent``
    for the empty set."""
    target = position(key[1], key[2])
    pos = _positions(key, causes)
    if not pos:
        return ("latent",)
    labels = ["no-context"] if target in pos else []
    context = cause_type(key, [p for p in pos if p != target])
    if context != "latent":
        labels.append(context)
    return tuple(labels)


@dataclass(frozen=True)
class CauseSet:
    """One item's cause utterances from one source, and the type derived from them.

    ``causes`` are ``(turn, role)`` pairs in dialogue order; ``source`` names where they come
    from: ``human majority (n answers)``, ``llm run <id>``, ``human <annotator id>``.
    """

    dialogue_id: int
    turn: int
    role: str
    causes: tuple[tuple[int, str], ...]
    source: str

    @property
    def key(self) -> Key:
        return (self.dialogue_id, self.turn, self.role)

    @property
    def positions(self) -> tuple[int, ...]:
        return tuple(position(t, r) for t, r in self.causes)

    @property
    def cause_type(self) -> str:
        return cause_type(self.key, self.positions)

    @property
    def reccon_labels(self) -> tuple[str, ...]:
        return reccon_labels(self.key, self.positions)


def _join(pos: Sequence[int]) -> str:
    return ",".join(str(p) for p in pos)


def _split(text: str | None) -> tuple[int, ...]:
    return tuple(int(x) for x in (text or "").split(",") if x)


# --- the lexical proxy -------------------------------------------------------------------------

#: Compounds of 相手 that name a third party, not the partner (相談相手 "someone to confide
#: in", 対戦相手 "opponent", 結婚相手 "spouse", ...). 話相手 and 話し相手 are the partner.
THIRD_PARTY_COMPOUNDS = ("相談", "対戦", "結婚", "交際", "取引", "競争", "恋愛", "浮気", "喧嘩")
#: Words that refer to the partner, with why (docs/causes.md has the corpus counts):
#: - 相手 (also お相手, 相手方, 話し相手, 話相手) except in :data:`THIRD_PARTY_COMPOUNDS` compounds:
#:   the prompt-style name of the other participant; 4,025 of the corpus's 9,970 transcriptions
#:   use it;
#: - あいて in kana before a particle or さん (the one kana use in the corpus is the partner; the
#:   particle guard keeps out 空いて "vacant", also written あいて);
#: - あなた / 貴方: the transcription addresses the partner directly (all three uses do);
#: - the partner's role noun: 聞き手 in a speaker's transcription, 話し手 in a listener's.
#: Not counted: 彼 / 彼女 / その人 / その方 / この方 (in the corpus they name people in the
#: narrated story: 坂本龍馬, 息子さんの彼女), 皆さん (people in general), 向こう ("over there";
#: never used for the partner in the corpus).
PARTNER_PATTERNS: dict[str, str] = {
    "相手": "".join(f"(?<!{w})" for w in THIRD_PARTY_COMPOUNDS) + "相手",
    "あいて": r"あいて(?=[のにがはをもとへ]|さん)",
    "あなた": r"あなた|貴方",
}
ROLE_NOUNS = {"speaker": "聞き手", "listener": "話し手"}  # the partner's role, by the author's


def partner_mentions(transcription: str, role: str | None = None) -> list[str]:
    """The words of :data:`PARTNER_PATTERNS` (and the partner's role noun when ``role`` is
    given) found in ``transcription``, in text order."""
    text = transcription or ""
    found: list[tuple[int, str]] = []
    for pattern in PARTNER_PATTERNS.values():
        found += [(m.start(), m.group(0)) for m in re.finditer(pattern, text)]
    if role in ROLE_NOUNS:
        found += [(m.start(), m.group(0)) for m in re.finditer(ROLE_NOUNS[role], text)]
    return [w for _, w in sorted(found)]


def partner_reference(transcription: str, role: str | None = None) -> bool:
    """The lexical proxy: does the transcription refer to the partner? A first, clearly
    approximate stand-in for a partner-caused (inter-personal or hybrid) state."""
    return bool(partner_mentions(transcription, role))


def proxy_type(transcription: str, role: str | None = None) -> str:
    """``inter-personal`` when the transcription refers to the partner, else ``other``."""
    return "inter-personal" if partner_reference(transcription, role) else "other"


def proxy_share(utterances: Iterable[Utterance]) -> dict[str, Any]:
    """The proxy's inter-personal share (%) over ``utterances``: all, per role, and counts."""
    rows = [(u.role, partner_reference(u.transcription, u.role)) for u in utterances]
    out: dict[str, Any] = {"items": len(rows), "inter_personal": sum(y for _, y in rows)}
    out["share"] = 100 * out["inter_personal"] / len(rows) if rows else math.nan
    for r in ROLES:
        sub = [y for role, y in rows if role == r]
        out[r] = 100 * sum(sub) / len(sub) if sub else math.nan
    return out


# --- prompt ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class CausePrompt:
    """The versioned cause prompt (``etclib/prompts/causes.toml``)."""

    name: str
    version: int
    system: str
    instruction: Template
    digest: str

    @property
    def signature(self) -> str:
        return f"{self.name}-v{self.version}-{self.digest[:8]}"

    def messages(self, dialogue: Dialogue, target: Utterance) -> list[dict[str, str]]:
        """Chat messages (system, user) asking for the causes of one item."""
        lines = [
            f"[{u.position}] {u.letter}: {u.text}"
            for u in dialogue.utterances
            if u.position <= target.position
        ]
        user = self.instruction.substitute(
            dialogue="\n".join(lines),
            target=target.position,
            letter=ROLE_LETTER[target.role],
            transcription=target.transcription,
        )
        return [{"role": "system", "content": self.system}, {"role": "user", "content": user}]


@lru_cache(maxsize=1)
def load_prompt() -> CausePrompt:
    """Load and check ``etclib/prompts/causes.toml``."""
    where = f"etclib/prompts/{PROMPT_NAME}.toml"
    try:
        text = resources.files("etclib.prompts").joinpath(f"{PROMPT_NAME}.toml").read_text("utf-8")
    except FileNotFoundError:
        raise TaskError(f"The cause prompt {where} is missing.") from None
    try:
        raw = tomllib.loads(text)
        system, instruction = raw["system"], raw["instruction"]
        name, version = raw["name"], int(raw["version"])
    except (tomllib.TOMLDecodeError, KeyError, ValueError) as exc:
        raise TaskError(
            f"{where} is invalid ({exc}): it needs name, version, system and instruction."
        ) from None
    for slot in ("$dialogue", "$target", "$letter", "$transcription"):
        if slot not in instruction:
            raise TaskError(f"{where}: instruction lacks {slot}.")
    digest = hashlib.sha256(f"{system}\x00{instruction}".encode()).hexdigest()
    return CausePrompt(name, version, system, Template(instruction), digest)


def parse_causes(text: str, target: int) -> tuple[int, ...]:
    """The cause positions in an answer ``{"reasoning": ..., "causes": [1, 3]}``.

    Code fences and text around the object are ignored; duplicates collapse; ``[]`` means the
    cause is not in the dialogue. Raises JudgeError for an unusable answer (no object, no list of
    integers, a number outside 1..``target``).
    """
    match = re.search(r"\{.*\}", text or "", flags=re.S)
    if not match:
        raise JudgeError(f"The answer has no JSON object: {text[:80]!r}.")
    try:
        obj = json.loads(match.group(0))
    except json.JSONDecodeError as exc:
        raise JudgeError(f"The answer is not valid JSON ({exc.msg}): {text[:80]!r}.") from None
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


# --- storage -----------------------------------------------------------------------------------

_SCHEMA = """
CREATE TABLE IF NOT EXISTS cause_runs (
    run_id VARCHAR PRIMARY KEY,
    signature VARCHAR NOT NULL,
    provider VARCHAR NOT NULL,
    model VARCHAR NOT NULL,
    prompt VARCHAR NOT NULL,
    prompt_version INTEGER NOT NULL,
    prompt_hash VARCHAR NOT NULL,
    temperature DOUBLE PRECISION NOT NULL,
    split VARCHAR NOT NULL,
    n_items INTEGER NOT NULL,
    n_labelled INTEGER NOT NULL,
    n_failed INTEGER NOT NULL,
    etclib_version VARCHAR NOT NULL,
    created_at TIMESTAMP NOT NULL
);
CREATE TABLE IF NOT EXISTS cause_labels (
    source VARCHAR NOT NULL,
    source_id VARCHAR NOT NULL,
    dialogue_id INTEGER NOT NULL,
    turn INTEGER NOT NULL,
    role VARCHAR NOT NULL,
    causes VARCHAR,
    cause_type VARCHAR,
    raw VARCHAR NOT NULL,
    labelled_at TIMESTAMP NOT NULL,
    PRIMARY KEY (source, source_id, dialogue_id, turn, role)
);
CREATE TABLE IF NOT EXISTS cause_sample (
    dialogue_id INTEGER NOT NULL,
    turn INTEGER NOT NULL,
    role VARCHAR NOT NULL,
    split VARCHAR NOT NULL,
    position INTEGER NOT NULL,
    seed INTEGER NOT NULL,
    PRIMARY KEY (dialogue_id, turn, role)
);
"""


class _Db:
    """``with _Db(db) as con``: the studies database with the cause tables."""

    def __init__(self, db: str | Path | None, read_only: bool = False):
        self._cm = connect_studies(db, read_only=read_only)

    def __enter__(self):
        con = self._cm.__enter__()
        con.schema("causes", _SCHEMA)
        return con

    def __exit__(self, *exc):
        return self._cm.__exit__(*exc)


# --- LLM labelling -----------------------------------------------------------------------------


class _AskProvider:
    """A judge provider that answers through a plain ``ask(messages) -> text`` function."""

    endpoint = "ask()"

    def __init__(self, name: str, model: str, ask: Ask):
        self.name = name
        self.model = model
        self._ask = ask

    def decoding(self, temperature: float = providers.TEMPERATURE) -> Decoding:
        return llm.decoding(self.name, self.model, temperature=temperature)

    def request(self, kind, messages, *, temperature: float = providers.TEMPERATURE):
        return {
            "client": "ask",
            "model": self.model,
            "messages": messages,
            "temperature": temperature,
        }

    async def complete(self, request: dict[str, Any]) -> providers.Reply:
        return providers.Reply(await asyncio.to_thread(self._ask, request["messages"]))

    async def aclose(self) -> None:
        pass


def _make_provider(settings: runner.JudgeSettings, ask: Ask | None) -> providers.Provider:
    if ask is not None:
        return _AskProvider(settings.provider, settings.model, ask)
    if settings.provider == "openai":
        return providers.OpenAIProvider(
            settings.model, timeout=settings.timeout, thinking=settings.thinking
        )
    return providers.GeminiProvider(
        settings.model, timeout=settings.timeout, thinking=settings.thinking
    )


@dataclass(frozen=True)
class _Answer:
    key: Key
    causes: tuple[int, ...] | None
    raw: str
    cached: bool
    error: str = ""


async def _ask_all(
    items: list[tuple[Dialogue, Utterance]],
    prompt: CausePrompt,
    temperature: float,
    settings: runner.JudgeSettings,
    ask: Ask | None,
) -> list[_Answer]:
    provider = _make_provider(settings, ask)
    try:
        async with runner.Judge(settings, provider=provider, model_option="--model") as judge:

            async def one(d: Dialogue, u: Utterance) -> _Answer:
                def parse(text: str) -> list[int]:
                    try:
                        return list(parse_causes(text, u.position))
                    except JudgeError as exc:
                        raise AnswerParseError(str(exc)) from None  # the runner retries it

                try:
                    answer = await judge.ask(
                        "causes",
                        prompt.signature,
                        prompt.messages(d, u),
                        parse,
                        temperature=float(temperature),
                        fields={"item": list(u.key), "transcription": u.transcription},
                    )
                except runner.RequestFailed as exc:
                    return _Answer(u.key, None, exc.raw, cached=False, error=str(exc))
                return _Answer(u.key, tuple(answer.value), answer.raw, answer.cached)

            return await runner.gather_items(
                judge, [one(d, u) for d, u in items], desc=f"causes {settings.model}"
            )
    finally:
        await provider.aclose()


#: A stored LLM cause run: what was asked (``signature``) and how it went.
CauseRun = runner.LabellingRun


def signature(
    provider: str, model: str, prompt: CausePrompt, temperature: float, thinking: Any = None
) -> str:
    """What a run's labels depend on: provider, model, prompt (name, version, hash), the
    decoding settings as sent, etclib's version."""
    sent = llm.decoding(provider, model, temperature=temperature, thinking=thinking)
    return (
        f"causes|provider:{provider}|model:{model}|prompt:{prompt.signature}"
        f"|{sent.signature()}|etclib:{__version__}"
    )


def _items(corpus: Corpus, split: str, db: str | Path | None) -> list[tuple[Dialogue, Utterance]]:
    if split == "sample":
        keys = sample_keys(db=db)
        if not keys:
            raise TaskError("The cause sample is empty: an admin draws it first (draw_sample).")
        return [(corpus.by_id[k[0]], _utterance(corpus, k)) for k in keys]
    if split == "all":
        dialogues = list(corpus.dialogues)
    elif split in SPLITS:
        dialogues = corpus.split(split)
    else:
        raise TaskError(f"Unknown split {split!r}. Available: {', '.join(SPLITS)}, all, sample.")
    return [(d, u) for d in dialogues for u in d.utterances]


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
    temperature: float = 0.0,
    thinking: Any = None,
    workers: int = 8,
    limit: int | None = None,
    attempts: int = 3,
    backoff: float = 1.0,
    ask: Ask | None = None,
    db: str | Path | None = None,
) -> CauseRun:
    """Ask an LLM for the cause utterances of every item of ``split`` and store the run.

    ``split`` is ``train`` / ``valid`` / ``test`` / ``all``, or ``sample`` (the items people
    label). ``limit`` takes the first N items (the signature says so). Questions go through
    :meth:`etclib.judge.runner.Judge.ask` with the ``causes`` schema: at most ``workers`` calls
    at a time, each answer stored in the judge's answer cache as it arrives, so a rerun, or a run
    resumed after a crash or Ctrl-C, asks only what was not answered. Unusable answers are retried
    (``attempts`` in all) and then stored as unlabelled; a bad key or unknown model stops the run
    with JudgeError and stores nothing. A run with the same signature and split replaces the old.
    """
    prompt = load_prompt()
    items, sig, settings = runner.labelling_run(
        provider,
        model,
        _items(corpus, split, db),
        limit=limit,
        sign=lambda: signature(provider, model, prompt, temperature, thinking),
        workers=workers,
        attempts=attempts,
        backoff=backoff,
        thinking=thinking,
    )
    answers = runner.run_sync(lambda: _ask_all(items, prompt, temperature, settings, ask))
    run = runner.finished_run(
        answers,
        lambda a: a.causes is not None,
        who="LLM",
        what="items",
        signature=sig,
        provider=provider,
        model=model,
        split=split,
    )
    run_id = run.run_id
    rows = pd.DataFrame(
        [
            {
                "source": "llm",
                "source_id": run_id,
                "dialogue_id": a.key[0],
                "turn": a.key[1],
                "role": a.key[2],
                "causes": None if a.causes is None else _join(a.causes),
                "cause_type": None if a.causes is None else cause_type(a.key, a.causes),
                "raw": a.raw,
            }
            for a in answers
        ]
    )
    rows["labelled_at"] = studiesdb.now()
    with _Db(db) as con, con.transaction():
        con.execute("DELETE FROM cause_labels WHERE source = 'llm' AND source_id = ?", [run_id])
        con.execute("DELETE FROM cause_runs WHERE run_id = ?", [run_id])
        con.execute(
            "INSERT INTO cause_runs VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            run.record(prompt, temperature, studiesdb.now()),
        )
        con.insert("cause_labels", rows)
    return run


def list_runs(*, db: str | Path | None = None) -> pd.DataFrame:
    """Stored LLM cause runs, newest first."""
    with _Db(db, read_only=True) as con:
        return con.frame("SELECT * FROM cause_runs ORDER BY created_at DESC, run_id")


def _latest_run(db: str | Path | None) -> str | None:
    runs = list_runs(db=db)
    return None if runs.empty else str(runs.iloc[0]["run_id"])


def run_causes(run_id: str, *, db: str | Path | None = None) -> dict[Key, tuple[int, ...]]:
    """The cause positions of a stored LLM run by item key (unusable answers left out)."""
    with _Db(db, read_only=True) as con:
        if not con.execute("SELECT 1 FROM cause_runs WHERE run_id = ?", [run_id]).fetchone():
            raise JudgeError(f"No cause run {run_id!r}: see `etclib causes` or list_runs().")
        rows = con.execute(
            "SELECT dialogue_id, turn, role, causes FROM cause_labels "
            "WHERE source = 'llm' AND source_id = ? AND causes IS NOT NULL",
            [run_id],
        ).fetchall()
    return {(d, t, r): _split(c) for d, t, r, c in rows}


# --- human labelling ---------------------------------------------------------------------------


def draw_sample(
    admin_token: str | None,
    corpus: Corpus,
    size: int = 100,
    *,
    split: str = "test",
    seed: int = 0,
    db: str | Path | None = None,
) -> int:
    """Add up to ``size`` items of ``split`` to the cause sample (admin only); returns the
    sample's size. Reproducible from ``seed``; items already in the sample stay."""
    require_admin(admin_token)
    if size < 1:
        raise AnnotationError(f"The sample size must be at least 1, got {size}.")
    if split not in SPLITS:
        raise AnnotationError(f"Unknown split {split!r}. Available: {', '.join(SPLITS)}.")
    pool = [u.key for d in corpus.split(split) for u in d.utterances]
    rng = np.random.default_rng(seed)
    chosen = [pool[i] for i in rng.permutation(len(pool))]
    with _Db(db) as con:
        con.serialize("cause_sample")
        have = {
            tuple(r)
            for r in con.execute("SELECT dialogue_id, turn, role FROM cause_sample").fetchall()
        }
        start = con.execute("SELECT coalesce(max(position), 0) FROM cause_sample").fetchone()[0]
        new = [k for k in chosen if k not in have][: max(size - len(have), 0)]
        for i, k in enumerate(new, start=start + 1):
            con.execute("INSERT INTO cause_sample VALUES (?, ?, ?, ?, ?, ?)", [*k, split, i, seed])
        return int(con.execute("SELECT count(*) FROM cause_sample").fetchone()[0])


def sample_keys(*, db: str | Path | None = None) -> list[Key]:
    """The items of the cause sample, in drawing order."""
    with _Db(db, read_only=True) as con:
        rows = con.execute(
            "SELECT dialogue_id, turn, role FROM cause_sample ORDER BY position"
        ).fetchall()
    return [tuple(r) for r in rows]


def next_item(code: str | None, *, db: str | Path | None = None) -> Key | None:
    """The next item of the sample for this annotator, or None when there is none.

    Items the annotator has answered and items that already have
    :data:`ANNOTATORS_PER_ITEM` answers are skipped; among the rest, items with fewer answers
    come first (then drawing order), so every item gets its three annotators before more items
    are started.
    """
    annotator = annotator_for_code(code, db=db)
    with _Db(db, read_only=True) as con:
        row = con.execute(
            """
            SELECT s.dialogue_id, s.turn, s.role
              FROM cause_sample s
              LEFT JOIN cause_labels l
                ON l.source = 'human' AND l.dialogue_id = s.dialogue_id
               AND l.turn = s.turn AND l.role = s.role
             GROUP BY s.dialogue_id, s.turn, s.role, s.position
            HAVING count(l.source_id) < ? AND NOT bool_or(coalesce(l.source_id = ?, false))
             ORDER BY count(l.source_id), s.position LIMIT 1
            """,
            [ANNOTATORS_PER_ITEM, annotator],
        ).fetchone()
    return tuple(row) if row else None


def progress(code: str | None, *, db: str | Path | None = None) -> tuple[int, int]:
    """(items this annotator answered, items in the sample)."""
    annotator = annotator_for_code(code, db=db)
    with _Db(db, read_only=True) as con:
        done = con.execute(
            "SELECT count(*) FROM cause_labels WHERE source = 'human' AND source_id = ?",
            [annotator],
        ).fetchone()[0]
        total = con.execute("SELECT count(*) FROM cause_sample").fetchone()[0]
    return int(done), int(total)


def record_causes(
    code: str | None, key: Key, causes: Iterable[Any], *, db: str | Path | None = None
) -> CauseSet:
    """Store an annotator's cause utterances for a sampled item (empty: not in the dialogue).

    ``causes`` holds ``(turn, role)`` pairs or positions up to the target's. Answering again
    replaces the earlier answer. Raises AccessDenied without a valid code.
    """
    annotator = annotator_for_code(code, db=db)
    key = (int(key[0]), int(key[1]), str(key[2]))
    pos = _positions(key, causes)
    with _Db(db) as con:
        known = con.execute(
            "SELECT 1 FROM cause_sample WHERE dialogue_id = ? AND turn = ? AND role = ?", list(key)
        ).fetchone()
        if not known:
            raise AnnotationError(
                f"Item {key[0]}/{key[1]}/{key[2]} is not in the cause sample: answer only items "
                "that next_item() hands out."
            )
        answer = pd.DataFrame(
            [["human", annotator, *key, _join(pos), cause_type(key, pos), "", studiesdb.now()]],
            columns=[
                "source",
                "source_id",
                "dialogue_id",
                "turn",
                "role",
                "causes",
                "cause_type",
                "raw",
                "labelled_at",
            ],
        )
        con.upsert("cause_labels", answer, ["source", "source_id", "dialogue_id", "turn", "role"])
    return CauseSet(*key, tuple(turn_role(p) for p in pos), f"human {annotator}")


def human_answers(*, db: str | Path | None = None) -> pd.DataFrame:
    """Every human answer: item key, annotator id, causes (positions), type, time; oldest first."""
    with _Db(db, read_only=True) as con:
        df = con.frame(
            "SELECT dialogue_id, turn, role, source_id AS annotator_id, causes, cause_type, "
            "labelled_at FROM cause_labels WHERE source = 'human' "
            "ORDER BY labelled_at, dialogue_id, turn, role, source_id"
        )
    df["causes"] = df["causes"].map(_split)
    return df


def _majority(answers: Sequence[tuple[int, ...]], target: int) -> tuple[int, ...]:
    """Positions marked by more than half of the answers."""
    votes = Counter(p for a in answers for p in a)
    return tuple(p for p in range(1, target + 1) if votes[p] * 2 > len(answers))


def _human_sets(db: str | Path | None) -> dict[Key, list[tuple[int, ...]]]:
    """Each answered item's answers (cause positions), first :data:`ANNOTATORS_PER_ITEM` only."""
    answers = human_answers(db=db)
    return {
        (int(k[0]), int(k[1]), str(k[2])): g["causes"].tolist()[:ANNOTATORS_PER_ITEM]
        for k, g in answers.groupby(["dialogue_id", "turn", "role"], sort=False)
    }


def human_majority(
    *, min_answers: int = 2, db: str | Path | None = None
) -> dict[Key, tuple[int, ...]]:
    """Each item's human majority cause set, for items with ``min_answers`` answers or more
    (the first :data:`ANNOTATORS_PER_ITEM` answers count)."""
    return {
        k: _majority(sets, position(k[1], k[2]))
        for k, sets in _human_sets(db).items()
        if len(sets) >= min_answers
    }


# --- what the site and the leaderboard call ---------------------------------------------------


def cause_utterances(
    dialogue_id: int,
    turn: int,
    role: str,
    *,
    source: str = "auto",
    run_id: str | None = None,
    db: str | Path | None = None,
) -> CauseSet | None:
    """The cause utterances of one item, for highlighting, or None where none are stored.

    ``source``: ``auto`` (the human majority when the item has 2 or more answers, else the LLM
    run ``run_id``, default the newest run), ``human`` or ``llm`` only. The proxy gives no
    utterances, so it is never used here.
    """
    key = (int(dialogue_id), int(turn), str(role))
    return cause_utterances_of([key], source=source, run_id=run_id, db=db).get(key)


def cause_utterances_of(
    keys: Iterable[Key],
    *,
    source: str = "auto",
    run_id: str | None = None,
    db: str | Path | None = None,
) -> dict[Key, CauseSet]:
    """:func:`cause_utterances` of many items (a dialogue's, say), reading the human answers
    and the LLM run once: item key -> its ``CauseSet``, for the items that have one."""
    if source not in ("auto", "human", "llm"):
        raise ConfigError(f"Unknown cause source {source!r} here. Use auto, human or llm.")
    keys = [(int(d), int(t), str(r)) for d, t, r in keys]
    out: dict[Key, CauseSet] = {}
    left = keys
    if source in ("auto", "human"):
        sets = _human_sets(db)
        left = []
        for key in keys:
            answers = sets.get(key, [])
            if len(answers) >= 2:
                majority = _majority(answers, position(key[1], key[2]))
                out[key] = CauseSet(
                    *key,
                    tuple(turn_role(p) for p in majority),
                    f"human majority ({len(answers)} answers)",
                )
            else:
                left.append(key)
        if source == "human":
            return out
    run = (run_id or _latest_run(db)) if left else None
    if run is None:
        return out
    found = run_causes(run, db=db)
    for key in left:
        if key in found:
            out[key] = CauseSet(*key, tuple(turn_role(p) for p in found[key]), f"llm run {run}")
    return out


def cause_types_for_items(
    items: Iterable[Utterance],
    source: str = "auto",
    *,
    run_id: str | None = None,
    db: str | Path | None = None,
) -> pd.DataFrame:
    """One cause type per item, with where it comes from: the leaderboard's breakdown.

    Columns ``dialogue_id, turn, role, cause_type, source``. ``source``:

    - ``auto``: per item, the human majority (2+ answers) when present, else the LLM run
      (``run_id``, default the newest), else the proxy;
    - ``human`` / ``llm``: that source only (items without it get ``cause_type`` None);
    - ``proxy``: the lexical proxy for every item (``inter-personal`` or ``other``).

    ``source`` values in the frame: ``human``, ``llm:<run id>``, ``proxy``, or None.
    """
    if source not in SOURCES:
        raise ConfigError(f"Unknown cause source {source!r}. Available: {', '.join(SOURCES)}.")
    items = list(items)
    human = human_majority(db=db) if source in ("auto", "human") else {}
    run = None
    llm_sets: dict[Key, tuple[int, ...]] = {}
    if source in ("auto", "llm"):
        run = run_id or _latest_run(db)
        llm_sets = run_causes(run, db=db) if run else {}
    rows = []
    for u in items:
        kind, kind_source = None, None
        if u.key in human:
            kind, kind_source = cause_type(u.key, human[u.key]), "human"
        elif u.key in llm_sets:
            kind, kind_source = cause_type(u.key, llm_sets[u.key]), f"llm:{run}"
        elif source in ("auto", "proxy"):
            kind, kind_source = proxy_type(u.transcription, u.role), "proxy"
        rows.append(
            {
                "dialogue_id": u.dialogue_id,
                "turn": u.turn,
                "role": u.role,
                "cause_type": kind,
                "source": kind_source,
            }
        )
    return pd.DataFrame(rows, columns=["dialogue_id", "turn", "role", "cause_type", "source"])


def type_distribution(
    source: str, *, run_id: str | None = None, db: str | Path | None = None
) -> dict[str, Any] | None:
    """Cause-type shares (%) of a stored source, or None when it has no labels.

    ``source`` ``llm`` (``run_id``, default the newest run) or ``human`` (the majority of items
    with 2+ answers). ``types`` are the one-per-item shares of :func:`cause_type`; ``reccon``
    the shares of :func:`reccon_labels` counted RECCON's way (over labels), comparable with
    :data:`RECCON_SHARES`.
    """
    if source == "llm":
        run = run_id or _latest_run(db)
        if run is None:
            return None
        sets, name = run_causes(run, db=db), f"llm:{run}"
    elif source == "human":
        sets, name = human_majority(db=db), "human"
    else:
        raise ConfigError(f"Unknown cause source {source!r}: use llm or human.")
    if not sets:
        return None
    types = Counter(cause_type(k, v) for k, v in sets.items())
    labels = Counter(x for k, v in sets.items() for x in reccon_labels(k, v))
    n_labels = sum(labels.values())
    return {
        "source": name,
        "items": len(sets),
        "types": {t: 100 * types[t] / len(sets) for t in CAUSE_TYPES},
        "reccon": {t: 100 * labels[t] / n_labels for t in CAUSE_TYPES},
    }


# --- agreement ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class CauseAgreement:
    """People with each other, the LLM and the proxy with people (NaN where undefined).

    ``table`` has one row per decision: ``cause utterance`` (each (target, candidate) pair:
    cause yes/no), ``cause type`` (the five types), ``partner involved`` (inter-personal or
    hybrid, yes/no). Columns: ``units``; ``humans``: Krippendorff's alpha (pairs, all answers) or
    Fleiss' kappa (types and partner, items with three answers); ``annotator_vs_others``: the
    yardstick, each answer slot (1st, 2nd, 3rd answer of an item) against the other two's
    consensus (both say yes / name the same type), Cohen's kappa averaged over slots;
    ``llm_vs_majority`` and ``llm_vs_others`` (the LLM against the same consensuses, averaged);
    ``proxy_vs_majority`` (partner row only). Majorities are over items with three answers.
    ``pair_f1`` scores the pair decisions as RECCON scores Causal Emotion Entailment (positive,
    negative and macro F1, :func:`pair_f1`) for the LLM and for each answer slot against the
    human majority; an answer slot is one of the three voters of that majority, so its figures
    are an upper bound of a person's (the κ yardstick sets it against the other two instead).
    """

    n_answers: int
    n_items: int
    n_complete: int
    n_annotators: int
    run_id: str | None
    table: pd.DataFrame
    type_confusion: pd.DataFrame | None
    proxy_confusion: pd.DataFrame | None
    #: RECCON's Causal Emotion Entailment measures on the pair decisions (:func:`pair_f1`):
    #: one row per rater (``who``: ``LLM``, ``answer 1`` .. ``answer 3``) against the human
    #: majority (2 of 3) on the pairs of items with three answers; columns :data:`PAIR_F1_COLUMNS`
    pair_f1: pd.DataFrame | None = None

    @property
    def empty(self) -> bool:
        return self.n_answers == 0


#: Columns of :attr:`CauseAgreement.pair_f1`.
PAIR_F1_COLUMNS = ("who", "pairs", "positives", "f1_positive", "f1_negative", "macro_f1")


def pair_f1(gold: Sequence[bool], pred: Sequence[bool]) -> dict[str, float]:
    """RECCON's Causal Emotion Entailment measures (×100) of pair decisions (target utterance,
    candidate utterance: is the candidate a cause?): ``f1_positive`` (F1 of the class "cause"),
    ``f1_negative`` (F1 of the class "not a cause") and ``macro_f1``, their mean; scikit-learn's
    ``f1_score(gold, pred, pos_label=True)``, ``pos_label=False`` and ``average="macro"``, with a
    ratio whose denominator is 0 taken as 0. NaN for no pairs."""
    g = np.asarray(gold, dtype=bool)
    p = np.asarray(pred, dtype=bool)
    if g.shape != p.shape:
        raise ValueError(f"gold and predictions differ in length: {len(g)} and {len(p)}")
    if not len(g):
        return {"f1_positive": math.nan, "f1_negative": math.nan, "macro_f1": math.nan}

    def f1(tp: int, fp: int, fn: int) -> float:
        return 2 * tp / (2 * tp + fp + fn) if tp + fp + fn else 0.0

    pos = f1(int((g & p).sum()), int((~g & p).sum()), int((g & ~p).sum()))
    neg = f1(int((~g & ~p).sum()), int((g & ~p).sum()), int((~g & p).sum()))
    return {"f1_positive": 100 * pos, "f1_negative": 100 * neg, "macro_f1": 100 * (pos + neg) / 2}


def _kappa(a: Sequence[Any], b: Sequence[Any], labels: Sequence[Any]) -> float:
    return cohen_kappa(list(a), list(b), list(labels)) if len(a) else math.nan


def _mean(xs: Iterable[float]) -> float:
    xs = [x for x in xs if not math.isnan(x)]
    return float(np.mean(xs)) if xs else math.nan


def cause_agreement(
    corpus: Corpus | None = None, run_id: str | None = None, *, db: str | Path | None = None
) -> CauseAgreement:
    """Agreement of the human cause labels, and of an LLM run and the proxy with them.

    ``corpus`` is needed for the proxy (the transcriptions); ``run_id`` names the LLM run (None:
    no LLM columns). See :class:`CauseAgreement` for every figure.
    """
    answers = human_answers(db=db)
    cols = [
        "decision",
        "units",
        "humans",
        "annotator_vs_others",
        "llm_vs_majority",
        "llm_vs_others",
        "proxy_vs_majority",
    ]
    if answers.empty:
        return CauseAgreement(0, 0, 0, 0, run_id, pd.DataFrame(columns=cols), None, None)
    llm_sets = run_causes(run_id, db=db) if run_id else {}
    by_item = {
        (int(k[0]), int(k[1]), str(k[2])): g
        for k, g in answers.groupby(["dialogue_id", "turn", "role"], sort=True)
    }
    annotators = sorted(answers["annotator_id"].unique())
    # Krippendorff's alpha over (item, candidate) pairs, every answer
    units: list[tuple[Key, int]] = []
    for key in by_item:
        units += [(key, p) for p in range(1, position(key[1], key[2]) + 1)]
    given = {
        (a, key): set(c)
        for key, g in by_item.items()
        for a, c in zip(g["annotator_id"], g["causes"], strict=True)
    }
    matrix = [
        [None if (a, k) not in given else int(p in given[(a, k)]) for k, p in units]
        for a in annotators
    ]
    pair_alpha = krippendorff_alpha(matrix) if units else math.nan

    complete = {k: g.iloc[:ANNOTATORS_PER_ITEM] for k, g in by_item.items()}
    complete = {k: g for k, g in complete.items() if len(g) == ANNOTATORS_PER_ITEM}
    slots = range(ANNOTATORS_PER_ITEM)
    others = [[j for j in slots if j != i] for i in slots]

    # pair decisions on complete items
    pair_votes, pair_llm = [], []
    for key, g in complete.items():
        sets = [set(c) for c in g["causes"]]
        for p in range(1, position(key[1], key[2]) + 1):
            pair_votes.append([p in s for s in sets])
            pair_llm.append(p in llm_sets[key] if key in llm_sets else None)
    pv = np.array(pair_votes, dtype=bool).reshape(-1, ANNOTATORS_PER_ITEM)
    pair_major = pv.sum(axis=1) * 2 > ANNOTATORS_PER_ITEM
    pair_row = {
        "decision": "cause utterance",
        "units": len(units),
        "humans": pair_alpha,
        "annotator_vs_others": _mean(
            _kappa(pv[:, i], pv[:, a] & pv[:, b], [False, True])
            for i, (a, b) in zip(slots, others, strict=True)
        ),
    }
    has_llm = np.array([x is not None for x in pair_llm], dtype=bool)
    llm_pairs = np.array([bool(x) for x in pair_llm], dtype=bool)
    f1_rows = []
    if run_id and has_llm.any():
        pair_row["llm_vs_majority"] = _kappa(llm_pairs[has_llm], pair_major[has_llm], [False, True])
        pair_row["llm_vs_others"] = _mean(
            _kappa(llm_pairs[has_llm], (pv[:, a] & pv[:, b])[has_llm], [False, True])
            for a, b in others
        )
        f1_rows.append(
            {
                "who": "LLM",
                "pairs": int(has_llm.sum()),
                "positives": int(pair_major[has_llm].sum()),
                **pair_f1(pair_major[has_llm], llm_pairs[has_llm]),
            }
        )
    if len(pv):
        for i in slots:
            f1_rows.append(
                {
                    "who": f"answer {i + 1}",
                    "pairs": len(pv),
                    "positives": int(pair_major.sum()),
                    **pair_f1(pair_major, pv[:, i]),
                }
            )
    pair_scores = pd.DataFrame(f1_rows, columns=list(PAIR_F1_COLUMNS))

    # cause types on complete items
    keys = list(complete)
    tv = [list(complete[k]["cause_type"]) for k in keys]
    type_row: dict[str, Any] = {"decision": "cause type", "units": len(keys)}
    partner_row: dict[str, Any] = {"decision": "partner involved", "units": len(keys)}
    type_confusion = proxy_confusion = None
    if keys:
        counts = [[row.count(t) for t in CAUSE_TYPES] for row in tv]
        type_row["humans"] = fleiss_kappa(counts)
        partner = [[t in ("inter-personal", "hybrid") for t in row] for row in tv]
        pc = np.array(partner, dtype=bool)
        partner_row["humans"] = fleiss_kappa(
            np.column_stack([pc.sum(axis=1), ANNOTATORS_PER_ITEM - pc.sum(axis=1)])
        )

        type_row["annotator_vs_others"] = _mean(
            _kappa(
                [tv[i][s] for i in range(len(keys)) if tv[i][a] == tv[i][b]],
                [tv[i][a] for i in range(len(keys)) if tv[i][a] == tv[i][b]],
                CAUSE_TYPES,
            )
            for s, (a, b) in zip(slots, others, strict=True)
        )
        partner_row["annotator_vs_others"] = _mean(
            _kappa(pc[:, s], pc[:, a] & pc[:, b], [False, True])
            for s, (a, b) in zip(slots, others, strict=True)
        )
        major_type = {}
        for k, row in zip(keys, tv, strict=True):
            top, n = Counter(row).most_common(1)[0]
            if n * 2 > ANNOTATORS_PER_ITEM:
                major_type[k] = top
        major_partner = pc.sum(axis=1) * 2 > ANNOTATORS_PER_ITEM
        if run_id:
            with_llm = [i for i, k in enumerate(keys) if k in llm_sets]
            llm_type = {k: cause_type(k, llm_sets[k]) for k in keys if k in llm_sets}
            shared = [k for k in keys if k in llm_type and k in major_type]
            type_row["llm_vs_majority"] = _kappa(
                [llm_type[k] for k in shared], [major_type[k] for k in shared], CAUSE_TYPES
            )
            type_row["llm_vs_others"] = _mean(
                _kappa(
                    [llm_type[keys[i]] for i in with_llm if tv[i][a] == tv[i][b]],
                    [tv[i][a] for i in with_llm if tv[i][a] == tv[i][b]],
                    CAUSE_TYPES,
                )
                for a, b in others
            )
            lp = np.array([llm_type[keys[i]] in ("inter-personal", "hybrid") for i in with_llm])
            if with_llm:
                partner_row["llm_vs_majority"] = _kappa(lp, major_partner[with_llm], [False, True])
                partner_row["llm_vs_others"] = _mean(
                    _kappa(lp, (pc[:, a] & pc[:, b])[with_llm], [False, True]) for a, b in others
                )
            if shared:
                type_confusion = confusion_matrix(
                    [major_type[k] for k in shared],
                    [llm_type[k] for k in shared],
                    CAUSE_TYPES,
                    rows="human majority",
                    columns="LLM",
                )
        if corpus is not None:
            proxy = [partner_reference(_utterance(corpus, k).transcription, k[2]) for k in keys]
            partner_row["proxy_vs_majority"] = _kappa(proxy, major_partner, [False, True])
            proxy_confusion = confusion_matrix(
                ["yes" if x else "no" for x in major_partner],
                ["yes" if x else "no" for x in proxy],
                ["yes", "no"],
                rows="human majority: partner involved",
                columns="proxy: refers to the partner",
            )
    table = pd.DataFrame([pair_row, type_row, partner_row]).reindex(columns=cols)
    return CauseAgreement(
        n_answers=len(answers),
        n_items=len(by_item),
        n_complete=len(complete),
        n_annotators=len(annotators),
        run_id=run_id,
        table=table,
        type_confusion=type_confusion,
        proxy_confusion=proxy_confusion,
        pair_f1=pair_scores,
    )


# --- export ------------------------------------------------------------------------------------


def export_records(*, db: str | Path | None = None) -> list[dict[str, Any]]:
    """Every stored cause label as a JSON-able record, annotators anonymised.

    Human annotators become ``annotator-1``, ``annotator-2``, ... in order of their first
    answer (their ids and codes never leave); LLM rows carry their run's signature. Each record:
    ``dialogue_id, turn, role, source, labeller, signature, causes`` (``[turn, role]`` pairs),
    ``cause_type``, ``reccon_labels``. The first record is a header with the licence.
    """
    with _Db(db, read_only=True) as con:
        rows = con.execute(
            "SELECT l.source, l.source_id, l.dialogue_id, l.turn, l.role, l.causes, r.signature, "
            "l.labelled_at FROM cause_labels l LEFT JOIN cause_runs r "
            "ON l.source = 'llm' AND r.run_id = l.source_id "
            "WHERE l.causes IS NOT NULL ORDER BY l.labelled_at, l.dialogue_id, l.turn, l.role, "
            "l.source, l.source_id"
        ).fetchall()
    alias: dict[str, str] = {}
    out: list[dict[str, Any]] = [
        {
            "record": "header",
            "dataset": "ETC cause layer (docs/causes.md)",
            "licence": LICENCE,
            "cause_types": list(CAUSE_TYPES),
            "etclib_version": __version__,
        }
    ]
    for source, source_id, d, t, r, causes, sig, _ in rows:
        key = (int(d), int(t), str(r))
        pos = _split(causes)
        if source == "human":
            labeller = alias.setdefault(source_id, f"annotator-{len(alias) + 1}")
        else:
            labeller = f"llm-run-{source_id}"
        out.append(
            {
                "record": "label",
                "dialogue_id": key[0],
                "turn": key[1],
                "role": key[2],
                "source": source,
                "labeller": labeller,
                "signature": sig,
                "causes": [list(turn_role(p)) for p in pos],
                "cause_type": cause_type(key, pos),
                "reccon_labels": list(reccon_labels(key, pos)),
            }
        )
    return out


def export_jsonl(out: str | Path, *, db: str | Path | None = None) -> int:
    """Write :func:`export_records` to ``out`` as JSON Lines; returns the number of labels."""
    records = export_records(db=db)
    path = Path(out)
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        for rec in records:
            f.write(dumps_line(rec) + "\n")
    return len(records) - 1


# --- RECCON's layout ---------------------------------------------------------------------------

#: The RECCON commit whose data files and README define the layout :func:`reccon_layout` writes
#: (github.com/declare-lab/RECCON, data/original_annotation/dailydialog_train.json and README.md).
RECCON_COMMIT = "579ea8a726f6705f7a3a02f7535b8f5595ec35aa"
#: ETC category -> RECCON's emotion name (its DailyDialog part names joy "happiness").
RECCON_EMOTION = {
    "joy": "happiness",
    "sadness": "sadness",
    "fear": "fear",
    "anger": "anger",
    "surprise": "surprise",
    "disgust": "disgust",
    "neutral": "neutral",
}
#: RECCON's mark for a latent cause (no utterance of the dialogue) in evidence and span lists.
RECCON_LATENT = "b"
EVIDENCE = "expanded emotion cause evidence"
SPAN = "expanded emotion cause span"


def _source_sets(
    source: str, run_id: str | None, db: str | Path | None
) -> tuple[dict[Key, tuple[int, ...]], str]:
    """The cause sets of ``source`` (``human``: the majority of items with 2+ answers; ``llm``:
    run ``run_id``, default the newest) and the source's name."""
    if source == "human":
        return human_majority(db=db), "human majority"
    if source == "llm":
        run = run_id or _latest_run(db)
        if run is None:
            raise ConfigError("No LLM cause run is stored; run `etclib causes` first.")
        return run_causes(run, db=db), f"llm run {run}"
    raise ConfigError(f"Unknown cause source {source!r} for the export: use human or llm.")


def reccon_layout(
    corpus: Corpus,
    *,
    source: str = "human",
    run_id: str | None = None,
    db: str | Path | None = None,
) -> dict[str, list[list[dict[str, Any]]]]:
    """The cause labels of ``source`` in RECCON's JSON layout, as read from
    github.com/declare-lab/RECCON at commit 579ea8a726f6705f7a3a02f7535b8f5595ec35aa
    (:data:`RECCON_COMMIT`): its ``data/original_annotation/dailydialog_train.json`` and the
    README's "Data Format".

    One entry per dialogue with a labelled item, keyed by the dialogue id as a string, holding
    a list with one list of utterance objects (RECCON wraps each dialogue so). Each utterance,
    all ten in dialogue order: ``turn`` (its position, **from 1**: turn 1 speaker is 1, turn 1
    listener 2, as RECCON numbers utterances), ``speaker`` (``A`` opens, ``B`` listens),
    ``utterance`` (the text), ``emotion`` (the aggregated label in RECCON's names, joy being
    ``happiness``; a multi-label item gives its first category in ETC's order, and all of them
    are in ``emotions``), ``emotion transcription`` (ETC's own: what the cause is of). A
    labelled item also has RECCON's three cause fields:

    - ``expanded emotion cause evidence``: the cause utterances' ``turn`` numbers, ascending,
      or ``["b"]`` for a latent cause (ETC's empty set: not in the dialogue);
    - ``expanded emotion cause span``: one span per evidence entry; ETC marks whole utterances,
      so each span is the cause utterance's whole text (``"b"`` for a latent cause);
    - ``type``: RECCON's type labels of the set (:func:`reccon_labels`).

    Unlike RECCON, whose cause fields sit on non-neutral utterances only, ETC asks about the
    transcription of every item, so an item labelled neutral can carry causes too.
    """
    sets, _ = _source_sets(source, run_id, db)
    out: dict[str, list[list[dict[str, Any]]]] = {}
    for d in sorted({k[0] for k in sets}):
        dialogue = corpus.by_id.get(d)
        if dialogue is None:
            raise ConfigError(f"Dialogue {d} has cause labels but is not in the corpus given.")
        text = {u.position: u.text for u in dialogue.utterances}
        rows = []
        for u in sorted(dialogue.utterances, key=lambda u: u.position):
            label = u.label
            row: dict[str, Any] = {
                "turn": u.position,
                "speaker": u.letter,
                "utterance": u.text,
                "emotion": RECCON_EMOTION[label[0]],
                "emotions": [RECCON_EMOTION[c] for c in label],
                "emotion transcription": u.transcription,
            }
            if u.key in sets:
                pos = sets[u.key]
                row[EVIDENCE] = list(pos) if pos else [RECCON_LATENT]
                row[SPAN] = [text[p] for p in pos] if pos else [RECCON_LATENT]
                row["type"] = list(reccon_labels(u.key, pos))
            rows.append(row)
        out[str(d)] = [rows]
    return out


def export_reccon(
    out: str | Path,
    corpus: Corpus,
    *,
    source: str = "human",
    run_id: str | None = None,
    db: str | Path | None = None,
) -> dict[str, Any]:
    """Write :func:`reccon_layout` to ``out`` (JSON, indented as RECCON's files) and the licence
    beside it (``<out>.LICENSE.txt``: the layout has no place for it). Returns the counts."""
    layout = reccon_layout(corpus, source=source, run_id=run_id, db=db)
    path = Path(out)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(layout, ensure_ascii=False, indent=4) + "\n", encoding="utf-8")
    licence = path.with_name(path.name + ".LICENSE.txt")
    licence.write_text(
        f"{LICENCE}\nLayout: RECCON's data/original_annotation (github.com/declare-lab/RECCON, "
        f"commit {RECCON_COMMIT}); see docs/causes.md.\n",
        encoding="utf-8",
    )
    labelled = sum(EVIDENCE in u for d in layout.values() for u in d[0])
    return {"dialogues": len(layout), "labelled": labelled, "licence_file": str(licence)}
