"""The ETC corpus as typed records, loaded from ``ETC_DATA_DIR`` and checked field by field.

>>> corpus = load_corpus()                      # doctest: +SKIP
>>> corpus.split("test")[0].utterances[0].label # doctest: +SKIP
('surprise',)
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache, cached_property
from pathlib import Path

from etclib.core import config
from etclib.core.errors import DataError

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
    """SPEC's aggregated label: categories chosen by at least 2 of 3 annotators, else neutral
    alone (whatever the neutral votes). Memoised: a corpus has a few hundred distinct triples."""
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


class Corpus:
    """The corpus: its dialogues by split, the participants and the questionnaire. Read from the
    parsed-corpus cache, a split is built when first asked for (:meth:`split`), so scoring the
    test split never builds the train split; equal corpora compare equal however loaded."""

    def __init__(
        self,
        root: Path,
        dialogues: tuple[Dialogue, ...] | None,
        participants: dict[str, Participant],
        questionnaire: dict[str, str],
        content_hash: str,
        *,
        split_of: dict[int, str] | None = None,
        parts: Path | None = None,
    ) -> None:
        self.root = root
        self.participants = participants
        self.questionnaire = questionnaire
        self.content_hash = content_hash
        #: split name -> its dialogues in file order, filled from ``dialogues`` or on demand
        self._splits: dict[str, tuple[Dialogue, ...]] = {}
        if dialogues is not None:
            self.__dict__["dialogues"] = dialogues
            for name in SPLITS:
                self._splits[name] = tuple(d for d in dialogues if d.split == name)
        elif split_of is None or parts is None:
            raise TypeError("Corpus: give either dialogues, or split_of and parts")
        else:
            self.__dict__["split_of"] = split_of
        self._parts = parts

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Corpus):
            return NotImplemented
        return (
            self.root == other.root
            and self.content_hash == other.content_hash
            and self.participants == other.participants
            and self.questionnaire == other.questionnaire
            and self.dialogues == other.dialogues
        )

    __hash__ = None  # type: ignore[assignment]  # mutable caches inside; as the dataclass was

    def __repr__(self) -> str:
        return f"Corpus(root={str(self.root)!r}, content_hash={self.content_hash[:12]!r})"

    def split(self, name: str) -> list[Dialogue]:
        if name not in SPLITS:
            raise DataError(f"Unknown split {name!r}. Available: {', '.join(SPLITS)}.")
        return list(self._split(name))

    def _split(self, name: str) -> tuple[Dialogue, ...]:
        got = self._splits.get(name)
        if got is None:
            got = self._splits[name] = _read_part(self, name)
        return got

    @cached_property
    def dialogues(self) -> tuple[Dialogue, ...]:
        """Every dialogue, in file-name order (as the files are read)."""
        return tuple(sorted((d for n in SPLITS for d in self._split(n)), key=lambda d: d.file))

    @cached_property
    def by_id(self) -> Mapping[int, Dialogue]:
        """Dialogues by id; looking one up builds its split only (:class:`_ById`)."""
        return _ById(self)

    @cached_property
    def utterances(self) -> list[Utterance]:
        return [u for d in self.dialogues for u in d.utterances]

    @cached_property
    def split_of(self) -> dict[int, str]:
        return {d.dialogue_id: d.split for d in self.dialogues}


class _ById(Mapping):
    """A corpus's dialogues by id; a lookup builds the dialogue's split only."""

    def __init__(self, corpus: Corpus) -> None:
        self._corpus = corpus
        self._index: dict[str, dict[int, Dialogue]] = {}

    def __getitem__(self, dialogue_id: int) -> Dialogue:
        split = self._corpus.split_of[dialogue_id]
        index = self._index.get(split)
        if index is None:
            index = {d.dialogue_id: d for d in self._corpus._split(split)}
            self._index[split] = index
        return index[dialogue_id]

    def __iter__(self):
        return iter(self._corpus.split_of)

    def __len__(self) -> int:
        return len(self._corpus.split_of)


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
    """Every file's name, size and modification time (the content hash covers them all): a
    cheap check that no file changed since loading."""
    out = []
    for f in (root / "split.json", root / "personality_traits.json"):
        try:
            st = f.stat()
        except FileNotFoundError:
            raise DataError(f"{f}: missing.") from None
        out.append((f.name, st.st_size, st.st_mtime_ns))
    with os.scandir(root / "dialogues") as entries:
        found = sorted((e.name, e) for e in entries if e.name.endswith(".json"))
    for name, entry in found:
        try:
            st = entry.stat()
        except FileNotFoundError:
            raise DataError(f"{root / 'dialogues' / name}: missing.") from None
        out.append((name, st.st_size, st.st_mtime_ns))
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
    """Load and check the corpus. Cached per folder, in memory and on disk (one file per split,
    read when first asked for), keyed by the files' names, sizes and modification times, so a
    later call re-reads only a changed corpus; a damaged or unwritable cache costs a full parse."""
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
PARSED_VERSION = 2


def _parsed_path(root: Path, fingerprint: tuple[tuple[str, int, int], ...]) -> Path:
    """The cache folder of this corpus folder in this state (``<folder hash>-<state hash>``)."""
    folder = hashlib.sha256(str(root).encode()).hexdigest()[:12]
    key = json.dumps([PARSED_VERSION, str(root), fingerprint]).encode()
    return config.cache_dir() / "corpus" / f"{folder}-{hashlib.sha256(key).hexdigest()[:24]}"


def _write_parsed(corpus: Corpus, folder: Path) -> None:
    """Save ``corpus`` in ``folder``, ``meta.json`` last (a folder without it is never read),
    then remove this corpus folder's older states."""
    import shutil

    from etclib.core.files import write_atomic

    def put(name: str, data) -> None:
        text = json.dumps(data, ensure_ascii=False).encode()
        write_atomic(folder / name, lambda f: f.write(text))

    try:
        folder.mkdir(parents=True, exist_ok=True)
        for split in SPLITS:
            put(f"{split}.json", [_dialogue_row(d) for d in corpus.split(split)])
        put(
            "meta.json",
            {
                "version": PARSED_VERSION,
                "content_hash": corpus.content_hash,
                "questionnaire": corpus.questionnaire,
                "participants": {
                    k: [p.scores, p.responses] for k, p in corpus.participants.items()
                },
                "split_of": [[d.dialogue_id, d.split] for d in corpus.dialogues],
            },
        )
        prefix = folder.name.split("-")[0] + "-"
        for old in folder.parent.glob(prefix + "*"):
            if old != folder:
                if old.is_dir():
                    shutil.rmtree(old, ignore_errors=True)
                else:  # a version-1 cache file
                    old.unlink(missing_ok=True)
    except OSError:
        pass  # a read-only cache only costs parsing again next time


def _dialogue_row(d: Dialogue) -> list:
    return [
        d.dialogue_id,
        d.file,
        d.dialogue_emotion,
        d.speaker_id,
        d.listener_id,
        [
            [u.turn, u.role, u.participant_id, u.text, u.transcription, u.annotations]
            for u in d.utterances
        ],
    ]


def _read_parsed(root: Path, folder: Path) -> Corpus | None:
    """The corpus saved by :func:`_write_parsed` (its splits not read yet), or None when absent,
    damaged or of another version."""
    try:
        raw = json.loads((folder / "meta.json").read_bytes().decode("utf-8"))
        if raw["version"] != PARSED_VERSION:
            return None
        participants = {
            k: Participant(k, dict(scores), dict(responses))
            for k, (scores, responses) in raw["participants"].items()
        }
        split_of = {int(did): str(split) for did, split in raw["split_of"]}
        if not set(split_of.values()) <= set(SPLITS):
            return None
        return Corpus(
            root,
            None,
            participants,
            dict(raw["questionnaire"]),
            str(raw["content_hash"]),
            split_of=split_of,
            parts=folder,
        )
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None


def _read_part(corpus: Corpus, split: str) -> tuple[Dialogue, ...]:
    """``split``'s dialogues from the cache folder a corpus was read from (parsed again from the
    corpus files when that file is damaged or gone)."""
    try:
        rows = json.loads((corpus._parts / f"{split}.json").read_bytes().decode("utf-8"))
        out = tuple(
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
            for did, file, emotion, speaker, listener, utterances in rows
        )
        if sorted(d.dialogue_id for d in out) == sorted(
            did for did, s in corpus.split_of.items() if s == split
        ):
            return out
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        pass
    return tuple(_load(corpus.root, corpus.content_hash).split(split))


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
