"""The ETC site: navigation only. Each page is a file in pages/."""

import streamlit as st

st.set_page_config(
    page_title="ETC: Emotion Transcription in Conversation", page_icon="💬", layout="wide"
)

pages = [
    st.Page("pages/home.py", title="Home", icon="🏠", default=True),
]
st.navigation(pages).run()
