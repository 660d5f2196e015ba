"""etclib.llm and etclib.core.redact without a server: the capability table, the decoding settings
each model gets, error classification, retry delays, and the redactor."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from etclib.core.redact import redact
from tests.fixtures.llm import _secret


@given(secret=_secret, before=st.text(max_size=40), after=st.text(max_size=40))
def test_a_configured_secret_never_survives(secret, before, after):
    out = redact(f"{before}{secret}{after}", secrets=[secret])
    assert secret not in out
