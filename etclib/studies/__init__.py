"""The judge-vs-human studies and the cause layer: one package, each study one module.

:mod:`.db` is the studies database (a SQLite file or PostgreSQL), where each study registers its
tables; it imports none of the studies. :mod:`.codes` holds the annotator codes, :mod:`.labelling`
what the LLM-labelling studies share. The studies: :mod:`.labeljudge` (Study 1: an LLM labels the
transcriptions), :mod:`.annotation` (Study 2: people re-check the judge's decisions),
:mod:`.ratings` (Study 3: people's ratings), :mod:`.causes` (the emotion-cause layer) and
:mod:`.judge_calibration` (the judge against the paper's). The agreement statistics are
:mod:`etclib.studies.agreement`, outside the package: the corpus statistics use them too. Importing the
package imports every study, so :func:`.db.schemas` lists them all (``etclib studies migrate``
copies every one); a new study is one module that calls ``db.register(name, ddl)`` and one line
below. See docs/judge_vs_human.md and docs/causes.md.
"""

from __future__ import annotations

from etclib.studies import annotation, causes, codes, judge_calibration, labeljudge  # noqa: F401  registers
