"""``llm`` (ERC): an LLM names the categories of each item, zero- or k-shot.

The prompt (``etclib/data/prompts/erc_classify.toml``) asks for the last speaker's categories as
``{"labels": [...]}``; calls go through the transcription track's API backends, answers are read
like the label judge's (:func:`~etclib.tracks.categories.labels.parse_labels`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from etclib import llm
from etclib.core.errors import BackendError, ConfigError, JudgeError
from etclib.core.registry import unknown
from etclib.data import task
from etclib.data.task import Item, PromptTemplate, prompt_template
from etclib.models._api import concurrent_map
from etclib.models.base import Progress, Shots, shots_for
from etclib.tracks.categories.backends import CategoryBackend

PROVIDERS = llm.PROVIDERS


def prompt() -> PromptTemplate:
    """The ERC classifier's few-shot prompt (``etclib/data/prompts/erc_classify.toml``)."""
    return prompt_template("erc_classify")


def build_messages(item: Item, shots: Sequence[Item] = ()) -> list[dict[str, str]]:
    """The chat messages asking for ``item``'s categories, with solved ``shots``."""
    return task.build_messages(item, list(shots), prompt())


class LLMLabelsBackend(CategoryBackend):
    """Zero- or k-shot category classification by a hosted or self-hosted LLM."""

    name = "llm"
    description = "An LLM (any registered provider) names the categories, zero- or k-shot."
    uses_prompt = True
    in_chat = True
    metered = True

    def __init__(
        self,
        provider: str = "openai",
        model: str | None = None,
        batch_size: int | None = None,
        retries: int = 4,
        timeout: float = llm.DEFAULT_TIMEOUT,
        base_url: str | None = None,
        api_key: str | None = None,
    ) -> None:
        from etclib.models import get_backend

        if provider not in PROVIDERS:
            raise ConfigError(
                f"Backend 'llm': option 'provider': {unknown('provider', provider, list(PROVIDERS))}"
            )
        options: dict[str, Any] = {
            "model": model,
            "batch_size": batch_size,
            "retries": retries,
            "timeout": timeout,
            "max_new_tokens": 256,
            "base_url": base_url,
            "api_key": api_key,
        }
        self.provider = provider
        self.api = get_backend(provider, **options)
        self.model = self.api.model  # type: ignore[attr-defined]
        self.batch_size = self.api.batch_size  # type: ignore[attr-defined]
        self.usage = self.api.usage  # type: ignore[attr-defined]

    @classmethod
    def availability(cls) -> tuple[bool, str]:
        for provider in PROVIDERS:
            if llm.configured(provider):
                return True, f"ready ({provider} at {llm.endpoint(provider)})"
        return False, "; or ".join(llm.providers.get(p).availability_help for p in PROVIDERS)

    def _ask(self, job: tuple[Item, list[dict[str, str]]]) -> tuple[str, ...]:
        from etclib.tracks.categories.labels import parse_labels

        item, messages = job
        answer = self.api.complete(messages)  # type: ignore[attr-defined]
        try:
            return parse_labels(answer)
        except JudgeError as exc:
            raise BackendError(
                f"Backend 'llm' ({self.model}): the answer for item {item.key} is unusable: {exc}"
            ) from None

    def predict(
        self, items: Sequence[Item], progress: Progress | None = None, shots: Shots | None = None
    ) -> list[tuple[str, ...]]:
        jobs = [(it, build_messages(it, s)) for it, s in zip(items, shots_for(items, shots))]
        return concurrent_map(self._ask, jobs, self.batch_size, progress)

    def notes(self) -> list[str]:
        return self.api.notes() if hasattr(self.api, "notes") else []

    def run_info(self) -> dict[str, Any]:
        return self.api.run_info() if hasattr(self.api, "run_info") else {}

    def signature(self) -> dict[str, Any]:
        sig = dict(self.api.signature())
        sig.update(backend=self.name, provider=self.provider, prompt=prompt().signature)
        return sig


BACKEND = LLMLabelsBackend
