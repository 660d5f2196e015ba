"""Corpus statistics (``etclib stats``), queried from the DuckDB store.

Label shares per category and role, Fleiss' kappa of the three annotators' yes/no decisions,
multi-label share and category co-occurrence (the cause layer's figures:
:mod:`etclib.studies.causes.stats`).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from etclib.data.corpus import CATEGORIES, ROLES
from etclib.metrics.agreement import fleiss_kappa

RATERS = 3


def _yes_no(votes: np.ndarray) -> np.ndarray:
    """Per-subject yes/no counts from 'how many of 3 annotators chose it'."""
    return np.stack([votes, RATERS - votes], axis=1)


def compute(con) -> dict[str, Any]:
    """The corpus statistics, from a store cursor (``etclib.data.store.connect()``)."""
    one = lambda sql: con.execute(sql).fetchone()[0]  # noqa: E731
    out: dict[str, Any] = {
        "dialogues": one("SELECT count(*) FROM dialogues"),
        "participants": one("SELECT count(DISTINCT participant_id) FROM utterances"),
        "utterances": one("SELECT count(*) FROM utterances"),
    }
    for col in ("utterance_chars", "transcription_chars"):
        row = con.execute(
            f"SELECT avg({col}), avg({col}) FILTER (role = 'speaker'), "
            f"avg({col}) FILTER (role = 'listener') FROM utterances"
        ).fetchone()
        out[col] = {"all": row[0], "speaker": row[1], "listener": row[2]}
    cols = ", ".join(f'"{c}"' for c in CATEGORIES)
    votes = ", ".join(f"votes_{c}" for c in CATEGORIES)
    # column arrays straight from DuckDB (fetchnumpy): no Python tuple per utterance
    got = con.execute(f"SELECT role, {cols}, {votes} FROM utterances").fetchnumpy()
    role = np.asarray(got["role"]).astype(str)
    label = np.column_stack([np.asarray(got[c], dtype=bool) for c in CATEGORIES])
    vote = np.column_stack([np.asarray(got[f"votes_{c}"], dtype=int) for c in CATEGORIES])
    labels = {}
    for j, c in enumerate(CATEGORIES):
        entry = {r: float(label[role == r, j].mean() * 100) for r in ROLES}
        entry["all"] = float(label[:, j].mean() * 100)
        entry["kappa"] = fleiss_kappa(_yes_no(vote[:, j]))
        labels[c] = {k: entry[k] for k in ("speaker", "listener", "all", "kappa")}
    out["labels"] = labels
    out["kappa_overall"] = fleiss_kappa(_yes_no(vote.reshape(-1)))
    neutral = CATEGORIES.index("neutral")
    emotional = ~label[:, neutral]
    out["multi_label_share"] = (
        float((label[emotional].sum(axis=1) >= 2).mean() * 100) if emotional.any() else 0.0
    )
    co = label.T.astype(int) @ label.astype(int)
    out["cooccurrence"] = {
        a: {b: int(co[i, j]) for j, b in enumerate(CATEGORIES)} for i, a in enumerate(CATEGORIES)
    }
    return out


def format_text(s: dict[str, Any]) -> str:
    """A human-readable report of ``compute``'s result."""
    lines = [
        f"dialogues      {s['dialogues']:>8,}",
        f"participants   {s['participants']:>8,}",
        f"utterances     {s['utterances']:>8,}",
        "",
        "mean characters        all  speaker listener",
    ]
    for key in ("utterance_chars", "transcription_chars"):
        v = s[key]
        lines.append(f"{key:<20} {v['all']:6.2f}  {v['speaker']:6.2f}  {v['listener']:6.2f}")
    lines += ["", "aggregated label (% of transcriptions)   speaker listener    all  Fleiss κ"]
    for c, v in s["labels"].items():
        lines.append(
            f"  {c:<38} {v['speaker']:7.2f} {v['listener']:7.2f} {v['all']:6.2f} {v['kappa']:8.3f}"
        )
    lines += [
        f"Fleiss κ over all categories pooled: {s['kappa_overall']:.3f}",
        f"multi-label share of emotional transcriptions: {s['multi_label_share']:.2f}%",
        "",
        "co-occurrence (transcriptions with both categories)",
        "  " + " ".join(f"{c[:8]:>8}" for c in CATEGORIES),
    ]
    for a, row in s["cooccurrence"].items():
        lines.append("  " + " ".join(f"{row[b]:>8}" for b in CATEGORIES) + f"  {a}")
    return "\n".join(lines)
