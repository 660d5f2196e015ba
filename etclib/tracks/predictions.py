"""Predictions files (SPEC "Predictions file"): read, validate, write, and make templates.

A file is JSON Lines or CSV with the columns ``dialogue_id, turn, role`` and the track's field
(checked by ``Track.parse``); extra fields are ignored. It must hold exactly one prediction per
item of its split; anything else is refused with a ``PredictionsError`` listing the problems by
line, and a refused file is never partly scored. Limits: ``MAX_FILE_BYTES`` per file,
``MAX_PREDICTION_CHARS`` per prediction.
"""

from __future__ import annotations

import csv
import hashlib
import io
import itertools
import json
import os
import re
import unicodedata
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from etclib import tracks
from etclib.core.errors import PredictionsError, Problem, merge_runs
from etclib.core.jsonl import LongInt, dumps_line, shown
from etclib.data.corpus import ROLES, Corpus, load_corpus
from etclib.data.task import Key, items
from etclib.tracks import MAX_PREDICTION_CHARS as MAX_PREDICTION_CHARS  # a text track's limit

#: The largest predictions file, for the CLI, the library and the site alike: 10 MB (decimal
#: megabytes, the unit the browser's upload box counts in, so that the site says one figure).
MAX_FILE_BYTES = 10 * 1000 * 1000
#: The refusal of a larger file, word for word wherever it is refused.
TOO_BIG = (
    f"the file is larger than the limit of {MAX_FILE_BYTES // 10**6} MB ({MAX_FILE_BYTES:,} "
    "bytes); remove extra fields or check that it is the right file."
)
#: The hint for a file whose lines end in CR alone (read as one line).
CR_ONLY = (
    "the file's lines end in a carriage return (CR) alone, as on old Macs, so it reads as one "
    "line; save it with LF or CRLF line ends (any editor's 'Unix' or 'Windows' line endings)."
)
#: The format each file name suffix is read as (any other: sniffed from the text).
SUFFIX_FORMATS = {".jsonl": "jsonl", ".json": "jsonl", ".ndjson": "jsonl", ".csv": "csv"}
FORMAT_NAMES = {"jsonl": "JSON Lines", "csv": "CSV"}
FIELDS = ("dialogue_id", "turn", "role", "prediction")
KEY_FIELDS = FIELDS[:3]
TrackName = str | tracks.Track | None
#: How a refusal names the way to choose another track (the CLI's flag; a page passes its own).
Hint = Callable[[tracks.Track], str]


def flag_hint(track: tracks.Track) -> str:
    return f"--track {track.name}"


def fields_of(track: TrackName = None) -> tuple[str, ...]:
    return (*KEY_FIELDS, tracks.get(track).field)


#: The most problems a refusal lists (a later check lists the first ones and counts the rest),
#: so a crafted file cannot make a refusal large.
MAX_PROBLEMS = 1000
#: The most problems the parser finds before it stops reading, each counted whether or not it
#: joins the one before into a run of lines: 10 MB of "{}" lines are 3.3 million problems that
#: merge into one, and reading them all cost 80 times a valid file's check. Above the test
#: split's 1,010 items, so a test file wrong on every line is still one run.
MAX_FOUND = 2 * MAX_PROBLEMS


def shown_name(name: str) -> str:
    """A file name as messages show it: without control and format characters (Cf: U+202E
    would show "evil\u202egnp.jsonl" reversed)."""
    kept = "".join(ch for ch in name if unicodedata.category(ch) not in ("Cf", "Cc"))
    return kept.strip() or "predictions"


def refuse(name: str, problems: list[Problem], found: int | None = None) -> PredictionsError:
    """The refusal of file ``name`` for ``problems`` (``found`` of them in all), listing at most
    :data:`MAX_PROBLEMS`: the first ones by line, the whole-file ones, and a count of the rest."""
    found = max(found or 0, len(problems))
    problems = sorted(problems, key=lambda p: (p.line == 0, p.line))
    if found > MAX_PROBLEMS or len(problems) > MAX_PROBLEMS:
        whole = [p for p in problems if p.line == 0][: MAX_PROBLEMS // 2]
        lines = [p for p in problems if p.line != 0][: MAX_PROBLEMS - 1 - len(whole)]
        rest = found - len(lines) - len(whole)
        more = Problem(0, f"... and {rest:,} more problems, not listed; fix the ones above first.")
        problems = [*lines, *whole, more]
    return PredictionsError(name, problems, total=found)


@dataclass
class Predictions:
    """A validated predictions file: one prediction per item of ``split``."""

    split: str
    by_key: dict[Key, str]
    sha256: str
    format: str
    name: str = ""
    warnings: list[str] = field(default_factory=list)
    #: the track (:mod:`etclib.tracks`); ``by_key`` holds its values (``Track.parse``)
    track: str = tracks.DEFAULT_TRACK
    #: the file's size in bytes (0 when it was not read from a file)
    size: int = 0

    def __len__(self) -> int:
        return len(self.by_key)


# --- parsing --------------------------------------------------------------------------------
#
# A file is read line by line, split on "\n" only (a "\r" before it is dropped): U+2028, U+0085
# and the other characters str.splitlines() breaks on are text inside a prediction, so every
# file this module writes, it reads, and line numbers are those of an editor. Nothing a file
# holds can make the reader raise anything but PredictionsError: integers are bounded (the
# dialogue_id and turn fields), JSON nesting is bounded before a line is parsed, duplicate keys,
# NUL characters and unpaired surrogates are refused with their line.

#: The deepest JSON nesting a line may have (a record is depth 1; extra fields may nest a little).
MAX_DEPTH = 64
#: The most digits an integer in a predictions file may have (ids are small).
MAX_INT_DIGITS = 18
_CSV_INT = re.compile(rf"-?[0-9]{{1,{MAX_INT_DIGITS}}}")
_JSON_STRING = re.compile(r'"(?:[^"\\]|\\.)*"', re.DOTALL)
_NOT_BRACKET = re.compile(r"[^\[\]{}]+")
_STEP = {"[": 1, "{": 1, "]": -1, "}": -1}


class _LineRefusal(ValueError):
    """Raised inside ``json.loads`` hooks: the line is refused with this message."""


def _json_int(text: str) -> int | LongInt:
    return int(text) if len(text.lstrip("-")) <= MAX_INT_DIGITS else LongInt(text)


def _json_object(pairs: list[tuple[str, object]]) -> dict:
    obj: dict = {}
    for key, value in pairs:
        if key in obj:
            raise _LineRefusal(f"the key {shown(key)} appears twice in one object; keep one.")
        obj[key] = value
    return obj


def _too_deep(raw: str) -> bool:
    """Whether ``raw`` nests arrays/objects deeper than MAX_DEPTH, outside strings (no parsing)."""
    if raw.count("[") + raw.count("{") <= MAX_DEPTH:
        return False
    brackets = _NOT_BRACKET.sub("", _JSON_STRING.sub('""', raw))
    return max(itertools.accumulate(map(_STEP.__getitem__, brackets)), default=0) > MAX_DEPTH


def _decode(data: bytes, name: str) -> str:
    if data.startswith((b"\xff\xfe\x00\x00", b"\x00\x00\xfe\xff")):
        raise PredictionsError(name, [Problem(1, "the file is UTF-32; save it as UTF-8.")])
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


def _lines(text: str) -> Iterator[tuple[int, str]]:
    """``(line number, line)`` split on "\n" only, without a trailing "\r"; one at a time, so
    that a parser that stops early has not split the rest."""
    start = 0
    for n in itertools.count(1):
        end = text.find("\n", start)
        if end < 0:
            yield n, text[start:].removesuffix("\r")
            return
        yield n, text[start:end].removesuffix("\r")
        start = end + 1


class _Found(list[Problem]):
    """Problems in the order found, a run of one message on consecutive lines merged as it grows
    ("lines 1–1010", not 1,010 problems); ``count``: how many were found, merged or not."""

    def __init__(self, most: int | None = None) -> None:
        super().__init__()
        self.count = 0
        self.most = most

    def append(self, problem: Problem) -> None:
        self.count += 1
        run = merge_runs([self[-1], problem]) if self else []
        if len(run) == 1:
            self[-1] = run[0]
        else:
            super().append(problem)

    def full(self, line: int, text: str, records: int) -> bool:
        """Whether to stop reading at ``line``: after :data:`MAX_FOUND` problems, or more
        records than ``most``; the refusal then says where the check stopped."""
        if self.most is not None and records > self.most:
            why = (
                f"more than {self.most:,} records, and a file holds one per item of its split: "
                "remove the repeated and unknown items"
            )
        elif self.count >= MAX_FOUND:
            why = f"{self.count:,} problems: fix these first"
        else:
            return False
        total = text.count("\n") + 1
        super().append(Problem(0, f"the check stopped at line {line:,} of {total:,} after {why}."))
        return True


def _both(given: list[tracks.Track]) -> str:
    named = " and ".join(f"{t.field!r} (the {t.name} track)" for t in given)
    return (
        f"has both {named}; a file is for one track: keep only the field of the track you "
        "submit to."
    )


def _other_track(fields: Iterable[str], track: tracks.Track, hint: Hint) -> str:
    """Where ``fields`` are another track's: its field and how to choose it; else ""."""
    other = tracks.detect(set(fields))
    if other is None or other == track.name:
        return ""
    t = tracks.get(other)
    return f"{t.field!r}, the field of the {other} track: was it made for {hint(t)}?"


def _check_record(
    obj: dict,
    line: int,
    problems: list[Problem],
    track: tracks.Track,
    hint: Hint,
    csv_cell: bool = False,
) -> tuple[Key, object] | None:
    given = [t for t in tracks.TRACKS.values() if t.field in obj]
    if len(given) > 1:  # e.g. an ERC record with a stray "prediction": which track is meant?
        problems.append(Problem(line, f"this record {_both(given)}"))
        return None
    missing = [f for f in fields_of(track) if f not in obj]
    other = _other_track(obj, track, hint) if missing and track.field in missing else ""
    if other:
        problems.append(
            Problem(line, f"missing field(s): {', '.join(missing)}; this record has {other}")
        )
        return None
    if missing:
        expected = fields_of(track)
        unexpected = [shown(str(k)) for k in obj if k not in expected]
        more = f" and {len(unexpected) - 5:,} more" if len(unexpected) > 5 else ""
        found = (
            f"; found instead: {', '.join(unexpected[:5])}{more} (a record has "
            f"{', '.join(expected)}; other fields are ignored)"
            if unexpected
            else ""
        )
        problems.append(Problem(line, f"missing field(s): {', '.join(missing)}{found}."))
        return None
    ok = True
    for f in ("dialogue_id", "turn"):
        v = obj[f]
        if isinstance(v, bool) or not isinstance(v, int):
            problems.append(
                Problem(
                    line,
                    f"'{f}' must be an integer of at most {MAX_INT_DIGITS} digits, found "
                    f"{shown(v)}.",
                )
            )
            ok = False
    if not (isinstance(obj["role"], str) and obj["role"] in ROLES):
        problems.append(
            Problem(line, f'\'role\' must be "speaker" or "listener", found {shown(obj["role"])}.')
        )
        ok = False
    try:
        value = track.parse(obj[track.field], csv_cell)
    except ValueError as exc:
        problems.append(Problem(line, str(exc)))
        return None
    return ((obj["dialogue_id"], obj["turn"], obj["role"]), value) if ok else None


def _parse_json_line(raw: str) -> object:
    """One line's JSON value, or ``_LineRefusal`` with the reason (never another exception)."""
    nul = raw.find("\x00")
    if nul >= 0:
        raise _LineRefusal(f"contains a NUL character (U+0000) at column {nul + 1}; remove it.")
    if _too_deep(raw):
        raise _LineRefusal(
            f"JSON nested more than {MAX_DEPTH} levels deep; a record is one flat object."
        )
    try:
        return json.loads(raw, object_pairs_hook=_json_object, parse_int=_json_int)
    except json.JSONDecodeError as exc:
        msg = exc.msg.removesuffix(" at")  # "Invalid control character at"
        raise _LineRefusal(f"invalid JSON ({msg} at column {exc.colno}).") from None
    except RecursionError:  # not reached with MAX_DEPTH well under the recursion limit
        raise _LineRefusal(f"JSON nested more than {MAX_DEPTH} levels deep.") from None


def _parse_jsonl(
    text: str, problems: _Found, track: tracks.Track, hint: Hint
) -> list[tuple[int, Key, object]]:
    rows = []
    for n, raw in _lines(text):
        if problems.full(n, text, len(rows)):
            break
        if not raw.strip():
            continue
        try:
            obj = _parse_json_line(raw)
        except _LineRefusal as exc:
            problems.append(Problem(n, str(exc)))
            continue
        if not isinstance(obj, dict):
            problems.append(Problem(n, f"expected a JSON object, found {type(obj).__name__}."))
            continue
        rec = _check_record(obj, n, problems, track, hint)
        if rec:
            rows.append((n, *rec))
    return rows


def _parse_csv(
    text: str, problems: _Found, track: tracks.Track, hint: Hint
) -> list[tuple[int, Key, object]]:
    fields = fields_of(track)
    reader = csv.reader(io.StringIO(text, newline=""), strict=True)
    try:
        header = next(reader)
    except StopIteration:
        return []
    except csv.Error as exc:
        problems.append(Problem(1, f"invalid CSV header ({exc})."))
        return []
    header = [h.strip() for h in header]
    given = [t for t in tracks.TRACKS.values() if t.field in header]
    if len(given) > 1:
        problems.append(Problem(1, f"the CSV header {_both(given)}"))
        return []
    missing = [f for f in fields if f not in header]
    if missing:
        other = _other_track(header, track, hint)
        made = f" The header has {other}" if other else ""
        problems.append(
            Problem(
                1,
                f"CSV header must have the columns {', '.join(fields)};{made} missing: {', '.join(missing)} (found: {shown(', '.join(header) or 'nothing', 200)}).",
            )
        )
        return []
    twice = [h for i, h in enumerate(header) if h and h in header[:i]]
    if twice:
        problems.append(
            Problem(1, f"the CSV header names the column {shown(twice[0])} twice; keep one.")
        )
        return []
    col = {f: header.index(f) for f in fields}
    rows = []
    start = 2
    while True:
        if problems.full(start, text, len(rows)):
            break
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
        obj: dict = {f: row[col[f]] for f in fields}
        for f in ("dialogue_id", "turn"):
            v = obj[f].strip()
            obj[f] = int(v) if _CSV_INT.fullmatch(v) else v
        rec = _check_record(obj, line, problems, track, hint, csv_cell=True)
        if rec:
            rows.append((line, *rec))
    return rows


_JSON_START = re.compile(r"\s*\{")


def detect_format(name: str, text: str) -> str:
    known = SUFFIX_FORMATS.get(Path(name).suffix.lower())
    if known:
        return known
    return "jsonl" if _JSON_START.match(text) else "csv"


def detect_file_track(path: str | os.PathLike) -> str | None:
    """:func:`detect_track` of the file at ``path``; None when it cannot be read."""
    try:
        with open(path, "rb") as f:
            return detect_track(f.read(MAX_FILE_BYTES + 1), str(path))
    except OSError:
        return None


def detect_track(data: bytes, name: str = "predictions") -> str | None:
    """The track a file is for, from its first record's keys or its CSV header; None when it
    cannot tell (the default track then names what is missing). Never raises."""
    text = data.decode("utf-8", "replace").lstrip("\ufeff")
    if detect_format(name, text) == "jsonl":
        start = len(text) - len(text.lstrip())
        end = text.find("\n", start)
        try:
            obj = _parse_json_line(text[start : end if end >= 0 else None].removesuffix("\r"))
        except _LineRefusal:
            return None
        fields = set(obj) if isinstance(obj, dict) else set()
    else:
        try:
            header = next(csv.reader(io.StringIO(text, newline="")), [])
        except csv.Error:
            return None
        fields = {h.strip() for h in header}
    return tracks.detect(fields)


def parse(
    data: bytes,
    name: str = "predictions",
    track: TrackName = None,
    hint: Hint = flag_hint,
    most: int | None = None,
) -> tuple[str, list[tuple[int, Key, object]]]:
    """A file's bytes as ``(line, key, prediction)`` rows, or a refusal (also of more than
    ``most`` records)."""
    t = tracks.get(track)
    if len(data) > MAX_FILE_BYTES:
        raise PredictionsError(name, [Problem(0, TOO_BIG)])
    text = _decode(data, name)
    if not text or text.isspace():  # no stripped copy of a large file
        raise PredictionsError(name, [Problem(0, "the file is empty.")])
    fmt = detect_format(name, text)
    problems = _Found(most)
    rows = (_parse_jsonl if fmt == "jsonl" else _parse_csv)(text, problems, t, hint)
    if problems:
        if "\r" in text and "\n" not in text.strip():
            problems.insert(0, Problem(0, CR_ONLY))
        raise PredictionsError(name, merge_runs(problems))
    if not rows:
        raise PredictionsError(name, [Problem(0, "the file holds no prediction.")])
    return fmt, rows


def check_coverage(
    rows: list[tuple[int, Key, object]], split: str, corpus: Corpus, name: str
) -> dict[Key, object]:
    """Exactly one prediction per item of ``split``: no unknown, repeated or missing item."""
    expected = {it.key for it in items(corpus, split)}
    split_of = corpus.split_of
    problems: list[Problem] = []
    found = 0  # problems found; only the first MAX_PROBLEMS are kept
    seen: dict[Key, int] = {}
    out: dict[Key, object] = {}
    for line, key, pred in rows:
        if len(problems) > MAX_PROBLEMS:
            found += len(problems) - MAX_PROBLEMS
            del problems[MAX_PROBLEMS:]
        which = f"(dialogue_id={key[0]}, turn={key[1]}, role={key[2]})"
        if key in seen:
            problems.append(Problem(line, f"item {which} repeats line {seen[key]}."))
            continue
        seen[key] = line
        if key not in expected:
            other = split_of.get(key[0])
            if other is not None and 1 <= key[1] <= 5:
                problems.append(
                    Problem(
                        line,
                        f"item {which} belongs to the {other} split, not {split}; was the file made for --split {other}?",
                    )
                )
            else:
                problems.append(
                    Problem(line, f"unknown item {which}: no such utterance in the corpus.")
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
        raise refuse(name, problems, found + len(problems))
    return out


def check_values(
    by_key: dict[Key, object], name: str, track: TrackName = None
) -> dict[Key, object]:
    """A key -> value dict checked by the track as a file's values are (``Track.parse``)."""
    t = tracks.get(track)
    out: dict[Key, object] = {}
    problems: list[Problem] = []
    for key, value in by_key.items():
        try:
            out[key] = t.parse(value, cell=isinstance(value, str))
        except ValueError as exc:
            problems.append(Problem(0, f"item {key}: {exc}"))
    if problems:
        raise refuse(name, problems)
    return out


def read_predictions(
    source: str | os.PathLike | bytes,
    split: str = "test",
    corpus: Corpus | None = None,
    name: str | None = None,
    track: TrackName = None,
    hint: Hint = flag_hint,
) -> Predictions:
    """Read and validate a predictions file (a path, or its bytes with ``name``) of ``track``
    (default: detected, :func:`detect_track`)."""
    if isinstance(source, bytes):
        data, name = source, shown_name(name or "predictions")
    else:
        path = Path(source)
        name = name or str(path)
        if not path.exists():
            raise PredictionsError(name, [Problem(0, "no such file.")])
        if path.is_dir():
            raise PredictionsError(name, [Problem(0, "this is a folder, not a predictions file.")])
        with open(path, "rb") as f:  # also reads pipes such as /dev/stdin
            data = f.read(MAX_FILE_BYTES + 1)
    t = tracks.get(track or detect_track(data, name))
    corpus = corpus or load_corpus()
    # Beyond MAX_PROBLEMS records more than the split has items (as many problems as a refusal
    # lists), the rest is not worth reading: they can only be repeated or unknown items.
    fmt, rows = parse(data, name, t, hint, most=len(items(corpus, split)) + MAX_PROBLEMS)
    by_key = check_coverage(rows, split, corpus, name)
    warnings = []
    empty = sum(1 for p in by_key.values() if not t.encode(p).strip())
    if empty:
        warnings.append(f"{empty} predictions are empty; they score 0.")
    sha = hashlib.sha256(data).hexdigest()
    return Predictions(split, by_key, sha, fmt, name, warnings, t.name, len(data))


# --- writing --------------------------------------------------------------------------------


def record(key: Key, prediction: object, track: TrackName = None) -> dict:
    return {
        "dialogue_id": key[0],
        "turn": key[1],
        "role": key[2],
        tracks.get(track).field: prediction,
    }


def dumps_jsonl(rows: Iterable[tuple[Key, object]], track: TrackName = None) -> str:
    t = tracks.get(track)
    return "".join(dumps_line(record(k, p, t)) + "\n" for k, p in rows)


def dumps_csv(rows: Iterable[tuple[Key, object]], track: TrackName = None) -> str:
    """A CSV predictions file, RFC 4180. Keep the csv module's "\r\n": with another line
    terminator a field holding a lone "\r" is left unquoted, and a reader splits it there."""
    t = tracks.get(track)
    out = io.StringIO()
    w = csv.writer(out)
    w.writerow(fields_of(t))
    w.writerows([*k, t.encode(p)] for k, p in rows)
    return out.getvalue()


def template_rows(
    corpus: Corpus, split: str = "test", track: TrackName = None
) -> list[tuple[Key, object]]:
    """Every item of ``split`` with the track's blank prediction."""
    blank = tracks.get(track).blank
    return [(it.key, blank) for it in items(corpus, split)]
