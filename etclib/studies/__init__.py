"""The judge-vs-human studies and the cause layer: one package, each study one module.

:mod:`.db` is the studies database, where each study registers its tables (it imports none of
them). Importing the package imports every study, so :func:`.db.schemas` lists them all
(``etclib studies migrate`` copies every one); a new study is one module that calls
``db.register(name, ddl)`` and one line below. See docs/judge_vs_human.md and docs/causes.md.
"""

from __future__ import annotations

from etclib.studies import annotation, causes, codes, judge_calibration, labeljudge  # noqa: F401  registers
