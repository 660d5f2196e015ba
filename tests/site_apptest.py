"""What the AppTest files of the site share: the corpus store and caches built once per session
and a fresh leaderboard per test (tests/integration/test_site_pages.py, test_site_chat.py), or a
fresh board's state for modules that build their own (``fresh_board``), and helpers that open a
page and read what it shows. Each test file imports the fixtures it uses by name (``corpus_fixture``
provides ``corpus``), so that pytest finds them there."""

from __future__ import annotations

import json

import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

from tests.conftest import REPO
from tests.serve import site_pages

#: Every page the site declares (streamlit_app.py's SITE_PAGES), not a list kept here.
PAGES = [path for path, _ in site_pages()]
XSS_NAME = "<img src=x onerror=window.__x=1>"


@pytest.fixture(scope="session")
def shared_dirs(request, tmp_path_factory):
    """The corpus store and cache folder these modules' tests share: with the real corpus, a
    copy of the run's ``warm_cache`` (its retrieval index and category classifiers, and its
    corpus store), as a site that had run before has them; no test here is about building
    them."""
    from tests.conftest import REAL_CORPUS
    from tests.serve import copy_warm_cache

    shared = tmp_path_factory.mktemp("site-shared")
    if REAL_CORPUS is not None:
        warm = request.getfixturevalue("warm_cache")
        copy_warm_cache(warm, shared / "cache", shared / "etc.duckdb")
    return shared


@pytest.fixture(autouse=True)
def _site(_isolated, shared_dirs, monkeypatch):
    """Share the corpus store and caches across tests; fresh Streamlit caches and leaderboard."""
    monkeypatch.setenv("ETC_STORE_DB", str(shared_dirs / "etc.duckdb"))
    monkeypatch.setenv("ETC_CACHE_DIR", str(shared_dirs / "cache"))
    monkeypatch.setenv("ETC_LB_BOOTSTRAP", "100")
    st.cache_data.clear()
    st.cache_resource.clear()
    yield
    import leaderboard as lb

    try:
        lb.stop_workers()
    finally:
        lb.close_all()


@pytest.fixture(name="corpus")
def corpus_fixture():
    from etclib.data.corpus import load_corpus

    return load_corpus()


@pytest.fixture(autouse=True)
def fresh_board():
    """No resampled scores, Streamlit caches or open boards kept from another test, nor left for
    the next (for modules that build their own board; import it by name)."""
    from tests.fixtures.board import forgotten

    st.cache_data.clear()
    st.cache_resource.clear()
    with forgotten():
        yield
    st.cache_data.clear()
    st.cache_resource.clear()


def app(page: str | None = None, **params: str) -> AppTest:
    """The site, at ``page`` (``site_pages/...``) when given, as a link with ``params`` in its
    URL opens it."""
    at = AppTest.from_file(str(REPO / "streamlit_app.py"), default_timeout=90)
    for key, value in params.items():
        at.query_params[key] = value
    at.run()
    if page:
        at.switch_page(page).run()
    return at


def opened(path: str, **params: str) -> AppTest:
    """:func:`app` at ``path``; it raised nothing."""
    at = app(path, **params)
    assert_clean(at)
    return at


def assert_clean(at: AppTest) -> None:
    assert not at.exception, [e.value for e in at.exception]


def texts(at: AppTest) -> str:
    """Everything shown as markdown, captions, text, alerts, in one string."""
    parts = [m.value for m in at.markdown] + [c.value for c in at.caption]
    parts += [t.value for t in at.text] + [e.value for e in at.error]
    parts += [w.value for w in at.warning] + [i.value for i in at.info]
    parts += [s.value for s in at.success] + [h.value for h in at.subheader]
    return "\n".join(str(p) for p in parts)


def plain(text: str) -> str:
    """Markdown source as a reader sees it: backslash escapes removed."""
    import re

    return re.sub(r"\\(.)", r"\1", text)


def shown_table(at: AppTest, *columns: str):
    """The first table shown with all these columns (read-only tables carry no key in AppTest)."""
    for d in at.dataframe:
        value = d.value
        if all(c in value.columns for c in columns):
            return value
    raise AssertionError(f"no table with columns {columns}")


def send_button(at: AppTest):
    """The submit form's button (AppTest keys form buttons by form and label)."""
    return next(b for b in at.button if b.proto.label == "Submit for scoring")


def write_secrets(tmp_path, **values: str) -> None:
    from etclib.core import config

    lines = [f"{k} = {json.dumps(v)}" for k, v in values.items()]
    (tmp_path / "secrets.toml").write_text("\n".join(lines) + "\n", encoding="utf-8")
    config._secrets.cache_clear()


def predictions_file(corpus, fmt: str = "jsonl", tag: str = "") -> bytes:
    """A valid test-split file: one made-up prediction per item (distinct from the baselines)."""
    from etclib.data.task import items

    rows = [
        {
            "dialogue_id": it.dialogue_id,
            "turn": it.turn,
            "role": it.role,
            "prediction": f"{it.utterance[:8]}と思った{tag}",
        }
        for it in items(corpus, "test")
    ]
    if fmt == "jsonl":
        return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows).encode()
    import csv
    import io

    out = io.StringIO()
    w = csv.DictWriter(out, fieldnames=list(rows[0]), lineterminator="\n")
    w.writeheader()
    w.writerows(rows)
    return out.getvalue().encode()
