"""What the annotation parts of the site say where nobody can annotate yet: a fresh install has no
annotator code, so pages say what annotation is for instead of showing a code box no code opens."""

from __future__ import annotations

#: The Judge vs Human page, where a visitor reads how the judge agrees with people.
JUDGE_VS_HUMAN = "site_pages/judge_vs_human.py"

#: study -> what a person does when annotating it, and what their answers are for
PURPOSE: dict[str, str] = {
    "units": (
        "**Annotation is how this site checks its LLM judge against people.** An annotator "
        "reads an atomic unit of inner state and a transcription, and answers Supported, Neutral "
        "or Not Supported without seeing the judge's answer; the agreement figures on this tab "
        "are computed from those answers."
    ),
    "causes": (
        "**Annotation is how this page learns where a transcribed state comes from.** An "
        "annotator reads a dialogue up to an utterance and the emotion transcription its author "
        "wrote, and ticks the utterances the state is about (or *not in the dialogue*); the "
        "agreement of the LLM run and of the lexical proxy with people is computed from those "
        "answers."
    ),
}

CODES = (
    "Answering needs an **annotator code**, which the benchmark's maintainers give to the "
    "people taking part in the study. None has been given on this site yet, so nobody can "
    "annotate here; to take part, ask the maintainers (see the About page)."
)


def issued(db: str | None = None) -> int:
    """How many annotator codes are in use; 0 when the studies database cannot be read."""
    from etclib.core.errors import EtcError
    from etclib.studies import annotation

    try:
        who = annotation.annotators(db=db)
    except EtcError:
        return 0
    if who.empty:
        return 0
    return int((~who["revoked"].fillna(False).astype(bool)).sum())


def without_annotators(study: str) -> str:
    """The note shown in place of the code box when no annotator code is in use."""
    return f"{PURPOSE[study]}\n\n{CODES}"


#: what a visitor can read instead, per study (the link to the Judge vs Human page follows)
INSTEAD: dict[str, str] = {
    "units": (
        "Meanwhile, the first tab of this page (categories) compares the judge with the corpus's "
        "own three annotators, who labelled every transcription."
    ),
    "causes": (
        "Meanwhile, the *Agreement and shares* tab shows the cause types the LLM run and the "
        "lexical proxy find, and the Judge vs Human page how far an LLM judge agrees with people:"
    ),
}
