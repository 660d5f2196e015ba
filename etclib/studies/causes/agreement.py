"""Agreement on causes: people with each other, and an LLM run and the proxy with people."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from etclib.data.corpus import Corpus
from etclib.metrics.agreement import cohen_kappa, confusion_matrix, fleiss_kappa, krippendorff_alpha
from etclib.studies.causes.human import ANNOTATORS_PER_ITEM, human_answers
from etclib.studies.causes.llm import _utterance, run_causes
from etclib.studies.causes.proxy import partner_reference
from etclib.studies.causes.typology import CAUSE_TYPES, Key, cause_type, position


@dataclass(frozen=True)
class CauseAgreement:
    """People with each other, the LLM and the proxy with people (NaN where undefined).

    ``table`` has one row per decision (``cause utterance``, ``cause type``, ``partner
    involved``); ``annotator_vs_others`` is the yardstick: each answer slot against the other
    two's consensus. Majorities are over items with three answers. In ``pair_f1`` an answer slot
    is one of the three voters of the majority it is scored against, so its figures are an upper
    bound of a person's. Every figure: docs/causes.md.
    """

    n_answers: int
    n_items: int
    n_complete: int
    n_annotators: int
    run_id: str | None
    table: pd.DataFrame
    type_confusion: pd.DataFrame | None
    proxy_confusion: pd.DataFrame | None
    #: :func:`pair_f1` of each rater (``LLM``, ``answer 1`` .. ``answer 3``) against the majority
    pair_f1: pd.DataFrame | None = None

    @property
    def empty(self) -> bool:
        return self.n_answers == 0


#: Columns of :attr:`CauseAgreement.pair_f1`.
PAIR_F1_COLUMNS = ("who", "pairs", "positives", "f1_positive", "f1_negative", "macro_f1")


def pair_f1(gold: Sequence[bool], pred: Sequence[bool]) -> dict[str, float]:
    """RECCON's Causal Emotion Entailment measures (×100) of pair decisions (is the candidate
    a cause?): scikit-learn's ``f1_score`` with ``pos_label=True``, ``pos_label=False`` and
    ``average="macro"`` (0 for a ratio over 0); NaN for no pairs."""
    g = np.asarray(gold, dtype=bool)
    p = np.asarray(pred, dtype=bool)
    if g.shape != p.shape:
        raise ValueError(f"gold and predictions differ in length: {len(g)} and {len(p)}")
    if not len(g):
        return {"f1_positive": math.nan, "f1_negative": math.nan, "macro_f1": math.nan}

    def f1(tp: int, fp: int, fn: int) -> float:
        return 2 * tp / (2 * tp + fp + fn) if tp + fp + fn else 0.0

    pos = f1(int((g & p).sum()), int((~g & p).sum()), int((g & ~p).sum()))
    neg = f1(int((~g & ~p).sum()), int((g & ~p).sum()), int((~g & p).sum()))
    return {"f1_positive": 100 * pos, "f1_negative": 100 * neg, "macro_f1": 100 * (pos + neg) / 2}


def _kappa(a: Sequence[Any], b: Sequence[Any], labels: Sequence[Any]) -> float:
    return cohen_kappa(list(a), list(b), list(labels)) if len(a) else math.nan


def _mean(xs: Iterable[float]) -> float:
    xs = [x for x in xs if not math.isnan(x)]
    return float(np.mean(xs)) if xs else math.nan


#: Columns of :attr:`CauseAgreement.table`.
TABLE_COLUMNS = (
    "decision",
    "units",
    "humans",
    "annotator_vs_others",
    "llm_vs_majority",
    "llm_vs_others",
    "proxy_vs_majority",
)
_SLOTS = range(ANNOTATORS_PER_ITEM)
#: For each answer slot, the two other slots.
_OTHERS = [[j for j in _SLOTS if j != i] for i in _SLOTS]


def cause_agreement(
    corpus: Corpus | None = None, run_id: str | None = None, *, db: str | Path | None = None
) -> CauseAgreement:
    """Agreement of the human cause labels, and of LLM run ``run_id`` and (with a ``corpus``)
    the proxy with them."""
    answers = human_answers(db=db)
    cols = list(TABLE_COLUMNS)
    if answers.empty:
        return CauseAgreement(0, 0, 0, 0, run_id, pd.DataFrame(columns=cols), None, None)
    llm_sets = run_causes(run_id, db=db) if run_id else {}
    by_item = {
        (int(k[0]), int(k[1]), str(k[2])): g
        for k, g in answers.groupby(["dialogue_id", "turn", "role"], sort=True)
    }
    annotators = sorted(answers["annotator_id"].unique())
    complete = {k: g.iloc[:ANNOTATORS_PER_ITEM] for k, g in by_item.items()}
    complete = {k: g for k, g in complete.items() if len(g) == ANNOTATORS_PER_ITEM}
    pair_row, pair_scores = _pair_decisions(complete, llm_sets, run_id)
    pair_row |= _pair_alpha(by_item, annotators)
    type_row, partner_row, type_confusion, proxy_confusion = _type_decisions(
        complete, llm_sets, run_id, corpus
    )
    table = pd.DataFrame([pair_row, type_row, partner_row]).reindex(columns=cols)
    return CauseAgreement(
        n_answers=len(answers),
        n_items=len(by_item),
        n_complete=len(complete),
        n_annotators=len(annotators),
        run_id=run_id,
        table=table,
        type_confusion=type_confusion,
        proxy_confusion=proxy_confusion,
        pair_f1=pair_scores,
    )


def _pair_alpha(by_item: dict[Key, pd.DataFrame], annotators: list[str]) -> dict[str, Any]:
    """Krippendorff's alpha over (item, candidate) pairs, every answer."""
    units: list[tuple[Key, int]] = []
    for key in by_item:
        units += [(key, p) for p in range(1, position(key[1], key[2]) + 1)]
    given = {
        (a, key): set(c)
        for key, g in by_item.items()
        for a, c in zip(g["annotator_id"], g["causes"], strict=True)
    }
    matrix = [
        [None if (a, k) not in given else int(p in given[(a, k)]) for k, p in units]
        for a in annotators
    ]
    return {"units": len(units), "humans": krippendorff_alpha(matrix) if units else math.nan}


def _pair_decisions(
    complete: dict[Key, pd.DataFrame], llm_sets: dict[Key, tuple[int, ...]], run_id: str | None
) -> tuple[dict[str, Any], pd.DataFrame]:
    """The ``cause utterance`` row (less the alpha) and the pair F1 table, on complete items."""
    pair_votes, pair_llm = [], []
    for key, g in complete.items():
        sets = [set(c) for c in g["causes"]]
        for p in range(1, position(key[1], key[2]) + 1):
            pair_votes.append([p in s for s in sets])
            pair_llm.append(p in llm_sets[key] if key in llm_sets else None)
    pv = np.array(pair_votes, dtype=bool).reshape(-1, ANNOTATORS_PER_ITEM)
    pair_major = pv.sum(axis=1) * 2 > ANNOTATORS_PER_ITEM
    pair_row: dict[str, Any] = {
        "decision": "cause utterance",
        "annotator_vs_others": _mean(
            _kappa(pv[:, i], pv[:, a] & pv[:, b], [False, True])
            for i, (a, b) in zip(_SLOTS, _OTHERS, strict=True)
        ),
    }
    has_llm = np.array([x is not None for x in pair_llm], dtype=bool)
    llm_pairs = np.array([bool(x) for x in pair_llm], dtype=bool)
    f1_rows = []
    if run_id and has_llm.any():
        pair_row["llm_vs_majority"] = _kappa(llm_pairs[has_llm], pair_major[has_llm], [False, True])
        pair_row["llm_vs_others"] = _mean(
            _kappa(llm_pairs[has_llm], (pv[:, a] & pv[:, b])[has_llm], [False, True])
            for a, b in _OTHERS
        )
        f1_rows.append(_f1_row("LLM", pair_major[has_llm], llm_pairs[has_llm]))
    if len(pv):
        f1_rows += [_f1_row(f"answer {i + 1}", pair_major, pv[:, i]) for i in _SLOTS]
    return pair_row, pd.DataFrame(f1_rows, columns=list(PAIR_F1_COLUMNS))


def _f1_row(who: str, gold: np.ndarray, pred: np.ndarray) -> dict[str, Any]:
    return {"who": who, "pairs": len(gold), "positives": int(gold.sum()), **pair_f1(gold, pred)}


def _partner(cause_type_name: str) -> bool:
    return cause_type_name in ("inter-personal", "hybrid")


def _type_decisions(
    complete: dict[Key, pd.DataFrame],
    llm_sets: dict[Key, tuple[int, ...]],
    run_id: str | None,
    corpus: Corpus | None,
) -> tuple[dict[str, Any], dict[str, Any], pd.DataFrame | None, pd.DataFrame | None]:
    """The ``cause type`` and ``partner involved`` rows and their confusions, on complete
    items: people, then the LLM run and the proxy against them."""
    keys = list(complete)
    tv = [list(complete[k]["cause_type"]) for k in keys]
    type_row: dict[str, Any] = {"decision": "cause type", "units": len(keys)}
    partner_row: dict[str, Any] = {"decision": "partner involved", "units": len(keys)}
    if not keys:
        return type_row, partner_row, None, None
    pc = np.array([[_partner(t) for t in row] for row in tv], dtype=bool)
    type_row["humans"] = fleiss_kappa([[row.count(t) for t in CAUSE_TYPES] for row in tv])
    partner_row["humans"] = fleiss_kappa(
        np.column_stack([pc.sum(axis=1), ANNOTATORS_PER_ITEM - pc.sum(axis=1)])
    )
    type_row["annotator_vs_others"] = _mean(
        _kappa(
            [tv[i][s] for i in range(len(keys)) if tv[i][a] == tv[i][b]],
            [tv[i][a] for i in range(len(keys)) if tv[i][a] == tv[i][b]],
            CAUSE_TYPES,
        )
        for s, (a, b) in zip(_SLOTS, _OTHERS, strict=True)
    )
    partner_row["annotator_vs_others"] = _mean(
        _kappa(pc[:, s], pc[:, a] & pc[:, b], [False, True])
        for s, (a, b) in zip(_SLOTS, _OTHERS, strict=True)
    )
    major_type = {}
    for k, row in zip(keys, tv, strict=True):
        top, n = Counter(row).most_common(1)[0]
        if n * 2 > ANNOTATORS_PER_ITEM:
            major_type[k] = top
    major_partner = pc.sum(axis=1) * 2 > ANNOTATORS_PER_ITEM
    type_confusion = proxy_confusion = None
    if run_id:
        type_confusion = _llm_types(
            keys, tv, pc, major_type, major_partner, llm_sets, type_row, partner_row
        )
    if corpus is not None:
        proxy = [partner_reference(_utterance(corpus, k).transcription, k[2]) for k in keys]
        partner_row["proxy_vs_majority"] = _kappa(proxy, major_partner, [False, True])
        proxy_confusion = confusion_matrix(
            ["yes" if x else "no" for x in major_partner],
            ["yes" if x else "no" for x in proxy],
            ["yes", "no"],
            rows="human majority: partner involved",
            columns="proxy: refers to the partner",
        )
    return type_row, partner_row, type_confusion, proxy_confusion


def _llm_types(
    keys: list[Key],
    tv: list[list[str]],
    pc: np.ndarray,
    major_type: dict[Key, str],
    major_partner: np.ndarray,
    llm_sets: dict[Key, tuple[int, ...]],
    type_row: dict[str, Any],
    partner_row: dict[str, Any],
) -> pd.DataFrame | None:
    """Fill the LLM columns of the type and partner rows; the LLM's type confusion."""
    with_llm = [i for i, k in enumerate(keys) if k in llm_sets]
    llm_type = {k: cause_type(k, llm_sets[k]) for k in keys if k in llm_sets}
    shared = [k for k in keys if k in llm_type and k in major_type]
    type_row["llm_vs_majority"] = _kappa(
        [llm_type[k] for k in shared], [major_type[k] for k in shared], CAUSE_TYPES
    )
    type_row["llm_vs_others"] = _mean(
        _kappa(
            [llm_type[keys[i]] for i in with_llm if tv[i][a] == tv[i][b]],
            [tv[i][a] for i in with_llm if tv[i][a] == tv[i][b]],
            CAUSE_TYPES,
        )
        for a, b in _OTHERS
    )
    lp = np.array([_partner(llm_type[keys[i]]) for i in with_llm])
    if with_llm:
        partner_row["llm_vs_majority"] = _kappa(lp, major_partner[with_llm], [False, True])
        partner_row["llm_vs_others"] = _mean(
            _kappa(lp, (pc[:, a] & pc[:, b])[with_llm], [False, True]) for a, b in _OTHERS
        )
    if not shared:
        return None
    return confusion_matrix(
        [major_type[k] for k in shared],
        [llm_type[k] for k in shared],
        CAUSE_TYPES,
        rows="human majority",
        columns="LLM",
    )
