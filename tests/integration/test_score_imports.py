"""What `etclib score --metrics bleu,rouge` and the corpus statistics leave unimported: the LLM
stack, the metrics it does not run, the studies. Counts of modules in a fresh interpreter, never
timings; and the provider options still shown and checked as before."""

from __future__ import annotations

import json
import subprocess
import sys

from etclib.data.task import items
from etclib.tracks.predictions import dumps_jsonl
from tests.data.make_tiny_corpus import write_tiny_corpus

SCORE = """
import json, sys
from etclib.cli import main
code = main(sys.argv[1:])
print(json.dumps({"code": code, "modules": sorted(sys.modules)}), file=sys.stderr)
"""


def fresh_modules(code: str, *args: str) -> tuple[set[str], str]:
    proc = subprocess.run(
        [sys.executable, "-c", code, *args], capture_output=True, text=True, check=True
    )
    last = json.loads(proc.stderr.strip().splitlines()[-1])
    assert last.get("code", 0) == 0, proc.stderr
    return set(last["modules"]), proc.stdout


def test_scoring_bleu_rouge_imports_no_llm_stack_and_no_other_metric(tmp_path):
    from etclib.data.corpus import load_corpus

    corpus_dir = write_tiny_corpus(tmp_path / "tiny")
    its = items(load_corpus(corpus_dir), "test")
    preds = tmp_path / "preds.jsonl"
    preds.write_text(dumps_jsonl((it.key, it.reference) for it in its), encoding="utf-8")
    argv = ["score", str(preds), "--metrics", "bleu,rouge", "--json", "--data", str(corpus_dir)]
    modules, out = fresh_modules(SCORE, *argv)
    assert json.loads(out)["n_items"] == len(its)  # it did score
    assert {"etclib.metrics.bleu", "etclib.metrics.rouge"} <= modules
    unwanted = {
        "etclib.llm",
        "etclib.llm.providers",
        "etclib.judge",
        "etclib.studies",
        "etclib.metrics.judge",
        "etclib.metrics.bertscore",
        "etclib.tracks.transcription.category",
        "etclib.tracks.categories.metric",
    }
    assert modules & unwanted == set()


def test_corpus_statistics_import_no_study():
    modules, _ = fresh_modules(
        'import json, sys, etclib.metrics.corpus_stats; print(json.dumps({"modules": sorted(sys.modules)}),'
        " file=sys.stderr)"
    )
    assert "etclib.metrics.agreement" in modules
    assert not any(m == "etclib.studies" or m.startswith("etclib.studies.") for m in modules)
    assert "etclib.llm" not in modules
