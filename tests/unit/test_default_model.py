"""One default OpenAI model: named once, in etclib.llm.models, and read everywhere."""

from __future__ import annotations

import re
from pathlib import Path

from etclib.llm.models import OPENAI_DEFAULT_MODEL

REPO = Path(__file__).resolve().parents[2]
CODE = ("etclib", "leaderboard", "views", "site_pages")


def test_the_default_is_written_once_in_the_code():
    literal = re.compile("[\"']" + re.escape(OPENAI_DEFAULT_MODEL) + "[\"']")
    found = [
        str(path.relative_to(REPO))
        for folder in CODE
        for path in sorted((REPO / folder).rglob("*.py"))
        if literal.search(path.read_text(encoding="utf-8"))
    ]
    assert found == ["etclib/llm/models.py"]
    assert OPENAI_DEFAULT_MODEL.startswith("gpt-4.1")


def test_the_backend_and_the_chat_use_it(monkeypatch):
    from etclib.models import get_backend
    from views import chat

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    monkeypatch.delenv("ETC_OPENAI_MODEL", raising=False)
    assert get_backend("openai").model == OPENAI_DEFAULT_MODEL
    assert chat.choice("openai").label.startswith(f"{OPENAI_DEFAULT_MODEL} (")
    assert chat.choice("openai").reason == f"ready ({OPENAI_DEFAULT_MODEL})"


def test_the_docs_and_the_help_name_it(capsys):
    import pytest

    from etclib.cli import main

    models = (REPO / "docs/models.md").read_text(encoding="utf-8")
    row = next(ln for ln in models.splitlines() if ln.startswith("| openai | `ETC_OPENAI_MODEL`"))
    assert f"`{OPENAI_DEFAULT_MODEL}`" in row
    example = (REPO / ".streamlit/secrets.toml.example").read_text(encoding="utf-8")
    assert f'# ETC_OPENAI_MODEL = "{OPENAI_DEFAULT_MODEL}"' in example
    with pytest.raises(SystemExit):
        main(["predict", "--help"])
    assert OPENAI_DEFAULT_MODEL in capsys.readouterr().out
