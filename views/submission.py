"""The Submit page's data: the template, the check of an upload, and a submission's status. The
upload box takes any file, so a refused type is said in the page (:func:`upload_type_problem`)."""

from __future__ import annotations

import logging
import secrets
from dataclasses import dataclass, field
from pathlib import PurePath
from typing import Any

import pandas as pd

from etclib.core.errors import PredictionsError, Problem
from etclib.tracks import DEFAULT_TRACK
from etclib.tracks.predictions import Predictions

_log = logging.getLogger(__name__)

#: statuses that change no more by themselves (an incomplete one only by an admin's re-score)
FINAL_STATUSES = ("scored", "incomplete", "failed")


def template_bytes(fmt: str = "jsonl", split: str = "test", track: str | None = None) -> bytes:
    """Every item of ``split`` with the track's blank prediction, as JSON Lines or CSV."""
    from etclib.data.corpus import load_corpus
    from etclib.tracks.predictions import dumps_csv, dumps_jsonl, template_rows

    if fmt not in ("jsonl", "csv"):
        raise ValueError(f"unknown template format {fmt!r}: use 'jsonl' or 'csv'")
    rows = template_rows(load_corpus(), split, track)
    return (dumps_jsonl if fmt == "jsonl" else dumps_csv)(rows, track).encode("utf-8")


@dataclass
class Validation:
    """The immediate check of an uploaded predictions file (before any metadata)."""

    ok: bool
    name: str
    items: int = 0
    format: str = ""
    warnings: list[str] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    message: str = ""
    #: the track detected from the file's fields (etclib.tracks); the default when unknown
    track: str = DEFAULT_TRACK
    #: problems found (``problems`` lists at most etclib.tracks.predictions.MAX_PROBLEMS of them)
    problem_count: int = 0
    #: when ``ok``, the validated predictions: they travel to ``lb.submit`` (parsed once)
    predictions: Predictions | None = None


def template_hint(track: Any) -> str:
    """How a refusal names the way to another track: its template buttons."""
    return f'that track (its template: the "{track.template_label}" buttons above)'


def upload_types() -> list[str]:
    """The file name suffixes the Submit page takes, without the dot: ``jsonl``, ``csv``, ..."""
    from etclib.tracks.predictions import SUFFIX_FORMATS

    return [suffix.lstrip(".") for suffix in SUFFIX_FORMATS]


def accepted_types_text() -> str:
    """``JSON Lines (.jsonl, .json, .ndjson) or CSV (.csv)``: the accepted files, in words."""
    from etclib.tracks.predictions import FORMAT_NAMES, SUFFIX_FORMATS

    groups = {
        name: ", ".join(s for s, f in SUFFIX_FORMATS.items() if f == fmt)
        for fmt, name in FORMAT_NAMES.items()
    }
    return " or ".join(f"{name} ({suffixes})" for name, suffixes in groups.items())


def upload_type_problem(name: str) -> str | None:
    """Why a file called ``name`` is not taken (its type), or None."""
    suffix = PurePath(name).suffix.lower()
    if suffix.lstrip(".") in upload_types():
        return None
    what = f"a {suffix} file" if suffix else "a file without a type in its name"
    return (
        f"{what} is not taken here. Upload your predictions as {accepted_types_text()}; "
        "a file saved with another suffix can be renamed."
    )


def validate_upload(
    data: bytes, name: str, split: str = "test", track: str | None = None
) -> Validation:
    """Check an upload with etclib's reader, once; nothing raises out of here."""
    from etclib.core.errors import EtcError
    from etclib.tracks.predictions import detect_track, read_predictions, shown_name

    name = shown_name(name)
    wrong_type = upload_type_problem(name)
    if wrong_type:
        return Validation(False, name, problems=[Problem(0, wrong_type)], message=wrong_type)
    try:
        track = track or detect_track(data, name) or DEFAULT_TRACK
        preds = read_predictions(data, split=split, name=name, track=track, hint=template_hint)
    except PredictionsError as exc:
        return Validation(
            False,
            name,
            problems=list(exc.problems),
            message=str(exc),
            track=str(track),
            problem_count=exc.total,
        )
    except EtcError as exc:  # e.g. the corpus is missing: the site's problem, said plainly
        return Validation(False, name, problems=[Problem(0, str(exc))], message=str(exc))
    except Exception:
        ref = secrets.token_hex(4)
        _log.exception("checking the upload %r failed (reference %s)", name, ref)
        message = (
            f"the file could not be checked because of an error on our side (reference {ref}); "
            "it was logged. Nothing was stored; please report it with the reference."
        )
        return Validation(False, name, problems=[Problem(0, message)], message=message)
    return Validation(
        True,
        name,
        len(preds),
        preds.format,
        list(preds.warnings),
        track=preds.track,
        predictions=preds,
    )


#: How a problems table is drawn: rows tall enough for Streamlit 1.67 to wrap a message.
PROBLEMS_LAYOUT: dict[str, Any] = {"widths": {"problem": 640}, "row_height": 70}


def problems_config(columns: Any) -> dict[str, Any]:
    """``st.dataframe``'s ``column_config`` for a problems table (:data:`PROBLEMS_LAYOUT`)."""
    from views.fields import column_config

    return column_config(columns, **PROBLEMS_LAYOUT["widths"])


def show_problems(rows: Any, key: str, columns: Any = None) -> None:
    """A problems table (``columns``: its columns, when ``rows`` is no frame) as the page draws it."""
    import streamlit as st

    config = problems_config(rows.columns if columns is None else columns)
    st.dataframe(
        rows,
        hide_index=True,
        key=key,
        column_config=config,
        row_height=PROBLEMS_LAYOUT["row_height"],
    )


def problems_table(problems: list[Problem], limit: int = 50) -> pd.DataFrame:
    """The first ``limit`` problems as rows ``line`` (blank: the whole file) and ``problem``."""
    return pd.DataFrame(
        [{"line": p.lines, "problem": p.message} for p in problems[:limit]],
        columns=["line", "problem"],
    )


def submission_status(submission_id: str) -> dict[str, Any]:
    """``leaderboard.status`` of one submission, with ``final`` telling whether it can change."""
    import leaderboard as lb

    out = dict(lb.status(submission_id))
    out["final"] = out.get("status") in FINAL_STATUSES
    return out


def history_table(status: dict[str, Any]) -> pd.DataFrame:
    """A status's history as visitors see it: when, and which state."""
    rows = status.get("history") or []
    return pd.DataFrame(rows, columns=["at", "status"])
