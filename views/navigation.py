"""Make every visit run the site's own navigation (``streamlit_app.py``), even the first one.

Streamlit keeps its older multipage mode for an app with a ``pages/`` folder beside the main
script until some session has called ``st.navigation``: until then a visitor who opens
``/submit`` first gets ``pages/submit.py`` run on its own (no page config, a sidebar listing
file names). ``streamlit_app.py`` takes its page list from :func:`app_pages`, which records that
the main script ran; :func:`ensure_app_navigation`, called at the top of each page, sees a page
run before the main script ever did, switches the legacy mode off and reruns, so the main script
declares the pages and runs the one asked for (both modes name a page by its URL path).
"""

from __future__ import annotations

from pathlib import Path

from . import SitePage, site_pages

_main_script_ran = False


def app_pages(root: str | Path) -> list[SitePage]:
    """The pages ``streamlit_app.py`` declares (:func:`views.site_pages`), noting it ran."""
    global _main_script_ran
    _main_script_ran = True
    return site_pages(root)


def ensure_app_navigation() -> None:
    """Rerun through ``streamlit_app.py`` when a page runs before the main script ever did."""
    if _main_script_ran:
        return
    import streamlit as st

    try:
        from streamlit.runtime.pages_manager import PagesManager
    except ImportError:  # a Streamlit without the legacy mode
        return
    if PagesManager.uses_pages_directory:
        PagesManager.uses_pages_directory = False
        st.rerun()
