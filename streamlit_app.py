"""The ETC site: navigation only. Each page is a file in pages/ (see docs/site.md)."""

from pathlib import Path

import streamlit as st

from views.navigation import app_pages

st.set_page_config(
    page_title="ETC: Emotion Transcription in Conversation", page_icon="💬", layout="wide"
)

st.navigation(
    [
        st.Page(p.path, title=p.title, icon=p.icon, default=(p.path == "pages/home.py"))
        for p in app_pages(Path(__file__).parent)
    ]
).run()
