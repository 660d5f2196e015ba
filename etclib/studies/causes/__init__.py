"""The cause layer (docs/causes.md): which utterances an ETC transcription's state comes from.

After RECCON (Poria et al., "Recognizing Emotion Cause in Conversations", Cognitive Computation
2021; github.com/declare-lab/RECCON). For an item ``(dialogue_id, turn, role)`` the *cause set* is
the set of utterances of the dialogue so far, the target utterance included (RECCON never uses
later turns), that the author's emotion transcription is about: what the stated emotion or
intention was felt about or in response to. An empty set means "not in the dialogue".

**Cause types.** RECCON's five types, derived here from the cause set of a target spoken by
participant X (the other participant is the partner):

- ``no-context`` (RECCON type 1): the cause is in the target utterance itself: the speaker
  names what they feel about in the utterance they are speaking; the set is exactly {target};
- ``inter-personal`` (type 2, "inter-personal emotional influence"): the cause is in the
  partner's utterances: an event or concept the partner mentioned (2a, trigger events) or the
  partner's own emotion (2b, emotional dependency); the set holds partner utterances and no
  earlier utterance of X (the target may be in it too);
- ``self-contagion`` (type 3): the cause is in X's own earlier utterances: a mood or topic X set
  up before persists; the set holds earlier utterances of X and no partner utterance;
- ``hybrid`` (type 4): types 2 and 3 together: partner utterances and earlier utterances of X;
- ``latent`` (type 5, "unmentioned latent cause"): no utterance of the dialogue so far holds
  the cause (the empty set).

:func:`cause_type` gives this one type per item, a partition: the context part decides, and
``no-context`` means the cause lies *solely* in the target. RECCON itself annotates a list of
type labels per utterance, one per cause: ``no-context`` whenever the target is among the causes,
plus the type of the context part. :func:`reccon_labels` gives that list, so shares can be
counted RECCON's way (its Table 2 shares are over type labels; see :data:`RECCON_SHARES`).

**Storage** (the studies database, ``ETC_STUDIES_DB``: a SQLite file or a ``postgresql://`` URL,
beside the judge-vs-human studies):

- ``cause_runs``: one row per LLM run: run id, signature (provider, model, prompt name, version
  and hash, decoding settings, etclib version), split, item counts, time;
- ``cause_labels``: one row per (source, source id, item): ``source`` is ``llm`` (``source_id``
  the run id) or ``human`` (``source_id`` the annotator id, whose code is stored only as a hash
  in :mod:`etclib.studies.codes`' ``annotators`` table); ``causes`` the comma-joined positions
  (1..10, ``''`` for latent; NULL when an LLM answer was unusable), ``cause_type``, the raw answer;
- ``cause_sample``: the items people label, drawn by an admin (:func:`draw_sample`).

**Sources.** :func:`label_causes` asks an LLM through the scoring judge's stack (providers with
the ``causes`` JSON schema, answer cache, retries; a rerun or a resumed run costs no call for
what was answered). People label in the site with the annotator codes of
:mod:`etclib.studies.codes` (:func:`next_item`, :func:`record_causes`): every item of the sample is
handed out until it has :data:`ANNOTATORS_PER_ITEM` answers, items with fewer answers first. The
*human majority* of an item (2 or more answers) marks a candidate as a cause when more than half
of the answers mark it; its type is derived from that set. :func:`partner_reference` is a
lexical proxy that needs nothing: whether the transcription refers to the partner.

The package's modules, one job each: :mod:`.typology` (positions, RECCON's types),
:mod:`.proxy` (the lexical proxy), :mod:`.store` (the tables), :mod:`.llm` (an LLM labels),
:mod:`.human` (people label), :mod:`.lookup` (what the site and the leaderboard ask for),
:mod:`.agreement` and :mod:`.export`; every public name is importable from here.
"""

from __future__ import annotations

from .agreement import (
    PAIR_F1_COLUMNS,
    CauseAgreement,
    cause_agreement,
    pair_f1,
)
from .export import (
    EVIDENCE,
    LICENCE,
    RECCON_COMMIT,
    RECCON_EMOTION,
    RECCON_LATENT,
    SPAN,
    export_jsonl,
    export_reccon,
    export_records,
    reccon_layout,
)
from .human import (
    ANNOTATORS_PER_ITEM,
    draw_sample,
    human_answers,
    human_majority,
    next_item,
    progress,
    record_causes,
    sample_keys,
)
from .llm import (
    PROMPT_NAME,
    CausePrompt,
    CauseRun,
    label_causes,
    list_runs,
    load_prompt,
    parse_causes,
    run_causes,
)
from .lookup import (
    SOURCES,
    cause_types_for_items,
    cause_utterances,
    cause_utterances_of,
    type_distribution,
)
from .proxy import (
    PARTNER_PATTERNS,
    ROLE_NOUNS,
    THIRD_PARTY_COMPOUNDS,
    partner_mentions,
    partner_reference,
    proxy_share,
    proxy_type,
)
from .store import (
    SCHEMA,
)
from .typology import (
    CAUSE_TYPES,
    PROXY_TYPES,
    RECCON_SHARES,
    CauseSet,
    Key,
    cause_type,
    position,
    reccon_labels,
    turn_role,
)

_SCHEMA = SCHEMA  # the tables, as the tests and older callers name them

__all__ = [
    "ANNOTATORS_PER_ITEM",
    "CAUSE_TYPES",
    "CauseAgreement",
    "CausePrompt",
    "CauseRun",
    "CauseSet",
    "EVIDENCE",
    "Key",
    "LICENCE",
    "PAIR_F1_COLUMNS",
    "PARTNER_PATTERNS",
    "PROMPT_NAME",
    "PROXY_TYPES",
    "RECCON_COMMIT",
    "RECCON_EMOTION",
    "RECCON_LATENT",
    "RECCON_SHARES",
    "ROLE_NOUNS",
    "SCHEMA",
    "SOURCES",
    "SPAN",
    "THIRD_PARTY_COMPOUNDS",
    "_SCHEMA",
    "cause_agreement",
    "cause_type",
    "cause_types_for_items",
    "cause_utterances",
    "cause_utterances_of",
    "draw_sample",
    "export_jsonl",
    "export_reccon",
    "export_records",
    "human_answers",
    "human_majority",
    "label_causes",
    "list_runs",
    "load_prompt",
    "next_item",
    "pair_f1",
    "parse_causes",
    "partner_mentions",
    "partner_reference",
    "position",
    "progress",
    "proxy_share",
    "proxy_type",
    "reccon_labels",
    "reccon_layout",
    "record_causes",
    "run_causes",
    "sample_keys",
    "turn_role",
    "type_distribution",
]
