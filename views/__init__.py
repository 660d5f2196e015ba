"""Helpers shared by the Streamlit pages; this module holds the corpus store, its statistics and
Home's example dialogue. No module imports Streamlit at module level, so every helper is testable
without a page."""

from __future__ import annotations

from typing import Any


def corpus_store() -> Any:
    """A read-only cursor on the corpus store (built on first use); one per caller/thread."""
    from etclib.data import store

    return store.connect()


def corpus_key() -> str:
    """Which corpus the pages show: the key of a page's cached corpus data."""
    from etclib.core import config

    return f"{config.data_dir().resolve()}|{config.store_path().resolve()}"


def corpus_stats() -> dict[str, Any]:
    """``etclib.metrics.corpus_stats.compute`` on the corpus store."""
    from etclib.metrics import corpus_stats as stats

    return stats.compute(corpus_store())


def example_dialogue(dialogue_id: int | None = None) -> dict[str, Any] | None:
    """A test-split dialogue to show the task with (the first one, unless asked)."""
    from etclib.data import store

    con = corpus_store()
    ids = store.dialogue_ids(con, "test")
    if not ids:
        return None
    return store.dialogue(con, dialogue_id if dialogue_id in ids else ids[0])
