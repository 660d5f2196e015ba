"""The cause layer: which utterances an ETC transcription's state comes from (after RECCON).

An item's *cause set* is the set of utterances of the dialogue so far, the target included, that
its transcription is about; the empty set means "not in the dialogue". An LLM (:mod:`.llm`) or
people (:mod:`.human`) label it, :mod:`.proxy` guesses it lexically; every public name is
importable from here. Definitions, storage and figures: docs/causes.md.
"""

from __future__ import annotations

from etclib.studies.causes.agreement import (
    PAIR_F1_COLUMNS,
    CauseAgreement,
    cause_agreement,
    pair_f1,
)
from etclib.studies.causes.export import (
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
from etclib.studies.causes.human import (
    ANNOTATORS_PER_ITEM,
    draw_sample,
    human_answers,
    human_majority,
    next_item,
    progress,
    record_causes,
    sample_keys,
)
from etclib.studies.causes.llm import (
    PROMPT_NAME,
    CausePrompt,
    CauseRun,
    label_causes,
    list_runs,
    load_prompt,
    parse_causes,
    run_causes,
)
from etclib.studies.causes.lookup import (
    SOURCES,
    cause_types_for_items,
    cause_utterances,
    cause_utterances_of,
    type_distribution,
)
from etclib.studies.causes.proxy import (
    PARTNER_PATTERNS,
    ROLE_NOUNS,
    THIRD_PARTY_COMPOUNDS,
    partner_mentions,
    partner_reference,
    proxy_share,
    proxy_type,
)
from etclib.studies.causes.store import SCHEMA
from etclib.studies.causes.typology import (
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

_SCHEMA = SCHEMA  # the tables, under the name the tests use

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
