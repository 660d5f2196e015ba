"""What `etclib score --metrics bleu,rouge` and the corpus statistics leave unimported: the LLM
stack, the metrics it does not run, the studies. Counts of modules in a fresh interpreter, never
timings; and the provider options still shown and checked as before."""

from __future__ import annotations

import pytest

from etclib.cli import main
from etclib.llm.providers import names as provider_names


def test_provider_options_show_and_check_the_registered_names(capsys):
    with pytest.raises(SystemExit):
        main(["score", "--help"])
    shown = "{" + ",".join(provider_names()) + "}"
    assert f"--judge-provider {shown}" in capsys.readouterr().out
    with pytest.raises(SystemExit) as exc:
        main(["score", "x.jsonl", "--judge-provider", "nope"])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert "invalid choice: 'nope'" in err
    assert all(repr(name) in err for name in provider_names())
    with pytest.raises(SystemExit):
        main(["judge", "check", "--help"])
    assert f"--provider {shown}" in capsys.readouterr().out
