"""Study 1: judge-labels runs against the loopback fake LLM server, stored and compared."""

from __future__ import annotations

import re

import pytest

from etclib.core.errors import JudgeError
from etclib.data.corpus import CATEGORIES, CATEGORY_TO_JA
from etclib.studies import labeljudge
from etclib.tracks.categories import labels
from tests.studies_engines import studies_db  # noqa: F401 - fixture: DuckDB and PostgreSQL

PARSE_CASES = [
    ('{"labels": ["喜び"]}', ("joy",)),
    ('{"labels": ["驚き", "喜び"]}', ("joy", "surprise")),  # CATEGORIES order
    ('```json\n{"labels": ["sadness", "Anger"]}\n```', ("sadness", "anger")),
    ('答え: {"labels": []} です', ("neutral",)),
    ('{"labels": ["該当なし", "恐怖"]}', ("fear",)),  # neutral is never combined
    ('{"labels": ["該当なし"]}', ("neutral",)),
]


@pytest.mark.parametrize(("text", "expected"), PARSE_CASES)
def test_parse_labels(text, expected):
    assert labels.parse_labels(text) == expected


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("喜び", "no JSON"),
        ('{"labels": ["喜び"', "no JSON"),
        ('{"labels": "喜び"}', "labels"),
        ('{"labels": ["楽しさ"]}', "unknown category '楽しさ'"),
        ("{not json}", "not valid JSON"),
    ],
)
def test_parse_labels_refuses(text, message):
    with pytest.raises(JudgeError, match=re.escape(message)):
        labels.parse_labels(text)


def test_prompt_is_versioned_and_has_every_category():
    prompt = labeljudge.load_prompt()
    assert prompt.version >= 1 and len(prompt.digest) == 64
    user = prompt.messages("嬉しかった。")[1]["content"]
    assert user.rstrip().endswith("嬉しかった。")
    for c in CATEGORIES:
        assert CATEGORY_TO_JA[c] in user
