"""Corpus statistics against values computed here from the raw JSON, independently of etclib."""

import json
from collections import Counter
from itertools import combinations
from pathlib import Path

import pytest

from etclib.data import store
from etclib.metrics import corpus_stats as stats
from tests.conftest import REAL_CORPUS, needs_corpus
from tests.fixtures.corpus import CATS, JA


def kappa_by_hand(subjects):
    """Fleiss (1971) with loops: subjects is a list of per-category count lists."""
    N = len(subjects)
    n = sum(subjects[0])
    k = len(subjects[0])
    p = [sum(s[j] for s in subjects) / (N * n) for j in range(k)]
    P = [(sum(c * c for c in s) - n) / (n * (n - 1)) for s in subjects]
    pbar = sum(P) / N
    pe = sum(x * x for x in p)
    return (pbar - pe) / (1 - pe)


def raw_utterances(root: Path):
    for f in sorted((root / "dialogues").glob("*.json")):
        d = json.loads(f.read_text(encoding="utf-8"))
        for u in d["dialogue"]:
            yield u, d


@needs_corpus
def test_stats_match_independent_computation(tmp_path):
    got = stats.compute(store.connect(tmp_path / "s.duckdb", REAL_CORPUS))
    utts = list(raw_utterances(REAL_CORPUS))
    assert got["dialogues"] == 997 and got["utterances"] == len(utts) == 9970
    assert got["participants"] == len(
        {d["participants"][r] for _, d in utts for r in ("speaker", "listener")}
    )
    for field, key in (
        ("utterance", "utterance_chars"),
        ("emotion_transcription", "transcription_chars"),
    ):
        for role in ("speaker", "listener", None):
            vals = [len(u[field]) for u, _ in utts if role in (None, u["role"])]
            assert got[key]["all" if role is None else role] == pytest.approx(sum(vals) / len(vals))
    assert got["utterance_chars"]["all"] == pytest.approx(42.72, abs=0.005)  # the dataset README

    def agg(u):
        votes = Counter(JA[x] for ann in u["emotions"] for x in set(ann))
        chosen = {c for c in CATS if c != "neutral" and votes[c] >= 2}
        return chosen or {"neutral"}

    labels = [(u["role"], agg(u)) for u, _ in utts]
    for c in CATS:
        for role in ("speaker", "listener"):
            sub = [lab for r, lab in labels if r == role]
            assert got["labels"][c][role] == pytest.approx(
                100 * sum(c in lab for lab in sub) / len(sub)
            )
        assert got["labels"][c]["all"] == pytest.approx(
            100 * sum(c in lab for _, lab in labels) / len(labels)
        )
        subjects = []
        for u, _ in utts:
            yes = sum(c == JA[x] for ann in u["emotions"] for x in ann)
            subjects.append([yes, 3 - yes])
        assert got["labels"][c]["kappa"] == pytest.approx(kappa_by_hand(subjects), abs=1e-9)
    pooled = []
    for u, _ in utts:
        for c in CATS:
            yes = sum(c in {JA[x] for x in ann} for ann in u["emotions"])
            pooled.append([yes, 3 - yes])
    assert got["kappa_overall"] == pytest.approx(kappa_by_hand(pooled), abs=1e-9)
    emotional = [lab for _, lab in labels if lab != {"neutral"}]
    assert got["multi_label_share"] == pytest.approx(
        100 * sum(len(lab) >= 2 for lab in emotional) / len(emotional)
    )
    for a, b in combinations(CATS, 2):
        both = sum(a in lab and b in lab for _, lab in labels)
        assert got["cooccurrence"][a][b] == got["cooccurrence"][b][a] == both
    assert got["cooccurrence"]["joy"]["neutral"] == 0
