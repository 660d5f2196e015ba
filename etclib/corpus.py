"""The ETC corpus as typed records, loaded from ``ETC_DATA_DIR`` and checked field by field.

>>> corpus = load_corpus()                      # doctest: +SKIP
>>> corpus.split("test")[0].utterances[0].label # doctest: +SKIP
('surprise',)
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass
from functools import cache, cached_property
from pathlib import Path

from . import config
from .errors import DataError

#: Category keys, in SPEC order, and their Japanese names in the corpus.
CATEGORIES: tuple[str, ...] = ("joy", "sadness", "fear", "anger", "surprise", "disgust", "neutral")
JA_TO_CATEGORY: dict[str, str] = {
    "喜び": "joy",
    "悲しみ": "sadness",
    "恐怖": "fear",
    "怒り": "anger",
    "驚き": "surprise",
    "嫌悪": "disgust",
    "該当なし": "neutral",
}
CATEGORY_TO_JA = {v: k for k, v in JA_TO_CATEGORY.items()}
ROLES: tuple[str, ...] = ("speaker", "listener")
#: How prompts name the two roles (SPEC: the speaker role is participant A).
ROLE_LETTER = {"speaker": "A", "listener": "B"}
SPLITS: tuple[str, ...] = ("train", "valid", "test")
BIG_FIVE: tuple[str, ...] = (
    "openness",
    "conscientiousness",
    "extraversion",
    "agreeableness",
    "neuroticism",
)
TURNS_PER_DIALOGUE = 5


@cache
def aggregate_label(annotations: tuple[tuple[str, ...], ...]) -> tuple[str, ...]:
    """SPEC's aggregated label: categories chosen by at least 2 of 3 annotators, else neutral.

    Neutral is never combined with another category: if no non-neutral category reaches two
    votes, the label is ``("neutral",)`` whatever the neutral votes are. (Memoised: a corpus
    has a few hundred distinct annotation triples and every scoring run asks for each label.)
    """
    votes = {c: sum(c in a for a in annotations) for c in CATEGORIES if c != "neutral"}
    chosen = tuple(c for c in CATEGORIES if c != "neutral" and votes[c] >= 2)
    return chosen or ("neutral",)


@dataclass(frozen=True, slots=True)
class Utterance:
    """One utterance with its author's emotion transcription and the annotators' labels."""

    dialogue_id: int
    turn: int
    role: str
    participant_id: str
    text: str
    transcription: str
    annotations: tuple[tuple[str, ...], ...]

    @property
    def key(self) -> tuple[int, int, str]:
        return (self.dialogue_id, self.turn, self.role)

    @property
    def position(self) -> int:
        """1-based position in the dialogue (1..10)."""
        return 2 * (self.turn - 1) + (1 if self.role == "speaker" else 2)

    @property
    def label(self) -> tuple[str, ...]:
        return aggregate_label(self.annotations)

    @property
    def letter(self) -> str:
        return ROLE_LETTER[self.role]


@dataclass(frozen=True, slots=True)
class Dialogue:
    dialogue_id: int
    file: str
    split: str
    dialogue_emotion: str
    speaker_id: str
    listener_id: str
    utterances: tuple[Utterance, ...]


@dataclass(frozen=True, slots=True)
class Participant:
    participant_id: str
    scores: dict[str, int]
    responses: dict[str, str]


@dataclass(frozen=True)
class Corpus:
    root: Path
    dialogues: tuple[Dialogue, ...]
    participants: dict[str, Participant]
    questionnaire: dict[str, str]
    content_hash: str

    def split(self, name: str) -> list[Dialogue]:
        if name not in SPLITS:
            raise DataError(f"Unknown split {name!r}. Available: {', '.join(SPLITS)}.")
        return [d for d in self.dialogues if d.split == name]

    @cached_property
    def by_id(self) -> dict[int, Dialogue]:
        return {d.dialogue_id: d for d in self.dialogues}

    @cached_property
    def utterances(self) -> list[Utterance]:
        return [u for d in self.dialogues for u in d.utterances]

    @cached_property
    def split_of(self) -> dict[int, str]:
        return {d.dialogue_id: d.split for d in self.dialogues}


# --- loading --------------------------------------------------------------------------------


def _read_json(path: Path):
    try:
        return json.loads(path.read_bytes().decode("utf-8"))
    except FileNotFoundError:
        raise DataError(f"{path}: missing.") from None
    except UnicodeDecodeError as exc:
        raise DataError(f"{path}: not UTF-8 ({exc.reason} at byte {exc.start}).") from None
    except json.JSONDecodeError as exc:
        raise DataError(f"{path}: invalid JSON at line {exc.lineno}: {exc.msg}.") from None


def _field(obj, name: str, kind, where: str):
    if not isinstance(obj, dict):
        raise DataError(f"{where}: expected an object, found {type(obj).__name__}.")
    if name not in obj:
        raise DataError(f"{where}: missing field '{name}'.")
    value = obj[name]
    if kind is int and isinstance(value, bool) or not isinstance(value, kind):
        raise DataError(
            f"{where}: field '{name}' should be {kind.__name__}, found {type(value).__name__}."
        )
    return value


def _load_dialogue(path: Path, split: str) -> Dialogue:
    raw = _read_json(path)
    where = str(path)
    dialogue_id = _field(raw, "dialogue_id", int, where)
    emotion = _field(raw, "dialogue_emotion", str, where)
    participants = _field(raw, "participants", dict, where)
    speaker_id = _field(participants, "speaker", str, f"{where}: participants")
    listener_id = _field(participants, "listener", str, f"{where}: participants")
    turns = _field(raw, "dialogue", list, where)
    if len(turns) != 2 * TURNS_PER_DIALOGUE:
        raise DataError(f"{where}: field 'dialogue' has {len(turns)} utterances, expected 10.")
    utterances = []
    for i, u in enumerate(turns):
        at = f"{where}: dialogue[{i}]"
        turn = _field(u, "turn", int, at)
        role = _field(u, "role", str, at)
        expected = (i // 2 + 1, ROLES[i % 2])
        if (turn, role) != expected:
            raise DataError(
                f"{at}: turn/role is ({turn}, {role!r}), expected {expected}: utterances must "
                "alternate speaker, listener from turn 1 to 5."
            )
        emotions = _field(u, "emotions", list, at)
        if len(emotions) != 3 or not all(isinstance(a, list) and a for a in emotions):
            raise DataError(f"{at}: field 'emotions' must hold 3 non-empty label lists.")
        annotations = []
        for a in emotions:
            unknown = [x for x in a if x not in JA_TO_CATEGORY]
            if unknown:
                raise DataError(
                    f"{at}: field 'emotions' has unknown label {unknown[0]!r}; "
                    f"expected one of {', '.join(JA_TO_CATEGORY)}."
                )
            annotations.append(tuple(c for c in CATEGORIES if CATEGORY_TO_JA[c] in a))
        utterances.append(
            Utterance(
                dialogue_id=dialogue_id,
                turn=turn,
                role=role,
                participant_id=speaker_id if role == "speaker" else listener_id,
                text=_field(u, "utterance", str, at),
                transcription=_field(u, "emotion_transcription", str, at),
                annotations=tuple(annotations),
            )
        )
    return Dialogue(
        dialogue_id=dialogue_id,
        file=path.name,
        split=split,
        dialogue_emotion=emotion,
        speaker_id=speaker_id,
        listener_id=listener_id,
        utterances=tuple(utterances),
    )


def _load_participants(path: Path) -> tuple[dict[str, Participant], dict[str, str]]:
    raw = _read_json(path)
    where = str(path)
    items = _field(raw, "item", dict, where)
    people = _field(raw, "personality", dict, where)
    out = {}
    for pid, p in people.items():
        at = f"{where}: personality.{pid}"
        score = _field(p, "score", dict, at)
        scores = {}
        for trait in BIG_FIVE:
            v = _field(score, trait, int, f"{at}.score")
            if not 2 <= v <= 14:
                raise DataError(f"{at}.score: field '{trait}' is {v}, outside TIPI-J's 2..14.")
            scores[trait] = v
        responses = p.get("response", {})
        out[pid] = Participant(pid, scores, {k: str(v) for k, v in responses.items()})
    return out, {k: str(v).strip() for k, v in items.items()}


def _load_split(path: Path) -> dict[str, str]:
    raw = _read_json(path)
    file_split: dict[str, str] = {}
    for name in SPLITS:
        files = _field(raw, name, list, str(path))
        for f in files:
            if not isinstance(f, str):
                raise DataError(f"{path}: field '{name}' must list file names, found {f!r}.")
            if f in file_split:
                raise DataError(f"{path}: {f} is in both '{file_split[f]}' and '{name}'.")
            file_split[f] = name
    return file_split


def _files(root: Path) -> list[Path]:
    # sorted on the parts, as Path's own order is, with each key computed once (Path.__lt__
    # recomputes them on every comparison: most of a call's time for the 997 dialogues)
    return [root / "split.json", root / "personality_traits.json"] + sorted(
        (root / "dialogues").glob("*.json"), key=lambda f: f.parts
    )


def content_hash(root: Path) -> str:
    """SHA-256 over every corpus file's name and bytes: what the store's freshness depends on."""
    h = hashlib.sha256()
    for f in _files(root):
        h.update(f.relative_to(root).as_posix().encode() + b"\0")
        h.update(f.read_bytes())
        h.update(b"\0")
    return h.hexdigest()


def _fingerprint(root: Path) -> tuple[tuple[str, int, int], ...]:
    """Names, sizes and modification times: a cheap check that no file changed since loading."""
    out = []
    for f in _files(root):
        try:
            st = f.stat()
        except FileNotFoundError:
            raise DataError(f"{f}: missing.") from None
        out.append((f.name, st.st_size, st.st_mtime_ns))
    return tuple(out)


def check_root(root: Path) -> Path:
    if not (root / "dialogues").is_dir():
        hint = (
            "Set ETC_DATA_DIR (or --data) to the folder that holds dialogues/, split.json and "
            "personality_traits.json, or run `etclib download` to fetch the public corpus."
        )
        raise DataError(f"No ETC corpus at {root}: {root / 'dialogues'} is missing. {hint}")
    return root


def load_corpus(root: str | os.PathLike | None = None) -> Corpus:
    """Load and check the whole corpus.

    Cached per folder, in memory and on disk: a later call (in this process or another) only
    compares the files' names, sizes and modification times (a few ms) and re-reads the corpus
    when one of them changed. On disk the parsed, checked corpus is kept as one JSON file under
    ``etclib.config.cache_dir()/corpus``, named by a hash of the folder, those file facts and
    :data:`PARSED_VERSION` (reading it takes about a sixth of parsing and checking the 997
    files); a damaged or unwritable cache only costs the full parse.
    """
    path = check_root(config.data_dir(root).resolve())
    fingerprint = _fingerprint(path)
    hit = _CACHE.get(str(path))
    if hit is not None and hit[0] == fingerprint:
        return hit[1]
    saved = _parsed_path(path, fingerprint)
    corpus = _read_parsed(path, saved)
    if corpus is None:
        corpus = _load(path, content_hash(path))
        _write_parsed(corpus, saved)
    _CACHE.clear()
    _CACHE[str(path)] = (fingerprint, corpus)
    return corpus


_CACHE: dict[str, tuple[tuple[tuple[str, int, int], ...], Corpus]] = {}

#: Bump when the parsed form or the checks change: cached corpora of other versions are ignored.
PARSED_VERSION = 1


def _parsed_path(root: Path, fingerprint: tuple[tuple[str, int, int], ...]) -> Path:
    folder = hashlib.sha256(str(root).encode()).hexdigest()[:12]
    key = json.dumps([PARSED_VERSION, str(root), fingerprint]).encode()
    return config.cache_dir() / "corpus" / f"{folder}-{hashlib.sha256(key).hexdigest()[:24]}.json"


def _write_parsed(corpus: Corpus, path: Path) -> None:
    """Save ``corpus`` as compact JSON at ``path`` (and remove this folder's older ones)."""
    from .files import write_atomic

    data = {
        "version": PARSED_VERSION,
        "content_hash": corpus.content_hash,
        "questionnaire": corpus.questionnaire,
        "participants": {k: [p.scores, p.responses] for k, p in corpus.participants.items()},
        "dialogues": [
            [
                d.dialogue_id,
                d.file,
                d.split,
                d.dialogue_emotion,
                d.speaker_id,
                d.listener_id,
                [
                    [u.turn, u.role, u.participant_id, u.text, u.transcription, u.annotations]
                    for u in d.utterances
                ],
            ]
            for d in corpus.dialogues
        ],
    }
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(path, lambda f: f.write(json.dumps(data, ensure_ascii=False).encode()))
        prefix = path.name.split("-")[0] + "-"
        for old in path.parent.glob(prefix + "*.json"):
            if old != path:
                old.unlink(missing_ok=True)
    except OSError:
        pass  # a read-only cache only costs parsing again next time


def _read_parsed(root: Path, path: Path) -> Corpus | None:
    """The corpus saved by :func:`_write_parsed`, or None when absent, damaged or of another
    version."""
    try:
        raw = json.loads(path.read_bytes().decode("utf-8"))
        if raw["version"] != PARSED_VERSION:
            return None
        participants = {
            k: Participant(k, dict(scores), dict(responses))
            for k, (scores, responses) in raw["participants"].items()
        }
        dialogues = tuple(
            Dialogue(
                dialogue_id=did,
                file=file,
                split=split,
                dialogue_emotion=emotion,
                speaker_id=speaker,
                listener_id=listener,
                utterances=tuple(
                    Utterance(did, turn, role, pid, text, trans, tuple(map(tuple, ann)))
                    for turn, role, pid, text, trans, ann in utterances
                ),
            )
            for did, file, split, emotion, speaker, listener, utterances in raw["dialogues"]
        )
        return Corpus(root, dialogues, participants, raw["questionnaire"], raw["content_hash"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _load(path: Path, digest: str) -> Corpus:
    file_split = _load_split(path / "split.json")
    participants, questionnaire = _load_participants(path / "personality_traits.json")
    dialogues = []
    seen: dict[int, str] = {}
    for f in sorted((path / "dialogues").glob("*.json")):
        if f.name not in file_split:
            raise DataError(f"{f}: not listed in any split of {path / 'split.json'}.")
        d = _load_dialogue(f, file_split[f.name])
        if d.dialogue_id in seen:
            raise DataError(f"{f}: dialogue_id {d.dialogue_id} also used by {seen[d.dialogue_id]}.")
        seen[d.dialogue_id] = f.name
        for pid in (d.speaker_id, d.listener_id):
            if pid not in participants:
                raise DataError(
                    f"{f}: participant {pid!r} has no entry in personality_traits.json."
                )
        dialogues.append(d)
    present = {d.file for d in dialogues}
    missing = sorted(set(file_split) - present)
    if missing:
        raise DataError(
            f"{path / 'split.json'} lists {len(missing)} missing dialogue files, "
            f"first: {', '.join(missing[:3])}."
        )
    return Corpus(path, tuple(dialogues), participants, questionnaire, digest)
