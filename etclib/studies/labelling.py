"""An LLM labels study items: what the label judge (:mod:`.labeljudge`) and the cause layer
(:mod:`.causes`) share.

Each study keeps its own prompt (a versioned TOML file under ``etclib/data/prompts/``), its answer
parser and its result table; :class:`Study` runs the rest once for both: it checks the
settings, asks one question per item through :class:`etclib.judge.runner.Judge` (an unusable
answer kept as unlabelled) and stores the run and its rows in one transaction, replacing a run
of the same signature.
"""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from string import Template
from typing import Any

import pandas as pd

from etclib import __version__, llm
from etclib.core.errors import ConfigError, JudgeError, TaskError
from etclib.core.registry import unknown
from etclib.data import prompts
from etclib.data.corpus import SPLITS, Corpus, Dialogue
from etclib.judge import providers, runner
from etclib.judge.parse import AnswerParseError
from etclib.llm.models import Decoding
from etclib.studies import db as studiesdb

#: Called with one message list, returns the model's reply text.
Ask = Callable[[list[dict[str, str]]], str]
Key = tuple[int, int, str]


@dataclass(frozen=True)
class ChatPrompt:
    """A versioned chat prompt (``etclib/data/prompts/<name>.toml``): system text and instruction."""

    name: str
    version: int
    system: str
    instruction: Template
    digest: str

    @property
    def signature(self) -> str:
        return f"{self.name}-v{self.version}-{self.digest[:8]}"

    def chat(self, **slots: Any) -> list[dict[str, str]]:
        """Chat messages (system, user) with the instruction's ``$slots`` filled in."""
        user = self.instruction.substitute(**slots)
        return [{"role": "system", "content": self.system}, {"role": "user", "content": user}]


def load_prompt(name: str, slots: Sequence[str], what: str, kind: type[ChatPrompt]) -> Any:
    """Load and check ``etclib/data/prompts/<name>.toml`` (:func:`etclib.data.prompts.load`) as a
    ``kind``; ``what`` names it in the message when it is missing, ``slots`` are the ``$names``
    its instruction must hold."""
    p = prompts.load(
        f"data/prompts/{name}.toml",
        slots={"instruction": slots},
        hashed=("system", "instruction"),
        what=f"{what} prompt",
    )
    return kind(p.name, p.version, p.data["system"], p.template("instruction"), p.digest)


def signature(
    study: str, provider: str, model: str, prompt: ChatPrompt, temperature: float, thinking: Any
) -> str:
    """What a run's labels depend on, sacrebleu style: provider, model, prompt (name, version,
    hash), the decoding settings as sent (``temperature:default`` for a model that takes none,
    the thinking setting), etclib's version."""
    sent = llm.decoding(provider, model, temperature=temperature, thinking=thinking)
    return (
        f"{study}|provider:{provider}|model:{model}|prompt:{prompt.signature}"
        f"|{sent.signature()}|etclib:{__version__}"
    )


class _AskProvider:
    """A judge provider that answers through a plain ``ask(messages) -> text`` function."""

    endpoint = "ask()"

    def __init__(self, name: str, model: str, ask: Ask):
        self.name = name
        self.model = model
        self._ask = ask

    def decoding(self, temperature: float = providers.TEMPERATURE) -> Decoding:
        return llm.decoding(self.name, self.model, temperature=temperature)

    def request(
        self,
        kind: str,
        messages: list[dict[str, str]],
        *,
        temperature: float = providers.TEMPERATURE,
    ) -> dict[str, Any]:
        # "client" keeps these answers apart from the real provider's in the cache
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


@dataclass(frozen=True)
class Question:
    """One item to ask about: its messages, the parser of an answer (raising JudgeError for an
    unusable one), and the fields the answer cache records beside it."""

    key: Key
    messages: list[dict[str, str]]
    parse: Callable[[str], Any]
    fields: dict[str, Any]


@dataclass(frozen=True)
class Labelled:
    """One item's answer: ``value`` the parsed answer, None when it was unusable."""

    key: Key
    value: Any
    raw: str
    cached: bool
    error: str = ""


def _retried(parse: Callable[[str], Any]) -> Callable[[str], Any]:
    def parse_or_retry(text: str) -> Any:
        try:
            return parse(text)
        except JudgeError as exc:
            raise AnswerParseError(str(exc)) from None  # the runner retries it

    return parse_or_retry


async def ask_all(
    questions: Sequence[Question],
    kind: str,
    prompt: ChatPrompt,
    temperature: float,
    settings: runner.JudgeSettings,
    ask: Ask | None,
    *,
    desc: str,
) -> list[Labelled]:
    """Ask every question through the judge runner (``kind``: the answer schema of
    :data:`etclib.judge.providers.SCHEMAS`), answers in question order."""
    provider = (
        _AskProvider(settings.provider, settings.model, ask)
        if ask is not None
        else providers.build(
            settings.provider, settings.model, timeout=settings.timeout, thinking=settings.thinking
        )
    )
    try:
        async with runner.Judge(settings, provider=provider, model_option="--model") as judge:

            async def one(q: Question) -> Labelled:
                try:
                    answer = await judge.ask(
                        kind,
                        prompt.signature,
                        q.messages,
                        _retried(q.parse),
                        temperature=float(temperature),
                        fields=q.fields,
                    )
                except runner.RequestFailed as exc:
                    return Labelled(q.key, None, exc.raw, cached=False, error=str(exc))
                return Labelled(q.key, answer.value, answer.raw, answer.cached)

            return await runner.gather_items(judge, [one(q) for q in questions], desc=desc)
    finally:
        await provider.aclose()


def runs_table(table: str) -> str:
    """The ``CREATE TABLE`` statement of a study's run table (one row per LLM run)."""
    return f"""
CREATE TABLE IF NOT EXISTS {table} (
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
);"""


@dataclass(frozen=True)
class LabellingRun:
    """A stored LLM labelling run (emotion categories, causes): what was asked (``signature``)
    and how it went."""

    run_id: str
    signature: str
    provider: str
    model: str
    split: str
    n_items: int
    n_labelled: int
    n_failed: int
    n_cached: int = 0
    errors: tuple[str, ...] = field(default=())

    def record(self, prompt: Any, temperature: float, created_at: Any) -> list[Any]:
        """The run's row as both studies' run tables store it (``label_runs``, ``cause_runs``)."""
        return [
            self.run_id,
            self.signature,
            self.provider,
            self.model,
            prompt.name,
            prompt.version,
            prompt.digest,
            float(temperature),
            self.split,
            self.n_items,
            self.n_labelled,
            self.n_failed,
            __version__,
            created_at,
        ]


@dataclass(frozen=True)
class Options:
    """How a run asks: at most ``workers`` calls at a time; ``limit``: the first N items only
    (a trial run; its signature says so); ``ask`` replaces the provider's client (tests)."""

    temperature: float = 0.0
    thinking: Any = None
    workers: int = 8
    limit: int | None = None
    attempts: int = 3
    backoff: float = 1.0
    ask: Ask | None = None


@dataclass(frozen=True)
class Study:
    """What differs between the labelling studies' runs: the answer schema ``kind``, names and
    words, and where runs are stored (``of_run``: the condition, one ``?`` for the run id,
    that picks one run's answers)."""

    kind: str
    name: str
    command: str
    who: str
    what: str
    schema: str
    runs: str
    answers: str
    of_run: str

    def store(
        self,
        run: LabellingRun,
        prompt: ChatPrompt,
        temperature: float,
        rows: pd.DataFrame,
        db: str | Path | None,
    ) -> None:
        """Store a run and its answer rows in one transaction, replacing a run with its id."""
        with studiesdb.connect(db) as con, con.transaction():
            con.schema(self.name, self.schema)
            con.execute(f"DELETE FROM {self.answers} WHERE {self.of_run}", [run.run_id])
            con.execute(f"DELETE FROM {self.runs} WHERE run_id = ?", [run.run_id])
            con.execute(
                f"INSERT INTO {self.runs} VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                run.record(prompt, temperature, studiesdb.now()),
            )
            con.insert(self.answers, rows)

    def run(
        self,
        questions_of: Callable[[list[Any]], list[Question]],
        items: Sequence[Any],
        prompt: ChatPrompt,
        provider: str,
        model: str,
        split: str,
        options: dict[str, Any],
        row: Callable[[LabellingRun, Labelled], dict[str, Any]],
        db: str | Path | None,
    ) -> LabellingRun:
        """A whole run: check the settings, ask one question per item kept (``questions_of``
        makes them), store the run and one answer-table row per answer (``row``)."""
        o = Options(**options)
        if provider not in llm.providers.REGISTRY:
            raise ConfigError(unknown("provider", provider, llm.providers.names()))
        if not model.strip():
            raise ConfigError("A model name is needed: --model NAME (e.g. gemini-2.5-flash).")
        items = list(items)
        if o.limit is not None:
            if o.limit < 1:
                raise ConfigError(f"--limit must be at least 1, got {o.limit}.")
            items = items[: o.limit]
        try:
            sig = signature(self.name, provider, model, prompt, o.temperature, o.thinking)
        except ConfigError as exc:
            raise ConfigError(f"--thinking: {exc}") from None
        if o.limit is not None:
            sig += f"|limit:{o.limit}"
        settings = runner.JudgeSettings(
            provider=provider,
            model=model,
            concurrency=max(1, o.workers),
            max_attempts=max(1, o.attempts),
            backoff=o.backoff,
            thinking=o.thinking,
        )
        questions = questions_of(items)
        desc = f"{self.command} {model}"
        answers = runner.run_sync(
            lambda: ask_all(questions, self.kind, prompt, o.temperature, settings, o.ask, desc=desc)
        )
        failed = [a for a in answers if a.value is None]
        if len(failed) == len(answers):
            first = failed[0].error if failed else "no items"
            raise JudgeError(
                f"The {self.who} labelled none of {len(answers)} {self.what} ({first}). Nothing "
                "was stored; check the model name, the endpoint and the key."
            )
        run = LabellingRun(
            run_id=hashlib.sha256(f"{sig}|split:{split}".encode()).hexdigest()[:12],
            signature=sig,
            provider=provider,
            model=model,
            split=split,
            n_items=len(answers),
            n_labelled=len(answers) - len(failed),
            n_failed=len(failed),
            n_cached=sum(a.cached for a in answers),
            errors=tuple(a.error for a in failed[:5]),
        )
        self.store(run, prompt, o.temperature, pd.DataFrame([row(run, a) for a in answers]), db)
        return run

    def list_runs(self, db: str | Path | None) -> pd.DataFrame:
        """The stored runs, newest first (one row per run, with its signature and counts)."""
        with studiesdb.connect(db, read_only=True) as con:
            con.schema(self.name, self.schema)
            return con.frame(f"SELECT * FROM {self.runs} ORDER BY created_at DESC, run_id")

    def answers_of(
        self, run_id: str, column: str, db: str | Path | None
    ) -> list[tuple[tuple[int, int, str], str]]:
        """A stored run's usable answers: (item key, the answer table's ``column``) pairs."""
        with studiesdb.connect(db, read_only=True) as con:
            con.schema(self.name, self.schema)
            if not con.execute(f"SELECT 1 FROM {self.runs} WHERE run_id = ?", [run_id]).fetchone():
                raise JudgeError(
                    f"No {self.command} run {run_id!r}: see `etclib {self.command}` or list_runs()."
                )
            rows = con.execute(
                f"SELECT dialogue_id, turn, role, {column} FROM {self.answers} "
                f"WHERE {self.of_run} AND {column} IS NOT NULL",
                [run_id],
            ).fetchall()
        return [((d, t, r), value) for d, t, r, value in rows]


def dialogues_of(corpus: Corpus, split: str, *, also: Sequence[str] = ()) -> list[Dialogue]:
    """The dialogues of ``split`` (a corpus split, or ``all``) for a labelling run; ``also`` names
    the study's own extra choices (handled by the caller) for the message of an unknown split."""
    if split == "all":
        return list(corpus.dialogues)
    if split not in SPLITS:
        choices = ", ".join((*SPLITS, "all", *also))
        raise TaskError(f"Unknown split {split!r}. Available: {choices}.")
    return corpus.split(split)
