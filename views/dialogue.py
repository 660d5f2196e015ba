"""A dialogue shown as a chat: one message per utterance, A (speaker role) and B (listener role).
Utterances are printed with ``st.text``, never Markdown or HTML; the notes under them are escaped
Markdown."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from etclib.data.corpus import ROLE_LETTER

from .text import escape_markdown

AVATARS = {"A": "🅰️", "B": "🅱️"}


def letter_of(role_or_letter: str) -> str:
    """``A`` or ``B`` for a role (``speaker``/``listener``) or a letter."""
    return ROLE_LETTER.get(role_or_letter, role_or_letter)


def labels_text(labels: Iterable[str] | str) -> str:
    """A label set as text: ``joy, trust`` (a string is kept as it is)."""
    return labels if isinstance(labels, str) else ", ".join(labels)


def utterance_notes(u: Mapping[str, Any], annotators: bool = False) -> list[str]:
    """The escaped captions under a corpus utterance: transcription, label(s)."""
    # (55 corpus transcriptions start or end with a line break: not worth an empty line)
    notes = [f"Emotion transcription: {escape_markdown(str(u['transcription']).strip())}"]
    label = f"Label: **{escape_markdown(labels_text(u['label']))}**"
    if annotators:
        each = " · ".join(f"{i}: {escape_markdown(labels_text(u[f'ann{i}']))}" for i in (1, 2, 3))
        label += f" (annotators {each})"
    notes.append(label)
    return notes


def utterance_message(letter: str, text: str) -> Any:
    """A chat message for one utterance, its text printed literally; the container is returned."""
    import streamlit as st

    letter = letter_of(letter)
    message = st.chat_message(
        "user" if letter == "A" else "assistant", avatar=AVATARS.get(letter, letter)
    )
    message.text(f"{letter}: {text}")
    return message


#: Badge colours: a marked utterance (a cause), and the utterance whose marks are shown.
MARK_COLOUR = "orange"
TARGET_COLOUR = "blue"


def show_dialogue(
    utterances: Sequence[Mapping[str, Any]],
    annotators: bool = False,
    marks: Mapping[tuple[int, str], str] | None = None,
    target: tuple[int, str] | None = None,
) -> None:
    """Every utterance of a corpus dialogue as a chat message, with ``marks`` and ``target``."""
    import streamlit as st

    for u in utterances:
        with utterance_message(u["role"], u["utterance"]):
            here = (int(u["turn"]), str(u["role"]))
            badges = []
            if target is not None and here == (int(target[0]), str(target[1])):
                badges.append(f":{TARGET_COLOUR}-badge[◎ chosen utterance]")
            mark = (marks or {}).get(here)
            if mark:
                badges.append(f":{MARK_COLOUR}-badge[{escape_markdown(mark)}]")
            if badges:
                st.markdown(" ".join(badges))
            for note in utterance_notes(u, annotators):
                st.caption(note)
