"""The cause labels leave: JSON Lines with a licence header, or RECCON's JSON layout."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from etclib import __version__
from etclib.core.errors import ConfigError
from etclib.core.jsonl import dumps_line
from etclib.data.corpus import Corpus
from etclib.studies.causes.human import human_majority
from etclib.studies.causes.llm import _latest_run, run_causes
from etclib.studies.causes.store import _Db, _split
from etclib.studies.causes.typology import CAUSE_TYPES, Key, cause_type, reccon_labels, turn_role

LICENCE = (
    "CC BY-NC 4.0: derived from the ETC corpus (github.com/UEC-InabaLab/ETCDataset), which is "
    "licensed CC BY-NC 4.0; cite the ETC paper and follow the dataset's use guidelines."
)


def export_records(*, db: str | Path | None = None) -> list[dict[str, Any]]:
    """Every stored cause label as a JSON-able record after a header with the licence.

    Human annotators become ``annotator-1``, ``annotator-2``, ... in order of their first
    answer (their ids and codes never leave); LLM rows carry their run's signature.
    """
    with _Db(db, read_only=True) as con:
        rows = con.execute(
            "SELECT l.source, l.source_id, l.dialogue_id, l.turn, l.role, l.causes, r.signature, "
            "l.labelled_at FROM cause_labels l LEFT JOIN cause_runs r "
            "ON l.source = 'llm' AND r.run_id = l.source_id "
            "WHERE l.causes IS NOT NULL ORDER BY l.labelled_at, l.dialogue_id, l.turn, l.role, "
            "l.source, l.source_id"
        ).fetchall()
    alias: dict[str, str] = {}
    out: list[dict[str, Any]] = [
        {
            "record": "header",
            "dataset": "ETC cause layer (docs/causes.md)",
            "licence": LICENCE,
            "cause_types": list(CAUSE_TYPES),
            "etclib_version": __version__,
        }
    ]
    for source, source_id, d, t, r, causes, sig, _ in rows:
        key = (int(d), int(t), str(r))
        pos = _split(causes)
        if source == "human":
            labeller = alias.setdefault(source_id, f"annotator-{len(alias) + 1}")
        else:
            labeller = f"llm-run-{source_id}"
        out.append(
            {
                "record": "label",
                "dialogue_id": key[0],
                "turn": key[1],
                "role": key[2],
                "source": source,
                "labeller": labeller,
                "signature": sig,
                "causes": [list(turn_role(p)) for p in pos],
                "cause_type": cause_type(key, pos),
                "reccon_labels": list(reccon_labels(key, pos)),
            }
        )
    return out


def export_jsonl(out: str | Path, *, db: str | Path | None = None) -> int:
    """Write :func:`export_records` to ``out`` as JSON Lines; returns the number of labels."""
    records = export_records(db=db)
    path = Path(out)
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        for rec in records:
            f.write(dumps_line(rec) + "\n")
    return len(records) - 1


# --- RECCON's layout ---------------------------------------------------------------------------

#: The RECCON commit whose data files and README define the layout :func:`reccon_layout` writes
#: (github.com/declare-lab/RECCON, data/original_annotation/dailydialog_train.json and README.md).
RECCON_COMMIT = "579ea8a726f6705f7a3a02f7535b8f5595ec35aa"
#: ETC category -> RECCON's emotion name (its DailyDialog part names joy "happiness").
RECCON_EMOTION = {
    "joy": "happiness",
    "sadness": "sadness",
    "fear": "fear",
    "anger": "anger",
    "surprise": "surprise",
    "disgust": "disgust",
    "neutral": "neutral",
}
#: RECCON's mark for a latent cause (no utterance of the dialogue) in evidence and span lists.
RECCON_LATENT = "b"
EVIDENCE = "expanded emotion cause evidence"
SPAN = "expanded emotion cause span"


def _source_sets(
    source: str, run_id: str | None, db: str | Path | None
) -> tuple[dict[Key, tuple[int, ...]], str]:
    """The cause sets of ``source`` (``human``: the majority of items with 2+ answers; ``llm``:
    run ``run_id``, default the newest) and the source's name."""
    if source == "human":
        return human_majority(db=db), "human majority"
    if source == "llm":
        run = run_id or _latest_run(db)
        if run is None:
            raise ConfigError("No LLM cause run is stored; run `etclib causes` first.")
        return run_causes(run, db=db), f"llm run {run}"
    raise ConfigError(f"Unknown cause source {source!r} for the export: use human or llm.")


def reccon_layout(
    corpus: Corpus,
    *,
    source: str = "human",
    run_id: str | None = None,
    db: str | Path | None = None,
) -> dict[str, list[list[dict[str, Any]]]]:
    """The cause labels of ``source`` in RECCON's JSON layout (at :data:`RECCON_COMMIT`): one
    entry per dialogue with a labelled item, every utterance numbered from 1, the three cause
    fields on labelled items. Field by field: docs/causes.md. Unlike RECCON, ETC asks about
    every item's transcription, so an item labelled neutral can carry causes too.
    """
    sets, _ = _source_sets(source, run_id, db)
    out: dict[str, list[list[dict[str, Any]]]] = {}
    for d in sorted({k[0] for k in sets}):
        dialogue = corpus.by_id.get(d)
        if dialogue is None:
            raise ConfigError(f"Dialogue {d} has cause labels but is not in the corpus given.")
        text = {u.position: u.text for u in dialogue.utterances}
        rows = []
        for u in sorted(dialogue.utterances, key=lambda u: u.position):
            label = u.label
            row: dict[str, Any] = {
                "turn": u.position,
                "speaker": u.letter,
                "utterance": u.text,
                "emotion": RECCON_EMOTION[label[0]],
                "emotions": [RECCON_EMOTION[c] for c in label],
                "emotion transcription": u.transcription,
            }
            if u.key in sets:
                pos = sets[u.key]
                row[EVIDENCE] = list(pos) if pos else [RECCON_LATENT]
                row[SPAN] = [text[p] for p in pos] if pos else [RECCON_LATENT]
                row["type"] = list(reccon_labels(u.key, pos))
            rows.append(row)
        out[str(d)] = [rows]
    return out


def export_reccon(
    out: str | Path,
    corpus: Corpus,
    *,
    source: str = "human",
    run_id: str | None = None,
    db: str | Path | None = None,
) -> dict[str, Any]:
    """Write :func:`reccon_layout` to ``out`` (JSON, indented as RECCON's files) and the licence
    beside it (``<out>.LICENSE.txt``: the layout has no place for it). Returns the counts."""
    layout = reccon_layout(corpus, source=source, run_id=run_id, db=db)
    path = Path(out)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(layout, ensure_ascii=False, indent=4) + "\n", encoding="utf-8")
    licence = path.with_name(path.name + ".LICENSE.txt")
    licence.write_text(
        f"{LICENCE}\nLayout: RECCON's data/original_annotation (github.com/declare-lab/RECCON, "
        f"commit {RECCON_COMMIT}); see docs/causes.md.\n",
        encoding="utf-8",
    )
    labelled = sum(EVIDENCE in u for d in layout.values() for u in d[0])
    return {"dialogues": len(layout), "labelled": labelled, "licence_file": str(licence)}
