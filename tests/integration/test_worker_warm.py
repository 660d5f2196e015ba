"""A scoring worker warms every stage it will run before its first claim.

The first lexical job of a fresh ``python -m leaderboard worker`` used to pay MeCab, sacrebleu,
rouge-score with nltk, the corpus and the category classifier (5-14 s under load); the warm-up
now loads them through each metric's own ``warm`` (etclib's registry). Checked in a fresh
interpreter: what the warm-up imported and loaded, not how long it took (benchmarks/results.md
has the times).
"""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
from pathlib import Path

import pytest

import leaderboard as lb
from leaderboard import worker
from tests.fixtures.board import META, jsonl, tiny_fixture  # noqa: F401 - the fixture "tiny"

ROOT = Path(__file__).resolve().parents[2]

PROBE = """
import json, logging, sys
logging.basicConfig(level=logging.INFO, stream=sys.stderr)
from leaderboard import stages
from etclib.data import tokenize
from etclib.tracks.categories import classifier
from etclib.metrics import rouge
before = sorted(m for m in ("MeCab", "ipadic", "sacrebleu", "rouge_score.rouge_scorer", "nltk",
                            "sklearn.linear_model") if m in sys.modules)
warmed = stages.warm()
print(json.dumps({
    "before": before,
    "warmed": warmed,
    "modules": sorted(sys.modules),
    "tokenizer_loaded": tokenize._tokenizer.cache_info().currsize,
    "rouge_scorer_built": rouge._scorer.cache_info().currsize,
    "classifiers_in_memory": [k.rsplit("/", 1)[-1] for k in classifier._MEMORY],
}))
"""


@pytest.fixture
def probe(tiny_corpus, monkeypatch):
    monkeypatch.setenv("ETC_DATA_DIR", str(tiny_corpus))

    def run(**env: str) -> tuple[dict, str]:
        out = subprocess.run(
            [sys.executable, "-c", PROBE],
            capture_output=True,
            text=True,
            cwd=ROOT,
            env={**os.environ, "PYTHONPATH": str(ROOT), **env},
            check=True,
        )
        return json.loads(out.stdout.strip().splitlines()[-1]), out.stderr

    return run


def test_a_lexical_worker_warm_up_loads_what_its_first_job_needs(probe):
    got, log = probe(ETC_JUDGE_PROVIDER="")
    assert got["before"] == []  # importing the leaderboard loads none of them
    assert got["warmed"] == ["lexical"]
    needed = (
        "MeCab",
        "ipadic",
        "sacrebleu.tokenizers.tokenizer_ja_mecab",
        "sacrebleu.metrics.bleu",
    )
    needed += ("rouge_score.rouge_scorer", "nltk", "sklearn.linear_model", "scipy.sparse")
    assert [m for m in needed if m not in got["modules"]] == []
    assert got["tokenizer_loaded"] == 1 and got["rouge_scorer_built"] == 1
    # the transcription track's category classifier, trained (a fresh cache) and kept in memory
    assert [k.split("-")[0] for k in got["classifiers_in_memory"]] == ["transcription"]
    # the log names the stage and each metric group warmed
    assert "warmed the lexical stage (bleu, rouge, category)" in log


def test_a_failed_lexical_warm_up_is_logged_and_warms_nothing(probe, tmp_path):
    got, log = probe(ETC_JUDGE_PROVIDER="", ETC_DATA_DIR=str(tmp_path / "no-corpus"))
    assert got["warmed"] == []
    assert "warming the lexical stage failed: No ETC corpus at" in log


BERT_PROBE = """
import json, sys
from leaderboard import stages
from etclib.metrics import bertscore
warmed = stages.warm()
print(json.dumps({"warmed": warmed, "models_loaded": bertscore._scorer.cache_info().currsize,
                  "torch": "torch" in sys.modules}))
"""


def test_a_bertscore_worker_warm_up_loads_its_model(tiny_corpus, tiny_bert):
    env = {
        **os.environ,
        "PYTHONPATH": str(ROOT),
        "ETC_DATA_DIR": str(tiny_corpus),
        "ETC_JUDGE_PROVIDER": "",
        "ETC_BERTSCORE_MODEL": str(tiny_bert),
        "ETC_BERTSCORE_LAYER": "2",
    }
    out = subprocess.run(
        [sys.executable, "-c", BERT_PROBE], capture_output=True, text=True, cwd=ROOT, env=env
    )
    assert out.returncode == 0, out.stderr
    got = json.loads(out.stdout.strip().splitlines()[-1])
    assert got["warmed"] == ["lexical", "bertscore"]
    assert got["models_loaded"] == 1 and got["torch"]


def test_the_worker_warms_its_stages_before_it_claims_and_survives_a_failed_warm_up(
    tiny, monkeypatch, capsys, caplog
):
    """``python -m leaderboard worker`` pays each stage's one-time costs before its first claim;
    a warm-up that fails is logged (redacted) and the worker scores all the same."""
    import dataclasses

    from leaderboard import stages
    from leaderboard.__main__ import main

    order = []

    def broken() -> None:
        order.append("warm")
        raise RuntimeError("cannot load the tagger (key sk-abcdefghijklmnopqrstuvwxyz012345)")

    claim = worker.claim

    def counted(db, name):
        order.append("claim")
        return claim(db, name)

    monkeypatch.setitem(stages.RULES, "lexical", dataclasses.replace(stages.RULES["lexical"],
                                                                     warm=broken))  # fmt: skip
    monkeypatch.setattr(worker, "claim", counted)
    sid = lb.submit(jsonl(tiny), META).id
    with caplog.at_level(logging.WARNING, logger="leaderboard.worker"):
        assert main(["worker", "--once", "--threads", "1"]) == 0
    assert order[0] == "warm" and "claim" in order
    warned = [
        r.getMessage() for r in caplog.records if "warming the lexical stage" in r.getMessage()
    ]
    assert warned and "cannot load the tagger" in warned[0] and "sk-abcdef" not in warned[0]
    assert "warmed:" not in capsys.readouterr().out  # nothing was warmed
    assert lb.status(sid)["status"] == "scored"
