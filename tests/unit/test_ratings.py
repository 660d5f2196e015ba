"""Study 3: ratings CSV parsing, LLM vs human comparison, EmplifAI's published figures."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from etclib.core.errors import EtcError
from etclib.studies.ratings import (
    RatingsError,
    compare_ratings,
    load_emplifai,
    parse_ratings,
    reference_dir,
)

HEADER = "item,system,metric,rater_kind,rater_id,score\n"
REFERENCE = (
    Path(__file__).resolve().parents[2]
    / "etclib"
    / "data"
    / "reference"
    / "emplifai_judge_vs_human.json"
)


def test_parse_ratings_ok_with_bom_extra_column_and_japanese():
    text = (
        "\ufeffItem,System,Metric,Rater_Kind,Rater_ID,Score,comment\n"
        "1,GPT,共感,LLM,gemini,5,とても良い\n"
        "1,GPT,共感,human,w1,4.5,\n"
        "\n"
        '2,GPT,共感,human,w1,"3",複数行の\n'
    )
    df = parse_ratings(text.encode("utf-8"))
    assert list(df.columns) == ["item", "system", "metric", "rater_kind", "rater_id", "score"]
    assert df["rater_kind"].tolist() == ["llm", "human", "human"]
    assert df["score"].tolist() == [5.0, 4.5, 3.0]


MALFORMED = [
    (b"", "empty"),
    (b"item,system,metric,score\n1,a,b,3\n", "line 1: header lacks column(s) rater_kind, rater_id"),
    (HEADER.encode() + b"1,a,m,llm,j,5\n2,a,m,llm,j\n", "line 3: expected 6 fields, found 5"),
    (HEADER.encode() + b"1,a,m,robot,j,5\n", "line 2: rater_kind 'robot' is not one of llm, human"),
    (HEADER.encode() + b"1,a,m,llm,j,five\n", "line 2: score 'five' is not a finite number"),
    (HEADER.encode() + b"1,a,m,llm,j,nan\n", "line 2: score 'nan' is not a finite number"),
    (HEADER.encode() + b"1,a,,llm,j,4\n", "line 2: empty field(s) metric"),
    (HEADER.encode() + b"1,a,m,llm,j,4\n1,a,m,LLM,j,5\n", "line 3: repeats line 2"),
    (HEADER.encode(), "no ratings"),
    (HEADER.encode() + "1,a,m,llm,j,4\n2,é,m,llm,j,4\n".encode("latin-1"), "line 3: not UTF-8"),
    (HEADER.encode() + b'1,a,"m\nx",llm,j,4\n2,a,m,llm,j,oops\n', "line 4: score 'oops'"),
    (b"item,system,metric,rater_kind,rater_id,score,score\n", "repeats column(s) score"),
]


@pytest.mark.parametrize(("data", "message"), MALFORMED)
def test_malformed_csv_refused_with_line(data, message):
    with pytest.raises(RatingsError) as info:
        parse_ratings(data, "upload.csv")
    assert message in str(info.value)
    assert str(info.value).startswith("upload.csv: refused")
    assert isinstance(info.value, EtcError) and info.value.problems


def test_every_bad_line_is_listed():
    lines = [HEADER] + [f"{i},a,m,llm,j,x{i}\n" for i in range(1, 16)]
    with pytest.raises(RatingsError) as info:
        parse_ratings("".join(lines))
    assert len(info.value.problems) == 15
    assert [p.line for p in info.value.problems[:3]] == [2, 3, 4]
    assert "... and 5 more problems" in str(info.value)


def _csv(rows) -> str:
    return HEADER + "".join(",".join(map(str, r)) + "\n" for r in rows)


def test_compare_ratings_against_scipy():
    rng = np.random.default_rng(0)
    rows = []
    llm_scores, human_means = [], []
    for item in range(30):
        llm = int(rng.integers(1, 6))
        humans = np.clip(llm + rng.integers(-1, 2, size=3), 1, 5)
        rows.append((item, "S", "fluency", "llm", "judge", llm))
        rows += [(item, "S", "fluency", "human", f"w{k}", int(h)) for k, h in enumerate(humans)]
        llm_scores.append(llm)
        human_means.append(humans.mean())
    rows.append((99, "S", "fluency", "human", "w0", 3))  # no LLM score: unpaired
    table = compare_ratings(parse_ratings(_csv(rows)))
    assert len(table) == 1
    row = table.iloc[0]
    ref = stats.pearsonr(llm_scores, human_means)
    ci = ref.confidence_interval()
    assert row["items"] == 30 and row["unpaired"] == 1
    assert row["r"] == pytest.approx(ref.statistic)
    assert row["p"] == pytest.approx(ref.pvalue)
    assert (row["low"], row["high"]) == pytest.approx((ci.low, ci.high))
    assert row["llm_mean"] == pytest.approx(np.mean(llm_scores))
    assert row["human_mean"] == pytest.approx(np.mean(human_means))
    assert row["mad"] == pytest.approx(np.mean(np.abs(np.subtract(llm_scores, human_means))))
    assert math.isnan(row["llm_constant"]) and row["note"] == ""


def gpt_constant_ratings(metric: str, value: float, items: int = 100) -> list[tuple]:
    """100 items where the judge always gives 5 and three people's mean is ``value`` on average.

    Item means are multiples of 1/3 (three integer ratings); half the items sit just above and
    half just below ``value``, so the overall human mean is ``value`` to two decimals.
    """
    thirds = round(value * 3)
    rows = []
    for i in range(items):
        total = thirds + (1 if i % 2 else -1)  # +-1/3 around value, balanced
        ratings = [total // 3 + (k < total % 3) for k in range(3)]
        rows.append((i, "GPT", metric, "llm", "gemini-2.5-flash", 5))
        rows += [(i, "GPT", metric, "human", f"crowd{k}", r) for k, r in enumerate(ratings)]
    return rows


def test_emplifai_gpt_constant_rule_reproduces_printed_figures():
    ref = json.loads(REFERENCE.read_text("utf-8"))
    printed = {k: v for k, v in ref["gpt_constant_mad"].items() if isinstance(v, dict)}
    rows = []
    for metric, fig in printed.items():
        rows += gpt_constant_ratings(metric, fig["value"])
    table = compare_ratings(parse_ratings(_csv(rows))).set_index("metric")
    for metric, fig in printed.items():
        row = table.loc[metric]
        assert math.isnan(row["r"]) and math.isnan(row["p"])  # undefined, not a number
        assert row["llm_constant"] == 5.0 and math.isnan(row["human_constant"])
        assert "the LLM gave every item 5" in row["note"]
        assert round(row["human_mean"], 2) == pytest.approx(fig["value"])
        assert round(row["mad"], 2) == pytest.approx(fig["mad"])


def test_load_emplifai_reference(monkeypatch):
    monkeypatch.setenv("ETC_REFERENCE_DIR", str(REFERENCE.parent))
    assert reference_dir() == REFERENCE.parent
    ref = load_emplifai()
    t = ref.table
    assert len(t) == 4 * 7 and set(t["system"]) == {"GPT", "DeepSeek", "LLM-jp", "Swallow"}
    # the judge is constant (mean 5.0 on a 1-5 scale) exactly where the paper printed no r
    assert (t["constant"] == t["r"].isna()).all()
    constant = t[t["constant"]].set_index("metric")
    assert sorted(constant.index) == ["general_empathy", "harmlessness", "sense_of_security"]
    assert (constant["system"] == "GPT").all()
    # printed constant and MAD: MAD = 5 - value, as the rule gives when every score is <= 5
    assert (constant["printed_value"] + constant["printed_mad"]).tolist() == pytest.approx(
        [5.0] * 3
    )
    # from Table 5's human means the rule gives 5 - mean (hand-computed: 5-4.03, 5-4.21, 5-3.87)
    assert constant["mad_from_means"].tolist() == pytest.approx([0.97, 0.79, 1.13])
    deepseek = t[(t["system"] == "DeepSeek") & (t["metric"] == "fluency")].iloc[0]
    assert (deepseek["llm_mean"], deepseek["human_mean"], deepseek["r"]) == (4.11, 4.48, 0.64)
    assert "Gemini-2.5-Flash" in ref.setting and ref.finding


def test_load_emplifai_missing_and_broken(tmp_path, monkeypatch):
    monkeypatch.setenv("ETC_REFERENCE_DIR", str(tmp_path))
    assert load_emplifai() is None
    broken = tmp_path / "emplifai_judge_vs_human.json"
    broken.write_text('{"systems": {"GPT": "x"}}', "utf-8")
    with pytest.raises(RatingsError, match="unexpected structure"):
        load_emplifai()
    broken.write_text("{", "utf-8")
    with pytest.raises(RatingsError, match="not readable JSON"):
        load_emplifai()
