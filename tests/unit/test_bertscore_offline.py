"""BERTScore without its model cached: offline or without network it fails at once
with the model's name and the command that caches it, never after the libraries' retries."""

from __future__ import annotations

import socket

import pytest

from etclib.core.errors import MetricError
from etclib.metrics import bertscore

MODEL = "bert-base-multilingual-cased"


@pytest.fixture
def connections(monkeypatch):
    """Every connection attempt (socket.create_connection and socket.connect), recorded."""
    seen: list[tuple] = []
    real_create = socket.create_connection
    real_connect = socket.socket.connect

    def create(address, timeout=None, *args, **kwargs):
        seen.append(("create", address, timeout))
        return real_create(address, timeout, *args, **kwargs)

    def connect(self, address):
        seen.append(("connect", address, None))
        return real_connect(self, address)

    monkeypatch.setattr(socket, "create_connection", create)
    monkeypatch.setattr(socket.socket, "connect", connect)
    bertscore._scorer.cache_clear()
    yield seen
    bertscore._scorer.cache_clear()


def test_offline_and_not_cached_fails_with_the_fix_and_no_connection(connections, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")  # (the test suite's default, said here)
    with pytest.raises(MetricError) as caught:
        bertscore.METRIC.score(["嬉しい"], ["楽しい"])
    message = str(caught.value)
    assert f"{MODEL!r} is not in the local Hugging Face cache" in message
    assert f"hf download {MODEL}" in message and "HF_HUB_OFFLINE" in message
    assert "ETC_BERTSCORE_MODEL" in message
    assert connections == []


def test_without_network_one_probe_with_the_short_timeout(connections, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "0")
    monkeypatch.setenv("HF_ENDPOINT", "http://127.0.0.1:9")  # nothing listens: refused
    with pytest.raises(MetricError) as caught:
        bertscore.METRIC.score(["嬉しい"], ["楽しい"])
    message = str(caught.value)
    assert "cannot be reached" in message and "127.0.0.1:9" in message
    assert f"hf download {MODEL}" in message
    probes = [c for c in connections if c[0] == "create"]
    assert probes == [("create", ("127.0.0.1", 9), bertscore.HUB_PROBE_TIMEOUT)]
    assert bertscore.HUB_PROBE_TIMEOUT <= 2.0
    assert len(connections) == 2  # the probe's create_connection and its one connect


def test_a_cached_model_is_found_without_the_network(tmp_path, monkeypatch, connections):
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))
    repo = tmp_path / "hub" / "models--org--tiny-bert"
    (repo / "refs").mkdir(parents=True)
    (repo / "refs" / "main").write_text("0" * 40)
    snapshot = repo / "snapshots" / ("0" * 40)
    snapshot.mkdir(parents=True)
    (snapshot / "config.json").write_text("{}")
    assert bertscore.cached("org/tiny-bert")
    assert not bertscore.cached("org/other-bert")
    bertscore._ensure_available("org/tiny-bert")  # cached: no error, offline or not
    assert connections == []


@pytest.mark.parametrize("model", ["/no/such/folder", "./relative/folder", "C:\\models\\bert"])
def test_a_local_path_is_left_to_the_loader(model, connections):
    bertscore._ensure_available(model)  # not a hub id: the loader's own error applies
    assert connections == []


def test_a_load_error_keeps_its_whole_cause():
    cause = "x" * 150 + " the part after two hundred characters " + "y" * 150
    message = str(bertscore._load_error(MODEL, OSError(cause)))
    assert cause in message
