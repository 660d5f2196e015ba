"""The corpus browser's data: filter choices, search pages, one dialogue, and chart tables.

A visitor's text is only ever a bound SQL parameter, matched literally."""

from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass
from typing import Any

import pandas as pd

from etclib.core.errors import StoreError
from etclib.data import store
from etclib.data.corpus import BIG_FIVE, CATEGORIES, ROLE_LETTER, ROLES, SPLITS

PAGE_SIZE = 25
BIG_FIVE_RANGE = (2, 14)
#: Longest search text accepted (the longest utterance of the corpus is far shorter).
MAX_QUERY_CHARS = 200
#: Pixel height of a result row: Streamlit 1.67 wraps cell text only in rows over 4rem.
RESULT_ROW_HEIGHT = 70
#: Pixel width of the utterance and transcription columns: both fit on a laptop screen.
RESULT_TEXT_WIDTH = 300
#: Pixel height of the results table: its header and eight rows (the rest scroll).
RESULT_TABLE_HEIGHT = 38 + 8 * RESULT_ROW_HEIGHT
RESULT_COLUMNS = (
    "dialogue_id",
    "turn",
    "role",
    "label",
    "utterance",
    "transcription",
    "agreement",
    "split",
    "dialogue_emotion",
)


@dataclass(frozen=True)
class FilterChoices:
    """What the filter widgets offer."""

    splits: tuple[str, ...]
    roles: tuple[str, ...]
    dialogue_emotions: tuple[str, ...]
    categories: tuple[str, ...]
    agreement: tuple[str, ...]
    big_five: tuple[str, ...]


def filter_choices(con: Any) -> FilterChoices:
    """The values each filter can take, from the store."""
    return FilterChoices(
        splits=SPLITS,
        roles=ROLES,
        dialogue_emotions=tuple(store.dialogue_emotions(con)),
        categories=CATEGORIES,
        agreement=store.AGREEMENT_LEVELS,
        big_five=BIG_FIVE,
    )


def query_problem(text: str | None) -> str | None:
    """Why a search text is refused (longer than :data:`MAX_QUERY_CHARS`), or None."""
    n = len((text or "").strip())
    if n > MAX_QUERY_CHARS:
        return (
            f"The search text has {n:,} characters; the limit is {MAX_QUERY_CHARS}. "
            "Search for a shorter part of it."
        )
    return None


def make_filters(
    text: str = "",
    split: str | None = None,
    role: str | None = None,
    dialogue_emotion: str | None = None,
    categories: list[str] | tuple[str, ...] = (),
    agreement: str | None = None,
    big_five: dict[str, tuple[int, int]] | None = None,
) -> store.Filters:
    """``store.Filters`` from widget values; ``StoreError`` for a text too long."""
    problem = query_problem(text)
    if problem:
        raise StoreError(problem)
    ranges = {
        t: (int(lo), int(hi))
        for t, (lo, hi) in (big_five or {}).items()
        if (int(lo), int(hi)) != BIG_FIVE_RANGE
    }
    return store.Filters(
        text=(text or "").strip(),
        split=split or None,
        role=role or None,
        dialogue_emotion=dialogue_emotion or None,
        categories=tuple(categories),
        agreement=agreement or None,
        big_five=ranges or None,
    )


def filters_key(filters: store.Filters) -> str:
    """A short stable digest of ``filters`` (for widget keys that reset when filters change)."""
    return hashlib.sha1(repr(filters).encode("utf-8")).hexdigest()[:12]


def page_count(total: int, page_size: int = PAGE_SIZE) -> int:
    """Pages needed for ``total`` results (at least 1, so a pager always has a page)."""
    return max(1, math.ceil(total / page_size))


def search_page(
    con: Any, filters: store.Filters, page: int = 1, page_size: int = PAGE_SIZE
) -> tuple[pd.DataFrame, int]:
    """Results ``page`` (1-based) of a search, labels joined for display, and the total."""
    page = max(1, int(page))
    df, total = store.search(con, filters, limit=page_size, offset=(page - 1) * page_size)
    if not df.empty:
        df["label"] = df["label"].map(lambda v: ", ".join(v))
    return df[[c for c in RESULT_COLUMNS if c in df.columns]], total


def dialogue_view(con: Any, dialogue_id: int) -> dict[str, Any] | None:
    """One dialogue for display: header, utterances as records, participants."""
    d = store.dialogue(con, int(dialogue_id))
    if d is None:
        return None
    people = d["participants"].set_index("participant_id")
    rows = []
    for role, pid in (("speaker", d["speaker_id"]), ("listener", d["listener_id"])):
        rec = {"who": ROLE_LETTER[role], "role": role, "participant": pid}
        if pid in people.index:
            rec.update({t: int(people.loc[pid, t]) for t in BIG_FIVE})
        rows.append(rec)
    utterances = [
        {**u, **{c: list(u[c]) for c in ("ann1", "ann2", "ann3", "label")}}
        for u in d["utterances"].to_dict("records")
    ]
    return {
        "dialogue_id": d["dialogue_id"],
        "split": d["split"],
        "dialogue_emotion": d["dialogue_emotion"],
        "utterances": utterances,
        "participants": pd.DataFrame(rows),
    }


def utterance_lengths(con: Any) -> pd.DataFrame:
    """Per-utterance character lengths: role, utterance_chars, transcription_chars."""
    return con.execute(
        "SELECT role, utterance_chars, transcription_chars FROM utterances "
        "ORDER BY dialogue_id, position"
    ).df()


def big_five_scores(con: Any) -> pd.DataFrame:
    """Big Five scores of every participant who speaks in the corpus (one row each)."""
    cols = ", ".join(f"p.{t}" for t in BIG_FIVE)
    return con.execute(
        f"SELECT p.participant_id, {cols} FROM participants p "
        "WHERE p.participant_id IN (SELECT DISTINCT participant_id FROM utterances) "
        "ORDER BY p.participant_id"
    ).df()


# --- tables for the statistics charts (from etclib.metrics.corpus_stats.compute) -----------------------------


def prevalence_table(stats: dict[str, Any]) -> pd.DataFrame:
    """Long table: percent of transcriptions with each category, per role and ``all``."""
    return pd.DataFrame(
        [
            {"category": c, "role": r, "percent": v[r]}
            for c, v in stats["labels"].items()
            for r in (*ROLES, "all")
        ]
    )


def label_table(stats: dict[str, Any]) -> pd.DataFrame:
    """Wide table as ``etclib stats`` prints it: per-role percents and Fleiss' kappa."""
    columns = ("speaker", "listener", "all", "kappa")
    rows = [{"category": c, **{k: v[k] for k in columns}} for c, v in stats["labels"].items()]
    return pd.DataFrame(rows)


def kappa_table(stats: dict[str, Any]) -> pd.DataFrame:
    """Fleiss' kappa per category (and pooled as ``all``)."""
    rows = [{"category": c, "kappa": v["kappa"]} for c, v in stats["labels"].items()]
    rows.append({"category": "all (pooled)", "kappa": stats["kappa_overall"]})
    return pd.DataFrame(rows)


def cooccurrence_matrix(stats: dict[str, Any]) -> pd.DataFrame:
    """Square table of transcriptions carrying both categories (diagonal: each category)."""
    co = stats["cooccurrence"]
    return pd.DataFrame(
        [[co[a][b] for b in CATEGORIES] for a in CATEGORIES], CATEGORIES, CATEGORIES
    )


# --- the category classifier against the annotators (etclib.tracks.categories.analysis) ---------

#: The split the classifier never saw (it is trained on train and tuned on valid).
CLASSIFIER_SPLIT = "test"


def classifier_view(split: str = CLASSIFIER_SPLIT) -> dict[str, Any]:
    """The transcription classifier on ``split``: confusion, per-category scores, signature."""
    from etclib.data.corpus import load_corpus
    from etclib.tracks.categories import analysis

    corpus = load_corpus()
    confusion = analysis.classifier_confusion(corpus, split)
    per_category = analysis.classifier_per_category(corpus, split)
    summary = analysis.classifier_summary(corpus)
    return {
        "confusion": confusion,
        "per_category": per_category,
        "signature": summary["signature"],
        "valid": summary["valid"],
        "n_items": int(per_category["tp"].iloc[0] + per_category["fp"].iloc[0])
        + int(per_category["fn"].iloc[0] + per_category["tn"].iloc[0]),
        "split": split,
    }
