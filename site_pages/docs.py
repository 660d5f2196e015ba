"""Documentation: the project's documents (``docs/*.md``) read on the site, where every "how
this works" link of the pages leads when the repository's address is not declared."""

import streamlit as st

from views import docs
from views.navigation import link_to
from views.text import escape_markdown

names = docs.doc_names()
name = st.query_params.get("doc")
if name in names:
    for kind, part in docs.rendered(name):
        if kind == "image":
            st.image(str(part))
        else:
            st.markdown(part)
    st.divider()
    link_to("site_pages/docs.py", "All documents", icon="📖")
else:
    st.title("Documentation")
    if name is not None:
        st.error(f"There is no document named “{escape_markdown(name)}”; the documents are below.")
    st.markdown(
        "How the benchmark is scored, run and deployed, for operators and contributors. "
        "Visitors find what each page does on the page itself."
    )
    for doc in names:
        st.markdown(f"- [{escape_markdown(docs.doc_title(doc))}]({docs.site_url(doc)})")
