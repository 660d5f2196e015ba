"""BERTScore F1 (bert-score), mean over items.

The model (``ETC_BERTSCORE_MODEL``, default ``bert-base-multilingual-cased``) and layer
(``ETC_BERTSCORE_LAYER``, default bert-score's tuned one) are in the signature; no IDF
weighting, no baseline rescaling (bert-score ships no Japanese baseline). A hub model that is
not cached and cannot be downloaded fails at once (after :data:`HUB_PROBE_TIMEOUT` seconds)
naming the command that caches it, instead of the libraries' retries.
"""

from __future__ import annotations

import os
import re
from functools import lru_cache
from pathlib import Path

import numpy as np

from etclib.core.config import setting
from etclib.core.errors import DependencyError, MetricError
from etclib.metrics import Context, Fact, MeanMetric, MetricData

DEFAULT_MODEL = "bert-base-multilingual-cased"
#: seconds one connection to the hub may take before a model that is not cached is given up
HUB_PROBE_TIMEOUT = 2.0
_HUB_ID = re.compile(r"^[A-Za-z0-9][\w.-]*(/[\w.-]+)?$")


def _settings(ctx: Context | None) -> tuple[str, int | None, int]:
    ctx = ctx or Context()
    model = ctx.get("bertscore_model") or setting("ETC_BERTSCORE_MODEL") or DEFAULT_MODEL
    layer = ctx.get("bertscore_layer") or setting("ETC_BERTSCORE_LAYER")
    try:
        layer = int(layer) if layer is not None else None
    except ValueError:
        raise MetricError(f"BERTScore layer must be an integer, got {layer!r}.") from None
    batch = int(ctx.get("bertscore_batch_size", 64))
    return str(model), layer, batch


@lru_cache(maxsize=2)
def _scorer(model: str, layer: int | None):
    _ensure_available(model)  # before the seconds of torch's import: a missing model fails at once
    try:
        import bert_score
        import torch
        from bert_score.utils import model2layers
    except ImportError as exc:
        raise DependencyError(
            f"BERTScore needs the '{exc.name}' package: pip install bert-score torch"
        ) from None
    if layer is None:
        layer = model2layers.get(model)
    if layer is None:
        from transformers import AutoConfig

        try:
            layer = AutoConfig.from_pretrained(model).num_hidden_layers
        except Exception as exc:  # noqa: BLE001 - any load failure gets the same advice
            raise _load_error(model, exc) from None
    device = "cuda" if torch.cuda.is_available() else "cpu"
    try:
        scorer = bert_score.BERTScorer(model_type=model, num_layers=layer, device=device)
    except Exception as exc:  # noqa: BLE001
        raise _load_error(model, exc) from None
    tok = scorer._tokenizer
    limit = getattr(scorer._model.config, "max_position_embeddings", 512)
    if not tok.model_max_length or tok.model_max_length > limit:
        tok.model_max_length = limit  # tokenizers saved without a limit would overflow
    return scorer, layer


def _offline() -> bool:
    """``HF_HUB_OFFLINE`` or ``TRANSFORMERS_OFFLINE`` set (read now, not at import)."""
    return any(
        (os.environ.get(name) or "").strip().upper() in ("1", "ON", "YES", "TRUE")
        for name in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE")
    )


def _hub_cache() -> Path:
    """The Hugging Face hub cache folder, from the environment as it is now."""
    if os.environ.get("HF_HUB_CACHE"):
        return Path(os.environ["HF_HUB_CACHE"])
    if os.environ.get("HF_HOME"):
        return Path(os.environ["HF_HOME"]) / "hub"
    from huggingface_hub import constants

    return Path(constants.HF_HUB_CACHE)


def cached(model: str) -> bool:
    """Whether hub model ``model`` has its ``config.json`` in the local cache (no network)."""
    from huggingface_hub import try_to_load_from_cache

    found = try_to_load_from_cache(model, "config.json", cache_dir=_hub_cache())
    return isinstance(found, str)


def _hub_endpoint() -> str:
    from huggingface_hub import constants

    return (os.environ.get("HF_ENDPOINT") or constants.ENDPOINT).rstrip("/")


def _hub_reachable(endpoint: str, timeout: float = HUB_PROBE_TIMEOUT) -> str | None:
    """None when a TCP connection to ``endpoint`` opens within ``timeout`` s, else why not."""
    import socket
    from urllib.parse import urlsplit

    parts = urlsplit(endpoint)
    port = parts.port or (443 if parts.scheme == "https" else 80)
    try:
        with socket.create_connection((parts.hostname or "", port), timeout=timeout):
            return None
    except OSError as exc:
        return f"{type(exc).__name__}: {exc}"


def _ensure_available(model: str) -> None:
    """Fail fast, with the fix, when hub model ``model`` is neither cached nor downloadable."""
    if Path(model).exists() or not _HUB_ID.match(model) or cached(model):
        return
    if _offline():
        raise _not_cached(model, "HF_HUB_OFFLINE is set, so nothing is downloaded")
    endpoint = _hub_endpoint()
    why = _hub_reachable(endpoint)
    if why is not None:
        raise _not_cached(model, f"the hub ({endpoint}) cannot be reached: {why}")


def _not_cached(model: str, why: str) -> MetricError:
    return MetricError(
        f"The BERTScore model {model!r} is not in the local Hugging Face cache "
        f"({_hub_cache()}) and {why}. Cache it on a machine with network: "
        f"hf download {model} (with the same HF_HOME), or set ETC_BERTSCORE_MODEL / "
        "--bertscore-model to a local model folder."
    )


def _load_error(model: str, exc: Exception) -> MetricError:
    return MetricError(
        f"Cannot load the BERTScore model {model!r} ({type(exc).__name__}: {exc}). "
        "Set --bertscore-model or ETC_BERTSCORE_MODEL to a local model folder or a hub id "
        "that this machine can download, and --bertscore-layer / ETC_BERTSCORE_LAYER if it is "
        "not a model bert-score knows."
    )


class BERTScore(MeanMetric):
    STAGE = "bertscore"
    FAMILY = "similarity"
    FACTS = (
        Fact(
            "bertscore",
            "BERTScore",
            "BERTScore F1 per item with a multilingual BERT (model and layer in the signature), "
            "mean over items",
        ),
    )

    def signature(
        self, ctx: Context | None = None, data: MetricData | None = None
    ) -> dict[str, str]:
        from importlib.metadata import version

        model, layer, _ = _settings(ctx)
        _, layer = _scorer(model, layer)
        return {
            "bertscore": f"model:{model}|layer:{layer}|idf:no|rescale:no|F1|empty:0|mean-over-items"
            f"|bert-score:{version('bert-score')}|transformers:{version('transformers')}"
        }

    def warm(self, ctx: Context) -> None:
        """torch, bert-score and the configured model (hub cache or folder), loaded: what the
        stage's first job would otherwise load."""
        model, layer, _ = _settings(ctx)
        _scorer(model, layer)

    def compute(self, predictions: list[str], references: list[str], ctx: Context) -> MetricData:
        model, layer, batch = _settings(ctx)
        scorer, _ = _scorer(model, layer)
        out = np.zeros(len(predictions))
        # An empty text has no token to align: its F1 is 0, as bert-score itself reports. Such
        # items are not sent to bert-score, whose empty-text path fails under transformers 5.
        keep = [
            i
            for i, (p, r) in enumerate(zip(predictions, references, strict=True))
            if p.strip() and r.strip()
        ]
        if keep:
            _, _, f1 = scorer.score(
                [predictions[i] for i in keep], [references[i] for i in keep], batch_size=batch
            )
            out[keep] = f1.detach().cpu().numpy().astype(float)
        return MetricData({"bertscore": out})


METRIC = BERTScore()
