"""Write a predictions file for a split with a model backend; resumes an interrupted run.

Predictions are written batch by batch: after a crash or Ctrl-C, the same command skips the
items already in the file (other settings are refused unless --overwrite). Backends: retrieval
(default), constant, copy, hf, openai, gemini; with --track erc: tfidf (default), majority,
prior, retrieval-labels, llm. --check answers 3 items for real, writes nothing, prints latency,
tokens and a cost estimate for the split, and exits 1 when something is wrong (docs/models.md).

Examples:
  etclib predict --backend openai --model gpt-5-mini --check
  etclib predict --backend retrieval --split test --out runs/retrieval.jsonl
  etclib predict --track erc --backend llm --provider gemini --shots 4 --out runs/erc-llm.jsonl
  etclib predict --backend hf --model tokyotech-llm/Llama-3.1-Swallow-8B-Instruct-v0.3 \\
      --adapter runs/qlora --4bit --batch-size 16 --out runs/swallow-qlora.jsonl
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

from etclib import __version__, tracks
from etclib.cli import (
    add_data_argument,
    add_json_argument,
    add_provider_argument,
    add_track_argument,
)
from etclib.core import progress
from etclib.core.errors import ConfigError, PredictionsError, Problem
from etclib.data.corpus import SPLITS, Corpus, load_corpus
from etclib.data.task import Item, Key, choose_shots
from etclib.data.task import items as split_items
from etclib.llm.models import OPENAI_DEFAULT_MODEL
from etclib.models import Backend, options_of
from etclib.tracks.predictions import MAX_PREDICTION_CHARS, dumps_jsonl, read_predictions


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--backend",
        default=None,
        metavar="NAME",
        help="model backend; "
        + "; ".join(
            f"--track {t.name}: {', '.join(t.backends)} (default: {t.default_backend})"
            for t in tracks.TRACKS.values()
        ),
    )
    add_track_argument(parser)
    add_provider_argument(parser, "--provider", help="the erc llm backend's API")
    parser.add_argument(
        "--out", metavar="FILE", help="predictions file (.jsonl); required unless --check"
    )
    parser.add_argument(
        "--check",
        action="store_true",
        help="pre-flight: answer 3 items for real, print latency, tokens and an estimate",
    )
    parser.add_argument(
        "--split", default="test", choices=SPLITS, help="split to predict (default: test)"
    )
    parser.add_argument(
        "--model",
        metavar="M",
        help="model name, hub id or folder (hf, openai, gemini; openai's default: "
        f"{OPENAI_DEFAULT_MODEL})",
    )
    parser.add_argument("--adapter", metavar="A", help="LoRA adapter folder or hub id (hf)")
    parser.add_argument(
        "--4bit",
        dest="load_in_4bit",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="load the hf model in 4-bit NF4 (needs CUDA and bitsandbytes)",
    )
    parser.add_argument(
        "--max-new-tokens", type=int, metavar="N", help="answer length limit in tokens"
    )
    parser.add_argument(
        "--shots",
        type=int,
        default=0,
        metavar="K",
        help="solved train examples per prompt (default: 0)",
    )
    parser.add_argument(
        "--seed", type=int, default=0, metavar="S", help="seed for choosing shots (default: 0)"
    )
    parser.add_argument(
        "--batch-size",
        type=int,
        metavar="N",
        help="items per batch: generated together (hf), requests in flight (openai, gemini), "
        "and written to disk together (default: the backend's, else 8)",
    )
    parser.add_argument(
        "--limit",
        type=int,
        metavar="N",
        help="only the first N items (smoke runs; the file is then partial)",
    )
    parser.add_argument("--overwrite", action="store_true", help="start again even if OUT exists")
    add_data_argument(parser)
    add_json_argument(parser)


# --- resuming ----------------------------------------------------------------------------------


def read_partial(
    path: Path, expected: set[Key], track: str | None = None
) -> tuple[dict[Key, Any], int, str | None]:
    """Predictions already in ``path``: ``(by_key, good_bytes, note)``. A truncated or unreadable
    last line is what a crash leaves and is dropped (``note`` says so); anything else wrong is
    refused."""
    t = tracks.get(track)

    def refuse(n: int, message: str) -> PredictionsError:
        return PredictionsError(str(path), [Problem(n, f"cannot resume: {message}")])

    data = path.read_bytes()
    done: dict[Key, Any] = {}
    lines = data.split(b"\n")
    tail = lines.pop()  # b"" when the file ends with a newline
    note = f"dropped a truncated last line ({len(tail)} bytes)" if tail.strip() else None
    good = len(data) - len(tail)
    for n, raw in enumerate(lines, start=1):
        if not raw.strip():
            continue
        try:
            obj = json.loads(raw.decode("utf-8"))
            key = (obj["dialogue_id"], obj["turn"], obj["role"])
            pred = t.parse(obj[t.field])
        except (UnicodeDecodeError, KeyError, TypeError, ValueError) as exc:
            if n == len(lines) and not tail.strip():
                good -= len(raw) + 1
                note = f"dropped an unreadable last line {n} ({exc.__class__.__name__})"
                break
            raise refuse(n, f"unreadable line ({exc}); fix it or pass --overwrite.") from None
        if key not in expected:
            raise refuse(
                n,
                f"item {key} is not in this split; was the file made for another --split? Pass "
                "--overwrite or another --out.",
            )
        if key in done:
            raise refuse(n, f"item {key} appears twice.")
        done[key] = pred
    return done, good, note


def run_file(out: Path) -> Path:
    return out.with_name(out.name + ".run.json")


def check_run(out: Path, run: dict[str, Any]) -> None:
    """Refuse to resume ``out`` when it was started with another backend, split, shots or seed."""
    meta = run_file(out)
    if not meta.is_file():
        return
    try:
        before = json.loads(meta.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError):
        return
    keys = ("backend", "signature", "split", "shots", "seed", "corpus_sha256")
    diff = [k for k in keys if before.get(k) != run.get(k)]
    if diff:
        shown = "; ".join(f"{k}: {before.get(k)!r} then, {run.get(k)!r} now" for k in diff)
        raise ConfigError(
            f"{out} was started with other settings ({shown}). Resume it with the same "
            "settings, or pass --overwrite or another --out."
        )


# --- running -----------------------------------------------------------------------------------


def make_backend(args: argparse.Namespace, corpus: Corpus) -> Backend:
    """The backend with the options the user gave, plus the corpus when it takes one."""
    names = "model adapter load_in_4bit max_new_tokens batch_size provider"
    options: dict[str, Any] = {k: getattr(args, k) for k in names.split()}
    track = tracks.get(args.track)
    track.backend_class(args.backend)  # an unknown name is refused naming the track that has it
    accepted = options_of(args.backend, track.backends)
    if "provider" not in accepted and args.provider is not None:
        raise ConfigError(f"--provider is an option of the erc llm backend, not {args.backend!r}.")
    if "corpus" in accepted:
        options["corpus"] = corpus
    if "batch_size" not in accepted:
        options.pop("batch_size")  # still the write granularity
    return track.backend(args.backend, **options)


def plan(
    corpus: Corpus, split: str, shots: int, seed: int, limit: int | None
) -> tuple[list[Item], dict[Key, list[Item]]]:
    """The items to predict and each one's shots (from the train split)."""
    todo = split_items(corpus, split)
    if limit is not None:
        if limit < 1:
            raise ConfigError(f"--limit must be >= 1, got {limit}.")
        todo = todo[:limit]
    chosen: dict[Key, list[Item]] = {}
    if shots:
        pool = split_items(corpus, "train")
        chosen = {it.key: choose_shots(it, pool, shots, seed) for it in todo}
    return todo, chosen


def check(args: argparse.Namespace, corpus: Corpus, n: int = 3) -> int:
    """``--check``: answer ``n`` items for real and report (see the module docstring)."""
    from etclib.core.errors import EmptyAnswerError, ServiceError, UnsupportedSettingError
    from etclib.judge import pricing

    todo, shots = plan(corpus, args.split, args.shots, args.seed, None)
    backend = make_backend(args, corpus)
    sig = backend.signature()
    report: dict[str, Any] = {"backend": args.backend, "signature": sig, "problems": []}
    answers: list[str] = []
    start = time.monotonic()
    try:
        for it in todo[:n]:
            answers += backend.predict([it], shots=[shots.get(it.key, [])])
    except UnsupportedSettingError as exc:
        report["problems"].append(f"unsupported setting {exc.setting!r}: {exc}")
    except EmptyAnswerError as exc:
        report["problems"].append(f"empty answer ({exc.reason}): {exc}")
    except ServiceError as exc:
        report["problems"].append(str(exc))
    wall = time.monotonic() - start
    report["problems"] += backend.notes() if hasattr(backend, "notes") else []
    report["answered"] = len(answers)
    report["latency_s"] = round(wall / max(len(answers), 1), 3)
    report["answer_chars"] = [len(a) for a in answers]
    n_todo = len(todo)
    estimate: dict[str, Any] = {"items": n_todo, "cost_usd": None, "why": pricing.NO_ESTIMATE}
    usage = getattr(backend, "usage", None)
    if usage is not None and usage.calls:
        tokens = (usage.input_tokens, usage.output_tokens, usage.cached_tokens)
        per_call = [t / usage.calls for t in tokens]
        cost = pricing.cost_usd(getattr(backend, "model", ""), *(n_todo * t for t in per_call))
        if usage.output_tokens > 0 or any(answers):
            cost = None if cost is None else round(cost, 2)
            estimate = {"items": n_todo, "calls": n_todo, "cost_usd": cost}
        report.update(
            calls=usage.calls,
            retries=usage.retries,
            served_models=sorted(usage.model_versions),
            input_tokens_per_call=round(per_call[0], 1),
            output_tokens_per_call=round(per_call[1], 1),
        )
    report["estimate"] = estimate
    report["ok"] = not report["problems"] and len(answers) == min(n, len(todo))
    if args.json:
        print(json.dumps(report, ensure_ascii=False, indent=1))
        return 0 if report["ok"] else 1
    print(f"predict check: {args.backend} {json.dumps(sig, ensure_ascii=False)}")
    print(f"  {report['answered']} items answered, {report['latency_s']:.2f} s per item")
    if "calls" in report:
        est = report["estimate"]
        print(
            f"  served: {', '.join(report['served_models']) or '(not reported)'}; "
            f"{report['calls']} calls, {report['retries']} retries; per call "
            f"{report['input_tokens_per_call']:.0f} input + "
            f"{report['output_tokens_per_call']:.0f} output tokens"
        )
        if est.get("why"):
            print(f"  whole {args.split} split ({est['items']} items): {est['why']}")
        else:
            cost = pricing.cost_text(est["cost_usd"])
            print(
                f"  whole {args.split} split ({est['items']} items): {est['calls']} calls, {cost}"
            )
    for p in report["problems"]:
        print(f"  problem: {p}")
    print("  OK" if report["ok"] else "  NOT OK: fix the problems above before a full run")
    return 0 if report["ok"] else 1


def run(args: argparse.Namespace) -> int:
    if args.backend is None:
        args.backend = tracks.get(args.track).default_backend
    if args.shots < 0:
        raise ConfigError(f"--shots must be >= 0, got {args.shots}.")
    if args.batch_size is not None and args.batch_size < 1:
        raise ConfigError(f"--batch-size must be >= 1, got {args.batch_size}.")
    corpus = load_corpus(args.data)
    if args.check:
        return check(args, corpus)
    if not args.out:
        raise ConfigError("--out FILE is needed (the predictions file), unless --check.")
    todo, shots = plan(corpus, args.split, args.shots, args.seed, args.limit)
    out = Path(args.out)
    backend = make_backend(args, corpus)
    if args.shots and not backend.uses_prompt:
        raise ConfigError(
            f"--shots {args.shots}: backend {args.backend!r} does not prompt a model, so shots "
            "would change nothing; drop --shots or use a backend that prompts a model."
        )
    run_info = {
        "backend": args.backend,
        "signature": backend.signature(),
        "split": args.split,
        "shots": args.shots,
        "seed": args.seed if args.shots else None,
        "corpus_sha256": corpus.content_hash,
        "etclib": __version__,
        "track": args.track,
    }
    done: dict[Key, str] = {}
    notes: list[str] = []
    if out.exists() and not args.overwrite:
        check_run(out, run_info)
        done, good, note = read_partial(
            out, {it.key for it in split_items(corpus, args.split)}, args.track
        )
        if note:
            notes.append(note)
        if good < out.stat().st_size:
            os.truncate(out, good)
    else:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_bytes(b"")
    run_file(out).write_text(
        json.dumps(
            {**run_info, "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())},
            ensure_ascii=False,
            indent=1,
        ),
        encoding="utf-8",
    )
    remaining = [it for it in todo if it.key not in done]
    size = args.batch_size or getattr(backend, "batch_size", None) or 8
    clipped = 0
    bar = progress.counter(len(remaining), desc=f"predict {args.backend}")
    try:
        with out.open("a", encoding="utf-8", newline="\n") as f:
            for start in range(0, len(remaining), size):
                batch = remaining[start : start + size]
                preds = backend.predict(
                    batch, progress=bar.update, shots=[shots.get(it.key, []) for it in batch]
                )
                rows = []
                for it, p in zip(batch, preds, strict=True):
                    if isinstance(p, str) and len(p) > MAX_PREDICTION_CHARS:
                        clipped += 1
                        p = p[:MAX_PREDICTION_CHARS]
                    rows.append((it.key, p))
                f.write(dumps_jsonl(rows, args.track))
                f.flush()
                os.fsync(f.fileno())
    finally:
        bar.close()
    if clipped:
        notes.append(f"{clipped} predictions were cut to {MAX_PREDICTION_CHARS} characters")
    notes += backend.notes() if hasattr(backend, "notes") else []
    complete = args.limit is None
    warnings: list[str] = []
    if complete:
        warnings = read_predictions(out, args.split, corpus, track=args.track).warnings
    summary = {
        "out": str(out),
        "backend": args.backend,
        "split": args.split,
        "written": len(remaining),
        "resumed": len(done),
        "items": len(todo),
        "validated": complete,
        "signature": run_info["signature"],
        "notes": notes + warnings,
    }
    if hasattr(backend, "run_info"):  # hosted models: usage, served snapshot, empty answers
        summary["usage"] = backend.run_info()
    if args.json:
        print(json.dumps(summary, ensure_ascii=False, indent=1))
    else:
        state = "valid" if complete else f"partial (--limit {args.limit}), not validated"
        print(
            f"{out}: {len(remaining)} predictions written, {len(done)} resumed, "
            f"{len(todo)} items of the {args.split} split; {state}."
        )
        for n in notes + warnings:
            print(f"note: {n}", file=sys.stderr)
    return 0
