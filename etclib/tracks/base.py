"""What a track is: one object holding everything a task on the ETC items varies by; every
consumer asks the track, never its name. The defaults fit a prediction of one text per item; a
track of another kind overrides :meth:`Track.parse`, :meth:`Track.encode` and
:meth:`Track.decode`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from etclib import metrics
from etclib.core import registry
from etclib.core.errors import BackendError, MetricError

#: The longest prediction of a text track, in characters.
MAX_PREDICTION_CHARS = 2000

#: name -> track; the first is the default everywhere a track is not named.
TRACKS: dict[str, Track] = {}
#: Characters a text may not hold: NUL and unpaired surrogates (pyarrow and MeCab fail on them),
#: control characters but tab and line breaks (a terminal runs ANSI escapes), and the
#: bidirectional overrides (U+202E shows what follows reversed). docs/leaderboard.md, "What a
#: prediction and a name may hold".
_NOT_TEXT = re.compile(
    "[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\ud800-\udfff]"
)


def _text_problem(field_name: str, value: str) -> str | None:
    """What makes ``value`` no text to store (:data:`_NOT_TEXT`), or None."""
    found = _NOT_TEXT.search(value)
    if found is None:
        return None
    ch, at = found.group(), found.start() + 1
    if ch == "\x00":
        return f"'{field_name}' contains a NUL character (U+0000) at character {at}; remove it."
    if "\ud800" <= ch <= "\udfff":
        return (
            f"'{field_name}' contains an unpaired surrogate (\\u{ord(ch):04x}) at character "
            f"{at}; it is not a character: write the character itself, or a valid "
            "\\uXXXX\\uXXXX pair."
        )
    what = "a direction override" if ch >= "\u202a" else "a control character"
    return (
        f"'{field_name}' contains {what} (U+{ord(ch):04X}) at character {at}; remove it: "
        "a transcription is plain text (tabs and line breaks allowed)."
    )


class Track:
    """One leaderboard track (see the module's text)."""

    name: str = ""
    #: how selectors name its board, e.g. "transcriptions"
    title: str = ""
    #: one line: the task
    description: str = ""
    #: the predictions file's field per item, and an example value of it
    field: str = "prediction"
    example: Any = ""
    #: how to fill the field, in a line (the Submit page, under the track's templates)
    help: str = ""
    #: the item attribute a prediction is scored against (see :meth:`reference_of`)
    reference: str = "reference"
    #: what its scores depend on besides the metrics (the signature's ``track`` entry)
    version: str = ""
    #: metric groups scored when none are named; rank by the first key of ``rank_order`` that
    #: any entry has
    default_metrics: tuple[str, ...] = ()
    rank_order: tuple[str, ...] = ()
    #: backend name -> module defining ``BACKEND`` (or ``"module:attribute"``); the default one
    backends: Mapping[str, str] = {}
    default_backend: str = ""
    #: backend -> the board's name of the baseline entry it predicts (``seed-baselines``)
    baselines: Mapping[str, str] = {}
    #: trivial baseline backend -> why it is a floor; the floor entries are flagged against
    floors: Mapping[str, str] = {}
    flag_floor: str = ""
    #: the most distinct predictions a constant or near-constant file has
    max_distinct: int = 1
    #: what one prediction is called in a sentence ("text", "label set")
    noun: str = "value"
    #: the value a template leaves to fill
    blank: Any = ""
    #: predictions are free texts: their lengths and a reference text are shown with them
    free_text: bool = False
    #: the paper's published rows are results of this track
    reported: bool = False
    #: the reference rows' caption (:meth:`reference_rows`); the board columns scored on those
    #: rows' own references -> how the like-for-like table heads them, and its caption
    reference_caption: str = ""
    like_for_like: Mapping[str, str] = {}
    like_for_like_caption: str = ""
    #: the Leaderboard's caption of an entry's per-item table
    items_caption: str = "Per-item examples: the prediction, the item's label and its scores."

    @property
    def tag(self) -> str:
        """What qualifies its baseline keys, file names and options (:meth:`tagged`)."""
        return self.name

    def tagged(self, text: str, sep: str = "-") -> str:
        """``text`` qualified by :attr:`tag` (``erc-backends``), or alone for a track whose tag
        is empty (the transcription track's keys predate tracks)."""
        return f"{self.tag}{sep}{text}" if self.tag else text

    @property
    def signature(self) -> str:
        """The signature's ``track`` entry (empty: none)."""
        return self.name + (f"|{self.version}" if self.version else "")

    @property
    def content_tag(self) -> str:
        """The first element of the hashed content of a submission (its identity)."""
        return f"etc-{self.tag or 'predictions'}-v1"

    def baseline_key(self, backend: str) -> str:
        return self.tagged(f"backend:{backend}")

    @property
    def heading(self) -> str:
        """How a text names its board: ``Transcriptions track``."""
        return f"{self.title.capitalize()} track"

    @property
    def template_label(self) -> str:
        """How the Submit page names its template: ``Categories template``."""
        return f"{self.title.capitalize()} template" if self.tag else "Template"

    def template_file(self, fmt: str, split: str = "test") -> str:
        """The template's file name: ``etc_test_erc_template.csv``."""
        return f"etc_{split}_{self.tagged('template', '_')}.{fmt}"

    def example_record(self) -> str:
        """One JSON Lines record of this track."""
        rec = {"dialogue_id": 945, "turn": 3, "role": "listener", self.field: self.example}
        return json.dumps(rec, ensure_ascii=False)

    # --- a prediction ------------------------------------------------------------------------

    def parse(self, value: Any, cell: bool = False) -> Any:
        """A prediction as a file gives it (``cell``: a CSV cell or the stored text), checked;
        ``ValueError`` saying what is wrong."""
        if not isinstance(value, str):
            found = type(value).__name__ if value is not None else "null"
            raise ValueError(f"'{self.field}' must be a string, found {found}.")
        if len(value) > MAX_PREDICTION_CHARS:
            raise ValueError(
                f"{self.field} has {len(value)} characters; the limit is {MAX_PREDICTION_CHARS}."
            )
        problem = _text_problem(self.field, value)
        if problem:
            raise ValueError(problem)
        return value

    def encode(self, value: Any) -> str:
        """A checked prediction as stored (and in a CSV cell): one text per item."""
        return str(value)

    def decode(self, stored: str | None) -> Any:
        """What :meth:`encode` stored, back as the prediction it was (not checked again)."""
        return "" if stored is None else stored

    def shown(self, stored: str) -> str:
        """A stored prediction as a sentence quotes it."""
        return "“" + (stored if len(stored) <= 30 else stored[:29] + "…") + "”"

    def reference_of(self, item: Any) -> Any:
        """What ``item``'s prediction is compared with."""
        return getattr(item, self.reference)

    def reference_rows(self, split: str) -> Any:
        """Rows a board shows beside its entries (a frame: ``name`` and scores), or None."""
        return None

    def compare_columns(self, a: Any, b: Any) -> dict[str, Any]:
        """Columns a comparison's per-item row adds for predictions ``a`` and ``b``."""
        return {}

    # --- metrics -----------------------------------------------------------------------------

    def owns(self, group: str) -> bool:
        """Whether metric group ``group`` scores this track (its module's ``TRACK``)."""
        return metrics.track_of(group) == self.name

    def groups(self) -> list[str]:
        """Its metric groups, in registry order."""
        return [g for g in metrics.METRICS if self.owns(g)]

    def facts(self) -> list[metrics.Fact]:
        return metrics.facts(self.groups())

    def keys(self, *, ranking: bool | None = None, board: bool = False) -> list[str]:
        """Its result keys in registry order; ``ranking=True`` (``False``) for the ranking keys
        (the others) only; ``board=True`` for the leaderboard's columns only."""
        return [
            f.key
            for f in self.facts()
            if (ranking is None or f.ranking == ranking) and (not board or f.board or f.ranking)
        ]

    def stages(self) -> dict[str, tuple[str, ...]]:
        """Stage -> its metric groups, stages in registry order (the first runs first)."""
        out: dict[str, list[str]] = {}
        for name in self.groups():
            out.setdefault(metrics.get(name).STAGE, []).append(name)
        return {s: tuple(g) for s, g in out.items()}

    def board_metrics(self) -> list[str]:
        """The groups every entry of its leaderboard has: its first stage's (offline, no key)."""
        return list(next(iter(self.stages().values()), ()))

    def parse_metrics(self, spec: str | list[str] | tuple[str, ...] | None) -> list[str]:
        """``"bleu,rouge"`` -> ``["bleu", "rouge"]`` (None: the defaults); unknown names and
        another track's groups are refused."""
        if spec is None:
            return list(self.default_metrics)
        names = [s.strip() for s in (spec.split(",") if isinstance(spec, str) else spec)]
        names = [n for n in names if n]
        # Listing the groups imports every metric module: only for a message.
        if not names:
            raise MetricError(f"No metric given. Available: {', '.join(self.groups())}.")
        for n in names:
            if n not in metrics.METRICS:
                raise MetricError(
                    registry.unknown("metric", n, metrics.METRICS, available=self.groups())
                )
            if not self.owns(n):
                other = next((t.name for t in TRACKS.values() if t.owns(n)), "another")
                raise MetricError(
                    f"Metric '{n}' scores the {other} track, not {self.name}; pass --track "
                    f"{other}, or one of: {', '.join(self.groups())}."
                )
        return list(dict.fromkeys(names))

    def ranking_key(self, available: list[str] | tuple[str, ...] | set[str]) -> str:
        """The ranking rule: the first key of :attr:`rank_order` that is ``available``, else
        its last one (the board is then unranked)."""
        return next((k for k in self.rank_order if k in set(available)), self.rank_order[-1])

    def ranking_rule(self) -> str:
        """The ranking rule in words, from :attr:`rank_order` and the keys' labels."""
        *first, last = [metrics.fact(k).label for k in self.rank_order]
        return (
            "Ranked by " + ", else ".join([f"{lab} when present" for lab in first] + [last]) + "."
        )

    def display_order(self) -> list[str]:
        """Its ranking keys, most preferred first: groups by their best place in
        :attr:`rank_order`, within a group the rule's keys first."""
        order = self.rank_order

        def place(key: str) -> int:
            return order.index(key) if key in order else len(order)

        names = self.groups()
        facts = {g: metrics.facts([g]) for g in names}
        best = {g: min((place(f.key) for f in facts[g]), default=len(order)) for g in names}
        out = []
        for g in sorted(names, key=lambda g: (best[g], names.index(g))):
            shown = [f.key for f in facts[g] if f.ranking]
            out += sorted(shown, key=lambda k: (place(k), shown.index(k)))
        return out

    # --- backends ----------------------------------------------------------------------------

    def backend_class(self, name: str) -> Any:
        """The class of backend ``name`` (``etclib.models`` is imported only here: it loads the
        LLM providers); ``BackendError`` naming the track that has it."""
        if name not in self.backends:
            msg = registry.unknown("backend", name, list(self.backends), cutoff=0.5)
            other = next((t.name for t in TRACKS.values() if name in t.backends), None)
            if other:
                msg += f" ({name!r} is a backend of the {other} track.)"
            raise BackendError(msg)
        from etclib.models import backend_class

        return backend_class(name, self.backends)

    def backend(self, name: str, **options: Any) -> Any:
        """Backend ``name`` created with ``options`` (:func:`etclib.models.get_backend`)."""
        from etclib.models import get_backend

        self.backend_class(name)
        return get_backend(name, registry=self.backends, **options)

    def backend_status(self, name: str) -> Any:
        """:func:`etclib.models.backend_status` of backend ``name`` (never raises)."""
        from etclib.models import backend_status

        return backend_status(name, self.backends)
