"""The published figures ship inside etclib, with their provenance (no ../shared needed)."""

from __future__ import annotations

import json

from etclib.data import reference

METRICS = "bleu1 bleu2 bleu3 bleu4 rouge1 rouge2 rougeL bertscore precision recall f1".split()


def test_paper_baselines_are_shipped_with_provenance(monkeypatch):
    monkeypatch.delenv("ETC_REFERENCE_DIR", raising=False)
    assert reference.reference_dir() == reference.PACKAGED
    data = json.loads(reference.path(reference.PAPER_BASELINES).read_text("utf-8"))
    prov = data["provenance"]
    assert "LREC 2026" in prov["paper"] and len(prov["tables"]) == 2
    assert "five dialogues" in prov["corpus_version"] and "tokenisation" in data["provenance"]
    assert len(data["rows"]) == 5
    for row in data["rows"]:
        for key in METRICS:
            assert 0 <= row[key] <= 100, (row["model"], key)
            assert data["units"][key] == "x100"
    assert {r["setting"] for r in data["rows"]} >= {"zero-shot", "4-shot"}


def test_reference_dir_override(tmp_path, monkeypatch):
    monkeypatch.setenv("ETC_REFERENCE_DIR", str(tmp_path))
    assert reference.path(reference.EMPLIFAI) == tmp_path / reference.EMPLIFAI
