"""The site's library (views): escaping, tables, templates, choices, without Streamlit."""

from __future__ import annotations

import math

import pandas as pd
import pytest


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("", ""),
        (None, ""),
        ("相手の話に共感した。", "相手の話に共感した。"),
        ("**bold**", r"\*\*bold\*\*"),
        ("[x](javascript:alert(1))", r"\[x\]\(javascript\:alert\(1\)\)"),
        ("<img src=x onerror=a()>", r"\<img src\=x onerror\=a\(\)\>"),
        ("$x$ :red[a]", r"\$x\$ \:red\[a\]"),
        ("a\nb", "a  \nb"),
        ("# h", r"\# h"),
        ("100%", "100%"),
    ],
)
def test_escape_markdown(text, expected):
    from views.text import escape_markdown

    assert escape_markdown(text) == expected


def test_escape_markdown_cuts_long_text():
    from views.text import escape_markdown

    assert escape_markdown("あいうえお", max_chars=3) == "あい…"


@pytest.mark.parametrize(
    ("value", "lo", "hi", "expected"),
    [
        (12.345, 11.0, 13.5, "12.35 [11.00, 13.50]"),
        (12.345, None, None, "12.35"),
        (12.345, math.nan, 13.0, "12.35"),
        (None, 1.0, 2.0, ""),
        (math.nan, 1.0, 2.0, ""),
        (0.0, 0.0, 0.0, "0.00 [0.00, 0.00]"),
    ],
)
def test_interval_text(value, lo, hi, expected):
    from views.board import interval_text

    assert interval_text(value, lo, hi) == expected


def ranking_frame() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "rank": [1, 2, 2],
            "rank_band": ["1", "2–3", "2–3"],
            "id": ["a", "b", "c"],
            "kind": ["submission", "baseline", "submission"],
            "name": ["Alpha", "Beta", "Alpha"],
            "team": ["T", "", "U"],
            "setting": ["zero-shot", "other", "few-shot"],
            "saw_test": ["no", "no", "yes"],
            "rougeL": [30.0, 20.0, 19.0],
            "rougeL_lo": [29.0, 19.0, 18.0],
            "rougeL_hi": [31.0, 21.0, 20.0],
            "f1": [math.nan, math.nan, math.nan],
            "precision": [math.nan] * 3,
            "recall": [math.nan] * 3,
        }
    )


def test_metric_choices():
    from views.board import metric_choices

    assert metric_choices(ranking_frame()) == ["rougeL"]


def test_board_table_badges_and_intervals():
    from views.board import board_table

    t = board_table(ranking_frame(), "rougeL")
    assert list(t["ROUGE-L ↑ [95% CI]"]) == [
        "30.00 [29.00, 31.00]",
        "20.00 [19.00, 21.00]",
        "19.00 [18.00, 20.00]",
    ]
    # a baseline says so in words, never with the check mark of a scored submission
    assert t["kind"].tolist() == ["✅ scored here", "baseline", "✅ scored here"]
    assert "f1" not in t.columns  # metrics without values are left out


def test_chart_table_orders_and_marks_reported():
    from views.board import chart_table

    reported = pd.DataFrame(
        {"id": ["p"], "name": ["GPT-4.1"], "setting": ["4-shot"], "rougeL": [22.98]}
    )
    t = chart_table(ranking_frame(), "rougeL", reported)
    assert t["value"].tolist() == [30.0, 22.98, 20.0, 19.0]
    assert t["kind"].tolist() == ["reproduced", "reported", "baseline", "reproduced"]
    assert t["name"].iloc[1] == "GPT-4.1 (reported)"  # a name alone, when it is unique
    assert math.isnan(t["lo"].iloc[1])
    # Repeated names are told apart by their setting.
    assert t["name"].iloc[0] == "Alpha · zero-shot" and t["name"].iloc[3] == "Alpha · few-shot"


def test_pr_table_uses_units():
    from views.board import pr_table

    r = ranking_frame().assign(precision=[20.0, 10.0, math.nan], recall=[30.0, 5.0, 1.0])
    r["units_mean"] = [2.0, 1.0, 3.0]
    t = pr_table(r)
    assert t[["precision", "recall", "units"]].values.tolist() == [
        [20.0, 30.0, 2.0],
        [10.0, 5.0, 1.0],
    ]


def test_detail_view_keeps_visitor_text_plain():
    from views.board import detail_view

    info = {
        "submission": {
            "id": "x1",
            "kind": "submission",
            "name": "<b>n</b>",
            "team": "t",
            "setting": "other",
            "saw_test": "no",
            "description": "line1\n<script>",
        },
        "status": {"status": "scored"},
        "scores": {
            "rouge": {
                "scores": {"rougeL": 18.0},
                "intervals": {"rougeL": (17.5, 18.5)},
                "signature": {"rouge": "tok:x"},
                "current": True,
            }
        },
        "breakdown": {"role": {"speaker": {"rougeL": 18.12345, "n_items": 505}}},
        "verbosity": {"pred_chars": 43.789, "units_mean": None},
    }
    v = detail_view(info)
    assert v["title"] == "<b>n</b>" and v["description"] == "line1\n<script>"
    assert v["scores"].iloc[0]["value [95% CI]"] == "18.00 [17.50, 18.50]"
    assert v["scores"].iloc[0]["metric"] == "ROUGE-L ↑"  # the registry's name, not the key
    assert v["breakdown"]["role"].loc["speaker", "ROUGE-L ↑"] == 18.12
    assert v["verbosity"] == {"prediction length (chars)": "43.8", "units per prediction": "–"}


def test_submitter_key_is_the_address_not_the_session():
    # a reload (a new session) keeps the key: there is no session part (tests/unit/test_limits.py)
    from views.identity import network_address, submitter_key

    assert network_address("1.2.3.4", [], []) == "1.2.3.4"
    assert network_address(None, [], []) == network_address(None, [], [])
    assert submitter_key("address", "1.2.3.4") != submitter_key("address", "1.2.3.5")


def test_chat_choices_without_settings():
    from views.chat import choices

    got = {c.key: c for c in choices()}
    assert list(got)[0] == "retrieval"
    for key, var in (
        ("openai", "OPENAI_API_KEY"),
        ("gemini", "GEMINI_API_KEY"),
        ("finetuned", "ETC_FINETUNED_BASE_URL"),
    ):
        assert not got[key].usable and var in got[key].reason


SHOUT = """
from etclib.models.base import Backend


class ShoutBackend(Backend):
    name = "shout"
    description = "Repeats the utterance with an exclamation mark (a test backend)."

    def predict(self, items, progress=None, shots=None):
        if progress and items:
            progress(len(items))
        return [it.utterance + "！" for it in items]


BACKEND = ShoutBackend
"""


@pytest.fixture
def shout(tmp_path, monkeypatch):
    """A backend module outside etclib, registered through the registry's public function."""
    from etclib import models as backends

    (tmp_path / "shout_backend.py").write_text(SHOUT, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(backends, "REGISTRY", dict(backends.REGISTRY))  # undone after the test
    backends.register("shout", "shout_backend")
    return "shout"


def test_a_registered_backend_reaches_the_chat_and_the_cli(shout, tiny_corpus, tmp_path, capsys):
    """One register() call, no other file: the chat offers it and `etclib predict` runs it."""
    from etclib.cli import main
    from etclib.data.corpus import load_corpus
    from etclib.data.task import items
    from etclib.tracks.predictions import read_predictions
    from views import chat

    got = {c.key: c for c in chat.choices()}
    assert got["shout"].usable and got["shout"].reason == "ready"
    assert got["shout"].label == (
        "shout: Repeats the utterance with an exclamation mark (a test backend)."
    )
    assert not got["shout"].prompted and got["shout"].options == {}
    backend = chat.make_backend("shout")
    item = chat.conversation_item([("A", "旅行に行ってきました")])
    assert "".join(chat.stream_prediction(backend, item)) == "旅行に行ってきました！"

    out = tmp_path / "shout.jsonl"
    args = ["predict", "--backend", "shout", "--data", str(tiny_corpus), "--out", str(out)]
    assert main(args) == 0
    corpus = load_corpus(tiny_corpus)
    expected = {it.key: it.utterance + "！" for it in items(corpus, "test")}
    assert read_predictions(out, "test", corpus).by_key == expected
    assert "shout" in capsys.readouterr().out


def test_chat_lists_the_registry_and_each_backend_says_why_not(tmp_path, monkeypatch):
    from etclib import models as backends
    from views import chat

    (tmp_path / "broken_backend.py").write_text(
        SHOUT.replace('"shout"', '"broken"')
        + "\n@classmethod\ndef _fails(cls):\n    raise RuntimeError('no GPU here')\n\n"
        + "ShoutBackend.availability = _fails\n",
        encoding="utf-8",
    )
    (tmp_path / "missing_backend.py").write_text("import no_such_package_here\n", encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(backends, "REGISTRY", dict(backends.REGISTRY))
    backends.register("broken", "broken_backend")
    backends.register("missing", "missing_backend")
    got = {c.key: c for c in chat.choices()}
    # Every registered chat backend is offered; sanity baselines that ignore the dialogue are not.
    expected = [n for n in backends.REGISTRY if n not in ("constant", "copy")]
    assert sorted(set(got) - {"finetuned"}) == sorted(expected)
    assert list(got)[:2] == ["retrieval", "finetuned"]
    assert not got["broken"].usable and "RuntimeError: no GPU here" in got["broken"].reason
    assert not got["missing"].usable and "no_such_package_here" in got["missing"].reason
    assert not got["hf"].usable and "ETC_HF_MODEL" in got["hf"].reason
    assert got["openai"].prompted and got["openai"].options == {
        "retries": 1,
        "timeout": 10.0,  # the first token (ETC_CHAT_FIRST_TOKEN_TIMEOUT)
        "connect_timeout": 2.0,
        "max_new_tokens": 256,
        "batch_size": 1,
    }
    assert got["hf"].options == {"max_new_tokens": 256, "batch_size": 1}


def test_register_refuses_bad_names_and_replacements(monkeypatch):
    from etclib import models as backends
    from etclib.core.errors import ConfigError

    monkeypatch.setattr(backends, "REGISTRY", dict(backends.REGISTRY))
    backends.register("retrieval", backends.REGISTRY["retrieval"])  # the same: a no-op
    with pytest.raises(ConfigError, match="already registered"):
        backends.register("retrieval", "somewhere.else")
    with pytest.raises(ConfigError, match="not valid"):
        backends.register("Bad Name", "x")


def test_backend_status_never_raises():
    from etclib.models import backend_status

    status = backend_status("retreival")
    assert not status.usable and "Did you mean 'retrieval'" in status.reason


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        ((0.4567,), "0.46"),
        ((0.4567, 3), "0.457"),
        ((None,), "–"),
        ((float("nan"),), "–"),
        ((-1.0,), "-1.00"),
    ],
)
def test_judge_vs_human_number(args, expected):
    from views.judge_vs_human import number

    assert number(*args) == expected


@pytest.mark.parametrize(
    ("value", "low", "high", "expected"),
    [
        (0.5, 0.25, 0.75, "0.50 [0.25, 0.75]"),
        (0.5, None, None, "0.50"),
        (0.5, float("nan"), float("nan"), "0.50"),
        (float("nan"), 0.1, 0.2, "undefined"),
        (None, None, None, "undefined"),
    ],
)
def test_judge_vs_human_interval(value, low, high, expected):
    from views.judge_vs_human import interval

    assert interval(value, low, high) == expected


def test_secrets_example_documents_every_setting():
    """Every name read through etclib.core.config.setting appears in .streamlit/secrets.toml.example."""
    import re
    import tomllib

    from tests.conftest import REPO

    example = (REPO / ".streamlit" / "secrets.toml.example").read_text(encoding="utf-8")
    assert tomllib.loads(example) == {}  # everything is optional: all commented out
    documented = set(re.findall(r"^# ([A-Z][A-Z0-9_]+) = ", example, flags=re.M))
    # Every quoted setting-like name in the library (environment-only switches excepted).
    read: set[str] = set()
    for path in [*REPO.glob("etclib/**/*.py"), *REPO.glob("leaderboard/**/*.py")]:
        text = path.read_text(encoding="utf-8")
        read |= set(re.findall(r"\"((?:ETC|OPENAI|GEMINI|GOOGLE|HF)_[A-Z0-9_]+)\"", text))
    # where the file is; progress bars; the fault points only tests set (env only)
    read -= {"ETC_SECRETS_FILE", "ETC_PROGRESS", "ETC_FAULTPOINTS"}
    # the Hugging Face hub's own variables, read from the environment as the hub reads them
    read -= {"HF_ENDPOINT", "HF_HOME", "HF_HUB_CACHE", "HF_HUB_OFFLINE"}
    assert {"ETC_DATA_DIR", "ETC_LB_DAILY_LIMIT", "OPENAI_API_KEY"} <= read
    missing = sorted(read - documented)
    assert not missing, f"undocumented settings: {missing}"


def test_items_view_shows_judge_units_as_text():
    from views.board import items_view

    items = pd.DataFrame(
        {
            "item_index": [0],
            "dialogue_id": [14],
            "turn": [1],
            "role": ["speaker"],
            "prediction": ["悲しかった。"],
            "reference": ["寂しかった。"],
            "label": ["sadness"],
            "f1": [0.0],
            "units": [["悲しかった"]],
            "judge_labels": [{"悲しかった": "Not Supported"}],
        }
    )
    view = items_view(items)
    assert list(view.columns[:6]) == [
        "dialogue_id",
        "turn",
        "role",
        "label",
        "prediction",
        "reference",
    ]
    assert "item_index" not in view.columns
    assert view["units"].iloc[0] == '["悲しかった"]'
    assert view["judge_labels"].iloc[0] == '{"悲しかった": "Not Supported"}'


@pytest.mark.parametrize(
    ("text", "refused"),
    [
        ("", False),
        (None, False),
        ("あ" * 200, False),
        ("  " + "あ" * 200 + "  ", False),  # spaces around do not count
        ("あ" * 201, True),
        ("x" * 10_000, True),
    ],
)
def test_overlong_search_is_refused_with_its_length(text, refused):
    from etclib.core.errors import StoreError
    from views import corpus as cq

    problem = cq.query_problem(text)
    assert (problem is not None) == refused
    if refused:
        assert f"{len(text.strip()):,} characters; the limit is 200" in problem
        with pytest.raises(StoreError):
            cq.make_filters(text)
    else:
        assert cq.make_filters(text).text == (text or "").strip()


def test_utterance_notes_show_transcription_aggregate_and_each_annotator():
    from views.dialogue import utterance_notes

    u = {
        "transcription": "\n**嬉しい** [x](https://e.example)\n",
        "label": ["joy"],
        "ann1": ["joy"],
        "ann2": ["joy", "trust"],
        "ann3": ["neutral"],
    }
    assert utterance_notes(u) == [
        "Emotion transcription: \\*\\*嬉しい\\*\\* \\[x\\]\\(https\\:\u2060//e\\.example\\)",
        "Label: **joy**",
    ]
    assert utterance_notes(u, annotators=True)[1] == (
        "Label: **joy** (annotators 1: joy · 2: joy, trust · 3: neutral)"
    )


def test_label_table_is_etclib_stats_in_its_order():
    from views import corpus as cq

    stats = {
        "labels": {
            "joy": {"speaker": 30.0, "listener": 20.0, "all": 25.0, "kappa": 0.5},
            "fear": {"speaker": 1.0, "listener": 3.0, "all": 2.0, "kappa": 0.25},
        }
    }
    t = cq.label_table(stats)
    assert t.to_dict("records") == [
        {"category": "joy", "speaker": 30.0, "listener": 20.0, "all": 25.0, "kappa": 0.5},
        {"category": "fear", "speaker": 1.0, "listener": 3.0, "all": 2.0, "kappa": 0.25},
    ]
    long = cq.prevalence_table(stats)
    assert list(long["role"][:3]) == ["speaker", "listener", "all"]
    assert list(long["percent"][:3]) == [30.0, 20.0, 25.0]
