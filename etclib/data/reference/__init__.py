"""Published figures the project shows beside its own: data files with their provenance.

- ``paper_baselines.json``: the ETC paper's Tables 2 and 3, shown as *reported* leaderboard rows;
- ``emplifai_judge_vs_human.json``: EmplifAI's LLM-judge versus crowd figures.

They ship inside the package; ``ETC_REFERENCE_DIR`` points at a folder of corrected copies.
"""

from __future__ import annotations

from pathlib import Path

from etclib.core.config import setting

#: The folder of the shipped files.
PACKAGED = Path(__file__).resolve().parent
PAPER_BASELINES = "paper_baselines.json"
EMPLIFAI = "emplifai_judge_vs_human.json"


def reference_dir() -> Path:
    """``ETC_REFERENCE_DIR`` when set, else the files shipped with etclib."""
    explicit = setting("ETC_REFERENCE_DIR")
    return Path(explicit) if explicit else PACKAGED


def path(name: str) -> Path:
    """The file ``name`` in :func:`reference_dir`."""
    return reference_dir() / name


def published(name: str = PAPER_BASELINES) -> str | None:
    """When the figures of reference file ``name`` were published (``YYYY-MM[-DD]``), or None."""
    import json

    try:
        return json.loads(path(name).read_text(encoding="utf-8")).get("published")
    except (OSError, ValueError):
        return None
