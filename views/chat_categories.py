"""The emotion categories the chat shows under each utterance (the ERC track's default backend,
created once per server, costing no rate limit); a backend's failure becomes a visitor message with
a reference and an operator log line."""

from __future__ import annotations

import logging
import uuid
from collections.abc import Sequence
from typing import Any

from etclib.core.errors import BackendError, EtcError
from etclib.data.corpus import CATEGORIES, CATEGORY_TO_JA
from etclib.data.task import Item
from etclib.tracks.categories import TRACK as CATEGORIES_TRACK
from etclib.tracks.categories.labels import LabelSet

_log = logging.getLogger(__name__)


def erc_backend_name() -> str:
    """The ERC backend whose categories the chat shows: the track's default if it reads a chat."""
    default = CATEGORIES_TRACK.default_backend
    for name in [default, *(n for n in CATEGORIES_TRACK.backends if n != default)]:
        try:
            if CATEGORIES_TRACK.backend_class(name).in_chat:
                return name
        except Exception:  # noqa: BLE001 - a broken backend is passed over; the next one serves
            continue
    return default


def erc_status() -> Any:
    """``etclib.models.backend_status`` of :func:`erc_backend_name` (never raises)."""
    return CATEGORIES_TRACK.backend_status(erc_backend_name())


def erc_label() -> str:
    """How the page names the category model: ``tfidf: TF-IDF (MeCab tokens) + ...``."""
    status = erc_status()
    about = status.description.rstrip(".")
    return f"{status.name}: {about}" if about else status.name


def make_erc_backend() -> Any:
    """Create the chat's ERC backend; ``BackendError`` saying why when it is not usable."""
    status = erc_status()
    if not status.usable:
        raise BackendError(
            f"The emotion-category model ({status.name}) is not available here: {status.reason}"
        )
    return CATEGORIES_TRACK.backend(status.name)


def predict_categories(backend: Any, items: Sequence[Item]) -> list[LabelSet]:
    """The ERC backend's label set for each item (a replayed corpus dialogue)."""
    return _guarded(lambda: list(backend.predict(list(items))))


def conversation_categories(backend: Any, lines: Sequence[tuple[str, str]]) -> LabelSet:
    """The categories predicted for the last of ``lines``."""
    from etclib.tracks.categories.analysis import chat_categories

    return _guarded(lambda: chat_categories(list(lines), backend))


def _guarded(call: Any) -> Any:
    """``call()``; a failure other than ``EtcError`` becomes :func:`backend_failure`'s error."""
    try:
        return call()
    except EtcError:
        raise
    except Exception as exc:  # noqa: BLE001 - a backend's own failure, reported to the visitor
        raise backend_failure(exc, "The emotion-category model", "chat ERC backend") from None


def backend_failure(
    exc: Exception, what: str, logged_as: str, log: logging.Logger = _log
) -> BackendError:
    """The visitor's error for a backend's failure; its text goes redacted to ``log`` only."""
    from etclib.core.redact import redact

    ref = uuid.uuid4().hex[:10]
    log.error("%s failed (ref %s): %s", logged_as, ref, redact(f"{type(exc).__name__}: {exc}"))
    return BackendError(
        f"{what} failed ({exc.__class__.__name__}); the operator has been told (ref {ref})."
    )


def categories_text(labels: Sequence[str]) -> str:
    """``joy (喜び), surprise (驚き)``: a label set with the corpus's Japanese names."""
    return ", ".join(f"{c} ({CATEGORY_TO_JA[c]})" for c in labels)


LABEL_SET_NOTE = (
    f"the corpus's {len(CATEGORIES)} categories ({', '.join(CATEGORIES)}), several at once "
    "possible; neutral when none of the others applies"
)
