"""Scoring stages: what each computes, when it runs, with which options, and one at a time or not.

Which metric groups a stage computes comes from etclib's registry (``Track.stages``). The first
stage always runs and makes a submission visible; the others are queued when it finishes, with
the options of that moment, if their :class:`Rule` says they are enabled. A stage without a
rule here runs for every submission, with no options, concurrently.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from etclib import metrics, tracks
from etclib.core.redact import redact

from . import settings
from .errors import LeaderboardError

log = logging.getLogger("leaderboard.worker")


def _warm_judge() -> None:
    from etclib.judge.runner import JudgeSettings, warm

    warm(JudgeSettings.resolve(_judge_options().get))


def _judge_options() -> dict[str, Any]:
    from etclib.core.config import setting

    provider = settings.judge_provider()
    out: dict[str, Any] = {"judge_provider": provider} if provider else {}
    if setting("ETC_JUDGE_MODEL"):
        out["judge_model"] = setting("ETC_JUDGE_MODEL")
    if setting("ETC_JUDGE_PROMPTS"):  # unset: etclib's default prompt set (v2)
        out["judge_prompts"] = setting("ETC_JUDGE_PROMPTS")
    return out


@dataclass(frozen=True)
class Rule:
    """When a stage runs and how."""

    #: whether new submissions get this stage with the current settings
    enabled: Callable[[], bool] = lambda: True
    #: metric options fixed when the stage is queued (so a job runs with the settings it had)
    options: Callable[[], dict[str, Any]] = dict
    #: its models are shared in-process and not known to be thread-safe: one job at a time
    exclusive: bool = False
    #: pays the stage's one-time costs (imports, clients, connections) before a worker claims
    warm: Callable[[], None] | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock, compare=False, repr=False)


RULES: dict[str, Rule] = {
    "lexical": Rule(exclusive=True),  # one MeCab tagger per process
    "bertscore": Rule(enabled=settings.bertscore_enabled, exclusive=True),  # one model
    "judge": Rule(
        enabled=lambda: bool(settings.judge_provider()), options=_judge_options, warm=_warm_judge
    ),
}
_DEFAULT = Rule()


def all_stages(track: str | None = None) -> dict[str, tuple[str, ...]]:
    """Stage -> its metric groups for ``track``, in the order stages run."""
    return tracks.get(track).stages()


def first() -> str:
    """The stage every submission gets first (and becomes visible with), on every track."""
    return next(iter(all_stages()))


def groups(stage: str, track: str | None = None) -> tuple[str, ...]:
    """The metric groups ``stage`` computes on ``track``."""
    return all_stages(track).get(stage, ())


def track_of(cur, submission_id: str) -> str:
    """A stored submission's track (inside the caller's transaction)."""
    row = cur.execute("SELECT track FROM submissions WHERE id = ?", [submission_id]).fetchone()
    return (row[0] if row else None) or tracks.DEFAULT_TRACK


def rule(stage: str) -> Rule:
    return RULES.get(stage, _DEFAULT)


def check(stage: str) -> str:
    """``stage`` itself, or :class:`LeaderboardError` naming the stages there are."""
    known = {s for t in tracks.TRACKS for s in all_stages(t)}
    if stage not in known:
        raise LeaderboardError(f"Unknown scoring stage {stage!r}. Available: {', '.join(known)}.")
    return stage


def configured_stages(track: str | None = None) -> list[str]:
    """The stages that run for a new submission of ``track`` with the current settings."""
    names = list(all_stages(track))
    return names[:1] + [s for s in names[1:] if rule(s).enabled()]


def stage_options(stage: str) -> dict[str, Any]:
    """Metric options fixed when a stage is queued."""
    return rule(stage).options()


def warm(track: str | None = None) -> list[str]:
    """Pay the one-time costs (imports, models, clients) of the stages that run for a new
    submission of ``track`` (every track when None); the stages warmed. A failure is logged,
    not raised: the stage's first job then fails with the same cause in its own words.
    """
    plan: dict[str, list[str]] = {}
    for t in [track] if track else tracks.TRACKS:
        for stage in configured_stages(t):
            names = plan.setdefault(stage, [])
            names += [g for g in groups(stage, t) if g not in names]
    done = []
    for stage, names in plan.items():
        r = rule(stage)
        try:
            warmed = metrics.warm(names)
            if r.warm is not None:
                r.warm()
            elif not warmed:
                continue  # nothing to pay in advance
        except Exception as exc:  # noqa: BLE001 - the job reports it properly
            log.warning("warming the %s stage failed: %s", stage, redact(str(exc)))
            continue
        log.info("warmed the %s stage (%s)", stage, ", ".join(warmed) or "its rule")
        done.append(stage)
    return done


def lock(stage: str) -> threading.Lock | None:
    """The process-wide lock of an exclusive stage, else None."""
    r = rule(stage)
    return r._lock if r.exclusive else None
