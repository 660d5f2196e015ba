"""Helpers shared by the Streamlit pages: everything a page needs beyond layout.

Pages stay thin: they call these functions and ``etclib`` / ``leaderboard``, never SQL, scoring or
prompt code. One module per concern:

- this module: the corpus store, its statistics, and the example dialogue of the home page;
- :mod:`.corpus`: the corpus browser's queries (filters, search pages, lengths, Big Five);
- :mod:`.chat`: the chat page's backend choices, limits and predictions;
- :mod:`.board`: the leaderboard and submit pages' tables and charts;
- :mod:`.text`: rendering visitor text safely (never as HTML).

Nothing here imports Streamlit, so every function is testable without a running page; pages wrap
the expensive ones in ``st.cache_data`` / ``st.cache_resource``.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class SitePage:
    """One page of the site: its script, title, icon, and a line for the home page."""

    path: str
    title: str
    icon: str
    blurb: str


#: The site's pages in navigation order; ``streamlit_app.py`` declares them, Home links to them.
SITE_PAGES: tuple[SitePage, ...] = (
    SitePage("pages/home.py", "Home", "🏠", "The task, an example, and the current top systems."),
    SitePage(
        "pages/chat.py",
        "Chat",
        "💬",
        "Write a dialogue and see each author's predicted transcription.",
    ),
    SitePage("pages/corpus.py", "Corpus", "📚", "Search the 997 dialogues and their statistics."),
    SitePage(
        "pages/leaderboard.py", "Leaderboard", "🏆", "Rankings with intervals, charts and details."
    ),
    SitePage(
        "pages/submit.py", "Submit", "📤", "Upload test-split predictions and get them scored."
    ),
    SitePage(
        "pages/judge_vs_human.py",
        "Judge vs Human",
        "⚖️",
        "How well the LLM judge agrees with human raters.",
    ),
    SitePage("pages/about.py", "About", "ℹ️", "Licences, how scores are computed, how to cite."),
)


def site_pages(root: str | Path) -> list[SitePage]:
    """The pages whose script exists under ``root`` (the folder of ``streamlit_app.py``)."""
    return [p for p in SITE_PAGES if (Path(root) / p.path).is_file()]


def corpus_store() -> Any:
    """A read-only cursor on the corpus store (built on first use); one per caller/thread."""
    from etclib import store

    return store.connect()


def corpus_stats() -> dict[str, Any]:
    """``etclib.stats.compute`` on the corpus store."""
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
