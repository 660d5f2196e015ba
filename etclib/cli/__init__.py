"""The ``etclib`` command line: one entry point, one module per subcommand.

Each module in this package defines ``add_arguments(parser)`` and ``run(args) -> int``; its
docstring is its ``--help`` text. Adding a command means one new module and one line in
``COMMANDS``.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from etclib import __version__
from etclib.core import registry
from etclib.core.errors import EtcError

#: name -> module, imported only when that command runs (keeps `etclib --help` fast).
COMMANDS: dict[str, str] = {
    "stats": "etclib.cli.stats",
    "validate": "etclib.cli.validate",
    "template": "etclib.cli.template",
    "score": "etclib.cli.score",
    "compare": "etclib.cli.compare",
    "predict": "etclib.cli.predict",
    "train": "etclib.cli.train",
    "download": "etclib.cli.download",
    "db": "etclib.cli.db",
    "judge": "etclib.cli.judge",
    "judge-labels": "etclib.cli.judge_labels",
    "causes": "etclib.cli.causes",
    "studies": "etclib.cli.studies",
}


def summary(doc: str | None) -> str:
    """A command's one-line help: the first sentence of its docstring, its lines joined."""
    import re

    paragraph = (doc or "").strip().split("\n\n")[0]
    text = " ".join(line.strip() for line in paragraph.splitlines())
    end = re.search(r"[.!?](?=\s+[A-Z(`]|\s*$)", text)
    return text[: end.end()] if end else text


def command_parser(
    parser: argparse.ArgumentParser,
    commands: dict[str, str],
    only: str | None = None,
    parents: Sequence[argparse.ArgumentParser] = (),
) -> argparse.ArgumentParser:
    """A subcommand of ``parser`` per module of ``commands`` (its docstring, ``add_arguments``,
    ``run``); with ``only``, the others are listed without importing their modules."""
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, module_name in commands.items():
        if only is not None and name != only:
            sub.add_parser(name, add_help=False)
            continue
        module = importlib.import_module(module_name)
        p = sub.add_parser(
            name,
            help=summary(module.__doc__),
            description=module.__doc__,
            formatter_class=argparse.RawDescriptionHelpFormatter,
            parents=list(parents),
        )
        module.add_arguments(p)
        p.set_defaults(_run=module.run)
    return parser


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="etclib",
        description="Emotion Transcription in Conversation (ETC) benchmark tools.",
    )
    parser.add_argument("--version", action="version", version=f"etclib {__version__}")
    return command_parser(parser, COMMANDS, only)


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    command = next((a for a in argv if not a.startswith("-")), None)
    if command is not None and command not in COMMANDS:
        print(f"etclib: error: {registry.unknown('command', command, COMMANDS)}", file=sys.stderr)
        return 2
    only = command
    parser = build_parser(only) if only else build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "_run", None):
        parser.print_help()
        return 0 if not argv else 2
    try:
        return int(args._run(args) or 0)
    except EtcError as exc:
        print(f"etclib {args.command}: error: {exc}", file=sys.stderr)
        detail = getattr(exc, "detail", "")
        if detail:  # a provider's text, already redacted: for the operator at the terminal
            print(f"  detail: {detail}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        print(f"etclib {args.command}: interrupted.", file=sys.stderr)
        return 130


def provider_names() -> tuple[str, ...]:
    """The LLM providers a ``--provider`` option takes (the registry's names)."""
    from etclib.llm.providers import names

    return names()


class LazyChoices(Sequence):
    """An option's choices read from a registry when argparse first needs them, so a command
    run without the option never imports the registry (the LLM stack, for ``--judge-provider``)."""

    def __init__(self, names: Callable[[], Iterable[str]]) -> None:
        self._load = names
        self._names: tuple[str, ...] | None = None

    def _all(self) -> tuple[str, ...]:
        if self._names is None:
            self._names = tuple(self._load())
        return self._names

    def __getitem__(self, i):  # type: ignore[override]
        return self._all()[i]

    def __len__(self) -> int:
        return len(self._all())


def add_provider_argument(parser: Any, *flags: str, **kwargs: Any) -> argparse.Action:
    """``--provider``-like option taking a registered LLM provider's name, as
    ``choices=provider_names()`` would (set after ``add_argument``, which formats choices once)."""
    action = parser.add_argument(*flags, **kwargs)
    action.choices = LazyChoices(provider_names)
    return action


def add_data_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--data",
        metavar="DIR",
        help="corpus folder holding dialogues/ (default: $ETC_DATA_DIR, else data/ETCDataset/etc)",
    )


def add_judge_prompts_argument(parser: Any) -> None:
    """``--judge-prompts SET`` on a parser or argument group: the LLM judge's prompt set."""
    parser.add_argument(
        "--judge-prompts",
        metavar="SET",
        help="judge prompt set: v2 (default: the paper's rules) or v1 (the first prompts, to "
        "compare) ($ETC_JUDGE_PROMPTS)",
    )


def add_json_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true", help="print machine-readable JSON")


def add_track_argument(parser: argparse.ArgumentParser, detect: bool = False) -> None:
    from etclib.tracks import DEFAULT_TRACK, TRACKS

    parser.add_argument(
        "--track",
        choices=list(TRACKS),
        default=None if detect else DEFAULT_TRACK,
        help=" or ".join(f"{t.name} (a {t.field!r} per item)" for t in TRACKS.values())
        + (
            "; default: detected from the file's fields"
            if detect
            else f" (default: {DEFAULT_TRACK})"
        ),
    )
