"""The judge-versus-human page's tables: the studies' results (``etclib.studies``) formatted as the
page shows them."""

from __future__ import annotations

import json
import math
from typing import Any

import pandas as pd

#: The page's "no judge run" choice of the run picker.
NONE_RUN = "none"
TABS = (
    "1 · Emotion categories",
    "2 · Atomic-unit decisions",
    "3 · Likert ratings",
    "4 · This judge vs the paper's",
)
LABEL_VIEWS = ("Table", "Chart")
#: What the page's figures mean, for visitors (the project's docs/judge_vs_human.md has the rest).
DEFINITIONS = """
- **Cohen's κ**: agreement of two raters beyond chance, (observed − expected) / (1 − expected);
  1 is perfect agreement, 0 is what chance gives.
- **Fleiss' κ**: the same for a fixed number of raters per item (here: ETC's three annotators,
  or two people per re-checked decision).
- **Krippendorff's α** (nominal): agreement of any number of raters with missing answers.
- **Consensus of two annotators** (Study 1): a category counts as chosen only when both chose it.
- **The human yardstick**: people's agreement with each other on the same task; a judge as
  close to people as they are to each other is as good a rater as a person.
- **Study 2's sample**: from each judged submission, up to the configured number of decisions
  per judge label (Supported, Neutral, Not Supported) and per side (a prediction unit checked
  against the reference, or a reference unit checked against the prediction), drawn with a
  fixed seed; each decision goes to two people before a third.
- **Intervals**: 95% percentile bootstrap over items (300 resamples on this page).
- **Pearson's r** (Study 3): undefined when one side gives every item the same score; then the
  constant and the mean absolute difference are shown.
"""


#: The page's own section on how its figures come about (its links point there).
HOW_ANCHOR = "how-these-studies-are-made"
HOW_LINK = f"[how]({'#' + HOW_ANCHOR})"
HOW_MADE = """
- **Study 1, a judge run**: the benchmark's maintainers ask an LLM to label every emotion
  transcription of a split with the seven categories, with a fixed prompt whose wording is
  versioned. The run is stored with what its answers depend on (the model, the prompt's
  version, the decoding settings: its *signature*) and appears in the *Judge run* list.
- **Study 2, the decisions**: when the leaderboard scores an entry with the LLM judge, a
  sample of its decisions is kept here for people with an annotator code to check.
- **Study 3, ratings**: the figures come from the file you upload; EmplifAI's come from its
  published paper and are installed with the site.
- **Study 4, a calibration run**: the maintainers have a judge split the test references into
  atomic units and compare the count with the paper's; it appears in the *Calibration run* list.
"""


def auto_per_stratum() -> int:
    """Decisions per (judge label, side) of Study 2's automatic sample, as configured."""
    from etclib.studies.annotation import auto_sample_settings

    return auto_sample_settings()[0]


def _missing(x: Any) -> bool:
    return x is None or (isinstance(x, float) and math.isnan(x))


def number(x: Any, digits: int = 2) -> str:
    """``x`` with ``digits`` decimals; an en dash when it is missing or NaN."""
    return "–" if _missing(x) else f"{x:.{digits}f}"


def interval(value: Any, low: Any, high: Any) -> str:
    """``value [low, high]``; the value alone without an interval; "undefined" without a value."""
    if _missing(value):
        return "undefined"
    if _missing(low):
        return number(value)
    return f"{number(value)} [{number(low)}, {number(high)}]"


def _intervals(table: pd.DataFrame, value: str, low: str, high: str) -> list[str]:
    return [interval(*v) for v in table[[value, low, high]].itertuples(index=False)]


def _percent(x: Any) -> str:
    return f"{100 * x:.1f}%"


def run_names(
    runs: pd.DataFrame, none: str = "no judge: the human yardstick only"
) -> dict[str, str]:
    """The run picker's labels: model, provider, split and size of each stored run."""
    names = {NONE_RUN: none}
    for r in runs.to_dict("records") if not runs.empty else []:
        names[r["run_id"]] = (
            f"{r['model']} ({r['provider']}, {r['split']}, {r['n_labelled']} items) · {r['run_id']}"
        )
    return names


def label_table(table: pd.DataFrame, with_judge: bool) -> pd.DataFrame:
    """Study 1 per category; the judge's columns only ``with_judge``."""
    shown = pd.DataFrame(
        {
            "category": table["category"],
            "Japanese": table["ja"],
            "share chosen by people": table["human_rate"].map(_percent),
        }
    )
    if with_judge:
        shown["share chosen by the judge"] = table["judge_rate"].map(_percent)
        shown["judge vs people's majority, κ [95% CI]"] = _intervals(
            table, "judge_vs_majority", "judge_vs_majority_low", "judge_vs_majority_high"
        )
        shown["judge vs each pair's consensus, κ"] = table["judge_vs_pairs"].map(number)
    shown["annotator vs the other two, κ (yardstick)"] = table["human_vs_others"].map(number)
    shown["three annotators, Fleiss' κ [95% CI]"] = _intervals(
        table, "fleiss_humans", "fleiss_humans_low", "fleiss_humans_high"
    )
    if with_judge:
        shown["three annotators and the judge, Fleiss' κ [95% CI]"] = _intervals(
            table, "fleiss_with_judge", "fleiss_with_judge_low", "fleiss_with_judge_high"
        )
    return shown


def yardstick_table(yardstick: pd.DataFrame) -> pd.DataFrame:
    """Each annotator against the other two's consensus, per category, with its interval."""
    column = "against the other two's consensus, Cohen's κ [95% CI]"
    return yardstick.assign(**{column: _intervals(yardstick, "kappa", "low", "high")})[
        ["category", "annotator", column]
    ]


def ratings_table(compared: pd.DataFrame) -> pd.DataFrame:
    """Study 3 per system and metric: means, r with its interval and p, mean absolute gap."""
    shown = compared.assign(
        **{
            "r [95% CI]": _intervals(compared, "r", "low", "high"),
            "p": compared["p"].map(lambda x: number(x, 3)),
        }
    )
    columns = ["system", "metric", "items", "llm_mean", "human_mean", "r [95% CI]", "p", "mad"]
    return shown[[*columns, "note"]].round(2).rename(columns=RATING_COLUMNS)


def emplifai_table(table: pd.DataFrame) -> pd.DataFrame:
    """EmplifAI's published comparison with what its paper printed where r is undefined."""
    return table.assign(
        r=table["r"].map(number),
        judge=["constant" if c else "" for c in table["constant"]],
    )[
        [
            "system",
            "metric",
            "llm_mean",
            "human_mean",
            "r",
            "judge",
            "printed_value",
            "printed_mad",
            "mad_from_means",
        ]
    ].rename(columns=RATING_COLUMNS)


RATING_COLUMNS = {
    "llm_mean": "LLM mean",
    "human_mean": "people's mean",
    "r": "Pearson's r",
    "r [95% CI]": "Pearson's r [95% CI]",
    "mad": "mean absolute difference",
    "judge": "judge's scores",
    "printed_value": "printed in place of r",
    "printed_mad": "printed mean absolute difference",
    "mad_from_means": "5 − people's mean",
}


UNIT_METRIC_COLUMNS = {
    "submission_id": "entry id",
    "metric": "metric",
    "judge": "with the judge's labels",
    "with_humans": "with people's labels",
    "change": "change",
    "items": "items",
    "relabelled": "units relabelled",
}


def unit_metrics_table(metrics: pd.DataFrame) -> pd.DataFrame:
    """Study 2: each judge score with the judge's labels and with people's, two decimals."""
    from .fields import label

    shown = metrics.assign(metric=metrics["metric"].map(lambda k: label(str(k))))
    return shown.round(2).rename(columns=UNIT_METRIC_COLUMNS)


def sample_sizes(sizes: dict[str, int]) -> str:
    """``Supported 20, Neutral 20, ...``: a drawn sample's size per judge label."""
    return ", ".join(f"{k} {v}" for k, v in sizes.items())


# --- study 4: the scoring judge beside the paper's (etclib judge calibrate) -----------------


def calibration_names(runs: pd.DataFrame) -> dict[str, str]:
    """The calibration picker's labels: model, provider, prompt set, size and date of each run."""
    names = {}
    for r in runs.to_dict("records") if not runs.empty else []:
        when = str(r["created_at"])[:16]
        names[r["run_id"]] = (
            f"{r['model']} ({r['provider']}, prompts {r['prompts']}, {r['n_references']} "
            f"references) · {when} · {r['run_id']}"
        )
    return names


def calibration_report(runs: pd.DataFrame, run_id: str) -> dict[str, Any]:
    """The stored report of one calibration run."""
    row = runs[runs["run_id"] == run_id].iloc[0]
    return json.loads(row["report"])


def _mean_sd(mean: Any, sd: Any) -> str:
    return f"{number(mean)} ({number(sd)})"


def calibration_table(report: dict[str, Any]) -> pd.DataFrame:
    """One calibration run beside the paper's Table 3, with the two sanity checks."""
    refs = report["references"]
    rows = [
        {
            "measure": f"units per reference, mean (SD), {refs['n']} test references",
            "this judge": _mean_sd(refs["units_mean"], refs["units_sd"]),
            "the paper's": _mean_sd(refs["paper_units_mean"], refs["paper_units_sd"]),
            "verdict": f"{refs['verdict']} (d = {number(refs['d'])})",
        }
    ]
    for key, what in (
        ("self_check", "F1, references against themselves"),
        ("shuffled_check", "F1, references against another dialogue's"),
    ):
        c = report[key]
        rows.append(
            {
                "measure": f"{what} ({c['n_judged']} of {c['n']} judged)",
                "this judge": number(c["f1"]),
                "the paper's": ("near 100 " if key == "self_check" else "near 0 ")
                + f"({c['bound']})",
                "verdict": "ok" if c["ok"] else "NOT OK",
            }
        )
    p = report.get("predictions")
    if p:
        chosen = next((r for r in p["paper_rows"] if r["row"] == p["paper_row"]), None)
        rows.append(
            {
                "measure": f"units per prediction, mean (SD), {p['file']}",
                "this judge": _mean_sd(p["units_mean"], p["units_sd"]),
                "the paper's": (
                    f"{chosen['row']}: {_mean_sd(chosen['mean'], chosen['sd'])}"
                    if chosen
                    else "no Table 3 row named"
                ),
                "verdict": chosen["verdict"] if chosen else "",
            }
        )
    return pd.DataFrame(rows, columns=["measure", "this judge", "the paper's", "verdict"])
