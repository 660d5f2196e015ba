"""Helpers shared by the Streamlit pages: cached access to the corpus and its store.

Pages stay thin: they call these functions and etclib/leaderboard, never SQL or scoring code.
"""

from __future__ import annotations

from typing import Any


def corpus_store():
    """A read-only cursor on the corpus store (built on first use)."""
    from etclib import store

    return store.connect()


def corpus_stats() -> dict[str, Any]:
    from etclib import stats

    return stats.compute(corpus_store())


def example_dialogue(dialogue_id: int | None = None) -> dict[str, Any] | None:
    """A test-split dialogue to show the task with (the first one, unless asked)."""
    from etclib import store

    con = corpus_store()
    ids = store.dialogue_ids(con, "test")
    if not ids:
        return None
    return store.dialogue(con, dialogue_id if dialogue_id in ids else ids[0])
