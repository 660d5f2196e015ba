"""Every page of the site through ``streamlit.testing.v1.AppTest``, with and without secrets.

The corpus store and the retrieval index are built once per session (under pytest's tmp dir); each
test has its own leaderboard database and secrets file (conftest's isolation fixture). Expected
numbers come from the corpus records themselves, not from the site's queries. The chat page's tests
are tests/integration/test_site_chat.py; the shared fixtures and helpers, tests/site_apptest.py."""

from __future__ import annotations

import time

import pytest
from streamlit.testing.v1 import AppTest

from tests import vega
from tests.conftest import REPO, needs_corpus
from tests.serve import site_pages
from tests.site_apptest import (  # noqa: F401 - fixtures, found by name
    PAGES,
    XSS_NAME,
    _site,
    app,
    assert_clean,
    corpus_fixture,
    opened,
    plain,
    predictions_file,
    send_button,
    shared_dirs,
    shown_table,
    texts,
    write_secrets,
)
from views.board import VIEWS

pytestmark = [needs_corpus]

# --- every page ----------------------------------------------------------------------------------


def test_the_page_list_is_the_sites_and_names_every_page_script():
    """The smoke tests walk the site's own page list; every script in site_pages/ is on it."""
    everything = [path for path, _ in site_pages(hidden=True)]
    assert sorted(everything) == sorted(
        str(p.relative_to(REPO)) for p in REPO.glob("site_pages/*.py")
    )
    assert set(everything) - set(PAGES) == {
        "site_pages/docs.py",
        "site_pages/entry.py",
        "site_pages/operator.py",
    }
    assert PAGES[0] == "site_pages/home.py"


@pytest.mark.parametrize("page", PAGES)
def test_page_loads_without_secrets(page):
    at = app(page)
    assert_clean(at)
    assert at.title, f"{page} shows no title"
    assert not at.error, [e.value for e in at.error]


def test_pages_load_with_secrets(tmp_path):
    write_secrets(
        tmp_path,
        OPENAI_API_KEY="sk-test",
        OPENAI_BASE_URL="http://127.0.0.1:9/v1",
        GEMINI_API_KEY="g-test",
        ETC_FINETUNED_BASE_URL="http://127.0.0.1:9/v1",
        ETC_FINETUNED_MODEL="swallow-sft",
        ETC_ADMIN_TOKEN="admin-secret-token-0123456789",
    )
    at = app()
    for page in PAGES:
        at.switch_page(page).run()
        assert_clean(at)
        assert not at.error, (page, [e.value for e in at.error])
    at.switch_page("site_pages/chat.py").run()
    labels = at.selectbox(key="chat_model").options
    assert any("Gemini" in o for o in labels)
    # nothing listens at 127.0.0.1:9: both servers are named offline, not offered
    assert not any("Fine-tuned" in o or "OpenAI" in o for o in labels)
    shown = plain(texts(at))
    assert "Offline right now" in shown and "Fine-tuned" in shown
    # Secrets are never shown.
    at.switch_page("site_pages/about.py").run()
    assert "sk-test" not in texts(at) and "admin-secret-token-0123456789" not in texts(at)


def test_home_links_every_page_and_shows_a_test_dialogue(corpus):
    at = app()
    assert_clean(at)
    targets = {link.proto.page for link in at.page_link}
    assert len(targets) == len(PAGES) - 1
    first = corpus.split("test")[0]
    shown = texts(at)
    assert f"dialogue {first.dialogue_id}" in shown
    assert first.utterances[0].transcription in shown


def test_scoring_workers_start_once_from_the_entry_point(monkeypatch):
    """Whatever page is opened, streamlit_app.py starts the workers, once per database."""
    import leaderboard as lb

    calls = []
    real = lb.start_workers
    monkeypatch.setattr(lb, "start_workers", lambda *a, **k: calls.append(1) or real(*a, **k))
    at = app("site_pages/about.py")
    for page in PAGES:
        at.switch_page(page).run()
        assert_clean(at)
    assert len(calls) == 1


def test_home_links_are_the_entry_points_page_list():
    """Home links to the pages that streamlit_app.py declared, with their titles and icons."""
    import ast

    tree = ast.parse((REPO / "streamlit_app.py").read_text(encoding="utf-8"))
    declared = [
        [a.value for a in call.args]
        for call in ast.walk(tree)
        if isinstance(call, ast.Call)
        and getattr(call.func, "id", "") == "SitePage"
        and not call.keywords  # hidden=True: kept out of the navigation and of Home's links
    ]
    expected = [
        (path, title, icon)
        for path, title, icon, _ in declared
        if path != "site_pages/home.py" and (REPO / path).is_file()
    ]
    at = app()
    got = [(link.proto.page, link.proto.label, link.proto.icon) for link in at.page_link]
    assert [(page.rsplit("/", 1)[-1], label, icon) for page, label, icon in got] == [
        (path.rsplit("/", 1)[-1].removesuffix(".py"), title, icon) for path, title, icon in expected
    ]


# --- corpus --------------------------------------------------------------------------------------


def literal_count(corpus, needle: str) -> int:
    n = needle.lower()
    return sum(n in u.text.lower() or n in u.transcription.lower() for u in corpus.utterances)


@pytest.mark.parametrize(
    "query",
    ["%", "_", "'; DROP TABLE utterances; --", "<script>alert(1)</script>", "\\", "嬉しい", "100%"],
)
def test_corpus_search_is_literal_and_safe(corpus, query):
    at = app("site_pages/corpus.py")
    at.text_input(key="corpus_text").set_value(query).run()
    assert_clean(at)
    assert f"**{literal_count(corpus, query):,}** matching utterances" in texts(at)
    at.text_input(key="corpus_text").set_value("").run()
    assert f"**{len(corpus.utterances):,}** matching utterances" in texts(at)


def test_corpus_filters_pages_and_dialogue_view(corpus):
    at = app("site_pages/corpus.py")
    at.selectbox(key="corpus_split").set_value("test").run()
    at.selectbox(key="corpus_role").set_value("listener").run()
    at.multiselect(key="corpus_categories").set_value(["joy"]).run()
    assert_clean(at)
    expected = sum(
        1
        for d in corpus.split("test")
        for u in d.utterances
        if u.role == "listener" and "joy" in u.label
    )
    assert f"**{expected:,}** matching utterances" in texts(at)
    pager = at.get("pagination")
    assert len(pager) == (1 if expected > 25 else 0)
    # With no dialogue chosen, the view follows the results: the first result's dialogue.
    first = next(
        d
        for d in corpus.split("test")
        for u in d.utterances
        if u.role == "listener" and "joy" in u.label
    )
    assert f"**Dialogue {first.dialogue_id}**" in texts(at)
    at.number_input(key="corpus_dialogue").set_value(945).run()
    assert_clean(at)
    d = corpus.by_id[945]
    assert "**Dialogue 945**" in texts(at)
    # The chat-style view: each utterance with its transcription, the aggregate and each label.
    assert [t.value for t in at.text] == [f"{u.letter}: {u.text}" for u in d.utterances]
    captions = plain("\n".join(c.value for c in at.caption))
    for u in d.utterances:
        assert f"Emotion transcription: {u.transcription.strip()}" in captions
        annotators = " · ".join(f"{i + 1}: {', '.join(a)}" for i, a in enumerate(u.annotations))
        assert f"Label: **{', '.join(u.label)}** (annotators {annotators})" in captions
    people = shown_table(at, "participant", "openness")
    assert list(people["participant"]) == [d.speaker_id, d.listener_id]
    assert int(people["openness"].iloc[0]) == corpus.participants[d.speaker_id].scores["openness"]


def test_corpus_result_row_selection_opens_its_dialogue(corpus):
    """A selected result row opens its dialogue (the browser test clicks a real row)."""
    at = app("site_pages/corpus.py")
    at.selectbox(key="corpus_split").set_value("test").run()
    table = next(d for d in at.dataframe if d.key and d.key.startswith("corpus_results"))
    shown = table.value
    row = 13  # a row of another dialogue than the first result's
    expected = int(shown["dialogue_id"].iloc[row])
    assert expected != int(shown["dialogue_id"].iloc[0])
    at.session_state[table.key] = {"selection": {"rows": [row], "columns": [], "cells": []}}
    at.run()
    assert_clean(at)
    assert f"**Dialogue {expected}**" in texts(at)
    assert at.number_input(key="corpus_dialogue").value == expected
    # Typing another id afterwards wins over the still-selected row.
    at.number_input(key="corpus_dialogue").set_value(945).run()
    assert "**Dialogue 945**" in texts(at)


def test_corpus_statistics_show_overall_prevalence_as_etclib_stats(corpus):
    from etclib.data import store
    from etclib.data.corpus import CATEGORIES
    from etclib.metrics import corpus_stats as stats

    at = app("site_pages/corpus.py")
    at.segmented_control(key="corpus_view").set_value("Statistics").run()
    assert_clean(at)
    table = shown_table(at, "category", "speaker", "listener", "all", "kappa")
    assert list(table["category"]) == list(CATEGORIES)
    cli = stats.compute(store.connect())["labels"]  # what `etclib stats` prints
    for row in table.to_dict("records"):
        for col in ("speaker", "listener", "all", "kappa"):
            assert row[col] == pytest.approx(cli[row["category"]][col], abs=1e-9)
    # The overall share, counted from the corpus records themselves.
    n = len(corpus.utterances)
    for c in CATEGORIES:
        share = 100 * sum(c in u.label for u in corpus.utterances) / n
        assert table.set_index("category").loc[c, "all"] == pytest.approx(share)
    # The prevalence chart has the overall series beside the two roles.
    (bars,) = vega.marks(vega.shown(at)[0], "bar")
    assert list(dict.fromkeys(r["role"] for r in bars["rows"])) == ["speaker", "listener", "all"]


def test_corpus_overlong_search_gets_a_message():
    from views import corpus as cq

    at = app("site_pages/corpus.py")
    at.text_input(key="corpus_text").set_value("あ" * 10_000).run()
    assert_clean(at)
    assert f"10,000 characters; the limit is {cq.MAX_QUERY_CHARS}" in texts(at)
    assert "matching utterances" not in texts(at)


def test_corpus_big_five_filter(corpus):
    at = app("site_pages/corpus.py")
    at.slider(key="corpus_b5_extraversion").set_value((12, 14)).run()
    assert_clean(at)
    expected = sum(
        1
        for u in corpus.utterances
        if 12 <= corpus.participants[u.participant_id].scores["extraversion"] <= 14
    )
    assert f"**{expected:,}** matching utterances" in texts(at)


def test_corpus_statistics_charts():
    at = app("site_pages/corpus.py")
    assert not vega.shown(at)  # charts are drawn only in the Statistics view
    at.segmented_control(key="corpus_view").set_value("Statistics").run()
    assert_clean(at)
    charts = vega.shown(at)
    assert len(charts) == 5
    titles = [vega.title(c) for c in charts]
    assert any("Fleiss" in t for t in titles) and any("co-occurrence" in t for t in titles)


# --- submit --------------------------------------------------------------------------------------


def fill_metadata(at: AppTest, name: str = "My system", **extra: str) -> None:
    at.text_input(key="submit_name").set_value(name)
    for key, value in extra.items():
        at.text_input(key=f"submit_{key}").set_value(value)


def wait_until_final(at: AppTest, timeout: float = 60) -> str:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        at.run()
        shown = texts(at)
        if "✅ scored" in shown or "❌" in shown:
            return shown
        time.sleep(0.5)
    raise AssertionError("the submission was not scored in time:\n" + texts(at))


def test_submit_valid_file_is_scored_and_linked(corpus):
    at = app("site_pages/submit.py")
    assert {b.proto.label for b in at.get("download_button")} == {
        "Template (JSON Lines)",
        "Template (CSV)",
        "Categories template (JSON Lines)",
        "Categories template (CSV)",
    }
    at.file_uploader(key="submit_file").upload("preds.jsonl", predictions_file(corpus)).run()
    assert_clean(at)
    assert "valid, 1,010 predictions" in texts(at)
    fill_metadata(at, XSS_NAME, team="Lab", model_url="https://example.org/model")
    send_button(at).click().run()
    assert_clean(at)
    assert "Received as submission" in texts(at)
    shown = wait_until_final(at)
    assert "✅ scored" in shown
    import leaderboard as lb

    board = lb.ranking()
    assert XSS_NAME in list(board["name"])
    (sid,) = board[board["name"] == XSS_NAME]["id"]
    links = [link.proto for link in at.page_link]
    assert links and (links[0].page, links[0].query_string) == ("entry", f"submission={sid}")


@pytest.mark.parametrize(
    ("name", "make", "problem"),
    [
        ("bad.jsonl", lambda good: b'{"dialogue_id": 1,\n' + good, "line 1: invalid JSON"),
        (
            "short.jsonl",
            lambda good: b"\n".join(good.split(b"\n")[:10]) + b"\n",
            "have no prediction",
        ),
        ("latin1.jsonl", lambda good: good.replace("と".encode(), b"\xe0", 1), "not valid UTF-8"),
        ("bad.csv", lambda good: b"id,text\n1,x\n", "CSV header must have the columns"),
        ("empty.jsonl", lambda good: b"", "the file is empty"),
    ],
)
def test_submit_broken_files_show_line_errors(corpus, name, make, problem):
    at = app("site_pages/submit.py")
    at.file_uploader(key="submit_file").upload(name, make(predictions_file(corpus))).run()
    assert_clean(at)
    assert any("was refused" in e.value for e in at.error)
    table = shown_table(at, "line", "problem")
    rendered = "\n".join(f"line {ln}: {msg}" if ln != "" else msg for ln, msg in table.values)
    assert problem in rendered
    assert send_button(at).proto.disabled  # nothing can be submitted
    import leaderboard as lb

    assert lb.ranking().empty


def test_submit_csv_and_refused_details(corpus):
    at = app("site_pages/submit.py")
    at.file_uploader(key="submit_file").upload("p.csv", predictions_file(corpus, "csv")).run()
    assert "valid, 1,010 predictions (csv)" in plain(texts(at))
    fill_metadata(at, "CSV system", model_url="javascript:alert(1)")
    send_button(at).click().run()
    assert_clean(at)
    fields = shown_table(at, "field", "problem")
    assert list(fields["field"]) == ["model or code link"]  # the field facts' label
    assert "http" in fields["problem"].iloc[0]


# --- leaderboard ---------------------------------------------------------------------------------


def test_leaderboard_empty_database():
    at = app("site_pages/leaderboard.py")
    assert_clean(at)
    assert "No scored entry yet" in texts(at)
    assert not vega.shown(at)


@pytest.fixture(scope="module")
def populated_board(request, tmp_path_factory):
    """A board with the copy and constant baselines, the reported rows and one scored entry named
    ``XSS_NAME``, seeded and scored once for this module's tests (about 5 s each time):
    (its file, the entry's id). Read-only: :func:`populated` copies it."""
    import leaderboard as lb
    from etclib.data.corpus import load_corpus
    from tests.conftest import REAL_CORPUS

    if REAL_CORPUS is None:
        pytest.skip("real ETC corpus not found: set ETC_DATA_DIR")
    corpus = load_corpus(REAL_CORPUS)
    base = tmp_path_factory.mktemp("populated")
    shared = request.getfixturevalue("shared_dirs")  # imported above, for pytest to find
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("ETC_LEADERBOARD_DB", str(base / "leaderboard.sqlite"))
        mp.setenv("ETC_CACHE_DIR", str(shared / "cache"))  # the classifiers trained
        mp.setenv("ETC_STORE_DB", str(shared / "etc.duckdb"))
        mp.setenv("ETC_STUDIES_DB", str(base / "studies.sqlite"))
        try:
            lb.seed_baselines(backends=("copy", "constant"))
            receipt = lb.submit(
                predictions_file(corpus, tag="。"),
                {"name": XSS_NAME, "setting": "zero-shot", "saw_test": "no"},
            )
            lb.process_jobs()
        finally:
            lb.close_all()
    return base / "leaderboard.sqlite", receipt.id


@pytest.fixture
def populated(populated_board):
    """This test's board (ETC_LEADERBOARD_DB) starts as a copy of :func:`populated_board`; the
    entry's id."""
    import os
    from pathlib import Path

    from tests.conftest import copy_board

    board, sid = populated_board
    copy_board(board, Path(os.environ["ETC_LEADERBOARD_DB"]))
    return sid


def test_leaderboard_populated(populated):
    import leaderboard as lb

    at = app("site_pages/leaderboard.py")
    assert_clean(at)
    board = lb.ranking()
    table = shown_table(at, "rank_band", "name")
    assert len(table) == len(board) == 3
    assert XSS_NAME in list(table["name"])  # shown as a cell value, not markup
    assert "ROUGE-L ↑ [95% CI]" in table.columns and "rougeL [95% CI]" not in table.columns
    assert all("[" in v for v in table["ROUGE-L ↑ [95% CI]"])
    assert not vega.shown(at)  # the Charts tab is closed: only the open tab runs
    at.session_state["lb_view"] = VIEWS[1]
    at.run()
    assert_clean(at)
    # bars and the best score over time; no judge scores, so no scatter
    titles = [vega.title(c) for c in vega.shown(at)]
    assert titles == [
        "ROUGE-L ↑ (×100) · dashed: trivial floors",
        "Best ROUGE-L ↑ (×100) over time",
    ]
    (bars,) = vega.marks(vega.shown(at)[0], "bar")
    (errors,) = vega.marks(vega.shown(at)[0], "errorbar")  # every bar's interval, lo to hi
    assert len(bars["rows"]) == 3 and errors["rows"] == bars["rows"]
    assert all(r["lo"] is not None and r["lo"] <= r["hi"] for r in bars["rows"])
    # as typed (Vega draws text, never markup): the whole name on hover, cut to 32 characters
    # on the axis (views.charts)
    assert XSS_NAME in [r["name"] for r in bars["rows"]]
    assert XSS_NAME in [r["label"] for r in bars["rows"]]  # short enough: whole
    reported = shown_table(at, "source")
    assert len(reported) == len(lb.reported()) == 5
    # Filters
    at.session_state["lb_view"] = VIEWS[0]
    at.multiselect(key="lb_settings").set_value(["zero-shot"]).run()
    assert list(shown_table(at, "rank_band", "name")["name"]) == [XSS_NAME]
    # Metric picker re-ranks
    at.selectbox(key="lb_metric").set_value("bleu1").run()
    assert_clean(at)
    assert "BLEU-1 ↑ [95% CI]" in shown_table(at, "rank_band", "name").columns
    # Reported rows join the chart on demand, in grey
    at.session_state["lb_view"] = VIEWS[1]
    at.multiselect(key="lb_settings").set_value([]).run()
    at.toggle(key="lb_with_reported").set_value(True).run()
    (bars,) = vega.marks(vega.shown(at)[0], "bar")
    assert sum("(reported)" in r["label"] for r in bars["rows"]) == 5


def test_the_banner_and_the_floors_read_the_constant_from_the_board(populated):
    """No entry has a judge score: Home and the Leaderboard say what the constant baseline
    reaches on this board, the board marks the trivial baselines as floors, and the chart draws
    them as floor lines."""
    import leaderboard as lb

    board = lb.ranking()
    constant = board[board["baseline"] == "constant"]["rougeL"].iloc[0]
    for page in (None, "site_pages/leaderboard.py"):
        at = app(page)
        assert_clean(at)
        assert f"reaches ROUGE-L {constant:.2f} here" in texts(at), page
    kinds = shown_table(at, "rank_band", "name").set_index("name")["kind"]
    assert kinds["Constant transcription (etclib)"] == "baseline (floor)"
    assert kinds["Copy of the utterance (etclib)"] == "baseline (floor)"
    at.session_state["lb_view"] = VIEWS[1]
    at.run()
    assert_clean(at)
    notes = vega.texts(vega.shown(at)[0])
    assert any(n.startswith("constant baseline (floor)") for n in notes), notes
    assert any(n.startswith("copy baseline (floor)") for n in notes), notes


def test_an_entrys_page(populated, corpus):
    at = opened("site_pages/entry.py", submission=populated)
    # its name escaped, never HTML
    assert [t.value for t in at.title] == [r"\<img src\=x onerror\=window\.\_\_x\=1\>"]
    scores = shown_table(at, "metric", "value [95% CI]")
    assert {"BLEU-4 ↑", "ROUGE-L ↑"} <= set(scores["metric"])
    items = shown_table(at, "prediction", "reference")
    assert len(items) == 1010
    first = corpus.split("test")[0].utterances[0]
    assert items["reference"].iloc[0] == first.transcription
    assert {b.proto.label for b in at.get("download_button")} == {"This entry's items (CSV)"}
    import leaderboard as lb

    board = lb.ranking().set_index("id")
    rank = f"Rank {board.loc[populated, 'rank']} (band {board.loc[populated, 'rank_band']})"
    assert f"{rank} of {len(board)} on the transcriptions board, by ROUGE-L ↑." in texts(at)
    # a floor is badged as one, as on the board
    constant = board.index[board["baseline"] == "constant"][0]
    at = opened("site_pages/entry.py", submission=constant)
    assert "baseline (floor) · status: scored" in texts(at)
    # a published row's page: the paper's numbers, no rank, no items
    published = lb.reported()["id"].iloc[0]
    at = opened("site_pages/entry.py", submission=published)
    assert "📄 reported" in texts(at) and "Rank " not in texts(at)
    assert {"as reported"} == set(shown_table(at, "metric", "signature")["signature"])
    assert not at.get("download_button")


def test_leaderboard_opens_an_entrys_page_when_one_is_chosen(populated):
    at = app("site_pages/leaderboard.py")
    assert_clean(at)
    assert at.selectbox(key="lb_detail").value is None  # a visit builds no entry's detail
    assert not [d for d in at.dataframe if "prediction" in d.value.columns]
    labels = {b.proto.label for b in at.get("download_button")}
    assert labels == {"Board (CSV)", "Board (JSON)", "Published results (CSV)"}
    at.selectbox(key="lb_detail").set_value(populated).run()
    assert_clean(at)
    assert at.query_params["submission"] in (populated, [populated])
    assert len(shown_table(at, "prediction", "reference")) == 1010


def test_home_shows_top_of_leaderboard(populated):
    at = app()
    assert_clean(at)
    top = at.table[0].value  # a static table: whole names at any width
    names = list(top["name"])
    assert XSS_NAME in names or "Copy of the utterance (etclib)" in names
    assert len(top) == 3
    assert list(top.columns) == ["rank", "name", "ROUGE-L ↑ [95% CI]", "kind"]
    # The score column a visitor came for: headed by the ranking metric's name and direction
    # from the registry (never the key), each row its value and 95% interval.
    import leaderboard as lb

    board = lb.ranking()
    assert board.attrs["sort_by"] == "rougeL"  # no judge, no BERTScore: ROUGE-L ranks
    assert "ROUGE-L ↑ [95% CI]" in top.columns and "rougeL" not in top.columns
    first = board.iloc[0]
    value = f"{first['rougeL']:.2f} [{first['rougeL_lo']:.2f}, {first['rougeL_hi']:.2f}]"
    assert top["ROUGE-L ↑ [95% CI]"].iloc[0] == value
    assert "ranked by ROUGE-L ↑" in texts(at)


def test_upload_file_name_is_shown_literally(corpus):
    at = app("site_pages/submit.py")
    name = "[x](https://evil.example)**b**.jsonl"
    at.file_uploader(key="submit_file").upload(name, predictions_file(corpus)).run()
    assert_clean(at)
    shown = at.success[0].value
    # escaped, and a word joiner (U+2060) after "https:" so that it cannot become a link
    assert shown.startswith(
        r"\[x\]\(https\:" + "\u2060" + r"//evil\.example\)\*\*b\*\*\.jsonl\: valid"
    )
