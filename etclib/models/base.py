"""The interface every backend implements, and small helpers shared by backends.

A backend is created once (loading a model or an index is the expensive part), then asked for
many predictions: :meth:`Backend.predict` answers a batch (by default :meth:`Backend.answer` per
item, so a backend writes one or the other), :meth:`Backend.stream` yields one answer in chunks
(the chat), :meth:`Backend.signature` names what predictions depend on. ``shots`` are solved
train examples for k-shot prompts, one list per item; backends that prompt no model ignore them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Any, ClassVar

from etclib.core.errors import ConfigError
from etclib.data.task import Item, build_messages, prompt_template

#: Called with the number of items just finished.
Progress = Callable[[int], None]
Shots = Sequence[Sequence[Item]]


class Backend:
    """A model that writes emotion transcriptions for task items."""

    #: Registry name, e.g. ``"retrieval"``.
    name: ClassVar[str] = ""
    #: One line for pickers and ``--help``.
    description: ClassVar[str] = ""
    #: Whether answers come from a prompted language model (and so depend on the template).
    uses_prompt: ClassVar[bool] = False
    #: Whether the site's chat offers it (sanity baselines that ignore the dialogue say no).
    in_chat: ClassVar[bool] = True
    #: Whether each call costs money or a served model's time (a hosted or self-hosted LLM API):
    #: the site's chat holds such a model to a budget for everyone together.
    metered: ClassVar[bool] = False

    @classmethod
    def availability(cls) -> tuple[bool, str]:
        """``(usable, reason)``: whether the backend can run here, and what is missing or what
        it will use. Cheap and side-effect free (called for every listing): never load a model
        or call a service."""
        return True, "ready"

    def predict(
        self,
        items: Sequence[Item],
        progress: Progress | None = None,
        shots: Shots | None = None,
    ) -> list[str]:
        """One transcription per item, in order: :meth:`answer` for each, ``progress(1)`` after
        each. A backend that answers a batch at once writes this instead of :meth:`answer`."""
        out = []
        for item, its_shots in zip(items, shots_for(items, shots), strict=True):
            out.append(self.answer(item, its_shots))
            if progress:
                progress(1)
        return out

    def answer(self, item: Item, shots: Sequence[Item] = ()) -> str:
        """One item's transcription."""
        raise NotImplementedError(f"{type(self).__name__} writes neither answer() nor predict()")

    def stream(self, item: Item, shots: Sequence[Item] = ()) -> Iterator[str]:
        """Yield one item's transcription as text chunks; by default the whole answer at once."""
        yield self.predict([item], shots=[list(shots)])[0]

    def signature(self) -> dict[str, Any]:
        """What predictions depend on; prompted backends add the template's signature."""
        sig: dict[str, Any] = {"backend": self.name}
        if self.uses_prompt:
            sig["prompt"] = prompt_template().signature
        return sig


# --- helpers -----------------------------------------------------------------------------------


def shots_for(items: Sequence[Item], shots: Shots | None) -> list[list[Item]]:
    """``shots`` checked against ``items`` (one list per item), or no shots for every item."""
    if shots is None:
        return [[] for _ in items]
    if len(shots) != len(items):
        raise ValueError(f"got {len(shots)} shot lists for {len(items)} items")
    return [list(s) for s in shots]


def messages_for(items: Sequence[Item], shots: Shots | None) -> list[list[dict[str, str]]]:
    """The chat messages of every item's prompt (SPEC "Prompting")."""
    return [build_messages(it, s) for it, s in zip(items, shots_for(items, shots), strict=True)]


def clean(text: str) -> str:
    """A model's answer as a prediction: surrounding whitespace removed."""
    return text.strip()


def positive_int(value: Any, option: str, backend: str) -> int:
    """``value`` as an integer >= 1, or a ``ConfigError`` naming the option."""
    try:
        number = int(value)
    except (TypeError, ValueError):
        number = 0
    if isinstance(value, bool) or number < 1 or str(number) != str(value).strip():
        raise ConfigError(
            f"Backend {backend!r}: option {option!r} must be a positive integer, got {value!r}."
        )
    return number


def retry_count(value: Any, backend: str) -> int:
    """The ``retries`` option: an integer >= 0, or a ``ConfigError`` naming the option."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ConfigError(
            f"Backend {backend!r}: option 'retries' must be an integer >= 0, got {value!r}."
        )
    return value


def as_bool(value: Any, option: str, backend: str) -> bool:
    """``value`` (a bool, or a setting such as ``"1"``/``"true"``/``"0"``) as a bool."""
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in ("1", "true", "yes", "on"):
        return True
    if text in ("0", "false", "no", "off", ""):
        return False
    raise ConfigError(
        f"Backend {backend!r}: option {option!r} must be true or false, got {value!r}."
    )


def batched(seq: Sequence[Any], size: int) -> Iterator[range]:
    """Index ranges of consecutive batches of at most ``size``."""
    for start in range(0, len(seq), size):
        yield range(start, min(start + size, len(seq)))
