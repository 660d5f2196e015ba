"""The corpus and the task: download, the DuckDB corpus store, items and prompts, tokenizing, and
the published reference figures shipped with the library."""
