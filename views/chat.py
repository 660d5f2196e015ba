"""The chat page's logic: which models a visitor can pick, the limits, and the predictions.

A *choice* is a backend of :mod:`etclib.backends` with the options the site uses for it
(a chat answers within seconds, so hosted models get short timeouts and one retry):

- ``retrieval``: the default, CPU only;
- ``finetuned``: the fine-tuned Swallow model served by an OpenAI-compatible server (vLLM) at
  ``ETC_FINETUNED_BASE_URL`` as ``ETC_FINETUNED_MODEL`` (key ``ETC_FINETUNED_API_KEY``, default
  ``EMPTY``);
- ``openai``: GPT-4.1 (``ETC_OPENAI_MODEL``) through ``OPENAI_API_KEY`` / ``OPENAI_BASE_URL``;
- ``gemini``: Gemini through ``GEMINI_API_KEY``;
- ``hf``: a transformers model loaded in the site's own process (``ETC_HF_MODEL``).

Limits (per visitor session): :data:`MAX_UTTERANCE_CHARS` per utterance, :data:`MAX_LINES`
utterances per conversation, :data:`RATE_PER_MINUTE` predictions per minute.
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from etclib.config import setting
from etclib.errors import BackendError, EtcError
from etclib.task import Item, chat_item, choose_shots, dialogue_items

MAX_UTTERANCE_CHARS = 300
MAX_LINES = 10
RATE_PER_MINUTE = 20
RATE_WINDOW_S = 60.0
#: k of k-shot prompts the picker offers (0 is zero-shot; the paper's baselines used 4).
SHOT_CHOICES = (0, 1, 2, 4, 8)
#: Options for hosted models in a chat: answer fast or say why not.
_HOSTED = {"retries": 1, "timeout": 30.0, "max_new_tokens": 256}


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


def _backend_status(name: str) -> tuple[bool, str]:
    from etclib.backends import backend_class

    try:
        return backend_class(name).availability()
    except (EtcError, ImportError) as exc:
        return False, str(exc)


def _finetuned() -> Choice:
    url = setting("ETC_FINETUNED_BASE_URL")
    model = setting("ETC_FINETUNED_MODEL") or "etc-swallow-8b-sft"
    label = "Fine-tuned Llama-3.1-Swallow-8B (GPU server)"
    if not url:
        return Choice(
            "finetuned",
            label,
            "openai",
            True,
            False,
            "set ETC_FINETUNED_BASE_URL (the vLLM server's /v1 URL) and ETC_FINETUNED_MODEL",
        )
    options = {
        "model": model,
        "base_url": url,
        "api_key": setting("ETC_FINETUNED_API_KEY") or "EMPTY",
        **_HOSTED,
    }
    return Choice("finetuned", label, "openai", True, True, f"ready ({model} at {url})", options)


def choices() -> list[Choice]:
    """Every model the chat can use, retrieval first; unusable ones say what to configure."""
    out = [
        Choice(
            "retrieval",
            "Retrieval baseline (most similar train contexts)",
            "retrieval",
            False,
            *_backend_status("retrieval"),
        )
    ]
    out.append(_finetuned())
    openai_model = setting("ETC_OPENAI_MODEL") or "gpt-4.1"
    base = setting("OPENAI_BASE_URL")
    label = f"{openai_model} (OpenAI)" if not base else f"{openai_model} (OpenAI-compatible server)"
    out.append(
        Choice("openai", label, "openai", True, *_backend_status("openai"), options=dict(_HOSTED))
    )
    gemini_model = setting("ETC_GEMINI_MODEL") or "gemini-2.5-flash"
    out.append(
        Choice(
            "gemini",
            f"{gemini_model} (Google Gemini)",
            "gemini",
            True,
            *_backend_status("gemini"),
            options=dict(_HOSTED),
        )
    )
    out.append(
        Choice(
            "hf",
            "Local transformers model (in this server, GPU advised)",
            "hf",
            True,
            *_backend_status("hf"),
            options={"max_new_tokens": 256, "batch_size": 1},
        )
    )
    return out


def choice(key: str) -> Choice:
    """The picker entry ``key``; ``BackendError`` naming the available ones otherwise."""
    for c in choices():
        if c.key == key:
            return c
    known = ", ".join(c.key for c in choices())
    raise BackendError(f"Unknown chat model {key!r}. Available: {known}.")


def make_backend(key: str) -> Any:
    """Create the backend of choice ``key``; ``BackendError`` saying what to set if unusable."""
    from etclib.backends import get_backend

    c = choice(key)
    if not c.usable:
        raise BackendError(f"{c.label} is not configured on this site: {c.reason}.")
    return get_backend(c.backend, **c.options)


# --- limits ----------------------------------------------------------------------------------


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


def rate_message(wait: float) -> str:
    return (
        f"You have asked for {RATE_PER_MINUTE} predictions in the last minute, the limit of the "
        f"demo. Try again in {max(1, round(wait))} s."
    )


# --- predictions -----------------------------------------------------------------------------


def train_pool() -> list[Item]:
    """Every train-split item: the pool that k-shot examples are drawn from."""
    from etclib.corpus import load_corpus
    from etclib.task import items

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
    backend: Any, item: Item, k: int = 0, pool: Sequence[Item] | None = None
) -> Iterator[str]:
    """The backend's transcription for ``item`` as text chunks; errors become ``BackendError``.

    ``EtcError`` passes through; any other exception from a backend (a broken connection half
    way) is turned into a ``BackendError`` with its class name, never a traceback.
    """
    examples = shots(item, k, pool) if getattr(backend, "uses_prompt", False) else []
    try:
        yield from backend.stream(item, examples)
    except EtcError:
        raise
    except Exception as exc:  # noqa: BLE001 - a backend's own failure, reported to the visitor
        raise BackendError(
            f"The {getattr(backend, 'name', 'model')} backend failed: {exc.__class__.__name__}: "
            f"{exc}"
        ) from None


def replay_dialogue(dialogue_id: int) -> list[Item]:
    """The ten task items of a corpus dialogue, in order, for the replay mode."""
    from etclib.corpus import load_corpus

    corpus = load_corpus()
    d = corpus.by_id.get(int(dialogue_id))
    if d is None:
        raise BackendError(f"No dialogue {dialogue_id} in the corpus.")
    return dialogue_items(d)


def replay_ids(split: str = "test") -> list[int]:
    """Dialogue ids offered by the replay mode."""
    from etclib.corpus import load_corpus

    return [d.dialogue_id for d in load_corpus().split(split)]
