"""No provider text in public: a model server that echoes the key it got.

The fake server answers every request with 401 and ``Incorrect API key provided: Bearer <key>``,
as some servers do. With the key set to :data:`SECRET`, the judge's failure on the leaderboard,
the chat's failure and the model picker must never show the key, the provider's words or the
server's address to the public: not the ``status`` output, the board and per-item exports (CSV
and JSON), the public status history, nor (in the browser test) any page's HTML or websocket
traffic. The admin view still gets the provider's text, redacted.
"""

from __future__ import annotations

import pytest

from tests.fixtures.secrets import SECRET


@pytest.mark.parametrize(
    ("exc", "public_has"),
    [
        (RuntimeError(f"boom: Authorization: Bearer {SECRET} at http://10.0.0.7:8000/v1"), "ref "),
        (KeyError(SECRET), "ref "),
    ],
)
def test_an_unexpected_failure_is_public_as_a_reference(exc, public_has):
    from leaderboard.worker import failure_texts

    public, detail = failure_texts(exc)
    assert public_has in public and SECRET not in public and "10.0.0.7" not in public
    assert type(exc).__name__ in detail and SECRET not in detail
    ref = public.split("(ref ")[1].split(")")[0]
    assert ref in detail  # the log line and the public text meet at the reference
