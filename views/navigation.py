"""The site's page list as ``streamlit_app.py`` declares it, and links between pages. (Scripts live
in ``site_pages/``: ``pages/`` would switch on Streamlit's legacy mode.)"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass


@dataclass(frozen=True)
class SitePage:
    """A page; ``hidden``: not in the navigation; ``admin``: only with an admin token."""

    path: str
    title: str
    icon: str
    blurb: str
    hidden: bool = False
    admin: bool = False


#: The pages of the last ``declare_pages`` call in this server process; None before the first.
_declared: tuple[SitePage, ...] | None = None


def declare_pages(pages: Iterable[SitePage]) -> tuple[SitePage, ...]:
    """Record the pages that ``streamlit_app.py`` declares (so it has run); return them."""
    global _declared
    _declared = tuple(pages)
    return _declared


def declared_pages() -> tuple[SitePage, ...]:
    """The site's pages in navigation order (none if the entry point has not run yet)."""
    return _declared or ()


#: An entry's own page (hidden from the navigation): ``entry?submission=ID[&metric=KEY]``.
ENTRY_PAGE = "site_pages/entry.py"


def entry_params(submission_id: str, metric: str | None = None) -> dict[str, str]:
    """The query parameters of ``submission_id``'s page; ``metric``: its breakdown chart's."""
    return {"submission": submission_id} | ({"metric": metric} if metric else {})


def open_entry(submission_id: str, metric: str | None = None) -> None:
    """Go to ``submission_id``'s page (a script's last word: this run stops here)."""
    import streamlit as st

    st.switch_page(ENTRY_PAGE, query_params=entry_params(submission_id, metric))


def link_to(
    path: str, label: str, icon: str | None = None, query_params: dict[str, str] | None = None
) -> None:
    """A link to another page; a Markdown link where the navigation does not know it."""
    from urllib.parse import urlencode

    import streamlit as st
    from streamlit.errors import StreamlitAPIException

    try:
        st.page_link(path, label=label, icon=icon, query_params=query_params)
    except StreamlitAPIException:
        url = path.rsplit("/", 1)[-1].removesuffix(".py")
        if query_params:
            url += "?" + urlencode(query_params)
        st.markdown(f"[{label}]({url})")
