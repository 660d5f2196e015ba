"""Study 3 of docs/judge_vs_human.md: Likert ratings by LLM judges beside ratings by people.

A ratings file is UTF-8 CSV with the columns ``item, system, metric, rater_kind, rater_id,
score`` (one row per rating; ``rater_kind`` is ``llm`` or ``human``). :func:`compare_ratings`
pairs each item's mean LLM and human scores per system and metric; where one side is constant, r
is undefined and the row says so (the "constant rule" of EmplifAI, :func:`load_emplifai`).
"""

from __future__ import annotations

import csv
import io
import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from etclib.core.errors import Problem, RatingsError
from etclib.data.reference import EMPLIFAI as EMPLIFAI_FILE
from etclib.data.reference import reference_dir
from etclib.metrics.agreement import pearson

COLUMNS: tuple[str, ...] = ("item", "system", "metric", "rater_kind", "rater_id", "score")
RATER_KINDS: tuple[str, ...] = ("llm", "human")
#: the columns of :func:`compare_ratings` after system, metric, items, unpaired
_MEASURES = "llm_mean human_mean r p low high mad llm_constant human_constant note".split()
#: The 5-point Likert scale of the EmplifAI study.
EMPLIFAI_SCALE = (1.0, 5.0)


# --- parsing ---------------------------------------------------------------------------------


def _decode(data: bytes | str, source: str) -> str:
    if isinstance(data, str):
        return data.removeprefix("\ufeff")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise RatingsError(
            source, [Problem(line, f"not UTF-8 (byte {exc.start}); save the file as UTF-8 CSV.")]
        ) from None


def parse_ratings(
    data: bytes | str, source: str = "ratings.csv", *, max_problems: int = 50
) -> pd.DataFrame:
    """Read a ratings CSV into a frame with the six columns (``score`` as float).

    Line numbers in problems are 1-based lines of the file (the header is line 1). Refused:
    text that is not UTF-8, a missing column, a row with the wrong number of fields, an empty
    field, a ``rater_kind`` other than llm/human, a score that is not a finite number, the same
    (item, system, metric, rater_kind, rater_id) rated twice, and a file without ratings.
    """
    text = _decode(data, source)
    reader = csv.reader(io.StringIO(text, newline=""))
    problems: list[Problem] = []
    try:
        header = next(reader)
    except StopIteration:
        raise RatingsError(
            source, [Problem(0, f"the file is empty; expected a header {','.join(COLUMNS)}.")]
        ) from None
    except csv.Error as exc:
        raise RatingsError(source, [Problem(1, f"not valid CSV ({exc}).")]) from None
    names = [h.strip().lower() for h in header]
    missing = [c for c in COLUMNS if c not in names]
    if missing:
        raise RatingsError(
            source,
            [
                Problem(
                    1,
                    f"header lacks column(s) {', '.join(missing)}; expected {','.join(COLUMNS)} "
                    f"(found {','.join(names) or 'nothing'}).",
                )
            ],
        )
    doubled = sorted({n for n in names if names.count(n) > 1 and n in COLUMNS})
    if doubled:
        raise RatingsError(source, [Problem(1, f"header repeats column(s) {', '.join(doubled)}.")])
    where = {c: names.index(c) for c in COLUMNS}
    records: list[dict[str, Any]] = []
    seen: dict[tuple[str, ...], int] = {}
    last = reader.line_num
    while len(problems) < max_problems:
        start = last + 1
        try:
            row = next(reader)
        except StopIteration:
            break
        except csv.Error as exc:
            problems.append(Problem(start, f"not valid CSV ({exc})."))
            break
        last = reader.line_num
        if not row or all(not x.strip() for x in row):
            continue
        if len(row) != len(names):
            problems.append(Problem(start, f"expected {len(names)} fields, found {len(row)}."))
            continue
        rec = {c: row[i].strip() for c, i in where.items()}
        empty = [c for c in COLUMNS if not rec[c]]
        if empty:
            problems.append(Problem(start, f"empty field(s) {', '.join(empty)}."))
            continue
        kind = rec["rater_kind"].lower()
        if kind not in RATER_KINDS:
            problems.append(
                Problem(
                    start,
                    f"rater_kind {rec['rater_kind']!r} is not one of {', '.join(RATER_KINDS)}.",
                )
            )
            continue
        try:
            score = float(rec["score"])
        except ValueError:
            score = math.nan
        if not math.isfinite(score):
            problems.append(Problem(start, f"score {rec['score']!r} is not a finite number."))
            continue
        key = (rec["item"], rec["system"], rec["metric"], kind, rec["rater_id"])
        if key in seen:
            problems.append(
                Problem(
                    start,
                    f"repeats line {seen[key]}: {kind} rater {rec['rater_id']!r} already "
                    f"rated item {rec['item']!r} on {rec['system']}/{rec['metric']}.",
                )
            )
            continue
        seen[key] = start
        records.append({**rec, "rater_kind": kind, "score": score})
    if not problems and not records:
        problems.append(Problem(0, "the file has a header but no ratings."))
    if problems:
        raise RatingsError(source, problems)
    return pd.DataFrame(records, columns=list(COLUMNS)).astype({"score": float})


# --- comparison ------------------------------------------------------------------------------


def compare_ratings(ratings: pd.DataFrame, *, confidence: float = 0.95) -> pd.DataFrame:
    """One row per (system, metric): LLM and human means side by side and their agreement.

    Each item's score per kind is the mean of its raters; only items rated by both kinds are
    paired (``unpaired`` counts the others). Where r is undefined, ``r`` .. ``high`` are NaN and
    ``llm_constant`` or ``human_constant`` holds the constant.
    """
    rows = []
    if ratings.empty:
        return pd.DataFrame(columns=["system", "metric", "items", "unpaired", *_MEASURES])
    per_item = (
        ratings.groupby(["system", "metric", "item", "rater_kind"], sort=True)["score"]
        .mean()
        .unstack("rater_kind")
        .reindex(columns=list(RATER_KINDS))
    )
    for (system, metric), group in per_item.groupby(level=["system", "metric"], sort=True):
        paired = group.dropna()
        row: dict[str, Any] = {
            "system": system,
            "metric": metric,
            "items": len(paired),
            "unpaired": len(group) - len(paired),
        }
        if paired.empty:
            row |= dict.fromkeys(_MEASURES, math.nan)
            row["note"] = "no item was rated by both an LLM and a person."
            rows.append(row)
            continue
        c = pearson(paired["llm"].to_numpy(), paired["human"].to_numpy(), confidence=confidence)
        values = (c.x_mean, c.y_mean, c.r, c.p, c.low, c.high, c.mad, c.x_constant, c.y_constant)
        row |= {
            k: math.nan if v is None else v for k, v in zip(_MEASURES[:-1], values, strict=True)
        }
        row["note"] = _note(c)
        rows.append(row)
    return pd.DataFrame(rows)


def paired_scores(ratings: pd.DataFrame, system: str, metric: str) -> pd.DataFrame:
    """Per item of one system and metric rated by both kinds: ``item, llm, human`` means."""
    part = ratings[(ratings["system"] == system) & (ratings["metric"] == metric)]
    table = (
        part.groupby(["item", "rater_kind"])["score"]
        .mean()
        .unstack("rater_kind")
        .reindex(columns=list(RATER_KINDS))
        .dropna()
    )
    return table.reset_index()[["item", "llm", "human"]]


#: A small valid ratings file, offered on the site as a template.
EXAMPLE_CSV = (
    "item,system,metric,rater_kind,rater_id,score\n"
    "d001,my-system,general_empathy,llm,gemini-2.5-flash,4\n"
    "d001,my-system,general_empathy,human,crowd-1,5\n"
    "d001,my-system,general_empathy,human,crowd-2,4\n"
    "d002,my-system,general_empathy,llm,gemini-2.5-flash,2\n"
    "d002,my-system,general_empathy,human,crowd-1,3\n"
    "d002,my-system,general_empathy,human,crowd-2,2\n"
    "d003,my-system,general_empathy,llm,gemini-2.5-flash,5\n"
    "d003,my-system,general_empathy,human,crowd-1,4\n"
    "d003,my-system,general_empathy,human,crowd-2,4\n"
)


def _note(c) -> str:
    if not c.constant:
        return c.note
    sides = [f"the LLM gave every item {c.x_constant:g}"] if c.x_constant is not None else []
    sides += [f"people gave every item {c.y_constant:g}"] if c.y_constant is not None else []
    return (
        " and ".join(sides)
        + ": r is undefined; compare the means and the mean absolute difference instead."
    )


# --- EmplifAI published figures --------------------------------------------------------------


@dataclass(frozen=True)
class EmplifAI:
    """EmplifAI's published LLM-judge vs crowd comparison (Tables 5 and 6), one ``table`` row
    per (system, metric). ``constant``: the judge's mean sits at an end of the 1-5 scale, so it
    gave every item that score and r is undefined; ``mad_from_means`` is then exact (every human
    score lies on one side of it).
    """

    source: str
    setting: str
    systems: dict[str, str]
    constant_rule: str
    p_note: str
    finding: str
    table: pd.DataFrame


def load_emplifai(path: str | Path | None = None) -> EmplifAI | None:
    """The EmplifAI figures; None without the file, RatingsError when it is malformed."""
    file = Path(path) if path is not None else reference_dir() / EMPLIFAI_FILE
    if not file.is_file():
        return None
    source = str(file)
    try:
        raw = json.loads(file.read_text("utf-8"))
        metrics = list(raw["metrics"])
        means = raw["mean_scores"]
        rs = raw["pearson_r"]
        printed = {k: v for k, v in raw.get("gpt_constant_mad", {}).items() if isinstance(v, dict)}
        rows = []
        low, high = EMPLIFAI_SCALE
        for system in raw["systems"]:
            for i, metric in enumerate(metrics):
                llm = float(means[system]["llm"][i])
                human = float(means[system]["human"][i])
                r = rs[system][i]
                constant = llm in (low, high)
                shown = printed.get(metric) if system == "GPT" else None
                rows.append(
                    {
                        "system": system,
                        "metric": metric,
                        "llm_mean": llm,
                        "human_mean": human,
                        "r": math.nan if r is None else float(r),
                        "constant": constant,
                        "printed_value": float(shown["value"]) if shown else math.nan,
                        "printed_mad": float(shown["mad"]) if shown else math.nan,
                        "mad_from_means": abs(llm - human) if constant else math.nan,
                    }
                )
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise RatingsError(source, [Problem(0, f"not readable JSON ({exc}).")]) from None
    except (KeyError, IndexError, TypeError, ValueError) as exc:
        raise RatingsError(
            source,
            [
                Problem(
                    0,
                    f"unexpected structure ({type(exc).__name__}: {exc}); expected "
                    "systems, metrics, mean_scores, pearson_r.",
                )
            ],
        ) from None
    return EmplifAI(
        source=str(raw.get("source", "")),
        setting=str(raw.get("setting", "")),
        systems={str(k): str(v) for k, v in raw["systems"].items()},
        constant_rule=str(raw.get("constant_rule", "")),
        p_note=str(raw.get("pearson_p_note", "")),
        finding=str(raw.get("finding", "")),
        table=pd.DataFrame(rows),
    )
