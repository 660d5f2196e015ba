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


#: Each column's label, in the site's lower-case header style.
FIELDS: dict[str, Field] = {
    f.key: f
    for f in (
        Field("rank", "rank", "1 + the number of entries significantly better on this metric."),
        Field("rank_band", "rank band", RANK_BAND),
        Field("name", "name"),
        Field("team", "team"),
        Field("account", "verified account", "The account the submitter signed in with."),
        Field(
            "setting",
            "setting",
            "How the system was built, as its submitter declared: zero-shot, few-shot, "
            "fine-tuned or other.",
        ),
        Field(
            "saw_test",
            "saw test data",
            "Whether the system's training saw ETC's test dialogues, as its submitter declared.",
        ),
        Field("kind", "kind", "Scored here, a baseline, a trivial submission or reported."),
        Field("flag", "flag", "Why an entry is marked: trivial, or below a trivial baseline."),
        Field("id", "id", "The entry's id, as links and the command line name it."),
        Field("model_url", "model or code link"),
        Field("paper_url", "paper link"),
        Field("parameters", "parameters (billions)", "As the submitter declared."),
        Field("open_weights", "open weights", "Whether the weights can be downloaded."),
        Field("licence", "licence", "The model's licence, as the submitter declared."),
        Field("visibility", "visibility"),
        Field("created_at", "submitted (UTC)"),
        Field("description", "description"),
        Field("status", "status"),
        Field("source", "source", "Where the published numbers are printed."),
        Field("n_items", "items", "How many test items the figures are computed over."),
        Field("n_units", "atomic units", "How many atomic units the judge found in the text."),
        Field("dialogue_id", "dialogue"),
        Field("turn", "turn"),
        Field(
            "role", "role", "The author's role: speaker (A, opens the dialogue) or listener (B)."
        ),
        Field("label", "annotators' label", "The annotators' aggregated categories (2 of 3)."),
        Field("reference", "reference", "The participant's own emotion transcription."),
        Field("prediction", "prediction"),
        Field("pred_chars", "prediction length (characters)"),
        Field(
            "categories", "categories read", "The categories the transcription classifier reads."
        ),
        Field("category_exact", "same categories", "The categories read equal the label."),
        Field("metric", "metric"),
        Field("value", "value"),
        Field("value [95% CI]", "value [95% CI]", "The score and its 95% bootstrap interval."),
        Field("signature", "signature", "Everything the number depends on."),
        Field("current", "current signature", "Scored with the board's current settings."),
        Field("field", "field"),
        Field("line", "line", "The line of the file (a run of lines: from–to)."),
        Field("problem", "problem"),
        Field("cause type", "cause type"),
        Field("items", "items"),
    )
}


def _metric(column: str) -> Any:
    """The metric fact of a column headed by a metric's key or heading (perhaps with
    " [95% CI]"), or None."""
    from etclib import metrics

    base = column.removesuffix(" [95% CI]")
    return next((f for f in metrics.facts() if base in (f.key, f.heading)), None)


def describe(column: str) -> tuple[str, str]:
    """(label, meaning) of a column: a field's, a metric's, or the column with no meaning."""
    if column in FIELDS:
        return FIELDS[column].label, FIELDS[column].help
    named = next((f for f in FIELDS.values() if f.label.lower() == column.lower()), None)
    if named is not None:  # a table already headed in words ("saw test data")
        return column, named.help
    fact = _metric(column)
    if fact is not None:
        ci = column[len(column.removesuffix(" [95% CI]")) :]
        return fact.heading + ci, fact.definition[:1].upper() + fact.definition[1:] + "."
    return column, ""


def label(column: str) -> str:
    """How a reader names ``column`` (:func:`describe`)."""
    return describe(column)[0]


def column_config(
    columns: Iterable[str], numbers: Iterable[str] = (), **widths: Any
) -> dict[str, Any]:
    """``column_config`` heading ``columns`` by label, meaning as tooltip; ``widths``. A metric
    among ``numbers`` (columns that hold numbers) shows two decimals, trailing zeros kept."""
    import streamlit as st

    numbers = set(map(str, numbers))
    out = {}
    for column in columns:
        text, meaning = describe(str(column))
        kind, fmt = st.column_config.Column, {}
        if str(column) in numbers and _metric(str(column)) is not None:
            kind, fmt = st.column_config.NumberColumn, {"format": "%.2f"}
        out[column] = kind(text, help=meaning or None, width=widths.get(str(column)), **fmt)
    return out


def table(frame: Any, key: str, widths: dict[str, Any] | None = None, **options: Any) -> Any:
    """``st.dataframe`` of ``frame``, full width, no index, headed by :func:`column_config`."""
    import streamlit as st

    floats = frame.select_dtypes("float").columns
    config = column_config(frame.columns, floats, **(widths or {}))
    options = {"hide_index": True, "width": "stretch", **options}
    return st.dataframe(frame, key=key, column_config=config, **options)
