"""What the CLIs print: every command's ``--help`` description a whole sentence, and the
leaderboard's text tables aligned, Japanese names included."""

from __future__ import annotations

import re

import pytest


@pytest.mark.parametrize(
    ("doc", "expected"),
    [
        ("One line.\n\nMore.", "One line."),
        (
            "A sentence that wraps\nonto a second line. Then more.",
            "A sentence that wraps onto a second line.",
        ),
        ("Score BLEU-1..4, e.g. on test.\nNext.", "Score BLEU-1..4, e.g. on test."),
        ("No full stop at all", "No full stop at all"),
        ("", ""),
    ],
)
def test_summary_is_the_first_sentence_whole(doc, expected):
    from etclib.cli import summary

    assert summary(doc) == expected


def _command_helps(text: str) -> dict[str, str]:
    """COMMAND -> its help line(s), joined, from an argparse --help listing."""
    block = text.split("COMMAND\n", 2)[-1].split("\noptions:")[0]
    helps: dict[str, str] = {}
    name = None
    for line in block.splitlines():
        m = re.match(r"^    (\S+)(?:\s{2,}(.*))?$", line)
        if m:
            name = m.group(1)
            helps[name] = m.group(2) or ""
        elif name and line.strip():
            helps[name] = (helps[name] + " " + line.strip()).strip()
    return helps


def test_leaderboard_help_describes_every_command_whole(capsys):
    from leaderboard.cli import build_parser, main

    with pytest.raises(SystemExit):
        main(["--help"])
    helps = _command_helps(capsys.readouterr().out)
    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "command")
    assert set(helps) == set(sub.choices)
    for name, line in helps.items():
        assert line.endswith("."), (name, line)  # a whole sentence, never cut at a line end
        description = " ".join(sub.choices[name].description.split())
        assert description.startswith(line), (name, line)


def test_etclib_help_describes_every_command_whole(capsys):
    from etclib.cli import main

    with pytest.raises(SystemExit):
        main(["--help"])
    helps = _command_helps(capsys.readouterr().out)
    assert "score" in helps and "seed" not in helps
    for name, line in helps.items():
        assert line.endswith("."), (name, line)


def test_leaderboard_text_tables_align_japanese_names():
    from leaderboard.cli.text import columns as _width
    from leaderboard.cli.text import table as _table

    text = _table(
        ["rank", "name", "Macro-F1 ↑"], [["1", "いつも喜び", "12.00"], ["2", "joy", "3.00"]]
    )
    lines = text.splitlines()
    starts = {_width(line[: line.index(v)]) for line, v in zip(lines[2:], ["12.00", "3.00"])}
    assert starts == {_width(lines[0][: lines[0].index("Macro-F1")])}
