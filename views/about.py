"""What the About page states: the signatures that scores depend on, read from etclib itself."""

from __future__ import annotations

from etclib.core.errors import EtcError


def metric_signatures() -> dict[str, str]:
    """Signature of each part of a score here (BERTScore and BLEU: described), or why not."""
    from etclib import __version__

    out: dict[str, str] = {"etclib": __version__}
    parts = {
        "tokenizer": lambda: __import__("etclib.data.tokenize", fromlist=["signature"]).signature(),
        "rouge": lambda: _metric("rouge"),
        "prompt": lambda: (
            __import__("etclib.data.task", fromlist=["x"]).prompt_template().signature
        ),
        "judge": _judge,
    }
    for name, get in parts.items():
        try:
            out[name] = get()
        except (EtcError, ImportError, OSError, RuntimeError) as exc:
            out[name] = f"unavailable here ({exc})"
    return out


def _metric(name: str) -> str:
    from etclib import metrics

    return metrics.get(name).signature(None)[name]


def _judge() -> str:
    from etclib.judge.runner import JudgeSettings

    return JudgeSettings.resolve().signature()


def metric_table() -> list[dict[str, str]]:
    """One row per result key of the default track's metrics, from the metrics' own facts."""
    from etclib import tracks

    return [
        {
            "metric": f.label,
            "key": f.key,
            "definition": f.definition,
            "unit": f.unit,
            "better": "higher" if f.higher_is_better else "lower",
            "ranking": "yes (interval, rank band)" if f.ranking else "no",
            "stage": f.stage,
        }
        for f in tracks.get().facts()
    ]


def ranking_rule() -> str:
    """The ranking rule in words, from the default track."""
    from etclib import tracks

    return tracks.get().ranking_rule()


def board_state() -> str:
    """What the board holds now, in words: its ranking, the paper's numbers, the trivial floors."""
    import leaderboard as lb
    from views.board import floor_values_of, honesty_note, judged, metric_label
    from views.errors import board_unavailable

    try:
        ranking = lb.ranking()
        published = lb.reported()
    except lb.StorageError as exc:  # logged for the operator; About itself does not need it
        board_unavailable(exc, show=False)
        return "The board of this site is unavailable right now; see the Leaderboard page later."
    parts = []
    if ranking.empty:
        parts.append("The board of this site has no scored entry yet.")
    else:
        metric = str(ranking.attrs.get("sort_by"))
        parts.append(
            f"The board of this site has {len(ranking)} scored entries and is ranked by "
            f"{metric_label(metric)}" + (" (judge scores are present)." if judged(ranking) else ".")
        )
        floors = floor_values_of(ranking, metric)
        if floors:
            parts.append(
                "Trivial baselines, drawn as floors: "
                + ", ".join(f"{name} {value:.2f}" for name, value in floors.items())
                + "; an entry below the constant one is flagged."
            )
        note = honesty_note(ranking)
        if note:
            parts.append(note.replace("**", ""))
    parts.append(
        f"The paper's own numbers ({len(published)} rows) are shown as *reported*, apart from the "
        "rows this site scored."
        if not published.empty
        else "The paper's own numbers are not loaded on this site."
    )
    return " ".join(parts)
