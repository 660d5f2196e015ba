"""The leaderboard: submitting, the scoring queue, limits, crash recovery, moderation, export."""

from __future__ import annotations

import pytest


def test_cli_help_has_examples(capsys):
    from leaderboard.__main__ import main

    with pytest.raises(SystemExit):
        main(["--help"])
    out = capsys.readouterr().out
    assert "Examples:" in out and "seed-baselines" in out
    for command in ("submit", "worker", "status", "show", "export", "seed-baselines", "admin"):
        with pytest.raises(SystemExit):
            main([command, "--help"])
        assert "Example" in capsys.readouterr().out
