"""The PostgreSQL dialect's query text (one text for every engine) and redacted URLs."""

from __future__ import annotations

import pytest

from etclib.storage import redacted
from etclib.storage.dialects.postgresql import translate


@pytest.mark.parametrize(
    ("sql", "expected"),
    [
        ("SELECT ?", "SELECT %s"),
        ("SELECT * FROM t WHERE a = ? AND b = ?", "SELECT * FROM t WHERE a = %s AND b = %s"),
        ("SELECT '?' , ?", "SELECT '?' , %s"),
        (
            "SELECT \"a?\" FROM t WHERE x LIKE 'ab%' AND y = ?",
            "SELECT \"a?\" FROM t WHERE x LIKE 'ab%%' AND y = %s",
        ),
        ("SELECT 10 % 3, ?", "SELECT 10 %% 3, %s"),
        ("SELECT '日本語？', ?", "SELECT '日本語？', %s"),
        ("SELECT 'it''s ?', ?", "SELECT 'it''s ?', %s"),
        ("", ""),
    ],
)
def test_translate(sql, expected):
    assert translate(sql) == expected


def test_translate_without_parameters_leaves_the_text():
    assert translate("SELECT 10 % 3 WHERE '?'", has_params=False) == "SELECT 10 % 3 WHERE '?'"


def test_redacted_hides_the_password_only():
    assert redacted("postgresql://etc:s3cret@db:5432/lb") == "postgresql://etc:***@db:5432/lb"
    assert redacted("postgresql://db/lb") == "postgresql://db/lb"
