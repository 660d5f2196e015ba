"""Files the CLI writes keep the mode of the file they replace, and a new one gets the mode the
umask gives, as any program's output does (not a temporary file's private 0600): a template or
predictions file shared in a lab stays readable to it."""

from __future__ import annotations

import os
import stat

import pytest

from etclib.cli import main


@pytest.fixture
def umask():
    """Set the process's umask for the test (restored after)."""
    before = os.umask(0o022)
    yield lambda mask: os.umask(mask)
    os.umask(before)


def mode(path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


COMMANDS = {
    "template.jsonl": ["template", "--split", "test"],
    "template.csv": ["template", "--split", "test"],
    "predictions.jsonl": ["predict", "--backend", "copy", "--split", "test"],
}


@pytest.mark.parametrize("name", COMMANDS)
@pytest.mark.parametrize("mask", [0o022, 0o002, 0o077])
def test_a_new_output_gets_the_mode_of_the_umask(tiny_corpus, tmp_path, umask, name, mask):
    out = tmp_path / name
    umask(mask)
    assert main([*COMMANDS[name], "--data", str(tiny_corpus), "--out", str(out)]) == 0
    assert mode(out) == 0o666 & ~mask
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]  # no temporary left


@pytest.mark.parametrize("name", COMMANDS)
@pytest.mark.parametrize("kept", [0o664, 0o640, 0o604])
def test_an_output_keeps_the_mode_of_the_file_it_replaces(tiny_corpus, tmp_path, umask, name, kept):
    out = tmp_path / name
    out.write_text("old\n", encoding="utf-8")
    out.chmod(kept)
    umask(0o077)
    assert main([*COMMANDS[name], "--data", str(tiny_corpus), "--out", str(out)]) == 0
    assert mode(out) == kept
    assert out.read_text(encoding="utf-8") != "old\n"
