"""The LLM judge behind the atomic-unit metrics (docs/judge.md).

- :mod:`.templates`: the versioned decomposition and entailment prompts (``prompts/*.toml``), in
  named sets (``v2``, the default, carries the paper's rules; ``v1`` the first prompts);
- :mod:`.settings`, :mod:`.parse`: what a run is configured with; parsing the JSON answers;
- :mod:`.providers`: one request/answer call to any registered LLM provider;
- :mod:`.cache`: the persistent answer cache (``ETC_JUDGE_CACHE``: a SQLite file, by default
  under ``ETC_CACHE_DIR``, or a PostgreSQL table shared by every worker);
- :mod:`.runner`: bounded-concurrency asyncio runs with retries, dedupe and usage counts;
  :mod:`.batch`: the uncached questions through a provider's batch interface first;
- :mod:`.check`, :mod:`.pricing`: the pre-flight check and its cost estimate.

The metric itself is :mod:`etclib.metrics.judge`; :mod:`etclib.studies.judge_calibration` and the
label judge (:mod:`etclib.studies.labeljudge`) ask through the same providers, runner and cache.
"""
