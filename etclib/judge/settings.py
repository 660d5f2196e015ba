"""What configures one judge run: :class:`JudgeSettings`, resolved from options, the
environment and defaults, and the judge's signature built from it."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from etclib import llm
from etclib.core.config import setting
from etclib.core.errors import ConfigError, JudgeError
from etclib.core.registry import unknown
from etclib.judge import templates
from etclib.judge.providers import DEFAULT_MODELS, DEFAULT_PROVIDER, TEMPERATURE, default_max_tokens
from etclib.llm.models import Decoding
from etclib.llm.retry import RetryPolicy

__all__ = ["JudgeSettings"]

DEFAULT_CONCURRENCY = 16
DEFAULT_TIMEOUT = 60.0
DEFAULT_MAX_ATTEMPTS = 6
DEFAULT_BACKOFF = 1.0
DEFAULT_BACKOFF_MAX = 30.0
#: seconds between two reads of a batch job (a batch takes minutes to hours)
DEFAULT_BATCH_POLL = 30.0


@dataclass
class JudgeSettings:
    """Everything that configures one judge run (see :meth:`resolve` for where each comes from)."""

    provider: str = DEFAULT_PROVIDER
    model: str = DEFAULT_MODELS[DEFAULT_PROVIDER]
    concurrency: int = DEFAULT_CONCURRENCY
    timeout: float = DEFAULT_TIMEOUT
    max_attempts: int = DEFAULT_MAX_ATTEMPTS
    backoff: float = DEFAULT_BACKOFF
    backoff_max: float = DEFAULT_BACKOFF_MAX
    #: thinking setting (None: the capability table's default; see etclib.llm.models)
    thinking: Any = None
    #: the prompt set (etclib/judge/prompts/{kind}_{set}.toml; see templates.DEFAULT_SET)
    prompts: str = templates.DEFAULT_SET
    #: token limit per answer, thinking included (None: providers.default_max_tokens)
    max_tokens: int | None = None
    #: send the uncached questions through the provider's batch interface first
    #: (:mod:`etclib.judge.batch`); the answers are the same, so not in the signature
    batch: bool = False
    #: seconds between two reads of a batch job
    batch_poll: float = DEFAULT_BATCH_POLL
    #: OpenAI's ``service_tier`` for online calls (``flex``), or None; changes price and
    #: wait, not answers: in the run record, not in the signature
    service_tier: str | None = None

    @classmethod
    def resolve(cls, get: Callable[[str], Any] | None = None) -> JudgeSettings:
        """Settings from options (``get(name)``, e.g. ``Context.get``), else the environment,
        else defaults; the table of options and variables is in docs/judge.md."""
        get = get or (lambda name: None)

        def pick(option: str, env: str) -> Any:
            value = get(option)
            return value if value not in (None, "") else setting(env)

        provider = str(pick("judge_provider", "ETC_JUDGE_PROVIDER") or DEFAULT_PROVIDER)
        if provider not in DEFAULT_MODELS:
            raise JudgeError(unknown("judge provider", provider, list(DEFAULT_MODELS)))
        model = str(pick("judge_model", "ETC_JUDGE_MODEL") or DEFAULT_MODELS[provider])

        def number(option: str, env: str, default: float, kind: type, low: float) -> Any:
            raw = pick(option, env)
            if raw in (None, ""):
                return default
            try:
                value = kind(raw)
            except (TypeError, ValueError):
                raise ConfigError(f"{option} (or {env}) must be a number, not {raw!r}.") from None
            if value < low:
                raise ConfigError(f"{option} (or {env}) must be at least {low}, not {raw!r}.")
            return value

        return cls(
            provider=provider,
            model=model,
            concurrency=number("concurrency", "ETC_JUDGE_CONCURRENCY", DEFAULT_CONCURRENCY, int, 1),
            timeout=number("judge_timeout", "ETC_JUDGE_TIMEOUT", DEFAULT_TIMEOUT, float, 0.001),
            max_attempts=number(
                "judge_max_attempts", "ETC_JUDGE_MAX_ATTEMPTS", DEFAULT_MAX_ATTEMPTS, int, 1
            ),
            backoff=number("judge_backoff", "ETC_JUDGE_BACKOFF", DEFAULT_BACKOFF, float, 0),
            backoff_max=DEFAULT_BACKOFF_MAX,
            thinking=pick("judge_thinking", "ETC_JUDGE_THINKING") or None,
            prompts=templates.check_set(pick("judge_prompts", "ETC_JUDGE_PROMPTS")),
            max_tokens=number("judge_max_tokens", "ETC_JUDGE_MAX_TOKENS", 0, int, 0) or None,
            batch=_flag(pick("judge_batch", "ETC_JUDGE_BATCH")),
            batch_poll=number(
                "judge_batch_poll", "ETC_JUDGE_BATCH_POLL", DEFAULT_BATCH_POLL, float, 0
            ),
            service_tier=str(pick("judge_service_tier", "ETC_JUDGE_SERVICE_TIER") or "") or None,
        )

    def record(self) -> dict[str, Any]:
        """How the run was sent, for its record (not its signature: the answers do not depend
        on it): batch or online, and the service tier."""
        return {"batch": self.batch, "service_tier": self.service_tier or "default"}

    def decoding(self) -> Decoding:
        """The decoding settings the judge sends to this model (capability table); a thinking
        value the model cannot take is a ConfigError."""
        return llm.decoding(
            self.provider,
            self.model,
            temperature=TEMPERATURE,
            thinking=self.thinking,
            where="judge_thinking (ETC_JUDGE_THINKING)",
        )

    def token_limit(self) -> int:
        """The token limit each request carries (``max_tokens``, else the default for this
        model's thinking setting)."""
        return self.max_tokens or default_max_tokens(self.decoding())

    def policy(self) -> RetryPolicy:
        return RetryPolicy(self.max_attempts, self.backoff, self.backoff_max)

    def signature(self, served: Any = ()) -> str:
        """``provider:..|model:..|temperature:0|thinking:budget=0|prompts:..|max_tokens:1024|etclib-judge``,
        the settings as sent; ``served`` (the snapshots the provider reported) adds
        ``|served:a,b``."""
        sig = (
            f"provider:{self.provider}|model:{self.model}|{self.decoding().signature()}"
            f"|prompts:{templates.tags(self.prompts)}|max_tokens:{self.token_limit()}|etclib-judge"
        )
        served = sorted(served)
        return sig + (f"|served:{','.join(served)}" if served else "")


def _flag(value: Any) -> bool:
    """A yes/no option: True, or a string such as ``1``, ``true``, ``yes``."""
    if isinstance(value, bool):
        return value
    text = str(value or "").strip().lower()
    if text in ("", "0", "false", "no", "off"):
        return False
    if text in ("1", "true", "yes", "on"):
        return True
    raise ConfigError(f"judge_batch (or ETC_JUDGE_BATCH) must be true or false, not {value!r}.")
