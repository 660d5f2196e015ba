"""The ETC leaderboard from the command line: submit, score, show, export, moderate.

The database is ETC_LEADERBOARD_DB (default data/leaderboard.sqlite, an embedded SQLite file
that the site, these commands and `worker` processes of one machine share while the site runs).
Set to a postgresql:// URL, the board lives on that server and processes on any number of machines share
it (docs/deploy.md). A missing database file is
refused (a mistyped path must not start a new board) unless the command is given --create;
seed-baselines creates it (that is how `make prepare` makes the board of a fresh clone).

Examples:
  python -m leaderboard submit preds.jsonl --name "My model" --team "Lab" \\
      --contact me@example.org --setting few-shot --saw-test no --score
  python -m leaderboard worker              # score queued jobs until Ctrl-C
  python -m leaderboard worker --once       # score what is queued, then exit
  python -m leaderboard status 3f9c0a1b2d4e
  python -m leaderboard entry 3f9c0a1b2d4e.SECRET --name "My model v2"   # the printed edit key
  python -m leaderboard seed-baselines      # paper rows + retrieval/constant/copy, scored
  python -m leaderboard show
  python -m leaderboard show --sort-by bleu4 --json
  python -m leaderboard export --format csv --out board.csv
  python -m leaderboard export --track erc --format json   # the categories board
  python -m leaderboard export --what items --id 3f9c0a1b2d4e --format json --out items.json
  python -m leaderboard compare 3f9c0a1b2d4e 9a8b7c6d5e4f --json
  python -m leaderboard push                # to ETC_LB_HUB_REPO with HF_TOKEN
  python -m leaderboard admin list --token "$ETC_ADMIN_TOKEN"
  python -m leaderboard admin hide 3f9c0a1b2d4e --note "spam"
  python -m leaderboard admin rescore 3f9c0a1b2d4e
  python -m leaderboard admin rescore 3f9c0a1b2d4e --stage judge   # complete an incomplete judge
  python -m leaderboard admin rerun         # queue every failed or incomplete job again
  python -m leaderboard show --create       # a new, empty board at ETC_LEADERBOARD_DB
  python -m leaderboard migrate --to postgresql://etc:PASSWORD@db/etc   # docs/deploy.md
  python -m leaderboard worker --concurrency 4   # a worker machine of a PostgreSQL board

Admin commands take --token (default: $ETC_ADMIN_TOKEN, at least 24 characters; whoever runs
this on the server can read the database file anyway). Exit status: 0 ok, 1 refused input,
2 configuration, 3 limit reached, 5 not found, 6 admin refused,
7 database missing, unwritable or damaged, 8 the worker stopped (timeout, repeated errors).
"""

from __future__ import annotations

import argparse
import json
import logging
import math
import os
import sys
from typing import Any

from etclib.errors import EtcError

from .cli_admin import ADMIN_HELP, add_admin_arguments, cmd_admin
from .cli_text import _clip, _pad, _table, _width  # noqa: F401 - shared with cli_admin
from .metadata import OPEN_WEIGHTS

SUBMIT_HELP = """Validate a predictions file, store it and queue its scoring; print the id.

Also prints the entry's private edit key, once: keep it to rename the entry, edit its links
and model facts, make it private or withdraw it (`entry KEY`, or the site's Submit page opened
with ?edit=KEY). With --score: the main scores with their intervals and the rank.

Example:
  python -m leaderboard submit preds.jsonl --name "My model" --setting zero-shot --score
  python -m leaderboard submit preds.jsonl --name "My model" --parameters 8 --open-weights yes \\
      --licence Apache-2.0
"""
ENTRY_HELP = """Show or change your own entry, given the private edit key its submission printed.

Without options: the entry, its standing on the board and its history. --name, the links and
the model facts change it; --private takes it off the board and its exports until --public;
--withdraw takes it off for good (its rows are kept). Every change is kept in its history.

Example:
  python -m leaderboard entry 3f9c0a1b2d4e.SECRET
  python -m leaderboard entry 3f9c0a1b2d4e.SECRET --name "My model v2" --parameters 8 \\
      --open-weights yes --licence MIT
  python -m leaderboard entry 3f9c0a1b2d4e.SECRET --private
  python -m leaderboard entry 3f9c0a1b2d4e.SECRET --withdraw
"""
WORKER_HELP = """Run the scoring worker (a pool of threads) in this process.

With --once it exits when the queue is empty, or with status 8 after --timeout seconds
(default 3600) or when it stops after repeated errors. Before it claims a job it pays the
one-time costs of the stages that run (with the judge: its SDK, client and answer cache).

Example:
  python -m leaderboard worker --threads 2
  python -m leaderboard worker --once --timeout 600
"""
STATUS_HELP = """Show a submission's status, pending metrics and history.

Example:
  python -m leaderboard status 3f9c0a1b2d4e --json
"""
SHOW_HELP = """Print the board (computed rows with intervals and rank bands) and the published rows.

Example:
  python -m leaderboard show --sort-by rougeL
  python -m leaderboard show --track erc
"""
EXPORT_HELP = """Export the public board, the published rows, or per-item scores as CSV or JSON.

Example:
  python -m leaderboard export --format csv --out board.csv
  python -m leaderboard export --track erc --format json --out categories.json
  python -m leaderboard export --what items --id 3f9c0a1b2d4e --format csv --out items.csv
"""
SEED_HELP = """Add the published baselines and the computed ones, and score them.

The published rows are the paper's (reported); the computed ones are retrieval, constant and
copy, and on the categories track majority, prior, tfidf and retrieval-labels (scored here).
Idempotent.

Example:
  python -m leaderboard seed-baselines
  python -m leaderboard seed-baselines --no-reported --backends copy
"""
PUSH_HELP = """Upload the public board to the Hugging Face dataset ETC_LB_HUB_REPO (HF_TOKEN).

Example:
  ETC_LB_HUB_REPO=org/etc-leaderboard HF_TOKEN=hf_... python -m leaderboard push
"""
MIGRATE_HELP = """Copy a board into another database and check the copy.

Copies the board at --from (default ETC_LEADERBOARD_DB; a board file of an earlier, DuckDB
version is read as it is) into --to (a postgresql:// URL, or a SQLite file): every submission,
prediction, score, per-item row, job, status and log row, in one transaction; then compares
each table's row count and SHA-256 on both sides and prints them. A target holding rows is
refused unless --replace. Afterwards point ETC_LEADERBOARD_DB at the target (docs/deploy.md).

Examples:
  python -m leaderboard migrate --to postgresql://etc:PASSWORD@db.example.org/etc
  python -m leaderboard migrate --from data/leaderboard.duckdb --to data/leaderboard.sqlite
"""
COMPARE_HELP = """Compare two stored entries (B − A) from the scores stored for each item, no re-scoring.

Per metric: both scores, B − A, its paired bootstrap 95% interval over items (the board's
resamples and seed), the paired approximate-randomization p-value and the verdict "A better" /
"no significant difference" / "B better" at alpha 0.05: what the site's comparison page shows
and `etclib compare A.jsonl B.jsonl` prints for the two files. --json: the shape of `etclib
compare --json`.

Example:
  python -m leaderboard compare 3f9c0a1b2d4e 9a8b7c6d5e4f
  python -m leaderboard compare 3f9c0a1b2d4e 9a8b7c6d5e4f --json --per-item items.jsonl
"""


def _fmt(value: Any, width: int = 6) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "-".rjust(width)
    if isinstance(value, float):
        return f"{value:.2f}".rjust(width)
    return str(value).rjust(width)


def heading(key: str) -> str:
    """A score column's heading: the metric's name and direction (``ROUGE-L ↑``)."""
    from etclib import metrics

    return metrics.heading(key)


def cmd_submit(args: argparse.Namespace) -> int:
    import leaderboard as lb

    meta = {
        "name": args.name,
        "team": args.team or "",
        "contact": args.contact or "",
        "model_url": args.model_url or "",
        "paper_url": args.paper_url or "",
        "description": args.description or "",
        "setting": args.setting,
        "saw_test": args.saw_test,
        "parameters": args.parameters or "",
        "open_weights": args.open_weights or "",
        "licence": args.licence or "",
    }
    receipt = lb.submit(args.file, meta, submitter=args.submitter, split=args.split)
    for w in receipt.warnings:
        print(f"warning: {w}", file=sys.stderr)
    if receipt.duplicate:
        print(f"{receipt.id}  {receipt.duplicate_text(args.name)} Status: {receipt.status}.")
    else:
        print(f"{receipt.id}  queued (position {receipt.queue_position})")
        print(
            f"edit key: {receipt.edit_key}\n  (shown once: keep it to rename, edit, withdraw or "
            "make this entry private: python -m leaderboard entry KEY, or the site's Submit page "
            "opened with ?edit=KEY)"
        )
    if args.score:
        from leaderboard.errors import WorkerStoppedError

        lb.process_jobs()
        st = lb.status(receipt.id)
        if st["status"] in ("queued", "scoring"):  # its job is another process's
            raise WorkerStoppedError(
                f"{receipt.id} is still {st['status']}: another process holds its job (the "
                "site's scoring worker, or a `python -m leaderboard worker`); follow it with "
                f"`python -m leaderboard status {receipt.id}`."
            )
        print(f"status: {st['status']}" + (f" ({st['message']})" if st["message"] else ""))
        print(standing_text(lb.standing(receipt.id)))
    elif not receipt.duplicate:
        print("Run `python -m leaderboard worker --once` to score it (the site does it itself).")
    return 0


def standing_text(standing: dict[str, Any]) -> str:
    """An entry's rank and main scores with their intervals, in a line or two."""
    if standing["rank"] is None:
        where = "not ranked on the board (private, withdrawn, hidden or not scored yet)"
    else:
        where = (
            f"rank {standing['rank']} (band {standing['rank_band']}) of {standing['of']} by "
            f"{heading(standing['sort_by'])}"
        )
    scores = "; ".join(
        f"{heading(k)} {v:.2f}" + ("" if lo is None else f" [{lo:.2f}, {hi:.2f}]")
        for k, (v, lo, hi) in standing["scores"].items()
    )
    return f"{where}\n  {scores}" if scores else where


def cmd_entry(args: argparse.Namespace) -> int:
    import leaderboard as lb
    from leaderboard.owners import entry_of_key

    owner = lb.Owner(edit_keys=(args.key,))
    sid = entry_of_key(args.key)
    fields = ("name", "model_url", "paper_url", "parameters", "open_weights", "licence")
    changes = {f: getattr(args, f) for f in fields if getattr(args, f) is not None}
    changed = lb.update_entry(sid, owner, changes) if changes else []
    visibility = next(
        (v for v, on in (("private", args.private), ("public", args.public)) if on), None
    )
    if args.withdraw:
        visibility = "withdrawn"
    if visibility:
        lb.set_entry_visibility(sid, owner, visibility)
    mine = lb.owned_entries(owner)
    if mine.empty:  # a key that is no entry's
        raise lb.NotFoundError.entry(sid)
    rec = mine.iloc[0].to_dict()
    history = lb.entry_history(sid, owner)
    if args.json:
        out = {**rec, "history": history.to_dict("records")}
        print(json.dumps(out, ensure_ascii=False, indent=2, default=str))
        return 0
    if changed or visibility:
        print(f"changed: {', '.join([*changed, *(['visibility'] if visibility else [])])}")
    print(f"{rec['id']}  {_clip(rec['name'], 60)}  [{rec['track']}, {rec['visibility']}]")
    print(f"status: {rec['status']}")
    if rec["visibility"] == "public" and rec["status"] != "queued":
        print(standing_text(lb.standing(sid)))
    for h in history.to_dict("records"):
        what = h["to"] if h["what"] == "status" else f"{h['what']}: {h['from']!r} -> {h['to']!r}"
        print(f"  {h['at']:%Y-%m-%d %H:%M:%S}  {_clip(what, 100)}  ({h['by']})")
    return 0


def cmd_worker(args: argparse.Namespace) -> int:
    import time

    import leaderboard as lb
    from leaderboard import settings, stages
    from leaderboard.errors import WorkerStoppedError
    from leaderboard.worker import pending_jobs

    db = lb.open_db()
    # the first job of each stage would otherwise pay its imports, clients and connections
    warmed = stages.warm()
    if warmed:
        print(f"warmed: {', '.join(warmed)}", flush=True)
    # ETC_LB_WORKERS=0 means "the site scores nothing"; a worker process always scores
    threads = args.threads or settings.workers() or settings.DEFAULT_WORKERS
    # the pool logs why it stopped for the site's log; this command prints it itself, once
    said = lambda record: not getattr(record, "worker_failure", False)  # noqa: E731
    logging.getLogger("leaderboard.worker").addFilter(said)
    pool = lb.start_workers(threads, db=db, warm_board=False)  # no visitor here
    print(f"worker: {len(pool.threads)} thread(s), PID {os.getpid()}; Ctrl-C to stop", flush=True)
    finished = True
    try:
        if args.once:
            finished = pool.wait_idle(args.timeout)
        else:
            while pool.running:
                time.sleep(1)
            if pool.failure:
                raise WorkerStoppedError(pool.failure)
    except KeyboardInterrupt:
        print("stopping after the current jobs ...", file=sys.stderr)
    finally:
        pool.stop(timeout=60.0 if finished else 2.0)
        logging.getLogger("leaderboard.worker").removeFilter(said)
    left = pending_jobs(db)
    if not finished:
        raise WorkerStoppedError(
            f"the queue did not finish within {args.timeout:g} s ({left} job(s) left; a job "
            "still running was put back in the queue). Run the worker again, or give a longer "
            "--timeout."
        )
    print(f"worker stopped; {left} job(s) still queued")
    return 0


def cmd_status(args: argparse.Namespace) -> int:
    import leaderboard as lb

    st = lb.status(args.id)
    if args.json:
        print(json.dumps(st, ensure_ascii=False, indent=2, default=str))
        return 0
    print(f"{st['id']}  {_clip(st['name'], 60)}  [{st['kind']}, {st['visibility']}]")
    print(f"status: {st['status']}" + (f"  ({st['message']})" if st["message"] else ""))
    if st["queue_position"]:
        print(f"queue position: {st['queue_position']}")
    for w in st["warnings"]:
        print(f"warning: {w}")
    for h in st["history"]:
        print(f"  {h['at']:%Y-%m-%d %H:%M:%S}  {h['status']:<16} {_clip(h['message'], 100)}")
    return 0


def render_board(sort_by: str | None = None, track: str | None = None) -> str:
    """Every track's board (with ``track``, that one alone) as text tables: computed rows with
    intervals and rank bands, the track's reference and published rows."""
    import leaderboard as lb
    from etclib import tracks

    out: list[str] = []
    for t in [tracks.get(track)] if track else tracks.TRACKS.values():
        if out:
            out.append("")
        by = sort_by if sort_by in lb.metric_columns(t.name) else None
        out += _render_track(t, lb.ranking(sort_by=by, track=t.name))
    return "\n".join(out)


def _render_track(t, board) -> list[str]:
    import leaderboard as lb

    summary = [f.key for f in t.facts() if f.ranking and f.summary]
    keys = [m for m in summary if m in board.columns and board[m].notna().any()]
    rows = []
    for r in board.to_dict("records"):
        cells = [r["rank_band"] or "-", _clip(r["name"], 34), r["kind"], _clip(r["setting"], 10)]
        for m in keys:
            v, lo, hi = r[m], r[m + "_lo"], r[m + "_hi"]
            if v is None or (isinstance(v, float) and math.isnan(v)):
                cells.append("-")
            elif lo is None or (isinstance(lo, float) and math.isnan(lo)):
                cells.append(f"{v:.2f}")
            else:
                cells.append(f"{v:.2f} [{lo:.1f},{hi:.1f}]")
        cells += [_fmt(r["pred_chars"], 1)] if t.free_text else []
        rows.append([*cells, _clip(r["status"], 16)])
    chars = ["chars"] if t.free_text else []
    for r in lb.reference_rows(t.name).to_dict("records"):
        scores = [_fmt(r.get(k), 2) for k in keys]
        rows.append(["ref", _clip(r["name"], 34), "reference", "", *scores, *[""] * len(chars), ""])
    out = [
        f"{t.heading}, computed on this project's test split (sorted by "
        f"{heading(board.attrs.get('sort_by') or '')}; 95% paired bootstrap intervals, "
        f"{board.attrs.get('resamples')} resamples):",
        _table(["rank", "name", "kind", "setting", *map(heading, keys), *chars, "status"], rows)
        if rows
        else "  (no entries yet: python -m leaderboard seed-baselines)",
    ]
    for group, sig in (board.attrs.get("signatures") or {}).items():
        out.append(
            f"  signature {group}: {sig.get(group, '')}  (etclib {sig.get('etclib')}, corpus "
            f"{sig.get('corpus')})"
        )
    rep = lb.reported() if t.reported else []
    if len(rep):
        cols = [c for c in summary if c in rep.columns]
        rrows = [
            ["reported", _clip(r["name"], 80)] + [_fmt(r.get(c), 1) for c in cols]
            for r in rep.to_dict("records")
        ]
        out.append("")
        out.append(
            "Reported in the paper (not re-scored; earlier corpus version and tokenisation; "
            "no intervals):"
        )
        out.append(_table(["kind", "name", *map(heading, cols)], rrows))
    other = lb.other_scores(track=t.name)
    if len(other):
        out.append("")
        out.append(f"{len(other)} score(s) under an older signature: see other_scores().")
    return out


def cmd_show(args: argparse.Namespace) -> int:
    import leaderboard as lb

    if args.json:
        print(lb.export_json("board", track=args.track))
        return 0
    print(render_board(args.sort_by, args.track))
    return 0


def cmd_export(args: argparse.Namespace) -> int:
    import leaderboard as lb

    fn = lb.export_csv if args.format == "csv" else lb.export_json
    text = fn(args.what, submission_id=args.id, path=args.out, track=args.track)
    if args.out is None:
        sys.stdout.write(text)
    else:
        print(f"wrote {args.out} ({len(text.encode('utf-8')):,} bytes)")
    return 0


def cmd_compare(args: argparse.Namespace) -> int:
    from etclib.comparison import format_text, write_per_item
    from leaderboard.compare import compare

    result = compare(args.a, args.b, metrics=args.metrics, trials=args.trials)
    if args.per_item:
        write_per_item(result, args.per_item)
    if args.json:
        print(json.dumps(result.to_json(), ensure_ascii=False, indent=2))
    else:
        print(format_text(result))
    return 0


def cmd_seed(args: argparse.Namespace) -> int:
    import leaderboard as lb
    from etclib.tracks import TRACKS

    options = [getattr(args, f"backends_{t}") for t in TRACKS]  # one option per track
    backends = [b.strip() for option in options for b in option.split(",") if b.strip()]
    out = lb.seed_baselines(
        reported=not args.no_reported,
        computed=bool(backends),
        backends=backends,
        log=lambda m: print(m, flush=True),
    )
    if "reported" in out:
        c = out["reported"]
        print(
            f"reported rows: {c['added']} added, {c['updated']} updated, {c['unchanged']} unchanged"
        )
    for name, res in out.get("computed", {}).items():
        print(f"{name}: {'added' if res['added'] else 'already there'} as {res['id']}")
    if not args.no_score:
        n = lb.process_jobs()
        print(f"scored {n} job(s)")
    return 0


def cmd_push(args: argparse.Namespace) -> int:
    import leaderboard as lb

    done = lb.push_to_hub(repo=args.repo)
    print(f"uploaded {', '.join(done)}")
    return 0


def cmd_migrate(args: argparse.Namespace) -> int:
    from leaderboard import settings
    from leaderboard.errors import LeaderboardError
    from leaderboard.migrate import migrate

    report = migrate(settings.db_target(args.source), args.to, replace=args.replace)
    print(report.text())
    if not report.ok:
        raise LeaderboardError(
            f"The copy differs from this board in: {', '.join(report.differing)}. Do not switch "
            "ETC_LEADERBOARD_DB to it; run migrate again with --replace, and report the "
            "difference if it stays."
        )
    return 0


def build_parser() -> argparse.ArgumentParser:
    raw = argparse.RawDescriptionHelpFormatter
    parser = argparse.ArgumentParser(
        prog="python -m leaderboard", description=__doc__, formatter_class=raw
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument(
        "--create",
        action="store_true",
        help="create the database file if it is missing (otherwise a missing file is refused)",
    )

    def add(name: str, text: str, fn) -> argparse.ArgumentParser:
        p = sub.add_parser(
            name,
            help=summary(text),  # the first sentence, whole
            description=text,
            formatter_class=raw,
            parents=[common],
        )
        p.set_defaults(_run=fn)
        return p

    from etclib.cli import summary
    from leaderboard.metadata import SAW_TEST, SETTINGS

    p = add("submit", SUBMIT_HELP, cmd_submit)
    p.add_argument("file", help="predictions file (.jsonl or .csv) for every test item")
    p.add_argument("--name", required=True, help="display name on the board")
    p.add_argument("--team")
    p.add_argument("--contact", help="e-mail or handle (never shown publicly)")
    p.add_argument("--model-url", help="http(s) link to the model")
    p.add_argument("--paper-url", help="http(s) link to the paper")
    p.add_argument("--description")
    p.add_argument("--setting", default="other", choices=SETTINGS)
    p.add_argument(
        "--saw-test", default="unknown", choices=SAW_TEST, help="did training see ETC test data?"
    )
    add_model_facts(p)
    p.add_argument(
        "--submitter",
        help="key the daily limit counts by (default: contact, else name); operator use only: "
        "the site counts by signed-in account or network address",
    )
    p.add_argument("--split", default="test", choices=("train", "valid", "test"))
    p.add_argument("--score", action="store_true", help="score the queue now, in this process")

    p = add("entry", ENTRY_HELP, cmd_entry)
    p.add_argument("key", help="the entry's private edit key (ID.SECRET), printed by submit")
    p.add_argument("--name", help="a new display name")
    p.add_argument("--model-url", help="http(s) link to the model or its code ('' to clear)")
    p.add_argument("--paper-url", help="http(s) link to the paper ('' to clear)")
    add_model_facts(p)
    state = p.add_mutually_exclusive_group()
    state.add_argument("--private", action="store_true", help="off the board until --public")
    state.add_argument("--public", action="store_true", help="back on the board")
    state.add_argument("--withdraw", action="store_true", help="off the board for good")
    p.add_argument("--json", action="store_true", help="print machine-readable JSON")

    p = add("worker", WORKER_HELP, cmd_worker)
    p.add_argument(
        "--concurrency",
        "--threads",
        dest="threads",
        type=int,
        help="jobs scored at once, each in a thread (default $ETC_LB_WORKERS, else 2)",
    )
    p.add_argument("--once", action="store_true", help="exit when the queue is empty")
    p.add_argument(
        "--timeout",
        type=float,
        default=3600.0,
        help="with --once: give up (exit status 8) after this many seconds (default 3600)",
    )

    p = add("status", STATUS_HELP, cmd_status)
    p.add_argument("id")
    p.add_argument("--json", action="store_true", help="print machine-readable JSON")

    from etclib.tracks import TRACKS
    from leaderboard.stages import all_stages

    track_help = "the board of this track: " + "; ".join(
        f"{t.name} ({t.title})" for t in TRACKS.values()
    )

    p = add("show", SHOW_HELP, cmd_show)
    p.add_argument(
        "--sort-by",
        help="metric to rank by (default: the track's rule; "
        + "; ".join(f"{t.title}: {', else '.join(t.rank_order)}" for t in TRACKS.values())
        + ")",
    )
    p.add_argument("--json", action="store_true", help="print the JSON export instead")
    p.add_argument(
        "--track", choices=list(TRACKS), help=track_help + " (default: all; --json: the first)"
    )

    p = add("export", EXPORT_HELP, cmd_export)
    p.add_argument("--format", choices=("csv", "json"), default="csv")
    p.add_argument("--what", choices=("board", "reported", "items"), default="board")
    p.add_argument("--id", help="with --what items: one submission (default: every public one)")
    p.add_argument("--out", help="output file (default: standard output)")
    p.add_argument("--track", choices=list(TRACKS), help=track_help + " (default: the first)")

    p = add("compare", COMPARE_HELP, cmd_compare)
    p.add_argument("a", help="entry A's id")
    p.add_argument("b", help="entry B's id (the difference is B − A)")
    p.add_argument("--metrics", help="comma-separated metric groups (default: all both have)")
    p.add_argument("--trials", type=int, help="randomization trials (default 10000)")
    p.add_argument("--per-item", metavar="OUT", help="write one JSON line per item")
    p.add_argument("--json", action="store_true", help="print machine-readable JSON")

    p = add("seed-baselines", SEED_HELP, cmd_seed)
    p.add_argument("--no-reported", action="store_true", help="skip the published rows")
    for t in TRACKS.values():
        p.add_argument(
            f"--{t.tagged('backends')}",
            dest=f"backends_{t.name}",
            default=",".join(t.baselines),
            help=f"computed baselines of the {t.title} track (comma-separated; empty for none; "
            f"default: {','.join(t.baselines)})",
        )
    p.add_argument("--no-score", action="store_true", help="only queue them")

    p = add("push", PUSH_HELP, cmd_push)
    p.add_argument("--repo", help="dataset repo id (default $ETC_LB_HUB_REPO)")

    p = add("migrate", MIGRATE_HELP, cmd_migrate)
    p.add_argument("--from", dest="source", help="the board to copy (default $ETC_LEADERBOARD_DB)")
    p.add_argument(
        "--to", required=True, help="postgresql://USER:PASSWORD@HOST[:PORT]/DATABASE, or a file"
    )
    p.add_argument(
        "--replace",
        action="store_true",
        help="delete the target's leaderboard rows first (otherwise a non-empty target is refused)",
    )

    p = add("admin", ADMIN_HELP, cmd_admin)
    add_admin_arguments(p, all_stages())
    return parser


def add_model_facts(p: argparse.ArgumentParser) -> None:
    """The optional model facts, asked by ``submit`` and changed by ``entry``."""
    p.add_argument("--parameters", help="model size in billions of parameters, e.g. 8 or 0.35")
    p.add_argument(
        "--open-weights", choices=[v for v in OPEN_WEIGHTS if v], help="are the weights public?"
    )
    p.add_argument("--licence", help="the model's licence, e.g. Apache-2.0")


def _start(args: argparse.Namespace) -> None:
    """Before any command: refuse a weak admin token; open (and check) the database."""
    from etclib import admintoken
    from leaderboard.db import open_db

    admintoken.check_configured()
    if args.command == "migrate":  # opens its own two boards (its source may be a DuckDB file)
        return
    # The library logs the creation for the site's log; this command says it itself, once.
    quiet = logging.getLogger("leaderboard.db")
    said = lambda record: "created a new, empty" not in record.getMessage()  # noqa: E731
    quiet.addFilter(said)
    try:
        db = open_db(create=args.create or args.command == "seed-baselines")
    finally:
        quiet.removeFilter(said)
    if db.created:
        print(f"created a new, empty leaderboard database at {db.label}", file=sys.stderr)


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "_run", None):
        parser.print_help()
        return 0 if not argv and argv is not None else 2
    try:
        _start(args)
        return int(args._run(args) or 0)
    except EtcError as exc:
        print(f"leaderboard {args.command}: error: {exc}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        print(f"leaderboard {args.command}: interrupted.", file=sys.stderr)
        return 130
    except Exception as exc:
        from leaderboard.db import storage_fault

        err = storage_fault(exc)
        if err is None:
            raise
        print(f"leaderboard {args.command}: error: {err}", file=sys.stderr)
        return 7
    finally:
        from leaderboard.db import close_all

        close_all()


if __name__ == "__main__":
    sys.exit(main())
