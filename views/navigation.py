"""The site's page list as ``streamlit_app.py`` declares it, and links between pages.

``streamlit_app.py`` owns the page list (``SITE_PAGES``) and passes it to :func:`declare_pages`
on every run; Home reads it back with :func:`declared_pages` to link to every page, without
importing the entry point.

The page scripts live in ``site_pages/``, not ``pages/``: a folder named ``pages/`` beside the main
script switches Streamlit's legacy multipage mode on (a visitor opening ``/submit`` first would get
the script run on its own, without the navigation).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass


@dataclass(frozen=True)
class SitePage:
    """One page of the site: its script, title, icon, and a line for the home page; a
    ``hidden`` page has a URL but no place in the navigation (the documentation reader); an
    ``admin`` page exists only where an admin token is configured (the operator's page)."""

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


def link_to(
    path: str, label: str, icon: str | None = None, query_params: dict[str, str] | None = None
) -> None:
    """A link to another page of the site: ``st.page_link`` when the navigation knows the page
    (the site run through ``streamlit_app.py``), else a plain Markdown link to its URL path (a
    page script run on its own, as in a page's own test); ``query_params`` ride along."""
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
