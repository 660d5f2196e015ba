"""The emotion-cause layer (:mod:`etclib.studies.causes`) as the site shows it. Only the dialogue
view falls back on an item's single human answer; scores and filters never count it."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import pandas as pd

from etclib.data.corpus import ROLE_LETTER, load_corpus
from etclib.studies import causes

SOURCE_NAMES = {"human": "human majority", "proxy": "proxy (partner mention)"}
NO_CAUSES = (
    "No human or LLM cause labels for this utterance yet: the proxy (a partner mention) gives "
    "a type, never cause utterances."
)


def source_name(source: str | None) -> str:
    """How the site names a cause-type source (``llm:<id>`` -> ``LLM run <id>``)."""
    if source is None:
        return "none"
    if source.startswith("llm:"):
        return f"LLM run {source[4:]}"
    return SOURCE_NAMES.get(source, source)


def _utterances(keys: Iterable[tuple[int, int, str]]) -> list[Any]:
    corpus = load_corpus()
    out = []
    for d, t, r in keys:
        dialogue = corpus.by_id.get(int(d))
        if dialogue is None:
            continue
        out.extend(u for u in dialogue.utterances if u.turn == int(t) and u.role == r)
    return out


def item_cause_types(items: pd.DataFrame, *, db: Any = None) -> pd.DataFrame:
    """``cause_types_for_items`` (``auto``) for the rows of ``items``, in the corpus."""
    keys = list(zip(items["dialogue_id"], items["turn"], items["role"]))
    return causes.cause_types_for_items(_utterances(keys), "auto", db=db)


#: Per-item judge scores shown by cause type beside the registry's metrics.
ITEM_SCORES = ("f1", "precision", "recall")


def breakdown_metrics(items: pd.DataFrame, first: str | None, order: Iterable[str]) -> list[str]:
    """The numeric per-item score columns of ``items`` to break down, ``first`` first."""
    out: list[str] = []
    for m in [first, *order, *ITEM_SCORES]:
        if m and m in items.columns and m not in out:
            if pd.to_numeric(items[m], errors="coerce").notna().any():
                out.append(m)
    return out


def cause_breakdown(
    items: pd.DataFrame, metrics: Iterable[str], *, db: Any = None
) -> tuple[pd.DataFrame, str]:
    """An entry's mean per-item scores per cause type, with counts, and a caption."""
    metrics = [m for m in metrics if m in items.columns]
    if items.empty or not metrics:
        return pd.DataFrame(), ""
    types = item_cause_types(items, db=db)
    if types.empty:
        return pd.DataFrame(), ""
    merged = items.merge(types, on=["dialogue_id", "turn", "role"], how="inner")
    merged = merged[merged["cause_type"].notna()]
    if merged.empty:
        return pd.DataFrame(), ""
    scores = merged[metrics].apply(pd.to_numeric, errors="coerce")
    table = scores.groupby(merged["cause_type"]).mean().round(2)
    table.insert(0, "items", merged.groupby("cause_type").size())
    table["source"] = merged.groupby("cause_type")["source"].agg(
        lambda s: ", ".join(f"{source_name(k)} {n:,}" for k, n in s.value_counts().items())
    )
    table.index.name = "cause type"
    counts = merged["source"].value_counts()
    caption = "source: " + "; ".join(f"{source_name(k)}, {n:,} items" for k, n in counts.items())
    return table.reset_index(), caption


def corpus_cause_types(*, db: Any = None) -> pd.DataFrame:
    """Every corpus utterance's cause type and source (``cause_types_for_items``, ``auto``)."""
    return causes.cause_types_for_items(load_corpus().utterances, "auto", db=db)


def keys_of_type(types: pd.DataFrame, cause_type: str) -> set[tuple[int, int, str]]:
    """The item keys of ``types`` whose cause type is ``cause_type``."""
    hit = types[types["cause_type"] == cause_type]
    return {
        (int(d), int(t), str(r)) for d, t, r in zip(hit["dialogue_id"], hit["turn"], hit["role"])
    }


def filter_by_keys(results: pd.DataFrame, keys: set[tuple[int, int, str]]) -> pd.DataFrame:
    """The rows of a results frame (``dialogue_id, turn, role``) whose key is in ``keys``."""
    if results.empty:
        return results
    mask = [
        (int(d), int(t), str(r)) in keys
        for d, t, r in zip(results["dialogue_id"], results["turn"], results["role"])
    ]
    return results[mask].reset_index(drop=True)


def target_label(turn: int, role: str, found: Any = None) -> str:
    """``utterance 3 (A, turn 2)``, with `` · causes marked`` when ``found``."""
    label = f"utterance {causes.position(int(turn), role)} ({ROLE_LETTER[role]}, turn {int(turn)})"
    return f"{label} · causes marked" if found is not None else label


#: The source of a cause set that is one person's answer (no majority yet).
ONE_ANSWER = "one human answer (no majority yet)"


def cause_set(dialogue_id: int, turn: int, role: str, *, db: Any = None) -> Any:
    """``causes.cause_utterances``, else the item's single human answer; None without."""
    key = (int(dialogue_id), int(turn), str(role))
    return cause_sets_of([key], db=db).get(key)


def cause_sets_of(keys: Iterable[tuple[int, int, str]], *, db: Any = None) -> dict[Any, Any]:
    """Item key -> :func:`cause_set` for each of ``keys`` that has one (two reads in all)."""
    keys = [(int(d), int(t), str(r)) for d, t, r in keys]
    out = causes.cause_utterances_of(keys, db=db)
    missing = {k for k in keys if k not in out}
    if missing:
        answers = causes.human_answers(db=db)
        for (d, t, r), group in answers.groupby(["dialogue_id", "turn", "role"], sort=False):
            key = (int(d), int(t), str(r))
            if key in missing and len(group) == 1:
                chosen = tuple(causes.turn_role(int(p)) for p in group["causes"].iloc[0])
                out[key] = causes.CauseSet(*key, chosen, ONE_ANSWER)
    return out


def corpus_cause_sets(*, db: Any = None) -> dict[Any, Any]:
    """:func:`cause_sets_of` every utterance of the corpus."""
    return cause_sets_of((u.key for u in load_corpus().utterances), db=db)


def dialogue_cause_sets(
    dialogue_id: int, targets: Iterable[tuple[int, str]], *, db: Any = None
) -> dict[tuple[int, str], Any]:
    """``(turn, role)`` -> :func:`cause_set` for each of ``targets`` that has one."""
    found = cause_sets_of(((dialogue_id, t, r) for t, r in targets), db=db)
    return {key[1:]: value for key, value in found.items()}


def cause_marks(found: Any) -> dict[tuple[int, str], str]:
    """``(turn, role)`` -> the marker shown beside that line: ``cause of utterance N``."""
    if found is None:
        return {}
    n = causes.position(found.turn, found.role)
    return {(int(t), str(r)): f"⟵ cause of utterance {n}" for t, r in found.causes}


def cause_summary(found: Any) -> str:
    """One line on a ``CauseSet``: its type, cause utterances and source."""
    if found is None:
        return NO_CAUSES
    lines = (
        ", ".join(f"{causes.position(t, r)} ({ROLE_LETTER[r]})" for t, r in found.causes)
        or "none in the dialogue"
    )
    return f"Cause type: {found.cause_type}; cause utterances: {lines}; source: {found.source}."
