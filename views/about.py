"""What the About page states: the signatures that scores depend on, read from etclib itself."""

from __future__ import annotations

from etclib.errors import EtcError


def metric_signatures() -> dict[str, str]:
    """Signature of each cheap-to-describe part of a score on this installation.

    BERTScore's signature needs its model loaded and sacrebleu's BLEU signature a finished
    evaluation, so those two are described, not computed, here; a part that cannot be described
    (e.g. MeCab missing) says why instead.
    """
    from etclib import __version__

    out: dict[str, str] = {"etclib": __version__}
    parts = {
        "tokenizer": lambda: __import__("etclib.tokenize", fromlist=["signature"]).signature(),
        "rouge": lambda: _metric("rouge"),
        "prompt": lambda: __import__("etclib.task", fromlist=["x"]).prompt_template().signature,
        "judge": _judge,
    }
    for name, get in parts.items():
        try:
            out[name] = get()
        except (EtcError, ImportError, OSError, RuntimeError) as exc:
            out[name] = f"unavailable here ({exc})"
    return out


def _metric(name: str) -> str:
    import importlib

    from etclib import metrics

    return importlib.import_module(metrics.METRICS[name]).signature(None)[name]


def _judge() -> str:
    from etclib.judge.runner import JudgeSettings

    return JudgeSettings.resolve().signature()
