"""The provider registry (etclib.llm.providers): one registered unit per provider, and every
consumer (judge, backends, studies, CLI, redaction, capability table) reads it."""

from __future__ import annotations

import argparse

import pytest

from etclib.core import redact as R
from etclib.core.errors import ConfigError, JudgeError
from etclib.core.registry import Registry
from etclib.judge import providers as judge_providers
from etclib.llm import models, providers
from etclib.models import REGISTRY as BACKENDS
from etclib.models import backend_class

NAMES = providers.names()


def test_registry_rules():
    reg: Registry[int] = Registry("widget", {"alpha": 1, "beta": 2})
    reg.register("alpha", 1)  # the same target again: a no-op
    with pytest.raises(ConfigError, match="already registered"):
        reg.register("alpha", 3)
    with pytest.raises(ConfigError, match="Unknown widget 'alpah'. Did you mean 'alpha'\\?"):
        reg.get("alpah")
    assert reg.names() == ["alpha", "beta"] and "beta" in reg and len(reg) == 2
    lazy: Registry[object] = Registry("thing", {"registry": "etclib.core.registry:Registry"})
    assert lazy.get("registry") is Registry


def test_unknown_provider_says_did_you_mean():
    with pytest.raises(ConfigError, match="Did you mean 'gemini'"):
        providers.get("gemni")
    with pytest.raises(JudgeError, match="Did you mean 'openai'"):
        judge_providers.make_provider("opneai", timeout=1)


@pytest.mark.parametrize("name", NAMES)
def test_every_provider_secret_is_redacted(name, monkeypatch):
    spec = providers.get(name)
    assert spec.key_settings, f"{name} names no key setting"
    for setting in spec.secret_settings:
        secret = f"s3cret-{name}-{setting}-value"
        monkeypatch.setenv(setting, secret)
        assert setting in R.secret_settings()
        out = R.redact(f"the server said: key {secret} is wrong")
        assert secret not in out and R.MASK in out
        monkeypatch.delenv(setting)


@pytest.mark.parametrize("name", NAMES)
def test_every_provider_is_a_judge_a_backend_and_a_cli_choice(name):
    spec = providers.get(name)
    assert judge_providers.DEFAULT_MODELS[name] == spec.judge_model
    assert name in BACKENDS and backend_class(name).provider == name
    assert all(m.provider == name for m in spec.models)
    assert {m.prefix for m in spec.models} <= {m.prefix for m in models.MODELS}
    from etclib.cli import judge as cli_judge
    from etclib.cli import judge_labels as cli_labels

    parser = argparse.ArgumentParser()
    cli_judge.add_arguments(parser)
    assert parser.parse_args(["decompose", "x", "--provider", name]).provider == name
    parser = argparse.ArgumentParser()
    cli_labels.add_arguments(parser)
    action = next(a for a in parser._actions if "--provider" in a.option_strings)
    assert tuple(action.choices) == NAMES


@pytest.mark.parametrize("name", NAMES)
def test_a_missing_key_says_which_setting(name, monkeypatch):
    spec = providers.get(name)
    for setting in spec.key_settings:
        monkeypatch.delenv(setting, raising=False)
    monkeypatch.setenv("ETC_SECRETS_FILE", "/nonexistent/secrets.toml")
    with pytest.raises(JudgeError, match=spec.key_settings[0]):
        judge_providers.make_provider(name, timeout=1)
    assert not spec.configured()


def test_keys_come_from_their_settings_first_set_wins(monkeypatch):
    assert not any(spec.configured() for spec in providers.specs())
    for name, setting in (("openai", "OPENAI_API_KEY"), ("gemini", "GEMINI_API_KEY")):
        with pytest.raises(ConfigError, match=setting):
            providers.get(name).client()
    monkeypatch.setenv("GOOGLE_API_KEY", "g")
    assert providers.get("gemini").configured() and providers.get("gemini").api_key() == "g"
    monkeypatch.setenv("GEMINI_API_KEY", "preferred")
    assert providers.get("gemini").api_key() == "preferred"


def test_settings_from_the_secrets_file(tmp_path):
    from etclib.core import config

    secrets = tmp_path / "secrets.toml"  # conftest points ETC_SECRETS_FILE here
    secrets.write_text('OPENAI_API_KEY = "from-secrets"\nOPENAI_BASE_URL = "http://x/v1"\n')
    config._secrets.cache_clear()
    spec = providers.get("openai")
    assert spec.configured() and spec.api_key() == "from-secrets"
    client = spec.client()
    assert client.api_key == "from-secrets" and str(client.base_url) == "http://x/v1/"
    assert client.max_retries == 0


def test_a_provider_with_only_the_core_judges_and_refuses_what_it_lacks(monkeypatch):
    from etclib.judge.batch import batch_spec

    class Core(providers.ProviderSpec):
        name, label, package = "core", "Core", "openai"
        sdk_classes = ("openai", "OpenAI", "AsyncOpenAI")
        key_settings = ("CORE_API_KEY",)

        def request(self, model, messages, decoding, *, max_tokens=None):
            return {"model": model, "messages": messages}

    monkeypatch.setenv("CORE_API_KEY", "k")
    judge = judge_providers.SpecProvider(Core(), "m", timeout=1)
    messages = [{"role": "user", "content": "判定して"}]
    assert judge.response_format == "prompt" and judge.online == {}
    assert judge.request("entail", messages) == {"model": "m", "messages": messages}
    with pytest.raises(ConfigError, match="the Core provider has no service tiers"):
        judge_providers.SpecProvider(Core(), "m", timeout=1, service_tier="flex")
    batching = [spec.name for spec in providers.specs(providers.Batch)]
    assert batching == ["openai", "gemini"]
    with pytest.raises(JudgeError, match="--judge-provider openai or gemini"):
        batch_spec("anthropic")
