"""The LLM judge behind the atomic-unit metrics (SPEC.md, "LLM-judge atomic-unit metrics").

- :mod:`.templates`: the versioned decomposition and entailment prompts (``prompts/*.toml``), in
  named sets (``v2``, the default, carries the paper's rules; ``v1`` the first prompts);
- :mod:`.parse`: defensive parsing of the JSON answers;
- :mod:`.providers`: one request/answer call to Gemini or an OpenAI-compatible server;
- :mod:`.cache`: the persistent answer cache (``ETC_JUDGE_CACHE``: a SQLite file, by default
  under ``ETC_CACHE_DIR``, or a PostgreSQL table shared by every worker);
- :mod:`.pricing`: approximate prices for the run's cost estimate;
- :mod:`.runner`: bounded-concurrency asyncio runs with retries, dedupe and usage counts.

The metric itself is :mod:`etclib.metrics.judge`; :mod:`etclib.studies.judge_calibration` compares a
judge with the paper's (``etclib judge calibrate``). The label judge of the judge-vs-human study
(:mod:`etclib.studies.labeljudge`) asks its questions through the same providers, runner and cache.
"""
