"""The chat page's logic: which models a visitor can pick, the limits, and the predictions
(docs/site.md, "How the chat takes an utterance")."""

from __future__ import annotations

import dataclasses
import functools
import logging
import queue
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from etclib.core.config import setting
from etclib.core.errors import BackendError, ConfigError, EtcError
from etclib.data.task import Item, chat_item, choose_shots, dialogue_items
from views.chat_categories import (  # noqa: F401 - the chat page's names, importable from here
    LABEL_SET_NOTE,
    backend_failure,
    categories_text,
    conversation_categories,
    erc_backend_name,
    erc_label,
    make_erc_backend,
    predict_categories,
)
from views.model_servers import (  # noqa: F401 - the chat page's names, importable from here
    CARD_LINK,
    CARD_NOTE,
    FINETUNED_BACKEND,
    FINETUNED_MODEL,
    PROBE,
    SERVER_LIMITS,
    ServerProbe,
    ServerState,
    card_lines,
    links_to_card,
    model_card,
    server_limit,
)

MAX_UTTERANCE_CHARS = 300
MAX_LINES = 10
RATE_PER_MINUTE = 20
_log = logging.getLogger(__name__)
RATE_WINDOW_S = 60.0
DEFAULT_MODEL_PER_MINUTE = 60
DEFAULT_MODEL_PER_DAY = 1000
DAY_S = 86400.0
#: What a visitor reads about a model this site has not set up (operators: docs/site.md).
UNAVAILABLE = "not available on this site"
#: k of k-shot prompts the picker offers (0 is zero-shot; the paper's baselines used 4).
SHOT_CHOICES = (0, 1, 2, 4, 8)
#: Options a chat gives every backend that takes them: answer fast or say why not.
CHAT_OPTIONS: dict[str, Any] = {
    "retries": 1,
    "max_new_tokens": 256,
    "batch_size": 1,
}
#: The settings the chat reads for the fine-tuned model's server (docs/models.md, docs/site.md).
FINETUNED_SETTINGS = (
    "ETC_FINETUNED_BASE_URL",
    "ETC_FINETUNED_MODEL",
    "ETC_FINETUNED_API_KEY",
    "ETC_FINETUNED_QUANTIZATION",
    "ETC_FINETUNED_ADAPTER",
)
#: The chat's rate limits (per visitor; per metered model for everyone together).
RATE_SETTINGS = ("ETC_CHAT_PER_MINUTE", "ETC_CHAT_MODEL_PER_MINUTE", "ETC_CHAT_MODEL_PER_DAY")
#: What a visitor reads about a model whose server is not answering now.
OFFLINE = "offline right now (its server is not answering; checked again every minute)"


@dataclass(frozen=True)
class Choice:
    """One entry of the model picker."""

    key: str
    label: str
    backend: str
    prompted: bool
    usable: bool
    reason: str
    options: dict[str, Any] = field(default_factory=dict)
    #: each prediction costs (a hosted or served LLM): held to the per-model budget
    metered: bool = False
    #: its model server did not answer the last probe (visitors read :data:`OFFLINE`)
    offline: bool = False
    #: the setting that names its model server (for the operator's messages), or ""
    server_setting: str = ""
    #: what is served (:func:`model_card`), or None
    card: dict[str, Any] | None = None
    #: how it works, for a reader who asks (the picker's help icon)
    detail: str = ""


def _chat_options(name: str) -> dict[str, Any]:
    from etclib.models import options_of

    try:
        takes = options_of(name)
    except (EtcError, ImportError):
        return {}
    wanted = {
        **CHAT_OPTIONS,
        "timeout": server_limit("ETC_CHAT_FIRST_TOKEN_TIMEOUT"),
        "connect_timeout": server_limit("ETC_CHAT_CONNECT_TIMEOUT"),
    }
    return {k: v for k, v in wanted.items() if k in takes}


def _label(name: str, description: str) -> str:
    if name == "retrieval":
        return "Retrieval baseline"
    from etclib.llm import providers

    if name in providers.REGISTRY:
        spec = providers.get(name)
        model = setting(spec.model_setting) or spec.backend_model
        return f"{model} ({'self-hosted' if spec.base_url() else spec.label})"
    if name == "hf":
        return "An open model run by this site"
    return f"{name}: {description}" if description else name


def _detail(name: str, description: str) -> str:
    from etclib.llm import providers

    if name == "retrieval":
        return (
            "writes no text of its own: it finds the training dialogues whose last utterances "
            "are most like yours and returns what their authors wrote. " + description
        )
    if name in providers.REGISTRY:
        return (
            "a large language model, asked with the benchmark's prompt to write the author's "
            "emotion transcription; with examples, it first sees solved training items."
        )
    return description


FINETUNED_DETAIL = (
    "Llama-3.1-Swallow-8B-Instruct, fine-tuned (QLoRA) on ETC's training dialogues to write "
    "emotion transcriptions, served from a GPU server."
)


def _finetuned() -> Choice:
    url = setting("ETC_FINETUNED_BASE_URL")
    model = setting("ETC_FINETUNED_MODEL") or FINETUNED_MODEL
    made = functools.partial(
        Choice, "finetuned", "Fine-tuned Swallow 8B (trained on ETC)", FINETUNED_BACKEND, True
    )
    if not url:
        return made(
            False, "set ETC_FINETUNED_BASE_URL (the vLLM server's /v1 URL) and ETC_FINETUNED_MODEL"
        )
    api_key = setting("ETC_FINETUNED_API_KEY") or "EMPTY"
    where = "ETC_FINETUNED_BASE_URL"
    state = PROBE.state(url, api_key, where)
    if state.online and model not in state.ids():
        state = ServerState(
            False,
            state.models,
            f"the model server at {where} answers but does not serve ETC_FINETUNED_MODEL="
            f"{model!r} (it serves: {', '.join(state.ids()) or 'nothing'}); set "
            "ETC_FINETUNED_MODEL to its --lora-modules name",
        )
    if not state.online:
        return made(False, state.problem, offline=True, detail=FINETUNED_DETAIL)
    options = {
        **_chat_options(FINETUNED_BACKEND),
        "model": model,
        "base_url": url,
        "api_key": api_key,
    }
    # (the server's URL stays private: the reason can reach the page)
    return made(
        True,
        f"ready ({model})",
        options,
        metered=True,
        server_setting=where,
        card=model_card(model, state),
        detail=FINETUNED_DETAIL,
    )


def _probed(c: Choice) -> Choice:
    """``c`` marked offline when its self-hosted server does not answer a probe."""
    from etclib.llm import providers

    if c.key not in providers.REGISTRY or not c.usable:
        return c
    spec = providers.get(c.key)
    url = spec.base_url()
    if not url or not isinstance(spec, providers.ModelListing):
        return c
    where = spec.base_url_setting
    state = PROBE.state(url, spec.api_key(), where, spec.name)
    if not state.online:
        return dataclasses.replace(c, usable=False, reason=state.problem, offline=True)
    return dataclasses.replace(c, server_setting=where)


def choices() -> list[Choice]:
    """Every chat model of the registry, default first, then the fine-tuned model."""
    from etclib.models import DEFAULT_BACKEND, REGISTRY, backend_class, backend_status

    out = []
    names = [DEFAULT_BACKEND, *(n for n in REGISTRY if n != DEFAULT_BACKEND)]
    for name in names:
        status = backend_status(name)
        try:
            cls = backend_class(name)
        except Exception:  # a broken backend is listed as unusable, with backend_status's reason
            prompted, metered = False, False
        else:
            if not cls.in_chat:
                continue
            prompted, metered = cls.uses_prompt, cls.metered
        out.append(
            _probed(
                Choice(
                    name,
                    _label(name, status.description),
                    name,
                    prompted,
                    status.usable,
                    status.reason,
                    _chat_options(name),
                    metered,
                    detail=_detail(name, status.description),
                )
            )
        )
        if name == DEFAULT_BACKEND and FINETUNED_BACKEND in REGISTRY:
            out.append(_finetuned())
    return out


def choice(key: str) -> Choice:
    """The picker entry ``key``; ``BackendError`` naming the available ones otherwise."""
    for c in choices():
        if c.key == key:
            return c
    known = ", ".join(c.key for c in choices())
    raise BackendError(f"Unknown chat model {key!r}. Available: {known}.")


def available(options: Sequence[Choice]) -> tuple[list[Choice], list[Choice]]:
    """``options`` split into (usable, not usable), each in its order."""
    return [c for c in options if c.usable], [c for c in options if not c.usable]


def unavailable_note(unusable: Sequence[Choice]) -> str | None:
    """The visitor's line about the models this site does not offer (None when it offers all)."""
    notes = []
    offline = [c for c in unusable if c.offline]
    absent = [c for c in unusable if not c.offline]
    if offline:
        notes.append(f"{OFFLINE[0].upper()}{OFFLINE[1:]}: {'; '.join(c.label for c in offline)}.")
    if absent:
        notes.append(
            f"Also in the benchmark but {UNAVAILABLE}: {'; '.join(c.label for c in absent)}."
        )
    return " ".join(notes) or None


def make_backend(key: str) -> Any:
    """Create the backend of choice ``key``; ``BackendError`` saying what to set if unusable."""
    from etclib.models import get_backend

    c = choice(key)
    if not c.usable:
        raise BackendError(f"{c.label} is not configured on this site: {c.reason}.")
    return get_backend(c.backend, **c.options)


# --- a conversation and its limits ---------------------------------------------------------------


def next_speaker(lines: Sequence[Mapping[str, Any]]) -> str:
    """Who says the next utterance: A opens, then B, A, B, ... (from the lines so far)."""
    return "A" if len(lines) % 2 == 0 else "B"


def submit(
    lines: list[dict[str, Any]], text: str | None, picked: Choice, limiter: RateLimiter
) -> str | None:
    """Add ``text`` as the next utterance, spending one of ``limiter``; or return why not."""
    if not picked.usable:
        why = OFFLINE if picked.offline else UNAVAILABLE
        return f"{picked.label} is {why}. Choose another model."
    problem = utterance_problem(text, len(lines))
    if problem:
        return problem
    wait = limiter.take()
    if wait:
        return limiter.message(wait)
    lines.append({"who": next_speaker(lines), "text": text, "pending": True})
    return None


def utterance_problem(text: str | None, lines_so_far: int) -> str | None:
    """Why an utterance cannot be added (empty, too long, conversation full), or None."""
    if lines_so_far >= MAX_LINES:
        return (
            f"This conversation has reached {MAX_LINES} utterances, the limit of the demo. "
            "Start a new conversation to go on."
        )
    if text is None or not text.strip():
        return "Write something first: the utterance is empty."
    if len(text) > MAX_UTTERANCE_CHARS:
        return (
            f"The utterance has {len(text)} characters; the limit is {MAX_UTTERANCE_CHARS}. "
            "Shorten it and send it again."
        )
    return None


class RateLimiter:
    """At most ``limit`` events per ``window`` seconds (a sliding window of timestamps)."""

    def __init__(
        self, limit: int = RATE_PER_MINUTE, window: float = RATE_WINDOW_S, clock: Any = None
    ):
        self.limit = limit
        self.window = window
        self.clock = clock or time.monotonic
        self.events: list[float] = []

    def wait(self) -> float:
        """Seconds until one more event is allowed (0 when it is allowed now)."""
        now = self.clock()
        self.events = [t for t in self.events if now - t < self.window]
        if len(self.events) < self.limit:
            return 0.0
        return max(0.0, self.window - (now - self.events[0]))

    def take(self) -> float:
        """Record an event if allowed and return 0; else the seconds to wait, recording nothing."""
        wait = self.wait()
        if wait == 0.0:
            self.events.append(self.clock())
        return wait

    def message(self, wait: float) -> str:
        """The visitor's line for a refusal that must wait ``wait`` seconds."""
        return rate_message(wait, self.limit)


def _budget(name: str, default: int) -> int:
    raw = setting(name)
    if raw is None or not str(raw).strip():
        return default
    try:
        value = int(str(raw).strip())
    except ValueError:
        value = -1
    if value < 0:
        raise ConfigError(f"{name}={raw!r} must be a whole number of predictions, 0 or more.")
    return value


def rate_per_minute() -> int:
    """Predictions per minute per visitor (``ETC_CHAT_PER_MINUTE``; 0 switches the chat off)."""
    return _budget("ETC_CHAT_PER_MINUTE", RATE_PER_MINUTE)


def model_budget() -> list[tuple[int, float, str]]:
    """Each metered model's budget for everyone: (predictions, window seconds, its name)."""
    return [
        (_budget("ETC_CHAT_MODEL_PER_MINUTE", DEFAULT_MODEL_PER_MINUTE), RATE_WINDOW_S, "minute"),
        (_budget("ETC_CHAT_MODEL_PER_DAY", DEFAULT_MODEL_PER_DAY), DAY_S, "day"),
    ]


#: The counts of :func:`_take` while the board's database cannot be used (this process only).
_MEMORY: dict[tuple[str, str, int, float], RateLimiter] = {}


def _take(bucket: str, key: str, limit: int, window: float) -> float:
    """:func:`leaderboard.limits.take`; in memory while the board is down (the chat stays up)."""
    from leaderboard import LeaderboardError, limits

    try:
        return limits.take(bucket, key, limit, window)
    except LeaderboardError as exc:
        _log.warning("chat limits counted in memory: the board is unavailable (%s)", exc)
        return _MEMORY.setdefault((bucket, key, limit, window), RateLimiter(limit, window)).take()


class VisitorLimiter:
    """The chat's limits, in the board's database (so they hold across reloads and replicas)."""

    def __init__(self, key: str = "", picked: Choice | None = None, limit: int | None = None):
        self.key = key
        self.picked = picked
        self.limit = rate_per_minute() if limit is None else limit
        #: this session's predictions (times); the count that limits is the database's
        self.events: list[float] = []
        self._refusal = ""

    def aim(self, key: str, picked: Choice) -> VisitorLimiter:
        """Count for visitor ``key`` and model ``picked`` from now on (each page run)."""
        self.key, self.picked = key, picked
        return self

    def take(self) -> float:
        """Count one prediction and return 0; else the seconds to wait, counting nothing for
        the limit that refused (:meth:`message` then says which)."""
        wait = _take("chat", self.key, self.limit, RATE_WINDOW_S)
        if wait:
            self._refusal = rate_message(wait, self.limit)
            return wait
        if self.picked is not None and self.picked.metered:
            for budget, window, unit in model_budget():
                wait = _take(f"chat-model:{self.picked.key}:{unit}", "all", budget, window)
                if wait:
                    self._refusal = (
                        f"{self.picked.label} has answered its {budget} predictions per {unit} "
                        f"for all visitors together, the site's budget for it. Try again in "
                        f"{max(1, round(wait))} s, or choose another model."
                    )
                    return wait
        self.events.append(time.monotonic())
        return 0.0

    def message(self, wait: float) -> str:
        """The visitor's line for the last refusal."""
        return self._refusal or rate_message(wait, self.limit)


def rate_message(wait: float, limit: int = RATE_PER_MINUTE) -> str:
    return (
        f"You have asked for {limit} predictions in the last minute, the limit of the "
        f"demo. Try again in {max(1, round(wait))} s."
    )


# --- predictions -----------------------------------------------------------------------------


def train_pool() -> list[Item]:
    """Every train-split item: the pool that k-shot examples are drawn from."""
    from etclib.data.corpus import load_corpus
    from etclib.data.task import items

    return items(load_corpus(), "train")


def shots(item: Item, k: int, pool: Sequence[Item] | None = None) -> list[Item]:
    """k solved train examples for ``item`` (none for k = 0)."""
    if k <= 0:
        return []
    return choose_shots(item, list(pool if pool is not None else train_pool()), k)


def conversation_item(lines: Sequence[tuple[str, str]]) -> Item:
    """The task item for the last of ``lines`` (``[("A", text), ("B", text), ...]``)."""
    return chat_item(list(lines))


def stream_prediction(
    backend: Any,
    item: Item,
    k: int = 0,
    pool: Sequence[Item] | None = None,
    picked: Choice | None = None,
) -> Iterator[str]:
    """The backend's transcription for ``item`` as text chunks, read in a helper thread so all come
    within ``ETC_CHAT_TOTAL_TIMEOUT`` seconds. Any failure reaches the visitor as words, never a
    traceback."""
    from etclib.core.errors import ServiceError

    examples = shots(item, k, pool) if getattr(backend, "uses_prompt", False) else []
    try:
        yield from _within(backend.stream(item, examples), server_limit("ETC_CHAT_TOTAL_TIMEOUT"))
    except ServiceError as exc:
        raise visitor_failure(exc, backend, picked) from None
    except EtcError:
        raise
    except Exception as exc:  # noqa: BLE001 - a backend's own failure, reported to the visitor
        what = f"The {getattr(backend, 'name', 'model')} backend"
        raise backend_failure(exc, what, "chat backend", _log) from None


def visitor_failure(exc: Any, backend: Any, picked: Choice | None) -> BackendError:
    """The visitor's message for a model service's failure, logged for the operator."""
    from etclib.core.errors import EmptyAnswerError
    from etclib.llm.retry import Fault

    if isinstance(exc, EmptyAnswerError):
        return BackendError(str(exc))
    label = picked.label if picked else f"The {getattr(backend, 'name', 'model')} model"
    where = picked.server_setting if picked and picked.server_setting else ""
    check = f"check {where} and that its server is running" if where else "see the detail"
    _log.error(
        "chat model %s failed (ref %s, %s): %s; %s. Detail: %s",
        picked.key if picked else getattr(backend, "name", "?"),
        exc.ref,
        exc.kind,
        Fault(exc.kind, exc.status).public,
        check,
        exc.detail,
    )
    return BackendError(
        f"{label} did not answer: {Fault(exc.kind, exc.status).public}. Try again in a minute "
        f"or choose another model (ref {exc.ref})."
    )


def _within(chunks: Iterator[str], total: float) -> Iterator[str]:
    """``chunks``, read in a helper thread, all within ``total`` seconds or a timeout error."""
    from etclib.core.errors import BackendServiceError

    box: queue.Queue[tuple[str, Any]] = queue.Queue()

    def pump() -> None:
        try:
            for c in chunks:
                box.put(("chunk", c))
        except BaseException as exc:  # noqa: BLE001 - handed to the reading thread
            box.put(("error", exc))
        else:
            box.put(("end", None))

    threading.Thread(target=pump, daemon=True, name="chat-stream").start()
    deadline = time.monotonic() + total
    while True:
        try:
            what, value = box.get(timeout=max(0.0, deadline - time.monotonic()))
        except queue.Empty:
            raise BackendServiceError(
                f"the answer took longer than {total:g} s", kind="timeout"
            ) from None
        if what == "chunk":
            yield value
        elif what == "error":
            raise value
        else:
            return


def replay_dialogue(dialogue_id: int) -> list[Item]:
    """The ten task items of a corpus dialogue, in order, for the replay mode."""
    from etclib.data.corpus import load_corpus

    corpus = load_corpus()
    d = corpus.by_id.get(int(dialogue_id))
    if d is None:
        raise BackendError(f"No dialogue {dialogue_id} in the corpus.")
    return dialogue_items(d)


def replay_ids(split: str = "test") -> list[int]:
    """Dialogue ids offered by the replay mode."""
    from etclib.data.corpus import load_corpus

    return [d.dialogue_id for d in load_corpus().split(split)]


def picker_help(options: Sequence[Choice]) -> str:
    """The model picker's help: each model in a line, what it does."""
    return "\n".join(f"- **{c.label}**: {c.detail}" for c in options if c.detail)


def shots_text(k: int) -> str:
    """Worked examples in a prompt, in a visitor's words: ``no examples``, ``4 examples``."""
    return "no examples" if k == 0 else f"{k} example" + ("s" if k > 1 else "")
