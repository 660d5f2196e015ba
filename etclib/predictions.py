"""Predictions files (SPEC "Predictions file"): read, validate, write, and make templates.

A file is JSON Lines (one object per line) or CSV with the columns ``dialogue_id, turn, role,
prediction``; extra fields are ignored. It must hold exactly one prediction for every item of the
split it is scored on. Anything else is refused with a ``PredictionsError`` that lists the
problems with their line numbers; a refused file is never partly scored.

Limits (documented in the README): a file of at most ``MAX_FILE_BYTES`` and a prediction of at
most ``MAX_PREDICTION_CHARS`` characters.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import os
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from .corpus import ROLES, Corpus, load_corpus
from .errors import PredictionsError, Problem
from .task import Key, items

MAX_FILE_BYTES = 10 * 1024 * 1024
MAX_PREDICTION_CHARS = 2000
FIELDS = ("dialogue_id", "turn", "role", "prediction")
_MAX_PROBLEMS = 1000


@dataclass
class Predictions:
    """A validated predictions file: one prediction per item of ``split``."""

    split: str
    by_key: dict[Key, str]
    sha256: str
    format: str
    name: str = ""
    warnings: list[str] = field(default_factory=list)

    def __len__(self) -> int:
        return len(self.by_key)


# --- parsing --------------------------------------------------------------------------------


def _decode(data: bytes, name: str) -> str:
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        raise PredictionsError(name, [Problem(1, "the file is UTF-16; save it as UTF-8.")])
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]  # a UTF-8 byte-order mark is tolerated and dropped
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise PredictionsError(
            name, [Problem(line, f"not valid UTF-8 (byte 0x{data[exc.start]:02x}); save as UTF-8.")]
        ) from None


def _check_record(obj: dict, line: int, problems: list[Problem]) -> tuple[Key, str] | None:
    missing = [f for f in FIELDS if f not in obj]
    if missing:
        problems.append(Problem(line, f"missing field(s): {', '.join(missing)}."))
        return None
    ok = True
    for f in ("dialogue_id", "turn"):
        v = obj[f]
        if isinstance(v, bool) or not isinstance(v, int):
            problems.append(
                Problem(
                    line, f"'{f}' must be an integer, found {json.dumps(v, ensure_ascii=False)}."
                )
            )
            ok = False
    if obj["role"] not in ROLES:
        problems.append(
            Problem(
                line,
                f'\'role\' must be "speaker" or "listener", found {json.dumps(obj["role"], ensure_ascii=False)}.',
            )
        )
        ok = False
    pred = obj["prediction"]
    if not isinstance(pred, str):
        problems.append(
            Problem(
                line,
                f"'prediction' must be a string, found {type(pred).__name__ if pred is not None else 'null'}.",
            )
        )
        ok = False
    elif len(pred) > MAX_PREDICTION_CHARS:
        problems.append(
            Problem(
                line, f"prediction has {len(pred)} characters; the limit is {MAX_PREDICTION_CHARS}."
            )
        )
        ok = False
    if not ok:
        return None
    return (obj["dialogue_id"], obj["turn"], obj["role"]), pred


def _parse_jsonl(text: str, problems: list[Problem]) -> list[tuple[int, Key, str]]:
    rows = []
    for n, raw in enumerate(text.splitlines(), start=1):
        if len(problems) >= _MAX_PROBLEMS:
            break
        if not raw.strip():
            continue
        try:
            obj = json.loads(raw)
        except json.JSONDecodeError as exc:
            problems.append(Problem(n, f"invalid JSON ({exc.msg} at column {exc.colno})."))
            continue
        if not isinstance(obj, dict):
            problems.append(Problem(n, f"expected a JSON object, found {type(obj).__name__}."))
            continue
        rec = _check_record(obj, n, problems)
        if rec:
            rows.append((n, *rec))
    return rows


def _parse_csv(text: str, problems: list[Problem]) -> list[tuple[int, Key, str]]:
    reader = csv.reader(io.StringIO(text, newline=""), strict=True)
    try:
        header = next(reader)
    except StopIteration:
        return []
    except csv.Error as exc:
        problems.append(Problem(1, f"invalid CSV header ({exc})."))
        return []
    header = [h.strip() for h in header]
    missing = [f for f in FIELDS if f not in header]
    if missing:
        problems.append(
            Problem(
                1,
                f"CSV header must have the columns {', '.join(FIELDS)}; missing: {', '.join(missing)} (found: {', '.join(header) or 'nothing'}).",
            )
        )
        return []
    col = {f: header.index(f) for f in FIELDS}
    rows = []
    start = 2
    while len(problems) < _MAX_PROBLEMS:
        try:
            row = next(reader)
        except StopIteration:
            break
        except csv.Error as exc:
            problems.append(Problem(reader.line_num, f"invalid CSV ({exc})."))
            break
        line = start
        start = reader.line_num + 1
        if not any(c.strip() for c in row):
            continue
        if len(row) != len(header):
            problems.append(
                Problem(line, f"row has {len(row)} cells, the header has {len(header)}.")
            )
            continue
        obj: dict = {f: row[col[f]] for f in FIELDS}
        for f in ("dialogue_id", "turn"):
            v = obj[f].strip()
            obj[f] = int(v) if v.lstrip("-").isdigit() else v
        rec = _check_record(obj, line, problems)
        if rec:
            rows.append((line, *rec))
    return rows


def detect_format(name: str, text: str) -> str:
    suffix = Path(name).suffix.lower()
    if suffix in (".jsonl", ".json", ".ndjson"):
        return "jsonl"
    if suffix == ".csv":
        return "csv"
    return "jsonl" if text.lstrip().startswith("{") else "csv"


def parse(data: bytes, name: str = "predictions") -> tuple[str, list[tuple[int, Key, str]]]:
    """Decode and parse a file's bytes into ``(line, key, prediction)`` rows, or refuse it."""
    if len(data) > MAX_FILE_BYTES:
        raise PredictionsError(
            name,
            [Problem(0, f"the file has {len(data):,} bytes; the limit is {MAX_FILE_BYTES:,}.")],
        )
    text = _decode(data, name)
    if not text.strip():
        raise PredictionsError(name, [Problem(0, "the file is empty.")])
    fmt = detect_format(name, text)
    problems: list[Problem] = []
    rows = (_parse_jsonl if fmt == "jsonl" else _parse_csv)(text, problems)
    if problems:
        raise PredictionsError(name, problems)
    if not rows:
        raise PredictionsError(name, [Problem(0, "the file holds no prediction.")])
    return fmt, rows


def check_coverage(
    rows: list[tuple[int, Key, str]], split: str, corpus: Corpus, name: str
) -> dict[Key, str]:
    """Exactly one prediction per item of ``split``: no unknown, repeated or missing item."""
    expected = {it.key for it in items(corpus, split)}
    split_of = corpus.split_of
    problems: list[Problem] = []
    seen: dict[Key, int] = {}
    out: dict[Key, str] = {}
    for line, key, pred in rows:
        shown = f"(dialogue_id={key[0]}, turn={key[1]}, role={key[2]})"
        if key in seen:
            problems.append(Problem(line, f"item {shown} repeats line {seen[key]}."))
            continue
        seen[key] = line
        if key not in expected:
            other = split_of.get(key[0])
            if other is not None and 1 <= key[1] <= 5:
                problems.append(
                    Problem(
                        line,
                        f"item {shown} belongs to the {other} split, not {split}; was the file made for --split {other}?",
                    )
                )
            else:
                problems.append(
                    Problem(line, f"unknown item {shown}: no such utterance in the corpus.")
                )
            continue
        out[key] = pred
    absent = sorted(expected - set(out))
    if absent:
        first = ", ".join(f"({d}, {t}, {r})" for d, t, r in absent[:5])
        problems.append(
            Problem(
                0,
                f"{len(absent)} of the {len(expected)} items of the {split} split have no prediction; first missing (dialogue_id, turn, role): {first}.",
            )
        )
    if problems:
        problems.sort(key=lambda p: (p.line == 0, p.line))
        raise PredictionsError(name, problems)
    return out


def read_predictions(
    source: str | os.PathLike | bytes,
    split: str = "test",
    corpus: Corpus | None = None,
    name: str | None = None,
) -> Predictions:
    """Read and validate a predictions file (a path, or its bytes with ``name``)."""
    if isinstance(source, bytes):
        data, name = source, name or "predictions"
    else:
        path = Path(source)
        name = name or str(path)
        if not path.exists():
            raise PredictionsError(name, [Problem(0, "no such file.")])
        if path.is_dir():
            raise PredictionsError(name, [Problem(0, "this is a folder, not a predictions file.")])
        with open(path, "rb") as f:  # also reads pipes such as /dev/stdin
            data = f.read(MAX_FILE_BYTES + 1)
    fmt, rows = parse(data, name)
    corpus = corpus or load_corpus()
    by_key = check_coverage(rows, split, corpus, name)
    warnings = []
    empty = sum(1 for p in by_key.values() if not p.strip())
    if empty:
        warnings.append(f"{empty} predictions are empty; they score 0.")
    return Predictions(split, by_key, hashlib.sha256(data).hexdigest(), fmt, name, warnings)


# --- writing --------------------------------------------------------------------------------


def record(key: Key, prediction: str) -> dict:
    return {"dialogue_id": key[0], "turn": key[1], "role": key[2], "prediction": prediction}


def dumps_jsonl(rows: Iterable[tuple[Key, str]]) -> str:
    return "".join(json.dumps(record(k, p), ensure_ascii=False) + "\n" for k, p in rows)


def write_jsonl(path: str | os.PathLike, rows: Iterable[tuple[Key, str]]) -> Path:
    """Write a whole predictions file atomically (a crash leaves the old file or the new one)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as f:
            f.write(dumps_jsonl(rows))
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def template_rows(corpus: Corpus, split: str = "test") -> list[tuple[Key, str]]:
    """Every item of ``split`` with an empty prediction, for submitters to fill."""
    return [(it.key, "") for it in items(corpus, split)]
