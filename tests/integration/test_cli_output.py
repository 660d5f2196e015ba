"""Text a reader meets outside the tables: the CLIs' output complete and aligned
(`--help` descriptions whole, `etclib score` printing the breakdowns `--json` has, its tables'
columns aligned), the docs listing every page, the upload limit as one figure on the page."""

from __future__ import annotations

import json
import re

import pytest

from tests.conftest import needs_corpus


def _columns_aligned(lines: list[str]) -> None:
    """Every row of a right-aligned table ends its cells where the header's cells end."""
    header = lines[0]
    ends = [m.end() for m in re.finditer(r"\S+", header)][1:]
    for line in lines[1:]:
        got = [m.end() for m in re.finditer(r"\S+(?: \S+)?", line)][-len(ends) :]
        assert got == ends, (header, line)


@needs_corpus
@pytest.mark.parametrize("track", ["transcription", "erc"])
def test_score_text_prints_the_breakdowns_of_the_json(corpus, tmp_path, capsys, track):
    from etclib.cli import main
    from etclib.data.task import items
    from etclib.tracks.predictions import dumps_jsonl

    its = items(corpus, "test")
    if track == "erc":
        rows = [(it.key, ("joy",) if i % 3 else it.label) for i, it in enumerate(its)]
        metrics = "erc"
    else:
        rows = [(it.key, it.utterance[:10] + "と思った") for it in its]
        metrics = "bleu,rouge"
    path = tmp_path / "preds.jsonl"
    path.write_text(dumps_jsonl(rows, track), encoding="utf-8")

    assert main(["score", str(path), "--metrics", metrics, "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert main(["score", str(path), "--metrics", metrics]) == 0
    text = capsys.readouterr().out
    lines = text.splitlines()
    for group, subsets in data["breakdown"].items():
        start = lines.index(f"breakdown by {group}:")
        table = lines[start + 1 : start + 2 + len(subsets)]
        header = table[0].split()
        assert header[:2] == [group, "items"]
        key = header[2]
        assert key in {"rougeL", "bleu1", "macro_f1"} or key in data
        for row in table[1:]:
            cells = row.split()
            subset = data["breakdown"][group][cells[0]]
            assert int(cells[1]) == subset["n_items"]
            shown = subset[key]
            assert cells[2] == ("-" if shown is None else f"{shown:.2f}")
        _columns_aligned(table)
    # the scores table: every key of the JSON's scores, values ending in one column
    start = next(i for i, line in enumerate(lines) if line.split()[:2] == ["metric", "score"])
    score_rows = lines[start + 1 : lines.index("breakdown by role:")]
    assert {r.split()[0] for r in score_rows} <= set(data)
    assert len({len(r.rstrip()) for r in score_rows}) == 1  # right-aligned: one end column
    if track == "erc":
        assert any(r.split()[0] == "precision_surprise" for r in score_rows)  # long keys fit
