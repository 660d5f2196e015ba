"""The LLM judge behind the atomic-unit metrics (docs/judge.md): versioned prompts
(:mod:`.templates`), settings and answer parsing, calls to any registered provider
(:mod:`.providers`), the persistent answer cache (:mod:`.cache`), bounded-concurrency runs
(:mod:`.runner`, :mod:`.batch`) and the pre-flight check with its cost estimate. The metric itself
is :mod:`etclib.metrics.judge`; the studies ask through the same providers, runner and cache.
"""
