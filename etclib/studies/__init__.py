"""The judge-vs-human studies and the cause layer: one package, each study one module.

- :mod:`.db`: the studies database (a SQLite file or PostgreSQL), where each study registers
  its tables (:func:`.db.register`); it imports none of the studies (an import-linter contract);
- :mod:`.codes`: the annotator codes people answer with;
- :mod:`etclib.agreement` (outside this package: the corpus statistics use it too, and
  importing this package imports every study): the agreement statistics (Cohen's and Fleiss'
  kappa, Krippendorff's alpha, bootstrap intervals, Pearson's r);
- :mod:`.labelling`: an LLM labels study items (what :mod:`.labeljudge` and :mod:`.causes`
  share: prompt loading, the run body, the run tables);
- the studies: :mod:`.labeljudge` (Study 1: an LLM labels the transcriptions), :mod:`.annotation`
  (Study 2: people re-check the judge's decisions), :mod:`.ratings` (Study 3: people's ratings),
  :mod:`.causes` (the emotion-cause layer) and :mod:`.judge_calibration` (the judge against the
  paper's).

Importing the package imports every study that has tables, so :func:`.db.schemas` lists them all
(``etclib studies migrate`` copies every one). A new study is one module that calls
``db.register(name, ddl)`` and one line below.
"""

from __future__ import annotations

from . import annotation, causes, codes, judge_calibration, labeljudge  # noqa: F401  registers
