"""What every column a visitor reads is called, and what it means: the field facts.

The metric columns' names and definitions are the metric facts (:mod:`etclib.metrics`); the
other columns of the site's tables (an entry's fields, an item's parts, a ranking's rank and
band) are :data:`FIELDS` here. Tables keep their keys; :func:`column_config` heads each known
column with its label and puts its meaning in the header's tooltip, so no key reaches a visitor.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

#: The rank band in a sentence (the board's caption and the column's tooltip).
RANK_BAND = (
    "The places an entry could hold once chance is allowed for: from 1 + the entries that are "
    "significantly better than it, to the number of entries it does not beat significantly."
)


@dataclass(frozen=True)
class Field:
    """A column that is no metric: its key, how a reader names it, and a line on its meaning."""

    key: str
    label: str
    help: str = ""


FIELDS: dict[str, Field] = {
    f.key: f
    for f in (
        Field("rank", "Rank", "1 + the number of entries significantly better on this metric."),
        Field("rank_band", "Rank band", RANK_BAND),
        Field("name", "Entry"),
        Field("team", "Team"),
        Field("account", "Verified account", "The account the submitter signed in with."),
        Field("verified account", "Verified account", "The account the submitter signed in with."),
        Field(
            "setting",
            "Setting",
            "How the system was built, as its submitter declared: zero-shot, few-shot, "
            "fine-tuned or other.",
        ),
        Field(
            "saw_test",
            "Saw test data",
            "Whether the system's training saw ETC's test dialogues, as its submitter declared.",
        ),
        Field("kind", "What it is", "Scored here, a baseline, a trivial submission or reported."),
        Field("flag", "Flag", "Why an entry is marked: trivial, or below a trivial baseline."),
        Field("id", "Entry id"),
        Field("model_url", "Model link"),
        Field("paper_url", "Paper link"),
        Field("created_at", "Submitted (UTC)"),
        Field("description", "Description"),
        Field("status", "Status"),
        Field("source", "Source", "Where the published numbers are printed."),
        Field("n_items", "Items", "How many test items the figures are computed over."),
        Field("n_units", "Atomic units", "How many atomic units the judge found in the text."),
        Field("dialogue_id", "Dialogue"),
        Field("turn", "Turn"),
        Field(
            "role", "Role", "The author's role: speaker (A, opens the dialogue) or listener (B)."
        ),
        Field("label", "Annotators' label", "The annotators' aggregated categories (2 of 3)."),
        Field("reference", "Reference", "The participant's own emotion transcription."),
        Field("prediction", "Prediction"),
        Field("pred_chars", "Prediction length (characters)"),
        Field(
            "categories", "Categories read", "The categories the transcription classifier reads."
        ),
        Field("category_exact", "Same categories", "The categories read equal the label."),
        Field("metric", "Metric"),
        Field("value", "Value"),
        Field("value [95% CI]", "Value [95% CI]", "The score and its 95% bootstrap interval."),
        Field("signature", "Signature", "Everything the number depends on."),
        Field("current", "Current signature", "Scored with the board's current settings."),
        Field("field", "Field"),
        Field("line", "Line", "The line of the file (a run of lines: from–to)."),
        Field("problem", "Problem"),
        Field("cause type", "Cause type"),
        Field("items", "Items"),
    )
}


def describe(column: str) -> tuple[str, str]:
    """(label, meaning) of a column: a field's, a metric key's or a metric heading's (from the
    metric's fact, ``[95% CI]`` kept), or the column itself with no meaning."""
    from etclib import metrics

    if column in FIELDS:
        return FIELDS[column].label, FIELDS[column].help
    named = next((f for f in FIELDS.values() if f.label.lower() == column.lower()), None)
    if named is not None:  # a table already headed in words ("saw test data")
        return column, named.help
    base, ci = (
        (column[: -len(" [95% CI]")], " [95% CI]")
        if column.endswith("[95% CI]")
        else (
            column,
            "",
        )
    )
    for fact in metrics.facts():
        if base in (fact.key, fact.heading):
            return fact.heading + ci, fact.definition[:1].upper() + fact.definition[1:] + "."
    return column, ""


def label(column: str) -> str:
    """How a reader names ``column`` (:func:`describe`)."""
    return describe(column)[0]


def column_config(columns: Iterable[str], **widths: Any) -> dict[str, Any]:
    """``st.dataframe``'s ``column_config`` heading each of ``columns`` by its label with its
    meaning as the header's tooltip; ``widths``: a column's width (``name="medium"``)."""
    import streamlit as st

    out = {}
    for column in columns:
        text, meaning = describe(str(column))
        out[column] = st.column_config.Column(
            text, help=meaning or None, width=widths.get(str(column))
        )
    return out
