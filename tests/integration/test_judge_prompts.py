"""Judge prompts v2: every rule of the paper's Figures 6 and 7 reaches the model, the
paraphrase rule is gone, and v1 stays selectable with its own signature and cache keys.

Requests are made with the real SDKs against the loopback fake server (both providers); the
assertions read the system prompt the server received.
"""

from __future__ import annotations

import json
import re
import sqlite3

from etclib.cli import main
from etclib.judge import templates
from etclib.judge.cache import default_path
from tests.conftest import REPO
from tests.fakes.judge_fixtures import FAKE_MODEL, judge_env  # noqa: F401
from tests.fixtures.judge import DECOMPOSE_RULES, ENTAIL_RULES, PARAPHRASE_RULE, _examples


def _judge(*args: str, provider: str, capsys) -> dict:
    argv = ["judge", *args, "--provider", provider, "--model", FAKE_MODEL, "--json"]
    assert main(argv) == 0
    return json.loads(capsys.readouterr().out)


def _system_lines(text: str) -> set[str]:
    return {line.strip() for line in text.splitlines()}


def test_v2_decomposition_request_carries_each_rule(judge_env, capsys):  # noqa: F811
    out = _judge("decompose", "嬉しかった。", provider=judge_env.provider, capsys=capsys)
    assert out["units"] == ["嬉しかった。"]
    (req,) = judge_env.server.requests
    system = req.system
    missing = [rule for rule, line in DECOMPOSE_RULES if line not in system]
    assert not missing, missing
    # one rule per line: each carried rule starts a line of its own
    starts = [line for line in _system_lines(system) if line.startswith("- ")]
    for _, line in DECOMPOSE_RULES:
        if line.startswith("- "):
            assert any(s.startswith(line) for s in starts), line
    assert "decompose-v2-" in out["signature"]


def test_v2_entailment_request_carries_each_rule_and_no_paraphrase_rule(judge_env, capsys):  # noqa: F811
    out = _judge("entail", "驚いた", "驚いた。", provider=judge_env.provider, capsys=capsys)
    assert out["label"] == "Supported"
    (req,) = judge_env.server.requests
    missing = [rule for rule, line in ENTAIL_RULES if line not in req.system]
    assert not missing, missing
    assert PARAPHRASE_RULE not in req.system
    assert "言い換え" not in req.system.split("# 例")[0]  # no rule mentions paraphrase at all
    assert "entail-v2-" in out["signature"]


def test_examples_come_from_the_train_split(corpus):
    """Every example transcription (decomposition text, entailment target) is a train reference
    of the real corpus, as the comment above it says."""
    from etclib.data.task import items

    train = {it.key: it.reference for it in items(corpus, "train")}
    for kind, field in (("decompose", "text"), ("entail", "target")):
        path = REPO / "etclib" / "judge" / "prompts" / f"{kind}_v2.toml"
        raw = path.read_text(encoding="utf-8")
        keys = [
            (int(d), int(t), r)
            for d, t, r in re.findall(r"^#.*\btrain (\d+)/(\d+)/(\w+)", raw, re.M)
        ]
        examples = _examples(kind)
        assert len(keys) == len(examples)
        for key, ex in zip(keys, examples):
            assert train[key] == ex[field], (kind, key)


def _cache_rows() -> list[tuple[str, str]]:
    with sqlite3.connect(default_path()) as con:
        return con.execute("SELECT key, prompt FROM judge_answers ORDER BY prompt").fetchall()


def test_v1_and_v2_signatures_differ_and_share_no_cache_key(judge_env, capsys):  # noqa: F811
    p = judge_env.provider
    v2 = _judge("decompose", "嬉しかった。", provider=p, capsys=capsys)
    v1 = _judge("decompose", "嬉しかった。", "--judge-prompts", "v1", provider=p, capsys=capsys)
    assert v1["signature"] != v2["signature"]
    assert "prompts:decompose-v1-30c42b91,entail-v1-fa59eadf|" in v1["signature"]
    assert f"prompts:{templates.tags('v2')}|" in v2["signature"]
    # the v1 question was not answered from v2's cached answer: two calls, two rows
    assert len(judge_env.server.requests) == 2
    rows = _cache_rows()
    assert len({k for k, _ in rows}) == 2
    assert [tag.split("-")[1] for _, tag in rows] == ["v1", "v2"]
    # asking again under either set is answered from its own row, with no call
    _judge("decompose", "嬉しかった。", "--judge-prompts", "v1", provider=p, capsys=capsys)
    _judge("decompose", "嬉しかった。", provider=p, capsys=capsys)
    assert len(judge_env.server.requests) == 2
    # the two system prompts sent differ (the key covers every byte sent)
    first, second = judge_env.server.requests
    assert first.system != second.system


def test_a_board_row_keeps_its_v1_signature_and_is_rescored_under_v2(
    judge_env,  # noqa: F811
    tiny_corpus,
    monkeypatch,
):
    """A submission scored under v1 keeps that score row and signature; `admin rescore
    --stages judge` with the default settings adds a v2 row, which becomes the entry's judge
    score, and the entry's detail shows both signatures."""
    import leaderboard as lb
    from etclib.data.corpus import load_corpus
    from etclib.data.task import items
    from etclib.tracks.predictions import dumps_jsonl
    from views.board import detail_view

    token = "prompts-admin-token-0123456789"
    monkeypatch.setenv("ETC_DATA_DIR", str(tiny_corpus))
    monkeypatch.setenv("ETC_ADMIN_TOKEN", token)
    monkeypatch.setenv("ETC_JUDGE_PROVIDER", judge_env.provider)
    monkeypatch.setenv("ETC_JUDGE_MODEL", FAKE_MODEL)
    monkeypatch.setenv("ETC_JUDGE_PROMPTS", "v1")
    its = items(load_corpus(tiny_corpus), "test")
    data = dumps_jsonl((it.key, it.reference) for it in its).encode("utf-8")
    meta = {"name": "Copy", "team": "Lab", "contact": "me@example.org", "setting": "few-shot"}
    try:
        receipt = lb.submit(data, meta)
        lb.process_jobs()
        judge = lb.detail(receipt.id)["scores"]["judge"]
        assert "prompts:decompose-v1-30c42b91,entail-v1-fa59eadf" in str(judge["signature"])
        v1_calls = len(judge_env.server.requests)

        monkeypatch.delenv("ETC_JUDGE_PROMPTS")  # the operator moves to the default
        assert lb.rescore(receipt.id, token, ["judge"])
        lb.process_jobs()
        assert len(judge_env.server.requests) > v1_calls  # v2 asked afresh: no v1 answer reused
        info = lb.detail(receipt.id)
        assert f"prompts:{templates.tags('v2')}|" in str(info["scores"]["judge"]["signature"])
        history = " ".join(str(h) for h in info["history"])
        assert "decompose-v1-30c42b91" in history and templates.tags("v2") in history
        shown = detail_view(info)["scores"]
        judge_rows = shown[shown["group"] == "judge"]
        assert judge_rows["signature"].str.contains("decompose-v2-").all()
    finally:
        lb.close_all()
