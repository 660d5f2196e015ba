"""What the Submit page shows a submitter of their own entries (``leaderboard.owners``): who
they are, their private edit link, where an entry stands, its history, in a visitor's words."""

from __future__ import annotations

from typing import Any

import pandas as pd

from leaderboard.metadata import EDITABLE
from views.fields import label

#: The Submit page's query parameter that carries an edit key (``/submit?edit=ID.SECRET``).
EDIT_PARAM = "edit"
#: The most edit keys one visitor's page keeps (this session's receipts and links).
MAX_KEYS = 20

VISIBILITY_WORDS = {
    "public": "on the board",
    "private": "private: only you see it",
    "withdrawn": "withdrawn",
    "hidden": "hidden by the moderators",
}
CHANGE_WORDS = {key: label(key) for key in ("status", *EDITABLE, "visibility")}


def owner(visitor: Any, keys: list[str] | tuple[str, ...] = ()) -> Any:
    """The ``leaderboard.Owner`` a visitor is: their account and the edit keys their page holds."""
    import leaderboard as lb

    account = visitor.key if visitor is not None and visitor.kind == "account" else None
    return lb.Owner(account_key=account, edit_keys=tuple(keys))


def kept_keys(keys: list[str], new: str | None) -> list[str]:
    """``keys`` with ``new`` first (once), at most :data:`MAX_KEYS`."""
    if not new:
        return keys
    return [new, *[k for k in keys if k != new]][:MAX_KEYS]


def edit_link(page_url: str, key: str) -> str:
    """The private edit link of ``key``: the Submit page's address with ``?edit=KEY``."""
    base = (page_url or "/submit").split("?", 1)[0].split("#", 1)[0]
    return f"{base}?{EDIT_PARAM}={key}"


def standing_view(standing: dict[str, Any], track_title: str) -> tuple[str, pd.DataFrame]:
    """``leaderboard.standing`` as a sentence (the rank) and a table of the main scores."""
    from views.board import interval_text, metric_label

    if standing["rank"] is None:
        head = "Not ranked on the board: it is private, withdrawn or hidden, or not scored yet."
    else:
        head = (
            f"Rank {standing['rank']} (band {standing['rank_band']}) of {standing['of']} on the "
            f"{track_title} board, by {metric_label(standing['sort_by'])}."
        )
    rows = [
        {"metric": metric_label(key), "score [95% CI]": interval_text(*values)}
        for key, values in standing["scores"].items()
    ]
    return head, pd.DataFrame(rows, columns=["metric", "score [95% CI]"])


def history_view(history: pd.DataFrame) -> pd.DataFrame:
    """``leaderboard.entry_history`` for display: when, what, from, to, by (in words)."""
    out = history.copy()
    out["what"] = [CHANGE_WORDS.get(w, w) for w in out["what"]]
    for col in ("from", "to"):
        out[col] = [
            VISIBILITY_WORDS.get(v, v) if w == "visibility" else v
            for w, v in zip(history["what"], out[col])
        ]
    return out.rename(columns={"at": "when (UTC)"})


def quota_text(quota: dict[str, Any], counted_by: str) -> str:
    """How many submissions are left today: ``You can submit 3 more today (of 5 per …)``."""
    return (
        f"You can submit {quota['left']} more today (of {quota['limit']} per {counted_by} per "
        f"UTC day; the count starts again at {quota['resets']:%H:%M} UTC)."
    )
