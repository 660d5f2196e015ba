"""The causes page's helpers: the dialogue shown to an annotator, and the agreement table."""

from __future__ import annotations

import pandas as pd

from etclib.data.corpus import Dialogue
from etclib.studies.causes import CAUSE_TYPES, RECCON_SHARES

from . import judge_vs_human
from .judge_vs_human import number

#: The page's tabs (only the open one runs).
TABS = ("Annotate", "Agreement and shares")

AGREEMENT_COLUMNS = {
    "decision": "decision",
    "units": "decisions compared",
    "humans": "people with each other (Krippendorff's α or Fleiss' κ)",
    "annotator_vs_others": "each answer vs the other two's consensus, κ (yardstick)",
    "llm_vs_majority": "LLM vs people's majority, κ",
    "llm_vs_others": "LLM vs each pair's consensus, κ",
    "proxy_vs_majority": "lexical proxy vs people's majority, κ",
}


def candidates(dialogue: Dialogue, turn: int, role: str) -> list[dict]:
    """The utterances up to and including the target: position, letter, text, is target."""
    target = next(u for u in dialogue.utterances if (u.turn, u.role) == (turn, role))
    return [
        {
            "position": u.position,
            "letter": u.letter,
            "text": u.text,
            "target": u.position == target.position,
        }
        for u in dialogue.utterances
        if u.position <= target.position
    ]


def candidate_label(c: dict) -> str:
    """``[3] A: text`` (the target marked)."""
    mark = " ← target" if c["target"] else ""
    return f"[{c['position']}] {c['letter']}: {c['text']}{mark}"


def agreement_table(table: pd.DataFrame, with_llm: bool, with_proxy: bool) -> pd.DataFrame:
    """The agreement table with two-decimal figures and the page's column names."""
    shown = table.copy()
    for col in (
        "humans",
        "annotator_vs_others",
        "llm_vs_majority",
        "llm_vs_others",
        "proxy_vs_majority",
    ):
        shown[col] = shown[col].map(number)
    keep = ["decision", "units", "humans", "annotator_vs_others"]
    if with_llm:
        keep += ["llm_vs_majority", "llm_vs_others"]
    if with_proxy:
        keep += ["proxy_vs_majority"]
    return shown[keep].rename(columns=AGREEMENT_COLUMNS)


PAIR_F1_LABELS = {
    "who": "rater",
    "pairs": "pairs",
    "positives": "causes (people's majority)",
    "f1_positive": "F1, cause",
    "f1_negative": "F1, not a cause",
    "macro_f1": "macro-F1 (mean of the two)",
}
PAIR_F1_NOTE = (
    "Cause utterance decisions scored as RECCON scores Causal Emotion Entailment: each "
    '(target, candidate) pair is a yes/no decision; F1 of the class "cause", of the class '
    '"not a cause" and their mean (macro-F1), ×100, against the human majority (2 '
    "of 3) on items with three answers. An answer slot is one of the three voters of that "
    "majority, so its figures are optimistic; the κ columns above set it against the other two."
)


def pair_f1_table(frame: pd.DataFrame | None) -> pd.DataFrame:
    """``CauseAgreement.pair_f1`` with two-decimal figures and the page's column names."""
    if frame is None or frame.empty:
        return pd.DataFrame(columns=list(PAIR_F1_LABELS.values()))
    shown = frame.copy()
    for col in ("f1_positive", "f1_negative", "macro_f1"):
        shown[col] = shown[col].map(number)
    return shown[list(PAIR_F1_LABELS)].rename(columns=PAIR_F1_LABELS)


#: The shares table's ETC columns (beside RECCON's datasets).
ETC_LLM, ETC_PEOPLE = "ETC, LLM run", "ETC, people's majority"
#: What the shares say before ETC has any (the caption under them).
SHARES_PENDING = (
    "ETC's own shares join RECCON's here once annotators have labelled items (people's "
    "majority) or an LLM run is chosen above."
)


def shares_table(llm: dict | None, human: dict | None) -> pd.DataFrame:
    """Type-label shares (%) of the stored LLM run and human majority beside RECCON's."""
    rows = []
    for t in CAUSE_TYPES:
        row = {"cause type": t}
        if llm:
            row[ETC_LLM] = round(llm["reccon"][t], 1)
        if human:
            row[ETC_PEOPLE] = round(human["reccon"][t], 1)
        for name, shares in RECCON_SHARES.items():
            row[name] = shares[t]
        rows.append(row)
    return pd.DataFrame(rows)


def run_names(runs: pd.DataFrame) -> dict[str, str]:
    """The run picker's labels: model, provider, split and size of each stored cause run."""
    return judge_vs_human.run_names(runs, "no LLM run")
