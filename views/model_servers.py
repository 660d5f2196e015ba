"""The chat's model servers: probed for being online, their time limits, and the model card; an
offline server's reason is for the operator's log, never a visitor."""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from etclib.core.config import setting
from etclib.core.errors import EtcError
from views.docs import doc_link

_log = logging.getLogger(__name__)
#: The chat's time limits on its model servers, in seconds: setting -> default (docs/site.md).
SERVER_LIMITS: dict[str, float] = {
    "ETC_CHAT_PROBE_INTERVAL": 60.0,
    "ETC_CHAT_PROBE_TIMEOUT": 2.0,
    "ETC_CHAT_CONNECT_TIMEOUT": 2.0,
    "ETC_CHAT_FIRST_TOKEN_TIMEOUT": 10.0,
    "ETC_CHAT_TOTAL_TIMEOUT": 30.0,
}
#: The key setting that goes with each model server setting (for the operator's messages).
KEY_SETTINGS = {"ETC_FINETUNED_BASE_URL": "ETC_FINETUNED_API_KEY"}
#: The backend (an LLM provider) that serves the fine-tuned model: vLLM speaks OpenAI's API.
FINETUNED_BACKEND = "openai"
#: The fine-tuned model's name on its server when ``ETC_FINETUNED_MODEL`` is unset.
FINETUNED_MODEL = "etc-swallow-8b-sft"


def server_limit(name: str) -> float:
    """The seconds of ``name`` (:data:`SERVER_LIMITS`); ``ConfigError`` unless positive."""
    from etclib.core.errors import ConfigError

    raw = setting(name)
    if raw in (None, ""):
        return SERVER_LIMITS[name]
    try:
        value = float(raw)
    except ValueError:
        value = -1.0
    if not value > 0:
        raise ConfigError(f"{name}={raw!r}: give a number of seconds greater than 0.")
    return value


# --- model servers: probed, offline or not -------------------------------------------------------


@dataclass(frozen=True)
class ServerState:
    """One probe's answer: whether the server answered, and the models it listed."""

    online: bool
    models: tuple[dict[str, Any], ...] = ()
    #: for the operator: what failed, naming the setting (never shown to visitors)
    problem: str = ""

    def ids(self) -> list[str]:
        return [str(m.get("id")) for m in self.models]


class ServerProbe:
    """``GET /v1/models`` on each model server, remembered for ``ETC_CHAT_PROBE_INTERVAL``."""

    def __init__(self, clock: Any = None) -> None:
        import threading

        self.clock = clock or time.monotonic
        self.probes = 0
        self._seen: dict[tuple[str, str], tuple[float, ServerState]] = {}
        self._lock = threading.Lock()

    def clear(self) -> None:
        with self._lock:
            self._seen.clear()

    def state(
        self,
        base_url: str,
        api_key: str | None,
        setting_name: str,
        provider: str = FINETUNED_BACKEND,
    ) -> ServerState:
        """The server's state, probed unless a recent probe is known."""
        key = (base_url, api_key or "")
        with self._lock:
            known = self._seen.get(key)
            if known and self.clock() - known[0] < server_limit("ETC_CHAT_PROBE_INTERVAL"):
                return known[1]
        state = self._probe(base_url, api_key, setting_name, provider)
        with self._lock:
            before = self._seen.get(key)
            self._seen[key] = (self.clock(), state)
        if not state.online and (before is None or before[1].online):
            _log.warning("chat model server offline: %s", state.problem)
        return state

    def _probe(
        self, base_url: str, api_key: str | None, setting_name: str, provider: str
    ) -> ServerState:
        from etclib.llm import classify, providers

        self.probes += 1
        timeout = server_limit("ETC_CHAT_PROBE_TIMEOUT")
        try:
            models = providers.get(provider).served_models(base_url, api_key, timeout=timeout)
        except Exception as exc:  # noqa: BLE001 - any failure means offline, classified
            fault = classify(exc)
            check = (
                f"Check the key for it ({_key_setting(setting_name)})"
                if fault.kind == "auth"
                else f"Check {setting_name} and that the server is running"
            )
            return ServerState(
                False,
                problem=(
                    f"the model server at {setting_name} did not answer GET /v1/models within "
                    f"{timeout:g} s: {fault.public}. {check}."
                ),
            )
        return ServerState(True, tuple(models))


PROBE = ServerProbe()


def _key_setting(setting_name: str) -> str:
    from etclib.llm import providers

    keys = dict(KEY_SETTINGS)
    for spec in providers.specs():
        if spec.base_url_setting and spec.key_settings:
            keys.setdefault(spec.base_url_setting, spec.key_settings[0])
    return keys.get(setting_name, "its API key")


def model_card(model: str, state: ServerState) -> dict[str, Any]:
    """What the fine-tuned choice serves; ``same_weights``: is it the evaluated model."""
    from etclib.models.finetune import adapter_fingerprint

    row = next((m for m in state.models if m.get("id") == model), {})
    card: dict[str, Any] = {
        "model": model,
        "base": row.get("parent") or None,
        "quantization": setting("ETC_FINETUNED_QUANTIZATION") or None,
        "adapter_sha256": None,
        "trained_base": None,
        "trained_quantization": None,
    }
    folder = setting("ETC_FINETUNED_ADAPTER")
    if folder:
        try:
            card.update(adapter_fingerprint(folder))
        except EtcError as exc:
            _log.warning("chat model card: %s", exc)
    checks = []
    if card["base"] and card["trained_base"]:
        checks.append(card["base"] == card["trained_base"])
    if card["quantization"] and card["trained_quantization"]:
        checks.append(_is_nf4(card["quantization"]) == _is_nf4(card["trained_quantization"]))
    card["same_weights"] = False if not all(checks) else True if len(checks) == 2 else None
    return card


def _is_nf4(text: str) -> bool:
    low = text.lower()
    return "nf4" in low or "bitsandbytes" in low or "4-bit" in low or "4bit" in low


#: Where the fine-tuned model's card is shown (the board's fine-tuned baseline links here).
CARD_LINK = "chat?model=finetuned"


def links_to_card(submission: Mapping[str, Any]) -> bool:
    """Whether a board entry is the fine-tuned Swallow baseline the chat's model card describes."""
    return (
        submission.get("setting") == "fine-tuned"
        and submission.get("kind") in ("reported", "baseline")
        and "swallow" in str(submission.get("name", "")).lower()
    )


CARD_NOTE = (
    "The chat serves this model on a GPU server when the site has one: see which base, "
    f"quantisation and adapter it serves, and whether they are these weights, on [its model card]"
    f"({CARD_LINK})."
)


def card_lines(card: dict[str, Any]) -> list[str]:
    """The model card as the page shows it (no server address)."""
    unknown = "not stated by the operator"
    lines = [
        f"Served model: {card['model']}",
        f"Base (as the server reports it): {card['base'] or 'not reported'}",
        f"Quantisation served: {card['quantization'] or unknown}",
        f"Adapter SHA-256: {card['adapter_sha256'] or unknown}",
    ]
    if card.get("trained_base"):
        lines.append(
            f"Trained on: {card['trained_base']} ({card['trained_quantization'] or 'bf16'})"
        )
    same = card.get("same_weights")
    lines.append(
        "These are the evaluated weights (adapter on its training base and quantisation)."
        if same
        else "Not the evaluated weights: the served base or quantisation differs from training."
        if same is False
        else "Whether these are the evaluated weights is not known ("
        + doc_link("models.md#serving-the-fine-tuned-adapter-with-vllm", "how it is served")
        + ")."
    )
    return lines
