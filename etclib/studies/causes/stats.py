"""The cause layer's figures for ``etclib stats``: the partner proxy over the corpus, the cause
types of the LLM's and the annotators' labels beside RECCON's (docs/causes.md)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from etclib.data.corpus import ROLES


def cause_stats(con, studies_db: str | Path | None = None) -> dict[str, Any]:
    """The cause layer's figures (see the module docstring), from a store cursor and the
    studies database (which is only read; a missing file reads as empty)."""
    from etclib.studies import causes

    rows = con.execute("SELECT role, transcription FROM utterances").fetchall()
    flags = [(role, causes.partner_reference(text, role)) for role, text in rows]
    proxy: dict[str, Any] = {
        "items": len(flags),
        "inter_personal": sum(y for _, y in flags),
        "words": list(causes.PARTNER_PATTERNS) + sorted(set(causes.ROLE_NOUNS.values())),
    }
    proxy["share"] = 100 * proxy["inter_personal"] / len(flags) if flags else float("nan")
    for r in ROLES:
        sub = [y for role, y in flags if role == r]
        proxy[r] = 100 * sum(sub) / len(sub) if sub else float("nan")
    return {
        "proxy": proxy,
        "llm": causes.type_distribution("llm", db=studies_db),
        "human": causes.type_distribution("human", db=studies_db),
        "reccon": causes.RECCON_SHARES,
    }


def format_causes(c: dict[str, Any]) -> str:
    """A human-readable report of :func:`cause_stats`'s result."""
    p = c["proxy"]
    lines = [
        "cause layer (docs/causes.md)",
        f"  proxy: transcriptions referring to the partner ({', '.join(p['words'])}): "
        f"{p['share']:.2f}% (speaker {p['speaker']:.2f}%, listener {p['listener']:.2f}%, "
        f"{p['inter_personal']:,} of {p['items']:,})",
        "  cause type        " + "".join(f"{k:>12}" for k in ("llm", "human", *c["reccon"])),
    ]
    for t in c["reccon"]["RECCON-DD"]:
        cells = []
        for k in ("llm", "human"):
            cells.append(f"{c[k]['reccon'][t]:>11.1f}%" if c[k] else f"{'–':>12}")
        cells += [f"{c['reccon'][name][t]:>11.0f}%" for name in c["reccon"]]
        lines.append(f"  {t:<16}" + "".join(cells))
    for k in ("llm", "human"):
        if c[k]:
            lines.append(f"  {k}: {c[k]['source']}, {c[k]['items']} items (shares over labels)")
    return "\n".join(lines)
