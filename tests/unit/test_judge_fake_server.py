"""The fake LLM server itself (tests/fakes/llm_server/), driven by the real SDKs, so the
judge and backend tests that rely on it rely on something checked."""

from __future__ import annotations

import pytest

from etclib import llm


def test_llm_configuration_helpers(monkeypatch):
    from etclib.errors import ConfigError

    assert llm.configured_providers() == {"openai": False, "gemini": False, "anthropic": False}
    with pytest.raises(ConfigError, match="OPENAI_API_KEY"):
        llm.client("openai")
    with pytest.raises(ConfigError, match="GEMINI_API_KEY"):
        llm.client("gemini")
    monkeypatch.setenv("GOOGLE_API_KEY", "g")
    assert llm.configured("gemini") and llm.providers.get("gemini").api_key() == "g"
    monkeypatch.setenv("GEMINI_API_KEY", "preferred")
    assert llm.providers.get("gemini").api_key() == "preferred"
    with pytest.raises(ConfigError, match="Unknown LLM provider"):
        llm.configured("claude")


def test_llm_settings_from_secrets_file(tmp_path, monkeypatch):
    from etclib import config

    secrets = tmp_path / "secrets.toml"  # conftest points ETC_SECRETS_FILE here
    secrets.write_text('OPENAI_API_KEY = "from-secrets"\nOPENAI_BASE_URL = "http://x/v1"\n')
    config._secrets.cache_clear()
    assert llm.configured("openai") and llm.providers.get("openai").api_key() == "from-secrets"
    client = llm.client("openai")
    assert client.api_key == "from-secrets" and str(client.base_url) == "http://x/v1/"
    assert client.max_retries == 0
