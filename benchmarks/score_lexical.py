"""Wall time of `bleu,rouge` on the 1,010 test items, after imports (target: under 2 s on 2 cores),
and whole processes: `etclib score` against a hand-written sacrebleu + rouge-score script
(target: within 1.05x).

In-process (default): ``etclib.tracks.scoring.score`` with breakdowns, imports and MeCab loaded first.

``--processes N``: N rounds, each running, one after the other, ``python -m etclib score FILE
--metrics bleu,rouge --json`` and :data:`HAND` (reads split.json and the test split's dialogue
files, tokenises once with sacrebleu's MeCab tokenizer, sacrebleu corpus BLEU-4 and rouge-score
ROUGE-1/2/L means: what a user would write by hand), on the same predictions file; medians of
whole-process wall and CPU times (imports included; on a loaded machine CPU time is the steadier
comparison), the ratios, and the load average. Both must give the
same BLEU-4 and ROUGE numbers (checked). ``--baseline-src DIR`` adds, in the same rounds, the
`etclib score` of another checkout (e.g. ``git archive`` of an older commit): old against new on
the same load. The corpus caches live in a throw-away ``ETC_CACHE_DIR``, filled by one untimed
run of each checkout first, which also leaves Python's bytecode of etclib's modules, as any
user's second run finds it (``PYTHONDONTWRITEBYTECODE`` is dropped from the processes' settings).

Run: ETC_DATA_DIR=../shared/ETCDataset/etc .venv/bin/python benchmarks/score_lexical.py
     [--processes 7 [--baseline-src /tmp/old]]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from etclib.data.corpus import load_corpus
from etclib.data.task import items
from etclib.data.tokenize import tokenize
from etclib.tracks.scoring import score

REPO = Path(__file__).resolve().parents[1]

#: The hand-written script: argv[1] the corpus folder, argv[2] the predictions (JSONL).
HAND = r"""
import json, sys
from pathlib import Path
from rouge_score import rouge_scorer
from sacrebleu.metrics import BLEU
from sacrebleu.tokenizers.tokenizer_ja_mecab import TokenizerJaMecab

root, preds_file = Path(sys.argv[1]), sys.argv[2]
preds = {}
for line in open(preds_file, encoding="utf-8"):
    r = json.loads(line)
    preds[(r["dialogue_id"], r["turn"], r["role"])] = r["prediction"]
hyps, refs = [], []
for name in json.loads((root / "split.json").read_text(encoding="utf-8"))["test"]:
    d = json.loads((root / "dialogues" / name).read_text(encoding="utf-8"))
    for u in d["dialogue"]:
        hyps.append(preds[(d["dialogue_id"], u["turn"], u["role"])])
        refs.append(u["emotion_transcription"])
tok = TokenizerJaMecab()
hyps, refs = [tok(h) for h in hyps], [tok(r) for r in refs]
bleu = BLEU(tokenize="none").corpus_score(hyps, [refs]).score

class Split:
    def tokenize(self, text):
        return text.split()

scorer = rouge_scorer.RougeScorer(["rouge1", "rouge2", "rougeL"], tokenizer=Split())
sums = {"rouge1": 0.0, "rouge2": 0.0, "rougeL": 0.0}
for h, r in zip(hyps, refs):
    for k, v in scorer.score(r, h).items():
        sums[k] += v.fmeasure
print(json.dumps({"bleu4": bleu, **{k: 100 * v / len(hyps) for k, v in sums.items()}}))
"""


KEYS = ("bleu4", "rouge1", "rouge2", "rougeL")


def predictions_file(folder: Path) -> Path:
    from etclib.tracks.predictions import dumps_jsonl

    corpus = load_corpus()
    its = items(corpus, "test")
    train = [it.reference for it in items(corpus, "train")]
    path = folder / "preds.jsonl"
    rows = ((it.key, train[(i * 7919) % len(train)]) for i, it in enumerate(its))
    path.write_text(dumps_jsonl(rows), encoding="utf-8")
    return path


def processes(rounds: int, baseline: Path | None) -> None:
    data = str(Path(os.environ["ETC_DATA_DIR"]).resolve())
    with tempfile.TemporaryDirectory() as tmp:
        preds = predictions_file(Path(tmp))
        env = {**os.environ, "ETC_CACHE_DIR": f"{tmp}/cache", "ETC_PROGRESS": "0"}
        # As a user's Python does: bytecode kept after the first (untimed) run. A shell that sets
        # PYTHONDONTWRITEBYTECODE (this project's machines do) would make every `etclib score`
        # compile etclib's modules again (about 0.1 s of CPU), which the one-file script never pays.
        env.pop("PYTHONDONTWRITEBYTECODE", None)

        score = [sys.executable, "-m", "etclib", "score", str(preds), "--metrics", "bleu,rouge"]
        commands = {"hand-written": [sys.executable, "-c", HAND, data, str(preds)]}
        commands["etclib score"] = [*score, "--json"]
        if baseline is not None:
            commands["etclib score (baseline)"] = [*score, "--json"]
        roots = {"hand-written": REPO, "etclib score": REPO, "etclib score (baseline)": baseline}

        def run(name: str) -> tuple[float, float, dict]:
            c0 = resource.getrusage(resource.RUSAGE_CHILDREN)
            t0 = time.perf_counter()
            out = subprocess.run(
                commands[name],
                env={**env, "PYTHONPATH": str(roots[name])},
                cwd=roots[name],
                capture_output=True,
                text=True,
            )
            wall = time.perf_counter() - t0
            c1 = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpu = c1.ru_utime - c0.ru_utime + c1.ru_stime - c0.ru_stime
            if out.returncode:
                sys.exit(f"{name} failed:\n{out.stderr}")
            got = json.loads(out.stdout)
            return wall, cpu, got.get("scores", got)

        first = {}
        for name in commands:  # untimed: fills the caches (corpus, classifier) and the OS's
            first[name] = run(name)[2]
            print(f"{name}: " + ", ".join(f"{k} {first[name][k]:.4f}" for k in KEYS))
        for name, scores in first.items():
            if any(abs(scores[k] - first["hand-written"][k]) > 1e-9 for k in KEYS):
                sys.exit(f"{name} and the hand-written script disagree")
        walls: dict[str, list[float]] = {name: [] for name in commands}
        cpus: dict[str, list[float]] = {name: [] for name in commands}
        loads = []
        for _ in range(rounds):
            for name in commands:
                wall, cpu, _ = run(name)
                walls[name].append(wall)
                cpus[name].append(cpu)
            loads.append(Path("/proc/loadavg").read_text().split()[0])
        hand = statistics.median(walls["hand-written"])
        hand_cpu = statistics.median(cpus["hand-written"])
        for name, w in walls.items():
            med, cpu = statistics.median(w), statistics.median(cpus[name])
            print(
                f"{name}: wall median {med:.3f} s (min {min(w):.3f}, max {max(w):.3f}) = "
                f"{med / hand:.2f}x; CPU (user+sys) median {cpu:.3f} s = {cpu / hand_cpu:.2f}x "
                f"the hand-written script ({rounds} runs)"
            )
        print(f"load average (1 min) after each round: {', '.join(loads)}")


def main(repeats: int = 5) -> None:
    corpus = load_corpus()
    its = items(corpus, "test")
    # A realistic system output: a different train transcription for each item.
    train = [it.reference for it in items(corpus, "train")]
    preds = {it.key: train[(i * 7919) % len(train)] for i, it in enumerate(its)}
    tokenize("準備")  # load MeCab and the dictionary: part of imports, not of the timing
    import rouge_score.rouge_scorer  # noqa: F401
    import sacrebleu  # noqa: F401

    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        result = score(preds, corpus=corpus, metrics="bleu,rouge")
        result.to_json()  # includes the breakdowns
        times.append(time.perf_counter() - t0)
    print(f"items: {len(its)}")
    print(
        f"bleu,rouge with breakdowns, fresh tokenisation each run: median {statistics.median(times):.3f} s, "
        f"min {min(times):.3f} s, max {max(times):.3f} s over {repeats} runs (target < 2 s)"
    )
    print("scores: " + ", ".join(f"{k} {v:.2f}" for k, v in result.scores.items()))


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--processes", type=int, metavar="N", help="whole processes, N rounds")
    ap.add_argument("--baseline-src", type=Path, help="another checkout's etclib, same rounds")
    args = ap.parse_args()
    if args.processes:
        processes(args.processes, args.baseline_src)
    else:
        main()
