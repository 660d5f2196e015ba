"""What the LLM labelling commands (``judge-labels``, ``causes``) share: their run options and
how they report a run. Not a command itself."""

from __future__ import annotations

import argparse
from typing import Any


def add_arguments(parser: argparse.ArgumentParser, *, required: bool) -> None:
    """The options of an LLM labelling run (``judge-labels``, ``causes``): provider, model,
    temperature, workers, ``--limit`` and the studies database."""
    from etclib.cli import add_provider_argument

    add_provider_argument(parser, "--provider", required=required, help="LLM provider")
    parser.add_argument(
        "--model", required=required, metavar="NAME", help="model name, e.g. gemini-2.5-flash"
    )
    parser.add_argument(
        "--temperature", type=float, default=0.0, help="decoding temperature (default 0)"
    )
    parser.add_argument("--workers", type=int, default=8, help="parallel requests (default 8)")
    parser.add_argument(
        "--limit", type=int, metavar="N", help="label only the first N items (trial run)"
    )
    parser.add_argument(
        "--db", metavar="FILE|URL", help="studies database (default: $ETC_STUDIES_DB)"
    )


def options(args: argparse.Namespace) -> dict[str, Any]:
    """The keyword arguments of a labelling study's run function, from the options."""
    return {k: getattr(args, k) for k in ("split", "temperature", "workers", "limit", "db")}


def fields(result: Any) -> dict[str, Any]:
    """A labelling run's summary for ``--json``."""
    return {
        "run_id": result.run_id,
        "signature": result.signature,
        "split": result.split,
        "items": result.n_items,
        "labelled": result.n_labelled,
        "failed": result.n_failed,
        "cached": result.n_cached,
    }


def report(result: Any, what: str) -> None:
    """A labelling run's summary for people: its id and signature, its counts, what failed."""
    print(f"run {result.run_id}: {result.signature}")
    print(
        f"{result.n_labelled} of {result.n_items} {what} labelled "
        f"({result.n_cached} from cache, {result.n_failed} unusable answers)"
    )
    for err in result.errors:
        print(f"  unusable: {err}")
