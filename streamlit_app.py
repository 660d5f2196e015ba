"""The ETC site's entry point: the page list, the navigation, and what every page needs
(docs/site.md). Streamlit runs it first on every run of every page."""

from pathlib import Path

import streamlit as st

import leaderboard as lb
from etclib.core import admintoken
from views import session_guard, visitors
from views.board import database_key
from views.errors import board_unavailable, shown_errors
from views.navigation import SitePage, declare_pages

ROOT = Path(__file__).parent

#: The site's pages in navigation order: script, title, icon, and Home's line about it.
SITE_PAGES = (
    SitePage(
        "site_pages/home.py", "Home", "🏠", "The task, an example, and the current top systems."
    ),
    SitePage(
        "site_pages/chat.py",
        "Chat",
        "💬",
        "Write a dialogue and see each author's predicted transcription.",
    ),
    SitePage(
        "site_pages/corpus.py", "Corpus", "📚", "Search the 997 dialogues and their statistics."
    ),
    SitePage(
        "site_pages/leaderboard.py",
        "Leaderboard",
        "🏆",
        "Rankings with intervals, charts and details.",
    ),
    SitePage(
        "site_pages/compare.py",
        "Compare",
        "🆚",
        "Two entries side by side: which is better, and where.",
    ),
    SitePage(
        "site_pages/submit.py", "Submit", "📤", "Upload test-split predictions and get them scored."
    ),
    SitePage(
        "site_pages/judge_vs_human.py",
        "Judge vs Human",
        "⚖️",
        "How well the LLM judge agrees with human raters.",
    ),
    SitePage(
        "site_pages/causes.py",
        "Causes",
        "🧭",
        "Which utterances each transcribed state comes from.",
    ),
    SitePage(
        "site_pages/about.py", "About", "ℹ️", "Licences, how scores are computed, how to cite."
    ),
    SitePage(
        "site_pages/entry.py",
        "Entry",
        "🔎",
        "One entry's scores, breakdowns and items.",
        hidden=True,
    ),
    SitePage(
        "site_pages/docs.py",
        "Documentation",
        "📖",
        "The project's documents, for operators and contributors.",
        hidden=True,
    ),
    SitePage(
        "site_pages/operator.py",
        "Operator",
        "🔧",
        "Moderation, annotator codes and samples, with the admin token.",
        hidden=True,
        admin=True,
    ),
)


@st.cache_resource(show_spinner=False)
def _scoring_workers(database: str):  # database: the cache key (a test may switch databases)
    """Once per server and database: queued submissions get scored whichever page is open."""
    return lb.start_workers()


st.set_page_config(
    page_title="ETC: Emotion Transcription in Conversation", page_icon="💬", layout="wide"
)
session_guard.install()  # no visitor clears every cache or learns the server's paths
with shown_errors("The site refused to start: ", stop=True):
    # a weak ETC_ADMIN_TOKEN (under 24 characters) stops the site; none leaves out the admin pages
    admin = admintoken.configured_token() is not None
with shown_errors(stop=True):
    if not visitors.admit():  # what one visitor holds in the server's memory is bounded
        st.error(
            f"You have {visitors.pages_per_visitor()} pages of this site open, the most one "
            "visitor (one network address, or one signed-in account) may have at once. Close "
            "some of them, then reload this one."
        )
        st.stop()
try:  # created on the site's first start
    lb.open_db()
except lb.StorageError as exc:
    # Logged for the operator; the pages that need the board say it is unavailable.
    board_unavailable(exc, show=False)
else:
    with shown_errors("The scoring workers cannot start: "):
        _scoring_workers(database_key())

pages = declare_pages(p for p in SITE_PAGES if (ROOT / p.path).is_file() and (admin or not p.admin))
st.navigation(
    [
        st.Page(
            p.path,
            title=p.title,
            icon=p.icon,
            default=(p.path == "site_pages/home.py"),
            visibility="hidden" if p.hidden else "visible",
        )
        for p in pages
    ]
).run()
