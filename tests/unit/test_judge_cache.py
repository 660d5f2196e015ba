"""Judge answer cache: reuse across submissions and runs, dedupe, resume after a kill,
concurrent writers. Calls are counted on the fake server, through both SDKs."""

from __future__ import annotations

import pytest

from etclib.judge.cache import AnswerCache, request_key
from tests.fakes.judge_fixtures import judge_env  # noqa: F401 - fixture


def test_request_key_covers_everything_that_changes_the_answer():
    base = request_key("gemini", "m", "decompose-v1-aaaaaaaa", {"messages": ["x"], "t": 0})
    assert base == request_key("gemini", "m", "decompose-v1-aaaaaaaa", {"t": 0, "messages": ["x"]})
    for other in (
        request_key("openai", "m", "decompose-v1-aaaaaaaa", {"messages": ["x"], "t": 0}),
        request_key("gemini", "m2", "decompose-v1-aaaaaaaa", {"messages": ["x"], "t": 0}),
        request_key("gemini", "m", "decompose-v2-aaaaaaaa", {"messages": ["x"], "t": 0}),
        request_key("gemini", "m", "decompose-v1-aaaaaaaa", {"messages": ["y"], "t": 0}),
        request_key("gemini", "m", "decompose-v1-aaaaaaaa", {"messages": ["x"], "t": 1}),
    ):
        assert other != base


def test_unreadable_cache_file_says_what_to_do(tmp_path):
    bad = tmp_path / "judge.sqlite3"
    bad.write_bytes(b"this is not a database" * 100)
    from etclib.core.errors import JudgeError

    with pytest.raises(JudgeError, match="Delete the file"):
        AnswerCache(bad)
