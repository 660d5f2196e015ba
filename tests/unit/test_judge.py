"""LLM-judge metric: SPEC scoring rules with hand-worked numbers, parsing, prompts, CLI.

Every metric test runs twice, through the real Gemini SDK and the real OpenAI SDK, against the
loopback fake server (tests/fakes). Expected numbers are worked out by hand in the comments.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from etclib.core.errors import JudgeError
from etclib.judge import parse, templates
from etclib.metrics import judge as J
from tests.fakes.judge_fixtures import FAKE_MODEL, judge_env  # noqa: F401 - fixture
from tests.fixtures.judge import NAN, NS, N, S
from tests.fixtures.judge import close_or_both_nan as _close


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        ((2, 1, 1, 0), (0.5, 0.0, 0.0)),
        ((0, 0, 3, 0), (0.0, 0.0, 0.0)),
        ((3, 3, 0, 0), (NAN, NAN, NAN)),
        ((0, 0, 0, 0), (NAN, NAN, NAN)),
        ((1, 1, 3, 1), (1.0, 1 / 3, 0.5)),
        ((4, 1, 1, 1), (0.25, 1.0, 0.4)),
        ((2, 2, 2, 2), (1.0, 1.0, 1.0)),
    ],
)
def test_item_prf(args, expected):
    got = J.item_prf(*args)
    assert all(_close(g, e) for g, e in zip(got, expected, strict=True)), got


def test_signature_names_provider_model_and_prompts(monkeypatch):
    monkeypatch.delenv("ETC_JUDGE_PROVIDER", raising=False)
    monkeypatch.delenv("ETC_JUDGE_MODEL", raising=False)
    sig = J.METRIC.signature()["judge"]
    # Gemini 2.5 Flash: temperature 0 and thinking off (budget 0), both named
    assert sig.startswith(
        "provider:gemini|model:gemini-2.5-flash|temperature:0|thinking:budget=0|prompts:"
    )
    assert sig.endswith("|etclib-judge")
    dec, ent = templates.load("decompose"), templates.load("entail")
    assert f"prompts:{dec.tag},{ent.tag}" in sig
    from etclib.metrics import Context

    other = J.METRIC.signature(Context({"judge_provider": "openai", "judge_model": "gpt-4.1"}))[
        "judge"
    ]
    assert other.startswith("provider:openai|model:gpt-4.1|temperature:0|thinking:none|")
    gpt5 = J.METRIC.signature(Context({"judge_provider": "openai", "judge_model": "gpt-5-mini"}))
    assert "|temperature:default|thinking:effort=low|" in gpt5["judge"]
    budget = J.METRIC.signature(Context({"judge_thinking": "512"}))["judge"]
    assert "|thinking:budget=512|" in budget
    monkeypatch.setenv("ETC_JUDGE_PROVIDER", "openai")
    assert J.METRIC.signature()["judge"].startswith("provider:openai|model:gpt-4.1-mini|")


@pytest.mark.parametrize(
    ("raw", "units"),
    [
        ('{"units": ["嬉しかった", "驚いた"]}', ["嬉しかった", "驚いた"]),
        ('{"units": []}', []),
        ('```json\n{"units": ["嬉しかった"]}\n```', ["嬉しかった"]),
        ('分解しました。\n{"units": ["悲しかった"]}\n以上です。', ["悲しかった"]),
        ('{"units": ["  感謝した ", ""]}', ["感謝した"]),
        ('["驚いた"]', ["驚いた"]),
        ('{"units": [{"unit": "迷った"}]}', ["迷った"]),
        ('{"units": null}', []),
    ],
)
def test_parse_units(raw, units):
    assert parse.parse_units(raw) == units


@pytest.mark.parametrize(
    "raw",
    [
        "",
        "ユニットはありません",
        '{"unit": ["x"]}',
        '{"units": "驚いた"}',
        '{"units": [1]}',
        '{"units": ["a"',
    ],
)
def test_parse_units_refuses(raw):
    with pytest.raises(parse.AnswerParseError):
        parse.parse_units(raw)


@pytest.mark.parametrize(
    ("raw", "label"),
    [
        ('{"reasoning": "一致", "label": "Supported"}', S),
        ('{"reasoning": "一部", "label": "Neutral"}', N),
        ('{"reasoning": "違う", "label": "Not Supported"}', NS),
        ('{"label": "not_supported"}', NS),
        ('{"label": "NOT SUPPORTED"}', NS),
        ('{"label": "Unsupported"}', NS),
        ('```\n{"reasoning": "r", "label": "supported"}\n```', S),
        ('判定: {"reasoning": "r", "label": "Neutral"} です', N),
    ],
)
def test_parse_entailment(raw, label):
    assert parse.parse_entailment(raw)[0] == label


@pytest.mark.parametrize(
    "raw",
    ['{"reasoning": "r"}', '{"label": "Maybe"}', '{"label": "支持"}', "Supported", ""],
)
def test_parse_entailment_refuses(raw):
    # an unreadable label is an error, never "Not Supported"
    with pytest.raises(parse.AnswerParseError):
        parse.parse_entailment(raw)


def test_prompt_templates():
    dec, ent = templates.load("decompose"), templates.load("entail")
    assert templates.DEFAULT_SET == "v2" and (dec.version, ent.version) == (2, 2)
    assert (dec.n_examples, ent.n_examples) == (9, 9)
    # v1 stays selectable, unchanged (its tag is the one older scores carry)
    dec1, ent1 = templates.load("decompose", "v1"), templates.load("entail", "v1")
    assert (dec1.n_examples, ent1.n_examples) == (8, 9)
    assert templates.tags("v1") == "decompose-v1-30c42b91,entail-v1-fa59eadf"
    assert templates.sets() == ("v1", "v2")
    assert dec.tag.startswith(f"decompose-v{dec.version}-") and len(dec.tag.split("-")[-1]) == 8
    assert "$" not in dec.system and "$" not in ent.system
    msgs = ent.messages(unit="驚いた", target="びっくりした。")
    assert [m["role"] for m in msgs] == ["system", "user"]
    assert "驚いた" in msgs[1]["content"] and "びっくりした。" in msgs[1]["content"]
    for label in (S, N, NS):
        assert f'"label": "{label}"' in ent.system
    assert '{"units": []}' in dec.system  # an example with no unit
    with pytest.raises(JudgeError):
        templates.load("summarise")
    with pytest.raises(JudgeError, match="Available: v1, v2"):
        templates.load("decompose", "v3")


@pytest.mark.parametrize("prompts", ["v1", "v2"])
def test_prompt_examples_follow_the_rules(prompts):
    import tomllib
    from importlib import resources

    folder = resources.files("etclib.judge") / "prompts"
    raw = (folder / f"decompose_{prompts}.toml").read_text("utf-8")
    for ex in tomllib.loads(raw)["examples"]:
        for unit in ex["units"]:
            # units stand alone: no demonstratives
            assert not any(d in unit for d in ("それ", "その", "あの", "これ", "この")), unit
    raw = (folder / f"entail_{prompts}.toml").read_text("utf-8")
    labels = [ex["label"] for ex in tomllib.loads(raw)["examples"]]
    assert set(labels) == {S, N, NS}


def test_cli_without_key_says_what_to_set(monkeypatch, capsys):
    from etclib import cli

    monkeypatch.setitem(cli.COMMANDS, "judge", "etclib.cli.judge")
    assert cli.main(["judge", "decompose", "嬉しかった。"]) == 1
    err = capsys.readouterr().err
    assert "GEMINI_API_KEY" in err and "Traceback" not in err
    assert cli.main(["judge", "decompose", "嬉しかった。", "--provider", "openai"]) == 1
    assert "OPENAI_API_KEY" in capsys.readouterr().err


@st.composite
def _counts(draw):
    n_units = draw(st.integers(0, 12))
    n_ref = draw(st.integers(0, 12))
    return n_units, draw(st.integers(0, n_units)), n_ref, draw(st.integers(0, n_ref))


@given(_counts())
def test_item_prf_stays_in_range(counts):
    p, r, f = J.item_prf(*counts)
    if counts[2] == 0:
        assert math.isnan(p) and math.isnan(r) and math.isnan(f)
        return
    assert 0 <= p <= 1 and 0 <= r <= 1 and 0 <= f <= 1
    assert min(p, r) - 1e-12 <= f <= max(p, r) + 1e-12  # a harmonic mean lies between
    if counts[1] == counts[0] > 0 and counts[3] == counts[2]:
        assert f == 1.0


@given(st.lists(_counts(), min_size=1, max_size=30), st.randoms())
def test_aggregate_is_a_mean_in_range_and_order_free(rows, rnd):
    def data_of(rs):
        prf = [J.item_prf(*r) for r in rs]
        arrays = {
            "precision": np.array([x[0] for x in prf]),
            "recall": np.array([x[1] for x in prf]),
            "f1": np.array([x[2] for x in prf]),
            "units": np.array([float(r[0]) for r in rs]),
            "ref_units": np.array([float(r[2]) for r in rs]),
        }
        return J.MetricData(arrays)

    got = J.METRIC.aggregate(data_of(rows))
    shuffled = list(rows)
    rnd.shuffle(shuffled)
    assert J.METRIC.aggregate(data_of(shuffled)) == pytest.approx(got, nan_ok=True)
    included = [r for r in rows if r[2] > 0]
    assert got["n_judged"] == len(included)
    if included:
        for k in ("precision", "recall", "f1"):
            assert 0 <= got[k] <= 100
        f1s = [J.item_prf(*r)[2] for r in included]
        assert got["f1"] == pytest.approx(100 * sum(f1s) / len(f1s))
    else:
        assert math.isnan(got["f1"])
    assert got["units_mean"] == pytest.approx(np.mean([r[0] for r in rows]))
    assert got["ref_units_sd"] == pytest.approx(np.std([r[2] for r in rows]))
