"""Batch judging: the uncached questions of a run answered through the provider's batch
interface (OpenAI's Batch API, Gemini's batch mode), at half the online price.

``--batch`` runs :func:`prefill` before the online judging of the same items: uncached
decompositions as one job, then the entailments of the units now cached. Each request is the one
the online path sends (same cache key) and each answer is cached as an online one would be;
whatever a batch did not answer is left to the online pass. A record in ``judge_batches/``
lets a stopped run read the same jobs again. See docs/judge.md, "Half the price".
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from etclib import llm
from etclib.core import config, faultpoints
from etclib.core.errors import JudgeError, JudgeServiceError
from etclib.judge.parse import AnswerParseError
from etclib.judge.providers import settings_hint
from etclib.judge.runner import AnswerCut, Judge, Question
from etclib.llm import models
from etclib.llm.providers import Batch, ProviderSpec
from etclib.llm.providers.base import BatchState

__all__ = ["BatchReport", "BatchStore", "chunks", "prefill", "request_set"]

#: the state records' folder, beside the judge cache
FOLDER = "judge_batches"


@dataclass
class BatchReport:
    """What the batch path did in one run: one row per stage, tokens and prices."""

    provider: str
    model: str
    stages: list[dict[str, Any]] = field(default_factory=list)
    input_tokens: int = 0
    output_tokens: int = 0

    @property
    def answered(self) -> int:
        return sum(s["answered"] for s in self.stages)

    def costs(self) -> tuple[float | None, float | None]:
        """(batch cost, online cost) in USD of the answers the batches gave (None: unpriced)."""
        return (
            models.batch_cost(self.model, self.input_tokens, self.output_tokens),
            models.cost(self.model, self.input_tokens, self.output_tokens),
        )

    def cost_line(self) -> str:
        """``cost saved ≈ $X (batch: $Y instead of $Z)``, or why there is no figure."""
        batch, online = self.costs()
        if not self.answered:
            return "cost saved: none (the batches answered no question)"
        if batch is None or online is None:
            return f"cost saved: unknown (no batch price for model {self.model})"
        return f"cost saved ≈ ${online - batch:.4f} (batch: ${batch:.4f} instead of ${online:.4f})"

    def as_dict(self) -> dict[str, Any]:
        batch, online = self.costs()
        return {
            "provider": self.provider,
            "model": self.model,
            "stages": self.stages,
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "batch_cost_usd": None if batch is None else round(batch, 6),
            "online_cost_usd": None if online is None else round(online, 6),
        }


def request_set(provider: str, model: str, keys: Sequence[str]) -> str:
    """The name of a set of requests: a hash of the provider, the model and the sorted keys."""
    text = "\n".join([provider, model, *sorted(keys)])
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:32]


class BatchStore:
    """The state records of submitted batch jobs: one JSON file per request set in
    ``judge_batches/`` beside the SQLite judge cache (under ``ETC_CACHE_DIR`` for a
    PostgreSQL one)."""

    def __init__(self, folder: Path):
        self.folder = folder

    @classmethod
    def beside(cls, cache: Any) -> BatchStore:
        path = getattr(cache, "path", None)
        return cls((path.parent if path is not None else config.cache_dir()) / FOLDER)

    def _file(self, set_id: str) -> Path:
        return self.folder / f"{set_id}.json"

    def load(self, set_id: str) -> dict[str, Any] | None:
        try:
            return json.loads(self._file(set_id).read_text(encoding="utf-8"))
        except FileNotFoundError:
            return None
        except (OSError, ValueError) as exc:
            raise JudgeError(
                f"{self._file(set_id)}: cannot read the batch record ({exc}). Delete it to "
                "submit the batch again (the job it named, if any, is then not read)."
            ) from exc

    def save(self, set_id: str, record: dict[str, Any]) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        tmp = self._file(set_id).with_suffix(".tmp")
        tmp.write_text(json.dumps(record, indent=1), encoding="utf-8")
        tmp.replace(self._file(set_id))  # whole or absent: a kill never leaves half a record

    def done(self, set_id: str) -> None:
        self._file(set_id).unlink(missing_ok=True)


def batch_spec(provider: str) -> ProviderSpec:
    """The spec of ``provider`` if it has a batch interface; JudgeError naming those that do."""
    spec = llm.providers.get(provider)
    if not isinstance(spec, Batch):
        able = [s.name for s in llm.providers.specs(Batch)]
        raise JudgeError(
            f"--batch: the {spec.label} judge has no batch interface in etclib. Run without "
            f"--batch, or judge with a provider that has one (--judge-provider "
            f"{' or '.join(able)})."
        )
    return spec


async def _api(judge: Judge, spec: ProviderSpec, what: str, fn: Any, *args: Any) -> Any:
    """``fn(*args)``, a call of the batch interface, off the event loop; a transient fault is
    retried as online, any other stops the run (a job already sent is resumed by the next)."""
    s = judge.settings
    attempt = 0
    while True:
        attempt += 1
        try:
            return await asyncio.to_thread(fn, *args)
        except Exception as exc:  # noqa: BLE001 - classified below
            fault = llm.classify(exc, where=spec.endpoint())
            if fault.transient and attempt < s.max_attempts:
                await asyncio.sleep(s.policy().delay(attempt, fault.retry_after))
                continue
            err = JudgeServiceError(
                f"The {spec.label} judge's batch interface failed ({what}): {fault.public}. "
                f"Stopped; {settings_hint(spec.name, '--judge-model')}. A batch already sent is read "
                "again when the same command runs again.",
                detail=fault.detail,
                kind=fault.kind,
                status=fault.status,
            )
            llm.log.warning("%s [ref %s]: %s", spec.label, err.ref, fault.detail)
            raise err from exc


def _note(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


async def prefill(
    judge: Judge, predictions: Sequence[str], references: Sequence[str]
) -> BatchReport:
    """Answer the uncached decompositions, then the uncached entailments, of these items
    through the provider's batch interface, into ``judge``'s cache (see the module
    docstring). Inside ``async with judge``; a :class:`BatchReport`."""
    provider = judge.provider
    spec = batch_spec(provider.name)
    report = BatchReport(provider.name, provider.model)
    client = await asyncio.to_thread(spec.client, timeout=judge.settings.timeout)
    store = BatchStore.beside(judge.cache)
    try:
        texts = dict.fromkeys(t.strip() for t in (*references, *predictions) if t and t.strip())
        decompose = [judge.question("decompose", text=t) for t in texts]
        await _stage(judge, spec, client, store, "decompose", decompose, report)
        entail: list[Question] = []
        for pred, ref in zip(predictions, references, strict=True):
            ref_units = await _units(judge, ref)
            pred_units = await _units(judge, pred)
            if not ref_units or not pred_units:  # none, or not answered: asked online
                continue
            entail += [judge.question("entail", unit=u, target=ref.strip()) for u in pred_units]
            entail += [judge.question("entail", unit=u, target=pred.strip()) for u in ref_units]
        await _stage(judge, spec, client, store, "entail", entail, report)
    finally:
        close = getattr(client, "close", None)
        if close is not None:
            await asyncio.to_thread(close)
    _note(f"judge batch: {report.cost_line()}")
    return report


async def _units(judge: Judge, text: str) -> list[str] | None:
    """The cached units of ``text`` ([] for a blank one), None when not in the cache."""
    if not text or not text.strip():
        return []
    stored = await judge.cache.aget(judge.question("decompose", text=text.strip()).key)
    return None if stored is None else [str(u) for u in stored["answer"]]


def chunks(spec: Batch, pending: dict[str, Question]) -> list[list[str]]:
    """The keys of ``pending`` (sorted) cut into jobs the provider takes: at most
    ``batch_max_requests`` requests and ``batch_max_bytes`` bytes of requests each."""
    out: list[list[str]] = [[]]
    size = 0
    for key in sorted(pending):
        n = len(json.dumps(pending[key].request, ensure_ascii=False).encode("utf-8"))
        if out[-1] and (len(out[-1]) >= spec.batch_max_requests or size + n > spec.batch_max_bytes):
            out.append([])
            size = 0
        out[-1].append(key)
        size += n
    return out


async def _stage(
    judge: Judge,
    spec: ProviderSpec,
    client: Any,
    store: BatchStore,
    stage: str,
    questions: list[Question],
    report: BatchReport,
) -> None:
    """The batch jobs for the uncached ``questions`` (one unless the provider's limits cut
    them; resumed from their record when one is kept), waited for, their answers stored."""
    pending: dict[str, Question] = {}
    for q in questions:
        if q.key not in pending and await judge.cache.aget(q.key) is None:
            pending[q.key] = q
    row: dict[str, Any] = {"stage": stage, "requests": len(pending), "answered": 0, "failed": 0}
    report.stages.append(row)
    if not pending:
        return
    model = judge.provider.model
    set_id = request_set(spec.name, model, list(pending))
    record = store.load(set_id)
    row["resumed"] = record is not None
    if record is None:
        record = {
            "provider": spec.name,
            "model": model,
            "stage": stage,
            "requests": len(pending),
            "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "batch_ids": [],
        }
    else:
        ids = ", ".join(record["batch_ids"])
        _note(f"judge batch: {stage}, resuming {ids} ({record['requests']} requests)")
    parts = chunks(spec, pending)
    for i, keys in enumerate(parts):
        if i < len(record["batch_ids"]):
            continue  # sent before the run stopped
        requests = [(key, pending[key].request) for key in keys]
        name = f"etclib-judge-{stage}-{set_id[:8]}-{i + 1}"
        batch_id = await _api(
            judge, spec, "submit", spec.batch_submit, client, model, requests, name
        )
        record["batch_ids"].append(batch_id)
        store.save(set_id, record)  # before anything else: a stopped run reads this job
        _note(f"judge batch: {stage}, {len(keys)} requests sent as {batch_id} ({spec.label})")
        faultpoints.hit("judge_batch_submitted")
    row["batch_ids"] = list(record["batch_ids"])
    row["states"] = []
    for batch_id in record["batch_ids"]:
        state = await _wait(judge, spec, client, batch_id, stage, len(pending))
        row["states"].append(state.state)
        await _collect(judge, spec, client, batch_id, pending, row, report)
        left = len(pending) - row["answered"]
        why = f" ({state.error})" if state.error else ""
        _note(f"judge batch: {stage} {batch_id} {state.state}{why}: {row['answered']} answered")
    store.done(set_id)
    _note(f"judge batch: {stage}: {left} of {len(pending)} requests left to the online pass")


async def _collect(
    judge: Judge,
    spec: ProviderSpec,
    client: Any,
    batch_id: str,
    pending: dict[str, Question],
    row: dict[str, Any],
    report: BatchReport,
) -> None:
    """Store a finished job's answers in the cache (parsed as online answers are); count
    them in ``row`` and their tokens in ``report``."""
    answers = await _api(judge, spec, "results", spec.batch_answers, client, batch_id)
    for answer in answers:
        q = pending.get(answer.key)
        if q is None:
            continue
        if answer.reply is None:
            row["failed"] += 1
            continue
        try:
            await judge.store(q, answer.reply)
        except (AnswerCut, AnswerParseError):
            row["failed"] += 1  # asked again online, with the online path's rules
            continue
        row["answered"] += 1
        report.input_tokens += answer.reply.input_tokens
        report.output_tokens += answer.reply.output_tokens


async def _wait(
    judge: Judge, spec: ProviderSpec, client: Any, batch_id: str, stage: str, total: int
) -> BatchState:
    """Read the job every ``batch_poll`` seconds until it is done; each change of state (or
    of its counts) is printed."""
    last = None
    while True:
        state = await _api(judge, spec, "status", spec.batch_read, client, batch_id)
        faultpoints.hit("judge_batch_polled")
        seen = (state.state, state.answered, state.failed)
        if seen != last:
            counts = (
                f" {state.answered + state.failed}/{state.total or total}" if state.total else ""
            )
            _note(f"judge batch: {stage} {batch_id} {state.state}{counts}")
            last = seen
        if state.done:
            return state
        await asyncio.sleep(judge.settings.batch_poll)
