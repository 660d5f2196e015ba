"""Study 2: judge decisions, annotator codes, answers, agreement and metric changes."""

from __future__ import annotations

import pandas as pd
import pytest

from etclib.studies import annotation as ann
from tests.fixtures.studies import (
    _annotation_admin,  # noqa: F401 - for every test here
    unit_rows,
)
from tests.studies_engines import studies_db  # noqa: F401 - fixture: DuckDB and PostgreSQL


@pytest.mark.parametrize(
    ("answers", "expected"),
    [
        ([], None),
        (["Supported"], "Supported"),
        (["Supported", "Supported", "Neutral"], "Supported"),
        (["Supported", "Neutral"], "Neutral"),
        (["Supported", "Not Supported", "Neutral"], "Not Supported"),
    ],
)
def test_human_label_rule(answers, expected):
    assert ann.human_label(answers) == expected


def test_submission_metrics_follow_spec():
    rows = pd.DataFrame(
        [
            # item A: 1 of 2 prediction units supported, 1 of 1 reference unit -> P .5 R 1 F 2/3
            (1, 1, "speaker", "precision", "Supported"),
            (1, 1, "speaker", "precision", "Neutral"),
            (1, 1, "speaker", "recall", "Supported"),
            # item B: no prediction units, 1 reference unit -> P = R = F = 0
            (1, 1, "listener", "recall", "Not Supported"),
            # item C: reference has no units -> excluded
            (1, 2, "speaker", "precision", "Supported"),
        ],
        columns=["dialogue_id", "turn", "role", "side", "label"],
    )
    m = ann.submission_metrics(rows)
    assert m["items"] == 2
    assert m["precision"] == pytest.approx(25.0)
    assert m["recall"] == pytest.approx(50.0)
    assert m["f1"] == pytest.approx(100 * (2 / 3) / 2)


def test_reading_a_missing_file_creates_nothing(tmp_path):
    # DuckDB only: this is about the file itself (a server database has no file to create)
    assert ann.pool() == {"sampled": 0, "waiting": 0, "answers": 0, "annotators": 0}
    assert ann.submissions().empty and ann.annotators().empty
    assert not (tmp_path / "studies.sqlite").exists()
    ann.add_decisions(unit_rows())
    assert (tmp_path / "studies.sqlite").is_file()
