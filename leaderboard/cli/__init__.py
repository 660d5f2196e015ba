"""The ETC leaderboard from the command line: submit, score, show, export, moderate.

The board is ETC_LEADERBOARD_DB (default data/leaderboard.sqlite, shared by the site and the
commands of one machine; a postgresql:// URL for several machines, docs/deploy.md). A missing
board file is refused unless the command is given --create; seed-baselines creates it.

Examples:
  python -m leaderboard submit preds.jsonl --name "My model" --setting few-shot --score
  python -m leaderboard worker --once       # score what is queued, then exit
  python -m leaderboard show --track erc    # the categories board
  python -m leaderboard admin list --token "$ETC_ADMIN_TOKEN"

Every command and exit status: docs/leaderboard.md.
"""

from __future__ import annotations

import argparse
import logging
import sys

from etclib.cli import command_parser
from etclib.core.errors import EtcError

#: name -> module, imported only when that command runs.
COMMANDS: dict[str, str] = {
    "submit": "leaderboard.cli.submit",
    "entry": "leaderboard.cli.entry",
    "worker": "leaderboard.cli.worker",
    "status": "leaderboard.cli.status",
    "show": "leaderboard.cli.show",
    "export": "leaderboard.cli.export",
    "compare": "leaderboard.cli.compare",
    "seed-baselines": "leaderboard.cli.seed",
    "push": "leaderboard.cli.push",
    "migrate": "leaderboard.cli.migrate",
    "admin": "leaderboard.cli.admin",
}


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m leaderboard",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument(
        "--create",
        action="store_true",
        help="create the database file if it is missing (otherwise a missing file is refused)",
    )
    return command_parser(parser, COMMANDS, only, parents=[common])


def _start(args: argparse.Namespace) -> None:
    """Before any command: refuse a weak admin token; open (and check) the database."""
    from etclib.core import admintoken
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
    argv = list(sys.argv[1:] if argv is None else argv)
    command = next((a for a in argv if not a.startswith("-")), None)
    parser = build_parser(command if command in COMMANDS else None)
    args = parser.parse_args(argv)
    if not getattr(args, "_run", None):
        parser.print_help()
        return 0 if not argv else 2
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
