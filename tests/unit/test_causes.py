"""The cause layer: types, proxy, LLM labelling (fake server), the annotation flow, agreement."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest
from sklearn.metrics import f1_score

from etclib.core.errors import AnnotationError, ConfigError, JudgeError
from etclib.studies import causes
from tests.fixtures.studies import _causes_admin  # noqa: F401 - for every test here
from tests.studies_engines import studies_db  # noqa: F401 - fixture: DuckDB and PostgreSQL

S3 = (7, 3, "speaker")  # target at position 5; partner (B) at 2, 4; own earlier (A) at 1, 3


L2 = (7, 2, "listener")  # target at position 4; partner (A) at 1, 3; own earlier (B) at 2


TYPE_CASES = [
    (S3, [5], "no-context", ("no-context",)),
    (S3, [(3, "speaker")], "no-context", ("no-context",)),
    (S3, [4], "inter-personal", ("inter-personal",)),
    (S3, [2, 4, 5], "inter-personal", ("no-context", "inter-personal")),
    (S3, [1, 3], "self-contagion", ("self-contagion",)),
    (S3, [(1, "speaker"), (2, "speaker")], "self-contagion", ("self-contagion",)),
    (S3, [3, 5], "self-contagion", ("no-context", "self-contagion")),
    (S3, [1, 2], "hybrid", ("hybrid",)),
    (S3, [1, 4, 5, 4], "hybrid", ("no-context", "hybrid")),
    (S3, [], "latent", ("latent",)),
    (L2, [4], "no-context", ("no-context",)),
    (L2, [3], "inter-personal", ("inter-personal",)),
    (L2, [(1, "speaker")], "inter-personal", ("inter-personal",)),
    (L2, [2], "self-contagion", ("self-contagion",)),
    (L2, [1, 2, 4], "hybrid", ("no-context", "hybrid")),
    (L2, [], "latent", ("latent",)),
    ((7, 1, "speaker"), [1], "no-context", ("no-context",)),
    ((7, 1, "speaker"), [], "latent", ("latent",)),
]


@pytest.mark.parametrize(("key", "given", "kind", "labels"), TYPE_CASES)
def test_cause_type(key, given, kind, labels):
    assert causes.cause_type(key, given) == kind
    assert causes.reccon_labels(key, given) == labels


@pytest.mark.parametrize(
    ("key", "given", "message"),
    [
        (S3, [6], "position 6"),  # the partner's reply comes after the target
        (L2, [(5, "listener")], "position 10"),
        (S3, [0], "position 0"),
        ((7, 6, "speaker"), [1], "Turn 6"),
        ((7, 1, "narrator"), [1], "Role 'narrator'"),
    ],
)
def test_cause_sets_refuse_later_or_unknown_utterances(key, given, message):
    with pytest.raises(AnnotationError, match=re.escape(message)):
        causes.cause_type(key, given)


def test_positions_round_trip():
    for p in range(1, 11):
        assert causes.position(*causes.turn_role(p)) == p
    assert causes.turn_role(4) == (2, "listener")


def test_reccon_shares_sum_to_100_up_to_rounding():
    for shares in causes.RECCON_SHARES.values():
        assert sum(shares.values()) == pytest.approx(100, abs=1)  # published, rounded
        assert tuple(shares) == causes.CAUSE_TYPES


PROXY_CASES = [
    ("相手の気持ちに共感しました。", None, ["相手"]),
    ("お相手の話を聞いて嬉しかった", None, ["相手"]),
    ("相手方の言うことに共感しました。", None, ["相手"]),
    ("話し相手が優しくて安心した", None, ["相手"]),
    ("対戦相手に勝てて嬉しかった", None, []),  # a third party
    ("結婚相手のことを思い出した", None, []),
    ("誰か相談相手がいるか確認した", None, []),
    ("話相手の気遣いに感謝した", None, ["相手"]),
    ("終始相手の意見に共感した", None, ["相手"]),
    ("あいての関心を探っています", None, ["あいて"]),
    ("席があいていて助かった", None, []),  # 空いて, not the partner
    ("あなたの言葉に励まされました", None, ["あなた"]),
    ("坂本龍馬の顔が浮かび、彼の人生を振り返った。", None, []),
    ("その人がどのような目的で来たのか気になった", None, []),
    ("自分の話が聞き手に届くよう悩んだ", "speaker", ["聞き手"]),
    ("自分の話が聞き手に届くよう悩んだ", "listener", []),
    ("話し手の気持ちを考えた", "listener", ["話し手"]),
    ("相手にもあなたにも", None, ["相手", "あなた"]),
    ("", None, []),
    ("悲しかった。", "speaker", []),
]


@pytest.mark.parametrize(("text", "role", "words"), PROXY_CASES)
def test_partner_proxy(text, role, words):
    assert causes.partner_mentions(text, role) == words
    assert causes.partner_reference(text, role) is bool(words)
    assert causes.proxy_type(text, role) == ("inter-personal" if words else "other")


@pytest.mark.parametrize(
    ("text", "target", "expected"),
    [
        ('{"reasoning": "r", "causes": [3, 1, 3]}', 4, (1, 3)),
        ('```json\n{"reasoning": "", "causes": []}\n```', 1, ()),
        ('答え: {"causes": [2]} です', 2, (2,)),
    ],
)
def test_parse_causes(text, target, expected):
    assert causes.parse_causes(text, target) == expected


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("1, 3", "no JSON"),
        ('{"causes": "1"}', "list of integers"),
        ('{"causes": [true]}', "list of integers"),
        ('{"causes": [5]}', "outside 1..4"),
        ("{bad}", "not valid JSON"),
    ],
)
def test_parse_causes_refuses(text, message):
    with pytest.raises(JudgeError, match=re.escape(message)):
        causes.parse_causes(text, 4)


def test_bad_settings(tiny_corpus):
    from etclib.data.corpus import load_corpus

    corpus = load_corpus(tiny_corpus)
    with pytest.raises(ConfigError, match="Unknown provider"):
        causes.label_causes(corpus, "claude", "m")
    with pytest.raises(ConfigError, match="OPENAI_API_KEY"):
        causes.label_causes(corpus, "openai", "m", limit=1)
    with pytest.raises(ConfigError, match="--provider"):
        main_with_error(["causes"])


def main_with_error(argv):
    from etclib.cli import build_parser

    args = build_parser("causes").parse_args(argv)
    return args._run(args)


# (gold: the majority, prediction) pair decisions; the odd ones: no cause anywhere, all
# causes, nothing right, one pair
PAIRS = [
    ([1, 0, 0, 1, 1, 0, 0, 0], [1, 0, 1, 0, 1, 0, 0, 1]),
    ([0, 0, 0, 0], [0, 0, 0, 0]),
    ([0, 0, 0, 0], [0, 1, 0, 0]),
    ([1, 1, 1], [1, 1, 1]),
    ([1, 0, 1, 0], [0, 1, 0, 1]),
    ([1], [0]),
]


@pytest.mark.parametrize(("gold", "pred"), PAIRS)
def test_pair_f1_equals_scikit_learn(gold, pred):
    got = causes.pair_f1([bool(x) for x in gold], [bool(x) for x in pred])
    g, p = np.array(gold, dtype=bool), np.array(pred, dtype=bool)
    want = {
        "f1_positive": f1_score(g, p, pos_label=True, zero_division=0),
        "f1_negative": f1_score(g, p, pos_label=False, zero_division=0),
        "macro_f1": f1_score(g, p, average="macro", labels=[False, True], zero_division=0),
    }
    for k, v in want.items():
        assert got[k] == pytest.approx(100 * v, abs=1e-9), k
    assert all(math.isnan(v) for v in causes.pair_f1([], []).values())
